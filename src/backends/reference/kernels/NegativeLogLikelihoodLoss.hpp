// Kernel snippet: NegativeLogLikelihoodLoss - loss = -x[n, target, d...] * weight[target]; targets
// equal to the ignore index contribute 0 (and no weight); reduction none keeps the target's shape,
// sum adds, mean divides the sum by the sum of the weights used. A target outside [0, C) that is
// not the ignore index throws std::out_of_range.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace trellis::kernels {

/// In the order of trellis::LossReduction.
enum class LossReduction { None, Sum, Mean };
inline const char* KernelEnumType(LossReduction) { return "LossReduction"; }
inline const char* KernelEnumName(LossReduction v) {
    switch (v) {
        case LossReduction::None: return "None";
        case LossReduction::Sum: return "Sum";
        case LossReduction::Mean: return "Mean";
    }
    return "";
}

struct NllLossParams {
    LossReduction reduction = LossReduction::Mean;
    bool hasIgnoreIndex = false;
    int64_t ignoreIndex = 0;
    bool target64 = true;
    std::size_t n = 1, c = 1, d = 1;
    template <typename F> void Fields(F&& f) const { f(reduction); f(hasIgnoreIndex); f(ignoreIndex); f(target64); f(n); f(c); f(d); }
};

/// `weight` may be null (all 1).
template <typename T>
void NegativeLogLikelihoodLoss(const NllLossParams& p, const T* x, const void* target, const T* weight, T* out) {
    double lossSum = 0.0, weightSum = 0.0;
    for (std::size_t n = 0; n < p.n; ++n) {
        for (std::size_t d = 0; d < p.d; ++d) {
            const std::size_t j = n * p.d + d;
            const int64_t t = p.target64 ? static_cast<const int64_t*>(target)[j] : static_cast<const int32_t*>(target)[j];
            double loss = 0.0, w = 0.0;
            if (!(p.hasIgnoreIndex && t == p.ignoreIndex)) {
                if (t < 0 || t >= static_cast<int64_t>(p.c)) {
                    throw std::out_of_range("target " + std::to_string(t) + " (at position " + std::to_string(j) +
                                            ") is out of range [0, " + std::to_string(p.c) + ") and is not the ignore index");
                }
                const auto c = static_cast<std::size_t>(t);
                w = weight ? static_cast<double>(weight[c]) : 1.0;
                loss = -static_cast<double>(x[(n * p.c + c) * p.d + d]) * w;
            }
            if (p.reduction == LossReduction::None) out[j] = static_cast<T>(loss);
            lossSum += loss;
            weightSum += w;
        }
    }
    if (p.reduction == LossReduction::Sum) out[0] = static_cast<T>(lossSum);
    if (p.reduction == LossReduction::Mean) out[0] = static_cast<T>(lossSum / weightSum);
}

}  // namespace trellis::kernels
