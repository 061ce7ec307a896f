// Phase 6 of Optimize(): applying sub-graph substitutions (see Substitution.hpp for the rules).
//
// Everything a backend hands back is checked before the graph is touched: a substitution either
// applies completely or Optimize() stops with an error naming the backend and the broken rule.
// Pointers from the views are looked up in tables built from the graphs, never dereferenced
// unchecked, so a backend that returns a stale or foreign pointer gets an error, not a crash.
#include "Substitution.hpp"

#include "Network.hpp"
#include "OptimizedNetwork.hpp"

#include <trellis/Exceptions.hpp>

#include <map>
#include <set>

namespace trellis::core {

namespace {

/// The layers of one graph, found by interface pointer.
class LayerIndex {
public:
    explicit LayerIndex(const Graph& graph) {
        for (const auto& l : graph.Layers()) m_Layers[l.get()] = l.get();
    }
    Layer* Find(const IConnectableLayer* layer) const {
        auto it = m_Layers.find(layer);
        return it == m_Layers.end() ? nullptr : it->second;
    }
private:
    std::map<const IConnectableLayer*, Layer*> m_Layers;
};

/// A SubgraphView whose layers and slots were all found in a graph.
struct ResolvedView {
    std::vector<Layer*> m_Layers;
    std::set<const Layer*> m_Members;
    std::vector<InputSlot*> m_Inputs;
    std::vector<OutputSlot*> m_Outputs;
    std::set<const InputSlot*> m_InputSet;
    std::set<const OutputSlot*> m_OutputSet;
};

std::string InputName(const InputSlot& s) { return "input slot " + std::to_string(s.GetSlotIndex()) + " of " + Describe(s.GetOwningLayer()); }
std::string OutputName(const OutputSlot& s) {
    return "output slot " + std::to_string(s.CalculateIndexOnOwner()) + " of " + Describe(s.GetOwningLayer());
}

/// Builds the messages of one substitution: "backend 'X' returned an invalid substitution (#k ...): what".
class Failure {
public:
    Failure(const BackendId& backend, std::size_t index) : m_Backend(backend), m_Index(index) {}
    void SetReplaced(const std::vector<Layer*>& layers) {
        m_Replaced.clear();
        for (std::size_t i = 0; i < layers.size() && i < 3; ++i) m_Replaced += (i ? ", " : "") + Describe(*layers[i]);
        if (layers.size() > 3) m_Replaced += ", ... (" + std::to_string(layers.size()) + " layers)";
    }
    [[noreturn]] void operator()(const std::string& what) const {
        std::string where = "#" + std::to_string(m_Index + 1);
        if (!m_Replaced.empty()) where += ", replacing " + m_Replaced;
        throw BackendUnavailableException("backend '" + m_Backend.Get() + "' returned an invalid substitution (" + where +
                                          "): " + what);
    }
private:
    BackendId m_Backend;
    std::size_t m_Index;
    std::string m_Replaced;
};

ResolvedView Resolve(const SubgraphView& view, const LayerIndex& index, const char* role, const char* home,
                     const Failure& fail) {
    ResolvedView r;
    if (view.GetLayers().empty()) fail(std::string("the ") + role + " has no layers");
    std::map<const IInputSlot*, InputSlot*> inputsOfMembers;
    std::map<const IOutputSlot*, OutputSlot*> outputsOfMembers;
    for (std::size_t i = 0; i < view.GetLayers().size(); ++i) {
        Layer* l = index.Find(view.GetLayers()[i]);
        if (!l) fail(std::string("layer ") + std::to_string(i) + " of the " + role + " is not a layer of " + home);
        if (!r.m_Members.insert(l).second) fail(std::string("the ") + role + " lists " + Describe(*l) + " twice");
        r.m_Layers.push_back(l);
        for (unsigned int s = 0; s < l->GetNumInputSlots(); ++s) inputsOfMembers[&l->Input(s)] = &l->Input(s);
        for (unsigned int s = 0; s < l->GetNumOutputSlots(); ++s) outputsOfMembers[&l->Output(s)] = &l->Output(s);
    }
    for (std::size_t i = 0; i < view.GetInputSlots().size(); ++i) {
        auto it = inputsOfMembers.find(view.GetInputSlots()[i]);
        if (it == inputsOfMembers.end()) {
            fail(std::string("input slot ") + std::to_string(i) + " of the " + role + " is not a slot of one of its layers");
        }
        if (!r.m_InputSet.insert(it->second).second) fail(std::string("the ") + role + " lists " + InputName(*it->second) + " twice");
        r.m_Inputs.push_back(it->second);
    }
    for (std::size_t i = 0; i < view.GetOutputSlots().size(); ++i) {
        auto it = outputsOfMembers.find(view.GetOutputSlots()[i]);
        if (it == outputsOfMembers.end()) {
            fail(std::string("output slot ") + std::to_string(i) + " of the " + role + " is not a slot of one of its layers");
        }
        if (!r.m_OutputSet.insert(it->second).second) fail(std::string("the ") + role + " lists " + OutputName(*it->second) + " twice");
        r.m_Outputs.push_back(it->second);
    }
    return r;
}

/// The substitutable view's boundary must be exactly what its layers read from and give to the
/// rest of the graph, or the reconnection would lose or invent edges.
void CheckSubstitutableBoundary(const ResolvedView& s, const Failure& fail) {
    for (Layer* l : s.m_Layers) {
        for (unsigned int i = 0; i < l->GetNumInputSlots(); ++i) {
            const InputSlot& in = l->Input(i);
            const Layer* producer = l->InputLayer(i);
            const bool external = !producer || !s.m_Members.count(producer);
            const bool listed = s.m_InputSet.count(&in) != 0;
            if (external && !listed) {
                fail(InputName(in) + " is fed from outside the substitutable sub-graph but is not one of its input slots");
            }
            if (!external && listed) {
                fail(InputName(in) + " is listed as an input slot of the substitutable sub-graph but is fed from inside it (by " +
                     Describe(*producer) + ")");
            }
        }
        for (unsigned int o = 0; o < l->GetNumOutputSlots(); ++o) {
            const OutputSlot& out = l->Output(o);
            if (s.m_OutputSet.count(&out)) continue;
            for (const InputSlot* reader : out.GetConnections()) {
                if (!s.m_Members.count(&reader->GetOwningLayer())) {
                    fail(OutputName(out) + " is read outside the substitutable sub-graph (by " +
                         Describe(reader->GetOwningLayer()) + ") but is not one of its output slots");
                }
            }
        }
    }
}

void CheckReplacement(const ResolvedView& s, const ResolvedView& r, const Failure& fail) {
    for (Layer* l : r.m_Layers) {
        if (l->GetType() == LayerType::Input || l->GetType() == LayerType::Output) {
            fail("the replacement contains " + Describe(*l) + "; Input and Output layers cannot be substituted in");
        }
        for (unsigned int i = 0; i < l->GetNumInputSlots(); ++i) {
            const InputSlot& in = l->Input(i);
            const Layer* producer = l->InputLayer(i);
            const bool internal = producer && r.m_Members.count(producer);
            if (r.m_InputSet.count(&in)) {
                if (internal) {
                    fail(InputName(in) + " is an input slot of the replacement but is connected to " + Describe(*producer) +
                         " inside it");
                }
            } else if (!internal) {
                fail(InputName(in) + " of the replacement is neither one of its input slots nor connected to another "
                     "replacement layer");
            }
        }
        for (unsigned int o = 0; o < l->GetNumOutputSlots(); ++o) {
            if (!l->Output(o).IsTensorInfoSet()) {
                fail(OutputName(l->Output(o)) + " of the replacement has no tensor info: a backend must set the tensor "
                     "info of every output slot of its replacement layers (IOutputSlot::SetTensorInfo)");
            }
        }
    }
    if (r.m_Inputs.size() != s.m_Inputs.size()) {
        fail("the replacement has " + std::to_string(r.m_Inputs.size()) + " input slots but the substitutable sub-graph has " +
             std::to_string(s.m_Inputs.size()) + " (they are matched by position)");
    }
    if (r.m_Outputs.size() != s.m_Outputs.size()) {
        fail("the replacement has " + std::to_string(r.m_Outputs.size()) + " output slots but the substitutable sub-graph has " +
             std::to_string(s.m_Outputs.size()) + " (they are matched by position)");
    }
    for (std::size_t k = 0; k < s.m_Outputs.size(); ++k) {
        const TensorInfo& want = s.m_Outputs[k]->GetTensorInfo();
        const TensorInfo& got = r.m_Outputs[k]->GetTensorInfo();
        if (want != got) {
            fail("output " + std::to_string(k) + " of the replacement (" + OutputName(*r.m_Outputs[k]) + ") is " +
                 got.ToString() + " but the output it replaces (" + OutputName(*s.m_Outputs[k]) + ") is " + want.ToString());
        }
    }
    // A replacement input slot may be wired (in the backend's network) to a placeholder whose
    // tensor info states what the replacement expects: then it must match what it will read.
    for (std::size_t k = 0; k < s.m_Inputs.size(); ++k) {
        const OutputSlot* declared = r.m_Inputs[k]->GetConnectedOutputSlot();
        const OutputSlot* actual = s.m_Inputs[k]->GetConnectedOutputSlot();
        if (!declared || !declared->IsTensorInfoSet() || !actual) continue;
        if (declared->GetTensorInfo() != actual->GetTensorInfo()) {
            fail("input " + std::to_string(k) + " of the replacement (" + InputName(*r.m_Inputs[k]) + ") expects " +
                 declared->GetTensorInfo().ToString() + " but " + InputName(*s.m_Inputs[k]) + " reads " +
                 actual->GetTensorInfo().ToString());
        }
    }
}

std::string ListLayers(const std::vector<Layer*>& layers) {
    std::string s;
    for (Layer* l : layers) s += (s.empty() ? "" : ", ") + Describe(*l);
    return s;
}

}  // namespace

void ApplySubstitutions(Graph& graph, const BackendId& backend, const ILayerSupport& support, OptimizationViews& views,
                        std::vector<std::string>& log) {
    if (views.GetSubstitutions().empty()) return;
    const auto* replacementNetwork = dynamic_cast<const NetworkImpl*>(views.GetINetwork());
    if (!replacementNetwork) {
        throw BackendUnavailableException("backend '" + backend.Get() +
                                          "' returned optimization views without the network their replacement layers "
                                          "must be created in (OptimizationViews::GetINetwork())");
    }
    const LayerIndex replacementIndex(replacementNetwork->GetGraph());

    for (std::size_t p = 0; p < views.GetSubstitutions().size(); ++p) {
        const SubstitutionPair& pair = views.GetSubstitutions()[p];
        Failure fail(backend, p);
        const LayerIndex graphIndex(graph);
        const ResolvedView s = Resolve(pair.m_SubstitutableSubgraph, graphIndex, "substitutable sub-graph",
                                       "the sub-graph given to the backend", fail);
        fail.SetReplaced(s.m_Layers);
        CheckSubstitutableBoundary(s, fail);
        const ResolvedView r = Resolve(pair.m_ReplacementSubgraph, replacementIndex, "replacement sub-graph",
                                       "the network of OptimizationViews::GetINetwork()", fail);
        CheckReplacement(s, r, fail);

        // Copy the replacement layers; temporary names until the substituted layers are gone.
        std::map<const Layer*, Layer*> copyOf;
        std::vector<Layer*> added;
        for (Layer* l : r.m_Layers) {
            Layer* n = graph.AddLayer(l->GetType(), l->GetDescriptor(), graph.UniqueName(l->Name() + "#substitution"),
                                      l->GetNumInputSlots(), l->GetNumOutputSlots());
            for (unsigned int o = 0; o < l->GetNumOutputSlots(); ++o) n->Output(o).SetTensorInfo(l->Output(o).GetTensorInfo());
            if (IsComputeLayer(*n)) n->SetBackendId(backend);
            copyOf[l] = n;
            added.push_back(n);
        }
        // Internal connections of the replacement.
        for (Layer* l : r.m_Layers) {
            for (unsigned int i = 0; i < l->GetNumInputSlots(); ++i) {
                if (r.m_InputSet.count(&l->Input(i))) continue;
                const OutputSlot* src = l->Input(i).GetConnectedOutputSlot();
                copyOf.at(&src->GetOwningLayer())->Output(src->CalculateIndexOnOwner()).Connect(copyOf.at(l)->Input(i));
            }
        }
        // Boundary inputs, by position.
        for (std::size_t k = 0; k < s.m_Inputs.size(); ++k) {
            OutputSlot* producer = s.m_Inputs[k]->GetConnectedOutputSlot();
            const InputSlot* target = r.m_Inputs[k];
            producer->Connect(copyOf.at(&target->GetOwningLayer())->Input(target->GetSlotIndex()));
        }
        // Boundary outputs, by position: readers outside the substituted layers move over.
        for (std::size_t k = 0; k < s.m_Outputs.size(); ++k) {
            OutputSlot* old = s.m_Outputs[k];
            OutputSlot& now = copyOf.at(&r.m_Outputs[k]->GetOwningLayer())->Output(r.m_Outputs[k]->CalculateIndexOnOwner());
            now.SetOrigin(old->GetOrigin());
            const std::vector<InputSlot*> readers = old->GetConnections();
            for (InputSlot* reader : readers) {
                if (s.m_Members.count(&reader->GetOwningLayer())) continue;
                old->Disconnect(*reader);
                now.Connect(*reader);
            }
        }
        const std::string replaced = ListLayers(s.m_Layers);
        std::vector<std::string> replacedNames;
        for (Layer* l : s.m_Layers) {
            // A layer substituted twice (a replacement replaced again) stands for the originals.
            if (l->m_SubstitutedLayers.empty()) replacedNames.push_back(l->Name());
            else replacedNames.insert(replacedNames.end(), l->m_SubstitutedLayers.begin(), l->m_SubstitutedLayers.end());
        }
        for (Layer* n : added) n->m_SubstitutedLayers = replacedNames;
        for (Layer* l : s.m_Layers) graph.EraseLayer(l);
        for (Layer* l : r.m_Layers) graph.RenameLayer(copyOf.at(l), graph.UniqueName(l->Name()));

        for (Layer* n : added) {
            if (!IsComputeLayer(*n)) continue;
            std::string reason;
            bool ok = false;
            try {
                ok = support.IsLayerSupported(MakeQueueDescriptor(*n), MakeWorkloadInfo(*n), &reason);
            } catch (const std::exception& e) {
                reason = std::string("its layer support check threw: ") + e.what();
            }
            if (!ok) {
                throw BackendUnavailableException("backend '" + backend.Get() + "' substituted " + Describe(*n) + " for " +
                                                  replaced + " but its own layer support rejects that layer: " +
                                                  (reason.empty() ? "no reason given" : reason));
            }
        }
        log.push_back("substituted " + replaced + " on " + backend.Get() + " with " + ListLayers(added));
    }
}

}  // namespace trellis::core
