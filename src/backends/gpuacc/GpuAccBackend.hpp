// GpuAcc: the CUDA backend - NVIDIA GPUs through cuDNN 9 (convolutions, via the cuDNN frontend's
// graph API), cuBLASLt (matrix products) and its own kernels (everything else), written against
// the public backend SDK only, as a vendor's backend would be.
//
// Memory: its working memory is device memory (GetDefaultAllocator(): cudaMalloc, source
// MemorySource::Backend) and its workloads read only that (GetImportFlags()), so the optimizer puts
// a MemCopy layer wherever host and GPU layers meet; GpuAcc runs those copies (pinned staging).
// Constants are uploaded once at load (ImportsConstantsAtLoad()), never copied per inference.
// Sub-graphs: OptimizeSubgraph() turns each run of GpuAcc layers into one PreCompiled region,
// planned at LoadNetwork (GpuAccRegion.hpp). Availability: without a CUDA device of compute
// capability 9.0 or later, IsAvailable() says why (the driver's words) and its layers go to the
// next backend. Options (IRuntime::CreationOptions::m_BackendOptions["GpuAcc"]):
// Precision=fp32|tf32|fp16|bf16, CudaGraph=on|off.
#pragma once

#include <trellis/backends/IBackendInternal.hpp>

namespace trellis::gpuacc {

class GpuAccBackend final : public IBackendInternal {
public:
    static const BackendId& GetIdStatic();
    const BackendId& GetId() const override { return GetIdStatic(); }
    IWorkloadFactoryPtr CreateWorkloadFactory(const IMemoryManagerSharedPtr& memoryManager = nullptr) const override;
    IWorkloadFactoryPtr CreateWorkloadFactoryWithOptions(const IMemoryManagerSharedPtr& memoryManager,
                                                         const BackendOptions& options) const override;
    ILayerSupportSharedPtr GetLayerSupport() const override;
    OptimizationViews OptimizeSubgraph(const SubgraphView& subgraph) const override;
    BackendCapabilities GetCapabilities() const override;
    IBackendProfilingContextPtr CreateBackendProfilingContext(const IRuntime::CreationOptions& options,
                                                              IBackendProfiling& profiling) const override;
    MemorySourceFlags GetImportFlags() const override { return ToFlags(MemorySource::Backend); }
    std::shared_ptr<ICustomAllocator> GetDefaultAllocator() const override;
    bool IsAvailable(std::string* reasonIfUnavailable) const override;
    bool ImportsConstantsAtLoad() const override { return true; }
};

}  // namespace trellis::gpuacc
