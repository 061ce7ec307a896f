// CpuRef Resize: Nearest (any element type; all four nearest modes), N-d Linear and N-d Cubic
// (Float32), with the coordinate transforms half_pixel, pytorch_half_pixel, align_corners,
// asymmetric, tf_half_pixel_for_nn, tf_crop_and_resize and half_pixel_symmetric, and antialias
// (linear and cubic: where a dim shrinks by scale < 1, the filter is stretched by 1 / scale and its
// taps renormalized, as the ONNX reference's _linear/_cubic_coeffs_antialias). Matches the ONNX reference
// implementation (onnx/backend/test/case/node/resize.py), including its edge handling: source
// coordinates are computed in double, neighbours outside the input are clamped to the edge
// (cubic with exclude_outside drops them instead and renormalizes the weights), and with
// tf_crop_and_resize a sample whose coordinate falls outside the input in any dim is
// extrapolation_value.
//
// Everything depends only on the shapes and the descriptor, so per-dim tables are built at
// create time: for each output index, the taps (input offset and weight) it reads along that
// dim: one for nearest, two for linear, four for cubic (more with antialias).
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/Resize.hpp"
#include "RefConvert.hpp"
#include "ops/RefMathCommon.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <vector>

namespace trellis::ref {

namespace {

// Source coordinate of output index x along one dim (ONNX Resize, coordinate_transformation_mode).
// `lengthResized` is scale * input length, as in the ONNX reference (the exact output length
// when the output was given by sizes). roiStart/roiEnd: tf_crop_and_resize's region of this dim.
// `lengthOut` is the output's whole length (half_pixel_symmetric centres the content by the
// part of scale * length the output could not hold).
double SourceCoordinate(CoordinateTransform mode, double x, double scale, double lengthResized, double lengthIn,
                        double lengthOut, double roiStart, double roiEnd) {
    switch (mode) {
        case CoordinateTransform::HalfPixelSymmetric: {
            const double adjustment = lengthOut / lengthResized;
            const double offset = lengthIn / 2 * (1 - adjustment);
            return offset + (x + 0.5) / scale - 0.5;
        }
        case CoordinateTransform::HalfPixel: return (x + 0.5) / scale - 0.5;
        case CoordinateTransform::PytorchHalfPixel: return lengthResized == 1.0 ? -0.5 : (x + 0.5) / scale - 0.5;
        case CoordinateTransform::AlignCorners:
            return lengthResized == 1.0 ? 0.0 : x * (lengthIn - 1) / (lengthResized - 1);
        case CoordinateTransform::Asymmetric: return x / scale;
        case CoordinateTransform::TfHalfPixelForNearest: return (x + 0.5) / scale;
        case CoordinateTransform::TfCropAndResize: {
            const double span = (roiEnd - roiStart) * (lengthIn - 1);
            const double offset = lengthResized == 1.0 ? span / 2 : x * span / (lengthResized - 1);
            return offset + roiStart * (lengthIn - 1);
        }
    }
    return 0.0;
}

long long RoundNearest(NearestMode mode, double v) {
    const double lo = std::floor(v);
    if (v == lo) return static_cast<long long>(lo);
    const double frac = v - lo;
    switch (mode) {
        case NearestMode::RoundPreferFloor: return static_cast<long long>(frac <= 0.5 ? lo : lo + 1);
        case NearestMode::RoundPreferCeil: return static_cast<long long>(frac < 0.5 ? lo : lo + 1);
        case NearestMode::Floor: return static_cast<long long>(lo);
        case NearestMode::Ceil: return static_cast<long long>(lo + 1);
    }
    return static_cast<long long>(lo);
}

// Keys' cubic convolution weights of the taps at floor(x) - 1 .. floor(x) + 2 for t = x - floor(x).
std::array<double, 4> CubicWeights(double t, double a) {
    auto near = [a](double d) { return ((a + 2) * d - (a + 3)) * d * d + 1; };          // |d| <= 1
    auto far = [a](double d) { return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a; };     // 1 < |d| < 2
    return {far(t + 1), near(t), near(1 - t), far(2 - t)};
}

// Antialiased taps (ONNX reference): for a source coordinate with fractional part `ratio` (1 when
// it is whole, so the left neighbour leads), taps i = start .. 1 - start at the input indices
// (src - ratio) + i, weighted by the filter at scale * (i - ratio): the triangle 1 - |t| (linear)
// or Keys' cubic with coefficient a; the weights sum to 1. scale < 1 (downsampling).
struct AntialiasTaps {
    long long first = 0;          ///< input index of the first tap
    std::vector<double> weight;  ///< not yet normalized
};
AntialiasTaps AntialiasWeights(bool cubic, double src, double scale, double a) {
    const double lo = std::floor(src);
    const double ratio = src == lo ? 1.0 : src - lo;
    const long long start = static_cast<long long>(std::floor((cubic ? -2.0 : -1.0) / scale)) + 1;
    const long long count = 2 - 2 * start;
    AntialiasTaps t;
    t.first = static_cast<long long>(src - ratio) + start;
    for (long long i = start; i < start + count; ++i) {
        const double v = std::fabs(scale * (static_cast<double>(i) - ratio));
        double w;
        if (!cubic) w = std::clamp(1.0 - v, 0.0, 1.0);
        else if (v <= 1.0) w = ((a + 2) * v - (a + 3)) * v * v + 1;
        else if (v < 2.0) w = ((a * v - 5 * a) * v + 8 * a) * v - 4 * a;
        else w = 0.0;
        t.weight.push_back(w);
    }
    return t;
}

class ResizeWorkload final : public IWorkload {
public:
    explicit ResizeWorkload(kernels::ResizeParams p) : m_P(std::move(p)) {}
    std::size_t GetScratchBytes() const override { return kernels::ResizeWorkspaceBytes(m_P); }
    void Execute(const WorkloadIo& io) const override {
        kernels::Resize(m_P, io.m_Inputs[0]->Map(), io.m_Outputs[0]->Map(), io.m_Scratch);
    }
private:
    const kernels::ResizeParams m_P;
};

}  // namespace

bool ResizeRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    const auto& d = layer.Get<ResizeDescriptor>();
    const TensorInfo& x = info.m_InputTensorInfos[0];
    if (info.m_InputTensorInfos.size() != 1) {
        return math::Refuse(reason, "Resize: roi/scales/sizes must be folded into the descriptor (got " +
                                        std::to_string(info.m_InputTensorInfos.size()) + " inputs)");
    }
    if (!d.m_Axes.empty() || d.m_KeepAspectRatioPolicy != KeepAspectRatioPolicy::Stretch ||
        d.m_Scales.size() != x.GetNumDimensions() || (!d.m_Sizes.empty() && d.m_Sizes.size() != x.GetNumDimensions())) {
        return math::Refuse(reason, "Resize: descriptor is not resolved (m_Scales needs one entry per dim)");
    }
    if (d.m_Mode != ResizeMode::Nearest) {
        if (x.GetDataType() != DataType::Float32) {
            return math::Refuse(reason, std::string("Resize: ") + (d.m_Mode == ResizeMode::Linear ? "linear" : "cubic") +
                                            " mode on data type " + GetDataTypeName(x.GetDataType()) +
                                            " not supported by CpuRef (Float32 only; nearest takes any type)");
        }
        if (d.m_CoordinateTransform == CoordinateTransform::TfHalfPixelForNearest) {
            return math::Refuse(reason,
                                "Resize: coordinate transform tf_half_pixel_for_nn is defined for nearest "
                                "mode only, not linear or cubic");
        }
    }
    if (d.m_CoordinateTransform == CoordinateTransform::TfCropAndResize) {
        if (!d.m_Roi.empty() && d.m_Roi.size() != 2 * static_cast<std::size_t>(x.GetNumDimensions())) {
            return math::Refuse(reason, "Resize: roi has " + std::to_string(d.m_Roi.size()) + " values; " +
                                            "tf_crop_and_resize needs 2 per dim of X " + x.GetShape().ToString());
        }
        if (!IsPlainConvertibleType(x.GetDataType())) {
            return math::Refuse(reason, std::string("Resize: tf_crop_and_resize on data type ") +
                                            GetDataTypeName(x.GetDataType()) +
                                            " not supported by CpuRef (extrapolation_value cannot be written in it)");
        }
    }
    return true;
}

