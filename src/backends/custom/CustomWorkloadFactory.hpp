// Custom: the workload factory. Creates PreCompiled, Add and MemCopy workloads for the layers
// CustomLayerSupport accepts; anything else throws LayerValidationException naming the layer and
// the reason. Keeps the loaded network's memory manager (may be null when the factory is made
// for constant folding) but never refers back to the backend object that created it.
#pragma once

#include <trellis/backends/IMemoryManager.hpp>
#include <trellis/backends/IWorkloadFactory.hpp>

namespace trellis::custom {

class CustomWorkloadFactory final : public IWorkloadFactory {
public:
    explicit CustomWorkloadFactory(IMemoryManagerSharedPtr memoryManager) : m_MemoryManager(std::move(memoryManager)) {}
    const BackendId& GetBackendId() const override;
    IWorkloadPtr CreateWorkload(const QueueDescriptor& descriptor, const WorkloadInfo& info) const override;
private:
    IMemoryManagerSharedPtr m_MemoryManager;
};

}  // namespace trellis::custom
