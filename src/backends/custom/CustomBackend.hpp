// Custom: the seed's sample backend, a simulated accelerator with its own memory.
//
// Id "Custom". Runs Float32 additions (numpy broadcasting), which its OptimizeSubgraph() replaces
// one by one with PreCompiled layers holding a CustomPreCompiledObject, plus the MemCopy layers
// that move tensors between host memory and its device memory (GetDefaultAllocator() has memory
// source MemorySource::Backend, GetImportFlags() accepts only that, so every tensor crossing its
// boundary is copied). Its memory manager holds the device memory pool between Acquire() and
// Release(); its backend context and profiling context make those events observable as counters
// ("Custom/workloads_executed", "Custom/memory_acquires", ... in IRuntime::GetProfilingCounters()).
//
// Built two ways from the same sources: linked in (CMake option TRELLIS_LINK_CUSTOM_BACKEND,
// registered by CustomStaticRegistration.cpp) and as the dynamic backend file
// Sample_Custom_backend.so (CustomDynamicBackend.cpp). The backend object is stateless: everything
// it creates is independent of it.
#pragma once

#include <trellis/backends/IBackendInternal.hpp>

namespace trellis::custom {

class CustomBackend final : public IBackendInternal {
public:
    static const BackendId& GetIdStatic();
    const BackendId& GetId() const override { return GetIdStatic(); }

    IMemoryManagerUniquePtr CreateMemoryManager() const override;
    IWorkloadFactoryPtr CreateWorkloadFactory(const IMemoryManagerSharedPtr& memoryManager = nullptr) const override;
    IBackendContextPtr CreateBackendContext(const IRuntime::CreationOptions& options) const override;
    IBackendProfilingContextPtr CreateBackendProfilingContext(const IRuntime::CreationOptions& options,
                                                              IBackendProfiling& profiling) const override;
    ILayerSupportSharedPtr GetLayerSupport() const override;
    /// Each Add layer becomes a PreCompiled layer (a substitution of its own); every other layer
    /// is left untouched.
    OptimizationViews OptimizeSubgraph(const SubgraphView& subgraph) const override;
    BackendCapabilities GetCapabilities() const override;
    MemorySourceFlags GetImportFlags() const override { return ToFlags(MemorySource::Backend); }
    std::shared_ptr<ICustomAllocator> GetDefaultAllocator() const override;
};

}  // namespace trellis::custom
