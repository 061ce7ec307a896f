// CpuRef GridSample (4-D, Float32): for each output pixel the grid gives a normalized (x, y) in
// [-1, 1], mapped to input pixel coordinates (align_corners: -1 and 1 are the corner pixels'
// centres; otherwise their outer edges), then sampled with nearest (round half to even, before padding),
// bilinear or bicubic (Keys, a = -0.75) interpolation. Padding decides what lies outside the
// input: zeros, the border pixel, or the reflection about the border. Follows the ONNX reference
// (onnx/reference/ops/op_grid_sample.py) and onnxruntime: a coordinate outside the border range
// is first clamped (border) or reflected (reflection); each tap outside the input is then 0
// (zeros), clamped (border) or reflected (reflection). A NaN grid value (or an infinite one with
// reflection padding) gives NaN.
#include "RefKernelTable.hpp"
#include "ops/RefMathCommon.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace trellis::ref {

namespace {

// Reflects x into [lo, hi] by folding at the nearer border repeatedly.
double Reflect(double x, double lo, double hi) {
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

std::array<double, 4> CubicWeights(double t) {
    constexpr double a = -0.75;
    auto near = [](double d) { return ((a + 2) * d - (a + 3)) * d * d + 1; };
    auto far = [](double d) { return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a; };
    return {far(t + 1), near(t), near(1 - t), far(2 - t)};
}

class GridSampleWorkload final : public IWorkload {
public:
    GridSampleWorkload(const GridSampleDescriptor& d, const WorkloadInfo& info) : m_D(d) {
        const TensorShape& xs = info.m_InputTensorInfos[0].GetShape();
        const TensorShape& gs = info.m_InputTensorInfos[1].GetShape();
        m_N = xs[0];
        m_C = xs[1];
        m_H = xs[2];
        m_W = xs[3];
        m_OutH = gs[1];
        m_OutW = gs[2];
        // The range a coordinate may take before padding applies.
        if (d.m_AlignCorners) {
            m_XMin = 0.0, m_XMax = static_cast<double>(m_W) - 1, m_YMin = 0.0, m_YMax = static_cast<double>(m_H) - 1;
        } else {
            m_XMin = -0.5, m_XMax = static_cast<double>(m_W) - 0.5, m_YMin = -0.5, m_YMax = static_cast<double>(m_H) - 0.5;
        }
    }

    void Execute(const WorkloadIo& io) const override {
        const float* x = math::InputF32(io, 0);
        const float* grid = math::InputF32(io, 1);
        float* y = math::OutputF32(io, 0);
        for (std::size_t n = 0; n < m_N; ++n) {
            for (std::size_t c = 0; c < m_C; ++c) {
                const float* image = x + (n * m_C + c) * m_H * m_W;
                for (std::size_t oy = 0; oy < m_OutH; ++oy) {
                    for (std::size_t ox = 0; ox < m_OutW; ++ox) {
                        const float* g = grid + ((n * m_OutH + oy) * m_OutW + ox) * 2;
                        y[((n * m_C + c) * m_OutH + oy) * m_OutW + ox] =
                            static_cast<float>(Sample(image, Denormalize(g[0], m_W), Denormalize(g[1], m_H)));
                    }
                }
            }
        }
    }

private:
    double Denormalize(float v, std::size_t length) const {
        const double n = v;
        const double len = static_cast<double>(length);
        return m_D.m_AlignCorners ? (n + 1) / 2 * (len - 1) : ((n + 1) * len - 1) / 2;
    }

    // The pixel at integer (r, c), after padding.
    double Pixel(const float* image, long long r, long long c) const {
        const long long h = static_cast<long long>(m_H), w = static_cast<long long>(m_W);
        switch (m_D.m_Padding) {
            case GridSamplePadding::Zeros:
                if (r < 0 || r >= h || c < 0 || c >= w) return 0.0;
                break;
            case GridSamplePadding::Border:
                r = std::clamp(r, 0LL, h - 1);
                c = std::clamp(c, 0LL, w - 1);
                break;
            case GridSamplePadding::Reflection:
                c = static_cast<long long>(Reflect(static_cast<double>(c), m_XMin, m_XMax));
                r = static_cast<long long>(Reflect(static_cast<double>(r), m_YMin, m_YMax));
                r = std::clamp(r, 0LL, h - 1);  // guards only the float edge of the fold
                c = std::clamp(c, 0LL, w - 1);
                break;
        }
        return image[static_cast<std::size_t>(r) * m_W + static_cast<std::size_t>(c)];
    }

    double Sample(const float* image, double x, double y) const {
        // Coordinates no padding rule can place: NaN anywhere, infinity when reflecting.
        if (std::isnan(x) || std::isnan(y)) return std::numeric_limits<double>::quiet_NaN();
        if (m_D.m_Padding == GridSamplePadding::Reflection && (std::isinf(x) || std::isinf(y))) {
            return std::numeric_limits<double>::quiet_NaN();
        }
        // With zero padding, a point this far out has every tap (bicubic reaches 2 pixels) outside:
        // answer before converting a huge coordinate to an index.
        if (m_D.m_Padding == GridSamplePadding::Zeros &&
            (x < -3.0 || y < -3.0 || x > static_cast<double>(m_W) + 2 || y > static_cast<double>(m_H) + 2)) {
            return 0.0;
        }
        if (m_D.m_Mode == GridSampleMode::Nearest) {
            // Rounded first, so border and reflection padding keep the coordinates integral.
            x = std::nearbyint(x);
            y = std::nearbyint(y);
        }
        if (x < m_XMin || x > m_XMax || y < m_YMin || y > m_YMax) {
            if (m_D.m_Padding == GridSamplePadding::Border) {
                x = std::clamp(x, 0.0, static_cast<double>(m_W) - 1);
                y = std::clamp(y, 0.0, static_cast<double>(m_H) - 1);
            } else if (m_D.m_Padding == GridSamplePadding::Reflection) {
                x = Reflect(x, m_XMin, m_XMax);
                y = Reflect(y, m_YMin, m_YMax);
            }
        }
        switch (m_D.m_Mode) {
            case GridSampleMode::Nearest:
                return Pixel(image, static_cast<long long>(y), static_cast<long long>(x));
            case GridSampleMode::Bilinear: {
                const double fx = std::floor(x), fy = std::floor(y);
                const long long x1 = static_cast<long long>(fx), y1 = static_cast<long long>(fy);
                const double dx = x - fx, dy = y - fy;
                return (1 - dy) * ((1 - dx) * Pixel(image, y1, x1) + dx * Pixel(image, y1, x1 + 1)) +
                       dy * ((1 - dx) * Pixel(image, y1 + 1, x1) + dx * Pixel(image, y1 + 1, x1 + 1));
            }
            case GridSampleMode::Bicubic: {
                const double fx = std::floor(x), fy = std::floor(y);
                const long long x0 = static_cast<long long>(fx) - 1, y0 = static_cast<long long>(fy) - 1;
                const std::array<double, 4> wx = CubicWeights(x - fx), wy = CubicWeights(y - fy);
                double sum = 0.0;
                for (int i = 0; i < 4; ++i) {
                    double row = 0.0;
                    for (int j = 0; j < 4; ++j) row += wx[j] * Pixel(image, y0 + i, x0 + j);
                    sum += wy[i] * row;
                }
                return sum;
            }
        }
        return 0.0;
    }

    GridSampleDescriptor m_D;
    std::size_t m_N = 0, m_C = 0, m_H = 0, m_W = 0, m_OutH = 0, m_OutW = 0;
    double m_XMin = 0, m_XMax = 0, m_YMin = 0, m_YMax = 0;
};

}  // namespace

bool GridSampleRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    if (!math::RequireAllFloat32("GridSample", info, reason)) return false;
    const TensorShape& xs = info.m_InputTensorInfos[0].GetShape();
    if (xs.GetNumDimensions() != 4 || xs[2] == 0 || xs[3] == 0) {
        if (xs.GetNumDimensions() == 4 && info.m_OutputTensorInfos[0].GetNumElements() == 0) return true;
        return math::Refuse(reason, "GridSample: X " + xs.ToString() + " must be 4-D with non-empty spatial dims");
    }
    return true;
}

IWorkloadPtr GridSampleRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<GridSampleWorkload>(layer.Get<GridSampleDescriptor>(), info);
}

}  // namespace trellis::ref
