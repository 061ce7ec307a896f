// Codegen: a backend that runs generated code (the seed's code-generating backend, through the
// public SDK and <trellis/Codegen.hpp> only).
//
// Id "Codegen". Runs every layer the code generator's soft target can generate (static shapes,
// float32 networks: IsLayerGeneratable("soft", ...)). Its OptimizeSubgraph() replaces each
// sub-graph it is given by one PreCompiled layer whose object is the generated artifact of that
// sub-graph (sources and weights, with C entry points). When the network is loaded, the workload
// factory compiles the artifact into a shared library with the system C++ compiler - or finds it
// in the cache from an earlier load - and loads it with dlopen; each execution runs the artifact's
// Inference() on the runtime's tensors (an instance per concurrent execution, each with its own
// arena).
//
// Compiling happens at LoadNetwork, not in OptimizeSubgraph(): the backend options (Compiler,
// CompilerFlags, CacheDir; IRuntime::CreationOptions::m_BackendOptions["Codegen"]) reach a backend
// only through CreateWorkloadFactoryWithOptions(). See docs/codegen.md.
//
// Built as the dynamic backend file Trellis_Codegen_backend.so (<build>/lib/dynamic/codegen/), so
// that the engines' tests that run every registered backend do not compile code; load it with
// IRuntime::CreationOptions::m_DynamicBackendsPath (or `trellis ... --dynamic-backends DIR`).
#pragma once

#include <trellis/backends/IBackendInternal.hpp>

namespace trellis::codegenbackend {

class CodegenBackend final : public IBackendInternal {
public:
    static const BackendId& GetIdStatic();
    const BackendId& GetId() const override { return GetIdStatic(); }

    IWorkloadFactoryPtr CreateWorkloadFactory(const IMemoryManagerSharedPtr& memoryManager = nullptr) const override;
    IWorkloadFactoryPtr CreateWorkloadFactoryWithOptions(const IMemoryManagerSharedPtr& memoryManager,
                                                         const BackendOptions& options) const override;
    ILayerSupportSharedPtr GetLayerSupport() const override;
    /// The whole sub-graph becomes one PreCompiled layer holding its generated artifact; a
    /// sub-graph the generator refuses is handed back as failed (the next backend takes it).
    OptimizationViews OptimizeSubgraph(const SubgraphView& subgraph) const override;
    BackendCapabilities GetCapabilities() const override;
};

}  // namespace trellis::codegenbackend
