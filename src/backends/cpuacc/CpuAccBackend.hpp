// CpuAcc: the optimized x86 CPU backend (oneDNN), written against the public backend SDK only.
//
// Layers it supports (CpuAccSupport.cpp) are grouped by the optimizer into sub-graphs; its
// OptimizeSubgraph() turns each into one PreCompiled layer holding a RegionGraph with CpuAcc's
// fusions (CpuAccFusion.cpp), which the workload factory compiles into oneDNN primitives
// (CpuAccRegion.cpp). Options (IRuntime::CreationOptions::m_BackendOptions["CpuAcc"]):
//   NumThreads  threads per inference (default: all cores); the CLI's --threads sets it
//   FastMath    "bf16": convolutions and constant-weight matmuls compute in bfloat16 (AVX-512
//               BF16 / AMX; refused on CPUs without); "none" (default): Float32
//   ConvLayout  "blocked" (default): channel-blocked layouts between convolutions; "auto": oneDNN
//               chooses each convolution's layouts
#pragma once

#include <trellis/backends/IBackendInternal.hpp>

namespace trellis::cpuacc {

class CpuAccBackend final : public IBackendInternal {
public:
    static const BackendId& GetIdStatic();
    const BackendId& GetId() const override { return GetIdStatic(); }
    IWorkloadFactoryPtr CreateWorkloadFactory(const IMemoryManagerSharedPtr& memoryManager = nullptr) const override;
    IWorkloadFactoryPtr CreateWorkloadFactoryWithOptions(const IMemoryManagerSharedPtr& memoryManager,
                                                         const BackendOptions& options) const override;
    ILayerSupportSharedPtr GetLayerSupport() const override;
    OptimizationViews OptimizeSubgraph(const SubgraphView& subgraph) const override;
    BackendCapabilities GetCapabilities() const override;
};

}  // namespace trellis::cpuacc
