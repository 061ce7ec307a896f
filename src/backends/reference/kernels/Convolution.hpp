// Kernel snippet: Convolution - N-d (1-D, 2-D, 3-D, ...) with groups, strides, dilations and
// asymmetric pads, as im2col + a plain GEMM (Gemm.hpp) per (image, group). T: float, or int32_t
// (wrapping; the accumulator of ONNX's integer convolutions).
//
// For image n and group g, with Cg = C / group input and Mg = M / group output channels:
//   col [Cg * prod(K), prod(O)]  (im2col of the group's input channels; zero where padded)
//   Y_g [Mg, prod(O)] = bias + W_g [Mg, Cg * prod(K)] x col
// A 1x1 kernel with stride 1 and no pads needs no im2col (`direct`): the input planes already are
// col.
#pragma once

#include "Gemm.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace trellis::kernels {

struct ConvParams {
    std::size_t batch = 0, inChannels = 0, outChannels = 0, groups = 1;
    bool hasBias = false;
    std::vector<int64_t> in, kernel, out, strides, dilations, padsBegin;  ///< per spatial dim
    std::size_t inPlane = 1, outPlane = 1, kernelVolume = 1;
    bool direct = false;
    template <typename F> void Fields(F&& f) const {
        f(batch); f(inChannels); f(outChannels); f(groups); f(hasBias); f(in); f(kernel); f(out); f(strides);
        f(dilations); f(padsBegin); f(inPlane); f(outPlane); f(kernelVolume); f(direct);
    }
    std::size_t ColRows() const { return inChannels / groups * kernelVolume; }
};

/// The workspace: im2col's matrix (unless direct) and its odometers.
template <typename T>
std::size_t ConvWorkspaceBytes(const ConvParams& p) {
    const std::size_t col = p.direct ? 0 : p.ColRows() * p.outPlane * sizeof(T);
    return (col + 7) / 8 * 8 + 2 * p.in.size() * sizeof(int64_t);
}

/// Row (c, k) of col holds, for every output position o, X[c][o * stride - pad_begin + k * dilation]
/// (0 outside the input). Output positions run as an odometer over all but the last spatial dim;
/// the last dim is the contiguous inner loop.
template <typename T>
void ConvIm2Col(const ConvParams& p, const T* x, std::size_t channels, T* col, int64_t* counters) {
    const std::size_t nsp = p.in.size();
    int64_t* kidx = counters;
    int64_t* oidx = counters + nsp;
    const int64_t inLast = p.in[nsp - 1], outLast = p.out[nsp - 1], strideLast = p.strides[nsp - 1];
    const std::size_t outerCount = p.outPlane / static_cast<std::size_t>(outLast);
    T* dst = col;
    for (std::size_t c = 0; c < channels; ++c) {
        const T* plane = x + c * p.inPlane;
        std::fill_n(kidx, nsp, 0);
        for (std::size_t kf = 0; kf < p.kernelVolume; ++kf) {
            std::fill_n(oidx, nsp, 0);
            const int64_t offLast = kidx[nsp - 1] * p.dilations[nsp - 1] - p.padsBegin[nsp - 1];
            for (std::size_t outer = 0; outer < outerCount; ++outer) {
                bool inside = true;
                int64_t base = 0;
                for (std::size_t d = 0; d + 1 < nsp; ++d) {
                    const int64_t i = oidx[d] * p.strides[d] + kidx[d] * p.dilations[d] - p.padsBegin[d];
                    if (i < 0 || i >= p.in[d]) {
                        inside = false;
                        break;
                    }
                    base = base * p.in[d] + i;
                }
                if (!inside) {
                    std::fill_n(dst, outLast, T(0));
                } else {
                    const T* row = plane + base * inLast;
                    for (int64_t o = 0; o < outLast; ++o) {
                        const int64_t i = o * strideLast + offLast;
                        dst[o] = (i >= 0 && i < inLast) ? row[i] : T(0);
                    }
                }
                dst += outLast;
                for (std::size_t d = nsp - 1; d-- > 0;) {
                    if (++oidx[d] < p.out[d]) break;
                    oidx[d] = 0;
                }
            }
            for (std::size_t d = nsp; d-- > 0;) {
                if (++kidx[d] < p.kernel[d]) break;
                kidx[d] = 0;
            }
        }
    }
}

/// `bias` may be null (no bias).
template <typename T>
void Conv(const ConvParams& p, const T* x, const T* w, const T* bias, T* y, void* workspace) {
    const std::size_t colBytes = p.direct ? 0 : (p.ColRows() * p.outPlane * sizeof(T) + 7) / 8 * 8;
    T* col = static_cast<T*>(workspace);
    int64_t* counters = reinterpret_cast<int64_t*>(static_cast<unsigned char*>(workspace) + colBytes);
    const std::size_t cg = p.inChannels / p.groups, mg = p.outChannels / p.groups;
    const std::size_t rows = p.ColRows();
    for (std::size_t n = 0; n < p.batch; ++n) {
        for (std::size_t g = 0; g < p.groups; ++g) {
            const T* xg = x + (n * p.inChannels + g * cg) * p.inPlane;
            T* yg = y + (n * p.outChannels + g * mg) * p.outPlane;
            for (std::size_t m = 0; m < mg; ++m) std::fill_n(yg + m * p.outPlane, p.outPlane, bias ? bias[g * mg + m] : T(0));
            const T* b = xg;
            if (!p.direct) {
                ConvIm2Col(p, xg, cg, col, counters);
                b = col;
            }
            GemmAccumulate<T>(mg, p.outPlane, rows, T(1), w + g * mg * rows, rows, 1, b, p.outPlane, yg, p.outPlane);
        }
    }
}

}  // namespace trellis::kernels
