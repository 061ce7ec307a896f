// CpuRef ElementwiseBinary: Add, Sub, Mul, Div, Pow, Maximum, Minimum, the comparisons, Mod/FMod
// and BitShift, with numpy broadcasting.
//
// Types: the arithmetic operations, Max/Min, FMod and the comparisons run on Float32, Float64,
// Float16 and every plain integer type (Signed8/16/32/64, UInt8/16/32/64), each in its own type;
// Boolean for Equal, And, Or and Xor; Mod (divisor's sign) on the integer types; BitShiftLeft /
// BitShiftRight on the integer types (ONNX BitShift; see ShiftLeftOp for the signed rules).
// Float16 operands are widened exactly to double, the operation runs in double and the result is
// rounded to half (one rounding in all for Add, Sub, Mul, Max, Min and FMod, whose double results
// are exact).
// Integer semantics: Add/Sub/Mul/Pow wrap (two's complement, like numpy); Div truncates toward
// zero (C++/ONNX Runtime) and throws on a zero divisor; Pow with a negative exponent gives the
// truncated real result (0 unless the base is 1 or -1) and throws for base 0. An integer Mod/FMod
// by zero throws. Float Max/Min propagate NaN (numpy maximum/minimum).
#include "RefBroadcast.hpp"
#include "RefConvert.hpp"
#include "RefDataMovement.hpp"
#include "RefKernelTable.hpp"

#include <trellis/Exceptions.hpp>

#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>

