// Kernel snippet: Softmax / LogSoftmax along one axis (CpuRef's kernel, also emitted verbatim into
// the code generator's soft-target artifacts; see KernelSnippets.md).
//
// The input is viewed as [outer, extent, inner] and each of the outer * inner lines (elements
// `inner` apart) is normalized on its own. Numerically stable: the line's maximum is subtracted
// before exp; sums run in double.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

namespace trellis::kernels {

struct SoftmaxParams {
    std::size_t outer = 0;
    std::size_t extent = 0;
    std::size_t inner = 0;
    bool log = false;
    template <typename F> void Fields(F&& f) const { f(outer); f(extent); f(inner); f(log); }
};

/// T is float or double.
template <typename T>
void Softmax(const SoftmaxParams& p, const T* x, T* y) {
    for (std::size_t o = 0; o < p.outer; ++o) {
        for (std::size_t i = 0; i < p.inner; ++i) {
            const std::size_t base = o * p.extent * p.inner + i;
            T maxValue = -std::numeric_limits<T>::infinity();
            for (std::size_t e = 0; e < p.extent; ++e) maxValue = std::max(maxValue, x[base + e * p.inner]);
            double sum = 0.0;
            for (std::size_t e = 0; e < p.extent; ++e) sum += std::exp(static_cast<double>(x[base + e * p.inner]) - maxValue);
            if (p.log) {
                const double logSum = std::log(sum);
                for (std::size_t e = 0; e < p.extent; ++e) {
                    y[base + e * p.inner] = static_cast<T>(static_cast<double>(x[base + e * p.inner]) - maxValue - logSum);
                }
            } else {
                for (std::size_t e = 0; e < p.extent; ++e) {
                    y[base + e * p.inner] = static_cast<T>(std::exp(static_cast<double>(x[base + e * p.inner]) - maxValue) / sum);
                }
            }
        }
    }
}

}  // namespace trellis::kernels
