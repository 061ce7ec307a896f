// ONNX converters: ops that move or reshape data (Concat, Split, Slice, Reshape family,
// Transpose, Gather, Expand, Pad, Resize).
//
// Parameter inputs (shapes, axes, starts, ...) that are constants are folded into the descriptor
// here; computed ones become input slots that the core resolves after constant folding.
#include "OnnxConverters.hpp"

#include <limits>
#include <memory>

#include <algorithm>
#include <climits>
#include <cmath>

namespace trellis::onnximport {

void ConvertConcat(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(1, static_cast<unsigned int>(INT_MAX));
    ctx.ExpectOutputs(1, 1);
    for (unsigned int i = 0; i < ctx.NumInputs(); ++i) {
        if (!ctx.HasInput(i)) ctx.Fail("input " + std::to_string(i) + " is omitted; every input is required");
    }
    ConcatDescriptor d;
    // axis is optional with default 1 before opset 4, required after.
    d.m_Axis = ctx.ToInt(ctx.Opset() < 4 ? ctx.GetInt("axis", 1) : ctx.GetRequiredInt("axis"), "attribute axis");
    ctx.AddNodeLayer(LayerType::Concat, d, ctx.NumInputs());
}

void ConvertSplit(OnnxNodeContext& ctx) {
    ctx.ExpectOutputs(1, static_cast<unsigned int>(INT_MAX));
    SplitDescriptor d;
    d.m_Axis = ctx.ToInt(ctx.GetInt("axis", 0), "attribute axis");
    unsigned int slots = 1;
    if (ctx.Opset() < 13) {
        // Split-2/11: sizes are the `split` attribute.
        ctx.ExpectInputs(1, 1);
        d.m_Sizes = ctx.GetInts("split");
    } else {
        // Split-13: optional input 1; Split-18 adds num_outputs as the alternative.
        ctx.ExpectInputs(1, 2);
        if (std::optional<int64_t> numOutputs = ctx.FindInt("num_outputs")) {
            if (ctx.HasInput(1)) ctx.Fail("input 1 (split) and attribute num_outputs are both given");
            if (*numOutputs != ctx.NumOutputs()) {
                ctx.Fail("attribute num_outputs=" + std::to_string(*numOutputs) + " but the node has " +
                         std::to_string(ctx.NumOutputs()) + " outputs");
            }
        }
        if (ctx.HasInput(1)) {
            if (ctx.ConstantInput(1)) d.m_Sizes = ctx.ConstInts(1, "split");
            else slots = 2;
        }
    }
    if (!d.m_Sizes.empty() && d.m_Sizes.size() != ctx.NumOutputs()) {
        ctx.Fail("split sizes " + FormatList(d.m_Sizes) + " do not match the node's " +
                 std::to_string(ctx.NumOutputs()) + " outputs");
    }
    for (int64_t size : d.m_Sizes) {
        if (size < 0) ctx.Fail("split sizes " + FormatList(d.m_Sizes) + " must not be negative");
    }
    ctx.AddNodeLayer(LayerType::Split, d, slots, DataType::Signed64, static_cast<int>(ctx.NumOutputs()));
}

void ConvertSlice(OnnxNodeContext& ctx) {
    ctx.ExpectOutputs(1, 1);
    SliceDescriptor d;
    if (ctx.Opset() < 10) {
        // Slice-1: starts/ends/axes are attributes; there are no steps.
        ctx.ExpectInputs(1, 1);
        const std::optional<std::vector<int64_t>> starts = ctx.FindInts("starts");
        const std::optional<std::vector<int64_t>> ends = ctx.FindInts("ends");
        if (!starts || !ends) ctx.Fail("required attributes 'starts' and 'ends' must both be given");
        d.m_Starts = *starts;
        d.m_Ends = *ends;
        d.m_Axes = ctx.GetInts("axes");
        ctx.AddNodeLayer(LayerType::Slice, d, 1);
        return;
    }
    ctx.ExpectInputs(3, 5);
    const unsigned int slots = ctx.ParamSlots(1);
    if (slots == 1) {
        d.m_Starts = ctx.ConstInts(1, "starts");
        d.m_Ends = ctx.ConstInts(2, "ends");
        if (ctx.HasInput(3)) d.m_Axes = ctx.ConstInts(3, "axes");
        if (ctx.HasInput(4)) d.m_Steps = ctx.ConstInts(4, "steps");
    }
    ctx.AddNodeLayer(LayerType::Slice, d, slots);
}

void ConvertReshape(OnnxNodeContext& ctx) {
    ctx.ExpectOutputs(1, 1);
    ReshapeDescriptor d;
    d.m_Mode = ReshapeMode::Reshape;
    if (ctx.Opset() < 5) {
        // Reshape-1: the target shape is the `shape` attribute (same 0 / -1 rules), one input.
        ctx.ExpectInputs(1, 1);
        std::optional<std::vector<int64_t>> shape = ctx.FindInts("shape");
        if (!shape) ctx.Fail("attribute shape is missing (Reshape before opset 5 takes the target shape as an attribute)");
        d.m_TargetShape = *shape;
        ctx.AddNodeLayer(LayerType::Reshape, d, 1);
        return;
    }
    ctx.ExpectInputs(2, 2);
    d.m_AllowZero = ctx.GetBool("allowzero", false);  // opset 14
    const unsigned int slots = ctx.ParamSlots(1);
    if (slots == 1) d.m_TargetShape = ctx.ConstInts(1, "shape");
    ctx.AddNodeLayer(LayerType::Reshape, d, slots);
}

void ConvertFlatten(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(1, 1);
    ctx.ExpectOutputs(1, 1);
    ReshapeDescriptor d;
    d.m_Mode = ReshapeMode::Flatten;
    d.m_Axis = ctx.ToInt(ctx.GetInt("axis", 1), "attribute axis");
    ctx.AddNodeLayer(LayerType::Reshape, d, 1);
}

void ConvertSqueeze(OnnxNodeContext& ctx) {
    ctx.ExpectOutputs(1, 1);
    const bool unsqueeze = ctx.OpType() == "Unsqueeze";
    ReshapeDescriptor d;
    d.m_Mode = unsqueeze ? ReshapeMode::Unsqueeze : ReshapeMode::Squeeze;
    unsigned int slots = 1;
    if (ctx.Opset() < 13) {
        // Squeeze/Unsqueeze-11: axes attribute (required for Unsqueeze).
        ctx.ExpectInputs(1, 1);
        const std::optional<std::vector<int64_t>> axes = ctx.FindInts("axes");
        if (unsqueeze && !axes) ctx.Fail("required attribute 'axes' is missing");
        d.m_Axes = axes.value_or(std::vector<int64_t>{});
    } else {
        // Squeeze/Unsqueeze-13: axes input (optional for Squeeze).
        ctx.ExpectInputs(unsqueeze ? 2 : 1, 2);
        slots = ctx.ParamSlots(1);
        if (slots == 1 && ctx.HasInput(1)) d.m_Axes = ctx.ConstInts(1, "axes");
    }
    ctx.AddNodeLayer(LayerType::Reshape, d, slots);
}

void ConvertTranspose(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(1, 1);
    ctx.ExpectOutputs(1, 1);
    TransposeDescriptor d;
    d.m_Perm = ctx.ToUnsigned(ctx.GetInts("perm"), "attribute perm", 0);
    ctx.AddNodeLayer(LayerType::Transpose, d, 1);
}

void ConvertGather(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(2, 2);
    ctx.ExpectOutputs(1, 1);
    GatherDescriptor d;
    d.m_Axis = ctx.ToInt(ctx.GetInt("axis", 0), "attribute axis");
    ctx.AddNodeLayer(LayerType::Gather, d, 2);
}

void ConvertExpand(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(2, 2);
    ctx.ExpectOutputs(1, 1);
    ExpandDescriptor d;
    const unsigned int slots = ctx.ParamSlots(1);
    if (slots == 1) d.m_Shape = ctx.ConstInts(1, "shape");
    ctx.AddNodeLayer(LayerType::Expand, d, slots);
}

namespace {

// A 1-D Signed64 constant layer, and an elementwise layer on two slots (for computed parameters).
IOutputSlot& Int64Constant(OnnxNodeContext& ctx, const std::vector<int64_t>& values, const std::string& suffix) {
    auto storage = std::make_shared<std::vector<int64_t>>(values);
    const TensorInfo info(TensorShape{static_cast<unsigned int>(values.size())}, DataType::Signed64, 0.0f, 0,
                          /*isConstant=*/true);
    const std::shared_ptr<const void> keep(storage, storage->data());
    return ctx.AddLayer(LayerType::Constant, ConstantDescriptor{ConstTensor(info, storage->data()), keep}, {}, 1, suffix)
        ->GetOutputSlot(0);
}

IOutputSlot& Int64Binary(OnnxNodeContext& ctx, BinaryOperation op, IOutputSlot& a, IOutputSlot& b, const std::string& suffix) {
    return ctx.AddLayer(LayerType::ElementwiseBinary, ElementwiseBinaryDescriptor{op}, {&a, &b}, 1, suffix)->GetOutputSlot(0);
}

// Pad-19's wrap mode with computed pads (a graph input, say): X tiled along the padded axes by
// ceil(begin / dim) + 1 + ceil(end / dim), then the window [ceil(begin / dim) * dim - begin, that +
// begin + dim + end) sliced out; the repeats and the window are layers on the pads, read when the
// network is specialized for a run. `axes` are the padded axes (normalized, constant).
void ConvertWrapPadComputed(OnnxNodeContext& ctx, const TensorShape& xs, const std::vector<int64_t>& axes) {
    using Op = BinaryOperation;
    const int64_t n = static_cast<int64_t>(axes.size());
    std::vector<int64_t> dims, dimsLess1;
    for (int64_t a : axes) {
        const int64_t dim = xs[static_cast<unsigned int>(a)];
        if (dim == 0) ctx.Fail("mode='wrap' cannot pad the empty axis " + std::to_string(a));
        dims.push_back(dim);
        dimsLess1.push_back(dim - 1);
    }
    IOutputSlot& pads = ctx.AddLayer(LayerType::Cast, CastDescriptor{DataType::Signed64}, {&ctx.InputSlot(1)}, 1, "/pads")
                            ->GetOutputSlot(0);
    SliceDescriptor firstHalf, secondHalf;
    firstHalf.m_Starts = {0};
    firstHalf.m_Ends = {n};
    secondHalf.m_Starts = {n};
    secondHalf.m_Ends = {2 * n};
    IOutputSlot& begins = ctx.AddLayer(LayerType::Slice, firstHalf, {&pads}, 1, "/pads_begin")->GetOutputSlot(0);
    IOutputSlot& ends = ctx.AddLayer(LayerType::Slice, secondHalf, {&pads}, 1, "/pads_end")->GetOutputSlot(0);
    IOutputSlot& dim = Int64Constant(ctx, dims, "/dims");
    IOutputSlot& dimLess1 = Int64Constant(ctx, dimsLess1, "/dims_less_1");
    IOutputSlot& one = Int64Constant(ctx, {1}, "/one");
    IOutputSlot& before = Int64Binary(ctx, Op::Div, Int64Binary(ctx, Op::Add, begins, dimLess1, "/begin_up"), dim, "/periods_before");
    IOutputSlot& after = Int64Binary(ctx, Op::Div, Int64Binary(ctx, Op::Add, ends, dimLess1, "/end_up"), dim, "/periods_after");
    IOutputSlot& repeats = Int64Binary(ctx, Op::Add, Int64Binary(ctx, Op::Add, before, after, "/periods"), one, "/repeats_axes");
    // Tile's repeats cover every dim: 1 where no axis is padded.
    std::vector<IOutputSlot*> perDim;
    for (int64_t d = 0; d < static_cast<int64_t>(xs.GetNumDimensions()); ++d) {
        const auto it = std::find(axes.begin(), axes.end(), d);
        if (it == axes.end()) {
            perDim.push_back(&one);
            continue;
        }
        SliceDescriptor pick;
        pick.m_Starts = {it - axes.begin()};
        pick.m_Ends = {it - axes.begin() + 1};
        perDim.push_back(&ctx.AddLayer(LayerType::Slice, pick, {&repeats}, 1, "/repeats_" + std::to_string(d))->GetOutputSlot(0));
    }
    IOutputSlot& allRepeats = ctx.AddLayer(LayerType::Concat, ConcatDescriptor{0}, perDim, 1, "/repeats")->GetOutputSlot(0);
    IOutputSlot& tiled = ctx.AddLayer(LayerType::Tile, TileDescriptor{}, {&ctx.InputSlot(0), &allRepeats}, 1, "/tiled")
                             ->GetOutputSlot(0);
    IOutputSlot& starts =
        Int64Binary(ctx, Op::Sub, Int64Binary(ctx, Op::Mul, before, dim, "/before_span"), begins, "/window_start");
    IOutputSlot& length =
        Int64Binary(ctx, Op::Add, Int64Binary(ctx, Op::Add, begins, dim, "/begin_and_dim"), ends, "/window_length");
    IOutputSlot& stops = Int64Binary(ctx, Op::Add, starts, length, "/window_end");
    IOutputSlot& y = ctx.AddLayer(LayerType::Slice, SliceDescriptor{}, {&tiled, &starts, &stops, &Int64Constant(ctx, axes, "/axes")}, 1)
                         ->GetOutputSlot(0);
    ctx.SetOutput(0, y);
}

// Pad-19's wrap mode: along each padded axis, the output's index j reads X at (j - begin) mod dim.
// Planned here from X's shape and the constant pads as slices of X (one per stretch that stays
// within one period) concatenated along the axis, axis by axis; computed pads are read per run
// (ConvertWrapPadComputed).
void ConvertWrapPad(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(2, 4);
    if (!ctx.InputSlot(0).IsTensorInfoSet() || !ctx.InputSlot(0).GetTensorInfo().GetShape().AreAllDimensionsSpecified()) {
        ctx.Fail("mode='wrap' needs data's shape when the model is imported ('" + ctx.InputName(0) +
                 "' is computed by other nodes or has unknown dims)");
    }
    if (ctx.HasInput(3) && !ctx.ConstantInput(3)) ctx.Fail("mode='wrap' needs constant axes");
    const TensorShape xs = ctx.InputSlot(0).GetTensorInfo().GetShape();
    const int64_t rank = xs.GetNumDimensions();
    std::vector<int64_t> axes;
    if (ctx.HasInput(3)) {
        for (int64_t a : ctx.ConstInts(3, "axes")) {
            if (a < -rank || a >= rank) ctx.Fail("input 3 (axes) names the axis " + std::to_string(a) + " outside data's rank");
            axes.push_back(a < 0 ? a + rank : a);
        }
    } else {
        for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
    }
    if (!ctx.ConstantInput(1)) return ConvertWrapPadComputed(ctx, xs, axes);
    const std::vector<int64_t> given = ctx.ConstInts(1, "pads");
    if (given.size() != 2 * axes.size()) {
        ctx.Fail("input 1 (pads) has " + std::to_string(given.size()) + " values for " + std::to_string(axes.size()) + " axes");
    }
    IOutputSlot* y = &ctx.InputSlot(0);
    for (std::size_t i = 0; i < axes.size(); ++i) {
        const int64_t a = axes[i], begin = given[i], end = given[axes.size() + i];
        const int64_t dim = xs[static_cast<unsigned int>(a)];
        if (begin < 0 || end < 0) ctx.Fail("mode='wrap' takes no negative pads (axis " + std::to_string(a) + ")");
        if (begin == 0 && end == 0) continue;
        if (dim == 0) ctx.Fail("mode='wrap' cannot pad the empty axis " + std::to_string(a));
        std::vector<IOutputSlot*> parts;
        // Output index j in [-begin, dim + end) reads X at j mod dim: cut into whole-period runs.
        for (int64_t j = -begin; j < dim + end;) {
            const int64_t src = ((j % dim) + dim) % dim;
            const int64_t len = std::min(dim - src, dim + end - j);
            SliceDescriptor s;
            s.m_Axes = {a};
            s.m_Starts = {src};
            s.m_Ends = {src + len};
            parts.push_back(&ctx.AddLayer(LayerType::Slice, s, {y}, 1, "/wrap_axis" + std::to_string(a) + "_" +
                                                                            std::to_string(parts.size()))->GetOutputSlot(0));
            j += len;
        }
        ConcatDescriptor c;
        c.m_Axis = static_cast<int>(a);
        y = &ctx.AddLayer(LayerType::Concat, c, parts, 1, "/wrap_axis" + std::to_string(a))->GetOutputSlot(0);
    }
    if (y == &ctx.InputSlot(0)) y = &ctx.AddLayer(LayerType::Identity, EmptyDescriptor{}, {y}, 1)->GetOutputSlot(0);
    ctx.SetOutput(0, *y);
}

}  // namespace

void ConvertPad(OnnxNodeContext& ctx) {
    ctx.ExpectOutputs(1, 1);
    PadDescriptor d;
    const std::string mode = ctx.GetString("mode", "constant");
    if (mode == "constant") d.m_Mode = PadMode::Constant;
    else if (mode == "reflect") d.m_Mode = PadMode::Reflect;
    else if (mode == "edge") d.m_Mode = PadMode::Edge;
    else if (mode == "wrap" && ctx.Opset() >= 19) return ConvertWrapPad(ctx);
    else ctx.Fail("attribute mode='" + mode + "' is not supported (expected constant, reflect, edge or, from opset 19, wrap)");

    if (ctx.Opset() < 11) {
        // Pad-2: pads and value are attributes.
        ctx.ExpectInputs(1, 1);
        const std::optional<std::vector<int64_t>> pads = ctx.FindInts("pads");
        if (!pads) ctx.Fail("required attribute 'pads' is missing");
        d.m_Pads = *pads;
        d.m_Value = ctx.GetFloat("value", 0.0f);
        ctx.AddNodeLayer(LayerType::Pad, d, 1);
        return;
    }
    // Pad-11/13: inputs pads, constant_value; Pad-18 adds axes. The descriptor has no axes field
    // (pads must cover every dim), so a given axes input always stays a slot for the core to apply.
    ctx.ExpectInputs(2, 4);
    const unsigned int slots = ctx.HasInput(3) ? 4 : ctx.ParamSlots(1);
    if (slots == 1) {
        d.m_Pads = ctx.ConstInts(1, "pads");
        if (ctx.HasInput(2)) {
            const std::vector<double> value = ctx.ConstDoubles(2, "constant_value");
            if (value.size() != 1) {
                ctx.Fail("input 2 (constant_value) must hold one value, has " + std::to_string(value.size()));
            }
            // The descriptor holds a float; refuse values that would silently change (the core's rule).
            if (!std::isnan(value[0]) && static_cast<double>(static_cast<float>(value[0])) != value[0]) {
                ctx.Fail("input 2 (constant_value) " + std::to_string(value[0]) + " is not exactly representable as float");
            }
            d.m_Value = static_cast<float>(value[0]);
        }
    }
    ctx.AddNodeLayer(LayerType::Pad, d, slots, DataType::Float32);
}

namespace {

CoordinateTransform ReadCoordinateTransform(OnnxNodeContext& ctx) {
    const std::string mode = ctx.GetString("coordinate_transformation_mode", "half_pixel");
    if (mode == "half_pixel") return CoordinateTransform::HalfPixel;
    if (mode == "pytorch_half_pixel") return CoordinateTransform::PytorchHalfPixel;
    if (mode == "align_corners") return CoordinateTransform::AlignCorners;
    if (mode == "asymmetric") return CoordinateTransform::Asymmetric;
    if (mode == "tf_half_pixel_for_nn") return CoordinateTransform::TfHalfPixelForNearest;
    if (mode == "tf_crop_and_resize") return CoordinateTransform::TfCropAndResize;
    if (mode == "half_pixel_symmetric" && ctx.Opset() >= 19) return CoordinateTransform::HalfPixelSymmetric;
    ctx.Fail("attribute coordinate_transformation_mode='" + mode + "' is not supported (expected half_pixel, "
             "pytorch_half_pixel, align_corners, asymmetric, tf_half_pixel_for_nn, tf_crop_and_resize or, from "
             "opset 19, half_pixel_symmetric)");
}

NearestMode ReadNearestMode(OnnxNodeContext& ctx) {
    const std::string mode = ctx.GetString("nearest_mode", "round_prefer_floor");
    if (mode == "round_prefer_floor") return NearestMode::RoundPreferFloor;
    if (mode == "round_prefer_ceil") return NearestMode::RoundPreferCeil;
    if (mode == "floor") return NearestMode::Floor;
    if (mode == "ceil") return NearestMode::Ceil;
    ctx.Fail("attribute nearest_mode='" + mode + "' is not supported (expected round_prefer_floor, "
             "round_prefer_ceil, floor or ceil)");
}

}  // namespace

void ConvertResize(OnnxNodeContext& ctx) {
    ctx.ExpectOutputs(1, 1);
    ResizeDescriptor d;
    const std::string mode = ctx.GetString("mode", "nearest");
    if (mode == "nearest") d.m_Mode = ResizeMode::Nearest;
    else if (mode == "linear") d.m_Mode = ResizeMode::Linear;
    else if (mode == "cubic" && ctx.Opset() >= 11) d.m_Mode = ResizeMode::Cubic;
    else ctx.Fail("attribute mode='" + mode + "' is not supported (expected nearest, linear or, from opset 11, cubic)");

    unsigned int scalesInput = 2;
    if (ctx.Opset() < 11) {
        // Resize-10: inputs X, scales; it samples like Upsample, with asymmetric coordinates. The
        // spec leaves nearest rounding open; onnxruntime (the de-facto reference) floors where a
        // dim is upsampled and ceils where it is downsampled, which one mode can only express
        // when no dim goes each way.
        ctx.ExpectInputs(2, 2);
        scalesInput = 1;
        d.m_CoordinateTransform = CoordinateTransform::Asymmetric;
        if (d.m_Mode == ResizeMode::Nearest) {
            if (!ctx.ConstantInput(1)) {
                ctx.Fail("input 1 (scales) is computed by other nodes; Resize-10 nearest needs constant scales to pick "
                         "its rounding");
            }
            const std::vector<double> scales = ctx.ConstDoubles(1, "scales");
            const bool down = std::any_of(scales.begin(), scales.end(), [](double s) { return s < 1.0; });
            const bool up = std::any_of(scales.begin(), scales.end(), [](double s) { return s > 1.0; });
            if (down && up) {
                ctx.Fail("Resize-10 nearest with scales that both up- and downsample is not supported (its rounding "
                         "differs per dim)");
            }
            d.m_NearestMode = down ? NearestMode::Ceil : NearestMode::Floor;
        }
    } else {
        // Resize-11/13/18: inputs X, roi, scales, sizes. roi only matters for tf_crop_and_resize.
        ctx.ExpectInputs(1, 4);
        d.m_CoordinateTransform = ReadCoordinateTransform(ctx);
        d.m_NearestMode = ReadNearestMode(ctx);
        d.m_CubicCoeffA = ctx.GetFloat("cubic_coeff_a", -0.75f);
        d.m_ExcludeOutside = ctx.GetBool("exclude_outside", false);
        d.m_ExtrapolationValue = ctx.GetFloat("extrapolation_value", 0.0f);
        d.m_Antialias = ctx.GetBool("antialias", false);  // opset 18
        // Resize-18's axes and keep_aspect_ratio_policy: the core applies them once scales, sizes
        // and roi are known (they may be graph inputs).
        d.m_Axes = ctx.GetInts("axes");
        const std::string policy = ctx.GetString("keep_aspect_ratio_policy", "stretch");
        if (policy == "not_larger") d.m_KeepAspectRatioPolicy = KeepAspectRatioPolicy::NotLarger;
        else if (policy == "not_smaller") d.m_KeepAspectRatioPolicy = KeepAspectRatioPolicy::NotSmaller;
        else if (policy != "stretch") {
            ctx.Fail("attribute keep_aspect_ratio_policy='" + policy + "' is not supported (expected stretch, not_larger "
                     "or not_smaller)");
        }
    }
    const unsigned int sizesInput = 3;
    const bool scalesConstant = !ctx.HasInput(scalesInput) || ctx.ConstantInput(scalesInput);
    const bool sizesConstant = !ctx.HasInput(sizesInput) || ctx.ConstantInput(sizesInput);
    const bool crop = d.m_CoordinateTransform == CoordinateTransform::TfCropAndResize;
    const bool roiConstant = !crop || !ctx.HasInput(1) || ctx.ConstantInput(1);

    std::vector<IOutputSlot*> inputs{&ctx.InputSlot(0)};
    if (scalesConstant && sizesConstant && roiConstant) {
        if (crop && ctx.HasInput(1)) {
            for (double v : ctx.ConstDoubles(1, "roi")) d.m_Roi.push_back(static_cast<float>(v));
        }
        if (ctx.HasInput(scalesInput)) {
            for (double s : ctx.ConstDoubles(scalesInput, "scales")) d.m_Scales.push_back(static_cast<float>(s));
        }
        if (ctx.HasInput(sizesInput)) d.m_Sizes = ctx.ConstInts(sizesInput, "sizes");
        if (d.m_Scales.empty() && d.m_Sizes.empty()) ctx.Fail("neither scales nor sizes is given");
    } else {
        // Layer slots are always X, roi, scales[, sizes]; roi is an omitted placeholder unless
        // tf_crop_and_resize reads it. The core folds them (or says which one is not constant).
        OnnxGraphState& graph = ctx.Graph();
        inputs.push_back(crop && ctx.HasInput(1) ? &ctx.InputSlot(1) : &graph.EmptyPlaceholder(DataType::Float32));
        inputs.push_back(ctx.HasInput(scalesInput) ? &ctx.InputSlot(scalesInput)
                                                   : &graph.EmptyPlaceholder(DataType::Float32));
        if (ctx.HasInput(sizesInput)) inputs.push_back(&ctx.InputSlot(sizesInput));
    }
    IConnectableLayer* layer = ctx.AddLayer(LayerType::Resize, d, inputs, 1);
    ctx.SetOutput(0, layer->GetOutputSlot(0));
}

void ConvertUpsample(OnnxNodeContext& ctx) {
    // Upsample-7 (scales attribute) and -9 (scales input) sample as Resize-10 does: asymmetric
    // coordinates, nearest rounding down (every scale is >= 1). Upsample-1 was experimental.
    if (ctx.Opset() < 7) {
        ctx.Fail("Upsample before opset 7 (experimental: height_scale/width_scale) is not supported");
    }
    ctx.ExpectOutputs(1, 1);
    ResizeDescriptor d;
    const std::string mode = ctx.GetString("mode", "nearest");
    if (mode == "nearest") d.m_Mode = ResizeMode::Nearest;
    else if (mode == "linear") d.m_Mode = ResizeMode::Linear;
    else ctx.Fail("attribute mode='" + mode + "' is not supported (expected nearest or linear)");
    d.m_CoordinateTransform = CoordinateTransform::Asymmetric;
    d.m_NearestMode = NearestMode::Floor;
    std::vector<double> scales;
    if (ctx.Opset() < 9) {
        ctx.ExpectInputs(1, 1);
        std::optional<std::vector<float>> attribute = ctx.FindFloats("scales");
        if (!attribute) ctx.Fail("attribute scales is missing (Upsample-7 takes its scales as an attribute)");
        scales.assign(attribute->begin(), attribute->end());
    } else {
        ctx.ExpectInputs(2, 2);
        if (!ctx.ConstantInput(1)) {
            // Scales computed by other nodes (or fed as a graph input): Resize's scales slot, read
            // by the optimizer once they are known (the network is specialized on them).
            std::vector<IOutputSlot*> inputs{&ctx.InputSlot(0), &ctx.Graph().EmptyPlaceholder(DataType::Float32),
                                             &ctx.InputSlot(1)};
            ctx.SetOutput(0, ctx.AddLayer(LayerType::Resize, d, inputs, 1)->GetOutputSlot(0));
            return;
        }
        scales = ctx.ConstDoubles(1, "scales");
    }
    for (double s : scales) {
        if (!(s >= 1.0)) ctx.Fail("a scale of " + std::to_string(s) + " is below 1 (Upsample only enlarges)");
        d.m_Scales.push_back(static_cast<float>(s));
    }
    ctx.AddNodeLayer(LayerType::Resize, d, 1);
}

namespace {

// CenterCropPad whose target shape is computed (a graph input, say): the crop starts and pad
// amounts are layers on it, so the core reads them when the network is specialized for a run.
// Along each axis, with dim the input's size and size the target's: start = max(dim - size, 0) / 2,
// end = start + min(size, dim); pad before = max(size - dim, 0) / 2, after = the rest.
void ConvertCenterCropPadComputed(OnnxNodeContext& ctx, const TensorShape& xs, const std::vector<int64_t>& axes) {
    std::vector<int64_t> dims;
    for (int64_t a : axes) dims.push_back(xs[static_cast<unsigned int>(a)]);
    IOutputSlot& size = ctx.AddLayer(LayerType::Cast, CastDescriptor{DataType::Signed64}, {&ctx.InputSlot(1)}, 1, "/size")
                            ->GetOutputSlot(0);
    IOutputSlot& dim = Int64Constant(ctx, dims, "/dims");
    IOutputSlot& zero = Int64Constant(ctx, {0}, "/zero");
    IOutputSlot& two = Int64Constant(ctx, {2}, "/two");
    IOutputSlot& axesSlot = Int64Constant(ctx, axes, "/axes");
    using Op = BinaryOperation;
    IOutputSlot& excess = Int64Binary(ctx, Op::Maximum, Int64Binary(ctx, Op::Sub, dim, size, "/dim_minus_size"), zero, "/excess");
    IOutputSlot& starts = Int64Binary(ctx, Op::Div, excess, two, "/crop_starts");
    IOutputSlot& ends = Int64Binary(ctx, Op::Add, starts, Int64Binary(ctx, Op::Minimum, size, dim, "/kept"), "/crop_ends");
    IOutputSlot& cropped =
        ctx.AddLayer(LayerType::Slice, SliceDescriptor{}, {&ctx.InputSlot(0), &starts, &ends, &axesSlot}, 1, "/crop")
            ->GetOutputSlot(0);
    IOutputSlot& deficit =
        Int64Binary(ctx, Op::Maximum, Int64Binary(ctx, Op::Sub, size, dim, "/size_minus_dim"), zero, "/deficit");
    IOutputSlot& before = Int64Binary(ctx, Op::Div, deficit, two, "/pads_before");
    IOutputSlot& after = Int64Binary(ctx, Op::Sub, deficit, before, "/pads_after");
    IOutputSlot& pads = ctx.AddLayer(LayerType::Concat, ConcatDescriptor{0}, {&before, &after}, 1, "/pads")->GetOutputSlot(0);
    PadDescriptor pad;
    IOutputSlot& y = ctx.AddLayer(LayerType::Pad, pad,
                                  {&cropped, &pads, &ctx.Graph().EmptyPlaceholder(DataType::Float32), &axesSlot}, 1)
                         ->GetOutputSlot(0);
    ctx.SetOutput(0, y);
}

}  // namespace

void ConvertCenterCropPad(OnnxNodeContext& ctx) {
    // CenterCropPad (opset 18): each dim named by axes (all by default) becomes shape[i], cropped
    // around its centre when smaller (start (dim - size) / 2, rounded down) and zero-padded
    // around it when larger (before (size - dim) / 2, rounded down, the rest after): a Slice and a
    // constant Pad, planned here from X's shape and the constant target shape (or, for a
    // computed target shape, layers that compute the crop and the pads).
    ctx.ExpectInputs(2, 2);
    ctx.ExpectOutputs(1, 1);
    if (!ctx.InputSlot(0).IsTensorInfoSet() || !ctx.InputSlot(0).GetTensorInfo().GetShape().AreAllDimensionsSpecified()) {
        ctx.Fail("CenterCropPad needs input_data's shape when the model is imported ('" + ctx.InputName(0) +
                 "' is computed by other nodes or has unknown dims)");
    }
    const TensorShape xs = ctx.InputSlot(0).GetTensorInfo().GetShape();
    const int64_t rank = xs.GetNumDimensions();
    std::vector<int64_t> axes = ctx.GetInts("axes");
    if (axes.empty()) {
        for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
    }
    for (int64_t& a : axes) {
        if (a < -rank || a >= rank) ctx.Fail("attribute axes=" + FormatList(ctx.GetInts("axes")) + " names a dim outside X's rank " + std::to_string(rank));
        if (a < 0) a += rank;
    }
    if (!ctx.ConstantInput(1)) return ConvertCenterCropPadComputed(ctx, xs, axes);
    const std::vector<int64_t> target = ctx.ConstInts(1, "shape");
    if (axes.size() != target.size()) {
        ctx.Fail("input 1 (shape) has " + std::to_string(target.size()) + " values for " + std::to_string(axes.size()) +
                 " axes");
    }
    SliceDescriptor crop;
    PadDescriptor pad;
    pad.m_Pads.assign(static_cast<std::size_t>(2 * rank), 0);
    bool cropped = false, padded = false;
    for (std::size_t i = 0; i < axes.size(); ++i) {
        const int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
        if (a < 0 || a >= rank) ctx.Fail("attribute axes=" + FormatList(axes) + " names a dim outside X's rank " + std::to_string(rank));
        const int64_t dim = xs[static_cast<unsigned int>(a)], size = target[i];
        if (size < 0) ctx.Fail("input 1 (shape) holds the negative size " + std::to_string(size));
        if (size < dim) {
            const int64_t start = (dim - size) / 2;
            crop.m_Axes.push_back(a);
            crop.m_Starts.push_back(start);
            crop.m_Ends.push_back(start + size);
            cropped = true;
        } else if (size > dim) {
            pad.m_Pads[static_cast<std::size_t>(a)] = (size - dim) / 2;
            pad.m_Pads[static_cast<std::size_t>(rank + a)] = size - dim - (size - dim) / 2;
            padded = true;
        }
    }
    IOutputSlot* y = &ctx.InputSlot(0);
    if (cropped) y = &ctx.AddLayer(LayerType::Slice, crop, {y}, 1, padded ? "/crop" : "")->GetOutputSlot(0);
    if (padded) y = &ctx.AddLayer(LayerType::Pad, pad, {y}, 1)->GetOutputSlot(0);
    if (!cropped && !padded) y = &ctx.AddLayer(LayerType::Identity, EmptyDescriptor{}, {y}, 1)->GetOutputSlot(0);
    ctx.SetOutput(0, *y);
}

}  // namespace trellis::onnximport
