// GpuAcc: the backend object, its options, its workload factory and its registration.
#include "GpuAccBackend.hpp"

#include "GpuAccDevice.hpp"
#include "GpuAccGraph.hpp"
#include "GpuAccRegion.hpp"
#include "GpuAccSupport.hpp"

#include <trellis/Exceptions.hpp>
#include <trellis/backends/BackendRegistry.hpp>

namespace trellis::gpuacc {

namespace {

RegionOptions ParseOptions(const IBackendInternal::BackendOptions& options) {
    RegionOptions r;
    for (const auto& [name, value] : options) {
        if (name == "Precision") {
            if (value == "fp32") r.m_Precision = Precision::Fp32;
            else if (value == "tf32") r.m_Precision = Precision::Tf32;
            else if (value == "fp16") r.m_Precision = Precision::Fp16;
            else if (value == "bf16") r.m_Precision = Precision::Bf16;
            else throw InvalidArgumentException("GpuAcc: option Precision='" + value + "' is not one of: fp32, tf32, fp16, bf16");
        } else if (name == "CudaGraph") {
            if (value == "on") r.m_CudaGraphs = true;
            else if (value == "off") r.m_CudaGraphs = false;
            else throw InvalidArgumentException("GpuAcc: option CudaGraph='" + value + "' is not one of: on, off");
        } else if (name == "ConvAutotune") {
            if (value == "on") r.m_ConvAutotune = true;
            else if (value == "off") r.m_ConvAutotune = false;
            else throw InvalidArgumentException("GpuAcc: option ConvAutotune='" + value + "' is not one of: on, off");
        } else if (name == "ConvTf32") {
            if (value == "on") r.m_ConvTf32 = true;
            else if (value == "off") r.m_ConvTf32 = false;
            else throw InvalidArgumentException("GpuAcc: option ConvTf32='" + value + "' is not one of: on, off");
        } else if (name == "DepthwiseConv") {
            if (value == "auto") r.m_Depthwise = RegionOptions::Depthwise::Auto;
            else if (value == "own") r.m_Depthwise = RegionOptions::Depthwise::Own;
            else if (value == "cudnn") r.m_Depthwise = RegionOptions::Depthwise::Cudnn;
            else throw InvalidArgumentException("GpuAcc: option DepthwiseConv='" + value + "' is not one of: auto, own, cudnn");
        } else if (name == "CheckConvs") {
            if (value == "on") r.m_CheckConvs = true;
            else if (value == "off") r.m_CheckConvs = false;
            else throw InvalidArgumentException("GpuAcc: option CheckConvs='" + value + "' is not one of: on, off");
        } else if (name == "StepBarrier") {
            if (value == "auto") r.m_StepBarrier = RegionOptions::Barrier::Auto;
            else if (value == "off") r.m_StepBarrier = RegionOptions::Barrier::Off;
            else if (value == "event") r.m_StepBarrier = RegionOptions::Barrier::Event;
            else if (value == "kernel") r.m_StepBarrier = RegionOptions::Barrier::Kernel;
            else if (value == "sync") r.m_StepBarrier = RegionOptions::Barrier::Sync;
            else throw InvalidArgumentException("GpuAcc: option StepBarrier='" + value + "' is not one of: auto, off, event, kernel, sync");
        } else if (name == "StepTimesFile") {
            r.m_StepTimesFile = value;
        }
        // Other names are for other backends or versions (the CLI passes NumThreads to all):
        // ignored, as the SDK asks.
    }
    return r;
}

class GpuAccWorkloadFactory final : public IWorkloadFactory {
public:
    explicit GpuAccWorkloadFactory(RegionOptions options) : m_Options(options) {}
    const BackendId& GetBackendId() const override { return GpuAccBackend::GetIdStatic(); }

