// ElementwiseBinary: validation and shape inference.
// Both inputs must hold the same type; shapes broadcast both ways (numpy rules). Comparisons
// produce Boolean; And/Or/Xor take and produce Boolean; every other operation gives the inputs'
// type. BitShiftLeft/BitShiftRight and the Bitwise operations take integers.
#include "core/InferContext.hpp"
#include "core/ops/DataOpsUtil.hpp"

namespace trellis::core {

namespace {
bool IsIntegerType(DataType t) {
    switch (t) {
        case DataType::Signed8: case DataType::Signed16: case DataType::Signed32: case DataType::Signed64:
        case DataType::UInt8: case DataType::UInt16: case DataType::UInt32: case DataType::UInt64:
            return true;
        default:
            return false;
    }
}
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
    if (shift && !IsIntegerType(t)) {
        ctx.Fail(std::string(GetBinaryOperationName(op)) + ": inputs are " + GetDataTypeName(t) +
                 "; bit shifts take integer types (signed ones from ONNX opset 28)");
    }
    const bool bitwise = op == BinaryOperation::BitwiseAnd || op == BinaryOperation::BitwiseOr ||
                         op == BinaryOperation::BitwiseXor;
    if (bitwise && !IsIntegerType(t)) {
        ctx.Fail(std::string(GetBinaryOperationName(op)) + ": inputs are " + GetDataTypeName(t) +
                 "; bitwise operations take integer types");
    }
    const TensorShape shape = ctx.BroadcastShapes(a.GetShape(), b.GetShape());
    if (IsComparison(op) || logical) return {TensorInfo(shape, DataType::Boolean)};
    return {WithShape(a, shape)};
}

}  // namespace trellis::core
