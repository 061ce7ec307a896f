// Custom: the backend object - a stateless entry point to the factories.
#include "CustomBackend.hpp"

#include "CustomBackendContext.hpp"
#include "CustomLayerSupport.hpp"
#include "CustomMemoryManager.hpp"
#include "CustomPreCompiledObject.hpp"
#include "CustomWorkloadFactory.hpp"

namespace trellis::custom {

namespace {

bool IsAddition(const IConnectableLayer& layer) {
    if (layer.GetType() != LayerType::ElementwiseBinary) return false;
    const auto* d = std::get_if<ElementwiseBinaryDescriptor>(&layer.GetDescriptor());
    return d && d->m_Operation == BinaryOperation::Add && layer.GetNumInputSlots() == 2 &&
           layer.GetNumOutputSlots() == 1 && layer.GetInputSlot(0).GetConnection() &&
           layer.GetInputSlot(1).GetConnection();
}

}  // namespace

const BackendId& CustomBackend::GetIdStatic() {
    static const BackendId s_Id{"Custom"};
    return s_Id;
}

IBackendInternal::IMemoryManagerUniquePtr CustomBackend::CreateMemoryManager() const {
    return std::make_unique<CustomMemoryManager>();
}

IBackendInternal::IWorkloadFactoryPtr CustomBackend::CreateWorkloadFactory(const IMemoryManagerSharedPtr& memoryManager) const {
    return std::make_unique<CustomWorkloadFactory>(memoryManager);
}

IBackendInternal::IBackendContextPtr CustomBackend::CreateBackendContext(const IRuntime::CreationOptions& options) const {
    return std::make_unique<CustomBackendContext>(options);
}

IBackendProfilingContextPtr CustomBackend::CreateBackendProfilingContext(const IRuntime::CreationOptions&,
                                                                         IBackendProfiling& profiling) const {
    return std::make_shared<CustomBackendProfilingContext>(profiling);
}

IBackendInternal::ILayerSupportSharedPtr CustomBackend::GetLayerSupport() const {
    return std::make_shared<CustomLayerSupport>();
}

OptimizationViews CustomBackend::OptimizeSubgraph(const SubgraphView& subgraph) const {
    OptimizationViews views;
    for (IConnectableLayer* layer : subgraph.GetLayers()) {
        if (!IsAddition(*layer)) {
            views.AddUntouchedSubgraph(SubgraphView(layer));
            continue;
        }
        const TensorInfo& in0 = layer->GetInputSlot(0).GetConnection()->GetTensorInfo();
        const TensorInfo& in1 = layer->GetInputSlot(1).GetConnection()->GetTensorInfo();
        const TensorInfo& out = layer->GetOutputSlot(0).GetTensorInfo();
        PreCompiledDescriptor descriptor;
        descriptor.m_PreCompiledObject = std::make_shared<CustomPreCompiledObject>(layer->GetName(), in0, in1, out);
        descriptor.m_Description = "CustomPreCompiled(Add)";
        // The replacement keeps the addition's name, so placements and errors still name it.
        IConnectableLayer* preCompiled =
            views.GetINetwork()->AddLayer(LayerType::PreCompiled, descriptor, layer->GetName(), 2, 1);
        preCompiled->GetOutputSlot(0).SetTensorInfo(out);
        views.AddSubstitution({SubgraphView(layer), SubgraphView(preCompiled)});
    }
    return views;
}

BackendCapabilities CustomBackend::GetCapabilities() const {
    return {{"PreCompiledSubstitution", true}, {"DeviceMemory", true}};
}

std::shared_ptr<ICustomAllocator> CustomBackend::GetDefaultAllocator() const {
    return std::make_shared<CustomDeviceAllocator>();
}

}  // namespace trellis::custom
