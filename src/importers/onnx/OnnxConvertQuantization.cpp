// ONNX converters: quantization (QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear), the
// integer products (MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv) and BitShift.
//
// The integer products are built from layers Trellis already has, in exact integer arithmetic:
//   MatMulInteger(A, B, a_zp, b_zp) = MatMul(Cast<Signed32>(A) - a_zp, Cast<Signed32>(B) - b_zp)
//   ConvInteger(X, W, x_zp, w_zp)   = Convolution(Cast<Signed32>(X) - x_zp, Cast<Signed32>(W) - w_zp)
// (padding then adds zeros after the zero point is taken off, which is what padding with the zero
// point means). QLinearMatMul / QLinearConv requantize that Signed32 accumulator (plus the bias B)
// as ONNX Runtime does: y = saturate(round(float(acc) * (x_scale * w_scale / y_scale)) + y_zp),
// i.e. a Float32 multiplier applied to the accumulator and a QuantizeLinear with scale 1.
#include "OnnxConverters.hpp"

namespace trellis::onnximport {

namespace {

bool KnownShape(OnnxNodeContext& ctx, unsigned int i) { return ctx.InputSlot(i).IsTensorInfoSet(); }

// The number of elements of input i when it is given and the importer knows its shape.
std::optional<std::size_t> KnownElements(OnnxNodeContext& ctx, unsigned int i) {
    if (!ctx.HasInput(i) || !KnownShape(ctx, i)) return std::nullopt;
    return ctx.InputSlot(i).GetTensorInfo().GetNumElements();
}

IOutputSlot& Binary(OnnxNodeContext& ctx, BinaryOperation op, IOutputSlot& a, IOutputSlot& b, const std::string& suffix) {
    return ctx.AddLayer(LayerType::ElementwiseBinary, ElementwiseBinaryDescriptor{op}, {&a, &b}, 1, suffix)->GetOutputSlot(0);
}

IOutputSlot& CastTo(OnnxNodeContext& ctx, DataType type, IOutputSlot& in, const std::string& suffix) {
    return ctx.AddLayer(LayerType::Cast, CastDescriptor{type}, {&in}, 1, suffix)->GetOutputSlot(0);
}

// A Reshape of `in` to [-1, 1 x trailingOnes]: a per-row / per-channel vector lined up with dim
// `trailingOnes` from the end for numpy broadcasting.
IOutputSlot& AsColumn(OnnxNodeContext& ctx, IOutputSlot& in, std::size_t trailingOnes, const std::string& suffix) {
    ReshapeDescriptor r;
    r.m_Mode = ReshapeMode::Reshape;
    r.m_TargetShape.assign(trailingOnes + 1, 1);
    r.m_TargetShape[0] = -1;
    return ctx.AddLayer(LayerType::Reshape, r, {&in}, 1, suffix)->GetOutputSlot(0);
}

// Input `data` as Signed32 with its zero point (input `zp`, when given) subtracted. A zero point
// with more than one value is per row / per output channel: it is reshaped to [-1, 1 x
// zpTrailingOnes] first (0: it lines up with the last dim as it is).
IOutputSlot& Centered(OnnxNodeContext& ctx, unsigned int data, unsigned int zp, const std::string& name,
                      std::size_t zpTrailingOnes) {
    IOutputSlot& value = CastTo(ctx, DataType::Signed32, ctx.InputSlot(data), "/" + name + "_int32");
    if (!ctx.HasInput(zp)) return value;
    IOutputSlot* point = &CastTo(ctx, DataType::Signed32, ctx.InputSlot(zp), "/" + name + "_zero_point_int32");
    const std::optional<std::size_t> count = KnownElements(ctx, zp);
    if (zpTrailingOnes > 0 && count && *count > 1) {
        point = &AsColumn(ctx, *point, zpTrailingOnes, "/" + name + "_zero_point_column");
    }
    return Binary(ctx, BinaryOperation::Sub, value, *point, "/" + name + "_centered");
}

// Rank of input i, known at import time (a graph input or a constant), else fails naming `why`.
std::size_t RequireRank(OnnxNodeContext& ctx, unsigned int i, const std::string& why) {
    if (!KnownShape(ctx, i)) {
        ctx.Fail("input " + std::to_string(i) + " ('" + ctx.InputName(i) + "') has no known shape at import time; " +
                 "Trellis needs it to " + why);
    }
    return ctx.InputSlot(i).GetTensorInfo().GetNumDimensions();
}

// Fails unless input i (a per-row parameter of A) is known to hold one value: numpy broadcasting
// would line a per-row vector up with the wrong dim.
void RequireScalarParameter(OnnxNodeContext& ctx, unsigned int i, const char* what) {
    const std::optional<std::size_t> count = KnownElements(ctx, i);
    if (count && *count != 1) {
        ctx.Fail("input " + std::to_string(i) + " (" + what + ") holds " + std::to_string(*count) +
                 " values; Trellis supports one value (per tensor) here");
    }
}

// The Signed32 product of a MatMulInteger / QLinearMatMul (inputs: A at a, B at b, zero points
// at aZp, bZp) or ConvInteger / QLinearConv (bias at `bias` when given), named with `suffix`.
IOutputSlot& IntegerProduct(OnnxNodeContext& ctx, bool conv, unsigned int a, unsigned int aZp, unsigned int b,
                            unsigned int bZp, std::optional<unsigned int> bias, const std::string& suffix) {
    if (!conv) {
        // a_zero_point may be per row of A ([M]): a column [M, 1] lines up with A's rows.
        IOutputSlot& left = Centered(ctx, a, aZp, "a", 1);
        IOutputSlot& right = Centered(ctx, b, bZp, "b", 0);  // per column of B: numpy's alignment already
        return ctx.AddLayer(LayerType::MatMul, EmptyDescriptor{}, {&left, &right}, 1, suffix)->GetOutputSlot(0);
    }
    RequireScalarParameter(ctx, aZp, "x_zero_point");
    ConvolutionDescriptor d;
    ReadConvolutionAttributes(ctx, d);
    IOutputSlot& x = Centered(ctx, a, aZp, "x", 0);
    // w_zero_point may be per output channel ([M]): [M, 1, 1, ...] lines up with W's dim 0.
    const std::optional<std::size_t> wzpCount = KnownElements(ctx, bZp);
    const std::size_t wRank = wzpCount && *wzpCount > 1 ? RequireRank(ctx, b, "line w_zero_point up with W's dim 0") : 0;
    IOutputSlot& w = Centered(ctx, b, bZp, "w", wRank > 0 ? wRank - 1 : 0);
    std::vector<IOutputSlot*> inputs{&x, &w};
    if (bias) inputs.push_back(&ctx.InputSlot(*bias));
    return ctx.AddLayer(LayerType::Convolution, d, inputs, 1, suffix)->GetOutputSlot(0);
}

}  // namespace

void ConvertQuantizeLinear(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(2, 3);
    ctx.ExpectOutputs(1, 1);
    QuantizeLinearDescriptor d;
    if (ctx.Opset() >= 13) d.m_Axis = ctx.GetInt("axis", 1);  // opset 10 has per-tensor parameters only
    const bool quantize = ctx.OpType() == "QuantizeLinear";
    const LayerType type = quantize ? LayerType::QuantizeLinear : LayerType::DequantizeLinear;
    d.m_BlockSize = ctx.GetInt("block_size", 0);
    if (quantize) {
        d.m_Saturate = ctx.GetBool("saturate", true);
        // precision (opset 23) names the type of x / scale; CpuRef divides in Float32 or wider.
        ctx.IgnoreAttributes({"precision"});
    }
    if (const std::optional<int64_t> dtype = ctx.FindInt("output_dtype"); dtype && *dtype != 0) {
        const std::optional<DataType> t = FromOnnxDataType(static_cast<int32_t>(*dtype));
        if (!t) ctx.Fail("attribute output_dtype=" + OnnxDataTypeName(static_cast<int32_t>(*dtype)) + " is not supported");
        if (quantize) {
            if (ctx.HasInput(2) && ctx.ConstantInput(2) && ctx.ConstantInput(2)->m_Info.GetDataType() != *t) {
                ctx.Fail("attribute output_dtype=" + OnnxDataTypeName(static_cast<int32_t>(*dtype)) +
                         " contradicts the zero point's type");
            }
            d.m_DataType = *t;
        } else {
            d.m_OutputDataType = *t;
        }
    }
    ctx.AddNodeLayer(type, d, ctx.HasInput(2) ? 3 : 2);
}

void ConvertDynamicQuantizeLinear(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(1, 1);
    ctx.ExpectOutputs(3, 3);
    ctx.AddNodeLayer(LayerType::DynamicQuantizeLinear, EmptyDescriptor{}, 1);
}

void ConvertMatMulInteger(OnnxNodeContext& ctx) {
    // MatMulInteger / ConvInteger: (A, B, a_zero_point, b_zero_point) -> Signed32.
    ctx.ExpectInputs(2, 4);
    ctx.ExpectOutputs(1, 1);
    const bool conv = ctx.OpType() == "ConvInteger";
    ctx.SetOutput(0, IntegerProduct(ctx, conv, 0, 2, 1, 3, std::nullopt, ""));
}

void ConvertQLinear(OnnxNodeContext& ctx) {
    // QLinearMatMul (a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp) and QLinearConv (x,
    // x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, optional B).
    const bool conv = ctx.OpType() == "QLinearConv";
    ctx.ExpectInputs(8, conv ? 9 : 8);
    ctx.ExpectOutputs(1, 1);
    if (conv) RequireScalarParameter(ctx, 1, "x_scale");
    RequireScalarParameter(ctx, 6, "y_scale");
    RequireScalarParameter(ctx, 7, "y_zero_point");
    const std::optional<unsigned int> bias = conv && ctx.HasInput(8) ? std::optional<unsigned int>(8) : std::nullopt;
    IOutputSlot& product = IntegerProduct(ctx, conv, 0, 2, 3, 5, bias, "/int32_product");
    // multiplier = a_scale * b_scale / y_scale (Float32, in that order, as ONNX Runtime computes it;
    // Float16 scales, allowed from opset 21, are widened first). A per-row a_scale ([M]) becomes a
    // column [M, 1] so that it lines up with A's rows.
    const std::optional<std::size_t> aScaleCount = KnownElements(ctx, 1);
    IOutputSlot& aScale32 = CastTo(ctx, DataType::Float32, ctx.InputSlot(1), "/a_scale_float");
    IOutputSlot& bScale32 = CastTo(ctx, DataType::Float32, ctx.InputSlot(4), "/b_scale_float");
    IOutputSlot& yScale32 = CastTo(ctx, DataType::Float32, ctx.InputSlot(6), "/y_scale_float");
    IOutputSlot& aScale = !conv && aScaleCount && *aScaleCount > 1 ? AsColumn(ctx, aScale32, 1, "/a_scale_column")
                                                                   : aScale32;
    IOutputSlot& scales = Binary(ctx, BinaryOperation::Mul, aScale, bScale32, "/input_scales");
    IOutputSlot* multiplier = &Binary(ctx, BinaryOperation::Div, scales, yScale32, "/multiplier");
    const std::optional<std::size_t> wScaleCount = KnownElements(ctx, 4);
    if (conv && wScaleCount && *wScaleCount > 1) {
        // Per output channel: [M, 1, ...] lines up with Y's dim 1.
        const std::size_t rank = RequireRank(ctx, 3, "line w_scale up with the output channels");
        // Checked here: the column's trailing ones (rank - 2) must not wrap around below rank 2.
        if (rank < 3) {
            ctx.Fail("input 3 (w) has rank " + std::to_string(rank) +
                     "; convolution weights have rank 3 or more ([M, C/group, k1, ...])");
        }
        multiplier = &AsColumn(ctx, *multiplier, rank - 2, "/multiplier_per_channel");
    }
    IOutputSlot& real = CastTo(ctx, DataType::Float32, product, "/float");
    IOutputSlot& scaled = Binary(ctx, BinaryOperation::Mul, real, *multiplier, "/requantize");
    // QuantizeLinear with scale 1 rounds half to even, adds y_zero_point and saturates to its type.
    auto one = std::make_shared<float>(1.0f);
    TensorInfo info(TensorShape(std::vector<unsigned int>{}), DataType::Float32, 0.0f, 0, /*isConstant=*/true);
    const std::string oneName = ctx.Name() + "/unit_scale";
    IConnectableLayer* unit = ctx.Graph().Network().AddLayer(LayerType::Constant, ConstantDescriptor{ConstTensor(info, one.get()), one},
                                                             oneName.c_str(), 0, 1);
    IConnectableLayer* y = ctx.AddLayer(LayerType::QuantizeLinear, QuantizeLinearDescriptor{},
                                        {&scaled, &unit->GetOutputSlot(0), &ctx.InputSlot(7)}, 1);
    ctx.SetOutput(0, y->GetOutputSlot(0));
}

void ConvertBitShift(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(2, 2);
    ctx.ExpectOutputs(1, 1);
    const std::optional<std::string> direction = ctx.FindString("direction");
    BinaryOperation op;
    if (direction == "LEFT") op = BinaryOperation::BitShiftLeft;
    else if (direction == "RIGHT") op = BinaryOperation::BitShiftRight;
    else ctx.Fail("attribute direction='" + direction.value_or("") + "' must be LEFT or RIGHT");
    ctx.AddNodeLayer(LayerType::ElementwiseBinary, ElementwiseBinaryDescriptor{op}, 2);
}

}  // namespace trellis::onnximport
