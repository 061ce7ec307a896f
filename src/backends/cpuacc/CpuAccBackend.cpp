// CpuAcc: the backend object, its workload factory, and its registration (linked into libtrellis).
#include "CpuAccBackend.hpp"

#include "CpuAccGraph.hpp"
#include "CpuAccRegion.hpp"
#include "CpuAccSupport.hpp"

#include <trellis/Exceptions.hpp>
#include <trellis/backends/BackendRegistry.hpp>

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <thread>

namespace trellis::cpuacc {

namespace {

const char* IsaName(dnnl::cpu_isa isa) {
    switch (isa) {
        case dnnl::cpu_isa::sse41: return "SSE4.1";
        case dnnl::cpu_isa::avx: return "AVX";
        case dnnl::cpu_isa::avx2: return "AVX2";
        case dnnl::cpu_isa::avx2_vnni: return "AVX2-VNNI";
        case dnnl::cpu_isa::avx512_core: return "AVX-512";
        case dnnl::cpu_isa::avx512_core_vnni: return "AVX-512 VNNI";
        case dnnl::cpu_isa::avx512_core_bf16: return "AVX-512 BF16";
        case dnnl::cpu_isa::avx512_core_amx: return "AMX";
        default: return "an ISA without AVX-512";
    }
}

std::string WinogradUnavailableReason() {
    return std::string("oneDNN 2.6 has Winograd convolutions for AVX-512 only, and runs up to ") +
           IsaName(dnnl::get_effective_cpu_isa()) + " here";
}

/// A two-valued option: true for `yes`, false for `no`; anything else is refused by name.
bool Choice(const std::string& name, const std::string& value, const char* yes, const char* no) {
    if (value == yes) return true;
    if (value == no) return false;
    throw InvalidArgumentException("CpuAcc: option " + name + "='" + value + "' is not one of: " + yes + ", " + no);
}

RegionOptions ParseOptions(const IBackendInternal::BackendOptions& options) {
    RegionOptions r;
    for (const auto& [name, value] : options) {
        if (name == "NumThreads") {
            std::size_t used = 0;
            long n = -1;
            try {
                n = std::stol(value, &used);
            } catch (const std::exception&) {
                used = 0;
            }
            if (used != value.size() || n < 0 || n > 1024) {
                throw InvalidArgumentException("CpuAcc: option NumThreads='" + value +
                                               "' is not a thread count (0 to 1024; 0 = all cores)");
            }
            r.m_NumThreads = static_cast<int>(n);
        } else if (name == "FastMath") {
            if (value == "bf16") {
                const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
                if (isa != dnnl::cpu_isa::avx512_core_bf16 && isa != dnnl::cpu_isa::avx512_core_amx) {
                    throw InvalidArgumentException("CpuAcc: option FastMath='bf16' needs a CPU with AVX-512 BF16 or AMX; "
                                                   "this one has neither");
                }
                r.m_FastMathBf16 = true;
            }
            else if (value == "none" || value.empty()) r.m_FastMathBf16 = false;
            else throw InvalidArgumentException("CpuAcc: option FastMath='" + value + "' is not one of: none, bf16");
        } else if (name == "ConvLayout") {
            r.m_BlockedConvLayout = Choice(name, value, "blocked", "auto");
        } else if (name == "Winograd") {
            r.m_Winograd = Choice(name, value, "on", "off");
        } else if (name == "Xnnpack") {
            r.m_Xnnpack = Choice(name, value, "on", "off");
        } else if (name == "Swish") {
            r.m_OwnSwish = Choice(name, value, "own", "onednn");
        } else if (name == "Recurrent") {
            r.m_OwnRecurrence = Choice(name, value, "own", "onednn");
        } else if (name == "MatMul") {
            r.m_OwnGemm = Choice(name, value, "own", "onednn");
        } else if (name == "MaxPool") {
            r.m_OwnMaxPool = Choice(name, value, "own", "onednn");
        }
        // Other names are for other versions or other backends: ignored, as the SDK asks.
    }
    if (r.m_NumThreads == 0) r.m_NumThreads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    return r;
}

class CpuAccWorkloadFactory final : public IWorkloadFactory {
public:
    explicit CpuAccWorkloadFactory(RegionOptions options) : m_Options(options) {}
    const BackendId& GetBackendId() const override { return CpuAccBackend::GetIdStatic(); }

