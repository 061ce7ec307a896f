// QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear: validation and shape inference.
//
// The scale (input 1) is Float32: one value (per tensor; m_Axis is then not used) or a 1-D tensor
// with one value per index of x's dim m_Axis (per axis; m_Axis is normalized to [0, rank)). The
// optional zero point (input 2) has the scale's shape (or holds one value when the scale does).
//  - QuantizeLinear: x Float32 or Signed32; the output has x's shape and the zero point's type
//    (UInt8 or Signed8), or m_DataType without a zero point.
//  - DequantizeLinear: x UInt8, Signed8 or Signed32 (whose zero point, if given, must be 0 - a
//    run-time matter); the zero point has x's type; the output is Float32 of x's shape.
//  - DynamicQuantizeLinear: x Float32; outputs y (UInt8, x's shape), y_scale (Float32 scalar) and
//    y_zero_point (UInt8 scalar).
#include "core/InferContext.hpp"
#include "core/ops/DataOpsUtil.hpp"

namespace trellis::core {

namespace {

// Checks the scale and zero point against x; normalizes the axis of a per-axis scale.
void CheckQuantizationParameters(InferContext& ctx, const TensorInfo& x) {
    auto& d = ctx.Desc<QuantizeLinearDescriptor>();
    const TensorInfo& scale = ctx.Input(1);
    ctx.ExpectType(1, DataType::Float32);
    if (scale.GetNumDimensions() > 1) {
        ctx.Fail("input 1 (scale) " + scale.GetShape().ToString() + " must be a scalar or 1-D");
    }
    if (scale.GetNumElements() != 1) {
        if (scale.GetNumDimensions() != 1) ctx.Fail("input 1 (scale) must hold one value or be 1-D");
        const unsigned int axis = ctx.NormalizeAxis(d.m_Axis, x.GetNumDimensions());
        d.m_Axis = axis;
        if (scale.GetShape()[0] != x.GetShape()[axis]) {
            ctx.Fail("input 1 (scale) has " + std::to_string(scale.GetShape()[0]) + " values; per-axis quantization along axis " +
                     std::to_string(axis) + " of x " + x.GetShape().ToString() + " needs " +
                     std::to_string(x.GetShape()[axis]));
        }
    }
    // One value in any shape ([], [1]) is per tensor on both sides.
    const bool bothOne = ctx.HasInput(2) && ctx.Input(2).GetNumElements() == 1 && scale.GetNumElements() == 1;
    if (ctx.HasInput(2) && !bothOne && ctx.Input(2).GetShape() != scale.GetShape()) {
        ctx.Fail("input 2 (zero point) " + ctx.Input(2).GetShape().ToString() + " must have the scale's shape " +
                 scale.GetShape().ToString());
    }
}

}  // namespace

std::vector<TensorInfo> QuantizeLinearInfer(InferContext& ctx) {
    auto& d = ctx.Desc<QuantizeLinearDescriptor>();
    const TensorInfo& x = ctx.Input(0);
    ctx.ExpectTypeIn(0, {DataType::Float32, DataType::Signed32});
    CheckQuantizationParameters(ctx, x);
    if (ctx.HasInput(2)) {
        ctx.ExpectTypeIn(2, {DataType::UInt8, DataType::Signed8});
        d.m_DataType = ctx.Input(2).GetDataType();
    } else if (d.m_DataType != DataType::UInt8 && d.m_DataType != DataType::Signed8) {
        ctx.Fail(std::string("output type ") + GetDataTypeName(d.m_DataType) + " is not UInt8 or Signed8");
    }
    return {TensorInfo(x.GetShape(), d.m_DataType)};
}

std::vector<TensorInfo> DequantizeLinearInfer(InferContext& ctx) {
    const TensorInfo& x = ctx.Input(0);
    ctx.ExpectTypeIn(0, {DataType::UInt8, DataType::Signed8, DataType::Signed32});
    CheckQuantizationParameters(ctx, x);
    if (ctx.HasInput(2)) ctx.ExpectType(2, x.GetDataType());
    return {TensorInfo(x.GetShape(), DataType::Float32)};
}

std::vector<TensorInfo> DynamicQuantizeLinearInfer(InferContext& ctx) {
    ctx.ExpectType(0, DataType::Float32);
    const TensorShape scalar(std::vector<unsigned int>{});
    return {TensorInfo(ctx.Input(0).GetShape(), DataType::UInt8), TensorInfo(scalar, DataType::Float32),
            TensorInfo(scalar, DataType::UInt8)};
}

}  // namespace trellis::core
