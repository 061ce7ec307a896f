// Custom: the simulated accelerator (memory pool, counters, object registry).
#include "CustomDevice.hpp"

#include <algorithm>
#include <cstdlib>

namespace trellis::custom {

const char* GetCounterName(CustomCounter counter) {
    switch (counter) {
        case CustomCounter::WorkloadsExecuted: return "workloads_executed";
        case CustomCounter::BytesCopiedToDevice: return "bytes_copied_to_device";
        case CustomCounter::BytesCopiedToHost: return "bytes_copied_to_host";
        case CustomCounter::PoolAcquires: return "memory_acquires";
        case CustomCounter::PoolReleases: return "memory_releases";
        case CustomCounter::DeviceAllocations: return "device_allocations";
        case CustomCounter::DeviceFrees: return "device_frees";
        case CustomCounter::ContextBeforeLoad: return "context_before_load";
        case CustomCounter::ContextAfterLoad: return "context_after_load";
        case CustomCounter::ContextBeforeUnload: return "context_before_unload";
        case CustomCounter::ContextAfterUnload: return "context_after_unload";
    }
    return "unknown";
}

const char* GetCounterDescription(CustomCounter counter) {
    switch (counter) {
        case CustomCounter::WorkloadsExecuted: return "Custom workloads executed (PreCompiled, Addition, MemCopy)";
        case CustomCounter::BytesCopiedToDevice: return "bytes MemCopy workloads moved into Custom memory";
        case CustomCounter::BytesCopiedToHost: return "bytes MemCopy workloads moved out of Custom memory";
        case CustomCounter::PoolAcquires: return "IMemoryManager::Acquire calls (device memory pool taken)";
        case CustomCounter::PoolReleases: return "IMemoryManager::Release calls (device memory pool given back)";
        case CustomCounter::DeviceAllocations: return "blocks handed out from the device memory pool";
        case CustomCounter::DeviceFrees: return "blocks returned to the device memory pool";
        case CustomCounter::ContextBeforeLoad: return "IBackendContext::BeforeLoadNetwork calls";
        case CustomCounter::ContextAfterLoad: return "IBackendContext::AfterLoadNetwork calls";
        case CustomCounter::ContextBeforeUnload: return "IBackendContext::BeforeUnloadNetwork calls";
        case CustomCounter::ContextAfterUnload: return "IBackendContext::AfterUnloadNetwork calls";
    }
    return "unknown";
}

CustomDevice& CustomDevice::Instance() {
    static CustomDevice device;
    return device;
}

CustomDevice::~CustomDevice() {
    for (auto& [size, block] : m_Cached) std::free(block.m_Ptr);
    // Live blocks belong to whoever allocated them; the device cannot free them safely here.
}

void CustomDevice::AcquirePool() {
    {
        std::lock_guard<std::mutex> lock(m_MemoryMutex);
        ++m_PoolHolders;
    }
    Count(CustomCounter::PoolAcquires);
}

void CustomDevice::ReleasePool() {
    std::vector<void*> toHost;
    {
        std::lock_guard<std::mutex> lock(m_MemoryMutex);
        if (m_PoolHolders == 0) return;
        if (--m_PoolHolders == 0) {
            for (auto& [size, block] : m_Cached) toHost.push_back(block.m_Ptr);
            m_Cached.clear();
        }
    }
    for (void* p : toHost) std::free(p);
    Count(CustomCounter::PoolReleases);
}

unsigned int CustomDevice::GetPoolHolders() const {
    std::lock_guard<std::mutex> lock(m_MemoryMutex);
    return m_PoolHolders;
}

void* CustomDevice::Allocate(std::size_t size, std::size_t alignment) {
    if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > 4096) return nullptr;
    const std::size_t align = std::max<std::size_t>(alignment, 64);
    const std::size_t bytes = (std::max<std::size_t>(size, 1) + align - 1) / align * align;
    void* ptr = nullptr;
    {
        std::lock_guard<std::mutex> lock(m_MemoryMutex);
        if (m_PoolHolders == 0) return nullptr;
        auto range = m_Cached.equal_range(bytes);
        for (auto it = range.first; it != range.second; ++it) {
            if (it->second.m_Alignment >= align) {
                ptr = it->second.m_Ptr;
                m_Cached.erase(it);
                break;
            }
        }
        if (!ptr) ptr = std::aligned_alloc(align, bytes);
        if (!ptr) return nullptr;
        m_Live[static_cast<const uint8_t*>(ptr)] = Block{ptr, bytes, align};
    }
    Count(CustomCounter::DeviceAllocations);
    return ptr;
}

void CustomDevice::Free(void* ptr) {
    if (!ptr) return;
    bool toHost = false;
    {
        std::lock_guard<std::mutex> lock(m_MemoryMutex);
        auto it = m_Live.find(static_cast<const uint8_t*>(ptr));
        if (it == m_Live.end()) return;
        const Block block = it->second;
        m_Live.erase(it);
        if (m_PoolHolders == 0) toHost = true;
        else m_Cached.emplace(block.m_Size, block);
    }
    if (toHost) std::free(ptr);
    Count(CustomCounter::DeviceFrees);
}

bool CustomDevice::IsDeviceMemory(const void* ptr, std::size_t bytes) const {
    if (!ptr) return false;
    const auto* p = static_cast<const uint8_t*>(ptr);
    std::lock_guard<std::mutex> lock(m_MemoryMutex);
    auto it = m_Live.upper_bound(p);
    if (it == m_Live.begin()) return false;
    --it;
    const uint8_t* begin = it->first;
    return p >= begin && bytes <= it->second.m_Size && static_cast<std::size_t>(p - begin) <= it->second.m_Size - bytes;
}

void CustomDevice::Count(CustomCounter counter, uint64_t delta) {
    const auto index = static_cast<unsigned int>(counter);
    if (index >= kNumCustomCounters) return;
    m_Totals[index] += delta;
    std::lock_guard<std::mutex> lock(m_SinkMutex);
    for (CustomCounterSink* sink : m_Sinks) sink->OnCounter(counter, delta);
}

uint64_t CustomDevice::GetTotal(CustomCounter counter) const {
    const auto index = static_cast<unsigned int>(counter);
    return index < kNumCustomCounters ? m_Totals[index].load() : 0;
}

void CustomDevice::AddSink(CustomCounterSink* sink) {
    std::lock_guard<std::mutex> lock(m_SinkMutex);
    if (std::find(m_Sinks.begin(), m_Sinks.end(), sink) == m_Sinks.end()) m_Sinks.push_back(sink);
}

void CustomDevice::RemoveSink(CustomCounterSink* sink) {
    std::lock_guard<std::mutex> lock(m_SinkMutex);
    m_Sinks.erase(std::remove(m_Sinks.begin(), m_Sinks.end(), sink), m_Sinks.end());
}

void CustomDevice::RegisterObject(const void* object) {
    std::lock_guard<std::mutex> lock(m_ObjectMutex);
    m_Objects.insert(object);
}

void CustomDevice::UnregisterObject(const void* object) {
    std::lock_guard<std::mutex> lock(m_ObjectMutex);
    m_Objects.erase(object);
}

bool CustomDevice::IsLiveObject(const void* object) const {
    std::lock_guard<std::mutex> lock(m_ObjectMutex);
    return object && m_Objects.count(object) != 0;
}

}  // namespace trellis::custom
