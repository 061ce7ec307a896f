// CpuRef PRelu: y = x < 0 ? slope * x : x, the slope broadcast onto X (numpy rules, one way).
// Supports Float32, Signed32 and Signed64 (integer products wrap, like numpy).
#include "RefBroadcast.hpp"
#include "RefDataMovement.hpp"
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/PRelu.hpp"


namespace trellis::ref {

namespace {

using PReluFn = void (*)(const BroadcastPlan<2>&, const void*, const void*, void*);

PReluFn PickKernel(DataType t) {
    switch (t) {
        case DataType::Float32: return &kernels::PRelu<float>;
        case DataType::Signed32: return &kernels::PRelu<int32_t>;
        case DataType::Signed64: return &kernels::PRelu<int64_t>;
        default: return nullptr;
    }
}

class PReluWorkload final : public IWorkload {
public:
    PReluWorkload(PReluFn fn, BroadcastPlan<2> plan) : m_Fn(fn), m_Plan(std::move(plan)) {}
    void Execute(const WorkloadIo& io) const override {
        m_Fn(m_Plan, io.m_Inputs[0]->Map(), io.m_Inputs[1]->Map(), io.m_Outputs[0]->Map());
    }
private:
    PReluFn m_Fn;
    BroadcastPlan<2> m_Plan;
};

}  // namespace

bool PReluRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    if (!CheckArity("PRelu", info, 2, 1, reason)) return false;
    const TensorInfo& x = info.m_InputTensorInfos[0];
    if (PickKernel(x.GetDataType()) == nullptr) {
        return Refuse(reason, std::string("PRelu: data type ") + GetDataTypeName(x.GetDataType()) +
                                  " is not supported (CpuRef: Float32, Signed32, Signed64)");
    }
    return CheckSameEncoding("PRelu", "slope", info.m_InputTensorInfos[1], "X", x, reason) &&
           CheckSameEncoding("PRelu", "output", info.m_OutputTensorInfos[0], "X", x, reason);
}

kernels::BroadcastPlan<2> PReluRefParams(const QueueDescriptor&, const WorkloadInfo& info) {
    return MakeBroadcastPlan<2>(info.m_OutputTensorInfos[0].GetShape(),
                                {info.m_InputTensorInfos[0].GetShape(), info.m_InputTensorInfos[1].GetShape()});
}

IWorkloadPtr PReluRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<PReluWorkload>(PickKernel(info.m_InputTensorInfos[0].GetDataType()), PReluRefParams(layer, info));
}

}  // namespace trellis::ref
