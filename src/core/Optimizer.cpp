// Optimize(): network -> optimized network with every layer placed on a backend.
//
// Phases (numbered as in the comments below):
//   1. validate the network (connections, input infos, outputs) and find a topological order
//   2. drop dead layers (those no Output depends on)
//   3. one sweep in topological order: infer shapes/types (resolving descriptors and absorbing
//      constant parameter inputs), check each output against OptimizerOptions::m_MaxTensorBytes
//      (ResourceLimits.cpp) and fold layers whose inputs are all constant; Loop layers are
//      unrolled on the way (LoopUnrolling.cpp)
//   4. backend-independent passes (GraphPasses.cpp): identity removal, redundant reshape /
//      transpose removal, batch-norm folding
//   5. assign each layer to the first preferred backend whose layer support accepts it, keeping
//      every earlier backend's reason
//   6. split into per-backend sub-graphs (contiguous runs of one topological order, hence convex)
//      and give each to its backend's OptimizeSubgraph(); substitutions are applied
//      (Substitution.cpp), failed parts go to the next backend, untouched parts stay
//   7. backend boundaries: MemCopy layers where a consumer cannot read the producer's memory,
//      zero-copy import where it can (BackendBoundaries.cpp)
//
// A network with inputs of unknown dims, or whose phase 3 needs the value of a tensor that comes
// from graph inputs only (a Reshape's shape fed as an input, NonZero's data), is not optimized
// past phase 1: Optimize() returns it "dynamic" (with its source graph) and the runtime calls
// OptimizeSpecialization() for each run's input shapes and, for those inputs, values.
#include "BackendBoundaries.hpp"
#include "GraphPasses.hpp"
#include "InferContext.hpp"
#include "OptimizerInternal.hpp"
#include "Network.hpp"
#include "OptimizedNetwork.hpp"
#include "ResourceLimits.hpp"
#include "Substitution.hpp"

#include <trellis/Exceptions.hpp>
#include <trellis/backends/BackendRegistry.hpp>

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <set>
#include <sstream>

