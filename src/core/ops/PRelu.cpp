// PRelu: validation and shape inference. The slope broadcasts one way, onto X (ONNX
// "unidirectional broadcasting"), so the output has X's shape.
#include "core/InferContext.hpp"
#include "core/ops/DataOpsUtil.hpp"

namespace trellis::core {

std::vector<TensorInfo> PReluInfer(InferContext& ctx) {
    const TensorInfo& x = ctx.Input(0);
    const TensorInfo& slope = ctx.Input(1);
    if (x.GetDataType() != slope.GetDataType()) {
        ctx.Fail(std::string("X is ") + GetDataTypeName(x.GetDataType()) + " and slope is " +
                 GetDataTypeName(slope.GetDataType()) + "; both must have the same type");
    }
    const std::optional<TensorShape> b = Broadcast(x.GetShape(), slope.GetShape());
    if (!b || *b != x.GetShape()) {
        ctx.Fail("slope shape " + slope.GetShape().ToString() + " does not broadcast onto X shape " +
                 x.GetShape().ToString() + " (the slope must broadcast to X without changing X's shape)");
    }
    return {WithShape(x, x.GetShape())};
}

}  // namespace trellis::core
