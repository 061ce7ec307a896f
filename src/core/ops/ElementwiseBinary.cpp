// ElementwiseBinary: validation and shape inference.
// Both inputs must hold the same type; shapes broadcast both ways (numpy rules). Comparisons
// produce Boolean; And/Or/Xor take and produce Boolean; every other operation gives the inputs'
// type. BitShiftLeft/BitShiftRight take unsigned integers.
#include "core/InferContext.hpp"
#include "core/ops/DataOpsUtil.hpp"

namespace trellis::core {

namespace {
bool IsComparison(BinaryOperation op) {
    switch (op) {
        case BinaryOperation::Equal:
        case BinaryOperation::Less:
        case BinaryOperation::Greater:
        case BinaryOperation::LessOrEqual:
        case BinaryOperation::GreaterOrEqual:
            return true;
        default:
            return false;
    }
}
}  // namespace

std::vector<TensorInfo> ElementwiseBinaryInfer(InferContext& ctx) {
    const BinaryOperation op = ctx.Desc<ElementwiseBinaryDescriptor>().m_Operation;
    const TensorInfo& a = ctx.Input(0);
    const TensorInfo& b = ctx.Input(1);
    if (a.GetDataType() != b.GetDataType()) {
        ctx.Fail(std::string(GetBinaryOperationName(op)) + ": input A is " + GetDataTypeName(a.GetDataType()) +
                 " and input B is " + GetDataTypeName(b.GetDataType()) + "; both inputs must have the same type");
    }
    const bool logical = op == BinaryOperation::And || op == BinaryOperation::Or || op == BinaryOperation::Xor;
    if (logical && a.GetDataType() != DataType::Boolean) {
        ctx.Fail(std::string(GetBinaryOperationName(op)) + ": inputs are " + GetDataTypeName(a.GetDataType()) +
                 "; " + GetBinaryOperationName(op) + " takes Boolean");
    }
    const bool shift = op == BinaryOperation::BitShiftLeft || op == BinaryOperation::BitShiftRight;
    const DataType t = a.GetDataType();
    if (shift && t != DataType::UInt8 && t != DataType::UInt16 && t != DataType::UInt32 && t != DataType::UInt64) {
        ctx.Fail(std::string(GetBinaryOperationName(op)) + ": inputs are " + GetDataTypeName(t) +
                 "; bit shifts take unsigned integers (UInt8, UInt16, UInt32, UInt64)");
    }
    const TensorShape shape = ctx.BroadcastShapes(a.GetShape(), b.GetShape());
    if (IsComparison(op) || logical) return {TensorInfo(shape, DataType::Boolean)};
    return {WithShape(a, shape)};
}

}  // namespace trellis::core
