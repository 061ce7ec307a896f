// Custom: the simulated accelerator behind the sample backend.
//
// The "device" has its own memory (host RAM underneath, handed out from a pool) and counts what
// happens on it. One device per process (per loaded copy of the backend, for the dynamic form):
//  - memory: the pool is usable only while at least one memory manager holds it (AcquirePool /
//    ReleasePool, called by CustomMemoryManager::Acquire/Release). Allocate() returns nullptr while
//    nobody holds it. Freed blocks are cached for reuse and returned to the host when the last
//    holder releases the pool. IsDeviceMemory() tells whether a range lies inside one live block:
//    Custom's workloads check every tensor they touch on the device side, so a missing MemCopy at
//    a backend boundary is an error, not a silent host access.
//  - counters: every event (workload run, bytes copied, pool acquired, ...) is added to a
//    process-wide total and forwarded to the registered sinks (the profiling contexts of the
//    runtimes that enabled profiling), which report it through IBackendProfiling.
//  - pre-compiled objects: the CustomPreCompiledObjects alive now, so layer support and the
//    workload factory can recognise a PreCompiled layer's object as one of Custom's (the
//    descriptor only carries a void pointer).
// Thread-safety: every method may be called concurrently.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <vector>

namespace trellis::custom {

enum class CustomCounter : unsigned int {
    WorkloadsExecuted,
    BytesCopiedToDevice,
    BytesCopiedToHost,
    PoolAcquires,
    PoolReleases,
    DeviceAllocations,
    DeviceFrees,
    ContextBeforeLoad,
    ContextAfterLoad,
    ContextBeforeUnload,
    ContextAfterUnload,
};
inline constexpr unsigned int kNumCustomCounters = 11;
/// "workloads_executed", ... (the profiling counter names, without the "Custom/" prefix).
const char* GetCounterName(CustomCounter counter);
const char* GetCounterDescription(CustomCounter counter);

/// Receives counter events (a profiling context). Called with the device's sink lock held.
class CustomCounterSink {
public:
    virtual void OnCounter(CustomCounter counter, uint64_t delta) = 0;
protected:
    ~CustomCounterSink() = default;
};

class CustomDevice {
public:
    static CustomDevice& Instance();

    // ---- memory ----
    void AcquirePool();
    void ReleasePool();
    /// `size` bytes aligned to `alignment` (a power of two, at most 4096) from the pool; nullptr
    /// when no memory manager holds the pool or the request is invalid.
    void* Allocate(std::size_t size, std::size_t alignment);
    /// Returns a block from Allocate() to the pool; other pointers are ignored.
    void Free(void* ptr);
    /// True when [ptr, ptr + bytes) lies inside one live device block.
    bool IsDeviceMemory(const void* ptr, std::size_t bytes) const;
    /// Memory managers holding the pool now.
    unsigned int GetPoolHolders() const;

    // ---- counters ----
    void Count(CustomCounter counter, uint64_t delta = 1);
    /// Process-wide total since the device was created.
    uint64_t GetTotal(CustomCounter counter) const;
    void AddSink(CustomCounterSink* sink);
    void RemoveSink(CustomCounterSink* sink);

    // ---- pre-compiled objects ----
    void RegisterObject(const void* object);
    void UnregisterObject(const void* object);
    bool IsLiveObject(const void* object) const;

    ~CustomDevice();
private:
    CustomDevice() = default;
    struct Block {
        void* m_Ptr;
        std::size_t m_Size;
        std::size_t m_Alignment;
    };

    mutable std::mutex m_MemoryMutex;
    unsigned int m_PoolHolders = 0;
    std::map<const uint8_t*, Block> m_Live;      // by start address
    std::multimap<std::size_t, Block> m_Cached;  // freed, by size

    std::array<std::atomic<uint64_t>, kNumCustomCounters> m_Totals{};
    std::mutex m_SinkMutex;
    std::vector<CustomCounterSink*> m_Sinks;

    mutable std::mutex m_ObjectMutex;
    std::set<const void*> m_Objects;
};

}  // namespace trellis::custom
