// Backend SDK: the interface every backend implements.
//
// Lifetime: the engine creates backend objects through the BackendRegistry whenever it needs one
// and destroys them soon after. Nothing the backend creates (layer support, workload factory,
// memory manager, context) may rely on the backend object still existing. Keep it stateless.
// Thread-safety: const methods may be called concurrently.
//
// A minimal backend implements GetId(), GetLayerSupport() and CreateWorkloadFactory(); every
// other method has a valid default.
#pragma once

#include <trellis/IRuntime.hpp>
#include <trellis/backends/BackendVersion.hpp>
#include <trellis/backends/IBackendContext.hpp>
#include <trellis/backends/IBackendProfiling.hpp>
#include <trellis/backends/ICustomAllocator.hpp>
#include <trellis/backends/ILayerSupport.hpp>
#include <trellis/backends/IMemoryManager.hpp>
#include <trellis/backends/IWorkloadFactory.hpp>
#include <trellis/backends/OptimizationViews.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace trellis {

/// Name/value pairs a backend advertises (e.g. {"NonConstWeights", true}).
using BackendCapabilities = std::vector<std::pair<std::string, bool>>;

/// Capability of a backend that computes every op it supports as the operator's definition states
/// it, element by element in the element type (libm for transcendental functions): no
/// approximations, no reassociation beyond the definition's. Optimize() evaluates constant
/// sub-graphs (constant folding) on such a registered backend first, whichever backends the
/// application prefers, so a folded value (often an index: T5's relative-position buckets are
/// log -> multiply -> truncate) never depends on another backend's rounding.
inline constexpr const char* kReferenceNumericsCapability = "ReferenceNumerics";

class IBackendInternal {
public:
    virtual ~IBackendInternal() = default;

    using IMemoryManagerUniquePtr = trellis::IMemoryManagerUniquePtr;
    using IMemoryManagerSharedPtr = trellis::IMemoryManagerSharedPtr;
    using IWorkloadFactoryPtr = trellis::IWorkloadFactoryPtr;
    using IBackendContextPtr = trellis::IBackendContextPtr;
    using ILayerSupportSharedPtr = trellis::ILayerSupportSharedPtr;

    virtual const BackendId& GetId() const = 0;

    /// Optional: a memory manager passed to CreateWorkloadFactory(); default none.
    virtual IMemoryManagerUniquePtr CreateMemoryManager() const { return {}; }
    virtual IWorkloadFactoryPtr CreateWorkloadFactory(const IMemoryManagerSharedPtr& memoryManager = nullptr) const = 0;
    /// Optional: a context kept for the runtime's lifetime; default none.
    virtual IBackendContextPtr CreateBackendContext(const IRuntime::CreationOptions&) const { return {}; }
    virtual ILayerSupportSharedPtr GetLayerSupport() const = 0;
    /// Optional: rewrite a sub-graph assigned to this backend; default leaves it untouched.
    virtual OptimizationViews OptimizeSubgraph(const SubgraphView& subgraph) const;
    /// Optional: capabilities; default none.
    virtual BackendCapabilities GetCapabilities() const { return {}; }
    /// Optional: a profiling context registering this backend's counters; called once per
    /// runtime when profiling is enabled. Default none.
    virtual IBackendProfilingContextPtr CreateBackendProfilingContext(const IRuntime::CreationOptions&,
                                                                      IBackendProfiling&) const {
        return {};
    }
    /// Optional: may the runtime allocate this backend's working memory with `allocator`?
    /// Default: no (the reason says so). A backend that accepts must be able to run on memory of
    /// allocator->GetMemorySourceType().
    virtual bool UseCustomMemoryAllocator(std::shared_ptr<ICustomAllocator> allocator, std::string* reasonIfUnsupported) {
        (void)allocator;
        if (reasonIfUnsupported) *reasonIfUnsupported = GetId().Get() + " does not support custom memory allocators";
        return false;
    }

