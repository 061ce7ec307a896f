// Backend SDK: custom memory allocators.
//
// An application can hand the runtime an allocator per backend
// (IRuntime::CreationOptions::m_CustomAllocatorMap); the runtime asks the backend whether it can
// use it (IBackendInternal::UseCustomMemoryAllocator) and, if so, allocates that backend's working
// memory (the arena holding the tensors its layers produce and their scratch) through it.
// Ownership: shared between the application and the runtime; it must outlive every network
// loaded by that runtime. Thread-safety: allocate/free may be called from LoadNetwork and from
// concurrent EnqueueWorkload calls (each call may need a fresh arena), so they must be thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

namespace trellis {

/// Kinds of memory a tensor can live in. Flags combine with `|` into MemorySourceFlags.
enum class MemorySource : uint32_t {
    Undefined = 0,
    Malloc = 1,           ///< ordinary host memory the CPU reads and writes directly
    DmaBuf = 2,
    DmaBufProtected = 4,
    Gralloc = 8,
    Backend = 16,         ///< memory private to one backend (e.g. device memory); not host-accessible
};
using MemorySourceFlags = uint32_t;
constexpr MemorySourceFlags ToFlags(MemorySource s) { return static_cast<MemorySourceFlags>(s); }

class ICustomAllocator {
public:
    virtual ~ICustomAllocator() = default;
    /// At least `size` bytes aligned to `alignment` (a power of two), or nullptr on failure.
    virtual void* allocate(std::size_t size, std::size_t alignment) = 0;
    virtual void free(void* ptr) = 0;
    /// The kind of memory allocate() returns.
    virtual MemorySource GetMemorySourceType() = 0;
    /// Pointer to `offset` bytes into a buffer from allocate() (override for handle-like memory).
    virtual void* GetMemoryRegionAtOffset(void* buffer, std::size_t offset, std::size_t /*alignment*/ = 0) {
        return static_cast<char*>(buffer) + offset;
    }
};

}  // namespace trellis
