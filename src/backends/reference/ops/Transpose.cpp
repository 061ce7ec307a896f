// CpuRef Transpose: every data type (elements are moved, not computed on). One strided copy:
// output dim i walks input dim perm[i].
#include "RefDataMovement.hpp"
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/DataMovement.hpp"

namespace trellis::ref {

namespace {

class TransposeWorkload final : public IWorkload {
public:
    explicit TransposeWorkload(kernels::StridedCopy p) : m_P(std::move(p)) {}
    void Execute(const WorkloadIo& io) const override { kernels::CopyTensor(m_P, io.m_Inputs[0]->Map(), io.m_Outputs[0]->Map()); }
private:
    const kernels::StridedCopy m_P;
};

}  // namespace

kernels::StridedCopy TransposeRefParams(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const TransposeDescriptor& d = layer.Get<TransposeDescriptor>();
    const TensorInfo& in = info.m_InputTensorInfos[0];
    const TensorInfo& out = info.m_OutputTensorInfos[0];
    const std::vector<int64_t> inStrides = RowMajorStrides(in.GetShape());
    std::vector<int64_t> srcStrides;
    for (unsigned int p : d.m_Perm) srcStrides.push_back(inStrides[p]);
    const std::vector<int64_t> dims(out.GetShape().GetDims().begin(), out.GetShape().GetDims().end());
    return MakeStridedCopy(dims, srcStrides, RowMajorStrides(out.GetShape()), GetDataTypeSize(in.GetDataType()));
}

bool TransposeRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    if (!CheckArity("Transpose", info, 1, 1, reason)) return false;
    const std::vector<unsigned int>& perm = layer.Get<TransposeDescriptor>().m_Perm;
    const TensorInfo& in = info.m_InputTensorInfos[0];
    bool valid = perm.size() == in.GetNumDimensions();
    for (std::size_t i = 0; valid && i < perm.size(); ++i) {
        valid = perm[i] < perm.size() && info.m_OutputTensorInfos[0].GetShape()[static_cast<unsigned int>(i)] == in.GetShape()[perm[i]];
    }
    if (!valid) return Refuse(reason, "Transpose: perm is not resolved to one entry per input dim, as Optimize() leaves it");
    return CheckSameEncoding("Transpose", "output", info.m_OutputTensorInfos[0], "input", in, reason);
}

IWorkloadPtr TransposeRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<TransposeWorkload>(TransposeRefParams(layer, info));
}

}  // namespace trellis::ref
