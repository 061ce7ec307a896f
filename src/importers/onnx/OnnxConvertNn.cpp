// ONNX converters: convolution, matrix products, pooling, normalization, softmax.
#include "OnnxConverters.hpp"

#include <algorithm>

namespace trellis::onnximport {

namespace {

PaddingMode ReadAutoPad(OnnxNodeContext& ctx) {
    const std::string autoPad = ctx.GetString("auto_pad", "NOTSET");
    if (autoPad == "NOTSET") return PaddingMode::Explicit;
    if (autoPad == "SAME_UPPER") return PaddingMode::SameUpper;
    if (autoPad == "SAME_LOWER") return PaddingMode::SameLower;
    if (autoPad == "VALID") return PaddingMode::Valid;
    ctx.Fail("attribute auto_pad='" + autoPad + "' is not supported (expected NOTSET, SAME_UPPER, SAME_LOWER or VALID)");
}

// ONNX pads are [x1_begin, x2_begin, ..., x1_end, x2_end, ...].
void ReadPads(OnnxNodeContext& ctx, PaddingMode autoPad, std::vector<unsigned int>& begins,
              std::vector<unsigned int>& ends) {
    const std::vector<int64_t> pads = ctx.GetInts("pads");
    if (pads.empty()) return;
    if (pads.size() % 2 != 0) ctx.Fail("attribute pads=" + FormatList(pads) + " must have an even number of values");
    const bool allZero = std::all_of(pads.begin(), pads.end(), [](int64_t p) { return p == 0; });
    if (autoPad != PaddingMode::Explicit && !allZero) {
        ctx.Fail("attribute pads=" + FormatList(pads) + " cannot be combined with auto_pad other than NOTSET");
    }
    const std::vector<unsigned int> values = ctx.ToUnsigned(pads, "attribute pads", 0);
    begins.assign(values.begin(), values.begin() + values.size() / 2);
    ends.assign(values.begin() + values.size() / 2, values.end());
}

void ReadPoolingAttributes(OnnxNodeContext& ctx, PoolingDescriptor& d) {
    const std::optional<std::vector<int64_t>> kernel = ctx.FindInts("kernel_shape");
    if (!kernel) ctx.Fail("required attribute 'kernel_shape' is missing");
    d.m_KernelShape = ctx.ToUnsigned(*kernel, "attribute kernel_shape", 1);
    d.m_Strides = ctx.ToUnsigned(ctx.GetInts("strides"), "attribute strides", 1);
    d.m_Dilations = ctx.ToUnsigned(ctx.GetInts("dilations"), "attribute dilations", 1);
    d.m_AutoPad = ReadAutoPad(ctx);
    ReadPads(ctx, d.m_AutoPad, d.m_PadsBegin, d.m_PadsEnd);
    d.m_CeilMode = ctx.GetBool("ceil_mode", false);
}

}  // namespace

void ReadConvolutionAttributes(OnnxNodeContext& ctx, ConvolutionDescriptor& d) {
    d.m_KernelShape = ctx.ToUnsigned(ctx.GetInts("kernel_shape"), "attribute kernel_shape", 1);
    d.m_Strides = ctx.ToUnsigned(ctx.GetInts("strides"), "attribute strides", 1);
    d.m_Dilations = ctx.ToUnsigned(ctx.GetInts("dilations"), "attribute dilations", 1);
    d.m_AutoPad = ReadAutoPad(ctx);
    ReadPads(ctx, d.m_AutoPad, d.m_PadsBegin, d.m_PadsEnd);
    const int64_t group = ctx.GetInt("group", 1);
    d.m_Groups = ctx.ToUnsigned({group}, "attribute group", 1)[0];
}

void ConvertConv(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(2, 3);
    ctx.ExpectOutputs(1, 1);
    ConvolutionDescriptor d;
    ReadConvolutionAttributes(ctx, d);
    ctx.AddNodeLayer(LayerType::Convolution, d, ctx.HasInput(2) ? 3 : 2);
}

void ConvertConvTranspose(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(2, 3);
    ctx.ExpectOutputs(1, 1);
    ConvolutionDescriptor d;
    ReadConvolutionAttributes(ctx, d);
    d.m_OutputPadding = ctx.ToUnsigned(ctx.GetInts("output_padding"), "attribute output_padding", 0);
    d.m_OutputShape = ctx.ToUnsigned(ctx.GetInts("output_shape"), "attribute output_shape", 0);
    ctx.AddNodeLayer(LayerType::ConvolutionTranspose, d, ctx.HasInput(2) ? 3 : 2);
}

void ConvertGemm(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(2, 3);  // C is required before opset 11; accepting it optional everywhere is harmless
    ctx.ExpectOutputs(1, 1);
    GemmDescriptor d;
    d.m_Alpha = ctx.GetFloat("alpha", 1.0f);
    d.m_Beta = ctx.GetFloat("beta", 1.0f);
    d.m_TransA = ctx.GetBool("transA", false);
    d.m_TransB = ctx.GetBool("transB", false);
    ctx.AddNodeLayer(LayerType::Gemm, d, ctx.HasInput(2) ? 3 : 2);
}

void ConvertMatMul(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(2, 2);
    ctx.ExpectOutputs(1, 1);
    ctx.AddNodeLayer(LayerType::MatMul, EmptyDescriptor{}, 2);
}

void ConvertMaxPool(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(1, 1);
    ctx.ExpectOutputs(1, 2);
    ctx.RejectUsedOutputs(1, "(Indices) is used; Trellis's MaxPool does not produce indices");
    const int64_t storageOrder = ctx.GetInt("storage_order", 0);
    if (storageOrder != 0) {
        ctx.Fail("attribute storage_order=" + std::to_string(storageOrder) + " is not supported (only 0, row major)");
    }
    PoolingDescriptor d;
    d.m_Algorithm = PoolingAlgorithm::Max;
    ReadPoolingAttributes(ctx, d);
    ctx.AddNodeLayer(LayerType::Pooling, d, 1);
}

void ConvertAveragePool(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(1, 1);
    ctx.ExpectOutputs(1, 1);
    PoolingDescriptor d;
    d.m_Algorithm = PoolingAlgorithm::Average;
    ReadPoolingAttributes(ctx, d);
    d.m_CountIncludePad = ctx.GetBool("count_include_pad", false);
    ctx.AddNodeLayer(LayerType::Pooling, d, 1);
}

void ConvertGlobalPool(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(1, 1);
    ctx.ExpectOutputs(1, 1);
    PoolingDescriptor d;
    d.m_Algorithm = ctx.OpType() == "GlobalMaxPool" ? PoolingAlgorithm::Max : PoolingAlgorithm::Average;
    d.m_Global = true;
    ctx.AddNodeLayer(LayerType::Pooling, d, 1);
}

void ConvertBatchNormalization(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(5, 5);
    ctx.ExpectOutputs(1, 5);
    ctx.RejectUsedOutputs(1, "(a training statistic) is used; only inference BatchNormalization is supported");
    if (ctx.GetBool("training_mode", false)) {
        ctx.Fail("attribute training_mode=1 is not supported (inference only)");
    }
    const int64_t spatial = ctx.GetInt("spatial", 1);  // opsets 7-8
    if (spatial != 1) {
        ctx.Fail("attribute spatial=" + std::to_string(spatial) + " is not supported (only 1: per-channel statistics)");
    }
    ctx.IgnoreAttributes({"momentum"});  // only updates the running statistics while training
    BatchNormalizationDescriptor d;
    d.m_Eps = ctx.GetFloat("epsilon", 1e-5f);
    ctx.AddNodeLayer(LayerType::BatchNormalization, d, 5);
}

void ConvertLayerNormalization(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(2, 3);
    ctx.ExpectOutputs(1, 3);
    ctx.RejectUsedOutputs(1, "(Mean or InvStdDev) is used; only output 0 of LayerNormalization is supported");
    // stash_type picks the precision of the statistics; Trellis computes them at least in float.
    ctx.IgnoreAttributes({"stash_type"});
    LayerNormalizationDescriptor d;
    d.m_Axis = ctx.ToInt(ctx.GetInt("axis", -1), "attribute axis");
    d.m_Eps = ctx.GetFloat("epsilon", 1e-5f);
    ctx.AddNodeLayer(LayerType::LayerNormalization, d, ctx.HasInput(2) ? 3 : 2);
}

void ConvertSoftmax(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(1, 1);
    ctx.ExpectOutputs(1, 1);
    SoftmaxDescriptor d;
    d.m_Log = ctx.OpType() == "LogSoftmax";
    // Before opset 13 the input is coerced to 2-D at `axis` (default 1) and normalized over all
    // trailing dims together; from 13 on it is a plain per-axis softmax (default -1).
    d.m_Coerce2d = ctx.Opset() < 13;
    d.m_Axis = ctx.ToInt(ctx.GetInt("axis", d.m_Coerce2d ? 1 : -1), "attribute axis");
    ctx.AddNodeLayer(LayerType::Softmax, d, 1);
}

}  // namespace trellis::onnximport
