// CpuRef Range: element i is start + i * delta, for Float32, Float64, Float16, BFloat16, Signed32
// and Signed64. Floats are computed in double and rounded once (numpy arange does the same, rather than
// accumulating deltas); integers are computed exactly. The parameters were folded into the
// descriptor by Optimize(), so there are no inputs.
#include "RefDataMovement.hpp"
#include "RefKernelTable.hpp"
#include "ops/RefFloatIo.hpp"

namespace trellis::ref {

namespace {

class RangeWorkload final : public IWorkload {
public:
    RangeWorkload(const RangeDescriptor& d, const TensorInfo& out)
        : m_Desc(d), m_Type(out.GetDataType()), m_Count(out.GetNumElements()) {}
    void Execute(const WorkloadIo& io) const override {
        void* out = io.m_Outputs[0]->Map();
        switch (m_Type) {
            case DataType::Float32: return FillFloat(static_cast<float*>(out));
            case DataType::Float64: return FillFloat(static_cast<double*>(out));
            case DataType::Signed32: return FillInt(static_cast<int32_t*>(out));
            case DataType::Signed64: return FillInt(static_cast<int64_t*>(out));
            case DataType::Float16:
            case DataType::BFloat16:
                for (std::size_t i = 0; i < m_Count; ++i) {
                    floatio::Write(m_Type, out, i, m_Desc.m_Start + static_cast<double>(i) * m_Desc.m_Delta);
                }
                return;
            default: return;  // refused by the support check
        }
    }
private:
    template <typename T> void FillFloat(T* out) const {
        for (std::size_t i = 0; i < m_Count; ++i) out[i] = static_cast<T>(m_Desc.m_Start + static_cast<double>(i) * m_Desc.m_Delta);
    }
    template <typename T> void FillInt(T* out) const {
        // Whole numbers within 2^53 (checked by inference), so the int64 conversions are exact.
        const int64_t start = static_cast<int64_t>(m_Desc.m_Start), delta = static_cast<int64_t>(m_Desc.m_Delta);
        for (std::size_t i = 0; i < m_Count; ++i) out[i] = static_cast<T>(start + static_cast<int64_t>(i) * delta);
    }
    RangeDescriptor m_Desc;
    DataType m_Type;
    std::size_t m_Count;
};

}  // namespace

bool RangeRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    if (!CheckArity("Range", info, 0, 1, reason)) return false;
    const DataType t = info.m_OutputTensorInfos[0].GetDataType();
    if (!floatio::IsFloatType(t) && t != DataType::Signed32 && t != DataType::Signed64) {
        return Refuse(reason, std::string("Range: data type ") + GetDataTypeName(t) +
                                  " is not supported (CpuRef: Float32, Float64, Float16, BFloat16, Signed32, Signed64)");
    }
    return CheckType("Range", "output", info.m_OutputTensorInfos[0], layer.Get<RangeDescriptor>().m_DataType, reason);
}

IWorkloadPtr RangeRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<RangeWorkload>(layer.Get<RangeDescriptor>(), info.m_OutputTensorInfos[0]);
}

}  // namespace trellis::ref
