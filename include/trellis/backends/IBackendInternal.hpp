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
#include <trellis/backends/IBackendContext.hpp>
#include <trellis/backends/ILayerSupport.hpp>
#include <trellis/backends/IMemoryManager.hpp>
#include <trellis/backends/IWorkloadFactory.hpp>
#include <trellis/backends/OptimizationViews.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace trellis {

/// Version of this Backend API. Major changes break ABI; minor changes keep it.
struct BackendVersion {
    uint32_t m_Major = 0;
    uint32_t m_Minor = 0;
    bool operator==(const BackendVersion& o) const { return m_Major == o.m_Major && m_Minor == o.m_Minor; }
};
inline constexpr BackendVersion kBackendApiVersion{1, 0};

/// Name/value pairs a backend advertises (e.g. {"NonConstWeights", true}).
using BackendCapabilities = std::vector<std::pair<std::string, bool>>;

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

    static constexpr BackendVersion GetApiVersion() { return kBackendApiVersion; }
};
using IBackendInternalUniquePtr = std::unique_ptr<IBackendInternal>;

}  // namespace trellis
