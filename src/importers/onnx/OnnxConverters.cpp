// The ONNX converter table: one row per supported op_type of the default ONNX domain.
#include "OnnxConverters.hpp"

#include <algorithm>

namespace trellis::onnximport {

namespace {

// Alphabetical by op type.
constexpr OnnxConverterRow kConverters[] = {
    {"Abs", ConvertUnary},
    {"Acos", ConvertUnary},
    {"Acosh", ConvertUnary},
    {"Add", ConvertBinary},
    {"AffineGrid", ConvertAffineGrid},
    {"And", ConvertBinary},
    {"ArgMax", ConvertArgMinMax},
    {"ArgMin", ConvertArgMinMax},
    {"Asin", ConvertUnary},
    {"Asinh", ConvertUnary},
    {"Atan", ConvertUnary},
    {"Atanh", ConvertUnary},
    {"Attention", ConvertAttention},
    {"AveragePool", ConvertAveragePool},
    {"BatchNormalization", ConvertBatchNormalization},
    {"BitCast", ConvertBitCast},
    {"BitShift", ConvertBitShift},
    {"BitwiseAnd", ConvertBinary},
    {"BitwiseNot", ConvertUnary},
    {"BitwiseOr", ConvertBinary},
    {"BitwiseXor", ConvertBinary},
    {"BlackmanWindow", ConvertWindow},
    {"Cast", ConvertCast},
    {"CastLike", ConvertCastLike},
    {"CausalConvWithState", ConvertCausalConvWithState},
    {"Ceil", ConvertUnary},
    {"CenterCropPad", ConvertCenterCropPad},
    {"Celu", ConvertUnary},
    {"Clip", ConvertClip},
    {"Col2Im", ConvertCol2Im},
    {"Compress", ConvertCompress},
    {"Concat", ConvertConcat},
    {"Constant", ConvertConstant},
    {"ConstantOfShape", ConvertConstantOfShape},
    {"Conv", ConvertConv},
    {"ConvInteger", ConvertMatMulInteger},
    {"ConvTranspose", ConvertConvTranspose},
    {"Cos", ConvertUnary},
    {"Cosh", ConvertUnary},
    {"CumProd", ConvertCumSum},
    {"CumSum", ConvertCumSum},
    {"DFT", ConvertDft},
    {"DeformConv", ConvertDeformConv},
    {"DepthToSpace", ConvertSpaceDepth},
    {"DequantizeLinear", ConvertQuantizeLinear},
    {"Det", ConvertDet},
    {"Div", ConvertBinary},
    {"Dropout", ConvertDropout},
    {"DynamicQuantizeLinear", ConvertDynamicQuantizeLinear},
    {"Einsum", ConvertEinsum},
    {"Elu", ConvertUnary},
    {"Equal", ConvertBinary},
    {"Erf", ConvertUnary},
    {"Exp", ConvertUnary},
    {"Expand", ConvertExpand},
    {"EyeLike", ConvertEyeLike},
    {"Flatten", ConvertFlatten},
    {"Floor", ConvertUnary},
    {"GRU", ConvertRecurrent},
    {"Gather", ConvertGather},
    {"GatherElements", ConvertGatherElements},
    {"GatherND", ConvertGatherND},
    {"Gelu", ConvertUnary},
    {"Gemm", ConvertGemm},
    {"GlobalAveragePool", ConvertGlobalPool},
    {"GlobalLpPool", ConvertLpPool},
    {"GlobalMaxPool", ConvertGlobalPool},
    {"Greater", ConvertBinary},
    {"GreaterOrEqual", ConvertBinary},
    {"GridSample", ConvertGridSample},
    {"GroupNormalization", ConvertGroupNormalization},
    {"HammingWindow", ConvertWindow},
    {"HannWindow", ConvertWindow},
    {"HardSigmoid", ConvertUnary},
    {"HardSwish", ConvertUnary},
    {"Hardmax", ConvertHardmax},
    {"Identity", ConvertIdentity},
    {"InstanceNormalization", ConvertInstanceNormalization},
    {"IsInf", ConvertUnary},
    {"IsNaN", ConvertUnary},
    {"LRN", ConvertLrn},
    {"LpNormalization", ConvertLpNormalization},
    {"LpPool", ConvertLpPool},
    {"LSTM", ConvertRecurrent},
    {"LayerNormalization", ConvertLayerNormalization},
    {"LeakyRelu", ConvertUnary},
    {"Less", ConvertBinary},
    {"LessOrEqual", ConvertBinary},
    {"LinearAttention", ConvertLinearAttention},
    {"Log", ConvertUnary},
    {"LogSoftmax", ConvertSoftmax},
    {"Loop", ConvertLoop},
    {"MatMul", ConvertMatMul},
    {"MatMulInteger", ConvertMatMulInteger},
    {"Max", ConvertMaxMin},
    {"MaxPool", ConvertMaxPool},
    {"MaxUnpool", ConvertMaxUnpool},
    {"Mean", ConvertMaxMin},
    {"MelWeightMatrix", ConvertMelWeightMatrix},
    {"MeanVarianceNormalization", ConvertMeanVarianceNormalization},
    {"Min", ConvertMaxMin},
    {"Mish", ConvertUnary},
    {"Mod", ConvertMod},
    {"Mul", ConvertBinary},
    {"Neg", ConvertUnary},
    {"NegativeLogLikelihoodLoss", ConvertNegativeLogLikelihoodLoss},
    {"NonMaxSuppression", ConvertNonMaxSuppression},
    {"NonZero", ConvertNonZero},
    {"Not", ConvertUnary},
    {"OneHot", ConvertOneHot},
    {"Or", ConvertBinary},
    {"PRelu", ConvertPRelu},
    {"Pad", ConvertPad},
    {"Pow", ConvertBinary},
    {"QLinearConv", ConvertQLinear},
    {"QLinearMatMul", ConvertQLinear},
    {"QuantizeLinear", ConvertQuantizeLinear},
    {"RNN", ConvertRecurrent},
    {"Range", ConvertRange},
    {"Reciprocal", ConvertUnary},
    {"ReduceL1", ConvertReduce},
    {"ReduceL2", ConvertReduce},
    {"ReduceLogSum", ConvertReduce},
    {"ReduceLogSumExp", ConvertReduce},
    {"ReduceMax", ConvertReduce},
    {"ReduceMean", ConvertReduce},
    {"ReduceMin", ConvertReduce},
    {"ReduceProd", ConvertReduce},
    {"ReduceSum", ConvertReduce},
    {"ReduceSumSquare", ConvertReduce},
    {"Relu", ConvertUnary},
    {"Reshape", ConvertReshape},
    {"RMSNormalization", ConvertRmsNormalization},
    {"Resize", ConvertResize},
    {"RoiAlign", ConvertRoiAlign},
    {"ReverseSequence", ConvertReverseSequence},
    {"RotaryEmbedding", ConvertRotaryEmbedding},
    {"Round", ConvertUnary},
    {"STFT", ConvertStft},
    {"Scatter", ConvertScatterElements},
    {"ScatterElements", ConvertScatterElements},
    {"ScatterND", ConvertScatterND},
    {"Selu", ConvertUnary},
    {"Shape", ConvertShape},
    {"Shrink", ConvertUnary},
    {"Sigmoid", ConvertUnary},
    {"Sign", ConvertUnary},
    {"Sin", ConvertUnary},
    {"Sinh", ConvertUnary},
    {"Size", ConvertSize},
    {"Slice", ConvertSlice},
    {"Softmax", ConvertSoftmax},
    {"SoftmaxCrossEntropyLoss", ConvertSoftmaxCrossEntropyLoss},
    {"Softplus", ConvertUnary},
    {"Softsign", ConvertUnary},
    {"SpaceToDepth", ConvertSpaceDepth},
    {"Split", ConvertSplit},
    {"Sqrt", ConvertUnary},
    {"Squeeze", ConvertSqueeze},
    {"Sub", ConvertBinary},
    {"Sum", ConvertMaxMin},
    {"SwiGLU", ConvertSwiGlu},
    {"Swish", ConvertUnary},
    {"Tan", ConvertUnary},
    {"Tanh", ConvertUnary},
    {"TensorScatter", ConvertTensorScatter},
    {"TfIdfVectorizer", ConvertTfIdfVectorizer},
    {"ThresholdedRelu", ConvertUnary},
    {"Tile", ConvertTile},
    {"TopK", ConvertTopK},
    {"Transpose", ConvertTranspose},
    {"Trilu", ConvertTrilu},
    {"Unique", ConvertUnique},
    {"Unsqueeze", ConvertSqueeze},
    {"Upsample", ConvertUpsample},
    {"Where", ConvertWhere},
    {"Xor", ConvertBinary},
};

}  // namespace

void CheckLegacyForm(OnnxNodeContext& ctx) {
    // consumed_inputs (opsets 1-5) marks inputs an implementation may overwrite: it never changes results.
    ctx.IgnoreAttributes({"consumed_inputs"});
    const std::string& op = ctx.OpType();
    const int64_t opset = ctx.Opset();
    if (op == "Tile" && opset < 6) {
        ctx.Fail("Tile before opset 6 (inputs 'tiles' and 'axis') is not supported; Trellis reads Tile-6's 'repeats'");
    }
    if (op == "Cast" && opset < 6) {
        ctx.Fail("Cast before opset 6 (attribute 'to' as a string) is not supported; Trellis reads Cast-6's integer 'to'");
    }
    if (op == "Pad" && opset < 2) {
        ctx.Fail("Pad-1 (attribute 'paddings') is not supported; Trellis reads Pad-2's 'pads'");
    }
    if (op == "Split" && opset < 2 && ctx.NumInputs() > 1) {
        ctx.Fail("Split-1 with the split sizes as input 1 is not supported; give them as the 'split' attribute");
    }
    if (op == "BatchNormalization" || op == "Dropout") {
        // is_test (opsets 1-6) defaults to 0, training mode: Y then uses batch statistics (or a random mask).
        if (!ctx.GetBool("is_test", false)) {
            ctx.Fail("attribute is_test=0 (training mode, the default before opset 7) is not supported; only "
                     "is_test=1 (inference)");
        }
    }
    if (op == "Gemm") {
        // broadcast (opsets 1-6): 1 lets C broadcast to A*B, 0 requires C's shape to equal it; the
        // unidirectional broadcast Trellis applies gives the same result in both cases.
        ctx.IgnoreAttributes({"broadcast"});
    }
}

std::span<const OnnxConverterRow> GetOnnxConverterTable() { return kConverters; }

const OnnxConverterRow* FindOnnxConverter(const std::string& opType) {
    // ~110 rows, one lookup per node: a linear scan costs nothing next to the conversion itself.
    auto it = std::find_if(std::begin(kConverters), std::end(kConverters),
                           [&](const OnnxConverterRow& row) { return opType == row.m_OpType; });
    return it != std::end(kConverters) ? it : nullptr;
}

}  // namespace trellis::onnximport
