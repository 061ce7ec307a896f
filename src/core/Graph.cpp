// The layer graph.
#include "Graph.hpp"

#include <trellis/Exceptions.hpp>

#include <algorithm>
#include <atomic>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

namespace trellis::core {

namespace {
std::atomic<LayerGuid> g_NextGuid{1};
}

const IOutputSlot* InputSlot::GetConnection() const { return m_Connection; }
IOutputSlot* InputSlot::GetConnection() { return m_Connection; }
const IConnectableLayer& InputSlot::GetOwningIConnectableLayer() const { return m_Owner; }

const IInputSlot* OutputSlot::GetConnection(unsigned int index) const { return m_Connections.at(index); }
IInputSlot* OutputSlot::GetConnection(unsigned int index) { return m_Connections.at(index); }
const IConnectableLayer& OutputSlot::GetOwningIConnectableLayer() const { return m_Owner; }

int OutputSlot::Connect(IInputSlot& destination) {
    auto* dst = dynamic_cast<InputSlot*>(&destination);
    if (!dst) throw InvalidArgumentException("Connect: the input slot belongs to another implementation");
    if (&dst->GetOwningLayer() == &m_Owner) {
        throw InvalidArgumentException("Connect: layer '" + m_Owner.Name() + "' cannot be connected to itself");
    }
    Connect(*dst);
    return static_cast<int>(m_Connections.size()) - 1;
}

void OutputSlot::Connect(InputSlot& dst) {
    if (dst.GetConnectedOutputSlot()) {
        throw InvalidArgumentException("Connect: input slot " + std::to_string(dst.GetSlotIndex()) + " of layer '" +
                                       dst.GetOwningLayer().Name() + "' is already connected");
    }
    dst.SetConnection(this);
    m_Connections.push_back(&dst);
}

void OutputSlot::Disconnect(IInputSlot& slot) {
    auto* dst = dynamic_cast<InputSlot*>(&slot);
    if (dst) Disconnect(*dst);
}

void OutputSlot::Disconnect(InputSlot& dst) {
    auto it = std::find(m_Connections.begin(), m_Connections.end(), &dst);
    if (it == m_Connections.end()) return;
    m_Connections.erase(it);
    dst.SetConnection(nullptr);
}

void OutputSlot::MoveAllConnections(OutputSlot& other) {
    std::vector<InputSlot*> conns = m_Connections;
    for (InputSlot* in : conns) {
        Disconnect(*in);
        other.Connect(*in);
    }
}

void OutputSlot::DisconnectAll() {
    std::vector<InputSlot*> conns = m_Connections;
    for (InputSlot* in : conns) Disconnect(*in);
}

Layer::Layer(LayerType type, LayerDescriptor descriptor, std::string name, unsigned int numInputs,
             unsigned int numOutputs)
    : m_Type(type), m_Descriptor(std::move(descriptor)), m_Name(std::move(name)), m_Guid(g_NextGuid++) {
    for (unsigned int i = 0; i < numInputs; ++i) m_Inputs.push_back(std::make_unique<InputSlot>(*this, i));
    for (unsigned int i = 0; i < numOutputs; ++i) m_Outputs.push_back(std::make_unique<OutputSlot>(*this, i));
}

InputSlot& Layer::Input(unsigned int i) const {
    if (i >= m_Inputs.size()) {
        throw InvalidArgumentException(Describe(*this) + ": input slot " + std::to_string(i) +
                                       " does not exist (the layer has " + std::to_string(m_Inputs.size()) + ")");
    }
    return *m_Inputs[i];
}

OutputSlot& Layer::Output(unsigned int i) const {
    if (i >= m_Outputs.size()) {
        throw InvalidArgumentException(Describe(*this) + ": output slot " + std::to_string(i) +
                                       " does not exist (the layer has " + std::to_string(m_Outputs.size()) + ")");
    }
    return *m_Outputs[i];
}

Layer* Layer::InputLayer(unsigned int i) const {
    OutputSlot* s = Input(i).GetConnectedOutputSlot();
    return s ? &s->GetOwningLayer() : nullptr;
}

void Layer::RemoveInputSlotsFrom(unsigned int first) {
    while (m_Inputs.size() > first) {
        InputSlot& in = *m_Inputs.back();
        if (in.GetConnectedOutputSlot()) in.GetConnectedOutputSlot()->Disconnect(in);
        m_Inputs.pop_back();
    }
}

void Layer::RemoveInputSlot(unsigned int i) {
    InputSlot& in = Input(i);
    if (in.GetConnectedOutputSlot()) in.GetConnectedOutputSlot()->Disconnect(in);
    m_Inputs.erase(m_Inputs.begin() + i);
    for (unsigned int k = 0; k < m_Inputs.size(); ++k) m_Inputs[k]->SetIndex(k);
}

InputSlot& Layer::AddInputSlot() {
    m_Inputs.push_back(std::make_unique<InputSlot>(*this, static_cast<unsigned int>(m_Inputs.size())));
    return *m_Inputs.back();
}

void Layer::DisconnectAll() {
    for (auto& in : m_Inputs) {
        if (in->GetConnectedOutputSlot()) in->GetConnectedOutputSlot()->Disconnect(*in);
    }
    for (auto& out : m_Outputs) out->DisconnectAll();
}

std::string Layer::OpDetail() const {
    switch (m_Type) {
        case LayerType::ElementwiseBinary: return GetBinaryOperationName(Desc<ElementwiseBinaryDescriptor>().m_Operation);
        case LayerType::ElementwiseUnary: return GetUnaryOperationName(Desc<ElementwiseUnaryDescriptor>().m_Operation);
        case LayerType::Reduce: return GetReduceOperationName(Desc<ReduceDescriptor>().m_Operation);
        case LayerType::Window: return GetWindowFunctionName(Desc<WindowDescriptor>().m_Function);
        case LayerType::ArgMinMax: return Desc<ArgMinMaxDescriptor>().m_Function == ArgMinMaxFunction::Max ? "ArgMax" : "ArgMin";
        case LayerType::Pooling: {
            const auto& d = Desc<PoolingDescriptor>();
            std::string s = d.m_Global ? "Global" : "";
            return s + (d.m_Algorithm == PoolingAlgorithm::Max ? "MaxPool" : "AveragePool");
        }
        case LayerType::Softmax: return Desc<SoftmaxDescriptor>().m_Log ? "LogSoftmax" : "Softmax";
        case LayerType::Reshape: {
            switch (Desc<ReshapeDescriptor>().m_Mode) {
                case ReshapeMode::Reshape: return "Reshape";
                case ReshapeMode::Flatten: return "Flatten";
                case ReshapeMode::Squeeze: return "Squeeze";
                case ReshapeMode::Unsqueeze: return "Unsqueeze";
            }
            return "Reshape";
        }
        case LayerType::PreCompiled: {
            const std::string& d = Desc<PreCompiledDescriptor>().m_Description;
            return d.empty() ? "PreCompiled" : d;
        }
        default: return GetLayerTypeName(m_Type);
    }
}

std::string Describe(const Layer& layer) {
    return layer.OpDetail() + " '" + layer.Name() + "'";
}

Layer* Graph::AddLayer(LayerType type, LayerDescriptor descriptor, const std::string& name, unsigned int numInputs,
                       unsigned int numOutputs) {
    m_Layers.push_back(std::make_unique<Layer>(type, std::move(descriptor), name, numInputs, numOutputs));
    ++m_NameCounts[name];
    return m_Layers.back().get();
}

void Graph::EraseLayer(Layer* layer) {
    layer->DisconnectAll();
    const auto it = m_NameCounts.find(layer->Name());
    if (it != m_NameCounts.end() && --it->second == 0) m_NameCounts.erase(it);
    m_Layers.remove_if([layer](const std::unique_ptr<Layer>& l) { return l.get() == layer; });
}

void Graph::RenameLayer(Layer* layer, std::string name) {
    const auto it = m_NameCounts.find(layer->Name());
    if (it != m_NameCounts.end() && --it->second == 0) m_NameCounts.erase(it);
    ++m_NameCounts[name];
    layer->SetName(std::move(name));
}

std::vector<Layer*> Graph::TopologicalOrder() const {
    // Kahn's algorithm over input-slot connections; a ready queue ordered by insertion position
    // keeps the order stable (and thus the execution order deterministic).
    std::unordered_map<const Layer*, std::size_t> position;
    std::vector<Layer*> byPosition;
    for (const auto& l : m_Layers) {
        position[l.get()] = byPosition.size();
        byPosition.push_back(l.get());
    }
    std::vector<unsigned int> pending(byPosition.size(), 0);
    for (std::size_t i = 0; i < byPosition.size(); ++i) {
        for (unsigned int s = 0; s < byPosition[i]->GetNumInputSlots(); ++s) {
            if (byPosition[i]->Input(s).GetConnectedOutputSlot()) ++pending[i];
        }
    }
    std::set<std::size_t> ready;
    for (std::size_t i = 0; i < byPosition.size(); ++i) {
        if (pending[i] == 0) ready.insert(i);
    }
    std::vector<Layer*> order;
    order.reserve(byPosition.size());
    while (!ready.empty()) {
        const std::size_t i = *ready.begin();
        ready.erase(ready.begin());
        Layer* l = byPosition[i];
        order.push_back(l);
        for (unsigned int o = 0; o < l->GetNumOutputSlots(); ++o) {
            for (InputSlot* in : l->Output(o).GetConnections()) {
                const std::size_t j = position.at(&in->GetOwningLayer());
                if (--pending[j] == 0) ready.insert(j);
            }
        }
    }
    if (order.size() != byPosition.size()) {
        for (std::size_t i = 0; i < byPosition.size(); ++i) {
            if (pending[i] != 0) {
                throw GraphValidationException("the network has a cycle through layer " + Describe(*byPosition[i]));
            }
        }
    }
    return order;
}

std::string OutputSlot::GetOrigin() const {
    return m_Origin.empty() ? m_Owner.Name() + ":" + std::to_string(m_Index) : m_Origin;
}

std::unique_ptr<Graph> Graph::Clone() const {
    auto g = std::make_unique<Graph>();
    std::unordered_map<const Layer*, Layer*> map;
    for (const auto& l : m_Layers) {
        Layer* c = g->AddLayer(l->GetType(), l->GetDescriptor(), l->Name(), l->GetNumInputSlots(), l->GetNumOutputSlots());
        c->SetBackendId(l->GetBackendId());
        c->m_Declined = l->m_Declined;
        c->m_Synthesized = l->m_Synthesized;
        c->m_SubstitutedLayers = l->m_SubstitutedLayers;
        c->m_FoldedOn = l->m_FoldedOn;
        for (unsigned int o = 0; o < l->GetNumOutputSlots(); ++o) {
            if (l->Output(o).IsTensorInfoSet()) c->Output(o).SetTensorInfo(l->Output(o).GetTensorInfo());
            c->Output(o).SetOrigin(l->Output(o).GetOriginOverride());
        }
        map[l.get()] = c;
    }
    for (const auto& l : m_Layers) {
        for (unsigned int i = 0; i < l->GetNumInputSlots(); ++i) {
            OutputSlot* src = l->Input(i).GetConnectedOutputSlot();
            if (!src) continue;
            Layer* srcCopy = map.at(&src->GetOwningLayer());
            srcCopy->Output(src->CalculateIndexOnOwner()).Connect(map.at(l.get())->Input(i));
        }
    }
    return g;
}

std::string Graph::UniqueName(const std::string& base) const {
    if (!m_NameCounts.count(base)) return base;
    for (int i = 1;; ++i) {
        std::string n = base + "_" + std::to_string(i);
        if (!m_NameCounts.count(n)) return n;
    }
}

std::string Graph::ToString() const {
    std::ostringstream os;
    std::vector<Layer*> order;
    try {
        order = TopologicalOrder();
    } catch (const Exception&) {
        for (const auto& l : m_Layers) order.push_back(l.get());
    }
    for (Layer* l : order) {
        os << Describe(*l);
        if (!l->GetBackendId().IsEmpty()) os << " [" << l->GetBackendId() << "]";
        os << " (";
        for (unsigned int i = 0; i < l->GetNumInputSlots(); ++i) {
            if (i) os << ", ";
            OutputSlot* s = l->Input(i).GetConnectedOutputSlot();
            if (s) os << s->GetOwningLayer().Name() << ":" << s->CalculateIndexOnOwner();
            else os << "<unconnected>";
        }
        os << ") ->";
        for (unsigned int o = 0; o < l->GetNumOutputSlots(); ++o) {
            os << " " << (l->Output(o).IsTensorInfoSet() ? l->Output(o).GetTensorInfo().ToString() : "?");
        }
        os << "\n";
    }
    return os.str();
}

}  // namespace trellis::core
