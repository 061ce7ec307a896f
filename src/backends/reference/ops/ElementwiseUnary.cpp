// CpuRef ElementwiseUnary.
//
// Supports Float32 for every operation but Not, and every plain integer type (Signed8/16/32/64,
// UInt8/16/32/64) for Neg, Abs, Relu, Clip and Sign. Not maps Boolean to Boolean; IsNaN/IsInf/IsPosInf/IsNegInf map Float32 to Boolean.
// Float results are computed in double and rounded once, so this kernel is a tight reference.
// Semantics: Gelu = 0.5x(1 + erf(x/sqrt 2)); GeluTanh = 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3)));
// HardSigmoid = max(0, min(1, A*x + B)); HardSwish = x * max(0, min(1, x/6 + 1/2));
// Elu = x > 0 ? x : A(e^x - 1); LeakyRelu = x >= 0 ? x : A*x; Clip = min(max(x, A), B).
// Round is half-to-even; Sign(NaN) = NaN; Softplus = log(1 + e^x) (no overflow for large x);
// Selu = B(x > 0 ? x : A(e^x - 1)); Celu = max(0, x) + min(0, A(e^(x/A) - 1)); Mish =
// x tanh(softplus(x)); ThresholdedRelu = x > A ? x : 0; Shrink = x < -A ? x + B : x > A ? x - B : 0.
// NaN propagates through Relu, Clip and the rest. Integer Neg/Abs wrap at the minimum value
// (like numpy); integer Clip clamps to [ceil(A), floor(B)] saturated to the type's range.
#include "RefDataMovement.hpp"
#include "RefKernelTable.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

