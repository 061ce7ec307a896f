// Custom: memory manager (holds the device pool) and the device-memory allocator.
#include "CustomMemoryManager.hpp"

#include "CustomDevice.hpp"

namespace trellis::custom {

CustomMemoryManager::~CustomMemoryManager() {
    // A manager destroyed while holding the pool gives it back, so the pool never leaks a holder.
    Release();
}

void CustomMemoryManager::Acquire() {
    if (!m_Acquired.exchange(true)) CustomDevice::Instance().AcquirePool();
}

void CustomMemoryManager::Release() {
    if (m_Acquired.exchange(false)) CustomDevice::Instance().ReleasePool();
}

void* CustomDeviceAllocator::allocate(std::size_t size, std::size_t alignment) {
    return CustomDevice::Instance().Allocate(size, alignment);
}

void CustomDeviceAllocator::free(void* ptr) { CustomDevice::Instance().Free(ptr); }

}  // namespace trellis::custom