namespace trellis::ref {

namespace {

bool IsComparison(BinaryOperation op) {
    return op == BinaryOperation::Equal || op == BinaryOperation::Less || op == BinaryOperation::Greater ||
           op == BinaryOperation::LessOrEqual || op == BinaryOperation::GreaterOrEqual;
}

// v < 0, written so that unsigned types do not warn (always false for them).
template <typename T> bool IsNegative(T v) {
    if constexpr (std::is_signed_v<T>) return v < 0;
    else return false;
}

// Signed overflow is undefined in C++; numpy wraps, so compute in the unsigned type.
template <typename T> T WrapAdd(T a, T b) { using U = std::make_unsigned_t<T>; return T(U(a) + U(b)); }
template <typename T> T WrapSub(T a, T b) { using U = std::make_unsigned_t<T>; return T(U(a) - U(b)); }
template <typename T> T WrapMul(T a, T b) { using U = std::make_unsigned_t<T>; return T(U(a) * U(b)); }

// Operation functors: T operator()(T, T) (comparisons return uint8_t 0/1). Those that can fail
// at run time carry the layer name for the message.
struct AddOp { template <typename T> T operator()(T a, T b) const { if constexpr (std::is_integral_v<T>) return WrapAdd(a, b); else return a + b; } };
struct SubOp { template <typename T> T operator()(T a, T b) const { if constexpr (std::is_integral_v<T>) return WrapSub(a, b); else return a - b; } };
struct MulOp { template <typename T> T operator()(T a, T b) const { if constexpr (std::is_integral_v<T>) return WrapMul(a, b); else return a * b; } };
struct DivOp {
    const std::string* m_Layer;
    template <typename T> T operator()(T a, T b) const {
        if constexpr (std::is_integral_v<T>) {
            if (b == 0) throw RuntimeException("ElementwiseBinary '" + *m_Layer + "': Div: integer division by zero");
            if constexpr (std::is_signed_v<T>) {
                if (b == -1) return WrapSub(T(0), a);  // INT_MIN / -1 overflows; wrap like numpy
            }
            return static_cast<T>(a / b);              // C++ truncates toward zero
        } else {
            return a / b;
        }
    }
};
struct PowOp {
    const std::string* m_Layer;
    template <typename T> T operator()(T a, T b) const {
        if constexpr (std::is_integral_v<T>) {
            if (IsNegative(b)) {
                if (a == 0) throw RuntimeException("ElementwiseBinary '" + *m_Layer + "': Pow: integer 0 raised to a negative power");
                if (a == 1) return 1;
                if (a != T(-1)) return 0;  // |a| >= 2: |a^b| < 1 truncates to 0
                return (b % 2 == 0) ? T(1) : T(-1);  // a == -1
            }
            T result = 1, base = a;  // square-and-multiply, wrapping
            for (T e = b; e > 0; e >>= 1) {
                if (e & 1) result = WrapMul(result, base);
                base = WrapMul(base, base);
            }
            return result;
        } else {
            return static_cast<T>(std::pow(static_cast<double>(a), static_cast<double>(b)));
        }
    }
};
struct MaxOp {
    template <typename T> T operator()(T a, T b) const {
        if constexpr (std::is_floating_point_v<T>) { if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN(); }
        return a < b ? b : a;
    }
};
struct MinOp {
    template <typename T> T operator()(T a, T b) const {
        if constexpr (std::is_floating_point_v<T>) { if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN(); }
        return b < a ? b : a;
    }
};
struct EqualOp { template <typename T> uint8_t operator()(T a, T b) const { return a == b; } };
struct LessOp { template <typename T> uint8_t operator()(T a, T b) const { return a < b; } };
struct GreaterOp { template <typename T> uint8_t operator()(T a, T b) const { return a > b; } };
struct LessOrEqualOp { template <typename T> uint8_t operator()(T a, T b) const { return a <= b; } };
struct GreaterOrEqualOp { template <typename T> uint8_t operator()(T a, T b) const { return a >= b; } };
// Booleans are 0/1 bytes, but compare their truth so any non-zero byte counts as true.
struct BoolEqualOp { uint8_t operator()(uint8_t a, uint8_t b) const { return (a != 0) == (b != 0); } };
struct AndOp { uint8_t operator()(uint8_t a, uint8_t b) const { return (a != 0) && (b != 0); } };
struct OrOp { uint8_t operator()(uint8_t a, uint8_t b) const { return (a != 0) || (b != 0); } };
struct XorOp { uint8_t operator()(uint8_t a, uint8_t b) const { return (a != 0) != (b != 0); } };
// Integer remainders. Truncated (C %, FMod) or floored (Python %, Mod: the divisor's sign).
struct ModOp {
    const std::string* m_Layer;
    bool m_Floored;
    template <typename T> T operator()(T a, T b) const {
        if constexpr (std::is_integral_v<T>) {
            if (b == 0) throw RuntimeException("ElementwiseBinary '" + *m_Layer + "': " + (m_Floored ? "Mod" : "FMod") + ": integer modulo by zero");
            if constexpr (std::is_signed_v<T>) {
                if (b == -1) return 0;  // INT_MIN % -1 overflows in C++; the remainder is 0
            }
            T r = static_cast<T>(a % b);
            if (m_Floored && r != 0 && IsNegative(r) != IsNegative(b)) r = static_cast<T>(r + b);
            return r;
        } else {
            return static_cast<T>(std::fmod(static_cast<double>(a), static_cast<double>(b)));
        }
    }
};

// Unsigned integers only (the kernel table gives them no other type).
struct BitAndOp {
    template <typename T> T operator()(T a, T b) const { return static_cast<T>(a & b); }
};
struct BitOrOp {
    template <typename T> T operator()(T a, T b) const { return static_cast<T>(a | b); }
};
struct BitXorOp {
    template <typename T> T operator()(T a, T b) const { return static_cast<T>(a ^ b); }
};
// Shifts (ONNX BitShift; signed types from opset 28): a shift by a negative amount or by the bit
// width or more leaves only the sign fill - 0, or -1 for a right shift of a negative value; a
// signed left shift drops the bits it moves past the sign bit (two's complement); a signed right
// shift is arithmetic.
struct ShiftLeftOp {
    template <typename T> T operator()(T a, T b) const {
        using U = std::make_unsigned_t<T>;
        const bool out = IsNegativeAmount(b) || static_cast<U>(b) >= static_cast<U>(sizeof(T) * 8);
        return out ? T(0) : static_cast<T>(static_cast<U>(static_cast<U>(a) << static_cast<U>(b)));
    }
    template <typename T> static bool IsNegativeAmount(T b) {
        if constexpr (std::is_signed_v<T>) return b < 0;
        else return false;
    }
};
struct ShiftRightOp {
    template <typename T> T operator()(T a, T b) const {
        using U = std::make_unsigned_t<T>;
        const bool out = ShiftLeftOp::IsNegativeAmount(b) || static_cast<U>(b) >= static_cast<U>(sizeof(T) * 8);
        if (out) return ShiftLeftOp::IsNegativeAmount(a) ? T(-1) : T(0);
        return static_cast<T>(a >> b);  // arithmetic for signed T (C++20)
    }
};

// How a kernel reads and writes elements: plain types are computed in their own type; Float16
// is widened to double (exactly) and each result rounded once back to half.
template <typename T> struct PlainElement {
    using Storage = T;
    using Value = T;
    static T Load(T v) { return v; }
    static T Store(T v) { return v; }
};
struct HalfElement {
    using Storage = uint16_t;
    using Value = double;
    static double Load(uint16_t v) { return ElementTraits<DataType::Float16>::Read(v); }
    static uint16_t Store(double v) { return ElementTraits<DataType::Float16>::FromDouble(v); }
};

using BinaryFn = void (*)(const void* a, const void* b, void* out, const BroadcastPlan<2>& plan, const std::string& layer);

template <typename Op, bool Floored = false> Op MakeOp(const std::string& layer) {
    if constexpr (std::is_same_v<Op, DivOp> || std::is_same_v<Op, PowOp>) return Op{&layer};
    else if constexpr (std::is_same_v<Op, ModOp>) return Op{&layer, Floored};
    else return Op{};
}

// Comparisons produce Boolean bytes; every other op the element type.
template <typename E, typename Op, bool Floored = false>
void RunBinary(const void* aData, const void* bData, void* outData, const BroadcastPlan<2>& plan, const std::string& layer) {
    using S = typename E::Storage;
    using V = typename E::Value;
    using R = decltype(std::declval<Op>()(V{}, V{}));
    constexpr bool kSameType = std::is_same_v<R, V>;
    using O = std::conditional_t<kSameType, S, R>;
    const S* a = static_cast<const S*>(aData);
    const S* b = static_cast<const S*>(bData);
    O* out = static_cast<O*>(outData);
    const Op op = MakeOp<Op, Floored>(layer);
    auto apply = [&](S x, S y) -> O {
        if constexpr (kSameType) return E::Store(op(E::Load(x), E::Load(y)));
        else return op(E::Load(x), E::Load(y));
    };
    ForEachBroadcastRow(plan, [&](const std::array<int64_t, 2>& off, int64_t o, int64_t n, const std::array<int64_t, 2>& s) {
        const S* pa = a + off[0];
        const S* pb = b + off[1];
        O* po = out + o;
        // Fast paths: both operands contiguous (equal shapes), or one of them fixed (a scalar).
        if (s[0] == 1 && s[1] == 1) {
            for (int64_t i = 0; i < n; ++i) po[i] = apply(pa[i], pb[i]);
        } else if (s[0] == 1 && s[1] == 0) {
            const S vb = *pb;
            for (int64_t i = 0; i < n; ++i) po[i] = apply(pa[i], vb);
        } else if (s[0] == 0 && s[1] == 1) {
            const S va = *pa;
            for (int64_t i = 0; i < n; ++i) po[i] = apply(va, pb[i]);
        } else {
            for (int64_t i = 0; i < n; ++i) po[i] = apply(pa[i * s[0]], pb[i * s[1]]);
        }
    });
}

template <typename E>
BinaryFn PickForType(BinaryOperation op) {
    using V = typename E::Value;
    switch (op) {
        case BinaryOperation::Add: return &RunBinary<E, AddOp>;
        case BinaryOperation::Sub: return &RunBinary<E, SubOp>;
        case BinaryOperation::Mul: return &RunBinary<E, MulOp>;
        case BinaryOperation::Div: return &RunBinary<E, DivOp>;
        case BinaryOperation::Pow: return &RunBinary<E, PowOp>;
        case BinaryOperation::Maximum: return &RunBinary<E, MaxOp>;
        case BinaryOperation::Minimum: return &RunBinary<E, MinOp>;
        case BinaryOperation::Equal: return &RunBinary<E, EqualOp>;
        case BinaryOperation::Less: return &RunBinary<E, LessOp>;
        case BinaryOperation::Greater: return &RunBinary<E, GreaterOp>;
        case BinaryOperation::LessOrEqual: return &RunBinary<E, LessOrEqualOp>;
        case BinaryOperation::GreaterOrEqual: return &RunBinary<E, GreaterOrEqualOp>;
        case BinaryOperation::FMod: return &RunBinary<E, ModOp, false>;
        case BinaryOperation::Mod:
            if constexpr (std::is_integral_v<V>) return &RunBinary<E, ModOp, true>;
            else return nullptr;
        case BinaryOperation::BitShiftLeft:
            if constexpr (std::is_integral_v<V>) return &RunBinary<E, ShiftLeftOp>;
            else return nullptr;
        case BinaryOperation::BitShiftRight:
            if constexpr (std::is_integral_v<V>) return &RunBinary<E, ShiftRightOp>;
            else return nullptr;
        case BinaryOperation::BitwiseAnd:
            if constexpr (std::is_integral_v<V>) return &RunBinary<E, BitAndOp>;
            else return nullptr;
        case BinaryOperation::BitwiseOr:
            if constexpr (std::is_integral_v<V>) return &RunBinary<E, BitOrOp>;
            else return nullptr;
        case BinaryOperation::BitwiseXor:
            if constexpr (std::is_integral_v<V>) return &RunBinary<E, BitXorOp>;
            else return nullptr;
        case BinaryOperation::And:
        case BinaryOperation::Or:
        case BinaryOperation::Xor: return nullptr;  // Boolean only
    }
    return nullptr;
}

// The kernel for (operation, input type), or nullptr when CpuRef has none.
BinaryFn PickKernel(BinaryOperation op, DataType type) {
    switch (type) {
        case DataType::Float32: return PickForType<PlainElement<float>>(op);
        case DataType::Float64: return PickForType<PlainElement<double>>(op);
        case DataType::Float16: return PickForType<HalfElement>(op);
        case DataType::Signed8: return PickForType<PlainElement<int8_t>>(op);
        case DataType::Signed16: return PickForType<PlainElement<int16_t>>(op);
        case DataType::Signed32: return PickForType<PlainElement<int32_t>>(op);
        case DataType::Signed64: return PickForType<PlainElement<int64_t>>(op);
        case DataType::UInt8: return PickForType<PlainElement<uint8_t>>(op);
        case DataType::UInt16: return PickForType<PlainElement<uint16_t>>(op);
        case DataType::UInt32: return PickForType<PlainElement<uint32_t>>(op);
        case DataType::UInt64: return PickForType<PlainElement<uint64_t>>(op);
        case DataType::Boolean:
            switch (op) {
                case BinaryOperation::Equal: return &RunBinary<PlainElement<uint8_t>, BoolEqualOp>;
                case BinaryOperation::And: return &RunBinary<PlainElement<uint8_t>, AndOp>;
                case BinaryOperation::Or: return &RunBinary<PlainElement<uint8_t>, OrOp>;
                case BinaryOperation::Xor: return &RunBinary<PlainElement<uint8_t>, XorOp>;
                default: return nullptr;
            }
        default: return nullptr;
    }
}

class ElementwiseBinaryWorkload final : public IWorkload {
public:
    ElementwiseBinaryWorkload(BinaryFn fn, BroadcastPlan<2> plan, std::string layer)
        : m_Fn(fn), m_Plan(std::move(plan)), m_Layer(std::move(layer)) {}
    void Execute(const WorkloadIo& io) const override {
        m_Fn(io.m_Inputs[0]->Map(), io.m_Inputs[1]->Map(), io.m_Outputs[0]->Map(), m_Plan, m_Layer);
    }
private:
    BinaryFn m_Fn;
    BroadcastPlan<2> m_Plan;
    std::string m_Layer;
};

}  // namespace

bool ElementwiseBinaryRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    if (!CheckArity("ElementwiseBinary", info, 2, 1, reason)) return false;
    const BinaryOperation op = layer.Get<ElementwiseBinaryDescriptor>().m_Operation;
    const std::string name = std::string("ElementwiseBinary ") + GetBinaryOperationName(op);
    const TensorInfo& a = info.m_InputTensorInfos[0];
    const TensorInfo& b = info.m_InputTensorInfos[1];
    const TensorInfo& out = info.m_OutputTensorInfos[0];
    if (a.GetDataType() != b.GetDataType()) {
        return Refuse(reason, name + ": inputs are " + GetDataTypeName(a.GetDataType()) + " and " +
                                  GetDataTypeName(b.GetDataType()) + "; they must have the same type");
    }
    if (PickKernel(op, a.GetDataType()) == nullptr) {
        return Refuse(reason, name + ": data type " + GetDataTypeName(a.GetDataType()) +
                                  " is not supported (CpuRef: Float32, Float64, Float16 and the integer types; Boolean for "
                                  "Equal, And, Or, Xor; Mod (fmod=0), Bitwise* and BitShift integers only)");
    }
    const DataType expected = IsComparison(op) ? DataType::Boolean : a.GetDataType();
    return CheckType(name.c_str(), "output", out, expected, reason);
}

IWorkloadPtr ElementwiseBinaryRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const BinaryOperation op = layer.Get<ElementwiseBinaryDescriptor>().m_Operation;
    return std::make_unique<ElementwiseBinaryWorkload>(
        PickKernel(op, info.m_InputTensorInfos[0].GetDataType()),
        MakeBroadcastPlan<2>(info.m_OutputTensorInfos[0].GetShape(),
                             {info.m_InputTensorInfos[0].GetShape(), info.m_InputTensorInfos[1].GetShape()}),
        layer.m_LayerName);
}

}  // namespace trellis::ref
