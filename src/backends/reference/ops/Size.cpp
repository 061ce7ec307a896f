// CpuRef Size: writes the input's element count (known when the workload is created) as one
// Signed64; the input's data is never read. Every input data type.
#include "RefDataMovement.hpp"
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/IndexOps.hpp"

#include <cstdint>

namespace trellis::ref {

namespace {

class SizeWorkload final : public IWorkload {
public:
    explicit SizeWorkload(kernels::SizeParams p) : m_P(p) {}
    void Execute(const WorkloadIo& io) const override { kernels::Size(m_P, static_cast<int64_t*>(io.m_Outputs[0]->Map())); }
private:
    const kernels::SizeParams m_P;
};

}  // namespace

bool SizeRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    if (!CheckArity("Size", info, 1, 1, reason)) return false;
    if (info.m_OutputTensorInfos[0].GetNumElements() != 1) {
        return Refuse(reason, "Size: output " + info.m_OutputTensorInfos[0].GetShape().ToString() + " must hold one element");
    }
    return CheckType("Size", "output", info.m_OutputTensorInfos[0], DataType::Signed64, reason);
}

kernels::SizeParams SizeRefParams(const QueueDescriptor&, const WorkloadInfo& info) {
    return {static_cast<int64_t>(info.m_InputTensorInfos[0].GetNumElements())};
}

IWorkloadPtr SizeRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<SizeWorkload>(SizeRefParams(layer, info));
}

}  // namespace trellis::ref
