#include "support/NetworkBuilders.hpp"

#include <cstddef>

namespace trellis::test {

IOutputSlot& LayerTestNetwork::Input(const TensorShape& shape, DataType type) {
    auto* l = m_Net->AddInputLayer(m_NextInput++);
    l->GetOutputSlot(0).SetTensorInfo(TensorInfo(shape, type));
    return l->GetOutputSlot(0);
}

IOutputSlot& LayerTestNetwork::Constant(const TensorShape& shape, DataType type, const void* bytes) {
    auto* l = m_Net->AddConstantLayer(ConstTensor(TensorInfo(shape, type, 0.0f, 0, true), bytes));
    return l->GetOutputSlot(0);
}

IOutputSlot& LayerTestNetwork::ConstInts(const std::vector<int64_t>& values, TensorShape shape) {
    return Constant(shape, DataType::Signed64, values.data());
}

IOutputSlot& LayerTestNetwork::ConstInts(const std::vector<int64_t>& values) {
    return ConstInts(values, TensorShape({static_cast<unsigned int>(values.size())}));
}

IOutputSlot& LayerTestNetwork::ConstFloats(const std::vector<float>& values, TensorShape shape) {
    return Constant(shape, DataType::Float32, values.data());
}

IOutputSlot& LayerTestNetwork::ConstFilled(const TensorShape& shape, float value) {
    return ConstFloats(std::vector<float>(shape.GetNumElements(), value), shape);
}

IOutputSlot& LayerTestNetwork::ScalarFloat(float value) { return Constant(TensorShape(), DataType::Float32, &value); }

IConnectableLayer* LayerTestNetwork::Layer(LayerType type, const LayerDescriptor& d, const char* name,
                                           std::vector<IOutputSlot*> inputs, int numOutputs, int boundOutputs) {
    auto* l = m_Net->AddLayer(type, d, name, static_cast<int>(inputs.size()), numOutputs);
    for (unsigned int i = 0; i < inputs.size(); ++i) inputs[i]->Connect(l->GetInputSlot(i));
    const unsigned int bound = boundOutputs < 0 ? l->GetNumOutputSlots() : static_cast<unsigned int>(boundOutputs);
    for (unsigned int o = 0; o < bound; ++o) {
        l->GetOutputSlot(o).Connect(m_Net->AddOutputLayer(m_NextOutput++)->GetInputSlot(0));
    }
    return l;
}

IOptimizedNetworkPtr LayerTestNetwork::Optimize() {
    return trellis::Optimize(*m_Net, {"CpuRef"}, m_Runtime->GetDeviceSpec());
}

std::vector<TensorInfo> LayerTestNetwork::OutputsOf(const IOptimizedNetwork& opt, const std::string& name) const {
    for (const auto& p : opt.GetLayerPlacements()) {
        if (p.m_LayerName == name || p.m_LayerName == name + "_1") return p.m_Outputs;
    }
    ADD_FAILURE() << "no layer '" << name << "' in the optimized network";
    return {};
}

TensorInfo LayerTestNetwork::OutputOf(const IOptimizedNetwork& opt, const std::string& name) const {
    const std::vector<TensorInfo> outs = OutputsOf(opt, name);
    return outs.empty() ? TensorInfo() : outs[0];
}

void ExpectOptimizeDefers(LayerTestNetwork& n, const std::string& layerName, const std::string& parameter) {
    IOptimizedNetworkPtr opt = n.Optimize();
    const std::vector<std::string>& log = opt->GetOptimizationLog();
    ASSERT_FALSE(log.empty());
    EXPECT_NE(log.back().find("dynamic network"), std::string::npos) << log.back();
    EXPECT_NE(log.back().find(layerName), std::string::npos) << log.back();
    EXPECT_NE(log.back().find(parameter), std::string::npos) << log.back();
    NetworkId id = 0;
    ASSERT_EQ(n.m_Runtime->LoadNetwork(id, std::move(opt)), Status::Success);
    EXPECT_TRUE(n.m_Runtime->IsDynamic(id));
    n.m_Runtime->UnloadNetwork(id);
}

std::shared_ptr<const INetwork> ShareNetwork(INetworkPtr network) {
    return std::shared_ptr<const INetwork>(network.release(),
                                           [](const INetwork* n) { INetwork::Destroy(const_cast<INetwork*>(n)); });
}

std::vector<OwnedTensor> RunNetwork(IRuntime& runtime, NetworkId id, const InputTensors& in, std::size_t numOutputs) {
    std::vector<OwnedTensor> outs(numOutputs);
    OutputTensors out;
    for (std::size_t o = 0; o < numOutputs; ++o) {
        const auto binding = static_cast<LayerBindingId>(o);
        outs[o].m_Info = runtime.GetOutputTensorInfo(id, binding, in);  // specializes a dynamic network
        outs[o].m_Data.assign(outs[o].m_Info.GetNumBytes(), 0);
        out.emplace_back(binding, outs[o].AsTensor());
    }
    if (runtime.EnqueueWorkload(id, in, out) != Status::Success) throw RuntimeException("EnqueueWorkload failed");
    return outs;
}

namespace {

/// One ConstTensor per input binding 0, 1, ... over the given infos and bytes.
InputTensors BindInputs(const std::vector<std::pair<TensorInfo, const void*>>& inputs) {
    InputTensors in;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        TensorInfo info = inputs[i].first;
        info.SetConstant(true);
        in.push_back({static_cast<int>(i), ConstTensor(info, inputs[i].second)});
    }
    return in;
}

/// Runs loaded network `id` of `n` once; returns every output (bindings 0, 1, ...).
std::vector<OwnedTensor> RunLoaded(LayerTestNetwork& n, NetworkId id, const InputTensors& in) {
    return RunNetwork(*n.m_Runtime, id, in, static_cast<std::size_t>(n.m_NextOutput));
}

/// The RuntimeException `e` must name `layerName` and state `rule`.
void ExpectNamesLayerAndRule(const RuntimeException& e, const std::string& layerName, const std::string& rule) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(layerName), std::string::npos) << "message does not name the layer: " << msg;
    EXPECT_NE(msg.find(rule), std::string::npos) << "message does not state the rule '" << rule << "': " << msg;
}

}  // namespace

