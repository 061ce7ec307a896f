// Backend SDK: backend context, notified when networks are loaded and unloaded.
//
// Optional. IBackendInternal::CreateBackendContext() is called once per runtime; a non-null
// context is kept for the runtime's whole lifetime and told before and after each
// LoadNetwork()/UnloadNetwork(). Returning false from a Before* call makes that load fail.
#pragma once

#include <trellis/IRuntime.hpp>

#include <memory>

namespace trellis {

class IBackendContext {
protected:
    explicit IBackendContext(const IRuntime::CreationOptions&) {}
public:
    virtual ~IBackendContext() = default;
    virtual bool BeforeLoadNetwork(NetworkId networkId) = 0;
    virtual bool AfterLoadNetwork(NetworkId networkId) = 0;
    virtual bool BeforeUnloadNetwork(NetworkId networkId) = 0;
    virtual bool AfterUnloadNetwork(NetworkId networkId) = 0;
};
using IBackendContextPtr = std::unique_ptr<IBackendContext>;

}  // namespace trellis
