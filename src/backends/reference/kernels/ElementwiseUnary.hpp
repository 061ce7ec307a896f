// Kernel snippet: ElementwiseUnary. Float32 and Float64 for every operation but Not (Boolean) and BitwiseNot;
// Neg, Abs, Relu, Clip, Sign and BitwiseNot on the integer types; IsNaN/IsInf/IsPosInf/IsNegInf
// map Float32 to Boolean (CpuRef runs them on the other float types outside the snippet). Float results are computed in double and rounded once.
// Semantics: Gelu = 0.5x(1 + erf(x/sqrt 2)); GeluTanh = 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3)));
// HardSigmoid = max(0, min(1, A*x + B)); HardSwish = x * max(0, min(1, x/6 + 1/2));
// Elu = x > 0 ? x : A(e^x - 1); LeakyRelu = x >= 0 ? x : A*x; Clip = min(max(x, A), B).
// Round is half-to-even; Sign(NaN) = NaN; Softplus = log(1 + e^x) (no overflow for large x);
// Selu = B(x > 0 ? x : A(e^x - 1)); Celu = max(0, x) + min(0, A(e^(x/A) - 1)); Mish =
// x tanh(softplus(x)); Swish = x * sigmoid(A*x); BitwiseNot = ~x; ThresholdedRelu = x > A ? x : 0; Shrink = x < -A ? x + B : x > A ? x - B : 0.
// NaN propagates through Relu, Clip and the rest. Integer Neg/Abs wrap at the minimum value
// (like numpy); integer Clip clamps to [ceil(A), floor(B)] saturated to the type's range.
#pragma once

#include "Common.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace trellis::kernels {

/// The operations, in the order of trellis::UnaryOperation.
enum class UnaryOp {
    Abs, Neg, Exp, Log, Sqrt, Reciprocal, Relu, LeakyRelu, Elu, Sigmoid, Tanh, HardSigmoid, HardSwish, Erf, Gelu,
    GeluTanh, Clip, Not, Round, Floor, Ceil, Sign, Softplus, Softsign, Selu, Celu, Mish, ThresholdedRelu, Shrink,
    Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh, IsNaN, IsInf, IsPosInf, IsNegInf, Swish,
    BitwiseNot,
};
inline const char* KernelEnumType(UnaryOp) { return "UnaryOp"; }
inline const char* KernelEnumName(UnaryOp v) {
    switch (v) {
        case UnaryOp::Abs: return "Abs";
        case UnaryOp::Neg: return "Neg";
        case UnaryOp::Exp: return "Exp";
        case UnaryOp::Log: return "Log";
        case UnaryOp::Sqrt: return "Sqrt";
        case UnaryOp::Reciprocal: return "Reciprocal";
        case UnaryOp::Relu: return "Relu";
        case UnaryOp::LeakyRelu: return "LeakyRelu";
        case UnaryOp::Elu: return "Elu";
        case UnaryOp::Sigmoid: return "Sigmoid";
        case UnaryOp::Tanh: return "Tanh";
        case UnaryOp::HardSigmoid: return "HardSigmoid";
        case UnaryOp::HardSwish: return "HardSwish";
        case UnaryOp::Erf: return "Erf";
        case UnaryOp::Gelu: return "Gelu";
        case UnaryOp::GeluTanh: return "GeluTanh";
        case UnaryOp::Clip: return "Clip";
        case UnaryOp::Not: return "Not";
        case UnaryOp::Round: return "Round";
        case UnaryOp::Floor: return "Floor";
        case UnaryOp::Ceil: return "Ceil";
        case UnaryOp::Sign: return "Sign";
        case UnaryOp::Softplus: return "Softplus";
        case UnaryOp::Softsign: return "Softsign";
        case UnaryOp::Selu: return "Selu";
        case UnaryOp::Celu: return "Celu";
        case UnaryOp::Mish: return "Mish";
        case UnaryOp::ThresholdedRelu: return "ThresholdedRelu";
        case UnaryOp::Shrink: return "Shrink";
        case UnaryOp::Sin: return "Sin";
        case UnaryOp::Cos: return "Cos";
        case UnaryOp::Tan: return "Tan";
        case UnaryOp::Asin: return "Asin";
        case UnaryOp::Acos: return "Acos";
        case UnaryOp::Atan: return "Atan";
        case UnaryOp::Sinh: return "Sinh";
        case UnaryOp::Cosh: return "Cosh";
        case UnaryOp::Asinh: return "Asinh";
        case UnaryOp::Acosh: return "Acosh";
        case UnaryOp::Atanh: return "Atanh";
        case UnaryOp::IsNaN: return "IsNaN";
        case UnaryOp::IsInf: return "IsInf";
        case UnaryOp::IsPosInf: return "IsPosInf";
        case UnaryOp::IsNegInf: return "IsNegInf";
        case UnaryOp::Swish: return "Swish";
        case UnaryOp::BitwiseNot: return "BitwiseNot";
    }
    return "";
}

struct UnaryParams {
    UnaryOp op = UnaryOp::Relu;
    double a = 0.0;
    double b = 0.0;
    std::size_t count = 0;
    template <typename F> void Fields(F&& f) const { f(op); f(a); f(b); f(count); }
};

