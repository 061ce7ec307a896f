// CpuRef Pad: constant, reflect and edge modes over every data type (elements are moved, not
// computed on), except that constant mode refuses quantized types (whether the pad value is a
// real or a raw quantized value is not defined). The constant value is converted to the element
// type (see RefConvert.hpp). Negative pads (constant mode) crop.
//
// The kernel is the snippet kernels/Pad.hpp.
#include "RefConvert.hpp"
#include "RefDataMovement.hpp"
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/Pad.hpp"


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
    explicit PadWorkload(kernels::PadParams p) : m_P(std::move(p)) {}
    void Execute(const WorkloadIo& io) const override { kernels::Pad(m_P, io.m_Inputs[0]->Map(), io.m_Outputs[0]->Map()); }
private:
    const kernels::PadParams m_P;
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

kernels::PadParams PadRefParams(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const PadDescriptor& d = layer.Get<PadDescriptor>();
    const TensorInfo& in = info.m_InputTensorInfos[0];
    const TensorShape& out = info.m_OutputTensorInfos[0].GetShape();
    const unsigned int rank = in.GetNumDimensions();
    kernels::PadParams p;
    p.elementSize = GetDataTypeSize(in.GetDataType());
    p.fill.resize(p.elementSize);
    if (d.m_Mode == PadMode::Constant) EncodeScalar(in.GetDataType(), d.m_Value, p.fill.data());
    const std::vector<int64_t> inStrides = RowMajorStrides(in.GetShape());
    const std::vector<int64_t> outStrides = RowMajorStrides(out);
    p.srcOffsets.resize(rank);
    for (unsigned int k = 0; k < rank; ++k) {
        for (int64_t o = 0; o < out[k]; ++o) {
            const int64_t i = SourceIndex(d.m_Mode, o, d.m_Pads[k], in.GetShape()[k]);
            p.srcOffsets[k].push_back(i < 0 ? -1 : i * inStrides[k]);
        }
        p.blockElements.push_back(static_cast<std::size_t>(outStrides[k]));
    }
    p.numBytes = info.m_OutputTensorInfos[0].GetNumBytes();
    return p;
}

IWorkloadPtr PadRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<PadWorkload>(PadRefParams(layer, info));
}

}  // namespace trellis::ref
