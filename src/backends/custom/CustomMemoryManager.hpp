// Custom: the memory manager and the allocator of Custom's working memory.
//
// CustomMemoryManager: returned by CustomBackend::CreateMemoryManager(); the loaded network calls
// Acquire() before its first execution and Release() in its destructor, which take and give back
// the device's memory pool (CustomDevice). Each manager holds the pool at most once: a second
// Acquire() or a Release() without Acquire() does nothing.
// CustomDeviceAllocator: CustomBackend::GetDefaultAllocator(); the runtime allocates Custom's
// working memory (the tensors Custom's layers produce) through it. Its memory source is
// MemorySource::Backend, so the optimizer puts MemCopy layers wherever a tensor crosses between
// Custom and host memory. Allocation fails (nullptr) while no memory manager holds the pool.
// Thread-safety: both may be used concurrently.
#pragma once

#include <trellis/backends/ICustomAllocator.hpp>
#include <trellis/backends/IMemoryManager.hpp>

#include <atomic>

namespace trellis::custom {

class CustomMemoryManager final : public IMemoryManager {
public:
    CustomMemoryManager() = default;
    ~CustomMemoryManager() override;
    void Acquire() override;
    void Release() override;
    bool IsAcquired() const { return m_Acquired.load(); }
private:
    std::atomic<bool> m_Acquired{false};
};

class CustomDeviceAllocator final : public ICustomAllocator {
public:
    void* allocate(std::size_t size, std::size_t alignment) override;
    void free(void* ptr) override;
    MemorySource GetMemorySourceType() override { return MemorySource::Backend; }
};

}  // namespace trellis::custom
