// The ONNX converter table: one row per supported op_type of the default ONNX domain.
#include "OnnxConverters.hpp"

#include <algorithm>

namespace trellis::onnximport {

namespace {

// Alphabetical by op type.
constexpr OnnxConverterRow kConverters[] = {
    {"Abs", ConvertUnary},
    {"Add", ConvertBinary},
    {"AveragePool", ConvertAveragePool},
    {"BatchNormalization", ConvertBatchNormalization},
    {"Cast", ConvertCast},
    {"Clip", ConvertClip},
    {"Concat", ConvertConcat},
    {"Constant", ConvertConstant},
    {"ConstantOfShape", ConvertConstantOfShape},
    {"Conv", ConvertConv},
    {"ConvTranspose", ConvertConvTranspose},
    {"Div", ConvertBinary},
    {"Dropout", ConvertDropout},
    {"Elu", ConvertUnary},
    {"Equal", ConvertBinary},
    {"Erf", ConvertUnary},
    {"Exp", ConvertUnary},
    {"Expand", ConvertExpand},
    {"Flatten", ConvertFlatten},
    {"Gather", ConvertGather},
    {"Gelu", ConvertUnary},
    {"Gemm", ConvertGemm},
    {"GlobalAveragePool", ConvertGlobalPool},
    {"GlobalMaxPool", ConvertGlobalPool},
    {"Greater", ConvertBinary},
    {"GreaterOrEqual", ConvertBinary},
    {"HardSigmoid", ConvertUnary},
    {"HardSwish", ConvertUnary},
    {"Identity", ConvertIdentity},
    {"LayerNormalization", ConvertLayerNormalization},
    {"LeakyRelu", ConvertUnary},
    {"Less", ConvertBinary},
    {"LessOrEqual", ConvertBinary},
    {"Log", ConvertUnary},
    {"LogSoftmax", ConvertSoftmax},
    {"MatMul", ConvertMatMul},
    {"Max", ConvertMaxMin},
    {"MaxPool", ConvertMaxPool},
    {"Min", ConvertMaxMin},
    {"Mul", ConvertBinary},
    {"Neg", ConvertUnary},
    {"PRelu", ConvertPRelu},
    {"Pad", ConvertPad},
    {"Pow", ConvertBinary},
    {"Range", ConvertRange},
    {"Reciprocal", ConvertUnary},
    {"ReduceMax", ConvertReduce},
    {"ReduceMean", ConvertReduce},
    {"ReduceMin", ConvertReduce},
    {"ReduceSum", ConvertReduce},
    {"Relu", ConvertUnary},
    {"Reshape", ConvertReshape},
    {"Resize", ConvertResize},
    {"Shape", ConvertShape},
    {"Sigmoid", ConvertUnary},
    {"Slice", ConvertSlice},
    {"Softmax", ConvertSoftmax},
    {"Split", ConvertSplit},
    {"Sqrt", ConvertUnary},
    {"Squeeze", ConvertSqueeze},
    {"Sub", ConvertBinary},
    {"Tanh", ConvertUnary},
    {"Transpose", ConvertTranspose},
    {"Unsqueeze", ConvertSqueeze},
    {"Where", ConvertWhere},
};

}  // namespace

std::span<const OnnxConverterRow> GetOnnxConverterTable() { return kConverters; }

const OnnxConverterRow* FindOnnxConverter(const std::string& opType) {
    // ~65 rows, one lookup per node: a linear scan costs nothing next to the conversion itself.
    auto it = std::find_if(std::begin(kConverters), std::end(kConverters),
                           [&](const OnnxConverterRow& row) { return opType == row.m_OpType; });
    return it != std::end(kConverters) ? it : nullptr;
}

}  // namespace trellis::onnximport
