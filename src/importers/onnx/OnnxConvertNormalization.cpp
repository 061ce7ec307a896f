// Converters of normalizations that become several layers: LpNormalization (opset 1, types in 22)
// as the ONNX reference computes it - x / norm along one axis, 0 where the norm is 0 - and
// GroupNormalization (opsets 18 and 21) as its ONNX function body: an instance normalization of
// x viewed as (N, groups, -1), then scale and bias per group (opset 18) or per channel (21).
#include "OnnxConverters.hpp"

namespace trellis::onnximport {

namespace {

IOutputSlot& ReshapeTo(OnnxNodeContext& ctx, IOutputSlot& in, std::vector<int64_t> target, const std::string& suffix) {
    ReshapeDescriptor r;
    r.m_Mode = ReshapeMode::Reshape;
    r.m_TargetShape = std::move(target);
    return ctx.AddLayer(LayerType::Reshape, r, {&in}, 1, suffix)->GetOutputSlot(0);
}

// A constant of `count` values `value` with the type of `like` (ConstantOfShape, folded, then a
// Cast whose target type inference takes from `like`).
IOutputSlot& Filled(OnnxNodeContext& ctx, int64_t count, double value, IOutputSlot& like, const std::string& suffix) {
    ConstantOfShapeDescriptor d;
    d.m_Shape = {count};
    d.m_Value = value;
    IOutputSlot& f = ctx.AddLayer(LayerType::ConstantOfShape, d, {}, 1, suffix + "_float")->GetOutputSlot(0);
    return ctx.AddLayer(LayerType::Cast, CastDescriptor{}, {&f, &like}, 1, suffix)->GetOutputSlot(0);
}

IOutputSlot& BinaryOf(OnnxNodeContext& ctx, BinaryOperation op, IOutputSlot& a, IOutputSlot& b, const std::string& suffix) {
    return ctx.AddLayer(LayerType::ElementwiseBinary, ElementwiseBinaryDescriptor{op}, {&a, &b}, 1, suffix)->GetOutputSlot(0);
}

}  // namespace

void ConvertGroupNormalization(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(3, 3);
    ctx.ExpectOutputs(1, 1);
    const int64_t groups = ctx.GetRequiredInt("num_groups");
    if (groups < 1) ctx.Fail("attribute num_groups=" + std::to_string(groups) + " must be at least 1");
    InstanceNormalizationDescriptor norm;
    norm.m_Eps = ctx.GetFloat("epsilon", 1e-5f);
    // stash_type (opset 21) picks the statistics' precision; CpuRef computes them in double.
    ctx.IgnoreAttributes({"stash_type"});
    IOutputSlot& x = ctx.InputSlot(0);
    IOutputSlot& grouped = ReshapeTo(ctx, x, {0, groups, -1}, "/grouped");
    IOutputSlot& ones = Filled(ctx, groups, 1.0, x, "/ones");
    IOutputSlot& zeros = Filled(ctx, groups, 0.0, x, "/zeros");
    IOutputSlot& normalized =
        ctx.AddLayer(LayerType::InstanceNormalization, norm, {&grouped, &ones, &zeros}, 1, "/normalized")->GetOutputSlot(0);
    // X's shape (a Shape layer, folded): the target of the reshapes back.
    IOutputSlot& shape = ctx.AddLayer(LayerType::Shape, ShapeDescriptor{}, {&x}, 1, "/shape")->GetOutputSlot(0);
    ReshapeDescriptor asX;
    asX.m_Mode = ReshapeMode::Reshape;
    // Opset 18: scale and bias per group, on the (N, groups, -1) view; opset 21: per channel, on
    // an (N, C, -1) view of the normalized X.
    IOutputSlot* view = &normalized;
    if (ctx.Opset() >= 21) {
        IOutputSlot& unGrouped = ctx.AddLayer(LayerType::Reshape, asX, {&normalized, &shape}, 1, "/normalized_x")->GetOutputSlot(0);
        view = &ReshapeTo(ctx, unGrouped, {0, 0, -1}, "/channels");
    }
    IOutputSlot& scale = ReshapeTo(ctx, ctx.InputSlot(1), {-1, 1}, "/scale_column");
    IOutputSlot& bias = ReshapeTo(ctx, ctx.InputSlot(2), {-1, 1}, "/bias_column");
    IOutputSlot& scaled = BinaryOf(ctx, BinaryOperation::Mul, *view, scale, "/scaled");
    IOutputSlot& shifted = BinaryOf(ctx, BinaryOperation::Add, scaled, bias, "/shifted");
    IConnectableLayer* y = ctx.AddLayer(LayerType::Reshape, asX, {&shifted, &shape});
    ctx.SetOutput(0, y->GetOutputSlot(0));
}

void ConvertLpNormalization(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(1, 1);
    ctx.ExpectOutputs(1, 1);
    const int64_t p = ctx.GetInt("p", 2);
    if (p != 1 && p != 2) ctx.Fail("attribute p=" + std::to_string(p) + " is not supported (ONNX allows 1 and 2)");
    ReduceDescriptor norm;
    norm.m_Operation = p == 1 ? ReduceOperation::L1 : ReduceOperation::L2;
    norm.m_Axes = {ctx.GetInt("axis", -1)};
    norm.m_KeepDims = true;
    IOutputSlot& x = ctx.InputSlot(0);
    IOutputSlot& n = ctx.AddLayer(LayerType::Reduce, norm, {&x}, 1, "/norm")->GetOutputSlot(0);
    IOutputSlot& q =
        ctx.AddLayer(LayerType::ElementwiseBinary, ElementwiseBinaryDescriptor{BinaryOperation::Div}, {&x, &n}, 1, "/divided")
            ->GetOutputSlot(0);
    // A scalar 0 of x's type: a ConstantOfShape (folded) cast like x by type inference.
    ConstantOfShapeDescriptor zeroDesc;
    zeroDesc.m_Value = 0.0;
    IOutputSlot& zeroF = ctx.AddLayer(LayerType::ConstantOfShape, zeroDesc, {}, 1, "/zero_float")->GetOutputSlot(0);
    IOutputSlot& zero = ctx.AddLayer(LayerType::Cast, CastDescriptor{}, {&zeroF, &x}, 1, "/zero")->GetOutputSlot(0);
    IOutputSlot& isZero =
        ctx.AddLayer(LayerType::ElementwiseBinary, ElementwiseBinaryDescriptor{BinaryOperation::Equal}, {&n, &zero}, 1,
                     "/norm_is_zero")
            ->GetOutputSlot(0);
    IConnectableLayer* y = ctx.AddLayer(LayerType::Where, EmptyDescriptor{}, {&isZero, &zero, &q});
    ctx.SetOutput(0, y->GetOutputSlot(0));
}

}  // namespace trellis::onnximport
