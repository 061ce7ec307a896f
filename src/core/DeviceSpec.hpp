// Internal: the runtime's IDeviceSpec, which also tells Optimize() about custom allocators (their
// memory source decides where copies are needed).
#pragma once

#include <trellis/INetwork.hpp>
#include <trellis/backends/ICustomAllocator.hpp>

#include <map>
#include <memory>

namespace trellis::core {

class DeviceSpec final : public IDeviceSpec {
public:
    const BackendIdVector& GetSupportedBackends() const override { return m_Backends; }
    BackendIdVector m_Backends;
    std::map<BackendId, std::shared_ptr<ICustomAllocator>> m_CustomAllocators;
};

/// The allocator of `backend`'s working memory: the runtime's custom one if `spec` has one, else
/// the backend's default; nullptr = aligned host memory.
std::shared_ptr<ICustomAllocator> GetWorkingMemoryAllocator(const BackendId& backend, const IDeviceSpec* spec);
/// The memory source of `backend`'s working memory (Malloc when it uses host memory).
MemorySource GetWorkingMemorySource(const BackendId& backend, const IDeviceSpec* spec);

}  // namespace trellis::core
