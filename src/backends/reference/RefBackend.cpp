#include "RefBackend.hpp"

#include "RefKernelTable.hpp"

#include <trellis/Exceptions.hpp>
#include <trellis/backends/BackendRegistry.hpp>

namespace trellis::ref {

namespace {

class RefLayerSupport final : public ILayerSupport {
public:
    bool IsLayerSupported(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) const override {
        const RefKernelRow* row = FindRefKernel(layer.m_Type);
        if (!row) {
            if (reason) *reason = std::string(GetLayerTypeName(layer.m_Type)) + ": no CpuRef kernel for this layer type";
            return false;
        }
        return row->m_Support(layer, info, reason);
    }
};

class RefWorkloadFactory final : public IWorkloadFactory {
public:
    const BackendId& GetBackendId() const override { return RefBackend::GetIdStatic(); }
    IWorkloadPtr CreateWorkload(const QueueDescriptor& layer, const WorkloadInfo& info) const override {
        const RefKernelRow* row = FindRefKernel(layer.m_Type);
        std::string reason;
        if (!row || !row->m_Support(layer, info, &reason)) {
            throw LayerValidationException("CpuRef cannot create a workload for " +
                                           std::string(GetLayerTypeName(layer.m_Type)) + " '" + layer.m_LayerName +
                                           "': " + (row ? reason : "no kernel"));
        }
        return row->m_Create(layer, info);
    }
};

BackendRegistry::StaticRegistryInitializer g_RegisterCpuRef{
    BackendRegistryInstance(), RefBackend::GetIdStatic(), []() { return IBackendInternalUniquePtr(new RefBackend()); }};

}  // namespace

const BackendId& RefBackend::GetIdStatic() {
    static const BackendId s_Id{"CpuRef"};
    return s_Id;
}

IWorkloadFactoryPtr RefBackend::CreateWorkloadFactory(const IMemoryManagerSharedPtr&) const {
    return std::make_unique<RefWorkloadFactory>();
}

ILayerSupportSharedPtr RefBackend::GetLayerSupport() const {
    static ILayerSupportSharedPtr s_Support = std::make_shared<RefLayerSupport>();
    return s_Support;
}

BackendCapabilities RefBackend::GetCapabilities() const {
    return {{"NonConstWeights", true}, {"MultiThreadedExecution", false}, {kReferenceNumericsCapability, true}};
}

}  // namespace trellis::ref
