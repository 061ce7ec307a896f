// CpuRef MemCopy (the copy layer Optimize() inserts between backends): every data type; copies the
// input's bytes to the output.
#include "RefDataMovement.hpp"
#include "RefKernelTable.hpp"

namespace trellis::ref {

namespace {

class MemCopyWorkload final : public IWorkload {
public:
    explicit MemCopyWorkload(std::size_t bytes) : m_Bytes(bytes) {}
    void Execute(const WorkloadIo& io) const override { CopyBytes(io.m_Inputs[0]->Map(), io.m_Outputs[0]->Map(), m_Bytes); }
private:
    std::size_t m_Bytes;
};

}  // namespace

bool MemCopyRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    if (!CheckArity("MemCopy", info, 1, 1, reason)) return false;
    const TensorInfo& in = info.m_InputTensorInfos[0];
    const TensorInfo& out = info.m_OutputTensorInfos[0];
    if (in.GetNumElements() != out.GetNumElements()) {
        return Refuse(reason, "MemCopy: input " + in.GetShape().ToString() + " and output " + out.GetShape().ToString() +
                                  " differ in element count");
    }
    return CheckSameEncoding("MemCopy", "output", out, "input", in, reason);
}

IWorkloadPtr MemCopyRefCreate(const QueueDescriptor&, const WorkloadInfo& info) {
    return std::make_unique<MemCopyWorkload>(info.m_InputTensorInfos[0].GetNumBytes());
}

}  // namespace trellis::ref