std::vector<OwnedTensor> RunLayerTestNetwork(LayerTestNetwork& n, const std::vector<OwnedTensor>& inputs) {
    NetworkId id = 0;
    if (n.m_Runtime->LoadNetwork(id, n.Optimize()) != Status::Success) throw RuntimeException("LoadNetwork failed");
    std::vector<std::pair<TensorInfo, const void*>> buffers;
    for (const OwnedTensor& t : inputs) buffers.emplace_back(t.m_Info, t.m_Data.data());
    return RunLoaded(n, id, BindInputs(buffers));
}

void ExpectRunThrows(LayerTestNetwork& n, const std::vector<OwnedTensor>& inputs, const std::string& layerName,
                     const std::string& rule) {
    try {
        RunLayerTestNetwork(n, inputs);
        ADD_FAILURE() << "the run of '" << layerName << "' succeeded; expected: " << rule;
    } catch (const RuntimeException& e) {
        ExpectNamesLayerAndRule(e, layerName, rule);
    }
}

void ExpectRunFails(LayerTestNetwork& n, const std::vector<std::pair<TensorInfo, const void*>>& inputs,
                    const std::string& layerName, const std::string& rule) {
    NetworkId id = 0;
    std::string loadError;
    ASSERT_EQ(n.m_Runtime->LoadNetwork(id, n.Optimize(), loadError), Status::Success) << loadError;
    try {
        RunLoaded(n, id, BindInputs(inputs));
        ADD_FAILURE() << "the run of '" << layerName << "' succeeded; expected: " << rule;
    } catch (const RuntimeException& e) {
        ExpectNamesLayerAndRule(e, layerName, rule);
    }
}

}  // namespace trellis::test
