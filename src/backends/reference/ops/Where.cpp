// CpuRef Where: out = cond ? X : Y, all three broadcast together (numpy rules).
// Supports every data type for X/Y (elements are moved, not computed on) with a Boolean
// condition; X, Y and the output must share type and quantization.
#include "RefBroadcast.hpp"
#include "RefDataMovement.hpp"
#include "RefKernelTable.hpp"

#include <cstring>

namespace trellis::ref {

namespace {

template <std::size_t ES>
void RunWhere(const uint8_t* cond, const std::byte* x, const std::byte* y, std::byte* out, const BroadcastPlan<3>& plan) {
    ForEachBroadcastRow(plan, [&](const std::array<int64_t, 3>& off, int64_t o, int64_t n, const std::array<int64_t, 3>& s) {
        for (int64_t i = 0; i < n; ++i) {
            const std::byte* src = cond[off[0] + i * s[0]] ? x + (off[1] + i * s[1]) * ES : y + (off[2] + i * s[2]) * ES;
            std::memcpy(out + (o + i) * ES, src, ES);
        }
    });
}

class WhereWorkload final : public IWorkload {
public:
    WhereWorkload(BroadcastPlan<3> plan, std::size_t elementSize) : m_Plan(std::move(plan)), m_ElementSize(elementSize) {}
    void Execute(const WorkloadIo& io) const override {
        const auto* cond = static_cast<const uint8_t*>(io.m_Inputs[0]->Map());
        const auto* x = static_cast<const std::byte*>(io.m_Inputs[1]->Map());
        const auto* y = static_cast<const std::byte*>(io.m_Inputs[2]->Map());
        auto* out = static_cast<std::byte*>(io.m_Outputs[0]->Map());
        switch (m_ElementSize) {
            case 1: return RunWhere<1>(cond, x, y, out, m_Plan);
            case 2: return RunWhere<2>(cond, x, y, out, m_Plan);
            case 4: return RunWhere<4>(cond, x, y, out, m_Plan);
            case 8: return RunWhere<8>(cond, x, y, out, m_Plan);
            default: return;  // refused by the support check
        }
    }
private:
    BroadcastPlan<3> m_Plan;
    std::size_t m_ElementSize;
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

IWorkloadPtr WhereRefCreate(const QueueDescriptor&, const WorkloadInfo& info) {
    const auto& in = info.m_InputTensorInfos;
    return std::make_unique<WhereWorkload>(
        MakeBroadcastPlan<3>(info.m_OutputTensorInfos[0].GetShape(), {in[0].GetShape(), in[1].GetShape(), in[2].GetShape()}),
        GetDataTypeSize(in[1].GetDataType()));
}

}  // namespace trellis::ref
