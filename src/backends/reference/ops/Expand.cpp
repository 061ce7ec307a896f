// CpuRef Expand: every data type (elements are moved, not computed on). One strided copy with
// stride 0 along the dims the input broadcasts over.
#include "RefDataMovement.hpp"
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/DataMovement.hpp"

namespace trellis::ref {

namespace {

class ExpandWorkload final : public IWorkload {
public:
    explicit ExpandWorkload(kernels::StridedCopy p) : m_P(std::move(p)) {}
    void Execute(const WorkloadIo& io) const override { kernels::CopyTensor(m_P, io.m_Inputs[0]->Map(), io.m_Outputs[0]->Map()); }
private:
    const kernels::StridedCopy m_P;
};

}  // namespace

kernels::StridedCopy ExpandRefParams(const QueueDescriptor&, const WorkloadInfo& info) {
    const TensorShape& in = info.m_InputTensorInfos[0].GetShape();
    const TensorShape& out = info.m_OutputTensorInfos[0].GetShape();
    const std::vector<int64_t> inStrides = RowMajorStrides(in);
    // Inputs align to the right; missing and size-1 dims broadcast.
    const unsigned int lead = out.GetNumDimensions() - in.GetNumDimensions();
    std::vector<int64_t> srcStrides(out.GetNumDimensions(), 0);
    for (unsigned int j = 0; j < in.GetNumDimensions(); ++j) {
        if (in[j] != 1) srcStrides[lead + j] = inStrides[j];
    }
    const std::vector<int64_t> dims(out.GetDims().begin(), out.GetDims().end());
    return MakeStridedCopy(dims, srcStrides, RowMajorStrides(out), GetDataTypeSize(info.m_InputTensorInfos[0].GetDataType()));
}

bool ExpandRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    if (!CheckArity("Expand", info, 1, 1, reason)) return false;
    const TensorShape& in = info.m_InputTensorInfos[0].GetShape();
    const TensorShape& out = info.m_OutputTensorInfos[0].GetShape();
    bool valid = in.GetNumDimensions() <= out.GetNumDimensions();
    for (unsigned int j = 0; valid && j < in.GetNumDimensions(); ++j) {
        const unsigned int o = out[out.GetNumDimensions() - in.GetNumDimensions() + j];
        valid = in[j] == o || in[j] == 1;
    }
    if (!valid) {
        return Refuse(reason, "Expand: input " + in.ToString() + " does not broadcast to output " + out.ToString());
    }
    return CheckSameEncoding("Expand", "output", info.m_OutputTensorInfos[0], "input", info.m_InputTensorInfos[0], reason);
}

IWorkloadPtr ExpandRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<ExpandWorkload>(ExpandRefParams(layer, info));
}

}  // namespace trellis::ref
