// ElementwiseUnary: validation and shape inference. The output has the input's shape and type
// (Boolean for IsNaN/IsInf/IsPosInf/IsNegInf, whose input must be a float type; Not takes and
// gives Boolean); the operation's parameters (m_A, m_B) need no resolving.
#include "core/InferContext.hpp"
#include "core/ops/DataOpsUtil.hpp"

#include <cmath>

namespace trellis::core {

std::vector<TensorInfo> ElementwiseUnaryInfer(InferContext& ctx) {
    const ElementwiseUnaryDescriptor& d = ctx.Desc<ElementwiseUnaryDescriptor>();
    // A NaN bound would make every output NaN or depend on comparison order; no model means that.
    if (d.m_Operation == UnaryOperation::Clip && (std::isnan(d.m_A) || std::isnan(d.m_B))) {
        ctx.Fail("Clip: bounds [" + std::to_string(d.m_A) + ", " + std::to_string(d.m_B) + "] contain NaN");
    }
    const TensorInfo& in = ctx.Input(0);
    const char* name = GetUnaryOperationName(d.m_Operation);
    switch (d.m_Operation) {
        case UnaryOperation::Not:
            if (in.GetDataType() != DataType::Boolean) {
                ctx.Fail(std::string("Not: input is ") + GetDataTypeName(in.GetDataType()) + "; Not takes Boolean");
            }
            break;
        case UnaryOperation::IsNaN:
        case UnaryOperation::IsInf:
        case UnaryOperation::IsPosInf:
        case UnaryOperation::IsNegInf:
            if (in.GetDataType() != DataType::Float32 && in.GetDataType() != DataType::Float16 &&
                in.GetDataType() != DataType::BFloat16 && in.GetDataType() != DataType::Float64) {
                ctx.Fail(std::string(name) + ": input is " + GetDataTypeName(in.GetDataType()) +
                         "; it must be a floating-point type");
            }
            return {TensorInfo(in.GetShape(), DataType::Boolean)};
        case UnaryOperation::BitwiseNot:
            switch (in.GetDataType()) {
                case DataType::Signed8: case DataType::Signed16: case DataType::Signed32: case DataType::Signed64:
                case DataType::UInt8: case DataType::UInt16: case DataType::UInt32: case DataType::UInt64: break;
                default:
                    ctx.Fail(std::string("BitwiseNot: input is ") + GetDataTypeName(in.GetDataType()) +
                             "; it must be an integer type");
            }
            break;
        case UnaryOperation::Celu:
            if (d.m_A == 0.0f) ctx.Fail("Celu: alpha is 0; Celu divides by alpha");
            break;
        default: break;
    }
    return {WithShape(in, in.GetShape())};
}

}  // namespace trellis::core
