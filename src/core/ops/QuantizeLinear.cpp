// QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear: validation and shape inference.
//
// The scale (input 1) is Float32, Float16 or BFloat16: one value (per tensor; m_Axis is then not
// used), a 1-D tensor with one value per index of x's dim m_Axis (per axis), or with m_BlockSize > 0
// a tensor of x's rank whose dim m_Axis is ceil(x's / m_BlockSize) and whose other dims are x's
// (blocked); m_Axis is normalized to [0, rank). The optional zero point (input 2) has the scale's
// shape (or holds one value when the scale does).
//  - QuantizeLinear: x Float32, Float16, BFloat16 or Signed32; the output has x's shape and the
//    zero point's type, or m_DataType without one: UInt8, Signed8, UInt16, Signed16, the 4- and
//    2-bit integers, the float8 types but E8M0, Float4E2M1.
//  - DequantizeLinear: x of one of those types or Signed32 (whose zero point, if given, must be 0 -
//    a run-time matter); the zero point has x's type; the output has x's shape and
//    m_OutputDataType, or the scale's type.
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
    ctx.ExpectTypeIn(1, {DataType::Float32, DataType::Float16, DataType::BFloat16});
    if (d.m_BlockSize < 0) ctx.Fail("block_size=" + std::to_string(d.m_BlockSize) + " must not be negative");
    if (d.m_BlockSize > 0) {
        const unsigned int axis = ctx.NormalizeAxis(d.m_Axis, x.GetNumDimensions());
        d.m_Axis = axis;
        bool ok = scale.GetNumDimensions() == x.GetNumDimensions();
        for (unsigned int i = 0; ok && i < x.GetNumDimensions(); ++i) {
            const unsigned int want = i == axis ? static_cast<unsigned int>((x.GetShape()[i] + d.m_BlockSize - 1) / d.m_BlockSize)
                                                : x.GetShape()[i];
            ok = scale.GetShape()[i] == want;
        }
        if (!ok) {
            ctx.Fail("input 1 (scale) " + scale.GetShape().ToString() + " does not fit blocked quantization of x " +
                     x.GetShape().ToString() + " with block_size=" + std::to_string(d.m_BlockSize) + " along axis " +
                     std::to_string(axis) + " (x's dims, that one divided by the block size, rounded up)");
        }
        if (ctx.HasInput(2) && ctx.Input(2).GetShape() != scale.GetShape()) {
            ctx.Fail("input 2 (zero point) " + ctx.Input(2).GetShape().ToString() + " must have the scale's shape " +
                     scale.GetShape().ToString());
        }
        return;
    }
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

namespace {

bool IsQuantizedStorageType(DataType t) {
    switch (t) {
        case DataType::UInt8: case DataType::Signed8: case DataType::UInt16: case DataType::Signed16:
        case DataType::Int4: case DataType::UInt4: case DataType::Int2: case DataType::UInt2:
        case DataType::Float8E4M3FN: case DataType::Float8E4M3FNUZ: case DataType::Float8E5M2:
        case DataType::Float8E5M2FNUZ: case DataType::Float4E2M1:
            return true;
        default:
            return false;
    }
}

constexpr const char* kQuantizedTypes =
    "UInt8, Signed8, UInt16, Signed16, Int4, UInt4, Int2, UInt2, Float8E4M3FN, Float8E4M3FNUZ, Float8E5M2, "
    "Float8E5M2FNUZ or Float4E2M1";

}  // namespace

std::vector<TensorInfo> QuantizeLinearInfer(InferContext& ctx) {
    auto& d = ctx.Desc<QuantizeLinearDescriptor>();
    const TensorInfo& x = ctx.Input(0);
    ctx.ExpectTypeIn(0, {DataType::Float32, DataType::Float16, DataType::BFloat16, DataType::Signed32});
    CheckQuantizationParameters(ctx, x);
    if (ctx.HasInput(2)) {
        if (!IsQuantizedStorageType(ctx.Input(2).GetDataType())) {
            ctx.Fail(std::string("input 2 (zero point) has type ") + GetDataTypeName(ctx.Input(2).GetDataType()) +
                     "; expected " + kQuantizedTypes);
        }
        d.m_DataType = ctx.Input(2).GetDataType();
    } else if (!IsQuantizedStorageType(d.m_DataType)) {
        ctx.Fail(std::string("output type ") + GetDataTypeName(d.m_DataType) + " is not one of " + kQuantizedTypes);
    }
    return {TensorInfo(x.GetShape(), d.m_DataType)};
}

std::vector<TensorInfo> DequantizeLinearInfer(InferContext& ctx) {
    const auto& d = ctx.Desc<QuantizeLinearDescriptor>();
    const TensorInfo& x = ctx.Input(0);
    if (x.GetDataType() != DataType::Signed32 && !IsQuantizedStorageType(x.GetDataType())) {
        ctx.Fail(std::string("input 0 (x) has type ") + GetDataTypeName(x.GetDataType()) + "; expected Signed32, " +
                 kQuantizedTypes);
    }
    CheckQuantizationParameters(ctx, x);
    if (ctx.HasInput(2)) ctx.ExpectType(2, x.GetDataType());
    const DataType out = d.m_OutputDataType.value_or(ctx.Input(1).GetDataType());
    if (out != DataType::Float32 && out != DataType::Float16 && out != DataType::BFloat16) {
        ctx.Fail(std::string("output_dtype ") + GetDataTypeName(out) + " must be Float32, Float16 or BFloat16");
    }
    return {TensorInfo(x.GetShape(), out)};
}

std::vector<TensorInfo> DynamicQuantizeLinearInfer(InferContext& ctx) {
    ctx.ExpectType(0, DataType::Float32);
    const TensorShape scalar(std::vector<unsigned int>{});
    return {TensorInfo(ctx.Input(0).GetShape(), DataType::UInt8), TensorInfo(scalar, DataType::Float32),
            TensorInfo(scalar, DataType::UInt8)};
}

}  // namespace trellis::core
