// Phases 5b (FP32 -> FP16 reduction) and 6b (debug layers) of Optimize().
#include "OptimizedNetwork.hpp"
#include "OptimizerInternal.hpp"

#include <trellis/Exceptions.hpp>
#include <trellis/backends/BackendRegistry.hpp>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

namespace trellis::core {

namespace {

bool IsPrecisionCandidate(const Layer& l) {
    switch (l.GetType()) {
        case LayerType::Input:
        case LayerType::Output:
        case LayerType::Constant:
        case LayerType::Cast:
        case LayerType::MemCopy:
        case LayerType::Debug:
        case LayerType::PreCompiled: return false;
        default: return true;
    }
}

TensorInfo AsType(TensorInfo info, DataType t) {
    info.SetDataType(t);
    return info;
}

/// A Cast layer from `source` to `to`, assigned to the first preferred backend that runs it.
Layer* AddCast(Graph& graph, OutputSlot& source, DataType to, const std::vector<BackendHandles>& backends,
               const std::string& name) {
    Layer* cast = graph.AddLayer(LayerType::Cast, CastDescriptor{to}, graph.UniqueName(name), 1, 1);
    cast->m_Synthesized = true;
    source.Connect(cast->Input(0));
    cast->Output(0).SetTensorInfo(AsType(source.GetTensorInfo(), to));
    if (!AssignLayer(*cast, backends, 0)) {
        std::string reasons;
        for (const auto& [b, r] : cast->m_Declined) reasons += " " + b.Get() + ": " + r + ";";
        throw BackendUnavailableException("FP16 reduction: no preferred backend runs the Cast layer '" + cast->Name() +
                                          "' it needs:" + reasons);
    }
    return cast;
}

}  // namespace

void ReduceFp32ToFp16(Graph& graph, const std::vector<BackendHandles>& backends, std::vector<std::string>& log) {
    const std::vector<Layer*> order = graph.TopologicalOrder();

    // Which layers their backend runs in Float16 (asked with every Float32 tensor as Float16).
    std::set<Layer*> half;
    for (Layer* l : order) {
        if (!IsPrecisionCandidate(*l)) continue;
        QueueDescriptor q = MakeQueueDescriptor(*l);
        WorkloadInfo info = MakeWorkloadInfo(*l);
        bool anyFloat = false;
        for (std::size_t i = 0; i < info.m_InputTensorInfos.size(); ++i) {
            if (info.m_InputTensorInfos[i].GetDataType() != DataType::Float32) continue;
            anyFloat = true;
            info.m_InputTensorInfos[i].SetDataType(DataType::Float16);
            q.m_ConstantInputs[i] = nullptr;  // converted later; the values are not known yet
        }
        for (auto& o : info.m_OutputTensorInfos) {
            if (o.GetDataType() == DataType::Float32) {
                anyFloat = true;
                o.SetDataType(DataType::Float16);
            }
        }
        if (!anyFloat) continue;
        const auto it = std::find_if(backends.begin(), backends.end(),
                                     [&](const BackendHandles& b) { return b.m_Id == l->GetBackendId(); });
        std::string reason;
        if (it != backends.end() && it->m_Support->IsLayerSupported(q, info, &reason)) half.insert(l);
    }

    // Rewrite, producers first: inputs get Float16 versions, outputs turn Float16, and Float32
    // readers get a Cast back.
    std::map<OutputSlot*, OutputSlot*> halfOf;  // Float32 slot -> its Float16 version
    unsigned int casts = 0, folded = 0;
    for (Layer* l : order) {
        if (!half.count(l)) continue;
        for (unsigned int i = 0; i < l->GetNumInputSlots(); ++i) {
            OutputSlot* src = l->Input(i).GetConnectedOutputSlot();
            if (src->GetTensorInfo().GetDataType() != DataType::Float32) continue;
            OutputSlot*& h = halfOf[src];
            if (!h) {
                Layer& producer = src->GetOwningLayer();
                Layer* cast = AddCast(graph, *src, DataType::Float16, backends, producer.Name() + "_fp16");
                h = &cast->Output(0);
                if (producer.GetType() == LayerType::Constant) {
                    // Constants are converted once, now: wire the Cast to this input and fold it.
                    InputSlot& in = l->Input(i);
                    src->Disconnect(in);
                    cast->Output(0).Connect(in);
                    if (FoldLayer(graph, *cast, backends, log)) ++folded;
                    else ++casts;
                    h = in.GetConnectedOutputSlot();
                    continue;
                }
                ++casts;
            }
            InputSlot& in = l->Input(i);
            src->Disconnect(in);
            h->Connect(in);
        }
        for (unsigned int o = 0; o < l->GetNumOutputSlots(); ++o) {
            OutputSlot& out = l->Output(o);
            if (out.GetTensorInfo().GetDataType() != DataType::Float32) continue;
            std::vector<InputSlot*> fp32Readers;
            for (InputSlot* in : out.GetConnections()) {
                if (!half.count(&in->GetOwningLayer())) fp32Readers.push_back(in);
            }
            out.SetTensorInfo(AsType(out.GetTensorInfo(), DataType::Float16));
            if (fp32Readers.empty()) continue;
            for (InputSlot* in : fp32Readers) out.Disconnect(*in);
            Layer* back = AddCast(graph, out, DataType::Float32, backends, l->Name() + "_fp32");
            for (InputSlot* in : fp32Readers) back->Output(0).Connect(*in);
            ++casts;
        }
    }
    log.push_back("FP16 reduction: " + std::to_string(half.size()) + " layers run in Float16, " +
                  std::to_string(casts) + " Cast layers inserted, " + std::to_string(folded) + " constants converted");
}

void InsertDebugLayers(Graph& graph, const std::vector<BackendHandles>& backends, const std::string& folder,
                       const DebugCallback& callback, std::vector<std::string>& log) {
    // Debug layers are tooling, not part of the model: when no preferred backend runs them, any
    // registered backend that does may.
    std::vector<BackendHandles> candidates = backends;
    for (const BackendId& id : BackendRegistryInstance().GetBackendIds()) {
        if (std::none_of(candidates.begin(), candidates.end(), [&](const BackendHandles& b) { return b.m_Id == id; })) {
            if (IBackendInternalUniquePtr b = BackendRegistryInstance().GetFactory(id)()) {
                if (ILayerSupportSharedPtr support = b->GetLayerSupport()) candidates.push_back({id, support});
            }
        }
    }
    const auto sharedCallback = callback ? std::make_shared<const DebugCallback>(callback) : nullptr;
    unsigned int n = 0;
    for (Layer* l : graph.TopologicalOrder()) {
        // Every computed tensor, and the constants the optimizer computed (folded layers).
        const bool folded = l->GetType() == LayerType::Constant && l->m_Synthesized;
        if ((!IsComputeLayer(*l) && !folded) || l->GetType() == LayerType::Debug) continue;
        for (unsigned int o = 0; o < l->GetNumOutputSlots(); ++o) {
            std::string stem = l->Name() + "_out" + std::to_string(o);
            // File names from layer names: keep them portable.
            for (char& c : stem) {
                if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') c = '_';
            }
            DebugDescriptor d{folder, stem, sharedCallback, {}};
            d.m_Source.m_LayerName = l->Name();
            d.m_Source.m_OutputIndex = o;
            d.m_Source.m_Tensor = l->Output(o).GetOrigin();
            d.m_Source.m_Backend = folded ? l->m_FoldedOn : l->GetBackendId();
            d.m_Source.m_OpDetail = l->OpDetail();
            d.m_Source.m_SubstitutedLayers = l->m_SubstitutedLayers;
            for (unsigned int i = 0; i < l->GetNumInputSlots(); ++i) {
                if (const OutputSlot* src = l->Input(i).GetConnectedOutputSlot()) d.m_Source.m_InputTensors.push_back(src->GetOrigin());
            }
            Layer* dbg = graph.AddLayer(LayerType::Debug, std::move(d),
                                        graph.UniqueName(l->Name() + "_debug" + std::to_string(o)), 1, 0);
            dbg->m_Synthesized = true;
            l->Output(o).Connect(dbg->Input(0));
            if (!AssignLayer(*dbg, candidates, 0)) {
                throw BackendUnavailableException("debug layers: no registered backend runs Debug layers (needed for " +
                                                  Describe(*l) + ")");
            }
            ++n;
        }
    }
    log.push_back("debug layers: " + std::to_string(n) + " inserted" +
                  (folder.empty() ? std::string() : ", writing to " + folder) + (callback ? ", calling back" : ""));
}

}  // namespace trellis::core
