// CpuRef Pad: constant, reflect and edge modes over every data type (elements are moved, not
// computed on), except that constant mode refuses quantized types (whether the pad value is a
// real or a raw quantized value is not defined). The constant value is converted to the element
// type (see RefConvert.hpp). Negative pads (constant mode) crop.
//
// At creation every output index of every dim gets the input index it copies, or -1 for "the
// pad value"; Execute walks the output once, filling whole blocks where a dim's index is -1.
#include "RefConvert.hpp"
#include "RefDataMovement.hpp"
#include "RefKernelTable.hpp"

#include <cstring>

namespace trellis::ref {

namespace {

// Input index for output index `o` of a dim of size `dim` with `begin` pads before it.
int64_t SourceIndex(PadMode mode, int64_t o, int64_t begin, int64_t dim) {
    const int64_t i = o - begin;
    if (i >= 0 && i < dim) return i;
    switch (mode) {
        case PadMode::Constant: return -1;
        case PadMode::Edge: return i < 0 ? 0 : dim - 1;
        case PadMode::Reflect: return i < 0 ? -i : 2 * (dim - 1) - i;  // pads < dim: one reflection suffices
    }
    return -1;
}

class PadWorkload final : public IWorkload {
public:
    PadWorkload(const PadDescriptor& d, const WorkloadInfo& info) {
        const TensorInfo& in = info.m_InputTensorInfos[0];
        const TensorShape& out = info.m_OutputTensorInfos[0].GetShape();
        const unsigned int rank = in.GetNumDimensions();
        m_ElementSize = GetDataTypeSize(in.GetDataType());
        m_Fill.resize(m_ElementSize);
        if (d.m_Mode == PadMode::Constant) EncodeScalar(in.GetDataType(), d.m_Value, m_Fill.data());
        const std::vector<int64_t> inStrides = RowMajorStrides(in.GetShape());
        const std::vector<int64_t> outStrides = RowMajorStrides(out);
        m_SrcOffsets.resize(rank);
        for (unsigned int k = 0; k < rank; ++k) {
            for (int64_t o = 0; o < out[k]; ++o) {
                const int64_t i = SourceIndex(d.m_Mode, o, d.m_Pads[k], in.GetShape()[k]);
                m_SrcOffsets[k].push_back(i < 0 ? -1 : i * inStrides[k]);
            }
            m_BlockElements.push_back(static_cast<std::size_t>(outStrides[k]));
        }
        m_NumBytes = info.m_OutputTensorInfos[0].GetNumBytes();
    }
    void Execute(const WorkloadIo& io) const override {
        const auto* in = static_cast<const std::byte*>(io.m_Inputs[0]->Map());
        auto* out = static_cast<std::byte*>(io.m_Outputs[0]->Map());
        if (m_SrcOffsets.empty()) {  // a scalar: nothing to pad
            CopyBytes(in, out, m_NumBytes);
            return;
        }
        Level(0, in, out);
    }
private:
    // Output block of dim `k` at `dst` from the input block at `src`.
    void Level(std::size_t k, const std::byte* src, std::byte* dst) const {
        const std::size_t blockBytes = m_BlockElements[k] * m_ElementSize;
        const bool last = k + 1 == m_SrcOffsets.size();
        for (std::size_t o = 0; o < m_SrcOffsets[k].size(); ++o, dst += blockBytes) {
            const int64_t offset = m_SrcOffsets[k][o];
            if (offset < 0) {
                FillElements(dst, m_Fill.data(), m_ElementSize, m_BlockElements[k]);
            } else if (last) {
                std::memcpy(dst, src + static_cast<std::size_t>(offset) * m_ElementSize, m_ElementSize);
            } else {
                Level(k + 1, src + static_cast<std::size_t>(offset) * m_ElementSize, dst);
            }
        }
    }
    std::vector<std::vector<int64_t>> m_SrcOffsets;  // [dim][output index]: input element offset or -1
    std::vector<std::size_t> m_BlockElements;        // output elements per index of each dim
    std::vector<std::byte> m_Fill;                   // one element holding the pad value
    std::size_t m_ElementSize = 0;
    std::size_t m_NumBytes = 0;
};

}  // namespace

bool PadRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    if (!CheckArity("Pad", info, 1, 1, reason)) return false;
    const PadDescriptor& d = layer.Get<PadDescriptor>();
    const TensorInfo& in = info.m_InputTensorInfos[0];
    const TensorShape& out = info.m_OutputTensorInfos[0].GetShape();
    const unsigned int rank = in.GetNumDimensions();
    if (d.m_Pads.size() != 2 * rank || out.GetNumDimensions() != rank) {
        return Refuse(reason, "Pad: descriptor not resolved (needs one begin/end pair per input dim, as Optimize() leaves it)");
    }
    for (unsigned int k = 0; k < rank; ++k) {
        const int64_t dim = in.GetShape()[k], begin = d.m_Pads[k], end = d.m_Pads[rank + k];
        if (dim + begin + end != out[k]) {
            return Refuse(reason, "Pad: output dim " + std::to_string(k) + " is " + std::to_string(out[k]) + ", not input " +
                                      std::to_string(dim) + " + pads " + std::to_string(begin) + " + " + std::to_string(end));
        }
        if (d.m_Mode != PadMode::Constant && (begin < 0 || end < 0 || ((begin > 0 || end > 0) && (dim == 0 ||
            (d.m_Mode == PadMode::Reflect && (begin >= dim || end >= dim)))))) {
            return Refuse(reason, "Pad: dim " + std::to_string(k) + " of size " + std::to_string(dim) + " cannot take pads " +
                                      std::to_string(begin) + ", " + std::to_string(end) +
                                      " in reflect/edge mode (they must be >= 0, and < the dim for reflect)");
        }
    }
    if (d.m_Mode == PadMode::Constant && !IsPlainConvertibleType(in.GetDataType())) {
        return Refuse(reason, std::string("Pad: constant mode on ") + GetDataTypeName(in.GetDataType()) +
                                  " is not supported (CpuRef pads constants into plain types only; for quantized types "
                                  "the meaning of the pad value is not defined)");
    }
    return CheckSameEncoding("Pad", "output", info.m_OutputTensorInfos[0], "input", in, reason);
}

IWorkloadPtr PadRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<PadWorkload>(layer.Get<PadDescriptor>(), info);
}

}  // namespace trellis::ref
