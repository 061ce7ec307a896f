// RmsNormalization (ONNX RMSNormalization, opset 23): validation and shape inference.
//
// Normalizes X over dims [axis, rank) by the root mean square; scale is multiplied with numpy
// broadcasting (the ONNX function body), so it must broadcast unidirectionally to X's shape.
// m_Axis is normalized to [0, rank). The output has X's shape and type.
#include "core/InferContext.hpp"

namespace trellis::core {

std::vector<TensorInfo> RmsNormalizationInfer(InferContext& ctx) {
    auto& d = ctx.Desc<RmsNormalizationDescriptor>();
    const TensorInfo& x = ctx.Input(0);
    ctx.ExpectTypeIn(0, {DataType::Float32, DataType::Float16, DataType::BFloat16, DataType::Float64});
    d.m_Axis = static_cast<int>(ctx.NormalizeAxis(d.m_Axis, x.GetNumDimensions()));
    if (!(d.m_Eps >= 0.0f)) ctx.Fail("epsilon=" + std::to_string(d.m_Eps) + " must not be negative");
    ctx.ExpectType(1, x.GetDataType());
    const TensorShape& s = ctx.Input(1).GetShape();
    const auto b = Broadcast(x.GetShape(), s);
    if (!b || *b != x.GetShape()) {
        ctx.Fail("scale " + s.ToString() + " must broadcast unidirectionally to X " + x.GetShape().ToString());
    }
    return {TensorInfo(x.GetShape(), x.GetDataType())};
}

}  // namespace trellis::core
