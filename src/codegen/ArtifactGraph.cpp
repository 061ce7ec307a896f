#include "ArtifactGraph.hpp"

#include <trellis/Exceptions.hpp>

#include <algorithm>
#include <set>
#include <sstream>

namespace trellis::codegen {

namespace {

bool IsComputeLayer(const IConnectableLayer& l) {
    const LayerType t = l.GetType();
    return t != LayerType::Input && t != LayerType::Output && t != LayerType::Constant;
}

LayerBindingId BindingOf(const IConnectableLayer& l) {
    return std::get<BindingDescriptor>(l.GetDescriptor()).m_BindingId;
}

}  // namespace

std::string GraphLayer::Describe() const {
    return std::string(GetLayerTypeName(m_Layer->GetType())) + " '" + m_Layer->GetName() + "'";
}

int ArtifactGraph::TensorOf(const IOutputSlot* slot) {
    if (auto it = m_TensorIds.find(slot); it != m_TensorIds.end()) return it->second;
    GraphTensor t;
    t.m_Slot = slot;
    t.m_Info = slot->GetTensorInfo();
    const IConnectableLayer& owner = slot->GetOwningIConnectableLayer();
    t.m_Name = owner.GetNumOutputSlots() == 1 ? std::string(owner.GetName())
                                              : std::string(owner.GetName()) + ":" +
                                                    std::to_string(slot->CalculateIndexOnOwner());
    if (owner.GetType() == LayerType::Constant) {
        t.m_Constant = &std::get<ConstantDescriptor>(owner.GetDescriptor()).m_Tensor;
    }
    m_Tensors.push_back(std::move(t));
    const int id = static_cast<int>(m_Tensors.size() - 1);
    m_TensorIds[slot] = id;
    return id;
}

void ArtifactGraph::AddLayer(const IConnectableLayer* layer) {
    GraphLayer g;
    g.m_Layer = layer;
    g.m_Queue.m_Type = layer->GetType();
    g.m_Queue.m_Descriptor = &layer->GetDescriptor();
    g.m_Queue.m_LayerName = layer->GetName();
    const int index = static_cast<int>(m_Layers.size());
    for (unsigned int i = 0; i < layer->GetNumInputSlots(); ++i) {
        const IOutputSlot* src = layer->GetInputSlot(i).GetConnection();
        if (!src) {
            throw InvalidArgumentException("code generator: input " + std::to_string(i) + " of layer '" +
                                           layer->GetName() + "' is not connected");
        }
        const int t = TensorOf(src);
        g.m_Inputs.push_back(t);
        g.m_Info.m_InputTensorInfos.push_back(src->GetTensorInfo());
        g.m_Queue.m_ConstantInputs.push_back(m_Tensors[static_cast<std::size_t>(t)].m_Constant);
        m_Tensors[static_cast<std::size_t>(t)].m_LastUse = index;
    }
    for (unsigned int o = 0; o < layer->GetNumOutputSlots(); ++o) {
        const int t = TensorOf(&layer->GetOutputSlot(o));
        m_Tensors[static_cast<std::size_t>(t)].m_Producer = index;
        g.m_Outputs.push_back(t);
        g.m_Info.m_OutputTensorInfos.push_back(layer->GetOutputSlot(o).GetTensorInfo());
    }
    m_Layers.push_back(std::move(g));
}

void ArtifactGraph::Finish() {
    for (std::size_t i = 0; i < m_Inputs.size(); ++i) m_Tensors[static_cast<std::size_t>(m_Inputs[i])].m_Input = static_cast<int>(i);
    for (std::size_t o = 0; o < m_Outputs.size(); ++o) {
        m_Tensors[static_cast<std::size_t>(m_Outputs[o].m_Tensor)].m_Outputs.push_back(static_cast<int>(o));
    }
}

ArtifactGraph ArtifactGraph::FromNetwork(const IOptimizedNetwork& network) {
    if (network.IsDynamic()) {
        std::string why;
        for (const std::string& line : network.GetOptimizationLog()) {
            if (line.rfind("dynamic network: ", 0) == 0) why = line.substr(17);
        }
        throw InvalidArgumentException("code generator: the network's shapes are decided when it runs (" + why +
                                       "); pin every input's dims (--shape NAME=AxBx...) so that all shapes are static");
    }
    ArtifactGraph g;
    const std::vector<const IConnectableLayer*> layers = network.GetLayers();
    std::vector<const IConnectableLayer*> inputs, outputs;
    for (const IConnectableLayer* l : layers) {
        if (l->GetType() == LayerType::Input) inputs.push_back(l);
        if (l->GetType() == LayerType::Output) outputs.push_back(l);
    }
    const auto byBinding = [](const IConnectableLayer* a, const IConnectableLayer* b) { return BindingOf(*a) < BindingOf(*b); };
    std::sort(inputs.begin(), inputs.end(), byBinding);
    std::sort(outputs.begin(), outputs.end(), byBinding);
    for (const IConnectableLayer* in : inputs) {
        const int t = g.TensorOf(&in->GetOutputSlot(0));
        g.m_Tensors[static_cast<std::size_t>(t)].m_Name = in->GetName();
        g.m_Inputs.push_back(t);
    }
    for (const IConnectableLayer* l : layers) {
        if (IsComputeLayer(*l)) g.AddLayer(l);
    }
    for (const IConnectableLayer* out : outputs) {
        const IOutputSlot* src = out->GetInputSlot(0).GetConnection();
        g.m_Outputs.push_back({out->GetName(), g.TensorOf(src)});
    }
    g.Finish();
    return g;
}

ArtifactGraph ArtifactGraph::FromSubgraph(const SubgraphView& subgraph) {
    ArtifactGraph g;
    for (const IInputSlot* slot : subgraph.GetInputSlots()) {
        const IOutputSlot* src = slot->GetConnection();
        if (!src) throw InvalidArgumentException("code generator: a sub-graph input slot is not connected");
        const int t = g.TensorOf(src);
        if (g.m_Tensors[static_cast<std::size_t>(t)].m_Constant) {
            g.m_SubgraphInputs.push_back(-1);
            continue;
        }
        auto it = std::find(g.m_Inputs.begin(), g.m_Inputs.end(), t);
        if (it == g.m_Inputs.end()) {
            g.m_Inputs.push_back(t);
            it = g.m_Inputs.end() - 1;
        }
        g.m_SubgraphInputs.push_back(static_cast<int>(it - g.m_Inputs.begin()));
    }
    for (const IConnectableLayer* l : subgraph.GetLayers()) g.AddLayer(l);
    for (const IOutputSlot* slot : subgraph.GetOutputSlots()) {
        const int t = g.TensorOf(slot);
        g.m_Outputs.push_back({g.m_Tensors[static_cast<std::size_t>(t)].m_Name, t});
    }
    g.Finish();
    return g;
}

std::string ArtifactGraph::DescribeStructure() const {
    std::ostringstream s;
    for (int t : m_Inputs) s << "input " << GetTensor(t).m_Name << ' ' << GetTensor(t).m_Info.ToString() << '\n';
    for (const GraphLayer& l : m_Layers) {
        s << l.Describe() << " in";
        for (int t : l.m_Inputs) s << ' ' << t << ':' << GetTensor(t).m_Info.ToString();
        s << " out";
        for (int t : l.m_Outputs) s << ' ' << t << ':' << GetTensor(t).m_Info.ToString();
        s << '\n';
    }
    for (const GraphOutput& o : m_Outputs) s << "output " << o.m_Name << ' ' << o.m_Tensor << '\n';
    return s.str();
}

}  // namespace trellis::codegen
