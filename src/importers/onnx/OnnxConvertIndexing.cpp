// ONNX converters: index and arrangement ops (ArgMax/ArgMin, Trilu, Size,
// GatherElements, ScatterElements/Scatter, Tile, CumSum, DepthToSpace, SpaceToDepth, OneHot,
// EyeLike, Hardmax, TopK, GatherND, ScatterND, ReverseSequence).
#include "OnnxConverters.hpp"

#include <cmath>

namespace trellis::onnximport {

void ConvertArgMinMax(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(1, 1);
    ctx.ExpectOutputs(1, 1);
    ArgMinMaxDescriptor d;
    d.m_Function = ctx.OpType() == "ArgMax" ? ArgMinMaxFunction::Max : ArgMinMaxFunction::Min;
    d.m_Axis = ctx.GetInt("axis", 0);
    d.m_KeepDims = ctx.GetBool("keepdims", true);
    d.m_SelectLastIndex = ctx.GetBool("select_last_index", false);  // opset 12
    ctx.AddNodeLayer(LayerType::ArgMinMax, d, 1);
}

void ConvertTrilu(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(1, 2);
    ctx.ExpectOutputs(1, 1);
    TriluDescriptor d;
    d.m_Upper = ctx.GetBool("upper", true);
    // k: folded when constant, else a runtime input (it moves no dims).
    const unsigned int slots = ctx.ParamSlots(1);
    if (slots == 1 && ctx.HasInput(1)) {
        const std::vector<int64_t> k = ctx.ConstInts(1, "k");
        if (k.size() != 1) ctx.Fail("input 1 (k) must hold one value, has " + std::to_string(k.size()));
        d.m_K = k[0];
    }
    ctx.AddNodeLayer(LayerType::Trilu, d, slots);
}

void ConvertSize(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(1, 1);
    ctx.ExpectOutputs(1, 1);
    ctx.AddNodeLayer(LayerType::Size, EmptyDescriptor{}, 1);
}

void ConvertGatherElements(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(2, 2);
    ctx.ExpectOutputs(1, 1);
    GatherDescriptor d;
    d.m_Axis = ctx.ToInt(ctx.GetInt("axis", 0), "attribute axis");
    ctx.AddNodeLayer(LayerType::GatherElements, d, 2);
}

void ConvertScatterElements(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(3, 3);
    ctx.ExpectOutputs(1, 1);
    ScatterElementsDescriptor d;
    d.m_Axis = ctx.GetInt("axis", 0);
    // Scatter (opsets 9-10) is ScatterElements without reduction; reduction arrived in opset 16
    // (none/add/mul) and 18 (max/min).
    if (ctx.OpType() == "ScatterElements") {
        const std::string reduction = ctx.GetString("reduction", "none");
        if (reduction == "none") d.m_Reduction = ScatterReduction::None;
        else if (reduction == "add") d.m_Reduction = ScatterReduction::Add;
        else if (reduction == "mul") d.m_Reduction = ScatterReduction::Mul;
        else if (reduction == "max") d.m_Reduction = ScatterReduction::Max;
        else if (reduction == "min") d.m_Reduction = ScatterReduction::Min;
        else ctx.Fail("attribute reduction='" + reduction + "' is not supported (expected none, add, mul, max or min)");
    }
    ctx.AddNodeLayer(LayerType::ScatterElements, d, 3);
}

void ConvertTile(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(2, 2);
    ctx.ExpectOutputs(1, 1);
    TileDescriptor d;
    const unsigned int slots = ctx.ParamSlots(1);
    if (slots == 1) d.m_Repeats = ctx.ConstInts(1, "repeats");
    ctx.AddNodeLayer(LayerType::Tile, d, slots);
}

void ConvertCumSum(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(2, 2);
    ctx.ExpectOutputs(1, 1);
    CumSumDescriptor d;
    d.m_Product = ctx.OpType() == "CumProd";
    d.m_Exclusive = ctx.GetBool("exclusive", false);
    d.m_Reverse = ctx.GetBool("reverse", false);
    // axis: folded when constant, else a runtime input (it moves no dims).
    const unsigned int slots = ctx.ParamSlots(1);
    if (slots == 1) {
        const std::vector<int64_t> axis = ctx.ConstInts(1, "axis");
        if (axis.size() != 1) ctx.Fail("input 1 (axis) must hold one value, has " + std::to_string(axis.size()));
        d.m_Axis = axis[0];
    }
    ctx.AddNodeLayer(LayerType::CumSum, d, slots);
}

void ConvertSpaceDepth(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(1, 1);
    ctx.ExpectOutputs(1, 1);
    SpaceDepthDescriptor d;
    const int64_t block = ctx.GetRequiredInt("blocksize");
    if (block < 1 || block > 65536) ctx.Fail("attribute blocksize=" + std::to_string(block) + " must lie in [1, 65536]");
    d.m_BlockSize = static_cast<unsigned int>(block);
    const bool toSpace = ctx.OpType() == "DepthToSpace";
    if (toSpace || ctx.Opset() >= 28) {  // DepthToSpace-11 and SpaceToDepth-28 have a mode
        const std::string mode = ctx.GetString("mode", "DCR");
        if (mode == "CRD") d.m_ColumnRowCrd = true;
        else if (mode != "DCR") ctx.Fail("attribute mode='" + mode + "' is not supported (expected DCR or CRD)");
    }
    ctx.AddNodeLayer(toSpace ? LayerType::DepthToSpace : LayerType::SpaceToDepth, d, 1);
}

void ConvertOneHot(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(3, 3);
    ctx.ExpectOutputs(1, 1);
    OneHotDescriptor d;
    d.m_Axis = ctx.GetInt("axis", -1);
    // ONNX order: indices, depth, values; the layer takes indices, values and (when computed)
    // depth, which the core then needs constant (it sets the output shape).
    std::vector<IOutputSlot*> inputs = {&ctx.InputSlot(0), &ctx.InputSlot(2)};
    if (ctx.ConstantInput(1) != nullptr) {
        const std::vector<double> depth = ctx.ConstDoubles(1, "depth");
        if (depth.size() != 1) ctx.Fail("input 1 (depth) must hold one value, has " + std::to_string(depth.size()));
        if (!(depth[0] >= 1.0 && depth[0] < 4294967296.0)) {
            ctx.Fail("input 1 (depth) is " + std::to_string(depth[0]) + "; it must be at least 1 (and fit a dim)");
        }
        d.m_Depth = static_cast<int64_t>(std::trunc(depth[0]));
    } else {
        inputs.push_back(&ctx.InputSlot(1));
    }
    IConnectableLayer* layer = ctx.AddLayer(LayerType::OneHot, d, inputs, 1);
    ctx.SetOutput(0, layer->GetOutputSlot(0));
}

void ConvertEyeLike(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(1, 1);
    ctx.ExpectOutputs(1, 1);
    EyeLikeDescriptor d;
    d.m_K = ctx.GetInt("k", 0);
    if (const std::optional<int64_t> dtype = ctx.FindInt("dtype")) {
        const std::optional<DataType> type = FromOnnxDataType(static_cast<int32_t>(*dtype));
        if (!type) {
            ctx.Fail("attribute dtype=" + OnnxDataTypeName(static_cast<int32_t>(*dtype)) +
                     " names a data type Trellis does not support");
        }
        d.m_DataType = *type;
    }
    ctx.AddNodeLayer(LayerType::EyeLike, d, 1);
}

void ConvertHardmax(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(1, 1);
    ctx.ExpectOutputs(1, 1);
    SoftmaxDescriptor d;
    // As Softmax: before opset 13 the input is coerced to 2-D at `axis` (default 1).
    d.m_Coerce2d = ctx.Opset() < 13;
    d.m_Axis = ctx.ToInt(ctx.GetInt("axis", d.m_Coerce2d ? 1 : -1), "attribute axis");
    ctx.AddNodeLayer(LayerType::Hardmax, d, 1);
}

void ConvertTopK(OnnxNodeContext& ctx) {
    ctx.ExpectOutputs(2, 2);
    TopKDescriptor d;
    d.m_Axis = ctx.GetInt("axis", -1);
    d.m_Largest = ctx.GetBool("largest", true);  // largest, sorted: opset 11
    d.m_Sorted = ctx.GetBool("sorted", true);
    unsigned int slots = 1;
    if (ctx.Opset() < 10) {  // K an attribute before opset 10
        ctx.ExpectInputs(1, 1);
        d.m_K = ctx.GetRequiredInt("k");
    } else {
        ctx.ExpectInputs(2, 2);
        slots = ctx.ParamSlots(1);  // a constant K is folded; else the core reads it after folding
        if (slots == 1) {
            const std::vector<int64_t> k = ctx.ConstInts(1, "K");
            if (k.size() != 1) ctx.Fail("input 1 (K) must hold one value, holds " + std::to_string(k.size()));
            d.m_K = k[0];
        }
    }
    ctx.AddNodeLayer(LayerType::TopK, d, slots);
}

void ConvertGatherND(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(2, 2);
    ctx.ExpectOutputs(1, 1);
    GatherNDDescriptor d;
    d.m_BatchDims = ctx.GetInt("batch_dims", 0);  // opset 12
    ctx.AddNodeLayer(LayerType::GatherND, d, 2);
}

void ConvertScatterND(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(3, 3);
    ctx.ExpectOutputs(1, 1);
    ScatterNDDescriptor d;
    const std::string reduction = ctx.GetString("reduction", "none");  // opset 16
    if (reduction == "none") d.m_Reduction = ScatterReduction::None;
    else if (reduction == "add") d.m_Reduction = ScatterReduction::Add;
    else if (reduction == "mul") d.m_Reduction = ScatterReduction::Mul;
    else if (reduction == "max" && ctx.Opset() >= 18) d.m_Reduction = ScatterReduction::Max;
    else if (reduction == "min" && ctx.Opset() >= 18) d.m_Reduction = ScatterReduction::Min;
    else ctx.Fail("attribute reduction='" + reduction + "' is not supported (expected none, add or mul; max and min "
                  "from opset 18)");
    ctx.AddNodeLayer(LayerType::ScatterND, d, 3);
}

void ConvertReverseSequence(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(2, 2);
    ctx.ExpectOutputs(1, 1);
    ReverseSequenceDescriptor d;
    d.m_BatchAxis = ctx.GetInt("batch_axis", 1);
    d.m_TimeAxis = ctx.GetInt("time_axis", 0);
    ctx.AddNodeLayer(LayerType::ReverseSequence, d, 2);
}

}  // namespace trellis::onnximport
