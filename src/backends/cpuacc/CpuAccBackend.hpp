// CpuAcc: the optimized x86 CPU backend (oneDNN), written against the public backend SDK only.
//
// Layers it supports (CpuAccSupport.cpp) are grouped by the optimizer into sub-graphs; its
// OptimizeSubgraph() turns each into one PreCompiled layer holding a RegionGraph with CpuAcc's
// fusions (CpuAccFusion.cpp), which the workload factory compiles into oneDNN primitives
// (CpuAccRegion*.cpp). Options (IRuntime::CreationOptions::m_BackendOptions["CpuAcc"]):
//   NumThreads  threads per inference (default: all cores); the CLI's --threads sets it
//   FastMath    "bf16": convolutions and constant-weight matmuls compute in bfloat16 (AVX-512
//               BF16 / AMX; refused on CPUs without); "none" (default): Float32
//   ConvLayout  "blocked" (default): channel-blocked layouts between convolutions; "auto": oneDNN
//               chooses each convolution's layouts
//   Winograd, Xnnpack, Swish, Recurrent: see RegionOptions (CpuAccRegion.hpp)
// An option that cannot take effect on this machine (Winograd=on without AVX-512) is reported by
// GetOptionWarnings(); a region whose Winograd-shaped convolutions run direct says so in its
// description (trellis inspect). The environment variable TRELLIS_MAX_CPU_ISA caps CpuAcc's own
// kernels as ONEDNN_MAX_CPU_ISA caps oneDNN (CpuAccKernels.hpp).
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
    std::vector<std::string> GetOptionWarnings(const BackendOptions& options) const override;
    OptimizationViews OptimizeSubgraph(const SubgraphView& subgraph) const override;
    BackendCapabilities GetCapabilities() const override;
};

}  // namespace trellis::cpuacc
