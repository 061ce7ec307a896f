// ONNX converters: convolution, matrix products (and Einsum), pooling and unpooling,
// normalization, softmax.
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
    const int64_t storageOrder = ctx.GetInt("storage_order", 0);
    if (storageOrder != 0 && storageOrder != 1) {
        ctx.Fail("attribute storage_order=" + std::to_string(storageOrder) + " must be 0 (row major) or 1 (column major)");
    }
    PoolingDescriptor d;
    d.m_Algorithm = PoolingAlgorithm::Max;
    d.m_StorageOrder = static_cast<unsigned int>(storageOrder);
    ReadPoolingAttributes(ctx, d);
    ctx.AddNodeLayer(LayerType::Pooling, d, 1, DataType::Signed64, ctx.IsOutputUsed(1) ? 2 : 1);
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

namespace {

// A scalar `value` of `like`'s type (a ConstantOfShape, folded, cast like `like` by inference).
IOutputSlot& ScalarLike(OnnxNodeContext& ctx, double value, IOutputSlot& like, const std::string& suffix) {
    ConstantOfShapeDescriptor d;
    d.m_Value = value;
    IOutputSlot& f = ctx.AddLayer(LayerType::ConstantOfShape, d, {}, 1, suffix + "_float")->GetOutputSlot(0);
    return ctx.AddLayer(LayerType::Cast, CastDescriptor{}, {&f, &like}, 1, suffix)->GetOutputSlot(0);
}

IOutputSlot& BinaryLayer(OnnxNodeContext& ctx, BinaryOperation op, IOutputSlot& a, IOutputSlot& b, const std::string& suffix) {
    return ctx.AddLayer(LayerType::ElementwiseBinary, ElementwiseBinaryDescriptor{op}, {&a, &b}, 1, suffix)->GetOutputSlot(0);
}

}  // namespace

void ConvertLpPool(OnnxNodeContext& ctx) {
    // (sum over each window of |x|^p)^(1/p): |x|^p, an average pooling that counts the padding
    // (which adds zeros) times the window's size, then the p-th root.
    ctx.ExpectInputs(1, 1);
    ctx.ExpectOutputs(1, 1);
    const int64_t p = ctx.GetInt("p", 2);
    if (p < 1) ctx.Fail("attribute p=" + std::to_string(p) + " must be at least 1");
    PoolingDescriptor d;
    d.m_Algorithm = PoolingAlgorithm::Average;
    d.m_CountIncludePad = true;
    const bool global = ctx.OpType() == "GlobalLpPool";
    double window = 1.0;
    if (global) {
        d.m_Global = true;
        if (!ctx.InputSlot(0).IsTensorInfoSet() || !ctx.InputSlot(0).GetTensorInfo().GetShape().AreAllDimensionsSpecified()) {
            ctx.Fail("GlobalLpPool needs X's shape when the model is imported (its window is all of X's spatial dims)");
        }
        const TensorShape& xs = ctx.InputSlot(0).GetTensorInfo().GetShape();
        for (unsigned int i = 2; i < xs.GetNumDimensions(); ++i) window *= xs[i];
    } else {
        ReadPoolingAttributes(ctx, d);
        if (d.m_CeilMode) ctx.Fail("attribute ceil_mode=1 is not supported for LpPool (a partial window's size would differ)");
        for (unsigned int k : d.m_KernelShape) window *= k;
    }
    IOutputSlot& x = ctx.InputSlot(0);
    IOutputSlot& absX = ctx.AddLayer(LayerType::ElementwiseUnary, ElementwiseUnaryDescriptor{UnaryOperation::Abs, 0.0f, 0.0f},
                                     {&x}, 1, "/abs")->GetOutputSlot(0);
    IOutputSlot& powered = BinaryLayer(ctx, BinaryOperation::Pow, absX, ScalarLike(ctx, static_cast<double>(p), x, "/p"), "/pow");
    IOutputSlot& mean = ctx.AddLayer(LayerType::Pooling, d, {&powered}, 1, "/window_mean")->GetOutputSlot(0);
    IOutputSlot& sum = BinaryLayer(ctx, BinaryOperation::Mul, mean, ScalarLike(ctx, window, x, "/window_size"), "/window_sum");
    IConnectableLayer* y = ctx.AddLayer(LayerType::ElementwiseBinary, ElementwiseBinaryDescriptor{BinaryOperation::Pow},
                                        {&sum, &ScalarLike(ctx, 1.0 / static_cast<double>(p), x, "/inverse_p")});
    ctx.SetOutput(0, y->GetOutputSlot(0));
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
    BatchNormalizationDescriptor d;
    // training_mode (opset 14+): Y from the batch statistics; outputs 1 and 2 the running mean and
    // variance. Before opset 14 the outputs past Y are training statistics of a form Trellis does not run.
    d.m_Training = ctx.GetBool("training_mode", false);
    if (ctx.Opset() < 14) {
        ctx.RejectUsedOutputs(1, "(a training statistic of BatchNormalization before opset 14) is used; only inference "
                                 "BatchNormalization is supported before opset 14");
    } else if (!d.m_Training) {
        ctx.RejectUsedOutputs(1, "(running mean or variance) is used, but training_mode=0 has only output Y");
    }
    d.m_Momentum = ctx.GetFloat("momentum", 0.9f);
    const int64_t spatial = ctx.GetInt("spatial", 1);  // opsets 7-8
    if (spatial != 1) {
        ctx.Fail("attribute spatial=" + std::to_string(spatial) + " is not supported (only 1: per-channel statistics)");
    }
    d.m_Eps = ctx.GetFloat("epsilon", 1e-5f);
    const bool statistics = d.m_Training && (ctx.IsOutputUsed(1) || ctx.IsOutputUsed(2));
    ctx.AddNodeLayer(LayerType::BatchNormalization, d, 5, DataType::Signed64, statistics ? 3 : 1);
}

