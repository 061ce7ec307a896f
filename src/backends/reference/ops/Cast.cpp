// CpuRef Cast: between Float32, Float64, Float16, BFloat16, the plain integer types (Signed8/16/
// 32/64, UInt8/16/32/64) and Boolean (every pair; quantized types are refused), plus casts from
// or to the small float8/float4/int4/int2 types (SmallTypeCastWorkload, outside the snippets). Conversion rules, including IEEE half rounding and
// float-to-integer truncation, are RefConvert.hpp's. Each (source, target) pair is its own
// instantiated loop (kernels/Convert.hpp), picked once at creation; small-type casts go element by element
// through double (SmallTypes.hpp's encoding).
#include "RefConvert.hpp"
#include "RefDataMovement.hpp"
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"

#include <trellis/backends/SmallTypes.hpp>

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

// Element i of a plain type set to the nearest value of that type to `v` (RefConvert.hpp's rules).
void StorePlain(DataType t, void* data, std::size_t i, double v) {
    switch (t) {
#define TRELLIS_STORE(T) \
    case DataType::T: static_cast<ElementTraits<DataType::T>::Storage*>(data)[i] = ElementTraits<DataType::T>::FromDouble(v); break;
        TRELLIS_STORE(Float32) TRELLIS_STORE(Float64) TRELLIS_STORE(Float16) TRELLIS_STORE(BFloat16)
        TRELLIS_STORE(Signed8) TRELLIS_STORE(Signed16) TRELLIS_STORE(Signed32) TRELLIS_STORE(Signed64)
        TRELLIS_STORE(UInt8) TRELLIS_STORE(UInt16) TRELLIS_STORE(UInt32) TRELLIS_STORE(UInt64) TRELLIS_STORE(Boolean)
#undef TRELLIS_STORE
        default: break;  // the support check admits plain targets only
    }
}

// Casts from or to a small type (float8, float4, int4, int2: backends/SmallTypes.hpp): each value
// goes through double, which holds every source value exactly, then rounds once to the target.
class SmallTypeCastWorkload final : public IWorkload {
public:
    SmallTypeCastWorkload(TensorInfo from, DataType to, bool saturate, SmallTypeRounding rounding)
        : m_From(std::move(from)), m_To(to), m_Saturate(saturate), m_Rounding(rounding) {}
    void Execute(const WorkloadIo& io) const override {
        const ConstTensor in(m_From, io.m_Inputs[0]->Map());
        void* out = io.m_Outputs[0]->Map();
        for (std::size_t i = 0; i < m_From.GetNumElements(); ++i) {
            const double v = GetElementAsDouble(in, i);
            if (IsSmallType(m_To)) static_cast<uint8_t*>(out)[i] = EncodeSmallType(m_To, v, m_Saturate, m_Rounding);
            else StorePlain(m_To, out, i, v);
        }
    }
private:
    const TensorInfo m_From;
    const DataType m_To;
    const bool m_Saturate;
    const SmallTypeRounding m_Rounding;
};

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
    if ((IsSmallType(from) || IsSmallType(to)) && (IsSmallType(from) || IsPlainConvertibleType(from)) &&
        (IsSmallType(to) || IsPlainConvertibleType(to))) {
        return true;
    }
    if (PickCast(from, to) == nullptr) {
        return Refuse(reason, std::string("Cast: ") + GetDataTypeName(from) + " to " + GetDataTypeName(to) +
                                  " is not supported (CpuRef casts between Float32, Float64, Float16, BFloat16, the integer "
                                  "types, Boolean and the small float8/float4/int4/int2 types)");
    }
    return true;
}

kernels::CastParams CastRefParams(const QueueDescriptor&, const WorkloadInfo& info) {
    return {info.m_InputTensorInfos[0].GetNumElements()};
}

IWorkloadPtr CastRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const DataType from = info.m_InputTensorInfos[0].GetDataType(), to = info.m_OutputTensorInfos[0].GetDataType();
    if (IsSmallType(from) || IsSmallType(to)) {
        const auto& d = layer.Get<CastDescriptor>();
        return std::make_unique<SmallTypeCastWorkload>(info.m_InputTensorInfos[0], to, d.m_Saturate, d.m_Rounding);
    }
    return std::make_unique<CastWorkload>(
        PickCast(info.m_InputTensorInfos[0].GetDataType(), info.m_OutputTensorInfos[0].GetDataType()),
        CastRefParams(layer, info));
}

}  // namespace trellis::ref