    IWorkloadPtr CreateWorkload(const QueueDescriptor& descriptor, const WorkloadInfo& info) const override {
        std::string reason;
        if (!CpuAccLayerSupport().IsLayerSupported(descriptor, info, &reason)) {
            throw LayerValidationException("CpuAcc cannot create a workload for " +
                                           std::string(GetLayerTypeName(descriptor.m_Type)) + " '" +
                                           descriptor.m_LayerName + "': " + reason);
        }
        std::shared_ptr<RegionGraph> graph;
        if (descriptor.m_Type == LayerType::PreCompiled) {
            const auto& d = descriptor.Get<PreCompiledDescriptor>();
            graph = static_cast<const RegionObject*>(d.m_PreCompiledObject.get())->GetGraph();
        } else {
            graph = BuildSingleLayerGraph(descriptor, info);
        }
        return std::make_unique<CpuAccRegionWorkload>(graph, descriptor.m_ConstantInputs, m_Options,
                                                      descriptor.m_LayerName);
    }
private:
    RegionOptions m_Options;
};

}  // namespace

const BackendId& CpuAccBackend::GetIdStatic() {
    static const BackendId s_Id{"CpuAcc"};
    return s_Id;
}

IBackendInternal::IWorkloadFactoryPtr CpuAccBackend::CreateWorkloadFactory(const IMemoryManagerSharedPtr&) const {
    return std::make_unique<CpuAccWorkloadFactory>(ParseOptions({}));
}

IBackendInternal::IWorkloadFactoryPtr CpuAccBackend::CreateWorkloadFactoryWithOptions(const IMemoryManagerSharedPtr&,
                                                                                     const BackendOptions& options) const {
    return std::make_unique<CpuAccWorkloadFactory>(ParseOptions(options));
}

std::vector<std::string> CpuAccBackend::GetOptionWarnings(const BackendOptions& options) const {
    std::vector<std::string> warnings;
    const auto it = options.find("Winograd");
    if (it != options.end() && it->second == "on" && !OneDnnHasWinograd()) {
        warnings.push_back("option Winograd=on cannot take effect: " + WinogradUnavailableReason() +
                           "; 3x3 convolutions run the direct kernel");
    }
#ifndef TRELLIS_CPUACC_HAVE_XNNPACK
    const auto x = options.find("Xnnpack");
    if (x != options.end() && x->second == "on") {
        warnings.push_back("option Xnnpack=on cannot take effect: CpuAcc was built without XNNPACK (libxnnpack-dev); "
                           "one-row matmuls run on oneDNN");
    }
#endif
    return warnings;
}

IBackendInternal::ILayerSupportSharedPtr CpuAccBackend::GetLayerSupport() const {
    return std::make_shared<CpuAccLayerSupport>();
}

namespace {

/// Constant bytes one region packs at most. Larger runs are cut into consecutive regions so that
/// LoadNetwork can free each region's original weights as soon as that region has packed them
/// (IWorkload::ReadsConstantInput): weights are never resident twice in full. A cut costs at most
/// one layout change of the tensors crossing it.
constexpr std::size_t kRegionWeightBudget = 64u << 20;
/// Inputs one region takes at most (the op table allows a PreCompiled layer 1024).
constexpr std::size_t kRegionMaxInputs = 1000;

std::size_t ConstantBytes(const IConnectableLayer& layer, std::set<const IOutputSlot*>& seen) {
    std::size_t bytes = 0;
    for (unsigned int i = 0; i < layer.GetNumInputSlots(); ++i) {
        const IOutputSlot* src = layer.GetInputSlot(i).GetConnection();
        if (src && src->GetOwningIConnectableLayer().GetType() == LayerType::Constant && seen.insert(src).second) {
            // Weights folded from int8 (they carry their dequantization scales) and the Signed32
            // weights of an integer product are packed as int8.
            const TensorInfo& info = src->GetTensorInfo();
            const bool int8 = !info.GetQuantizationScales().empty() || info.GetDataType() == DataType::Signed32;
            bytes += int8 ? info.GetNumBytes() / 4 : info.GetNumBytes();
        }
    }
    return bytes;
}

/// The view of consecutive layers of a sub-graph (a contiguous part of a topological order, so
/// replacing it cannot make a cycle).
SubgraphView MakeView(const std::vector<IConnectableLayer*>& layers) {
    std::set<const IConnectableLayer*> members(layers.begin(), layers.end());
    SubgraphView::InputSlots ins;
    SubgraphView::OutputSlots outs;
    for (IConnectableLayer* l : layers) {
        for (unsigned int i = 0; i < l->GetNumInputSlots(); ++i) {
            const IOutputSlot* src = l->GetInputSlot(i).GetConnection();
            if (!src || !members.count(&src->GetOwningIConnectableLayer())) ins.push_back(&l->GetInputSlot(i));
        }
        for (unsigned int o = 0; o < l->GetNumOutputSlots(); ++o) {
            IOutputSlot& out = l->GetOutputSlot(o);
            bool external = out.GetNumConnections() == 0;
            for (unsigned int c = 0; c < out.GetNumConnections(); ++c) {
                if (!members.count(&out.GetConnection(c)->GetOwningIConnectableLayer())) external = true;
            }
            if (external) outs.push_back(&out);
        }
    }
    return SubgraphView(layers, std::move(ins), std::move(outs));
}

void AddRegion(OptimizationViews& views, const SubgraphView& part, std::shared_ptr<RegionGraph> graph) {
    const auto& layers = part.GetLayers();
    PreCompiledDescriptor descriptor;
    descriptor.m_PreCompiledObject = std::make_shared<RegionObject>(graph);
    descriptor.m_Description = graph->Describe() + " from " + std::to_string(layers.size()) + " layers";
    if (const std::size_t wino = CountWinogradShapes(*graph); wino > 0 && !OneDnnHasWinograd()) {
        descriptor.m_Description += "; " + std::to_string(wino) + " convolution(s) of Winograd shape run the direct "
                                    "kernel: " + WinogradUnavailableReason();
    }
    const std::string name = layers.size() == 1 ? std::string(layers.front()->GetName())
                                                : std::string("CpuAcc[") + layers.front()->GetName() + " .. " +
                                                      layers.back()->GetName() + "]";
    const auto numInputs = static_cast<int>(part.GetInputSlots().size());
    const auto numOutputs = static_cast<int>(part.GetOutputSlots().size());
    IConnectableLayer* region =
        views.GetINetwork()->AddLayer(LayerType::PreCompiled, descriptor, name.c_str(), numInputs, numOutputs);
    SubgraphView::InputSlots ins;
    SubgraphView::OutputSlots outs;
    for (int i = 0; i < numInputs; ++i) ins.push_back(&region->GetInputSlot(static_cast<unsigned int>(i)));
    for (int o = 0; o < numOutputs; ++o) {
        region->GetOutputSlot(static_cast<unsigned int>(o)).SetTensorInfo(graph->m_OutputInfos[static_cast<std::size_t>(o)]);
        outs.push_back(&region->GetOutputSlot(static_cast<unsigned int>(o)));
    }
    views.AddSubstitution({part, SubgraphView({region}, std::move(ins), std::move(outs))});
}

/// Cuts consecutive layers (a contiguous part of a topological order) into the parts that become
/// regions: at most kRegionWeightBudget bytes of constants and kRegionMaxInputs inputs each.
std::vector<std::vector<IConnectableLayer*>> PartitionLayers(const std::vector<IConnectableLayer*>& layers) {
    std::vector<std::vector<IConnectableLayer*>> parts;
    const std::size_t count = layers.size();
    if (count == 0) return parts;
    // lastUse[i]: the position of the last layer that reads layer i's outputs; `count` where an
    // output is read outside these layers or by nothing (it leaves whatever part holds layer i).
    std::map<const IConnectableLayer*, std::size_t> position;
    for (std::size_t i = 0; i < count; ++i) position[layers[i]] = i;
    std::vector<std::size_t> lastUse(count, 0);
    for (std::size_t i = 0; i < count; ++i) {
        for (unsigned int o = 0; o < layers[i]->GetNumOutputSlots(); ++o) {
            const IOutputSlot& out = layers[i]->GetOutputSlot(o);
            if (out.GetNumConnections() == 0) lastUse[i] = count;
            for (unsigned int c = 0; c < out.GetNumConnections(); ++c) {
                const auto it = position.find(&out.GetConnection(c)->GetOwningIConnectableLayer());
                lastUse[i] = std::max(lastUse[i], it == position.end() ? count : it->second);
            }
        }
    }
    const auto range = [&](std::size_t from, std::size_t to) {
        return std::vector<IConnectableLayer*>(layers.begin() + static_cast<std::ptrdiff_t>(from),
                                               layers.begin() + static_cast<std::ptrdiff_t>(to));
    };
    std::size_t begin = 0;  // the current part is layers[begin, i)
    std::set<const IConnectableLayer*> members;  // its layers
    std::size_t bytes = 0, slots = 0;
    std::vector<std::size_t> bytesOf(count, 0);
    std::set<const IOutputSlot*> seen;
    // The input slots of `l` that a region of the part would take as inputs: those fed from outside
    // the part (a slot fed by a layer of the part is an edge inside the region).
    const auto externalSlots = [&members](const IConnectableLayer& l) {
        std::size_t n = 0;
        for (unsigned int i = 0; i < l.GetNumInputSlots(); ++i) {
            const IOutputSlot* src = l.GetInputSlot(i).GetConnection();
            if (!src || !members.count(&src->GetOwningIConnectableLayer())) ++n;
        }
        return n;
    };
    for (std::size_t i = 0; i < count; ++i) {
        IConnectableLayer* l = layers[i];
        bytesOf[i] = ConstantBytes(*l, seen);
        // The region's inputs, which a PreCompiled layer has at most kRegionMaxInputs of (quantized
        // models read two constants per Quantize/Dequantize). Only slots fed from outside the part
        // count: DenseNet's Concats read every earlier layer of their block (528 slots in one of
        // densenet169's blocks), and counting those edges cut its blocks in two, which undid the
        // shared Concat buffer of a block.
        if (i > begin && (bytes + bytesOf[i] > kRegionWeightBudget || slots + externalSlots(*l) > kRegionMaxInputs)) {
            // In a quantized model the cut goes right after a QuantizeLinear (8-bit data crosses
            // it, and the int8 fusion needs DequantizeLinear -> Conv/MatMul -> QuantizeLinear in
            // one region): the last few layers after the last QuantizeLinear move to the next
            // part; failing that, at least a trailing DequantizeLinear does.
            std::size_t cut = i;
            for (std::size_t k = i; k > begin + 1 && i - k < 8; --k) {
                if (layers[k - 1]->GetType() == LayerType::QuantizeLinear) {
                    cut = k;
                    break;
                }
            }
            while (cut == i && cut > begin + 1 && layers[cut - 1]->GetType() == LayerType::DequantizeLinear) --cut;
            if (cut == i) {
                // Otherwise the cut goes where the fewest values cross it, in the part's second
                // half (the latest such place): between two stages of a network rather than
                // inside a block whose layers all read each other (a DenseNet block, whose
                // shared Concat buffer a cut would undo, or a residual branch).
                std::size_t best = i, fewest = static_cast<std::size_t>(-1);
                for (std::size_t k = std::max(begin + 1, begin + (i - begin) / 2); k <= i; ++k) {
                    std::size_t crossing = 0;
                    for (std::size_t j = begin; j < k; ++j) crossing += lastUse[j] >= k ? 1 : 0;
                    if (crossing <= fewest) fewest = crossing, best = k;
                }
                cut = best;
            }
            parts.push_back(range(begin, cut));
            begin = cut;
            members.clear();
            bytes = 0;
            slots = 0;
            for (std::size_t c = cut; c < i; ++c) {
                slots += externalSlots(*layers[c]);
                members.insert(layers[c]);
                bytes += bytesOf[c];
            }
        }
        slots += externalSlots(*l);
        members.insert(l);
        bytes += bytesOf[i];
    }
    parts.push_back(range(begin, count));
    return parts;
}

/// Whether a layer reads or writes Signed32: a piece of an integer product (see
/// IsIntegerProductPiece in CpuAccSupport.cpp), which only the fusion can run.
bool TouchesSigned32(const IConnectableLayer& l) {
    for (unsigned int o = 0; o < l.GetNumOutputSlots(); ++o) {
        if (l.GetOutputSlot(o).GetTensorInfo().GetDataType() == DataType::Signed32) return true;
    }
    for (unsigned int i = 0; i < l.GetNumInputSlots(); ++i) {
        const IOutputSlot* src = l.GetInputSlot(i).GetConnection();
        if (src && src->GetTensorInfo().GetDataType() == DataType::Signed32) return true;
    }
    return false;
}

}  // namespace

OptimizationViews CpuAccBackend::OptimizeSubgraph(const SubgraphView& subgraph) const {
    OptimizationViews views;
    const auto& layers = subgraph.GetLayers();
    if (layers.empty()) return views;
    // The pieces of integer products (an imported QLinearConv / QLinearMatMul) that a region could
    // not fuse into an int8 node go back as failed sub-graphs, one layer each, and the optimizer
    // gives them to the next backend; the rest is partitioned again around them (each stretch
    // between failed layers is a contiguous part of the topological order, so its regions stay
    // convex). Failed layers only accumulate, so this ends; without Signed32 layers it is one pass.
    std::set<const IConnectableLayer*> failed;
    const bool integer = std::any_of(layers.begin(), layers.end(), [](const IConnectableLayer* l) { return TouchesSigned32(*l); });
    for (;;) {
        std::vector<std::vector<IConnectableLayer*>> parts;
        std::vector<IConnectableLayer*> stretch;
        for (IConnectableLayer* l : layers) {
            if (!failed.count(l)) {
                stretch.push_back(l);
                continue;
            }
            for (auto& part : PartitionLayers(stretch)) parts.push_back(std::move(part));
            stretch.clear();
        }
        for (auto& part : PartitionLayers(stretch)) parts.push_back(std::move(part));

        std::vector<std::pair<SubgraphView, std::shared_ptr<RegionGraph>>> regions;
        bool more = false;
        for (const auto& part : parts) {
            SubgraphView view = part.size() == layers.size() ? subgraph : MakeView(part);
            std::shared_ptr<RegionGraph> graph = BuildRegionGraph(view);
            if (integer) {
                // BuildRegionGraph makes node i of layer i of the view (fusions add no nodes).
                const auto& viewLayers = view.GetLayers();
                for (std::size_t i = 0; i < graph->m_Nodes.size() && i < viewLayers.size(); ++i) {
                    const Node& n = graph->m_Nodes[i];
                    if (n.m_Dead || n.m_Int8 || !(n.m_Kind == NodeKind::Cast || graph->TouchesSigned32(n))) continue;
                    more = failed.insert(viewLayers[i]).second || more;
                }
            }
            regions.emplace_back(std::move(view), std::move(graph));
        }
        if (more) continue;
        for (auto& [view, graph] : regions) AddRegion(views, view, std::move(graph));
        for (const IConnectableLayer* l : layers) {
            if (failed.count(l)) views.AddFailedSubgraph(MakeView({const_cast<IConnectableLayer*>(l)}));
        }
        return views;
    }
}

BackendCapabilities CpuAccBackend::GetCapabilities() const {
    return {{"PreCompiledSubstitution", true}, {"FastMathBf16", true}};
}

namespace {
BackendRegistry::StaticRegistryInitializer g_RegisterCpuAcc{
    BackendRegistryInstance(), CpuAccBackend::GetIdStatic(),
    []() { return IBackendInternalUniquePtr(new CpuAccBackend()); }};
}  // namespace

}  // namespace trellis::cpuacc
