// Kernel snippet: BatchNormalization, Y = scale * (X - mean) / sqrt(var + eps) + B per channel
// (dim 1), any rank >= 2.
//
// Per channel the affine form Y = a * X + b is computed in double first (a = scale / sqrt(var +
// eps), b = B - mean * a), so the per-element work is one multiply-add. In training mode mean and
// var are the channel's batch statistics (over N and the spatial dims; the variance biased, as
// ONNX's reference), and the running statistics (when asked for) become input * momentum + batch
// statistic * (1 - momentum).
#pragma once

#include <cmath>
#include <cstddef>

namespace trellis::kernels {

struct BatchNormalizationParams {
    std::size_t batch = 0, channels = 0, inner = 0;
    float eps = 1e-5f;
    bool training = false;
    double momentum = 0.9;
    template <typename F> void Fields(F&& f) const { f(batch); f(channels); f(inner); f(eps); f(training); f(momentum); }
};

/// Mean and biased variance of channel c over the batch and the spatial dims.
inline void BatchStatistics(const BatchNormalizationParams& p, const float* x, std::size_t c, double& mean, double& var) {
    const double count = static_cast<double>(p.batch * p.inner);
    double sum = 0.0, sq = 0.0;
    for (std::size_t n = 0; n < p.batch; ++n) {
        const float* xc = x + (n * p.channels + c) * p.inner;
        for (std::size_t i = 0; i < p.inner; ++i) sum += xc[i];
    }
    mean = count > 0 ? sum / count : 0.0;
    for (std::size_t n = 0; n < p.batch; ++n) {
        const float* xc = x + (n * p.channels + c) * p.inner;
        for (std::size_t i = 0; i < p.inner; ++i) sq += (xc[i] - mean) * (xc[i] - mean);
    }
    var = count > 0 ? sq / count : 0.0;
}

/// `runningMean` and `runningVar` (training mode's outputs 1 and 2) may be null.
inline void BatchNormalization(const BatchNormalizationParams& p, const float* x, const float* scale, const float* bias,
                               const float* mean, const float* var, float* y, float* runningMean, float* runningVar) {
    for (std::size_t c = 0; c < p.channels; ++c) {
        double mu = mean[c], sigma2 = var[c];
        if (p.training) {
            BatchStatistics(p, x, c, mu, sigma2);
            if (runningMean) {
                runningMean[c] = static_cast<float>(mean[c] * p.momentum + mu * (1.0 - p.momentum));
                runningVar[c] = static_cast<float>(var[c] * p.momentum + sigma2 * (1.0 - p.momentum));
            }
        }
        const double a = scale[c] / std::sqrt(sigma2 + p.eps);
        const float af = static_cast<float>(a);
        const float bf = static_cast<float>(bias[c] - mu * a);
        for (std::size_t n = 0; n < p.batch; ++n) {
            const std::size_t base = (n * p.channels + c) * p.inner;
            for (std::size_t i = 0; i < p.inner; ++i) y[base + i] = af * x[base + i] + bf;
        }
    }
}

}  // namespace trellis::kernels
