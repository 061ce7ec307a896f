// Resize (ONNX Resize, opset 11+ input layout X, roi, scales, sizes): validation and shape
// inference.
//
// Exactly one of scales (input 2, or m_Scales) and sizes (input 3, or m_Sizes) gives the output:
//  - scales: output dim = floor(input dim * scale), times the roi's extent (end - start) with
//    tf_crop_and_resize, as the ONNX spec defines it; m_Sizes is left empty.
//  - sizes:  output dim = size; m_Sizes keeps the sizes and m_Scales gets size / input dim.
// A backend tells the two apart by m_Sizes being empty or not: with sizes, the coordinate
// transform uses the exact ratio output / input (as the ONNX reference does). roi (input 1) only
// matters for tf_crop_and_resize: it is read into m_Roi then, and dropped otherwise.
// Resize-18's m_Axes and m_KeepAspectRatioPolicy are applied once the values are known (they may
// come from graph inputs, read when the network is specialized for a run): scales, sizes and roi
// name the axes only and are widened to every dim (scale 1, the input dim, the whole range), and
// not_larger / not_smaller scale every named axis by the smallest / largest of size / dim,
// rounding size = scale * dim half up. Then m_Axes is emptied and the policy is Stretch.
#include "core/InferContext.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace trellis::core {

namespace {

std::string ListText(const std::vector<int64_t>& v) {
    std::string s = "[";
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
    return s + "]";
}

void ApplyAxesAndPolicy(InferContext& ctx, ResizeDescriptor& d, const TensorShape& xs) {
    const int64_t rank = xs.GetNumDimensions();
    std::vector<int64_t> axes;
    if (!d.m_Axes.empty()) {
        for (int64_t a : d.m_Axes) {
            if (a < -rank || a >= rank) ctx.Fail("axes=" + ListText(d.m_Axes) + " names a dim outside X's rank " + std::to_string(rank));
            const int64_t n = a < 0 ? a + rank : a;
            if (std::find(axes.begin(), axes.end(), n) != axes.end()) ctx.Fail("axes=" + ListText(d.m_Axes) + " names a dim twice");
            axes.push_back(n);
        }
    } else {
        for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
    }
    const std::size_t given = axes.size();
    const std::size_t r = static_cast<std::size_t>(rank);
    if (!d.m_Scales.empty() && d.m_Sizes.empty()) {
        if (d.m_Scales.size() != given) {
            ctx.Fail("scales has " + std::to_string(d.m_Scales.size()) + " entries for axes " + ListText(axes));
        }
        std::vector<float> full(r, 1.0f);
        for (std::size_t i = 0; i < given; ++i) full[static_cast<std::size_t>(axes[i])] = d.m_Scales[i];
        d.m_Scales = full;
    }
    if (!d.m_Sizes.empty()) {
        if (d.m_Sizes.size() != given) {
            ctx.Fail("sizes has " + std::to_string(d.m_Sizes.size()) + " entries for axes " + ListText(axes));
        }
        std::vector<int64_t> full(xs.GetDims().begin(), xs.GetDims().end());
        for (std::size_t i = 0; i < given; ++i) full[static_cast<std::size_t>(axes[i])] = d.m_Sizes[i];
        if (d.m_KeepAspectRatioPolicy != KeepAspectRatioPolicy::Stretch) {
            const bool notLarger = d.m_KeepAspectRatioPolicy == KeepAspectRatioPolicy::NotLarger;
            double s = notLarger ? std::numeric_limits<double>::infinity() : 0.0;
            for (int64_t a : axes) {
                const double dim = xs[static_cast<unsigned int>(a)];
                if (dim == 0) ctx.Fail("keep_aspect_ratio_policy cannot scale the empty dim " + std::to_string(a) + " of X " + xs.ToString());
                const double q = static_cast<double>(full[static_cast<std::size_t>(a)]) / dim;
                s = notLarger ? std::min(s, q) : std::max(s, q);
            }
            for (int64_t a : axes) {
                full[static_cast<std::size_t>(a)] = static_cast<int64_t>(s * xs[static_cast<unsigned int>(a)] + 0.5);
            }
        }
        d.m_Sizes = full;
    } else if (d.m_KeepAspectRatioPolicy != KeepAspectRatioPolicy::Stretch) {
        ctx.Fail("keep_aspect_ratio_policy other than stretch needs sizes (input 3)");
    }
    if (!d.m_Roi.empty()) {
        if (d.m_Roi.size() != 2 * given) ctx.Fail("roi has " + std::to_string(d.m_Roi.size()) + " entries for axes " + ListText(axes));
        std::vector<float> full(2 * r, 0.0f);
        for (std::size_t a = 0; a < r; ++a) full[r + a] = 1.0f;
        for (std::size_t i = 0; i < given; ++i) {
            full[static_cast<std::size_t>(axes[i])] = d.m_Roi[i];
            full[r + static_cast<std::size_t>(axes[i])] = d.m_Roi[given + i];
        }
        d.m_Roi = full;
    }
    d.m_Axes.clear();
    d.m_KeepAspectRatioPolicy = KeepAspectRatioPolicy::Stretch;
}

}  // namespace

