// CpuRef Slice: every data type (elements are moved, not computed on). The resolved descriptor
// (one start and step per input dim, see src/core/ops/Slice.cpp) makes the slice a single
// strided copy: output index i along dim k reads input index start[k] + i * step[k], so a
// negative step is just a negative stride.
#include "RefDataMovement.hpp"
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/DataMovement.hpp"

namespace trellis::ref {

namespace {

class SliceWorkload final : public IWorkload {
public:
    explicit SliceWorkload(kernels::OffsetCopy p) : m_P(std::move(p)) {}
    void Execute(const WorkloadIo& io) const override { kernels::Slice(m_P, io.m_Inputs[0]->Map(), io.m_Outputs[0]->Map()); }
private:
    const kernels::OffsetCopy m_P;
};

}  // namespace

kernels::OffsetCopy SliceRefParams(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const SliceDescriptor& d = layer.Get<SliceDescriptor>();
    const TensorInfo& in = info.m_InputTensorInfos[0];
    const TensorInfo& out = info.m_OutputTensorInfos[0];
    const std::size_t es = GetDataTypeSize(in.GetDataType());
    const std::vector<int64_t> inStrides = RowMajorStrides(in.GetShape());
    std::vector<int64_t> srcStrides(inStrides.size());
    int64_t offset = 0;
    for (std::size_t k = 0; k < inStrides.size(); ++k) {
        srcStrides[k] = inStrides[k] * d.m_Steps[k];
        // An empty output never reads; its start may be one past the end, so do not offset.
        if (out.GetNumElements() > 0) offset += d.m_Starts[k] * inStrides[k];
    }
    const std::vector<int64_t> dims(out.GetShape().GetDims().begin(), out.GetShape().GetDims().end());
    return {MakeStridedCopy(dims, srcStrides, RowMajorStrides(out.GetShape()), es), static_cast<std::size_t>(offset) * es};
}

bool SliceRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    if (!CheckArity("Slice", info, 1, 1, reason)) return false;
    const SliceDescriptor& d = layer.Get<SliceDescriptor>();
    const TensorInfo& in = info.m_InputTensorInfos[0];
    const TensorInfo& out = info.m_OutputTensorInfos[0];
    const std::size_t rank = in.GetNumDimensions();
    if (d.m_Starts.size() != rank || d.m_Steps.size() != rank || out.GetNumDimensions() != rank) {
        return Refuse(reason, "Slice: descriptor not resolved (needs one start and step per input dim, as Optimize() "
                              "leaves it)");
    }
    // The copy trusts start + (n-1) * step to stay inside the dim; check it once here.
    for (std::size_t k = 0; k < rank && out.GetNumElements() > 0; ++k) {
        const int64_t last = d.m_Starts[k] + (static_cast<int64_t>(out.GetShape()[k]) - 1) * d.m_Steps[k];
        if (d.m_Starts[k] < 0 || d.m_Starts[k] >= in.GetShape()[k] || last < 0 || last >= in.GetShape()[k]) {
            return Refuse(reason, "Slice: dim " + std::to_string(k) + " reads indices " + std::to_string(d.m_Starts[k]) +
                                      ".." + std::to_string(last) + " outside [0, " + std::to_string(in.GetShape()[k]) +
                                      "); the descriptor is not resolved as Optimize() leaves it");
        }
    }
    return CheckSameEncoding("Slice", "output", out, "input", in, reason);
}

IWorkloadPtr SliceRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<SliceWorkload>(SliceRefParams(layer, info));
}

}  // namespace trellis::ref
