// CpuRef GridSample (4-D and 5-D, Float32): for each output pixel the grid gives a normalized (x, y) in
// [-1, 1], mapped to input pixel coordinates (align_corners: -1 and 1 are the corner pixels'
// centres; otherwise their outer edges), then sampled with nearest (round half to even, before padding),
// bilinear or bicubic (Keys, a = -0.75) interpolation. Padding decides what lies outside the
// input: zeros, the border pixel, or the reflection about the border. Follows the ONNX reference
// (onnx/reference/ops/op_grid_sample.py) and onnxruntime: a coordinate outside the border range
// is first clamped (border) or reflected (reflection); each tap outside the input is then 0
// (zeros), clamped (border) or reflected (reflection). A NaN grid value (or an infinite one with
// reflection padding) gives NaN. The 5-D (volumetric) form samples X (N, C, D, H, W) at (x, y, z)
// with the same rules per coordinate (nearest or trilinear; ONNX defines cubic for 4-D only); it
// runs outside the kernel snippet, so the code generator's soft target declines it.
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/GridSample.hpp"
#include "ops/RefMathCommon.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace trellis::ref {

namespace {

class GridSampleWorkload final : public IWorkload {
public:
    explicit GridSampleWorkload(kernels::GridSampleParams p) : m_P(p) {}
    void Execute(const WorkloadIo& io) const override {
        kernels::GridSample(m_P, math::InputF32(io, 0), math::InputF32(io, 1), math::OutputF32(io, 0));
    }
private:
    const kernels::GridSampleParams m_P;
};

// One coordinate axis of the volumetric form: its length and the range a coordinate may take
// before padding applies.
struct VolumeAxis {
    std::size_t length = 0;
    double lo = 0, hi = 0;
};

class VolumetricGridSampleWorkload final : public IWorkload {
public:
    VolumetricGridSampleWorkload(kernels::GridSampleParams p, std::size_t d, std::size_t outD)
        : m_P(p), m_D(d), m_OutD(outD) {
        const double shift = p.alignCorners ? 0.0 : 0.5;
        m_Axes[0] = {p.w, -shift, static_cast<double>(p.w) - 1 + shift};
        m_Axes[1] = {p.h, -shift, static_cast<double>(p.h) - 1 + shift};
        m_Axes[2] = {d, -shift, static_cast<double>(d) - 1 + shift};
    }
    void Execute(const WorkloadIo& io) const override {
        const float* x = math::InputF32(io, 0);
        const float* grid = math::InputF32(io, 1);
        float* y = math::OutputF32(io, 0);
        const std::size_t volume = m_D * m_P.h * m_P.w, outVolume = m_OutD * m_P.outH * m_P.outW;
        for (std::size_t n = 0; n < m_P.n; ++n) {
            for (std::size_t c = 0; c < m_P.c; ++c) {
                const float* image = x + (n * m_P.c + c) * volume;
                for (std::size_t o = 0; o < outVolume; ++o) {
                    const float* g = grid + (n * outVolume + o) * 3;
                    std::array<double, 3> pos;
                    for (int a = 0; a < 3; ++a) pos[a] = Denormalize(g[a], m_Axes[a].length);
                    y[(n * m_P.c + c) * outVolume + o] = static_cast<float>(SampleAt(image, pos));
                }
            }
        }
    }
private:
    double Denormalize(float v, std::size_t length) const {
        const double len = static_cast<double>(length);
        return m_P.alignCorners ? (double(v) + 1) / 2 * (len - 1) : ((double(v) + 1) * len - 1) / 2;
    }
    // The voxel at integer (x, y, z), after padding.
    double Voxel(const float* image, std::array<long long, 3> at) const {
        for (int a = 0; a < 3; ++a) {
            const long long len = static_cast<long long>(m_Axes[a].length);
            switch (m_P.padding) {
                case kernels::GridSamplePadding::Zeros:
                    if (at[a] < 0 || at[a] >= len) return 0.0;
                    break;
                case kernels::GridSamplePadding::Border: at[a] = std::clamp(at[a], 0LL, len - 1); break;
                case kernels::GridSamplePadding::Reflection:
                    at[a] = static_cast<long long>(kernels::GridReflect(static_cast<double>(at[a]), m_Axes[a].lo, m_Axes[a].hi));
                    at[a] = std::clamp(at[a], 0LL, len - 1);  // guards only the float edge of the fold
                    break;
            }
        }
        return image[(static_cast<std::size_t>(at[2]) * m_P.h + static_cast<std::size_t>(at[1])) * m_P.w +
                     static_cast<std::size_t>(at[0])];
    }
    double SampleAt(const float* image, std::array<double, 3> pos) const {
        for (int a = 0; a < 3; ++a) {
            if (std::isnan(pos[a])) return std::numeric_limits<double>::quiet_NaN();
            if (m_P.padding == kernels::GridSamplePadding::Reflection && std::isinf(pos[a])) {
                return std::numeric_limits<double>::quiet_NaN();
            }
            // With zero padding, a point this far out has every tap outside.
            if (m_P.padding == kernels::GridSamplePadding::Zeros &&
                (pos[a] < -2.0 || pos[a] > static_cast<double>(m_Axes[a].length) + 1)) {
                return 0.0;
            }
        }
        const bool nearest = m_P.mode == kernels::GridSampleMode::Nearest;
        for (int a = 0; a < 3; ++a) {
            if (nearest) pos[a] = std::nearbyint(pos[a]);
            if (pos[a] < m_Axes[a].lo || pos[a] > m_Axes[a].hi) {
                if (m_P.padding == kernels::GridSamplePadding::Border) {
                    pos[a] = std::clamp(pos[a], 0.0, static_cast<double>(m_Axes[a].length) - 1);
                } else if (m_P.padding == kernels::GridSamplePadding::Reflection) {
                    pos[a] = kernels::GridReflect(pos[a], m_Axes[a].lo, m_Axes[a].hi);
                }
            }
        }
        if (nearest) {
            return Voxel(image, {static_cast<long long>(pos[0]), static_cast<long long>(pos[1]), static_cast<long long>(pos[2])});
        }
        std::array<long long, 3> base;
        std::array<double, 3> frac;
        for (int a = 0; a < 3; ++a) {
            const double f = std::floor(pos[a]);
            base[a] = static_cast<long long>(f);
            frac[a] = pos[a] - f;
        }
        double sum = 0.0;
        for (int corner = 0; corner < 8; ++corner) {
            double weight = 1.0;
            std::array<long long, 3> at = base;
            for (int a = 0; a < 3; ++a) {
                const bool upper = (corner >> a) & 1;
                at[a] += upper ? 1 : 0;
                weight *= upper ? frac[a] : 1 - frac[a];
            }
            sum += weight * Voxel(image, at);
        }
        return sum;
    }

