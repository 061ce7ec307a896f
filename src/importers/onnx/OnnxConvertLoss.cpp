// ONNX converters: the loss ops with inference semantics.
#include "OnnxConverters.hpp"

namespace trellis::onnximport {

namespace {

NegativeLogLikelihoodLossDescriptor ReadLossAttributes(OnnxNodeContext& ctx) {
    NegativeLogLikelihoodLossDescriptor d;
    const std::string reduction = ctx.GetString("reduction", "mean");
    if (reduction == "none") d.m_Reduction = LossReduction::None;
    else if (reduction == "sum") d.m_Reduction = LossReduction::Sum;
    else if (reduction == "mean") d.m_Reduction = LossReduction::Mean;
    else ctx.Fail("attribute reduction='" + reduction + "' is not supported (expected none, sum or mean)");
    d.m_IgnoreIndex = ctx.FindInt("ignore_index");
    return d;
}

// The weight input (2) when given.
std::vector<IOutputSlot*> LossInputs(OnnxNodeContext& ctx, IOutputSlot& x) {
    std::vector<IOutputSlot*> inputs{&x, &ctx.InputSlot(1)};
    if (ctx.HasInput(2)) inputs.push_back(&ctx.InputSlot(2));
    return inputs;
}

}  // namespace

void ConvertNegativeLogLikelihoodLoss(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(2, 3);
    ctx.ExpectOutputs(1, 1);
    const NegativeLogLikelihoodLossDescriptor d = ReadLossAttributes(ctx);
    IConnectableLayer* layer = ctx.AddLayer(LayerType::NegativeLogLikelihoodLoss, d, LossInputs(ctx, ctx.InputSlot(0)), 1);
    ctx.SetOutput(0, layer->GetOutputSlot(0));
}

void ConvertSoftmaxCrossEntropyLoss(OnnxNodeContext& ctx) {
    // ONNX defines it as LogSoftmax over dim 1 (the optional output log_prob) followed by
    // NegativeLogLikelihoodLoss with the same reduction and ignore_index.
    ctx.ExpectInputs(2, 3);
    ctx.ExpectOutputs(1, 2);
    const NegativeLogLikelihoodLossDescriptor d = ReadLossAttributes(ctx);
    SoftmaxDescriptor s;
    s.m_Axis = 1;
    s.m_Log = true;
    IConnectableLayer* logProb = ctx.AddLayer(LayerType::Softmax, s, {&ctx.InputSlot(0)}, 1, "/log_prob");
    IConnectableLayer* loss =
        ctx.AddLayer(LayerType::NegativeLogLikelihoodLoss, d, LossInputs(ctx, logProb->GetOutputSlot(0)), 1);
    ctx.SetOutput(0, loss->GetOutputSlot(0));
    if (ctx.NumOutputs() > 1) ctx.SetOutput(1, logProb->GetOutputSlot(0));
}

}  // namespace trellis::onnximport
