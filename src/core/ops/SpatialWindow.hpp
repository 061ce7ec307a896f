// Shared by the inference of Convolution, ConvolutionTranspose and Pooling: the ONNX rules for
// the per-spatial-dim window attributes (kernel, strides, dilations, pads, auto_pad).
//
// Every helper fails through the InferContext (LayerValidationException naming the layer) and is
// idempotent: running it again on a descriptor it already resolved changes nothing, because the
// optimizer may infer a layer more than once.
#pragma once

#include "core/InferContext.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace trellis::core::spatial {

inline std::string DimsToString(const std::vector<unsigned int>& v) {
    std::string s = "[";
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (i) s += ',';
        s += std::to_string(v[i]);
    }
    return s + "]";
}

/// Fills an empty `values` with `count` copies of `fallback`; fails unless it then has exactly
/// `count` entries (one per spatial dim) and, when `positive`, every entry is at least 1.
inline void ResolvePerDim(const InferContext& ctx, std::vector<unsigned int>& values, std::size_t count,
                          unsigned int fallback, const char* what, bool positive) {
    if (values.empty()) values.assign(count, fallback);
    if (values.size() != count) {
        ctx.Fail(std::string(what) + " " + DimsToString(values) + " has " + std::to_string(values.size()) +
                 " entries but the input has " + std::to_string(count) + " spatial dims");
    }
    if (positive) {
        for (std::size_t i = 0; i < count; ++i) {
            if (values[i] == 0) ctx.Fail(std::string(what) + " " + DimsToString(values) + " must all be >= 1");
        }
    }
}

/// Extent of a dilated kernel: (k - 1) * d + 1.
inline unsigned int EffectiveKernel(unsigned int k, unsigned int d) { return (k - 1) * d + 1; }

/// Turns SAME_UPPER/SAME_LOWER/VALID into explicit pads for a forward window op (Conv, Pooling)
/// and sets `mode` to Explicit. SAME: output = ceil(in / stride), total padding
/// max(0, (out - 1) * stride + effective kernel - in), the odd element at the end (UPPER) or at
/// the beginning (LOWER). Explicit mode just defaults the pads to 0.
inline void ResolveForwardPads(const InferContext& ctx, PaddingMode& mode, const std::vector<unsigned int>& in,
                               const std::vector<unsigned int>& kernel, const std::vector<unsigned int>& strides,
                               const std::vector<unsigned int>& dilations, std::vector<unsigned int>& padsBegin,
                               std::vector<unsigned int>& padsEnd) {
    const std::size_t n = in.size();
    if (mode != PaddingMode::Explicit) {
        auto nonZero = [](const std::vector<unsigned int>& v) {
            return std::any_of(v.begin(), v.end(), [](unsigned int p) { return p != 0; });
        };
        if (nonZero(padsBegin) || nonZero(padsEnd)) {
            ctx.Fail("explicit pads " + DimsToString(padsBegin) + "/" + DimsToString(padsEnd) +
                     " cannot be combined with auto_pad (ONNX: they are mutually exclusive)");
        }
        padsBegin.assign(n, 0);
        padsEnd.assign(n, 0);
        if (mode != PaddingMode::Valid) {
            for (std::size_t i = 0; i < n; ++i) {
                const long long out = (static_cast<long long>(in[i]) + strides[i] - 1) / strides[i];
                const long long total =
                    std::max<long long>(0, (out - 1) * strides[i] + EffectiveKernel(kernel[i], dilations[i]) -
                                               static_cast<long long>(in[i]));
                const unsigned int small = static_cast<unsigned int>(total / 2);
                const unsigned int large = static_cast<unsigned int>(total - total / 2);
                padsBegin[i] = mode == PaddingMode::SameUpper ? small : large;
                padsEnd[i] = mode == PaddingMode::SameUpper ? large : small;
            }
        }
        mode = PaddingMode::Explicit;
    }
    ResolvePerDim(ctx, padsBegin, n, 0, "pads (begin)", false);
    ResolvePerDim(ctx, padsEnd, n, 0, "pads (end)", false);
}

/// Output length of a forward window op along spatial dim `dim`:
/// floor-or-ceil((in + pb + pe - effective kernel) / stride) + 1. With ceil_mode the last window
/// must start inside the input or the left padding (the ONNX/PyTorch rule), else it is dropped.
/// Fails when the dilated kernel is larger than the padded input.
inline unsigned int ForwardOutputSize(const InferContext& ctx, unsigned int dim, unsigned int in, unsigned int k,
                                      unsigned int stride, unsigned int dilation, unsigned int pb, unsigned int pe,
                                      bool ceilMode) {
    const long long padded = static_cast<long long>(in) + pb + pe;
    const long long eff = EffectiveKernel(k, dilation);
    if (eff > padded) {
        ctx.Fail("spatial dim " + std::to_string(dim) + ": kernel " + std::to_string(k) + " with dilation " +
                 std::to_string(dilation) + " spans " + std::to_string(eff) +
                 " elements, more than the padded input (" + std::to_string(in) + " + pads " + std::to_string(pb) +
                 "+" + std::to_string(pe) + " = " + std::to_string(padded) + ")");
    }
    const long long span = padded - eff;
    long long out = (ceilMode ? (span + stride - 1) / stride : span / stride) + 1;
    if (ceilMode && (out - 1) * stride >= static_cast<long long>(in) + pb) --out;
    return static_cast<unsigned int>(out);
}

}  // namespace trellis::core::spatial
