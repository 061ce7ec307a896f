// Kernel snippet: Einsum (explicit form) as one loop nest over every label: the output's labels,
// then the summed ones; each input has a stride per label (0 where it lacks the label or
// broadcasts), the output a stride per output label. Products and sums run in double; the
// accumulators, the odometer and the input offsets are in the workspace.
#pragma once

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <vector>

namespace trellis::kernels {

struct EinsumParams {
    std::vector<std::size_t> sizes;                   ///< per label, loop order
    std::vector<std::size_t> outStrides;              ///< per label (0 for summed ones)
    std::vector<std::vector<std::size_t>> inStrides;  ///< per input, per label
    std::size_t outCount = 1, total = 1;
    template <typename F> void Fields(F&& f) const { f(sizes); f(outStrides); f(inStrides); f(outCount); f(total); }
};

inline std::size_t EinsumWorkspaceBytes(const EinsumParams& p) {
    return p.outCount * sizeof(double) + (p.sizes.size() + p.inStrides.size()) * sizeof(std::size_t);
}

template <typename T>
void Einsum(const EinsumParams& p, const T* const* in, T* y, void* workspace) {
    double* acc = static_cast<double*>(workspace);
    const std::size_t n = p.inStrides.size(), rank = p.sizes.size();
    std::size_t* pos = reinterpret_cast<std::size_t*>(acc + p.outCount);
    std::size_t* off = pos + rank;
    std::fill_n(acc, p.outCount, 0.0);
    std::fill_n(pos, rank + n, std::size_t{0});
    std::size_t outOff = 0;
    for (std::size_t step = 0; step < p.total; ++step) {
        double prod = 1.0;
        for (std::size_t i = 0; i < n; ++i) prod *= static_cast<double>(in[i][off[i]]);
        acc[outOff] += prod;
        for (std::size_t k = rank; k-- > 0;) {  // odometer: the last label varies fastest
            outOff += p.outStrides[k];
            for (std::size_t i = 0; i < n; ++i) off[i] += p.inStrides[i][k];
            if (++pos[k] < p.sizes[k]) break;
            outOff -= p.outStrides[k] * p.sizes[k];
            for (std::size_t i = 0; i < n; ++i) off[i] -= p.inStrides[i][k] * p.sizes[k];
            pos[k] = 0;
        }
    }
    for (std::size_t o = 0; o < p.outCount; ++o) y[o] = static_cast<T>(acc[o]);
}

template <typename T>
void Einsum(const EinsumParams& p, std::initializer_list<const T*> in, T* y, void* workspace) {
    Einsum<T>(p, in.begin(), y, workspace);
}

}  // namespace trellis::kernels
