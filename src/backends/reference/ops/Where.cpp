// CpuRef Where: out = cond ? X : Y, all three broadcast together (numpy rules).
// Supports every data type for X/Y (elements are moved, not computed on) with a Boolean
// condition; X, Y and the output must share type and quantization.
#include "RefBroadcast.hpp"
#include "RefDataMovement.hpp"
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/Where.hpp"


namespace trellis::ref {

namespace {

class WhereWorkload final : public IWorkload {
public:
    explicit WhereWorkload(kernels::WhereParams p) : m_P(std::move(p)) {}
    void Execute(const WorkloadIo& io) const override {
        kernels::Where(m_P, io.m_Inputs[0]->Map(), io.m_Inputs[1]->Map(), io.m_Inputs[2]->Map(), io.m_Outputs[0]->Map());
    }
private:
    const kernels::WhereParams m_P;
};

}  // namespace

bool WhereRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    if (!CheckArity("Where", info, 3, 1, reason)) return false;
    const TensorInfo& x = info.m_InputTensorInfos[1];
    const std::size_t es = GetDataTypeSize(x.GetDataType());
    if (es != 1 && es != 2 && es != 4 && es != 8) {
        return Refuse(reason, std::string("Where: element size ") + std::to_string(es) + " of " +
                                  GetDataTypeName(x.GetDataType()) + " is not 1, 2, 4 or 8 bytes");
    }
    return CheckType("Where", "condition", info.m_InputTensorInfos[0], DataType::Boolean, reason) &&
           CheckSameEncoding("Where", "Y", info.m_InputTensorInfos[2], "X", x, reason) &&
           CheckSameEncoding("Where", "output", info.m_OutputTensorInfos[0], "X", x, reason);
}

kernels::WhereParams WhereRefParams(const QueueDescriptor&, const WorkloadInfo& info) {
    const auto& in = info.m_InputTensorInfos;
    return {MakeBroadcastPlan<3>(info.m_OutputTensorInfos[0].GetShape(), {in[0].GetShape(), in[1].GetShape(), in[2].GetShape()}),
            GetDataTypeSize(in[1].GetDataType())};
}

IWorkloadPtr WhereRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<WhereWorkload>(WhereRefParams(layer, info));
}

}  // namespace trellis::ref
