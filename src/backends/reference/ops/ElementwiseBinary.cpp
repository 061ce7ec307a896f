// CpuRef ElementwiseBinary: Add, Sub, Mul, Div, Pow, Maximum, Minimum and the comparisons, with
// numpy broadcasting.
//
// Supports Float32, Float64, Signed32 and Signed64 for the arithmetic operations and the comparisons,
// Boolean for Equal, And, Or and Xor; Mod (divisor's sign) Signed32/Signed64 only; FMod
// (dividend's sign, C fmod) Float32, Float64, Signed32, Signed64. An integer Mod/FMod by zero throws.
// Integer semantics: Add/Sub/Mul/Pow wrap (two's complement, like numpy); Div truncates toward
// zero (C++/ONNX Runtime) and throws on a zero divisor; Pow with a negative exponent gives the
// truncated real result (0 unless the base is 1 or -1) and throws for base 0. Float Max/Min
// propagate NaN (numpy maximum/minimum).
#include "RefBroadcast.hpp"
#include "RefDataMovement.hpp"
#include "RefKernelTable.hpp"

#include <trellis/Exceptions.hpp>

#include <cmath>
#include <limits>
#include <type_traits>

namespace trellis::ref {

namespace {

bool IsComparison(BinaryOperation op) {
    return op == BinaryOperation::Equal || op == BinaryOperation::Less || op == BinaryOperation::Greater ||
           op == BinaryOperation::LessOrEqual || op == BinaryOperation::GreaterOrEqual;
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
            if (b == -1) return WrapSub(T(0), a);  // INT_MIN / -1 overflows; wrap like numpy
            return a / b;                          // C++ truncates toward zero
        } else {
            return a / b;
        }
    }
};
struct PowOp {
    const std::string* m_Layer;
    template <typename T> T operator()(T a, T b) const {
        if constexpr (std::is_integral_v<T>) {
            if (b < 0) {
                if (a == 0) throw RuntimeException("ElementwiseBinary '" + *m_Layer + "': Pow: integer 0 raised to a negative power");
                if (a == 1) return 1;
                if (a == -1) return (b % 2 == 0) ? 1 : -1;
                return 0;  // |a| >= 2: |a^b| < 1 truncates to 0
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
            if (b == -1) return 0;  // INT_MIN % -1 overflows in C++; the remainder is 0
            T r = a % b;
            if (m_Floored && r != 0 && ((r < 0) != (b < 0))) r += b;
            return r;
        } else {
            return static_cast<T>(std::fmod(static_cast<double>(a), static_cast<double>(b)));
        }
    }
};

using BinaryFn = void (*)(const void* a, const void* b, void* out, const BroadcastPlan<2>& plan, const std::string& layer);

template <typename Op, bool Floored = false> Op MakeOp(const std::string& layer) {
    if constexpr (std::is_same_v<Op, DivOp> || std::is_same_v<Op, PowOp>) return Op{&layer};
    else if constexpr (std::is_same_v<Op, ModOp>) return Op{&layer, Floored};
    else return Op{};
}

template <typename T, typename R, typename Op, bool Floored = false>
void RunBinary(const void* aData, const void* bData, void* outData, const BroadcastPlan<2>& plan, const std::string& layer) {
    const T* a = static_cast<const T*>(aData);
    const T* b = static_cast<const T*>(bData);
    R* out = static_cast<R*>(outData);
    const Op op = MakeOp<Op, Floored>(layer);
    ForEachBroadcastRow(plan, [&](const std::array<int64_t, 2>& off, int64_t o, int64_t n, const std::array<int64_t, 2>& s) {
        const T* pa = a + off[0];
        const T* pb = b + off[1];
        R* po = out + o;
        // Fast paths: both operands contiguous (equal shapes), or one of them fixed (a scalar).
        if (s[0] == 1 && s[1] == 1) {
            for (int64_t i = 0; i < n; ++i) po[i] = op(pa[i], pb[i]);
        } else if (s[0] == 1 && s[1] == 0) {
            const T vb = *pb;
            for (int64_t i = 0; i < n; ++i) po[i] = op(pa[i], vb);
        } else if (s[0] == 0 && s[1] == 1) {
            const T va = *pa;
            for (int64_t i = 0; i < n; ++i) po[i] = op(va, pb[i]);
        } else {
            for (int64_t i = 0; i < n; ++i) po[i] = op(pa[i * s[0]], pb[i * s[1]]);
        }
    });
}

template <typename T>
BinaryFn PickForType(BinaryOperation op) {
    switch (op) {
        case BinaryOperation::Add: return &RunBinary<T, T, AddOp>;
        case BinaryOperation::Sub: return &RunBinary<T, T, SubOp>;
        case BinaryOperation::Mul: return &RunBinary<T, T, MulOp>;
        case BinaryOperation::Div: return &RunBinary<T, T, DivOp>;
        case BinaryOperation::Pow: return &RunBinary<T, T, PowOp>;
        case BinaryOperation::Maximum: return &RunBinary<T, T, MaxOp>;
        case BinaryOperation::Minimum: return &RunBinary<T, T, MinOp>;
        case BinaryOperation::Equal: return &RunBinary<T, uint8_t, EqualOp>;
        case BinaryOperation::Less: return &RunBinary<T, uint8_t, LessOp>;
        case BinaryOperation::Greater: return &RunBinary<T, uint8_t, GreaterOp>;
        case BinaryOperation::LessOrEqual: return &RunBinary<T, uint8_t, LessOrEqualOp>;
        case BinaryOperation::GreaterOrEqual: return &RunBinary<T, uint8_t, GreaterOrEqualOp>;
        case BinaryOperation::FMod: return &RunBinary<T, T, ModOp, false>;
        case BinaryOperation::Mod:
            if constexpr (std::is_integral_v<T>) return &RunBinary<T, T, ModOp, true>;
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
        case DataType::Float32: return PickForType<float>(op);
        case DataType::Float64: return PickForType<double>(op);
        case DataType::Signed32: return PickForType<int32_t>(op);
        case DataType::Signed64: return PickForType<int64_t>(op);
        case DataType::Boolean:
            switch (op) {
                case BinaryOperation::Equal: return &RunBinary<uint8_t, uint8_t, BoolEqualOp>;
                case BinaryOperation::And: return &RunBinary<uint8_t, uint8_t, AndOp>;
                case BinaryOperation::Or: return &RunBinary<uint8_t, uint8_t, OrOp>;
                case BinaryOperation::Xor: return &RunBinary<uint8_t, uint8_t, XorOp>;
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
                                  " is not supported (CpuRef: Float32, Float64, Signed32, Signed64; Boolean for Equal, And, Or, Xor; " +
                                  "Mod (fmod=0) Signed32/Signed64 only)");
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