namespace trellis::core {

bool IsComputeLayer(const Layer& layer) {
    const LayerType t = layer.GetType();
    return t != LayerType::Input && t != LayerType::Output && t != LayerType::Constant;
}

QueueDescriptor MakeQueueDescriptor(const Layer& layer) {
    QueueDescriptor q;
    q.m_Type = layer.GetType();
    q.m_Descriptor = &layer.GetDescriptor();
    q.m_LayerName = layer.Name();
    for (unsigned int i = 0; i < layer.GetNumInputSlots(); ++i) {
        Layer* src = layer.InputLayer(i);
        q.m_ConstantInputs.push_back(src && src->GetType() == LayerType::Constant
                                         ? &src->Desc<ConstantDescriptor>().m_Tensor
                                         : nullptr);
    }
    return q;
}

WorkloadInfo MakeWorkloadInfo(const Layer& layer) {
    WorkloadInfo info;
    for (unsigned int i = 0; i < layer.GetNumInputSlots(); ++i) {
        OutputSlot* s = layer.Input(i).GetConnectedOutputSlot();
        info.m_InputTensorInfos.push_back(s ? s->GetTensorInfo() : TensorInfo());
    }
    for (unsigned int i = 0; i < layer.GetNumOutputSlots(); ++i) {
        info.m_OutputTensorInfos.push_back(layer.Output(i).GetTensorInfo());
    }
    return info;
}

OptimizedNetworkImpl::OptimizedNetworkImpl(std::unique_ptr<Graph> graph, std::vector<BackendId> backends,
                                           std::vector<std::string> log, std::size_t maxWorkingMemoryBytes,
                                           std::shared_ptr<const DynamicSource> dynamic)
    : m_Graph(std::move(graph)), m_Backends(std::move(backends)), m_Log(std::move(log)), m_Dynamic(std::move(dynamic)),
      m_MaxWorkingMemoryBytes(maxWorkingMemoryBytes) {
    m_Order = m_Graph->TopologicalOrder();
    for (const BackendId& id : m_Backends) {
        if (BackendRegistryInstance().IsBackendRegistered(id)) {
            m_BackendFactories.push_back(BackendRegistryInstance().GetFactory(id));
        }
    }
}

std::vector<LayerPlacement> OptimizedNetworkImpl::GetLayerPlacements() const {
    std::vector<LayerPlacement> out;
    for (Layer* l : m_Order) {
        LayerPlacement p;
        p.m_LayerName = l->Name();
        p.m_Type = l->GetType();
        p.m_OpDetail = l->OpDetail();
        // A constant made by constant folding says where it was evaluated (trellis inspect
        // lists those with --all only).
        if (l->GetType() == LayerType::Constant && !l->m_FoldedOn.IsEmpty()) p.m_OpDetail = "folded on " + l->m_FoldedOn.Get();
        p.m_Backend = l->GetBackendId();
        for (unsigned int o = 0; o < l->GetNumOutputSlots(); ++o) {
            // A dynamic network's layers are shown before inference: only inputs have infos.
            if (l->Output(o).IsTensorInfoSet()) p.m_Outputs.push_back(l->Output(o).GetTensorInfo());
        }
        p.m_Declined = l->m_Declined;
        p.m_SubstitutedLayers = l->m_SubstitutedLayers;
        if (l->GetType() == LayerType::MemCopy && l->InputLayer(0)) {
            const BackendId from = GetOutputMemoryOwner(*l->InputLayer(0));
            const BackendId& to = l->Desc<MemCopyDescriptor>().m_Destination;
            p.m_CopySource = from.IsEmpty() ? std::string("host") : from.Get();
            p.m_CopyDestination = to.IsEmpty() ? std::string("host") : to.Get();
            if (l->Output(0).IsTensorInfoSet()) p.m_CopyBytes = l->Output(0).GetTensorInfo().GetNumBytes();
        }
        out.push_back(std::move(p));
    }
    return out;
}

std::map<BackendId, unsigned int> OptimizedNetworkImpl::GetBackendLayerCounts() const {
    std::map<BackendId, unsigned int> counts;
    if (m_Dynamic) return counts;  // placed per specialization
    for (Layer* l : m_Order) {
        if (IsComputeLayer(*l)) ++counts[l->GetBackendId()];
    }
    return counts;
}

namespace {

// ---- 1. validation -------------------------------------------------------------------------

void ValidateNetwork(const Graph& graph) {
    bool hasOutput = false;
    std::vector<std::string> problems;
    for (const auto& l : graph.Layers()) {
        if (l->GetType() == LayerType::Output) hasOutput = true;
        for (unsigned int i = 0; i < l->GetNumInputSlots(); ++i) {
            if (!l->Input(i).GetConnectedOutputSlot()) {
                problems.push_back(Describe(*l) + ": input slot " + std::to_string(i) + " is not connected");
            }
        }
        if (l->GetType() == LayerType::Input && !l->Output(0).IsTensorInfoSet()) {
            problems.push_back(Describe(*l) + ": the tensor info of an input layer must be set (SetTensorInfo)");
        }
    }
    if (!hasOutput) problems.push_back("the network has no output layer");
    if (!problems.empty()) {
        std::string msg = "invalid network:";
        for (const auto& p : problems) msg += "\n  " + p;
        throw GraphValidationException(msg);
    }
}

// ---- 2. dead layers ------------------------------------------------------------------------

unsigned int RemoveDeadLayers(Graph& graph) {
    std::set<const Layer*> live;
    std::vector<const Layer*> stack;
    for (const auto& l : graph.Layers()) {
        if (l->GetType() == LayerType::Output) stack.push_back(l.get());
    }
    while (!stack.empty()) {
        const Layer* l = stack.back();
        stack.pop_back();
        if (!live.insert(l).second) continue;
        for (unsigned int i = 0; i < l->GetNumInputSlots(); ++i) {
            if (Layer* src = l->InputLayer(i)) stack.push_back(src);
        }
    }
    std::vector<Layer*> dead;
    for (const auto& l : graph.Layers()) {
        // Inputs stay even when unused: the application binds them by id.
        if (!live.count(l.get()) && l->GetType() != LayerType::Input) dead.push_back(l.get());
    }
    for (Layer* l : dead) graph.EraseLayer(l);
    return static_cast<unsigned int>(dead.size());
}

// ---- 3. inference and folding --------------------------------------------------------------

}  // namespace

/// A DequantizeLinear of 8-bit constant data folds into Float32 values that are exactly
/// (q - zero_point) * scale. Its scales (one, or one per index of m_Axis) are kept in the folded
/// constant's quantization parameters, so that a backend with int8 kernels can take the integers
/// back (dividing by the scale) instead of guessing them; it must check that every value
/// reproduces exactly, since later passes may rewrite the constant. Float32 values carry no other
/// meaning in these fields.
void RecordDequantizedScales(const Layer& layer, TensorInfo& folded) {
    if (layer.GetType() != LayerType::DequantizeLinear || folded.GetDataType() != DataType::Float32) return;
    const Layer* data = layer.InputLayer(0);
    const Layer* scale = layer.InputLayer(1);
    if (!data || !scale || scale->GetType() != LayerType::Constant) return;
    const DataType type = data->Output(0).GetTensorInfo().GetDataType();
    if (type != DataType::UInt8 && type != DataType::Signed8) return;
    const ConstTensor& s = scale->Desc<ConstantDescriptor>().m_Tensor;
    if (s.GetDataType() != DataType::Float32 || !s.GetMemoryArea() || s.GetNumElements() == 0) return;
    const float* p = static_cast<const float*>(s.GetMemoryArea());
    std::vector<float> scales(p, p + s.GetNumElements());
    folded.SetQuantizationScales(scales);
    if (scales.size() > 1) {
        folded.SetQuantizationDim(static_cast<unsigned int>(layer.Desc<QuantizeLinearDescriptor>().m_Axis));
    }
}

bool FoldLayer(Graph& graph, Layer& layer, const std::vector<BackendHandles>& backends, std::vector<std::string>& log) {
    QueueDescriptor q = MakeQueueDescriptor(layer);
    WorkloadInfo info = MakeWorkloadInfo(layer);
    for (const BackendHandles& b : backends) {
        std::string reason;
        if (!b.m_Support->IsLayerSupported(q, info, &reason)) continue;
        // Backend objects are short-lived: create one for the factory and drop it at once.
        IWorkloadFactoryPtr factory = BackendRegistryInstance().GetFactory(b.m_Id)()->CreateWorkloadFactory();
        IWorkloadPtr workload = factory->CreateWorkload(q, info);

        std::vector<PassthroughTensorHandle> inHandles(layer.GetNumInputSlots()), outHandles(layer.GetNumOutputSlots());
        std::vector<ITensorHandle*> inPtrs, outPtrs;
        for (unsigned int i = 0; i < layer.GetNumInputSlots(); ++i) {
            const ConstTensor& t = layer.InputLayer(i)->Desc<ConstantDescriptor>().m_Tensor;
            inHandles[i].Reset(t.GetInfo(), const_cast<void*>(t.GetMemoryArea()));
            inPtrs.push_back(&inHandles[i]);
        }
        std::vector<std::vector<uint8_t>> outData(layer.GetNumOutputSlots());
        for (unsigned int o = 0; o < layer.GetNumOutputSlots(); ++o) {
            outData[o].resize(std::max<std::size_t>(info.m_OutputTensorInfos[o].GetNumBytes(), 1));
            outHandles[o].Reset(info.m_OutputTensorInfos[o], outData[o].data());
            outPtrs.push_back(&outHandles[o]);
        }
        std::vector<uint8_t> scratch(workload->GetScratchBytes() + 64);
        WorkloadIo io;
        io.m_Inputs = inPtrs;
        io.m_Outputs = outPtrs;
        io.m_Scratch = scratch.data();
        workload->Execute(io);

        // The constants keep the folded layer's name (its outputs' names, for several outputs).
        std::vector<std::pair<Layer*, std::string>> created;
        for (unsigned int o = 0; o < layer.GetNumOutputSlots(); ++o) {
            TensorInfo oi = info.m_OutputTensorInfos[o];
            RecordDequantizedScales(layer, oi);
            outData[o].resize(oi.GetNumBytes());
            const std::string name = layer.GetNumOutputSlots() == 1 ? layer.Name() : layer.Name() + ":" + std::to_string(o);
            Layer* c = graph.AddLayer(LayerType::Constant, MakeOwnedConstant(oi, std::move(outData[o])),
                                      graph.UniqueName(name + "#folding"), 0, 1);
            c->m_Synthesized = true;
            c->Output(0).SetTensorInfo(c->Desc<ConstantDescriptor>().m_Tensor.GetInfo());
            c->Output(0).SetOrigin(layer.Output(o).GetOrigin());
            c->m_FoldedOn = b.m_Id;
            layer.Output(o).MoveAllConnections(c->Output(0));
            created.emplace_back(c, name);
        }
        log.push_back("folded " + Describe(layer) + " into a constant (evaluated on " + b.m_Id.Get() + ")");
        graph.EraseLayer(&layer);
        for (auto& [c, name] : created) graph.RenameLayer(c, graph.UniqueName(name));
        return true;
    }
    return false;
}

namespace {

/// Shape only needs its input's info: replace it with a constant directly.
void FoldShape(Graph& graph, Layer& layer, std::vector<std::string>& log) {
    const TensorInfo& oi = layer.Output(0).GetTensorInfo();
    const TensorShape& in = layer.Input(0).GetConnectedOutputSlot()->GetTensorInfo().GetShape();
    const auto& d = layer.Desc<ShapeDescriptor>();
    const int64_t rank = in.GetNumDimensions();
    int64_t start = d.m_Start < 0 ? d.m_Start + rank : d.m_Start;
    start = std::clamp<int64_t>(start, 0, rank);
    std::vector<uint8_t> bytes(oi.GetNumBytes());
    auto* p = reinterpret_cast<int64_t*>(bytes.data());
    for (std::size_t i = 0; i < oi.GetNumElements(); ++i) p[i] = in[static_cast<unsigned int>(start + static_cast<int64_t>(i))];
    Layer* c = graph.AddLayer(LayerType::Constant, MakeOwnedConstant(oi, std::move(bytes)),
                              graph.UniqueName(layer.Name() + "#folding"), 0, 1);
    c->m_Synthesized = true;
    c->Output(0).SetTensorInfo(c->Desc<ConstantDescriptor>().m_Tensor.GetInfo());
    c->Output(0).SetOrigin(layer.Output(0).GetOrigin());
    layer.Output(0).MoveAllConnections(c->Output(0));
    log.push_back("folded " + Describe(layer) + " (input shape " + in.ToString() + " is static)");
    const std::string name = layer.Name();
    graph.EraseLayer(&layer);
    graph.RenameLayer(c, graph.UniqueName(name));
}

bool IsFoldable(const Layer& layer) {
    switch (layer.GetType()) {
        case LayerType::Input:
        case LayerType::Output:
        case LayerType::Constant:
        case LayerType::PreCompiled:
        case LayerType::MemCopy: return false;
        default: break;
    }
    for (unsigned int i = 0; i < layer.GetNumInputSlots(); ++i) {
        Layer* src = layer.InputLayer(i);
        if (!src || src->GetType() != LayerType::Constant) return false;
    }
    return true;
}

/// Infers `layer`'s outputs and checks each against the tensor-size limit before anything
/// allocates it (folding comes after this, the runtime's arena much later).
void InferLayer(Layer& layer, std::size_t maxTensorBytes) {
    std::vector<TensorInfo> inputs;
    std::vector<const ConstTensor*> constants;
    for (unsigned int i = 0; i < layer.GetNumInputSlots(); ++i) {
        OutputSlot* s = layer.Input(i).GetConnectedOutputSlot();
        inputs.push_back(s->GetTensorInfo());
        Layer* src = &s->GetOwningLayer();
        constants.push_back(src->GetType() == LayerType::Constant ? &src->Desc<ConstantDescriptor>().m_Tensor : nullptr);
    }
    InferContext ctx(layer.GetType(), layer.Name(), layer.MutableDescriptor(), std::move(inputs), std::move(constants),
                     layer.GetNumOutputSlots());
    std::vector<TensorInfo> outs = GetOpInfo(layer.GetType()).m_Infer(ctx);

    // Absorbed parameter inputs were folded into the descriptor: drop their slots.
    const auto& absorbed = ctx.GetAbsorbedInputs();
    for (auto it = absorbed.rbegin(); it != absorbed.rend(); ++it) layer.RemoveInputSlot(*it);

    if (layer.GetType() == LayerType::Input) {
        // The application (or the CLI, or a fuzzer) allocates this one from the declared shape.
        CheckTensorLimit(Describe(layer), 0, layer.Output(0).GetTensorInfo(), maxTensorBytes);
        return;
    }
    if (layer.GetType() == LayerType::Output || layer.GetType() == LayerType::PreCompiled) return;
    if (outs.size() != layer.GetNumOutputSlots()) {
        throw LayerValidationException(Describe(layer) + ": inference produced " + std::to_string(outs.size()) +
                                       " outputs but the layer has " + std::to_string(layer.GetNumOutputSlots()));
    }
    for (unsigned int o = 0; o < outs.size(); ++o) {
        OutputSlot& slot = layer.Output(o);
        if (slot.IsTensorInfoSet() && layer.GetType() != LayerType::Constant) {
            const TensorInfo& set = slot.GetTensorInfo();
            if (set.GetShape() != outs[o].GetShape() || set.GetDataType() != outs[o].GetDataType()) {
                throw LayerValidationException(Describe(layer) + ": output " + std::to_string(o) + " was set to " +
                                               set.ToString() + " but the layer produces " + outs[o].ToString());
            }
        }
        CheckTensorLimit(Describe(layer), o, outs[o], maxTensorBytes);
        TensorInfo info = outs[o];
        info.SetConstant(layer.GetType() == LayerType::Constant);
        slot.SetTensorInfo(info);
    }
}

/// The graph inputs whose values decide the tensor read by `slot` (through any layers; a Shape
/// layer's value depends on its input's shape only, so the walk stops there).
std::set<LayerBindingId> InputsBehind(const InputSlot& slot) {
    std::set<LayerBindingId> found;
    std::set<const Layer*> seen;
    std::vector<const Layer*> stack;
    if (OutputSlot* s = slot.GetConnectedOutputSlot()) stack.push_back(&s->GetOwningLayer());
    while (!stack.empty()) {
        const Layer* l = stack.back();
        stack.pop_back();
        if (!seen.insert(l).second) continue;
        if (l->GetType() == LayerType::Input) {
            found.insert(l->Desc<BindingDescriptor>().m_BindingId);
            continue;
        }
        if (l->GetType() == LayerType::Shape) continue;
        for (unsigned int i = 0; i < l->GetNumInputSlots(); ++i) {
            if (Layer* src = l->InputLayer(i)) stack.push_back(src);
        }
    }
    return found;
}

/// The first layer behind `slot` whose inputs are all constant (so only folding could have made
/// its output constant), or nullptr.
const Layer* UnfoldedLayerBehind(const InputSlot& slot) {
    std::set<const Layer*> seen;
    std::vector<const Layer*> stack;
    if (OutputSlot* s = slot.GetConnectedOutputSlot()) stack.push_back(&s->GetOwningLayer());
    while (!stack.empty()) {
        const Layer* l = stack.back();
        stack.pop_back();
        if (!seen.insert(l).second || l->GetType() == LayerType::Constant || l->GetType() == LayerType::Input) continue;
        bool allConstant = true;
        for (unsigned int i = 0; i < l->GetNumInputSlots(); ++i) {
            Layer* src = l->InputLayer(i);
            allConstant = allConstant && src && src->GetType() == LayerType::Constant;
            if (src) stack.push_back(src);
        }
        if (allConstant) return l;
    }
    return nullptr;
}

void InferAndFold(Graph& graph, const std::vector<BackendHandles>& backends, bool fold, std::size_t maxTensorBytes,
                  std::vector<std::string>& log) {
    const std::vector<Layer*> order = graph.TopologicalOrder();
    // A Loop layer adds the layers of its next iteration (or of its results) to the front: they
    // read only layers already done, and the loop's readers come after them.
    std::deque<Layer*> pending(order.begin(), order.end());
    unsigned int folded = 0;
    while (!pending.empty()) {
        Layer* layer = pending.front();
        pending.pop_front();
        try {
            if (layer->GetType() == LayerType::Loop) {
                const std::vector<Layer*> next = UnrollLoopStep(graph, *layer, log);
                pending.insert(pending.begin(), next.begin(), next.end());
                continue;
            }
            InferLayer(*layer, maxTensorBytes);
        } catch (const ParameterNotConstant& e) {
            std::set<LayerBindingId> inputs = InputsBehind(layer->Input(e.GetInput()));
            if (!inputs.empty()) throw NeedsInputValues{std::move(inputs), e.what()};
            // Everything behind it is constant: a layer there was left unfolded because no
            // preferred backend can evaluate it.
            if (const Layer* stuck = UnfoldedLayerBehind(layer->Input(e.GetInput()))) {
                throw BackendUnavailableException(std::string(e.what()) + "; it is computed by " + Describe(*stuck) +
                                                  ", which could not be evaluated while optimizing: that layer is "
                                                  "not supported by any of the preferred backends");
            }
            throw LayerValidationException(e.what());
        }
        if (layer->GetType() == LayerType::Shape) {
            FoldShape(graph, *layer, log);
            ++folded;
        } else if (fold && IsFoldable(*layer)) {
            if (FoldLayer(graph, *layer, backends, log)) ++folded;
        }
    }
    if (folded) log.push_back("constant folding: " + std::to_string(folded) + " layers folded");
}

// ---- 5. backend assignment -------------------------------------------------------------------

}  // namespace

bool AssignLayer(Layer& layer, const std::vector<BackendHandles>& backends, std::size_t first) {
    const QueueDescriptor q = MakeQueueDescriptor(layer);
    const WorkloadInfo info = MakeWorkloadInfo(layer);
    for (std::size_t b = first; b < backends.size(); ++b) {
        std::string reason;
        bool ok = false;
        try {
            ok = backends[b].m_Support->IsLayerSupported(q, info, &reason);
        } catch (const std::exception& e) {
            reason = std::string("layer support check threw: ") + e.what();
        }
        if (ok) {
            layer.SetBackendId(backends[b].m_Id);
            return true;
        }
        layer.m_Declined.emplace_back(backends[b].m_Id, reason.empty() ? "unsupported (no reason given)" : reason);
    }
    return false;
}

namespace {

std::string UnsupportedMessage(const std::vector<Layer*>& layers) {
    std::ostringstream os;
    os << layers.size() << (layers.size() == 1 ? " layer is" : " layers are")
       << " not supported by any of the preferred backends:";
    for (Layer* l : layers) {
        os << "\n  " << Describe(*l) << " (inputs:";
        for (unsigned int i = 0; i < l->GetNumInputSlots(); ++i) {
            os << " " << l->Input(i).GetConnectedOutputSlot()->GetTensorInfo().ToString();
        }
        os << ")";
        for (const auto& [backend, reason] : l->m_Declined) os << "\n    " << backend << ": " << reason;
    }
    return os.str();
}

// ---- 6. sub-graphs ---------------------------------------------------------------------------

SubgraphView MakeSubgraphView(const std::vector<Layer*>& layers) {
    std::set<const Layer*> members(layers.begin(), layers.end());
    SubgraphView::Layers ls;
    SubgraphView::InputSlots ins;
    SubgraphView::OutputSlots outs;
    for (Layer* l : layers) {
        ls.push_back(l);
        for (unsigned int i = 0; i < l->GetNumInputSlots(); ++i) {
            Layer* src = l->InputLayer(i);
            if (!src || !members.count(src)) ins.push_back(&l->Input(i));
        }
        for (unsigned int o = 0; o < l->GetNumOutputSlots(); ++o) {
            bool external = l->Output(o).GetConnections().empty();
            for (InputSlot* in : l->Output(o).GetConnections()) {
                if (!members.count(&in->GetOwningLayer())) external = true;
            }
            if (external) outs.push_back(&l->Output(o));
        }
    }
    return SubgraphView(std::move(ls), std::move(ins), std::move(outs));
}

void OptimizeSubgraphs(Graph& graph, const std::vector<BackendHandles>& backends, std::vector<std::string>& log) {
    std::vector<Layer*> order = graph.TopologicalOrder();
    std::vector<std::vector<Layer*>> runs;
    for (Layer* l : order) {
        if (!IsComputeLayer(*l)) continue;
        if (runs.empty() || runs.back().front()->GetBackendId() != l->GetBackendId()) runs.emplace_back();
        runs.back().push_back(l);
    }
    std::vector<Layer*> unsupported;
    for (const auto& run : runs) {
        const BackendId id = run.front()->GetBackendId();
        SubgraphView view = MakeSubgraphView(run);
        IBackendInternalUniquePtr backend = BackendRegistryInstance().GetFactory(id)();
        if (!backend) throw BackendUnavailableException("backend '" + id.Get() + "': its factory returned null");
        OptimizationViews views;
        try {
            views = backend->OptimizeSubgraph(view);
        } catch (const Exception&) {
            throw;
        } catch (const std::exception& e) {
            throw BackendUnavailableException("backend '" + id.Get() + "': OptimizeSubgraph threw: " + e.what());
        }

        // The three lists must cover exactly the layers the backend was given.
        std::multiset<const IConnectableLayer*> covered;
        for (const auto& s : views.GetSubstitutions()) {
            for (auto* l : s.m_SubstitutableSubgraph.GetLayers()) covered.insert(l);
        }
        for (const auto& s : views.GetFailedSubgraphs()) {
            for (auto* l : s.GetLayers()) covered.insert(l);
        }
        for (const auto& s : views.GetUntouchedSubgraphs()) {
            for (auto* l : s.GetLayers()) covered.insert(l);
        }
        std::multiset<const IConnectableLayer*> given(run.begin(), run.end());
        if (covered != given) {
            throw BackendUnavailableException("backend '" + id.Get() +
                                              "' returned optimization views that do not exactly cover the sub-graph "
                                              "it was given (" + std::to_string(given.size()) + " layers given, " +
                                              std::to_string(covered.size()) + " covered)");
        }
        if (!views.GetSubstitutions().empty()) {
            const auto& support = std::find_if(backends.begin(), backends.end(),
                                               [&](const BackendHandles& b) { return b.m_Id == id; })->m_Support;
            ApplySubstitutions(graph, id, *support, views, log);
            // Replacing a part that is not convex (a path leaves it and comes back) makes a cycle.
            try {
                graph.TopologicalOrder();
            } catch (const GraphValidationException& e) {
                throw BackendUnavailableException("backend '" + id.Get() +
                                                  "': applying its substitutions made the graph cyclic (a substitutable "
                                                  "sub-graph is not convex): " + e.what());
            }
        }
        const std::size_t current = static_cast<std::size_t>(
            std::find_if(backends.begin(), backends.end(), [&](const BackendHandles& b) { return b.m_Id == id; }) -
            backends.begin());
        for (const auto& failed : views.GetFailedSubgraphs()) {
            for (IConnectableLayer* il : failed.GetLayers()) {
                Layer* l = static_cast<Layer*>(il);
                l->m_Declined.emplace_back(id, "the backend's OptimizeSubgraph rejected it");
                if (AssignLayer(*l, backends, current + 1)) {
                    log.push_back("re-assigned " + Describe(*l) + " from " + id.Get() + " to " + l->GetBackendId().Get() +
                                  " (failed sub-graph)");
                } else {
                    unsupported.push_back(l);
                }
            }
        }
    }
    if (!unsupported.empty()) throw BackendUnavailableException(UnsupportedMessage(unsupported));
    log.push_back("sub-graphs: " + std::to_string(runs.size()) + " given to backends");
}

/// The layer support of a backend that is not available (IBackendInternal::IsAvailable): no to
/// everything, with the backend's reason.
class UnavailableLayerSupport final : public ILayerSupport {
public:
    explicit UnavailableLayerSupport(std::string reason) : m_Reason(std::move(reason)) {}
    bool IsLayerSupported(const QueueDescriptor&, const WorkloadInfo&, std::string* reason) const override {
        if (reason) *reason = m_Reason;
        return false;
    }
private:
    std::string m_Reason;
};

std::vector<BackendHandles> MakeBackendHandles(const std::vector<BackendId>& preferences,
                                               std::vector<std::string>& warnings) {
    std::vector<BackendHandles> backends;
    std::set<BackendId> seen;
    for (const BackendId& id : preferences) {
        if (!seen.insert(id).second) continue;
        if (!BackendRegistryInstance().IsBackendRegistered(id)) {
            warnings.push_back("backend '" + id.Get() + "' is not registered and was skipped (registered: " +
                               BackendRegistryInstance().GetBackendIdsAsString() + ")");
            continue;
        }
        // A short-lived backend object: only its layer support is kept.
        IBackendInternalUniquePtr backend = BackendRegistryInstance().GetFactory(id)();
        if (!backend) throw BackendUnavailableException("backend '" + id.Get() + "': its factory returned null");
        // A backend whose device is missing declines every layer with its reason (API 1.3).
        std::string unavailable;
        if (!BackendRegistryInstance().IsBackendAvailable(id, &unavailable)) {
            warnings.push_back("backend '" + id.Get() + "' is not available: " + unavailable +
                               "; its layers go to the next preferred backend");
            backends.push_back({id, std::make_shared<UnavailableLayerSupport>(id.Get() + " is not available: " + unavailable)});
            continue;
        }
        backends.push_back({id, backend->GetLayerSupport()});
        if (!backends.back().m_Support) {
            throw BackendUnavailableException("backend '" + id.Get() + "' returned no layer support object");
        }
    }
    if (backends.empty()) {
        std::string preferred;
        for (const BackendId& id : preferences) preferred += (preferred.empty() ? "" : ", ") + id.Get();
        throw BackendUnavailableException("none of the preferred backends (" + preferred +
                                          ") is registered (registered: " +
                                          BackendRegistryInstance().GetBackendIdsAsString() + ")");
    }
    return backends;
}

/// The backends constant folding tries, in order: every registered backend advertising
/// kReferenceNumericsCapability, then the preferred ones.
std::vector<BackendHandles> MakeFoldingBackends(const std::vector<BackendHandles>& preferred) {
    std::vector<BackendHandles> out;
    for (const BackendId& id : BackendRegistryInstance().GetBackendIds()) {
        IBackendInternalUniquePtr backend = BackendRegistryInstance().GetFactory(id)();
        if (!backend) continue;
        const BackendCapabilities caps = backend->GetCapabilities();
        const bool reference = std::any_of(caps.begin(), caps.end(), [](const auto& c) {
            return c.first == kReferenceNumericsCapability && c.second;
        });
        if (!reference) continue;
        if (ILayerSupportSharedPtr support = backend->GetLayerSupport()) out.push_back({id, support});
    }
    for (const BackendHandles& b : preferred) {
        if (std::none_of(out.begin(), out.end(), [&](const BackendHandles& o) { return o.m_Id == b.m_Id; })) out.push_back(b);
    }
    return out;
}

/// Phases 2-7 on a validated graph whose inputs all have known shapes.
IOptimizedNetworkPtr RunPhases(std::unique_ptr<Graph> graph, const std::vector<BackendHandles>& backends,
                               const IDeviceSpec& deviceSpec, const OptimizerOptions& options,
                               std::vector<std::string>& log) {
    // 2. dead layers
    if (unsigned int n = RemoveDeadLayers(*graph)) log.push_back("removed " + std::to_string(n) + " dead layers");

    // 3. inference + folding (folding also makes parameter inputs of shape chains constant);
    // constants are evaluated on a reference-numerics backend first (see IBackendInternal.hpp)
    InferAndFold(*graph, MakeFoldingBackends(backends), true, ResolveMemoryLimit(options.m_MaxTensorBytes), log);
    if (unsigned int n = RemoveDeadLayers(*graph)) {
        log.push_back("removed " + std::to_string(n) + " layers no output reads (constants left by folding, unused "
                      "values of unrolled loops)");
    }

    // 4. graph passes
    if (options.m_EnableGraphOptimizations) {
        RunGraphPasses(*graph, log);
        RemoveDeadLayers(*graph);
    }

    // 5. assignment
    std::vector<Layer*> unsupported;
    for (Layer* l : graph->TopologicalOrder()) {
        if (!IsComputeLayer(*l)) continue;
        l->m_Declined.clear();
        if (!AssignLayer(*l, backends, 0)) unsupported.push_back(l);
    }
    if (!unsupported.empty()) throw BackendUnavailableException(UnsupportedMessage(unsupported));

    // 5b. FP32 -> FP16 reduction where the assigned backend supports the layer in Float16
    if (options.m_ReduceFp32ToFp16) ReduceFp32ToFp16(*graph, backends, log);

    // 6. sub-graphs
    OptimizeSubgraphs(*graph, backends, log);

    // 6b. debug layers after every layer output
    if (options.m_Debug) InsertDebugLayers(*graph, backends, options.m_DebugToFolder, options.m_DebugCallback, log);

    // 7. backend boundaries
    InsertBackendBoundaryCopies(*graph, &deviceSpec, log);

    std::vector<BackendId> used;
    for (const auto& b : backends) used.push_back(b.m_Id);
    return IOptimizedNetworkPtr(new OptimizedNetworkImpl(std::move(graph), std::move(used), log,
                                                         options.m_MaxWorkingMemoryBytes),
                                &IOptimizedNetwork::Destroy);
}

}  // namespace

IOptimizedNetworkPtr OptimizeImpl(const INetwork& inNetwork, const std::vector<BackendId>& preferences,
                                  const IDeviceSpec& deviceSpec, const OptimizerOptions& options,
                                  std::vector<std::string>& log,
                                  std::vector<std::string>& warnings) {
    const auto* network = dynamic_cast<const NetworkImpl*>(&inNetwork);
    if (!network) throw InvalidArgumentException("Optimize: the network was not created by INetwork::Create()");
    if (preferences.empty()) throw InvalidArgumentException("Optimize: the backend preference list is empty");
    if (options.m_Debug && options.m_DebugToFolder.empty() && !options.m_DebugCallback) {
        throw InvalidArgumentException("Optimize: m_Debug needs m_DebugToFolder (the folder the tensors are written to) "
                                       "or m_DebugCallback");
    }
    const std::vector<BackendHandles> backends = MakeBackendHandles(preferences, warnings);

    // 1. validate
    std::unique_ptr<Graph> graph = network->GetGraph().Clone();
    ValidateNetwork(*graph);
    graph->TopologicalOrder();  // throws on a cycle

    // A network with inputs of unknown dims, or needing input values in phase 3, is dynamic.
    auto deferred = [&](std::set<LayerBindingId> valueInputs, std::string reason) {
        auto source = std::make_shared<DynamicSource>();
        source->m_Graph = network->GetGraph().Clone();
        for (const auto& b : backends) source->m_Preferences.push_back(b.m_Id);
        source->m_Options = options;
        source->m_ValueInputs = std::move(valueInputs);
        source->m_Reason = reason;
        log.push_back("dynamic network: " + reason + "; it is optimized for each run's input shapes when it runs");
        std::unique_ptr<Graph> shown = network->GetGraph().Clone();
        return IOptimizedNetworkPtr(new OptimizedNetworkImpl(std::move(shown), source->m_Preferences, log,
                                                             options.m_MaxWorkingMemoryBytes, source),
                                    &IOptimizedNetwork::Destroy);
    };
    std::string unknownDims;
    for (const auto& l : graph->Layers()) {
        if (l->GetType() != LayerType::Input || l->Output(0).GetTensorInfo().GetShape().AreAllDimensionsSpecified()) {
            continue;
        }
        unknownDims += (unknownDims.empty() ? "" : ", ") + Describe(*l) + " is " +
                       l->Output(0).GetTensorInfo().ToString();
    }
    if (!unknownDims.empty()) return deferred({}, "inputs with dims decided at run time (" + unknownDims + ")");
    try {
        return RunPhases(std::move(graph), backends, deviceSpec, options, log);
    } catch (const NeedsInputValues& needs) {
        std::string names;
        for (LayerBindingId b : needs.m_Bindings) names += (names.empty() ? "" : ", ") + std::to_string(b);
        return deferred(needs.m_Bindings, "needs the values of input binding(s) " + names + " (" + needs.m_Message + ")");
    }
}

IOptimizedNetworkPtr OptimizeSpecialization(const DynamicSource& source,
                                            const std::map<LayerBindingId, ConstTensor>& inputs,
                                            const std::set<LayerBindingId>& valueInputs, const IDeviceSpec& deviceSpec,
                                            std::vector<std::string>& log) {
    std::vector<std::string> warnings;
    const std::vector<BackendHandles> backends = MakeBackendHandles(source.m_Preferences, warnings);
    std::unique_ptr<Graph> graph = source.m_Graph->Clone();
    std::vector<Layer*> inputLayers;
    for (const auto& l : graph->Layers()) {
        if (l->GetType() == LayerType::Input) inputLayers.push_back(l.get());
    }
    for (Layer* l : inputLayers) {
        const LayerBindingId id = l->Desc<BindingDescriptor>().m_BindingId;
        const auto it = inputs.find(id);
        if (it == inputs.end()) {
            throw InvalidArgumentException("input binding " + std::to_string(id) + " (" + Describe(*l) +
                                           ") was not given");
        }
        TensorInfo info = it->second.GetInfo();
        info.SetConstant(false);
        if (!valueInputs.count(id)) {
            l->Output(0).SetTensorInfo(info);
            continue;
        }
        // Pinned: a Constant holding a copy of this run's value replaces the input.
        const auto* bytes = static_cast<const uint8_t*>(it->second.GetMemoryArea());
        std::vector<uint8_t> copy(bytes, bytes + info.GetNumBytes());
        Layer* c = graph->AddLayer(LayerType::Constant, MakeOwnedConstant(info, std::move(copy)),
                                   graph->UniqueName(l->Name() + "#value"), 0, 1);
        c->m_Synthesized = true;
        c->Output(0).SetTensorInfo(c->Desc<ConstantDescriptor>().m_Tensor.GetInfo());
        l->Output(0).MoveAllConnections(c->Output(0));
        log.push_back("pinned the value of " + Describe(*l) + " (" + info.ToString() + ")");
        const std::string name = l->Name();
        graph->EraseLayer(l);
        graph->RenameLayer(c, graph->UniqueName(name));
    }
    return RunPhases(std::move(graph), backends, deviceSpec, source.m_Options, log);
}

}  // namespace trellis::core

namespace trellis {

void IOptimizedNetwork::Destroy(IOptimizedNetwork* network) { delete network; }

IOptimizedNetworkPtr Optimize(const INetwork& network, const std::vector<BackendId>& backendPreferences,
                              const IDeviceSpec& deviceSpec, const OptimizerOptions& options,
                              std::vector<std::string>* messages) {
    std::vector<std::string> log, warnings;
    try {
        IOptimizedNetworkPtr net = core::OptimizeImpl(network, backendPreferences, deviceSpec, options, log, warnings);
        if (messages) messages->insert(messages->end(), warnings.begin(), warnings.end());
        return net;
    } catch (const Exception& e) {
        if (messages) {
            messages->insert(messages->end(), warnings.begin(), warnings.end());
            messages->push_back(e.what());
        }
        throw;
    }
}

}  // namespace trellis
