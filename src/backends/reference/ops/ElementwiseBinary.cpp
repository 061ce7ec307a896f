// CpuRef ElementwiseBinary: Add, Sub, Mul, Div, Pow, Maximum, Minimum, the comparisons, Mod/FMod
// BitShift and BitwiseAnd/Or/Xor, with numpy broadcasting (the kernels/ElementwiseBinary.hpp snippet).
//
// Types: the arithmetic operations, Max/Min, Mod/FMod and the comparisons run on Float32, Float64,
// Float16, BFloat16 and every plain integer type (Signed8/16/32/64, UInt8/16/32/64), each in its own type;
// Boolean for Equal, And, Or and Xor; Mod (the divisor's sign, numpy.mod) on the float and integer
// types; BitShiftLeft /
// BitShiftRight on the integer types (ONNX BitShift; see ShiftLeftOp for the signed rules).
// Float16 and BFloat16 operands are widened exactly to double, the operation runs in double and the
// result is rounded to the 16-bit type (one rounding in all for Add, Sub, Mul, Max, Min and FMod, whose double results
// are exact).
// Integer semantics: Add/Sub/Mul/Pow wrap (two's complement, like numpy); Div truncates toward
// zero (C++/ONNX Runtime) and throws on a zero divisor; Pow with a negative exponent gives the
// truncated real result (0 unless the base is 1 or -1) and throws for base 0. An integer Mod/FMod
// by zero throws. Float Max/Min propagate NaN (numpy maximum/minimum).
#include "RefBroadcast.hpp"
#include "RefConvert.hpp"
#include "RefDataMovement.hpp"
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/ElementwiseBinary.hpp"

#include <trellis/Exceptions.hpp>

#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>

namespace trellis::ref {

namespace {

using namespace kernels;

bool IsComparison(BinaryOperation op) {
    return op == BinaryOperation::Equal || op == BinaryOperation::Less || op == BinaryOperation::Greater ||
           op == BinaryOperation::LessOrEqual || op == BinaryOperation::GreaterOrEqual;
}

// How a kernel reads and writes elements: plain types are computed in their own type; Float16
// is widened to double (exactly) and each result rounded once back to half.
struct HalfElement {
    using Storage = uint16_t;
    using Value = double;
    static double Load(uint16_t v) { return ElementTraits<DataType::Float16>::Read(v); }
    static uint16_t Store(double v) { return ElementTraits<DataType::Float16>::FromDouble(v); }
};

struct BFloat16Element {
    using Storage = uint16_t;
    using Value = double;
    static double Load(uint16_t v) { return ElementTraits<DataType::BFloat16>::Read(v); }
    static uint16_t Store(double v) { return ElementTraits<DataType::BFloat16>::FromDouble(v); }
};

using BinaryFn = void (*)(const BroadcastPlan<2>& plan, const void* a, const void* b, void* out);

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
        case BinaryOperation::FMod: return &RunBinary<E, ModOp<false>>;
        case BinaryOperation::Mod: return &RunBinary<E, ModOp<true>>;
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
        case DataType::BFloat16: return PickForType<BFloat16Element>(op);
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
        try {
            m_Fn(m_Plan, io.m_Inputs[0]->Map(), io.m_Inputs[1]->Map(), io.m_Outputs[0]->Map());
        } catch (const std::domain_error& e) {
            throw RuntimeException("ElementwiseBinary '" + m_Layer + "': " + e.what());
        }
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
                                  " is not supported (CpuRef: Float32, Float64, Float16, BFloat16 and the integer types; Boolean for "
                                  "Equal, And, Or, Xor; Bitwise* and BitShift integers only)");
    }
    const DataType expected = IsComparison(op) ? DataType::Boolean : a.GetDataType();
    return CheckType(name.c_str(), "output", out, expected, reason);
}

kernels::BroadcastPlan<2> ElementwiseBinaryRefParams(const QueueDescriptor&, const WorkloadInfo& info) {
    return MakeBroadcastPlan<2>(info.m_OutputTensorInfos[0].GetShape(),
                                {info.m_InputTensorInfos[0].GetShape(), info.m_InputTensorInfos[1].GetShape()});
}

IWorkloadPtr ElementwiseBinaryRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const BinaryOperation op = layer.Get<ElementwiseBinaryDescriptor>().m_Operation;
    return std::make_unique<ElementwiseBinaryWorkload>(PickKernel(op, info.m_InputTensorInfos[0].GetDataType()),
                                                       ElementwiseBinaryRefParams(layer, info), layer.m_LayerName);
}

}  // namespace trellis::ref
