// CpuRef PRelu: y = x < 0 ? slope * x : x, the slope broadcast onto X (numpy rules, one way).
// Supports Float32, Signed32 and Signed64 (integer products wrap, like numpy).
#include "RefBroadcast.hpp"
#include "RefDataMovement.hpp"
#include "RefKernelTable.hpp"

#include <type_traits>

namespace trellis::ref {

namespace {

template <typename T>
T Scale(T slope, T x) {
    if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;
        return T(U(slope) * U(x));
    } else {
        return slope * x;
    }
}

template <typename T>
void RunPRelu(const void* xData, const void* slopeData, void* outData, const BroadcastPlan<2>& plan) {
    const T* x = static_cast<const T*>(xData);
    const T* slope = static_cast<const T*>(slopeData);
    T* out = static_cast<T*>(outData);
    ForEachBroadcastRow(plan, [&](const std::array<int64_t, 2>& off, int64_t o, int64_t n, const std::array<int64_t, 2>& s) {
        const T* px = x + off[0];
        const T* ps = slope + off[1];
        for (int64_t i = 0; i < n; ++i) {
            const T v = px[i * s[0]];
            out[o + i] = v < 0 ? Scale(ps[i * s[1]], v) : v;
        }
    });
}

using PReluFn = void (*)(const void*, const void*, void*, const BroadcastPlan<2>&);

PReluFn PickKernel(DataType t) {
    switch (t) {
        case DataType::Float32: return &RunPRelu<float>;
        case DataType::Signed32: return &RunPRelu<int32_t>;
        case DataType::Signed64: return &RunPRelu<int64_t>;
        default: return nullptr;
    }
}

class PReluWorkload final : public IWorkload {
public:
    PReluWorkload(PReluFn fn, BroadcastPlan<2> plan) : m_Fn(fn), m_Plan(std::move(plan)) {}
    void Execute(const WorkloadIo& io) const override {
        m_Fn(io.m_Inputs[0]->Map(), io.m_Inputs[1]->Map(), io.m_Outputs[0]->Map(), m_Plan);
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

IWorkloadPtr PReluRefCreate(const QueueDescriptor&, const WorkloadInfo& info) {
    return std::make_unique<PReluWorkload>(
        PickKernel(info.m_InputTensorInfos[0].GetDataType()),
        MakeBroadcastPlan<2>(info.m_OutputTensorInfos[0].GetShape(),
                             {info.m_InputTensorInfos[0].GetShape(), info.m_InputTensorInfos[1].GetShape()}));
}

}  // namespace trellis::ref
