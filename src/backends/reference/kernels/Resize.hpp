// Kernel snippet: Resize - nearest (any data type: raw elements), linear and cubic (float), N-d,
// separable: per dim, each output index has its taps (input offset = index * stride) and their
// weights; tf_crop_and_resize marks output indices outside the input, which get the
// extrapolation value. The output-index odometer is in the workspace.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace trellis::kernels {

struct ResizeDimTable {
    std::size_t taps = 1;             ///< taps per output index
    std::vector<std::size_t> offset;  ///< input offset (index * stride) of each tap, taps per output index
    std::vector<double> weight;       ///< weight of each tap (linear and cubic)
    std::vector<uint8_t> outside;     ///< tf_crop_and_resize: per output index, the coordinate lies outside the input
    template <typename F> void Fields(F&& f) const { f(taps); f(offset); f(weight); f(outside); }
};

struct ResizeParams {
    bool nearest = true;
    double extrapolation = 0.0;                ///< linear and cubic (float)
    std::vector<uint8_t> extrapolationBytes;   ///< nearest: the extrapolation value as one element
    std::size_t elementSize = 0;
    std::vector<std::size_t> out;
    std::size_t outCount = 0;
    std::vector<ResizeDimTable> tables;
    template <typename F> void Fields(F&& f) const {
        f(nearest); f(extrapolation); f(extrapolationBytes); f(elementSize); f(out); f(outCount); f(tables);
    }
};

inline std::size_t ResizeWorkspaceBytes(const ResizeParams& p) { return p.out.size() * sizeof(std::size_t); }

/// Separable interpolation: the weighted sum over every tap of every dim from `d` on (taps of
/// weight 0, e.g. along dims with scale 1, are skipped).
inline double ResizeInterpolate(const ResizeParams& p, const float* x, const std::size_t* idx, std::size_t d, std::size_t base) {
    if (d == p.out.size()) return x[base];
    const ResizeDimTable& t = p.tables[d];
    double sum = 0.0;
    for (std::size_t k = 0; k < t.taps; ++k) {
        const double w = t.weight[idx[d] * t.taps + k];
        if (w != 0.0) sum += w * ResizeInterpolate(p, x, idx, d + 1, base + t.offset[idx[d] * t.taps + k]);
    }
    return sum;
}

inline void Resize(const ResizeParams& p, const void* input, void* output, void* workspace) {
    const auto* x = static_cast<const unsigned char*>(input);
    auto* y = static_cast<unsigned char*>(output);
    const std::size_t rank = p.out.size();
    auto* idx = static_cast<std::size_t*>(workspace);
    for (std::size_t d = 0; d < rank; ++d) idx[d] = 0;
    for (std::size_t o = 0; o < p.outCount; ++o) {
        bool outside = false;
        for (std::size_t d = 0; d < rank; ++d) outside = outside || p.tables[d].outside[idx[d]] != 0;
        if (p.nearest && outside) {
            std::memcpy(y + o * p.elementSize, p.extrapolationBytes.data(), p.elementSize);
        } else if (!p.nearest) {
            const double v = outside ? p.extrapolation : ResizeInterpolate(p, reinterpret_cast<const float*>(x), idx, 0, 0);
            reinterpret_cast<float*>(y)[o] = static_cast<float>(v);
        } else {
            std::size_t off = 0;
            for (std::size_t d = 0; d < rank; ++d) off += p.tables[d].offset[idx[d]];
            std::memcpy(y + o * p.elementSize, x + off * p.elementSize, p.elementSize);
        }
        for (std::size_t d = rank; d-- > 0;) {
            if (++idx[d] < p.out[d]) break;
            idx[d] = 0;
        }
    }
}

}  // namespace trellis::kernels