inline bool UnarySupportsIntegers(UnaryOp op) {
    return op == UnaryOp::Neg || op == UnaryOp::Abs || op == UnaryOp::Relu ||
           op == UnaryOp::Clip || op == UnaryOp::Sign || op == UnaryOp::BitwiseNot;
}

inline bool IsClassification(UnaryOp op) {
    return op == UnaryOp::IsNaN || op == UnaryOp::IsInf || op == UnaryOp::IsPosInf ||
           op == UnaryOp::IsNegInf;
}

inline double Softplus(double x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }

// Float32 -> Boolean tests (IsNaN, IsInf, ...).
inline void RunClassify(UnaryOp op, const void* in, void* out, std::size_t n) {
    const float* x = static_cast<const float*>(in);
    uint8_t* y = static_cast<uint8_t*>(out);
    for (std::size_t i = 0; i < n; ++i) {
        const float v = x[i];
        bool r = false;
        switch (op) {
            case UnaryOp::IsNaN: r = std::isnan(v); break;
            case UnaryOp::IsInf: r = std::isinf(v); break;
            case UnaryOp::IsPosInf: r = std::isinf(v) && v > 0; break;
            case UnaryOp::IsNegInf: r = std::isinf(v) && v < 0; break;
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

// Float kernels (T float or double): f maps double to double; the result is rounded to T once.
template <typename T, typename F>
void MapFloat(const void* in, void* out, std::size_t n, F f) {
    Map<T>(in, out, n, [&](T x) { return static_cast<T>(f(static_cast<double>(x))); });
}

template <typename T>
void RunFloat(UnaryOp op, double a, double b, const void* in, void* out, std::size_t n) {
    constexpr double kSqrtHalf = 0.70710678118654752440;
    constexpr double kSqrtTwoOverPi = 0.79788456080286535588;
    switch (op) {
        case UnaryOp::Abs: return MapFloat<T>(in, out, n, [](double x) { return std::fabs(x); });
        case UnaryOp::Neg: return MapFloat<T>(in, out, n, [](double x) { return -x; });
        case UnaryOp::Exp: return MapFloat<T>(in, out, n, [](double x) { return std::exp(x); });
        case UnaryOp::Log: return MapFloat<T>(in, out, n, [](double x) { return std::log(x); });
        case UnaryOp::Sqrt: return MapFloat<T>(in, out, n, [](double x) { return std::sqrt(x); });
        case UnaryOp::Reciprocal: return MapFloat<T>(in, out, n, [](double x) { return 1.0 / x; });
        case UnaryOp::Relu: return MapFloat<T>(in, out, n, [](double x) { return x < 0 ? 0.0 : x; });
        case UnaryOp::LeakyRelu: return MapFloat<T>(in, out, n, [a](double x) { return x < 0 ? a * x : x; });
        case UnaryOp::Elu: return MapFloat<T>(in, out, n, [a](double x) { return x > 0 ? x : a * std::expm1(x); });
        case UnaryOp::Sigmoid:
            // Written so that exp never overflows: for x < 0 use e^x / (1 + e^x).
            return MapFloat<T>(in, out, n, [](double x) {
                if (x >= 0) return 1.0 / (1.0 + std::exp(-x));
                const double e = std::exp(x);
                return e / (1.0 + e);
            });
        case UnaryOp::Tanh: return MapFloat<T>(in, out, n, [](double x) { return std::tanh(x); });
        case UnaryOp::HardSigmoid:
            return MapFloat<T>(in, out, n, [a, b](double x) {
                const double v = a * x + b;
                return std::isnan(v) ? v : std::max(0.0, std::min(1.0, v));
            });
        case UnaryOp::HardSwish:
            return MapFloat<T>(in, out, n, [](double x) {
                const double v = x / 6.0 + 0.5;
                return std::isnan(v) ? v : x * std::max(0.0, std::min(1.0, v));
            });
        case UnaryOp::Erf: return MapFloat<T>(in, out, n, [](double x) { return std::erf(x); });
        case UnaryOp::Gelu: return MapFloat<T>(in, out, n, [](double x) { return 0.5 * x * (1.0 + std::erf(x * kSqrtHalf)); });
        case UnaryOp::GeluTanh:
            return MapFloat<T>(in, out, n, [](double x) {
                return 0.5 * x * (1.0 + std::tanh(kSqrtTwoOverPi * (x + 0.044715 * x * x * x)));
            });
        case UnaryOp::Clip:
            return MapFloat<T>(in, out, n, [a, b](double x) {
                if (std::isnan(x)) return x;
                return std::min(std::max(x, a), b);
            });
        case UnaryOp::Round: return MapFloat<T>(in, out, n, [](double x) { return std::nearbyint(x); });
        case UnaryOp::Floor: return MapFloat<T>(in, out, n, [](double x) { return std::floor(x); });
        case UnaryOp::Ceil: return MapFloat<T>(in, out, n, [](double x) { return std::ceil(x); });
        case UnaryOp::Sign:
            return MapFloat<T>(in, out, n, [](double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : x); });
        case UnaryOp::Softplus: return MapFloat<T>(in, out, n, [](double x) { return Softplus(x); });
        case UnaryOp::Softsign: return MapFloat<T>(in, out, n, [](double x) { return x / (1.0 + std::fabs(x)); });
        case UnaryOp::Selu:
            return MapFloat<T>(in, out, n, [a, b](double x) { return b * (x > 0 ? x : a * std::expm1(x)); });
        case UnaryOp::Celu:
            return MapFloat<T>(in, out, n, [a](double x) {
                return std::max(0.0, x) + std::min(0.0, a * std::expm1(x / a));
            });
        case UnaryOp::Mish: return MapFloat<T>(in, out, n, [](double x) { return x * std::tanh(Softplus(x)); });
        case UnaryOp::ThresholdedRelu: return MapFloat<T>(in, out, n, [a](double x) { return x > a ? x : 0.0; });
        case UnaryOp::Shrink:
            return MapFloat<T>(in, out, n, [a, b](double x) { return x < -a ? x + b : (x > a ? x - b : 0.0); });
        case UnaryOp::Sin: return MapFloat<T>(in, out, n, [](double x) { return std::sin(x); });
        case UnaryOp::Cos: return MapFloat<T>(in, out, n, [](double x) { return std::cos(x); });
        case UnaryOp::Tan: return MapFloat<T>(in, out, n, [](double x) { return std::tan(x); });
        case UnaryOp::Asin: return MapFloat<T>(in, out, n, [](double x) { return std::asin(x); });
        case UnaryOp::Acos: return MapFloat<T>(in, out, n, [](double x) { return std::acos(x); });
        case UnaryOp::Atan: return MapFloat<T>(in, out, n, [](double x) { return std::atan(x); });
        case UnaryOp::Sinh: return MapFloat<T>(in, out, n, [](double x) { return std::sinh(x); });
        case UnaryOp::Cosh: return MapFloat<T>(in, out, n, [](double x) { return std::cosh(x); });
        case UnaryOp::Asinh: return MapFloat<T>(in, out, n, [](double x) { return std::asinh(x); });
        case UnaryOp::Acosh: return MapFloat<T>(in, out, n, [](double x) { return std::acosh(x); });
        case UnaryOp::Atanh: return MapFloat<T>(in, out, n, [](double x) { return std::atanh(x); });
        case UnaryOp::Swish:
            return MapFloat<T>(in, out, n, [a](double x) {
                const double z = a * x;  // x * sigmoid(z), exp never overflowing
                if (z >= 0) return x / (1.0 + std::exp(-z));
                const double e = std::exp(z);
                return x * e / (1.0 + e);
            });
        case UnaryOp::BitwiseNot:
        case UnaryOp::Not:
        case UnaryOp::IsNaN:
        case UnaryOp::IsInf:
        case UnaryOp::IsPosInf:
        case UnaryOp::IsNegInf:
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

template <typename T>
void RunInteger(UnaryOp op, double a, double b, const void* in, void* out, std::size_t n) {
    using U = std::make_unsigned_t<T>;
    switch (op) {
        case UnaryOp::Neg: return Map<T>(in, out, n, [](T x) { return T(U(0) - U(x)); });
        case UnaryOp::Abs: return Map<T>(in, out, n, [](T x) { return IsNegative(x) ? T(U(0) - U(x)) : x; });
        case UnaryOp::Relu: return Map<T>(in, out, n, [](T x) { return IsNegative(x) ? T(0) : x; });
        case UnaryOp::Clip: {
            // Bounds arrive as floats: the integers x with A <= x <= B are those in
            // [ceil(A), floor(B)]; an infinite or out-of-range bound leaves that side open.
            const T lo = ElementBound<T>(std::ceil(a));
            const T hi = ElementBound<T>(std::floor(b));
            return Map<T>(in, out, n, [lo, hi](T x) { return x < lo ? lo : (x > hi ? hi : x); });
        }
        case UnaryOp::Sign: return Map<T>(in, out, n, [](T x) { return T(x > 0 ? 1 : (IsNegative(x) ? -1 : 0)); });
        case UnaryOp::BitwiseNot: return Map<T>(in, out, n, [](T x) { return T(~x); });
        default: return;  // refused by the support check
    }
}

/// `count` elements of type T (Boolean for Not; Float32 in for the IsNaN family, Boolean out).
template <typename T>
void ElementwiseUnary(const UnaryParams& p, const void* in, void* out) {
    if (p.op == UnaryOp::Not) {
        // Booleans are 0/1 bytes; any non-zero byte counts as true.
        return Map<uint8_t>(in, out, p.count, [](uint8_t x) { return uint8_t(x == 0 ? 1 : 0); });
    }
    if constexpr (std::is_floating_point_v<T>) {
        if (IsClassification(p.op)) return RunClassify(p.op, in, out, p.count);
        return RunFloat<T>(p.op, p.a, p.b, in, out, p.count);
    } else {
        return RunInteger<T>(p.op, p.a, p.b, in, out, p.count);
    }
}

}  // namespace trellis::kernels