    IWorkloadPtr CreateWorkload(const QueueDescriptor& descriptor, const WorkloadInfo& info) const override {
        std::string reason;
        if (!GpuAccLayerSupport().IsLayerSupported(descriptor, info, &reason)) {
            throw LayerValidationException("GpuAcc cannot create a workload for " +
                                           std::string(GetLayerTypeName(descriptor.m_Type)) + " '" +
                                           descriptor.m_LayerName + "': " + reason);
        }
        if (descriptor.m_Type == LayerType::MemCopy) {
            const bool toDevice = descriptor.Get<MemCopyDescriptor>().m_Destination == GpuAccBackend::GetIdStatic();
            return std::make_unique<GpuAccMemCopyWorkload>(toDevice, info.m_InputTensorInfos.at(0).GetNumBytes(),
                                                           descriptor.m_LayerName);
        }
        std::shared_ptr<RegionGraph> graph;
        if (descriptor.m_Type == LayerType::PreCompiled) {
            const auto& d = descriptor.Get<PreCompiledDescriptor>();
            graph = static_cast<const RegionObject*>(d.m_PreCompiledObject.get())->GetGraph();
        } else {
            graph = BuildSingleLayerGraph(descriptor, info);
        }
        return std::make_unique<GpuAccRegionWorkload>(graph, descriptor.m_ConstantInputs, m_Options,
                                                      descriptor.m_LayerName);
    }
private:
    RegionOptions m_Options;
};

}  // namespace

const BackendId& GpuAccBackend::GetIdStatic() {
    static const BackendId s_Id{"GpuAcc"};
    return s_Id;
}

IBackendInternal::IWorkloadFactoryPtr GpuAccBackend::CreateWorkloadFactory(const IMemoryManagerSharedPtr&) const {
    return std::make_unique<GpuAccWorkloadFactory>(ParseOptions({}));
}

IBackendInternal::IWorkloadFactoryPtr GpuAccBackend::CreateWorkloadFactoryWithOptions(const IMemoryManagerSharedPtr&,
                                                                                     const BackendOptions& options) const {
    return std::make_unique<GpuAccWorkloadFactory>(ParseOptions(options));
}

IBackendInternal::ILayerSupportSharedPtr GpuAccBackend::GetLayerSupport() const {
    return std::make_shared<GpuAccLayerSupport>();
}

OptimizationViews GpuAccBackend::OptimizeSubgraph(const SubgraphView& subgraph) const {
    OptimizationViews views;
    const auto& layers = subgraph.GetLayers();
    if (layers.empty()) return views;
    std::shared_ptr<RegionGraph> graph = BuildRegionGraph(subgraph);
    PreCompiledDescriptor descriptor;
    descriptor.m_PreCompiledObject = std::make_shared<RegionObject>(graph);
    descriptor.m_Description = graph->Describe() + " from " + std::to_string(layers.size()) + " layers";
    const std::string name = layers.size() == 1 ? std::string(layers.front()->GetName())
                                                : std::string("GpuAcc[") + layers.front()->GetName() + " .. " +
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

BackendCapabilities GpuAccBackend::GetCapabilities() const {
    return {{"PreCompiledSubstitution", true}, {"DeviceMemory", true}, {"CudaGraphs", true}};
}

IBackendProfilingContextPtr GpuAccBackend::CreateBackendProfilingContext(const IRuntime::CreationOptions&,
                                                                         IBackendProfiling& profiling) const {
    return std::make_shared<GpuAccProfilingContext>(profiling);
}

std::shared_ptr<ICustomAllocator> GpuAccBackend::GetDefaultAllocator() const { return std::make_shared<DeviceAllocator>(); }

bool GpuAccBackend::IsAvailable(std::string* reasonIfUnavailable) const { return IsGpuAvailable(reasonIfUnavailable); }

namespace {
BackendRegistry::StaticRegistryInitializer g_RegisterGpuAcc{
    BackendRegistryInstance(), GpuAccBackend::GetIdStatic(),
    []() { return IBackendInternalUniquePtr(new GpuAccBackend()); }};
}  // namespace

}  // namespace trellis::gpuacc
