// CpuRef Reshape (and Flatten/Squeeze/Unsqueeze, which Optimize() turns into Reshape): every data
// type. A dense row-major tensor keeps its bytes when only its shape changes, so this is a copy
// (nothing at all when the runtime hands the same buffer in and out).
#include "RefDataMovement.hpp"
#include "RefKernelTable.hpp"

namespace trellis::ref {

namespace {

class ReshapeWorkload final : public IWorkload {
public:
    explicit ReshapeWorkload(std::size_t bytes) : m_Bytes(bytes) {}
    void Execute(const WorkloadIo& io) const override { CopyBytes(io.m_Inputs[0]->Map(), io.m_Outputs[0]->Map(), m_Bytes); }
private:
    std::size_t m_Bytes;
};

}  // namespace

bool ReshapeRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    if (!CheckArity("Reshape", info, 1, 1, reason)) return false;
    const ReshapeDescriptor& d = layer.Get<ReshapeDescriptor>();
    if (d.m_Mode != ReshapeMode::Reshape) {
        return Refuse(reason, "Reshape: descriptor not resolved (mode must be Reshape with the exact output shape, as "
                              "Optimize() leaves it)");
    }
    const TensorInfo& in = info.m_InputTensorInfos[0];
    const TensorInfo& out = info.m_OutputTensorInfos[0];
    if (in.GetNumElements() != out.GetNumElements()) {
        return Refuse(reason, "Reshape: input " + in.GetShape().ToString() + " and output " + out.GetShape().ToString() +
                                  " differ in element count");
    }
    return CheckSameEncoding("Reshape", "output", out, "input", in, reason);
}

IWorkloadPtr ReshapeRefCreate(const QueueDescriptor&, const WorkloadInfo& info) {
    return std::make_unique<ReshapeWorkload>(info.m_InputTensorInfos[0].GetNumBytes());
}

}  // namespace trellis::ref
