// CpuRef: the reference backend. Readable float32 kernels, single-threaded, obviously correct
// first. Written against the public backend SDK only, like any vendor backend.
#pragma once

#include <trellis/backends/IBackendInternal.hpp>

namespace trellis::ref {

class RefBackend final : public IBackendInternal {
public:
    static const BackendId& GetIdStatic();
    const BackendId& GetId() const override { return GetIdStatic(); }
    IWorkloadFactoryPtr CreateWorkloadFactory(const IMemoryManagerSharedPtr& memoryManager = nullptr) const override;
    ILayerSupportSharedPtr GetLayerSupport() const override;
    BackendCapabilities GetCapabilities() const override;
};

}  // namespace trellis::ref