std::vector<TensorInfo> ResizeInfer(InferContext& ctx) {
    auto& d = ctx.Desc<ResizeDescriptor>();
    const TensorInfo& x = ctx.Input(0);
    const TensorShape& xs = x.GetShape();
    const unsigned int rank = x.GetNumDimensions();
    if (x.GetDataType() == DataType::Boolean) ctx.Fail("input X must be numeric, got Boolean");

    if (ctx.HasInput(2) && ctx.HasInput(3)) {
        ctx.Fail("scales (input 2) and sizes (input 3) are both given; ONNX allows one");
    }
    if (ctx.HasInput(3)) {
        d.m_Sizes = ctx.GetParamInts(3, "sizes");
    } else if (ctx.HasInput(2)) {
        d.m_Sizes.clear();
        d.m_Scales.clear();
        for (double s : ctx.GetParamDoubles(2, "scales")) d.m_Scales.push_back(static_cast<float>(s));
    }
    const bool crop = d.m_CoordinateTransform == CoordinateTransform::TfCropAndResize;
    if (crop && ctx.HasInput(1)) {
        d.m_Roi.clear();
        for (double v : ctx.GetParamDoubles(1, "roi")) d.m_Roi.push_back(static_cast<float>(v));
    }
    for (unsigned int i = 1; i < ctx.GetNumInputs(); ++i) ctx.AbsorbInput(i);
    if (!d.m_Axes.empty() || d.m_KeepAspectRatioPolicy != KeepAspectRatioPolicy::Stretch) ApplyAxesAndPolicy(ctx, d, xs);
    if (crop && !d.m_Roi.empty() && d.m_Roi.size() != 2 * static_cast<std::size_t>(rank)) {
        ctx.Fail("roi has " + std::to_string(d.m_Roi.size()) + " values but X " + xs.ToString() + " has rank " +
                 std::to_string(rank) + "; tf_crop_and_resize needs a start and an end per dim");
    }
    if (!crop) d.m_Roi.clear();
    for (float v : d.m_Roi) {
        if (!std::isfinite(v)) ctx.Fail("roi holds " + std::to_string(v) + "; every roi value must be finite");
    }
    if (d.m_Mode == ResizeMode::Cubic && !std::isfinite(d.m_CubicCoeffA)) {
        ctx.Fail("cubic_coeff_a=" + std::to_string(d.m_CubicCoeffA) + " must be finite");
    }

    std::vector<unsigned int> out(rank);
    if (!d.m_Sizes.empty()) {
        if (d.m_Sizes.size() != rank) {
            ctx.Fail("sizes has " + std::to_string(d.m_Sizes.size()) + " entries but X " + xs.ToString() +
                     " has rank " + std::to_string(rank));
        }
        d.m_Scales.assign(rank, 1.0f);
        for (unsigned int i = 0; i < rank; ++i) {
            const int64_t s = d.m_Sizes[i];
            if (s < 0 || s > static_cast<int64_t>(UINT32_MAX)) {
                ctx.Fail("sizes[" + std::to_string(i) + "]=" + std::to_string(s) + " is out of range");
            }
            if (xs[i] == 0 && s != 0) {
                ctx.Fail("dim " + std::to_string(i) + " of X " + xs.ToString() + " is empty and cannot be resized to " +
                         std::to_string(s));
            }
            out[i] = static_cast<unsigned int>(s);
            if (xs[i] != 0) d.m_Scales[i] = static_cast<float>(static_cast<double>(s) / xs[i]);
        }
    } else {
        if (d.m_Scales.empty()) ctx.Fail("needs scales (input 2) or sizes (input 3)");
        if (d.m_Scales.size() != rank) {
            ctx.Fail("scales has " + std::to_string(d.m_Scales.size()) + " entries but X " + xs.ToString() +
                     " has rank " + std::to_string(rank));
        }
        for (unsigned int i = 0; i < rank; ++i) {
            const float s = d.m_Scales[i];
            if (!(s > 0.0f) || !std::isfinite(s)) {
                ctx.Fail("scales[" + std::to_string(i) + "]=" + std::to_string(s) + " must be positive and finite");
            }
            const double extent = d.m_Roi.empty() ? 1.0 : static_cast<double>(d.m_Roi[rank + i]) - d.m_Roi[i];
            const double o = std::floor(static_cast<double>(s) * xs[i] * extent);
            if (!(o >= 0.0)) {
                ctx.Fail("roi [" + std::to_string(d.m_Roi[i]) + ", " + std::to_string(d.m_Roi[rank + i]) +
                         "] of dim " + std::to_string(i) + " gives a negative output size; the end must not be before the start");
            }
            if (o > static_cast<double>(UINT32_MAX)) {
                ctx.Fail("scales[" + std::to_string(i) + "] makes dim " + std::to_string(i) + " too large");
            }
            out[i] = static_cast<unsigned int>(o);
        }
    }
    return {TensorInfo(TensorShape(out), x.GetDataType(), x.GetQuantizationScale(), x.GetQuantizationOffset())};
}

}  // namespace trellis::core
