// Kernel snippet: LayerNormalization - each row X[outer, :] over dims [axis, rank) becomes
// (x - mean) / sqrt(var + eps) * scale + B, mean and (biased) variance in double. The optional
// outputs 1 and 2 get each row's mean and 1 / sqrt(var + eps). Scale and B may broadcast over the
// normalized dims: index tables map each position of the normalized block to its element (empty:
// the identity).
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

namespace trellis::kernels {

struct LayerNormalizationParams {
    std::size_t rows = 0, size = 0;
    float eps = 1e-5f;
    std::vector<std::size_t> scaleIndex;  ///< empty: position i reads scale[i]
    std::vector<std::size_t> biasIndex;   ///< empty: position i reads B[i] (when there is a B)
    template <typename F> void Fields(F&& f) const { f(rows); f(size); f(eps); f(scaleIndex); f(biasIndex); }
};

/// `bias`, `meanOut` and `invStdOut` may be null.
inline void LayerNormalization(const LayerNormalizationParams& p, const float* x, const float* scale, const float* bias,
                               float* y, float* meanOut, float* invStdOut) {
    for (std::size_t r = 0; r < p.rows; ++r) {
        const float* xr = x + r * p.size;
        float* yr = y + r * p.size;
        double sum = 0.0;
        for (std::size_t i = 0; i < p.size; ++i) sum += xr[i];
        const double mean = sum / static_cast<double>(p.size);
        double sq = 0.0;
        for (std::size_t i = 0; i < p.size; ++i) sq += (xr[i] - mean) * (xr[i] - mean);
        const double inv = 1.0 / std::sqrt(sq / static_cast<double>(p.size) + p.eps);
        if (meanOut) meanOut[r] = static_cast<float>(mean);
        if (invStdOut) invStdOut[r] = static_cast<float>(inv);
        for (std::size_t i = 0; i < p.size; ++i) {
            const float s = scale[p.scaleIndex.empty() ? i : p.scaleIndex[i]];
            const float b = bias ? bias[p.biasIndex.empty() ? i : p.biasIndex[i]] : 0.0f;
            yr[i] = static_cast<float>((xr[i] - mean) * inv * s + b);
        }
    }
}

}  // namespace trellis::kernels