    const kernels::GridSampleParams m_P;
    const std::size_t m_D, m_OutD;
    std::array<VolumeAxis, 3> m_Axes;
};

}  // namespace

bool GridSampleRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    const auto& d = layer.Get<GridSampleDescriptor>();
    if (!math::RequireAllFloat32("GridSample", info, reason)) return false;
    const TensorShape& xs = info.m_InputTensorInfos[0].GetShape();
    const unsigned int rank = xs.GetNumDimensions();
    if (rank != 4 && rank != 5) return math::Refuse(reason, "GridSample: X " + xs.ToString() + " must be 4-D or 5-D");
    if (info.m_OutputTensorInfos[0].GetNumElements() == 0) return true;
    for (unsigned int i = 2; i < rank; ++i) {
        if (xs[i] == 0) return math::Refuse(reason, "GridSample: X " + xs.ToString() + " must have non-empty spatial dims");
    }
    if (rank == 5 && d.m_Mode == GridSampleMode::Bicubic) {
        return math::Refuse(reason, "GridSample: cubic mode is defined for 4-D input only");
    }
    return true;
}

kernels::GridSampleParams GridSampleRefParams(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const auto& d = layer.Get<GridSampleDescriptor>();
    const TensorShape& xs = info.m_InputTensorInfos[0].GetShape();
    const TensorShape& gs = info.m_InputTensorInfos[1].GetShape();
    kernels::GridSampleParams p;
    p.mode = static_cast<kernels::GridSampleMode>(d.m_Mode);
    p.padding = static_cast<kernels::GridSamplePadding>(d.m_Padding);
    p.alignCorners = d.m_AlignCorners;
    const unsigned int rank = xs.GetNumDimensions();
    p.n = xs[0];
    p.c = xs[1];
    p.h = xs[rank - 2];
    p.w = xs[rank - 1];
    p.outH = gs[rank - 3];
    p.outW = gs[rank - 2];
    if (d.m_AlignCorners) {
        p.xMin = 0.0, p.xMax = static_cast<double>(p.w) - 1, p.yMin = 0.0, p.yMax = static_cast<double>(p.h) - 1;
    } else {
        p.xMin = -0.5, p.xMax = static_cast<double>(p.w) - 0.5, p.yMin = -0.5, p.yMax = static_cast<double>(p.h) - 0.5;
    }
    return p;
}

IWorkloadPtr GridSampleRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const TensorShape& xs = info.m_InputTensorInfos[0].GetShape();
    if (xs.GetNumDimensions() == 5) {
        return std::make_unique<VolumetricGridSampleWorkload>(GridSampleRefParams(layer, info), xs[2],
                                                              info.m_InputTensorInfos[1].GetShape()[1]);
    }
    return std::make_unique<GridSampleWorkload>(GridSampleRefParams(layer, info));
}

}  // namespace trellis::ref
