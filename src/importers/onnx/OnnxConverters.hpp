// Internal: the ONNX converter table — one row per ONNX op_type, each pointing at a small
// function that turns one node into Trellis layers through OnnxNodeContext.
//
// A converter validates input/output counts, reads every attribute it understands (the driver
// rejects the rest), folds constant parameter inputs into the descriptor, refuses anything it
// cannot represent with ctx.Fail("<attribute/input> ... <rule>"), and registers every used output.
//
// Opsets: the forms of opsets 1 to IOnnxParser::kHighestSupportedOpset are handled (each converter
// branches on ctx.Opset() where an op's form changed; CheckLegacyForm handles the attributes
// common to opsets below 7). An attribute a converter does not read is refused by name, a new
// attribute value by the converter's value check.
#pragma once

#include "OnnxNodeContext.hpp"

#include <trellis/OnnxParser.hpp>

#include <span>
#include <string>

namespace trellis::onnximport {

using OnnxConverterFunction = void (*)(OnnxNodeContext&);

struct OnnxConverterRow {
    const char* m_OpType;
    OnnxConverterFunction m_Convert;
};

/// A subgraph (a Loop body) converted into a network of its own (OnnxParser.cpp). Its Input
/// layers have binding ids 0.. for the subgraph's inputs, then one for each tensor of the
/// enclosing graphs it reads that is not a constant (m_OuterValues: their names, in binding order;
/// outer constants are copied in instead). Its Output layers have binding ids 0.. for its outputs.
struct OnnxSubgraph {
    INetworkPtr m_Network{nullptr, &INetwork::Destroy};
    std::vector<BindingPointInfo> m_Inputs;
    std::vector<BindingPointInfo> m_Outputs;
    std::vector<std::string> m_OuterValues;
};
/// Converts `graph` in the scope of `parent` (the graph of the node that holds it); outer values
/// get binding ids from `firstOuterBinding` on. Errors are ParseExceptions starting with `label`
/// (the node that holds the subgraph: "model.onnx: node 'loop' (Loop, opset 11) body").
OnnxSubgraph BuildOnnxSubgraph(const onnx::GraphProto& graph, const std::string& label, OnnxGraphState& parent,
                               LayerBindingId firstOuterBinding, int64_t opset);

/// The row for `opType` (default ONNX domain), or nullptr.
const OnnxConverterRow* FindOnnxConverter(const std::string& opType);
/// Every row, in table order.
std::span<const OnnxConverterRow> GetOnnxConverterTable();

// Converter functions, grouped by family (files OnnxConvert<Family>.cpp).
// OnnxConvertNn.cpp: convolution, matrix products, pooling, normalization, softmax.
void ConvertConv(OnnxNodeContext& ctx);
void ConvertConvTranspose(OnnxNodeContext& ctx);
void ConvertGemm(OnnxNodeContext& ctx);
void ConvertMatMul(OnnxNodeContext& ctx);
void ConvertMaxPool(OnnxNodeContext& ctx);
void ConvertAveragePool(OnnxNodeContext& ctx);
void ConvertGlobalPool(OnnxNodeContext& ctx);          // GlobalAveragePool, GlobalMaxPool
void ConvertLpPool(OnnxNodeContext& ctx);              // LpPool, GlobalLpPool
void ConvertBatchNormalization(OnnxNodeContext& ctx);
void ConvertLayerNormalization(OnnxNodeContext& ctx);
void ConvertSoftmax(OnnxNodeContext& ctx);             // Softmax, LogSoftmax
void ConvertEinsum(OnnxNodeContext& ctx);
void ConvertMaxUnpool(OnnxNodeContext& ctx);
void ConvertInstanceNormalization(OnnxNodeContext& ctx);
void ConvertLrn(OnnxNodeContext& ctx);
void ConvertMeanVarianceNormalization(OnnxNodeContext& ctx);
// OnnxConvertElementwise.cpp
void ConvertBinary(OnnxNodeContext& ctx);              // Add Sub Mul Div Pow, comparisons
void ConvertMaxMin(OnnxNodeContext& ctx);              // variadic Max, Min, Sum, Mean
void ConvertMod(OnnxNodeContext& ctx);
void ConvertCastLike(OnnxNodeContext& ctx);
void ConvertUnary(OnnxNodeContext& ctx);               // Relu, Sigmoid, Gelu, ...
void ConvertClip(OnnxNodeContext& ctx);
void ConvertPRelu(OnnxNodeContext& ctx);
void ConvertWhere(OnnxNodeContext& ctx);
void ConvertCast(OnnxNodeContext& ctx);
void ConvertBitCast(OnnxNodeContext& ctx);
void ConvertSwiGlu(OnnxNodeContext& ctx);
void ConvertIdentity(OnnxNodeContext& ctx);
void ConvertDropout(OnnxNodeContext& ctx);
// OnnxConvertShape.cpp: ops that move or reshape data.
void ConvertConcat(OnnxNodeContext& ctx);
void ConvertSplit(OnnxNodeContext& ctx);
void ConvertSlice(OnnxNodeContext& ctx);
void ConvertReshape(OnnxNodeContext& ctx);
void ConvertFlatten(OnnxNodeContext& ctx);
void ConvertSqueeze(OnnxNodeContext& ctx);             // Squeeze, Unsqueeze
void ConvertTranspose(OnnxNodeContext& ctx);
void ConvertGather(OnnxNodeContext& ctx);
void ConvertExpand(OnnxNodeContext& ctx);
void ConvertPad(OnnxNodeContext& ctx);
void ConvertCenterCropPad(OnnxNodeContext& ctx);
void ConvertResize(OnnxNodeContext& ctx);
void ConvertUpsample(OnnxNodeContext& ctx);         // as Resize-10 (opsets 7-9)
// OnnxConvertMisc.cpp: reductions, shape queries, generators, constants.
void ConvertReduce(OnnxNodeContext& ctx);              // ReduceMean/Sum/Max/Min/L1/L2/Prod/LogSum/LogSumExp/SumSquare
void ConvertShape(OnnxNodeContext& ctx);
void ConvertConstantOfShape(OnnxNodeContext& ctx);
void ConvertRange(OnnxNodeContext& ctx);
void ConvertConstant(OnnxNodeContext& ctx);
// OnnxConvertIndexing.cpp: index and arrangement ops.
void ConvertArgMinMax(OnnxNodeContext& ctx);           // ArgMax, ArgMin
void ConvertTrilu(OnnxNodeContext& ctx);
void ConvertSize(OnnxNodeContext& ctx);
void ConvertGatherElements(OnnxNodeContext& ctx);
void ConvertScatterElements(OnnxNodeContext& ctx);     // ScatterElements, Scatter (opsets 9-10)
void ConvertTile(OnnxNodeContext& ctx);
void ConvertCumSum(OnnxNodeContext& ctx);
void ConvertSpaceDepth(OnnxNodeContext& ctx);          // DepthToSpace, SpaceToDepth
void ConvertOneHot(OnnxNodeContext& ctx);
void ConvertEyeLike(OnnxNodeContext& ctx);
void ConvertHardmax(OnnxNodeContext& ctx);
// OnnxConvertDataDependent.cpp: ops whose output shapes depend on input values.
void ConvertNonZero(OnnxNodeContext& ctx);
void ConvertCompress(OnnxNodeContext& ctx);
void ConvertUnique(OnnxNodeContext& ctx);
void ConvertNonMaxSuppression(OnnxNodeContext& ctx);
void ConvertRecurrent(OnnxNodeContext& ctx);            // LSTM, GRU, RNN
// OnnxConvertLoss.cpp
void ConvertNegativeLogLikelihoodLoss(OnnxNodeContext& ctx);
void ConvertSoftmaxCrossEntropyLoss(OnnxNodeContext& ctx);  // LogSoftmax + NegativeLogLikelihoodLoss
// OnnxConvertQuantization.cpp
void ConvertQuantizeLinear(OnnxNodeContext& ctx);      // QuantizeLinear, DequantizeLinear
void ConvertDynamicQuantizeLinear(OnnxNodeContext& ctx);
void ConvertMatMulInteger(OnnxNodeContext& ctx);       // MatMulInteger, ConvInteger
void ConvertQLinear(OnnxNodeContext& ctx);             // QLinearMatMul, QLinearConv
void ConvertBitShift(OnnxNodeContext& ctx);

// Conv's attributes (kernel_shape, strides, dilations, auto_pad, pads, group), shared by the
// converters of Conv, ConvTranspose, ConvInteger and QLinearConv.
void ReadConvolutionAttributes(OnnxNodeContext& ctx, ConvolutionDescriptor& d);
// OnnxConvertSignal.cpp: signal processing, feature extraction and sampling.
void ConvertWindow(OnnxNodeContext& ctx);               // HannWindow, HammingWindow, BlackmanWindow
void ConvertDft(OnnxNodeContext& ctx);
void ConvertStft(OnnxNodeContext& ctx);
void ConvertMelWeightMatrix(OnnxNodeContext& ctx);
void ConvertTfIdfVectorizer(OnnxNodeContext& ctx);     // integer input only
void ConvertGridSample(OnnxNodeContext& ctx);
void ConvertAffineGrid(OnnxNodeContext& ctx);
void ConvertCol2Im(OnnxNodeContext& ctx);
void ConvertDeformConv(OnnxNodeContext& ctx);
void ConvertRoiAlign(OnnxNodeContext& ctx);
void ConvertDet(OnnxNodeContext& ctx);
void ConvertTopK(OnnxNodeContext& ctx);
void ConvertGatherND(OnnxNodeContext& ctx);
void ConvertScatterND(OnnxNodeContext& ctx);
void ConvertReverseSequence(OnnxNodeContext& ctx);
// OnnxConvertNormalization.cpp: normalizations that become several layers.
void ConvertLpNormalization(OnnxNodeContext& ctx);
void ConvertGroupNormalization(OnnxNodeContext& ctx);
// OnnxConvertTransformer.cpp: the fused transformer ops of opsets 23-25.
void ConvertAttention(OnnxNodeContext& ctx);
void ConvertRmsNormalization(OnnxNodeContext& ctx);
void ConvertRotaryEmbedding(OnnxNodeContext& ctx);
void ConvertTensorScatter(OnnxNodeContext& ctx);
void ConvertCausalConvWithState(OnnxNodeContext& ctx);
void ConvertLinearAttention(OnnxNodeContext& ctx);
// OnnxConvertControlFlow.cpp
void ConvertLoop(OnnxNodeContext& ctx);

// Before opset 7: accepts the legacy attributes every op shares (consumed_inputs, an in-place
// hint) and refuses the legacy forms no converter reads (Tile-1, Pad-1, Cast-1, Split-1's input).
void CheckLegacyForm(OnnxNodeContext& ctx);

}  // namespace trellis::onnximport
