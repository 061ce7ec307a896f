// Kernel snippet: RoiAlign - for each roi, batch index and channel, the outH x outW bins of the
// (scaled, optionally half-pixel shifted) roi are each sampled on a grid of sampling_ratio^2 points
// (adaptive: ceil(roi size / bins) per axis) by bilinear interpolation, then averaged or max-pooled.
// Matches onnxruntime (the ONNX reference), including its edges: a sample more than one pixel
// outside the input counts as 0, coordinates in (-1, 0] are clamped to 0, and output_half_pixel
// rois are at least 1 pixel wide and high. Max mode takes the largest of the four weighted taps.
// A bad batch index, a non-finite roi or a roi needing more than 2^26 samples throws
// std::out_of_range. The sample taps are recomputed per channel (no memory beyond the output).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace trellis::kernels {

struct RoiBilinearTaps {
    std::size_t pos[4] = {0, 0, 0, 0};
    double w[4] = {0, 0, 0, 0};
};

inline RoiBilinearTaps RoiMakeTaps(double y, double x, std::size_t height, std::size_t width) {
    RoiBilinearTaps t;
    const double h = static_cast<double>(height), wd = static_cast<double>(width);
    if (y < -1.0 || y > h || x < -1.0 || x > wd) return t;  // all weights 0
    y = std::max(y, 0.0);
    x = std::max(x, 0.0);
    std::size_t yLow = static_cast<std::size_t>(y), xLow = static_cast<std::size_t>(x), yHigh, xHigh;
    if (yLow >= height - 1) {
        yHigh = yLow = height - 1;
        y = static_cast<double>(yLow);
    } else {
        yHigh = yLow + 1;
    }
    if (xLow >= width - 1) {
        xHigh = xLow = width - 1;
        x = static_cast<double>(xLow);
    } else {
        xHigh = xLow + 1;
    }
    const double ly = y - static_cast<double>(yLow), lx = x - static_cast<double>(xLow);
    const double hy = 1.0 - ly, hx = 1.0 - lx;
    t.pos[0] = yLow * width + xLow;
    t.pos[1] = yLow * width + xHigh;
    t.pos[2] = yHigh * width + xLow;
    t.pos[3] = yHigh * width + xHigh;
    t.w[0] = hy * hx;
    t.w[1] = hy * lx;
    t.w[2] = ly * hx;
    t.w[3] = ly * lx;
    return t;
}

struct RoiAlignParams {
    bool average = true;
    std::size_t outH = 1, outW = 1, samplingRatio = 0;
    double spatialScale = 1.0;
    bool halfPixel = true;
    bool int32Indices = false;
    std::size_t n = 0, c = 0, h = 0, w = 0, rois = 0;
    template <typename F> void Fields(F&& f) const {
        f(average); f(outH); f(outW); f(samplingRatio); f(spatialScale); f(halfPixel); f(int32Indices); f(n); f(c); f(h); f(w);
        f(rois);
    }
};

inline void RoiAlign(const RoiAlignParams& p, const float* x, const float* rois, const void* indices, float* y) {
    const std::size_t ph = p.outH, pw = p.outW;
    const double offset = p.halfPixel ? 0.5 : 0.0;
    const double scale = p.spatialScale;
    for (std::size_t r = 0; r < p.rois; ++r) {
        const int64_t b = p.int32Indices ? static_cast<const int32_t*>(indices)[r] : static_cast<const int64_t*>(indices)[r];
        if (b < 0 || b >= static_cast<int64_t>(p.n)) {
            throw std::out_of_range("batch_indices[" + std::to_string(r) + "]=" + std::to_string(b) + " is outside [0, " +
                                    std::to_string(p.n) + ")");
        }
        const float* roi = rois + r * 4;
        if (!std::isfinite(roi[0]) || !std::isfinite(roi[1]) || !std::isfinite(roi[2]) || !std::isfinite(roi[3])) {
            throw std::out_of_range("roi " + std::to_string(r) + " has a non-finite coordinate");
        }
        const double startW = roi[0] * scale - offset, startH = roi[1] * scale - offset;
        const double endW = roi[2] * scale - offset, endH = roi[3] * scale - offset;
        double roiW = endW - startW, roiH = endH - startH;
        if (!p.halfPixel) {
            roiW = std::max(roiW, 1.0);
            roiH = std::max(roiH, 1.0);
        }
        const double binH = roiH / static_cast<double>(ph), binW = roiW / static_cast<double>(pw);
        // Adaptive grid, capped before the conversion so a huge roi cannot overflow it (the sample
        // limit below then refuses it).
        auto adaptive = [](double size, std::size_t bins) {
            return static_cast<std::size_t>(std::clamp(std::ceil(size / static_cast<double>(bins)), 0.0, 1e9));
        };
        const std::size_t gridH = p.samplingRatio > 0 ? p.samplingRatio : adaptive(roiH, ph);
        const std::size_t gridW = p.samplingRatio > 0 ? p.samplingRatio : adaptive(roiW, pw);
        // The adaptive grid grows with the roi: refuse a roi so large that sampling it would not
        // finish in reasonable time instead of hanging.
        constexpr double kMaxSamples = 1u << 26;
        if (static_cast<double>(gridH) * static_cast<double>(gridW) * static_cast<double>(ph * pw) > kMaxSamples) {
            throw std::out_of_range("roi " + std::to_string(r) + " needs " + std::to_string(gridH) + " x " +
                                    std::to_string(gridW) + " samples per bin; more than 2^26 samples in all are refused "
                                    "(give sampling_ratio, or a smaller roi)");
        }
        const double count = static_cast<double>(std::max<std::size_t>(gridH * gridW, 1));
        for (std::size_t c = 0; c < p.c; ++c) {
            const float* image = x + (static_cast<std::size_t>(b) * p.c + c) * p.h * p.w;
            float* out = y + (r * p.c + c) * ph * pw;
            for (std::size_t i = 0; i < ph; ++i) {
                for (std::size_t j = 0; j < pw; ++j) {
                    double acc = 0.0;
                    bool first = true;
                    for (std::size_t iy = 0; iy < gridH; ++iy) {
                        const double yy = startH + static_cast<double>(i) * binH +
                                          (static_cast<double>(iy) + 0.5) * binH / static_cast<double>(gridH);
                        for (std::size_t ix = 0; ix < gridW; ++ix) {
                            const double xx = startW + static_cast<double>(j) * binW +
                                              (static_cast<double>(ix) + 0.5) * binW / static_cast<double>(gridW);
                            const RoiBilinearTaps t = RoiMakeTaps(yy, xx, p.h, p.w);
                            if (p.average) {
                                for (int k = 0; k < 4; ++k) acc += t.w[k] * image[t.pos[k]];
                            } else {
                                double m = t.w[0] * image[t.pos[0]];
                                for (int k = 1; k < 4; ++k) m = std::max(m, t.w[k] * image[t.pos[k]]);
                                acc = first ? m : std::max(acc, m);
                                first = false;
                            }
                        }
                    }
                    out[i * pw + j] = static_cast<float>(p.average ? acc / count : acc);
                }
            }
        }
    }
}

}  // namespace trellis::kernels
