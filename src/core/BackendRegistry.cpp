// BackendRegistry and the default implementations of the backend SDK's optional methods.
#include <trellis/Exceptions.hpp>
#include <trellis/backends/BackendRegistry.hpp>

namespace trellis {

void BackendRegistry::Register(const BackendId& id, FactoryFunction factory, const std::string& origin,
                               BackendVersion apiVersion) {
    std::lock_guard<std::mutex> lock(m_Mutex);
    if (id.IsEmpty()) throw InvalidArgumentException("BackendRegistry: a backend id must not be empty");
    if (!factory) throw InvalidArgumentException("BackendRegistry: backend '" + id.Get() + "' has no factory function");
    if (m_Factories.count(id)) {
        throw InvalidArgumentException("BackendRegistry: backend '" + id.Get() + "' is already registered");
    }
    m_Factories.emplace(id, std::move(factory));
    m_Origins[id] = origin;
    m_Versions[id] = apiVersion;
}

void BackendRegistry::Deregister(const BackendId& id) {
    FactoryFunction released;
    {
        std::lock_guard<std::mutex> lock(m_Mutex);
        auto it = m_Factories.find(id);
        if (it == m_Factories.end()) return;
        released = std::move(it->second);
        m_Factories.erase(it);
        m_Origins.erase(id);
        m_Versions.erase(id);
    }
    // Destroyed unlocked: a dynamic backend's factory owns its library handle, and closing the
    // library runs the library's destructors, which must be free to use the registry.
}

bool BackendRegistry::IsBackendRegistered(const BackendId& id) const {
    std::lock_guard<std::mutex> lock(m_Mutex);
    return m_Factories.count(id) != 0;
}

BackendRegistry::FactoryFunction BackendRegistry::GetFactory(const BackendId& id) const {
    std::lock_guard<std::mutex> lock(m_Mutex);
    auto it = m_Factories.find(id);
    if (it == m_Factories.end()) {
        std::string known;
        for (const auto& [k, v] : m_Factories) known += (known.empty() ? "" : ", ") + k.Get();
        throw InvalidArgumentException("backend '" + id.Get() + "' is not registered (registered: " +
                                       (known.empty() ? "none" : known) + ")");
    }
    return it->second;
}

std::set<BackendId> BackendRegistry::GetBackendIds() const {
    std::lock_guard<std::mutex> lock(m_Mutex);
    std::set<BackendId> ids;
    for (const auto& [k, v] : m_Factories) ids.insert(k);
    return ids;
}

std::size_t BackendRegistry::Size() const {
    std::lock_guard<std::mutex> lock(m_Mutex);
    return m_Factories.size();
}

std::string BackendRegistry::GetBackendIdsAsString() const {
    std::string s;
    for (const BackendId& id : GetBackendIds()) s += (s.empty() ? "" : ", ") + id.Get();
    return s;
}

std::string BackendRegistry::GetOrigin(const BackendId& id) const {
    std::lock_guard<std::mutex> lock(m_Mutex);
    auto it = m_Origins.find(id);
    return it == m_Origins.end() ? std::string() : it->second;
}

BackendVersion BackendRegistry::GetApiVersion(const BackendId& id) const {
    std::lock_guard<std::mutex> lock(m_Mutex);
    auto it = m_Versions.find(id);
    if (it == m_Versions.end()) {
        throw InvalidArgumentException("BackendRegistry: backend '" + id.Get() + "' is not registered");
    }
    return it->second;
}

bool BackendRegistry::IsBackendAvailable(const BackendId& id, std::string* reason) const {
    if (!GetApiVersion(id).AtLeast(BackendVersion{1, 3})) return true;
    IBackendInternalUniquePtr backend = GetFactory(id)();
    if (!backend) {
        if (reason) *reason = "its factory returned null";
        return false;
    }
    std::string why;
    if (backend->IsAvailable(&why)) return true;
    if (reason) *reason = why.empty() ? std::string("it gave no reason") : why;
    return false;
}

BackendRegistry& BackendRegistryInstance() {
    static BackendRegistry instance;
    return instance;
}

OptimizationViews IBackendInternal::OptimizeSubgraph(const SubgraphView& subgraph) const {
    OptimizationViews views;
    views.AddUntouchedSubgraph(SubgraphView(subgraph));
    return views;
}

OptimizationViews::OptimizationViews() : m_Network(INetwork::Create()) {}

SubgraphView::SubgraphView(IConnectableLayer* layer) {
    m_Layers.push_back(layer);
    for (unsigned int i = 0; i < layer->GetNumInputSlots(); ++i) m_Inputs.push_back(&layer->GetInputSlot(i));
    for (unsigned int i = 0; i < layer->GetNumOutputSlots(); ++i) m_Outputs.push_back(&layer->GetOutputSlot(i));
}

}  // namespace trellis