    // Memory. Tensors a backend's layers produce live in that backend's working memory, allocated
    // with GetDefaultAllocator() (or an accepted custom allocator). Where a tensor crosses from a
    // producer to a consumer whose GetImportFlags() does not include the producer's memory
    // source, the optimizer inserts a MemCopy layer; otherwise the consumer reads the producer's
    // memory directly (import, zero-copy). Network inputs, outputs and constants are host
    // (Malloc) memory.

    /// Memory sources this backend's workloads can read inputs from directly. Default: Malloc.
    virtual MemorySourceFlags GetImportFlags() const { return ToFlags(MemorySource::Malloc); }
    /// Allocator of this backend's working memory; nullptr (the default) = aligned host memory.
    virtual std::shared_ptr<ICustomAllocator> GetDefaultAllocator() const { return nullptr; }

    /// The application's options for this backend: IRuntime::CreationOptions::m_BackendOptions[GetId()].
    using BackendOptions = std::map<std::string, std::string>;

    /// Optional (Backend API 1.1): the workload factory for one loaded network, given the
    /// application's options for this backend (for example {"NumThreads", "2"}). The default
    /// ignores the options and calls CreateWorkloadFactory(memoryManager). The engine calls this
    /// for backends built against API 1.1 or later, CreateWorkloadFactory() for older ones.
    /// Unknown option names should be ignored; a bad value of a known one should throw
    /// InvalidArgumentException naming the backend, the option and the value.
    virtual IWorkloadFactoryPtr CreateWorkloadFactoryWithOptions(const IMemoryManagerSharedPtr& memoryManager,
                                                                  const BackendOptions& options) const {
        (void)options;
        return CreateWorkloadFactory(memoryManager);
    }

    /// Optional (Backend API 1.2): warnings about the application's options for this backend on
    /// this machine - an option that is valid but cannot take effect here, and why ("Winograd=on:
    /// oneDNN 2.6 has Winograd convolutions for AVX-512 only; this CPU runs AVX2"). Called once per
    /// runtime with IRuntime::CreationOptions::m_BackendOptions[GetId()] when that is not empty;
    /// IRuntime::GetBackendOptionWarnings() returns them. Bad values are still refused by
    /// CreateWorkloadFactoryWithOptions. Default: none.
    virtual std::vector<std::string> GetOptionWarnings(const BackendOptions& options) const {
        (void)options;
        return {};
    }

    /// Optional (Backend API 1.3): whether the backend can run anything in this process (its
    /// device and driver are there). A registered backend that says no keeps its registration;
    /// `reasonIfUnavailable` says why (the driver's words), `trellis backends` shows it, and
    /// Optimize() declines every layer for it with that reason, so its layers go to the next
    /// preferred backend. Called often (once per Optimize() and per `trellis backends`): cache the
    /// answer. Default: available. The engine asks only backends built against API 1.3 or later.
    virtual bool IsAvailable(std::string* reasonIfUnavailable) const {
        (void)reasonIfUnavailable;
        return true;
    }

    /// Optional (Backend API 1.3): true when every workload of this backend takes its constant
    /// inputs (weights, biases) from QueueDescriptor::m_ConstantInputs when it is created, copying
    /// or converting them into its own memory, and never reads a constant's tensor handle at run
    /// time (its IWorkload::ReadsConstantInput() returns false for them). Phase 7 of Optimize()
    /// then inserts no MemCopy between a Constant layer and this backend's layers, whatever
    /// GetImportFlags() says: the constant is imported once, at load. Execute() still gets a
    /// handle for such an input (host memory, Map() may be nullptr once LoadNetwork freed it).
    /// Default false: a constant is memory like any other, copied where the import flags say so.
    virtual bool ImportsConstantsAtLoad() const { return false; }

    static constexpr BackendVersion GetApiVersion() { return kBackendApiVersion; }
};
using IBackendInternalUniquePtr = std::unique_ptr<IBackendInternal>;

}  // namespace trellis
