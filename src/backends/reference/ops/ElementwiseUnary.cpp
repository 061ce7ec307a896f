// CpuRef ElementwiseUnary.
//
// Supports Float32 for every operation, and Signed32/Signed64 for Neg, Abs, Relu and Clip.
// Float results are computed in double and rounded once, so this kernel is a tight reference.
// Semantics: Gelu = 0.5x(1 + erf(x/sqrt 2)); GeluTanh = 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3)));
// HardSigmoid = max(0, min(1, A*x + B)); HardSwish = x * max(0, min(1, x/6 + 1/2));
// Elu = x > 0 ? x : A(e^x - 1); LeakyRelu = x >= 0 ? x : A*x; Clip = min(max(x, A), B).
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
           op == UnaryOperation::Clip;
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
void RunInteger(UnaryOperation op, double a, double b, const void* in, void* out, std::size_t n) {
    using U = std::make_unsigned_t<T>;
    switch (op) {
        case UnaryOperation::Neg: return Map<T>(in, out, n, [](T x) { return T(U(0) - U(x)); });
        case UnaryOperation::Abs: return Map<T>(in, out, n, [](T x) { return x < 0 ? T(U(0) - U(x)) : x; });
        case UnaryOperation::Relu: return Map<T>(in, out, n, [](T x) { return x < 0 ? T(0) : x; });
        case UnaryOperation::Clip: {
            // Bounds arrive as floats: the integers x with A <= x <= B are those in
            // [ceil(A), floor(B)]; an infinite or out-of-range bound leaves that side open.
            const T lo = ElementBound<T>(std::ceil(a));
            const T hi = ElementBound<T>(std::floor(b));
            return Map<T>(in, out, n, [lo, hi](T x) { return x < lo ? lo : (x > hi ? hi : x); });
        }
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
        switch (m_Type) {
            case DataType::Float32: return RunFloat(m_Op, m_A, m_B, in, out, n);
            case DataType::Signed32: return RunInteger<int32_t>(m_Op, m_A, m_B, in, out, n);
            case DataType::Signed64: return RunInteger<int64_t>(m_Op, m_A, m_B, in, out, n);
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
    const bool ok = t == DataType::Float32 ||
                    ((t == DataType::Signed32 || t == DataType::Signed64) && SupportsIntegers(op));
    if (!ok) {
        return Refuse(reason, name + ": data type " + GetDataTypeName(t) + " is not supported (CpuRef: Float32; " +
                                  "Signed32/Signed64 for Neg, Abs, Relu and Clip only)");
    }
    return CheckSameEncoding(name.c_str(), "output", info.m_OutputTensorInfos[0], "input", info.m_InputTensorInfos[0], reason);
}

IWorkloadPtr ElementwiseUnaryRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<ElementwiseUnaryWorkload>(layer.Get<ElementwiseUnaryDescriptor>(),
                                                      info.m_InputTensorInfos[0].GetDataType());
}

}  // namespace trellis::ref
