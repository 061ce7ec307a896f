// Kernel snippet: InstanceNormalization, Lrn (across channels) and MeanVarianceNormalization.
//  - InstanceNormalization: each (n, c) plane normalized over its spatial dims (mean and biased
//    variance in double), then scale[c] and B[c].
//  - Lrn: y = x / (bias + alpha / size * sum of x^2 over the `size` channels around c)^beta.
//  - MeanVarianceNormalization: (x - mean) / (sqrt(variance) + 1e-9) over the given axes; the
//    element at flat position f belongs to group sum_i pos_i * groupStride_i (0 along normalized
//    dims). Means and variances (double) and the position odometer live in the workspace.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace trellis::kernels {

struct InstanceNormalizationParams {
    std::size_t planes = 0, channels = 0, plane = 0;
    double eps = 1e-5;
    template <typename F> void Fields(F&& f) const { f(planes); f(channels); f(plane); f(eps); }
};

inline void InstanceNormalization(const InstanceNormalizationParams& p, const float* x, const float* scale, const float* bias,
                                  float* y) {
    for (std::size_t q = 0; q < p.planes; ++q) {
        const float* xp = x + q * p.plane;
        float* yp = y + q * p.plane;
        const std::size_t c = q % p.channels;
        double sum = 0.0, sq = 0.0;
        for (std::size_t i = 0; i < p.plane; ++i) sum += xp[i];
        const double mean = p.plane ? sum / static_cast<double>(p.plane) : 0.0;
        for (std::size_t i = 0; i < p.plane; ++i) sq += (xp[i] - mean) * (xp[i] - mean);
        const double var = p.plane ? sq / static_cast<double>(p.plane) : 0.0;
        const double a = scale[c] / std::sqrt(var + p.eps);
        for (std::size_t i = 0; i < p.plane; ++i) yp[i] = static_cast<float>((xp[i] - mean) * a + bias[c]);
    }
}

struct LrnParams {
    std::size_t batch = 0, channels = 0, plane = 0;
    float alpha = 1e-4f, beta = 0.75f, bias = 1.0f;
    unsigned int size = 1;
    template <typename F> void Fields(F&& f) const { f(batch); f(channels); f(plane); f(alpha); f(beta); f(bias); f(size); }
};

inline void Lrn(const LrnParams& p, const float* x, float* y) {
    const long long before = (static_cast<long long>(p.size) - 1) / 2;
    const long long after = static_cast<long long>(p.size) - 1 - before;
    const long long channels = static_cast<long long>(p.channels);
    for (std::size_t n = 0; n < p.batch; ++n) {
        const float* xn = x + n * p.channels * p.plane;
        float* yn = y + n * p.channels * p.plane;
        for (long long c = 0; c < channels; ++c) {
            const long long lo = std::max(0LL, c - before), hi = std::min(channels - 1, c + after);
            for (std::size_t i = 0; i < p.plane; ++i) {
                double s = 0.0;
                for (long long k = lo; k <= hi; ++k) {
                    const double v = xn[static_cast<std::size_t>(k) * p.plane + i];
                    s += v * v;
                }
                const double base = p.bias + static_cast<double>(p.alpha) / p.size * s;
                const std::size_t at = static_cast<std::size_t>(c) * p.plane + i;
                yn[at] = static_cast<float>(xn[at] / std::pow(base, static_cast<double>(p.beta)));
            }
        }
    }
}

struct MeanVarianceNormalizationParams {
    std::vector<std::size_t> dims, groupStride;
    std::size_t count = 0, groups = 0, groupSize = 0;
    template <typename F> void Fields(F&& f) const { f(dims); f(groupStride); f(count); f(groups); f(groupSize); }
};

inline std::size_t MeanVarianceNormalizationWorkspaceBytes(const MeanVarianceNormalizationParams& p) {
    return 2 * p.groups * sizeof(double) + p.dims.size() * sizeof(std::size_t);
}

/// Calls f(flat index, group) for every element in flat order.
template <typename F>
void ForEachGroupElement(const MeanVarianceNormalizationParams& p, std::size_t* pos, F&& f) {
    std::fill_n(pos, p.dims.size(), std::size_t{0});
    std::size_t g = 0;
    for (std::size_t i = 0; i < p.count; ++i) {
        f(i, g);
        for (std::size_t d = p.dims.size(); d-- > 0;) {
            g += p.groupStride[d];
            if (++pos[d] < p.dims[d]) break;
            g -= p.groupStride[d] * p.dims[d];
            pos[d] = 0;
        }
    }
}

inline void MeanVarianceNormalization(const MeanVarianceNormalizationParams& p, const float* x, float* y, void* workspace) {
    double* mean = static_cast<double*>(workspace);
    double* var = mean + p.groups;
    std::size_t* pos = reinterpret_cast<std::size_t*>(var + p.groups);
    std::fill_n(mean, 2 * p.groups, 0.0);
    const double n = static_cast<double>(p.groupSize);
    ForEachGroupElement(p, pos, [&](std::size_t f, std::size_t g) { mean[g] += x[f]; });
    for (std::size_t g = 0; g < p.groups; ++g) mean[g] /= n;
    ForEachGroupElement(p, pos, [&](std::size_t f, std::size_t g) {
        const double d = x[f] - mean[g];
        var[g] += d * d;
    });
    for (std::size_t g = 0; g < p.groups; ++g) var[g] = std::sqrt(var[g] / n) + 1e-9;  // now the divisor
    ForEachGroupElement(p, pos, [&](std::size_t f, std::size_t g) { y[f] = static_cast<float>((x[f] - mean[g]) / var[g]); });
}

}  // namespace trellis::kernels