namespace trellis::ref {

namespace {

bool SupportsIntegers(UnaryOperation op) {
    return op == UnaryOperation::Neg || op == UnaryOperation::Abs || op == UnaryOperation::Relu ||
           op == UnaryOperation::Clip || op == UnaryOperation::Sign || op == UnaryOperation::BitwiseNot;
}

bool IsClassification(UnaryOperation op) {
    return op == UnaryOperation::IsNaN || op == UnaryOperation::IsInf || op == UnaryOperation::IsPosInf ||
           op == UnaryOperation::IsNegInf;
}

double Softplus(double x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }

// Float -> Boolean tests (IsNaN, IsInf, ...): Float32, Float64, Float16 and BFloat16, each value
// widened exactly to double (NaN and the infinities stay what they are).
void RunClassify(UnaryOperation op, const ConstTensor& x, void* out) {
    uint8_t* y = static_cast<uint8_t*>(out);
    for (std::size_t i = 0; i < x.GetNumElements(); ++i) {
        const double v = GetElementAsDouble(x, i);
        bool r = false;
        switch (op) {
            case UnaryOperation::IsNaN: r = std::isnan(v); break;
            case UnaryOperation::IsInf: r = std::isinf(v); break;
            case UnaryOperation::IsPosInf: r = std::isinf(v) && v > 0; break;
            case UnaryOperation::IsNegInf: r = std::isinf(v) && v < 0; break;
            default: break;
        }
        y[i] = r ? 1 : 0;
    }
}

template <typename T, typename F>
void Map(const void* in, void* out, std::size_t n, F f) {
    const T* x = static_cast<const T*>(in);
    T* y = static_cast<T*>(out);
    for (std::size_t i = 0; i < n; ++i) y[i] = f(x[i]);
}

// Float32 kernels: f maps double to double; the result is rounded to float once.
template <typename F>
void MapFloat(const void* in, void* out, std::size_t n, F f) {
    Map<float>(in, out, n, [&](float x) { return static_cast<float>(f(static_cast<double>(x))); });
}

void RunFloat(UnaryOperation op, double a, double b, const void* in, void* out, std::size_t n) {
    constexpr double kSqrtHalf = 0.70710678118654752440;
    constexpr double kSqrtTwoOverPi = 0.79788456080286535588;
    switch (op) {
        case UnaryOperation::Abs: return MapFloat(in, out, n, [](double x) { return std::fabs(x); });
        case UnaryOperation::Neg: return MapFloat(in, out, n, [](double x) { return -x; });
        case UnaryOperation::Exp: return MapFloat(in, out, n, [](double x) { return std::exp(x); });
        case UnaryOperation::Log: return MapFloat(in, out, n, [](double x) { return std::log(x); });
        case UnaryOperation::Sqrt: return MapFloat(in, out, n, [](double x) { return std::sqrt(x); });
        case UnaryOperation::Reciprocal: return MapFloat(in, out, n, [](double x) { return 1.0 / x; });
        case UnaryOperation::Relu: return MapFloat(in, out, n, [](double x) { return x < 0 ? 0.0 : x; });
        case UnaryOperation::LeakyRelu: return MapFloat(in, out, n, [a](double x) { return x < 0 ? a * x : x; });
        case UnaryOperation::Elu: return MapFloat(in, out, n, [a](double x) { return x > 0 ? x : a * std::expm1(x); });
        case UnaryOperation::Sigmoid:
            // Written so that exp never overflows: for x < 0 use e^x / (1 + e^x).
            return MapFloat(in, out, n, [](double x) {
                if (x >= 0) return 1.0 / (1.0 + std::exp(-x));
                const double e = std::exp(x);
                return e / (1.0 + e);
            });
        case UnaryOperation::Tanh: return MapFloat(in, out, n, [](double x) { return std::tanh(x); });
        case UnaryOperation::HardSigmoid:
            return MapFloat(in, out, n, [a, b](double x) {
                const double v = a * x + b;
                return std::isnan(v) ? v : std::max(0.0, std::min(1.0, v));
            });
        case UnaryOperation::HardSwish:
            return MapFloat(in, out, n, [](double x) {
                const double v = x / 6.0 + 0.5;
                return std::isnan(v) ? v : x * std::max(0.0, std::min(1.0, v));
            });
        case UnaryOperation::Erf: return MapFloat(in, out, n, [](double x) { return std::erf(x); });
        case UnaryOperation::Gelu: return MapFloat(in, out, n, [](double x) { return 0.5 * x * (1.0 + std::erf(x * kSqrtHalf)); });
        case UnaryOperation::GeluTanh:
            return MapFloat(in, out, n, [](double x) {
                return 0.5 * x * (1.0 + std::tanh(kSqrtTwoOverPi * (x + 0.044715 * x * x * x)));
            });
        case UnaryOperation::Clip:
            return MapFloat(in, out, n, [a, b](double x) {
                if (std::isnan(x)) return x;
                return std::min(std::max(x, a), b);
            });
        case UnaryOperation::Round: return MapFloat(in, out, n, [](double x) { return std::nearbyint(x); });
        case UnaryOperation::Floor: return MapFloat(in, out, n, [](double x) { return std::floor(x); });
        case UnaryOperation::Ceil: return MapFloat(in, out, n, [](double x) { return std::ceil(x); });
        case UnaryOperation::Sign:
            return MapFloat(in, out, n, [](double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : x); });
        case UnaryOperation::Softplus: return MapFloat(in, out, n, [](double x) { return Softplus(x); });
        case UnaryOperation::Softsign: return MapFloat(in, out, n, [](double x) { return x / (1.0 + std::fabs(x)); });
        case UnaryOperation::Selu:
            return MapFloat(in, out, n, [a, b](double x) { return b * (x > 0 ? x : a * std::expm1(x)); });
        case UnaryOperation::Celu:
            return MapFloat(in, out, n, [a](double x) {
                return std::max(0.0, x) + std::min(0.0, a * std::expm1(x / a));
            });
        case UnaryOperation::Mish: return MapFloat(in, out, n, [](double x) { return x * std::tanh(Softplus(x)); });
        case UnaryOperation::ThresholdedRelu: return MapFloat(in, out, n, [a](double x) { return x > a ? x : 0.0; });
        case UnaryOperation::Shrink:
            return MapFloat(in, out, n, [a, b](double x) { return x < -a ? x + b : (x > a ? x - b : 0.0); });
        case UnaryOperation::Sin: return MapFloat(in, out, n, [](double x) { return std::sin(x); });
        case UnaryOperation::Cos: return MapFloat(in, out, n, [](double x) { return std::cos(x); });
        case UnaryOperation::Tan: return MapFloat(in, out, n, [](double x) { return std::tan(x); });
        case UnaryOperation::Asin: return MapFloat(in, out, n, [](double x) { return std::asin(x); });
        case UnaryOperation::Acos: return MapFloat(in, out, n, [](double x) { return std::acos(x); });
        case UnaryOperation::Atan: return MapFloat(in, out, n, [](double x) { return std::atan(x); });
        case UnaryOperation::Sinh: return MapFloat(in, out, n, [](double x) { return std::sinh(x); });
        case UnaryOperation::Cosh: return MapFloat(in, out, n, [](double x) { return std::cosh(x); });
        case UnaryOperation::Asinh: return MapFloat(in, out, n, [](double x) { return std::asinh(x); });
        case UnaryOperation::Acosh: return MapFloat(in, out, n, [](double x) { return std::acosh(x); });
        case UnaryOperation::Atanh: return MapFloat(in, out, n, [](double x) { return std::atanh(x); });
        case UnaryOperation::Swish:
            return MapFloat(in, out, n, [a](double x) {
                const double z = a * x;  // x * sigmoid(z), exp never overflowing
                if (z >= 0) return x / (1.0 + std::exp(-z));
                const double e = std::exp(z);
                return x * e / (1.0 + e);
            });
        case UnaryOperation::BitwiseNot:
        case UnaryOperation::Not:
        case UnaryOperation::IsNaN:
        case UnaryOperation::IsInf:
        case UnaryOperation::IsPosInf:
        case UnaryOperation::IsNegInf:
            return;  // not Float32 -> Float32 maps: handled by the workload
    }
}

// `v` (a whole number or an infinity) as T, saturated to T's range.
template <typename T>
T ElementBound(double v) {
    if (v <= static_cast<double>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
    if (v >= std::ldexp(1.0, std::numeric_limits<T>::digits)) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
}

// x < 0, without a warning for unsigned types (always false for them).
template <typename T> bool IsNegative(T x) {
    if constexpr (std::is_signed_v<T>) return x < 0;
    else return false;
}

template <typename T>
void RunInteger(UnaryOperation op, double a, double b, const void* in, void* out, std::size_t n) {
    using U = std::make_unsigned_t<T>;
    switch (op) {
        case UnaryOperation::Neg: return Map<T>(in, out, n, [](T x) { return T(U(0) - U(x)); });
        case UnaryOperation::Abs: return Map<T>(in, out, n, [](T x) { return IsNegative(x) ? T(U(0) - U(x)) : x; });
        case UnaryOperation::Relu: return Map<T>(in, out, n, [](T x) { return IsNegative(x) ? T(0) : x; });
        case UnaryOperation::Clip: {
            // Bounds arrive as floats: the integers x with A <= x <= B are those in
            // [ceil(A), floor(B)]; an infinite or out-of-range bound leaves that side open.
            const T lo = ElementBound<T>(std::ceil(a));
            const T hi = ElementBound<T>(std::floor(b));
            return Map<T>(in, out, n, [lo, hi](T x) { return x < lo ? lo : (x > hi ? hi : x); });
        }
        case UnaryOperation::Sign: return Map<T>(in, out, n, [](T x) { return T(x > 0 ? 1 : (IsNegative(x) ? -1 : 0)); });
        case UnaryOperation::BitwiseNot: return Map<T>(in, out, n, [](T x) { return T(~x); });
        default: return;  // refused by the support check
    }
}

class ElementwiseUnaryWorkload final : public IWorkload {
public:
    ElementwiseUnaryWorkload(const ElementwiseUnaryDescriptor& d, DataType type)
        : m_Op(d.m_Operation), m_A(d.m_A), m_B(d.m_B), m_Type(type) {}
    void Execute(const WorkloadIo& io) const override {
        const std::size_t n = io.m_Outputs[0]->GetTensorInfo().GetNumElements();
        const void* in = io.m_Inputs[0]->Map();
        void* out = io.m_Outputs[0]->Map();
        if (m_Op == UnaryOperation::Not) {
            // Booleans are 0/1 bytes; any non-zero byte counts as true.
            return Map<uint8_t>(in, out, n, [](uint8_t x) { return uint8_t(x == 0 ? 1 : 0); });
        }
        if (IsClassification(m_Op)) return RunClassify(m_Op, ConstTensor(io.m_Inputs[0]->GetTensorInfo(), in), out);
        switch (m_Type) {
            case DataType::Float32: return RunFloat(m_Op, m_A, m_B, in, out, n);
            case DataType::Signed8: return RunInteger<int8_t>(m_Op, m_A, m_B, in, out, n);
            case DataType::Signed16: return RunInteger<int16_t>(m_Op, m_A, m_B, in, out, n);
            case DataType::Signed32: return RunInteger<int32_t>(m_Op, m_A, m_B, in, out, n);
            case DataType::Signed64: return RunInteger<int64_t>(m_Op, m_A, m_B, in, out, n);
            case DataType::UInt8: return RunInteger<uint8_t>(m_Op, m_A, m_B, in, out, n);
            case DataType::UInt16: return RunInteger<uint16_t>(m_Op, m_A, m_B, in, out, n);
            case DataType::UInt32: return RunInteger<uint32_t>(m_Op, m_A, m_B, in, out, n);
            case DataType::UInt64: return RunInteger<uint64_t>(m_Op, m_A, m_B, in, out, n);
            default: return;  // refused by the support check
        }
    }
private:
    UnaryOperation m_Op;
    double m_A, m_B;
    DataType m_Type;
};

}  // namespace

bool ElementwiseUnaryRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    if (!CheckArity("ElementwiseUnary", info, 1, 1, reason)) return false;
    const UnaryOperation op = layer.Get<ElementwiseUnaryDescriptor>().m_Operation;
    const std::string name = std::string("ElementwiseUnary ") + GetUnaryOperationName(op);
    const DataType t = info.m_InputTensorInfos[0].GetDataType();
    if (op == UnaryOperation::Not) {
        if (t != DataType::Boolean) return Refuse(reason, name + ": data type " + GetDataTypeName(t) + " is not supported (Boolean only)");
        return CheckType(name.c_str(), "output", info.m_OutputTensorInfos[0], DataType::Boolean, reason);
    }
    if (IsClassification(op)) {
        if (t != DataType::Float32 && t != DataType::Float64 && t != DataType::Float16 && t != DataType::BFloat16) {
            return Refuse(reason, name + ": data type " + GetDataTypeName(t) +
                                      " is not supported (CpuRef: Float32, Float64, Float16, BFloat16)");
        }
        return CheckType(name.c_str(), "output", info.m_OutputTensorInfos[0], DataType::Boolean, reason);
    }
    const bool integer = t == DataType::Signed8 || t == DataType::Signed16 || t == DataType::Signed32 ||
                         t == DataType::Signed64 || t == DataType::UInt8 || t == DataType::UInt16 ||
                         t == DataType::UInt32 || t == DataType::UInt64;
    const bool ok = (t == DataType::Float32 && op != UnaryOperation::BitwiseNot) || (integer && SupportsIntegers(op));
    if (!ok) {
        return Refuse(reason, name + ": data type " + GetDataTypeName(t) + " is not supported (CpuRef: Float32; " +
                                  "the integer types for Neg, Abs, Relu, Clip, Sign and BitwiseNot only)");
    }
    return CheckSameEncoding(name.c_str(), "output", info.m_OutputTensorInfos[0], "input", info.m_InputTensorInfos[0], reason);
}

IWorkloadPtr ElementwiseUnaryRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<ElementwiseUnaryWorkload>(layer.Get<ElementwiseUnaryDescriptor>(),
                                                      info.m_InputTensorInfos[0].GetDataType());
}

}  // namespace trellis::ref
