// Kernel snippet: ConvolutionTranspose - N-d with groups, strides, dilations, pads and output
// padding (folded into the output shape), float. For image n and group g:
//   col [Mg * prod(K), prod(I)] = W_g^T x X_g     (the shared GEMM, Gemm.hpp)
//   Y_g = bias + col2im(col)                      (each col row scattered onto its output channel)
// The geometry is Convolution's (ConvParams, `direct` unused).
#pragma once

#include "Convolution.hpp"
#include "Gemm.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace trellis::kernels {

inline std::size_t ConvTransposeColRows(const ConvParams& p) { return p.outChannels / p.groups * p.kernelVolume; }

/// The workspace: the col matrix and col2im's odometers.
inline std::size_t ConvTransposeWorkspaceBytes(const ConvParams& p) {
    return (ConvTransposeColRows(p) * p.inPlane * sizeof(float) + 7) / 8 * 8 + 2 * p.in.size() * sizeof(int64_t);
}

/// Scatters col row (m, k) onto output channel m: input position i lands on
/// o = i * stride - pad_begin + k * dilation when o is inside Y. Input positions run as an
/// odometer over all but the last spatial dim; the last dim is the inner loop.
inline void ConvTransposeCol2Im(const ConvParams& p, const float* col, std::size_t channels, float* y, int64_t* counters) {
    const std::size_t nsp = p.in.size();
    int64_t* kidx = counters;
    int64_t* iidx = counters + nsp;
    const int64_t inLast = p.in[nsp - 1], outLast = p.out[nsp - 1], strideLast = p.strides[nsp - 1];
    const std::size_t outerCount = inLast == 0 ? 0 : p.inPlane / static_cast<std::size_t>(inLast);
    const float* src = col;
    for (std::size_t m = 0; m < channels; ++m) {
        float* plane = y + m * p.outPlane;
        std::fill_n(kidx, nsp, 0);
        for (std::size_t kf = 0; kf < p.kernelVolume; ++kf) {
            std::fill_n(iidx, nsp, 0);
            const int64_t offLast = kidx[nsp - 1] * p.dilations[nsp - 1] - p.padsBegin[nsp - 1];
            for (std::size_t outer = 0; outer < outerCount; ++outer) {
                bool inside = true;
                int64_t base = 0;
                for (std::size_t d = 0; d + 1 < nsp; ++d) {
                    const int64_t o = iidx[d] * p.strides[d] + kidx[d] * p.dilations[d] - p.padsBegin[d];
                    if (o < 0 || o >= p.out[d]) {
                        inside = false;
                        break;
                    }
                    base = base * p.out[d] + o;
                }
                if (inside) {
                    float* row = plane + base * outLast;
                    for (int64_t i = 0; i < inLast; ++i) {
                        const int64_t o = i * strideLast + offLast;
                        if (o >= 0 && o < outLast) row[o] += src[i];
                    }
                }
                src += inLast;
                for (std::size_t d = nsp - 1; d-- > 0;) {
                    if (++iidx[d] < p.in[d]) break;
                    iidx[d] = 0;
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
inline void ConvTranspose(const ConvParams& p, const float* x, const float* w, const float* bias, float* y, void* workspace) {
    const std::size_t rows = ConvTransposeColRows(p);
    float* col = static_cast<float*>(workspace);
    int64_t* counters =
        reinterpret_cast<int64_t*>(static_cast<unsigned char*>(workspace) + (rows * p.inPlane * sizeof(float) + 7) / 8 * 8);
    const std::size_t cg = p.inChannels / p.groups, mg = p.outChannels / p.groups;
    for (std::size_t n = 0; n < p.batch; ++n) {
        for (std::size_t g = 0; g < p.groups; ++g) {
            const float* xg = x + (n * p.inChannels + g * cg) * p.inPlane;
            const float* wg = w + g * cg * rows;
            float* yg = y + (n * p.outChannels + g * mg) * p.outPlane;
            std::fill_n(col, rows * p.inPlane, 0.0f);
            // col = W_g^T x X_g: A(i, q) = W_g[q][i], i.e. row stride 1 and column stride `rows`.
            GemmAccumulate(rows, p.inPlane, cg, 1.0f, wg, 1, rows, xg, p.inPlane, col, p.inPlane);
            for (std::size_t m = 0; m < mg; ++m) std::fill_n(yg + m * p.outPlane, p.outPlane, bias ? bias[g * mg + m] : 0.0f);
            ConvTransposeCol2Im(p, col, mg, yg, counters);
        }
    }
}

}  // namespace trellis::kernels
