// Where: validation and shape inference. The condition is Boolean, X and Y share a type, and all
// three shapes broadcast together (numpy rules) to the output's shape.
#include "core/InferContext.hpp"
#include "core/ops/DataOpsUtil.hpp"

namespace trellis::core {

std::vector<TensorInfo> WhereInfer(InferContext& ctx) {
    const TensorInfo& cond = ctx.Input(0);
    const TensorInfo& x = ctx.Input(1);
    const TensorInfo& y = ctx.Input(2);
    if (cond.GetDataType() != DataType::Boolean) {
        ctx.Fail(std::string("condition (input 0) is ") + GetDataTypeName(cond.GetDataType()) +
                 "; it must be Boolean");
    }
    if (x.GetDataType() != y.GetDataType()) {
        ctx.Fail(std::string("X (input 1) is ") + GetDataTypeName(x.GetDataType()) + " and Y (input 2) is " +
                 GetDataTypeName(y.GetDataType()) + "; both must have the same type");
    }
    const TensorShape shape = ctx.BroadcastShapes(ctx.BroadcastShapes(cond.GetShape(), x.GetShape()), y.GetShape());
    return {WithShape(x, shape)};
}

}  // namespace trellis::core
