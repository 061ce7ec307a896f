// Backend SDK: backend memory managers.
//
// Optional. A backend that manages its own device memory returns one from
// IBackendInternal::CreateMemoryManager(); it is passed to CreateWorkloadFactory(). The loaded
// network calls Acquire() once before its first execution and Release() in its destructor.
// Ownership: the loaded network holds it (shared with the factory) for its whole lifetime.
#pragma once

#include <memory>

namespace trellis {

class IMemoryManager {
public:
    virtual ~IMemoryManager() = default;
    virtual void Acquire() = 0;
    virtual void Release() = 0;
};
using IMemoryManagerUniquePtr = std::unique_ptr<IMemoryManager>;
using IMemoryManagerSharedPtr = std::shared_ptr<IMemoryManager>;

}  // namespace trellis
