// Kernel snippet: GridSample (4-D) - X (N, C, H, W) sampled at grid (N, Hout, Wout, 2) positions
// normalized to [-1, 1]: bilinear, nearest or bicubic (Keys, a = -0.75), with zeros, border or
// reflection padding; alignCorners puts -1 and 1 at the corner pixels' centres (else their outer
// edges). Computed in double.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>

namespace trellis::kernels {

/// In the order of trellis::GridSampleMode and trellis::GridSamplePadding.
enum class GridSampleMode { Bilinear, Nearest, Bicubic };
inline const char* KernelEnumType(GridSampleMode) { return "GridSampleMode"; }
inline const char* KernelEnumName(GridSampleMode v) {
    switch (v) {
        case GridSampleMode::Bilinear: return "Bilinear";
        case GridSampleMode::Nearest: return "Nearest";
        case GridSampleMode::Bicubic: return "Bicubic";
    }
    return "";
}
enum class GridSamplePadding { Zeros, Border, Reflection };
inline const char* KernelEnumType(GridSamplePadding) { return "GridSamplePadding"; }
inline const char* KernelEnumName(GridSamplePadding v) {
    switch (v) {
        case GridSamplePadding::Zeros: return "Zeros";
        case GridSamplePadding::Border: return "Border";
        case GridSamplePadding::Reflection: return "Reflection";
    }
    return "";
}

struct GridSampleParams {
    GridSampleMode mode = GridSampleMode::Bilinear;
    GridSamplePadding padding = GridSamplePadding::Zeros;
    bool alignCorners = false;
    std::size_t n = 0, c = 0, h = 0, w = 0, outH = 0, outW = 0;
    double xMin = 0, xMax = 0, yMin = 0, yMax = 0;  ///< the range a coordinate may take before padding applies
    template <typename F> void Fields(F&& f) const {
        f(mode); f(padding); f(alignCorners); f(n); f(c); f(h); f(w); f(outH); f(outW); f(xMin); f(xMax); f(yMin); f(yMax);
    }
};

/// Reflects x into [lo, hi] by folding at the nearer border repeatedly.
inline double GridReflect(double x, double lo, double hi) {
    const double range = hi - lo;
    if (range <= 0.0) return lo;
    if (x < lo) {
        const double dx = lo - x;
        const double n = std::floor(dx / range);
        const double r = dx - n * range;
        return std::fmod(n, 2.0) == 0.0 ? lo + r : hi - r;
    }
    if (x > hi) {
        const double dx = x - hi;
        const double n = std::floor(dx / range);
        const double r = dx - n * range;
        return std::fmod(n, 2.0) == 0.0 ? hi - r : lo + r;
    }
    return x;
}

inline std::array<double, 4> GridCubicWeights(double t) {
    constexpr double a = -0.75;
    auto near = [](double d) { return ((a + 2) * d - (a + 3)) * d * d + 1; };
    auto far = [](double d) { return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a; };
    return {far(t + 1), near(t), near(1 - t), far(2 - t)};
}

inline double GridDenormalize(const GridSampleParams& p, float v, std::size_t length) {
    const double n = v;
    const double len = static_cast<double>(length);
    return p.alignCorners ? (n + 1) / 2 * (len - 1) : ((n + 1) * len - 1) / 2;
}

/// The pixel at integer (r, c), after padding.
inline double GridPixel(const GridSampleParams& p, const float* image, long long r, long long c) {
    const long long h = static_cast<long long>(p.h), w = static_cast<long long>(p.w);
    switch (p.padding) {
        case GridSamplePadding::Zeros:
            if (r < 0 || r >= h || c < 0 || c >= w) return 0.0;
            break;
        case GridSamplePadding::Border:
            r = std::clamp(r, 0LL, h - 1);
            c = std::clamp(c, 0LL, w - 1);
            break;
        case GridSamplePadding::Reflection:
            c = static_cast<long long>(GridReflect(static_cast<double>(c), p.xMin, p.xMax));
            r = static_cast<long long>(GridReflect(static_cast<double>(r), p.yMin, p.yMax));
            r = std::clamp(r, 0LL, h - 1);  // guards only the float edge of the fold
            c = std::clamp(c, 0LL, w - 1);
            break;
    }
    return image[static_cast<std::size_t>(r) * p.w + static_cast<std::size_t>(c)];
}

inline double GridSampleAt(const GridSampleParams& p, const float* image, double x, double y) {
    // Coordinates no padding rule can place: NaN anywhere, infinity when reflecting.
    if (std::isnan(x) || std::isnan(y)) return std::numeric_limits<double>::quiet_NaN();
    if (p.padding == GridSamplePadding::Reflection && (std::isinf(x) || std::isinf(y))) {
        return std::numeric_limits<double>::quiet_NaN();
    }
    // With zero padding, a point this far out has every tap (bicubic reaches 2 pixels) outside:
    // answer before converting a huge coordinate to an index.
    if (p.padding == GridSamplePadding::Zeros &&
        (x < -3.0 || y < -3.0 || x > static_cast<double>(p.w) + 2 || y > static_cast<double>(p.h) + 2)) {
        return 0.0;
    }
    if (p.mode == GridSampleMode::Nearest) {
        // Rounded first, so border and reflection padding keep the coordinates integral.
        x = std::nearbyint(x);
        y = std::nearbyint(y);
    }
    if (x < p.xMin || x > p.xMax || y < p.yMin || y > p.yMax) {
        if (p.padding == GridSamplePadding::Border) {
            x = std::clamp(x, 0.0, static_cast<double>(p.w) - 1);
            y = std::clamp(y, 0.0, static_cast<double>(p.h) - 1);
        } else if (p.padding == GridSamplePadding::Reflection) {
            x = GridReflect(x, p.xMin, p.xMax);
            y = GridReflect(y, p.yMin, p.yMax);
        }
    }
    switch (p.mode) {
        case GridSampleMode::Nearest:
            return GridPixel(p, image, static_cast<long long>(y), static_cast<long long>(x));
        case GridSampleMode::Bilinear: {
            const double fx = std::floor(x), fy = std::floor(y);
            const long long x1 = static_cast<long long>(fx), y1 = static_cast<long long>(fy);
            const double dx = x - fx, dy = y - fy;
            return (1 - dy) * ((1 - dx) * GridPixel(p, image, y1, x1) + dx * GridPixel(p, image, y1, x1 + 1)) +
                   dy * ((1 - dx) * GridPixel(p, image, y1 + 1, x1) + dx * GridPixel(p, image, y1 + 1, x1 + 1));
        }
        case GridSampleMode::Bicubic: {
            const double fx = std::floor(x), fy = std::floor(y);
            const long long x0 = static_cast<long long>(fx) - 1, y0 = static_cast<long long>(fy) - 1;
            const std::array<double, 4> wx = GridCubicWeights(x - fx), wy = GridCubicWeights(y - fy);
            double sum = 0.0;
            for (int i = 0; i < 4; ++i) {
                double row = 0.0;
                for (int j = 0; j < 4; ++j) row += wx[j] * GridPixel(p, image, y0 + i, x0 + j);
                sum += wy[i] * row;
            }
            return sum;
        }
    }
    return 0.0;
}

inline void GridSample(const GridSampleParams& p, const float* x, const float* grid, float* y) {
    for (std::size_t n = 0; n < p.n; ++n) {
        for (std::size_t c = 0; c < p.c; ++c) {
            const float* image = x + (n * p.c + c) * p.h * p.w;
            for (std::size_t oy = 0; oy < p.outH; ++oy) {
                for (std::size_t ox = 0; ox < p.outW; ++ox) {
                    const float* g = grid + ((n * p.outH + oy) * p.outW + ox) * 2;
                    y[((n * p.c + c) * p.outH + oy) * p.outW + ox] =
                        static_cast<float>(GridSampleAt(p, image, GridDenormalize(p, g[0], p.w), GridDenormalize(p, g[1], p.h)));
                }
            }
        }
    }
}

}  // namespace trellis::kernels