kernels::ResizeParams ResizeRefParams(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const auto& d = layer.Get<ResizeDescriptor>();
    const TensorShape& xs = info.m_InputTensorInfos[0].GetShape();
    const TensorShape& ys = info.m_OutputTensorInfos[0].GetShape();
    const DataType type = info.m_InputTensorInfos[0].GetDataType();
    kernels::ResizeParams p;
    p.nearest = d.m_Mode == ResizeMode::Nearest;
    p.extrapolation = d.m_ExtrapolationValue;
    p.elementSize = GetDataTypeSize(type);
    p.extrapolationBytes.assign(p.elementSize, 0);
    if (p.nearest && IsPlainConvertibleType(type)) EncodeScalar(type, d.m_ExtrapolationValue, p.extrapolationBytes.data());
    p.out.assign(ys.GetDims().begin(), ys.GetDims().end());
    p.outCount = ys.GetNumElements();
    const unsigned int rank = xs.GetNumDimensions();
    const std::vector<std::size_t> strides = math::Strides(xs);
    const bool crop = d.m_CoordinateTransform == CoordinateTransform::TfCropAndResize;
    for (unsigned int i = 0; i < rank; ++i) {
        const double in = xs[i];
        const bool bySizes = !d.m_Sizes.empty();
        const double scale = bySizes ? static_cast<double>(ys[i]) / in : static_cast<double>(d.m_Scales[i]);
        // With tf_crop_and_resize the output spans the region, so its true length is the output's.
        const double lengthResized = bySizes || crop ? static_cast<double>(ys[i]) : scale * in;
        const double roiStart = d.m_Roi.empty() ? 0.0 : d.m_Roi[i];
        const double roiEnd = d.m_Roi.empty() ? 1.0 : d.m_Roi[rank + i];
        const long long last = static_cast<long long>(xs[i]) - 1;
        auto at = [&](long long k) { return static_cast<std::size_t>(std::clamp(k, 0LL, last)) * strides[i]; };
        kernels::ResizeDimTable t;
        t.taps = d.m_Mode == ResizeMode::Nearest ? 1 : d.m_Mode == ResizeMode::Linear ? 2 : 4;
        const bool antialias = d.m_Antialias && d.m_Mode != ResizeMode::Nearest && scale < 1.0;
        if (antialias) t.taps = AntialiasWeights(d.m_Mode == ResizeMode::Cubic, 0.5, scale, d.m_CubicCoeffA).weight.size();
        for (unsigned int o = 0; o < ys[i]; ++o) {
            const double src =
                SourceCoordinate(d.m_CoordinateTransform, o, scale, lengthResized, in, ys[i], roiStart, roiEnd);
            const bool outside = crop && !(src >= 0.0 && src <= in - 1);
            t.outside.push_back(outside ? 1 : 0);
            if (outside) {  // extrapolation_value: no taps are read
                t.offset.insert(t.offset.end(), t.taps, 0);
                t.weight.insert(t.weight.end(), t.taps, 0.0);
                continue;
            }
            const double lo = std::floor(src);
            const long long l = static_cast<long long>(lo);
            if (antialias) {
                AntialiasTaps a = AntialiasWeights(d.m_Mode == ResizeMode::Cubic, src, scale, d.m_CubicCoeffA);
                double sum = 0.0;
                for (std::size_t k = 0; k < a.weight.size(); ++k) {
                    const long long at_k = a.first + static_cast<long long>(k);
                    if (d.m_ExcludeOutside && (at_k < 0 || at_k > last)) a.weight[k] = 0.0;
                    sum += a.weight[k];
                }
                for (std::size_t k = 0; k < a.weight.size(); ++k) {
                    t.offset.push_back(at(a.first + static_cast<long long>(k)));
                    t.weight.push_back(sum != 0.0 ? a.weight[k] / sum : 0.0);
                }
            } else if (d.m_Mode == ResizeMode::Nearest) {
                t.offset.push_back(at(RoundNearest(d.m_NearestMode, src)));
                t.weight.push_back(1.0);
            } else if (d.m_Mode == ResizeMode::Linear) {
                t.offset.insert(t.offset.end(), {at(l), at(l + 1)});
                t.weight.insert(t.weight.end(), {1.0 - (src - lo), src - lo});
            } else {
                std::array<double, 4> w = CubicWeights(src - lo, d.m_CubicCoeffA);
                if (d.m_ExcludeOutside) {
                    double sum = 0.0;
                    for (int k = 0; k < 4; ++k) {
                        if (l - 1 + k < 0 || l - 1 + k > last) w[k] = 0.0;
                        sum += w[k];
                    }
                    for (double& v : w) v /= sum;
                }
                for (int k = 0; k < 4; ++k) {
                    t.offset.push_back(at(l - 1 + k));
                    t.weight.push_back(w[k]);
                }
            }
        }
        p.tables.push_back(std::move(t));
    }
    return p;
}

IWorkloadPtr ResizeRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<ResizeWorkload>(ResizeRefParams(layer, info));
}

}  // namespace trellis::ref
