// Kernel snippet: Hardmax - 1 at the first maximum along the axis (or, opset < 13, over all dims
// from the axis flattened), 0 elsewhere; NaN loses against any number.
#pragma once

#include <cstddef>

namespace trellis::kernels {

struct HardmaxParams {
    std::size_t outer = 1, dim = 1, inner = 1;
    template <typename F> void Fields(F&& f) const { f(outer); f(dim); f(inner); }
};

inline void Hardmax(const HardmaxParams& p, const float* x, float* y) {
    for (std::size_t o = 0; o < p.outer; ++o) {
        for (std::size_t i = 0; i < p.inner; ++i) {
            const std::size_t base = o * p.dim * p.inner + i;
            std::size_t best = 0;
            for (std::size_t k = 1; k < p.dim; ++k) {
                if (x[base + k * p.inner] > x[base + best * p.inner] ||
                    (x[base + best * p.inner] != x[base + best * p.inner] && x[base + k * p.inner] == x[base + k * p.inner])) {
                    best = k;
                }
            }
            for (std::size_t k = 0; k < p.dim; ++k) y[base + k * p.inner] = k == best ? 1.0f : 0.0f;
        }
    }
}

}  // namespace trellis::kernels
