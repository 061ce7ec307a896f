// Expand: shape inference. The output is the numpy broadcast of the input's shape and m_Shape
// (ONNX Expand broadcasts both ways: a 1 in m_Shape keeps the input's dim). Resolves m_Shape,
// from the descriptor or parameter input 1, to the exact output dims.
#include "core/InferContext.hpp"
#include "core/ops/DataOpsUtil.hpp"

namespace trellis::core {

std::vector<TensorInfo> ExpandInfer(InferContext& ctx) {
    ExpandDescriptor& d = ctx.Desc<ExpandDescriptor>();
    ReadParamInts(ctx, 1, d.m_Shape, "shape");
    const TensorInfo& in = ctx.Input(0);
    const TensorShape shape = ctx.BroadcastShapes(in.GetShape(), DimsToShape(ctx, d.m_Shape, "shape"));
    d.m_Shape = ShapeToDims(shape);
    return {WithShape(in, shape)};
}

}  // namespace trellis::core
