// Kernel snippet: ArgMax / ArgMin - the int64 index of the largest (smallest) element along an
// axis; ties go to the first index, or the last with selectLast. NaN counts as the extreme value
// (numpy).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace trellis::kernels {

struct ArgMinMaxParams {
    bool max = true, selectLast = false;
    std::size_t outer = 1, dim = 1, inner = 1;
    template <typename F> void Fields(F&& f) const { f(max); f(selectLast); f(outer); f(dim); f(inner); }
};

template <typename T>
bool ArgBetter(const ArgMinMaxParams& p, T v, T best) {
    if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(best)) return p.selectLast && std::isnan(v);
        if (std::isnan(v)) return true;
    }
    if (p.max) return p.selectLast ? v >= best : v > best;
    return p.selectLast ? v <= best : v < best;
}

template <typename T>
void ArgMinMax(const ArgMinMaxParams& p, const T* x, int64_t* y) {
    for (std::size_t o = 0; o < p.outer; ++o) {
        for (std::size_t i = 0; i < p.inner; ++i) {
            const T* base = x + o * p.dim * p.inner + i;
            std::size_t best = 0;
            for (std::size_t k = 1; k < p.dim; ++k) {
                if (ArgBetter(p, base[k * p.inner], base[best * p.inner])) best = k;
            }
            y[o * p.inner + i] = static_cast<int64_t>(best);
        }
    }
}

}  // namespace trellis::kernels