void ConvertLayerNormalization(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(2, 3);
    ctx.ExpectOutputs(1, 3);
    // stash_type picks the precision of the statistics; Trellis computes them at least in float.
    ctx.IgnoreAttributes({"stash_type"});
    LayerNormalizationDescriptor d;
    d.m_Axis = ctx.ToInt(ctx.GetInt("axis", -1), "attribute axis");
    d.m_Eps = ctx.GetFloat("epsilon", 1e-5f);
    const int outputs = ctx.IsOutputUsed(2) ? 3 : ctx.IsOutputUsed(1) ? 2 : 1;  // Y, Mean, InvStdDev
    ctx.AddNodeLayer(LayerType::LayerNormalization, d, ctx.HasInput(2) ? 3 : 2, DataType::Signed64, outputs);
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

void ConvertEinsum(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(1, 1024);
    ctx.ExpectOutputs(1, 1);
    EinsumDescriptor d;
    const std::optional<std::string> equation = ctx.FindString("equation");
    if (!equation) ctx.Fail("required attribute 'equation' is missing");
    d.m_Equation = *equation;
    ctx.AddNodeLayer(LayerType::Einsum, d, ctx.NumInputs());
}

void ConvertMaxUnpool(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(2, 3);
    ctx.ExpectOutputs(1, 1);
    MaxUnpoolDescriptor d;
    const std::optional<std::vector<int64_t>> kernel = ctx.FindInts("kernel_shape");
    if (!kernel) ctx.Fail("required attribute 'kernel_shape' is missing");
    d.m_KernelShape = ctx.ToUnsigned(*kernel, "attribute kernel_shape", 1);
    d.m_Strides = ctx.ToUnsigned(ctx.GetInts("strides"), "attribute strides", 1);
    ReadPads(ctx, PaddingMode::Explicit, d.m_PadsBegin, d.m_PadsEnd);
    // output_shape: folded when constant, else the core reads it after folding.
    const unsigned int slots = ctx.ParamSlots(2);
    if (slots == 2 && ctx.HasInput(2)) d.m_OutputShape = ctx.ConstInts(2, "output_shape");
    ctx.AddNodeLayer(LayerType::MaxUnpool, d, slots);
}

void ConvertInstanceNormalization(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(3, 3);
    ctx.ExpectOutputs(1, 1);
    InstanceNormalizationDescriptor d;
    d.m_Eps = ctx.GetFloat("epsilon", 1e-5f);
    ctx.AddNodeLayer(LayerType::InstanceNormalization, d, 3);
}

void ConvertLrn(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(1, 1);
    ctx.ExpectOutputs(1, 1);
    LrnDescriptor d;
    d.m_Alpha = ctx.GetFloat("alpha", 1e-4f);
    d.m_Beta = ctx.GetFloat("beta", 0.75f);
    d.m_Bias = ctx.GetFloat("bias", 1.0f);
    d.m_Size = ctx.ToUnsigned({ctx.GetRequiredInt("size")}, "attribute size", 1)[0];
    ctx.AddNodeLayer(LayerType::Lrn, d, 1);
}

void ConvertMeanVarianceNormalization(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(1, 1);
    ctx.ExpectOutputs(1, 1);
    MeanVarianceNormalizationDescriptor d;
    d.m_Axes = ctx.GetInts("axes");
    if (d.m_Axes.empty()) d.m_Axes = {0, 2, 3};  // the ONNX default
    ctx.AddNodeLayer(LayerType::MeanVarianceNormalization, d, 1);
}

}  // namespace trellis::onnximport
