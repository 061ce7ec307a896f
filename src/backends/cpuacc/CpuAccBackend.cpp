// CpuAcc: the backend object, its workload factory, and its registration (linked into libtrellis).
#include "CpuAccBackend.hpp"

#include "CpuAccGraph.hpp"
#include "CpuAccRegion.hpp"
#include "CpuAccSupport.hpp"

#include <trellis/Exceptions.hpp>
#include <trellis/backends/BackendRegistry.hpp>

#include <thread>

namespace trellis::cpuacc {

namespace {

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
            if (value == "bf16") r.m_FastMathBf16 = true;
            else if (value == "none" || value.empty()) r.m_FastMathBf16 = false;
            else throw InvalidArgumentException("CpuAcc: option FastMath='" + value + "' is not one of: none, bf16");
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

IBackendInternal::ILayerSupportSharedPtr CpuAccBackend::GetLayerSupport() const {
    return std::make_shared<CpuAccLayerSupport>();
}

OptimizationViews CpuAccBackend::OptimizeSubgraph(const SubgraphView& subgraph) const {
    OptimizationViews views;
    const auto& layers = subgraph.GetLayers();
    if (layers.empty()) return views;
    std::shared_ptr<RegionGraph> graph = BuildRegionGraph(subgraph);
    PreCompiledDescriptor descriptor;
    descriptor.m_PreCompiledObject = std::make_shared<RegionObject>(graph);
    descriptor.m_Description = graph->Describe() + " from " + std::to_string(layers.size()) + " layers";
    const std::string name = layers.size() == 1 ? std::string(layers.front()->GetName())
                                                : std::string("CpuAcc[") + layers.front()->GetName() + " .. " +
                                                      layers.back()->GetName() + "]";
    const auto numInputs = static_cast<int>(subgraph.GetInputSlots().size());
    const auto numOutputs = static_cast<int>(subgraph.GetOutputSlots().size());
    IConnectableLayer* region =
        views.GetINetwork()->AddLayer(LayerType::PreCompiled, descriptor, name.c_str(), numInputs, numOutputs);
    SubgraphView::InputSlots ins;
    SubgraphView::OutputSlots outs;
    for (int i = 0; i < numInputs; ++i) ins.push_back(&region->GetInputSlot(static_cast<unsigned int>(i)));
    for (int o = 0; o < numOutputs; ++o) {
        region->GetOutputSlot(static_cast<unsigned int>(o)).SetTensorInfo(graph->m_OutputInfos[static_cast<std::size_t>(o)]);
        outs.push_back(&region->GetOutputSlot(static_cast<unsigned int>(o)));
    }
    views.AddSubstitution({subgraph, SubgraphView({region}, std::move(ins), std::move(outs))});
    return views;
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
