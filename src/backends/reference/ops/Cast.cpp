// CpuRef Cast: between Float32, Float64, Float16, BFloat16, the plain integer types (Signed8/16/
// 32/64, UInt8/16/32/64) and Boolean (every pair; quantized types are refused). Conversion rules, including IEEE half rounding and
// float-to-integer truncation, are RefConvert.hpp's. Each (source, target) pair is its own
// instantiated loop (kernels/Convert.hpp), picked once at creation.
#include "RefConvert.hpp"
#include "RefDataMovement.hpp"
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"


namespace trellis::ref {

namespace {

using CastFn = void (*)(const kernels::CastParams& p, const void* in, void* out);

template <DataType From, DataType To>
void CastLoop(const kernels::CastParams& p, const void* in, void* out) {
    kernels::Cast<ElementTraits<From>, ElementTraits<To>>(p, in, out);
}

template <DataType From>
CastFn PickTarget(DataType to) {
    switch (to) {
        case DataType::Float32: return &CastLoop<From, DataType::Float32>;
        case DataType::Float64: return &CastLoop<From, DataType::Float64>;
        case DataType::Float16: return &CastLoop<From, DataType::Float16>;
        case DataType::BFloat16: return &CastLoop<From, DataType::BFloat16>;
        case DataType::Signed32: return &CastLoop<From, DataType::Signed32>;
        case DataType::Signed64: return &CastLoop<From, DataType::Signed64>;
        case DataType::UInt8: return &CastLoop<From, DataType::UInt8>;
        case DataType::Signed8: return &CastLoop<From, DataType::Signed8>;
        case DataType::Signed16: return &CastLoop<From, DataType::Signed16>;
        case DataType::UInt16: return &CastLoop<From, DataType::UInt16>;
        case DataType::UInt32: return &CastLoop<From, DataType::UInt32>;
        case DataType::UInt64: return &CastLoop<From, DataType::UInt64>;
        case DataType::Boolean: return &CastLoop<From, DataType::Boolean>;
        default: return nullptr;
    }
}

// The loop for (from, to), or nullptr when either type is not a plain type.
CastFn PickCast(DataType from, DataType to) {
    switch (from) {
        case DataType::Float32: return PickTarget<DataType::Float32>(to);
        case DataType::Float64: return PickTarget<DataType::Float64>(to);
        case DataType::Float16: return PickTarget<DataType::Float16>(to);
        case DataType::BFloat16: return PickTarget<DataType::BFloat16>(to);
        case DataType::Signed32: return PickTarget<DataType::Signed32>(to);
        case DataType::Signed64: return PickTarget<DataType::Signed64>(to);
        case DataType::UInt8: return PickTarget<DataType::UInt8>(to);
        case DataType::Signed8: return PickTarget<DataType::Signed8>(to);
        case DataType::Signed16: return PickTarget<DataType::Signed16>(to);
        case DataType::UInt16: return PickTarget<DataType::UInt16>(to);
        case DataType::UInt32: return PickTarget<DataType::UInt32>(to);
        case DataType::UInt64: return PickTarget<DataType::UInt64>(to);
        case DataType::Boolean: return PickTarget<DataType::Boolean>(to);
        default: return nullptr;
    }
}

class CastWorkload final : public IWorkload {
public:
    CastWorkload(CastFn fn, kernels::CastParams p) : m_Fn(fn), m_P(p) {}
    void Execute(const WorkloadIo& io) const override { m_Fn(m_P, io.m_Inputs[0]->Map(), io.m_Outputs[0]->Map()); }
private:
    CastFn m_Fn;
    const kernels::CastParams m_P;
};

}  // namespace

bool CastRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    if (!CheckArity("Cast", info, 1, 1, reason)) return false;
    const DataType from = info.m_InputTensorInfos[0].GetDataType();
    const DataType to = info.m_OutputTensorInfos[0].GetDataType();
    if (to != layer.Get<CastDescriptor>().m_To) {
        return Refuse(reason, std::string("Cast: output is ") + GetDataTypeName(to) + " but the descriptor says " +
                                  GetDataTypeName(layer.Get<CastDescriptor>().m_To));
    }
    if (PickCast(from, to) == nullptr) {
        return Refuse(reason, std::string("Cast: ") + GetDataTypeName(from) + " to " + GetDataTypeName(to) +
                                  " is not supported (CpuRef casts between Float32, Float64, Float16, BFloat16, the integer "
                                  "types and Boolean)");
    }
    return true;
}

kernels::CastParams CastRefParams(const QueueDescriptor&, const WorkloadInfo& info) {
    return {info.m_InputTensorInfos[0].GetNumElements()};
}

IWorkloadPtr CastRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<CastWorkload>(
        PickCast(info.m_InputTensorInfos[0].GetDataType(), info.m_OutputTensorInfos[0].GetDataType()),
        CastRefParams(layer, info));
}

}  // namespace trellis::ref
