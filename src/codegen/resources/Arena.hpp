// Artifact support code: the one block of memory an artifact allocates, in its constructor. Emitted
// verbatim into every artifact (the same rules as the kernel snippets: see
// src/backends/reference/kernels/KernelSnippets.md). 64-byte aligned; from 2 MiB up, 2 MiB aligned
// and advised as huge pages where POSIX madvise has MADV_HUGEPAGE (every inference streams the
// whole arena, and with 4 KiB pages each 4 KiB read is a TLB miss).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace trellis::artifact {

class Arena {
public:
    /// `bytes` bytes, the first `zeroed` of them zeroed (the rest is written before it is read);
    /// throws std::bad_alloc.
    unsigned char* Allocate(std::size_t bytes, std::size_t zeroed) {
        constexpr std::size_t kHuge = std::size_t{2} << 20;
        const std::size_t alignment = bytes >= kHuge ? kHuge : 64;
        constexpr std::size_t kPage = 4096;
        // Uninitialized, so that the advice comes before the first touch of each page.
        m_Storage.reset(new unsigned char[bytes + alignment + kPage]);
        const auto base = reinterpret_cast<std::uintptr_t>(m_Storage.get());
        unsigned char* p = m_Storage.get() + (alignment - base % alignment) % alignment;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
        if (bytes >= kHuge) madvise(p, (bytes + kPage - 1) / kPage * kPage, MADV_HUGEPAGE);
#endif
        std::memset(p, 0, zeroed < bytes ? zeroed : bytes);
        return p;
    }

private:
    std::unique_ptr<unsigned char[]> m_Storage;
};

}  // namespace trellis::artifact
