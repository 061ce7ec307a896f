// CpuRef ElementwiseUnary; the kernel is the snippet kernels/ElementwiseUnary.hpp.
//
// Supports Float32, Float64, Float16 and BFloat16 for every operation but Not and BitwiseNot (the
// 16-bit types widened exactly to double, the result rounded once), and every plain integer type
// (Signed8/16/32/64, UInt8/16/32/64) for Neg, Abs, Relu, Clip, Sign and BitwiseNot. Not maps
// Boolean to Boolean; IsNaN/IsInf/IsPosInf/IsNegInf map Float32 (the snippet) and Float64,
// Float16, BFloat16 (ClassifyWorkload, outside the snippet) to Boolean. Swish = x * sigmoid(A*x).
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
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/ElementwiseUnary.hpp"
#include "ops/RefFloatIo.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

namespace trellis::ref {

namespace {

using kernels::UnaryOp;
using kernels::IsClassification;

bool IsClassification(UnaryOperation op) { return IsClassification(static_cast<UnaryOp>(op)); }
bool SupportsIntegers(UnaryOperation op) { return kernels::UnarySupportsIntegers(static_cast<UnaryOp>(op)); }

// kernels::UnaryOp lists the operations in trellis::UnaryOperation's order.
static_assert(static_cast<int>(UnaryOp::Clip) == static_cast<int>(UnaryOperation::Clip) &&
              static_cast<int>(UnaryOp::IsNegInf) == static_cast<int>(UnaryOperation::IsNegInf) &&
              static_cast<int>(UnaryOp::Swish) == static_cast<int>(UnaryOperation::Swish) &&
              static_cast<int>(UnaryOp::BitwiseNot) == static_cast<int>(UnaryOperation::BitwiseNot));

using UnaryFn = void (*)(const kernels::UnaryParams&, const void*, void*);

UnaryFn PickKernel(DataType type) {
    switch (type) {
        case DataType::Float32: return &kernels::ElementwiseUnary<float>;
        case DataType::Float64: return &kernels::ElementwiseUnary<double>;
        case DataType::Boolean: return &kernels::ElementwiseUnary<uint8_t>;
        case DataType::Signed8: return &kernels::ElementwiseUnary<int8_t>;
        case DataType::Signed16: return &kernels::ElementwiseUnary<int16_t>;
        case DataType::Signed32: return &kernels::ElementwiseUnary<int32_t>;
        case DataType::Signed64: return &kernels::ElementwiseUnary<int64_t>;
        case DataType::UInt8: return &kernels::ElementwiseUnary<uint8_t>;
        case DataType::UInt16: return &kernels::ElementwiseUnary<uint16_t>;
        case DataType::UInt32: return &kernels::ElementwiseUnary<uint32_t>;
        case DataType::UInt64: return &kernels::ElementwiseUnary<uint64_t>;
        default: return nullptr;  // refused by the support check
    }
}

class ElementwiseUnaryWorkload final : public IWorkload {
public:
    ElementwiseUnaryWorkload(kernels::UnaryParams p, UnaryFn fn) : m_P(p), m_Fn(fn) {}
    void Execute(const WorkloadIo& io) const override { m_Fn(m_P, io.m_Inputs[0]->Map(), io.m_Outputs[0]->Map()); }
private:
    const kernels::UnaryParams m_P;
    UnaryFn m_Fn;
};

// Float16 and BFloat16: each value widened exactly to double, the double kernel, one rounding back.
class HalfUnaryWorkload final : public IWorkload {
public:
    HalfUnaryWorkload(kernels::UnaryParams p, DataType type) : m_P(p), m_Type(type) {}
    void Execute(const WorkloadIo& io) const override {
        const std::vector<double> x = floatio::Read(m_Type, io.m_Inputs[0]->Map(), m_P.count);
        std::vector<double> y(m_P.count);
        kernels::ElementwiseUnary<double>(m_P, x.data(), y.data());
        floatio::WriteAll(m_Type, y, io.m_Outputs[0]->Map());
    }
private:
    const kernels::UnaryParams m_P;
    const DataType m_Type;
};

// IsNaN/IsInf/IsPosInf/IsNegInf on Float64, Float16 and BFloat16 (Float32 runs the snippet):
// each value widened exactly to double (NaN and the infinities stay what they are).
class ClassifyWorkload final : public IWorkload {
public:
    ClassifyWorkload(UnaryOperation op, TensorInfo in) : m_Op(op), m_In(std::move(in)) {}
    void Execute(const WorkloadIo& io) const override {
        const ConstTensor x(m_In, io.m_Inputs[0]->Map());
        uint8_t* y = static_cast<uint8_t*>(io.m_Outputs[0]->Map());
        for (std::size_t i = 0; i < x.GetNumElements(); ++i) {
            const double v = GetElementAsDouble(x, i);
            bool r = false;
            switch (m_Op) {
                case UnaryOperation::IsNaN: r = std::isnan(v); break;
                case UnaryOperation::IsInf: r = std::isinf(v); break;
                case UnaryOperation::IsPosInf: r = std::isinf(v) && v > 0; break;
                case UnaryOperation::IsNegInf: r = std::isinf(v) && v < 0; break;
                default: break;
            }
            y[i] = r ? 1 : 0;
        }
    }
private:
    const UnaryOperation m_Op;
    const TensorInfo m_In;
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
    const bool ok = (floatio::IsFloatType(t) && op != UnaryOperation::BitwiseNot) || (integer && SupportsIntegers(op));
    if (!ok) {
        return Refuse(reason, name + ": data type " + GetDataTypeName(t) + " is not supported (CpuRef: Float32, Float64, " +
                                  "Float16, BFloat16; " +
                                  "the integer types for Neg, Abs, Relu, Clip, Sign and BitwiseNot only)");
    }
    return CheckSameEncoding(name.c_str(), "output", info.m_OutputTensorInfos[0], "input", info.m_InputTensorInfos[0], reason);
}

kernels::UnaryParams ElementwiseUnaryRefParams(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const auto& d = layer.Get<ElementwiseUnaryDescriptor>();
    return {static_cast<UnaryOp>(d.m_Operation), d.m_A, d.m_B, info.m_OutputTensorInfos[0].GetNumElements()};
}

IWorkloadPtr ElementwiseUnaryRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const UnaryOperation op = layer.Get<ElementwiseUnaryDescriptor>().m_Operation;
    if (IsClassification(op) && info.m_InputTensorInfos[0].GetDataType() != DataType::Float32) {
        return std::make_unique<ClassifyWorkload>(op, info.m_InputTensorInfos[0]);
    }
    if (floatio::IsHalfType(info.m_InputTensorInfos[0].GetDataType())) {
        return std::make_unique<HalfUnaryWorkload>(ElementwiseUnaryRefParams(layer, info),
                                                   info.m_InputTensorInfos[0].GetDataType());
    }
    return std::make_unique<ElementwiseUnaryWorkload>(ElementwiseUnaryRefParams(layer, info),
                                                      PickKernel(info.m_InputTensorInfos[0].GetDataType()));
}

}  // namespace trellis::ref
