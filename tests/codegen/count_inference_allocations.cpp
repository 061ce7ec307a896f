// Counts the heap allocations an artifact's Inference() makes: every malloc-family call of the
// process (this program's own definitions replace the C library's, so libstdc++'s operator new,
// oneDNN and OpenMP come here too) while Inference() runs, after two warm-up runs. Built against
// one generated artifact:
//
//   c++ -std=c++17 -I DIR -DARTIFACT_HEADER='"Net.h"' -DARTIFACT_CLASS=Net
//       tests/codegen/count_inference_allocations.cpp DIR/Net.cpp [target libraries]
//   ./a.out DIR/Net.params [--small-bookkeeping BYTES]
//
// Prints "allocations in Inference(): N (R runs), the largest B bytes" and exits 0 when N is 0, 1
// otherwise (2 on error). With --small-bookkeeping BYTES it exits 0 when no allocation exceeded BYTES:
// for the onednn target, whose every primitive execution makes oneDNN 2.6 allocate a few small
// blocks for its argument map (its public API has no allocation-free execute); the artifact's own
// buffers - tensors, scratchpads, weights - are never among them.
#include ARTIFACT_HEADER

#include <atomic>
#include <cstddef>
#include <cstdio>
#include <exception>
#include <malloc.h>
#include <string>

extern "C" {
void* __libc_malloc(std::size_t size);
void* __libc_calloc(std::size_t count, std::size_t size);
void* __libc_realloc(void* p, std::size_t size);
void* __libc_memalign(std::size_t alignment, std::size_t size);
void __libc_free(void* p);
}

namespace {
std::atomic<bool> g_Counting{false};
std::atomic<long> g_Allocations{0};
std::atomic<std::size_t> g_Largest{0};
void Count(std::size_t bytes) {
    if (!g_Counting.load(std::memory_order_relaxed)) return;
    g_Allocations.fetch_add(1, std::memory_order_relaxed);
    std::size_t largest = g_Largest.load(std::memory_order_relaxed);
    while (bytes > largest && !g_Largest.compare_exchange_weak(largest, bytes)) {
    }
}
}  // namespace

extern "C" {
void* malloc(std::size_t size) {
    Count(size);
    return __libc_malloc(size);
}
void* calloc(std::size_t count, std::size_t size) {
    Count(count * size);
    return __libc_calloc(count, size);
}
void* realloc(void* p, std::size_t size) {
    Count(size);
    return __libc_realloc(p, size);
}
void free(void* p) { __libc_free(p); }
void* memalign(std::size_t alignment, std::size_t size) {
    Count(size);
    return __libc_memalign(alignment, size);
}
void* aligned_alloc(std::size_t alignment, std::size_t size) {
    Count(size);
    return __libc_memalign(alignment, size);
}
int posix_memalign(void** out, std::size_t alignment, std::size_t size) {
    Count(size);
    void* p = __libc_memalign(alignment, size);
    if (!p) return 12;  // ENOMEM
    *out = p;
    return 0;
}
}

int main(int argc, char** argv) {
    const bool bookkeeping = argc == 4 && std::string(argv[2]) == "--small-bookkeeping";
    if (argc != 2 && !bookkeeping) {
        std::fprintf(stderr, "usage: %s PARAMS_FILE [--small-bookkeeping BYTES]\n", argv[0]);
        return 2;
    }
    try {
        ARTIFACT_CLASS net(argv[1]);
        net.Inference();
        net.Inference();
        constexpr int kRuns = 3;
        g_Counting = true;
        for (int i = 0; i < kRuns; ++i) net.Inference();
        g_Counting = false;
        const long n = g_Allocations.load();
        std::printf("allocations in Inference(): %ld (%d runs), the largest %zu bytes\n", n, kRuns, g_Largest.load());
        if (bookkeeping) return g_Largest.load() <= std::stoul(argv[3]) ? 0 : 1;
        return n == 0 ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 2;
    }
}
