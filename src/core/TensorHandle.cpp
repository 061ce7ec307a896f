// The out-of-line part of include/trellis/backends/ITensorHandle.hpp.
#include <trellis/backends/ITensorHandle.hpp>

#include <sys/mman.h>
#include <unistd.h>

namespace trellis {

void* EmptyTensorAddress() {
    // One inaccessible page: a size-0 memcpy/memset through it is defined (the pointer is not
    // null), any real access faults. Should mmap fail, a never-written global stands in.
    static void* const address = [] {
        const long page = sysconf(_SC_PAGESIZE);
        void* p = mmap(nullptr, static_cast<std::size_t>(page > 0 ? page : 4096), PROT_NONE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        alignas(64) static unsigned char fallback[64];
        return p == MAP_FAILED ? static_cast<void*>(fallback) : p;
    }();
    return address;
}

}  // namespace trellis
