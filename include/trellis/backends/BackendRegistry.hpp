// Backend SDK: the registry of backend factories.
//
// A process-wide singleton (BackendRegistryInstance()). Backends register a factory function, not
// an object: the engine creates short-lived backend objects from it when it needs one.
// Thread-safety: every method is safe to call concurrently.
#pragma once

#include <trellis/backends/IBackendInternal.hpp>

#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>

namespace trellis {

class BackendRegistry {
public:
    using FactoryFunction = std::function<IBackendInternalUniquePtr()>;

    /// Throws InvalidArgumentException if `id` is already registered. `origin` says where the
    /// backend comes from ("built in", or the dynamic-backend file); `apiVersion` is the Backend
    /// API the backend was built against (a dynamic backend's may be older than the engine's).
    void Register(const BackendId& id, FactoryFunction factory, const std::string& origin = "built in",
                  BackendVersion apiVersion = kBackendApiVersion);
    void Deregister(const BackendId& id);
    bool IsBackendRegistered(const BackendId& id) const;
    /// Throws InvalidArgumentException naming the registered backends if `id` is unknown.
    FactoryFunction GetFactory(const BackendId& id) const;
    std::set<BackendId> GetBackendIds() const;
    std::size_t Size() const;
    /// "CpuRef, Custom"
    std::string GetBackendIdsAsString() const;
    /// Where `id` came from ("built in" or a file path); empty if not registered.
    std::string GetOrigin(const BackendId& id) const;
    /// The Backend API version `id` was registered with; throws like GetFactory() if unknown.
    BackendVersion GetApiVersion(const BackendId& id) const;
    /// Whether `id` can run anything here: IBackendInternal::IsAvailable() for backends built
    /// against API 1.2 or later, always true for older ones (which cannot say). On false,
    /// `reason` gets the backend's words. Throws like GetFactory() if unknown.
    bool IsBackendAvailable(const BackendId& id, std::string* reason = nullptr) const;

    /// Registers at static-initialization time (put one at namespace scope in the backend's .cpp).
    struct StaticRegistryInitializer {
        StaticRegistryInitializer(BackendRegistry& registry, const BackendId& id, FactoryFunction factory) {
            registry.Register(id, std::move(factory));
        }
    };
private:
    mutable std::mutex m_Mutex;
    std::map<BackendId, FactoryFunction> m_Factories;
    std::map<BackendId, std::string> m_Origins;
    std::map<BackendId, BackendVersion> m_Versions;
};

BackendRegistry& BackendRegistryInstance();

}  // namespace trellis
