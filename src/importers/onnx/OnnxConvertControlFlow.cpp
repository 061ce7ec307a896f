// Converter of Loop: the body graph becomes a network of its own (BuildOnnxSubgraph) held by the
// Loop layer's descriptor; the optimizer unrolls the loop (src/core/LoopUnrolling.cpp). If and
// Scan are not converted.
#include "OnnxConverters.hpp"

namespace trellis::onnximport {

void ConvertLoop(OnnxNodeContext& ctx) {
    // Inputs: M and cond (each may be left out as ""), then the loop-carried initial values.
    if (ctx.NumInputs() < 2) {
        ctx.Fail("has " + std::to_string(ctx.NumInputs()) + " inputs; Loop takes M and cond (either may be '') and "
                 "then the initial loop-carried values");
    }
    const unsigned int numCarried = ctx.NumInputs() - 2;
    for (unsigned int i = 2; i < ctx.NumInputs(); ++i) {
        if (!ctx.HasInput(i)) ctx.Fail("input " + std::to_string(i) + " (a loop-carried initial value) is empty");
    }
    const onnx::AttributeProto* bodyAttribute = ctx.FindAttribute("body");
    if (!bodyAttribute || !bodyAttribute->has_g()) ctx.Fail("required graph attribute 'body' is missing");
    const onnx::GraphProto& body = bodyAttribute->g();
    if (body.input_size() != static_cast<int>(2 + numCarried)) {
        ctx.Fail("the body has " + std::to_string(body.input_size()) + " inputs; with " + std::to_string(numCarried) +
                 " loop-carried values it needs " + std::to_string(2 + numCarried) +
                 " (the iteration number, the condition, the loop-carried values)");
    }
    if (body.output_size() < static_cast<int>(1 + numCarried)) {
        ctx.Fail("the body has " + std::to_string(body.output_size()) + " outputs; with " +
                 std::to_string(numCarried) + " loop-carried values it needs at least " +
                 std::to_string(1 + numCarried) + " (the condition, the loop-carried values, then any scan values)");
    }
    const unsigned int numScan = static_cast<unsigned int>(body.output_size()) - 1 - numCarried;
    if (ctx.NumOutputs() != numCarried + numScan) {
        ctx.Fail("has " + std::to_string(ctx.NumOutputs()) + " outputs; its body gives " +
                 std::to_string(numCarried) + " loop-carried values and " + std::to_string(numScan) +
                 " scan outputs, so it needs " + std::to_string(numCarried + numScan));
    }
    if (numCarried + numScan == 0) ctx.Fail("has no outputs: the loop computes nothing that can be read");

    OnnxSubgraph subgraph = BuildOnnxSubgraph(body, ctx.Where() + " body", ctx.Graph(),
                                              static_cast<LayerBindingId>(2 + numCarried), ctx.Opset());
    LoopDescriptor d;
    d.m_Body = std::shared_ptr<const INetwork>(subgraph.m_Network.release(), [](const INetwork* network) {
        INetwork::Destroy(const_cast<INetwork*>(network));
    });
    d.m_NumCarried = numCarried;
    d.m_NumScanOutputs = numScan;
    d.m_NumOuterValues = static_cast<unsigned int>(subgraph.m_OuterValues.size());

    std::vector<IOutputSlot*> inputs{ctx.HasInput(0) ? &ctx.InputSlot(0) : &ctx.Graph().EmptyPlaceholder(DataType::Signed64),
                                     ctx.HasInput(1) ? &ctx.InputSlot(1) : &ctx.Graph().EmptyPlaceholder(DataType::Boolean)};
    for (unsigned int i = 2; i < ctx.NumInputs(); ++i) inputs.push_back(&ctx.InputSlot(i));
    for (const std::string& name : subgraph.m_OuterValues) {
        IOutputSlot* slot = ctx.Graph().FindSlot(name);
        if (!slot) ctx.Fail("internal error: the body's outer value '" + name + "' has no producer");
        inputs.push_back(slot);
    }
    IConnectableLayer* layer = ctx.AddLayer(LayerType::Loop, d, inputs, static_cast<int>(numCarried + numScan));
    for (unsigned int i = 0; i < numCarried + numScan; ++i) ctx.SetOutput(i, layer->GetOutputSlot(i));
}

}  // namespace trellis::onnximport
