// ConstantOfShape: shape inference. Resolves m_Shape from the optional parameter input 0 (a 1-D
// integer tensor); the output is m_Shape filled with m_Value, of type m_DataType.
#include "core/InferContext.hpp"
#include "core/ops/DataOpsUtil.hpp"

namespace trellis::core {

std::vector<TensorInfo> ConstantOfShapeInfer(InferContext& ctx) {
    ConstantOfShapeDescriptor& d = ctx.Desc<ConstantOfShapeDescriptor>();
    if (ctx.HasInput(0) && ctx.Input(0).GetNumDimensions() != 1) {
        ctx.Fail("shape input has shape " + ctx.Input(0).GetShape().ToString() + "; it must be 1-D");
    }
    ReadParamInts(ctx, 0, d.m_Shape, "shape");
    const TensorShape shape = DimsToShape(ctx, d.m_Shape, "shape");
    CheckedProduct(ctx, d.m_Shape, "shape");
    return {TensorInfo(shape, d.m_DataType)};
}

}  // namespace trellis::core
