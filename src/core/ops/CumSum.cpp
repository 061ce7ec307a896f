// CumSum: validation and shape inference. The axis comes from the descriptor or input 1 (one
// Signed32/Signed64 value, as ONNX gives it). A constant input 1 is folded into m_Axis, which is
// normalized to [0, rank); a computed one stays a runtime input the backend reads and checks
// (the axis moves no dims). The output has the input's shape and type.
#include "core/InferContext.hpp"
#include "core/ops/DataOpsUtil.hpp"

namespace trellis::core {

std::vector<TensorInfo> CumSumInfer(InferContext& ctx) {
    auto& d = ctx.Desc<CumSumDescriptor>();
    const TensorInfo& x = ctx.Input(0);
    ctx.ExpectTypeIn(0, {DataType::Float32, DataType::Float16, DataType::BFloat16, DataType::Float64,
                         DataType::Signed32, DataType::Signed64});
    if (x.GetNumDimensions() == 0) ctx.Fail("the input is a scalar; CumSum needs rank 1 or more");
    if (ctx.GetNumInputs() > 1) {
        const TensorInfo& axis = ctx.Input(1);
        if (axis.GetNumElements() != 1) {
            ctx.Fail("axis " + axis.GetShape().ToString() + " must hold one value, has " + std::to_string(axis.GetNumElements()));
        }
        ctx.ExpectTypeIn(1, {DataType::Signed32, DataType::Signed64});
        if (ctx.Constant(1) == nullptr) return {WithShape(x, x.GetShape())};
        d.m_Axis = ctx.GetParamInts(1, "axis")[0];
        ctx.AbsorbInput(1);
    }
    d.m_Axis = ctx.NormalizeAxis(d.m_Axis, x.GetNumDimensions());
    return {WithShape(x, x.GetShape())};
}

}  // namespace trellis::core
