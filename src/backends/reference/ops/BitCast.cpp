// CpuRef BitCast: the input's bytes copied unchanged into an output of another type of the same
// element size (the core checked the sizes). To Boolean is refused: other bytes than 0 and 1
// would make values Boolean cannot hold.
#include "RefKernelTable.hpp"
#include "ops/RefMathCommon.hpp"

#include <cstring>

namespace trellis::ref {

namespace {

class BitCastWorkload final : public IWorkload {
public:
    explicit BitCastWorkload(std::size_t bytes) : m_Bytes(bytes) {}
    void Execute(const WorkloadIo& io) const override {
        if (m_Bytes) std::memcpy(io.m_Outputs[0]->Map(), io.m_Inputs[0]->Map(), m_Bytes);
    }
private:
    const std::size_t m_Bytes;
};

}  // namespace

bool BitCastRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    const TensorInfo& in = info.m_InputTensorInfos[0];
    const TensorInfo& out = info.m_OutputTensorInfos[0];
    if (in.GetNumBytes() != out.GetNumBytes()) {
        return math::Refuse(reason, "BitCast: input " + in.ToString() + " and output " + out.ToString() +
                                        " differ in size");
    }
    if (out.GetDataType() == DataType::Boolean && in.GetDataType() != DataType::Boolean) {
        return math::Refuse(reason, std::string("BitCast: ") + GetDataTypeName(in.GetDataType()) +
                                        " to Boolean could make bytes other than 0 and 1, which Boolean cannot hold");
    }
    return true;
}

IWorkloadPtr BitCastRefCreate(const QueueDescriptor&, const WorkloadInfo& info) {
    return std::make_unique<BitCastWorkload>(info.m_InputTensorInfos[0].GetNumBytes());
}

}  // namespace trellis::ref
