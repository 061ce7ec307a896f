// Kernel snippet: Pooling - N-d max and average pooling (global too) with strides, dilations,
// asymmetric pads, ceil_mode (folded into the output shape) and count_include_pad.
//
// The window is a Cartesian product of per-dim taps, so the tables are per dim: for output index o,
// the input offsets of the taps inside the input, and how many taps lie inside the padded input
// [-pad_begin, in + pad_end). Average divides by the product of the latter (count_include_pad) or
// of the former, as ONNX Runtime and PyTorch do; a ceil_mode window that overhangs the end padding
// therefore counts only its taps inside the padded input.
//
// Max pooling's optional output 1 (ONNX Indices, int64) holds the flat offset of the first maximum
// of each window in the whole input: (n * C + c) * plane + the offset inside the plane, row major,
// or with the spatial dims' order reversed for storage_order 1 (ONNX's reference).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace trellis::kernels {

struct PoolDimTaps {
    std::vector<std::vector<std::size_t>> offsets;  ///< per output index: tap * input stride, inside taps only
    std::vector<std::size_t> paddedCount;           ///< per output index: taps inside the padded input
    template <typename F> void Fields(F&& f) const { f(offsets); f(paddedCount); }
};

struct PoolingParams {
    bool max = true;
    bool countIncludePad = false;
    bool columnMajor = false;        ///< indices in storage order 1
    std::vector<std::size_t> in;     ///< the input's spatial dims
    std::vector<std::size_t> out;    ///< the output's spatial dims
    std::size_t planes = 0, inPlane = 0, outPlane = 0;
    std::vector<PoolDimTaps> taps;   ///< per spatial dim
    template <typename F> void Fields(F&& f) const {
        f(max); f(countIncludePad); f(columnMajor); f(in); f(out); f(planes); f(inPlane); f(outPlane); f(taps);
    }
};

inline std::size_t PoolingWorkspaceBytes(const PoolingParams& p) {
    return p.out.size() * (sizeof(std::size_t) + sizeof(const std::vector<std::size_t>*));
}

/// A row-major offset inside one spatial plane, as ONNX reports it for the storage order.
inline std::size_t PoolingPlaneIndex(const PoolingParams& p, std::size_t rowMajor) {
    if (!p.columnMajor) return rowMajor;
    // coordinate d (the last dim varies fastest in rowMajor) weighted by the product of the dims
    // before it (the first dim varies fastest in column major)
    std::size_t index = 0;
    for (std::size_t d = p.in.size(); d-- > 0;) {
        const std::size_t coord = rowMajor % p.in[d];
        rowMajor /= p.in[d];
        std::size_t stride = 1;
        for (std::size_t e = 0; e < d; ++e) stride *= p.in[e];
        index += coord * stride;
    }
    return index;
}

/// Calls f(offset) for every tap of the window: the sums of one offset per dim.
template <typename F>
void ForEachPoolingTap(const std::vector<std::size_t>* const* window, std::size_t dims, std::size_t d, std::size_t base, F&& f) {
    if (d == dims) {
        f(base);
        return;
    }
    for (std::size_t off : *window[d]) ForEachPoolingTap(window, dims, d + 1, base + off, f);
}

/// `indices` (max pooling's output 1) may be null.
template <typename T>
void Pooling(const PoolingParams& p, const T* x, T* y, int64_t* indices, void* workspace) {
    const std::size_t nsp = p.out.size();
    auto* oidx = static_cast<std::size_t*>(workspace);
    auto** window = reinterpret_cast<const std::vector<std::size_t>**>(oidx + nsp);
    for (std::size_t pl = 0; pl < p.planes; ++pl) {
        const T* xp = x + pl * p.inPlane;
        T* yp = y + pl * p.outPlane;
        std::fill(oidx, oidx + nsp, std::size_t{0});
        for (std::size_t o = 0; o < p.outPlane; ++o) {
            std::size_t padded = 1, inside = 1;
            for (std::size_t d = 0; d < nsp; ++d) {
                window[d] = &p.taps[d].offsets[oidx[d]];
                inside *= window[d]->size();
                padded *= p.taps[d].paddedCount[oidx[d]];
            }
            if (p.max) {
                T v = std::numeric_limits<T>::lowest();
                std::size_t best = 0;
                ForEachPoolingTap(window, nsp, 0, 0, [&](std::size_t off) {
                    if (xp[off] > v) {
                        v = xp[off];
                        best = off;
                    }
                });
                yp[o] = v;
                if (indices) indices[pl * p.outPlane + o] = static_cast<int64_t>(pl * p.inPlane + PoolingPlaneIndex(p, best));
            } else {
                double sum = 0.0;
                ForEachPoolingTap(window, nsp, 0, 0, [&](std::size_t off) { sum += xp[off]; });
                yp[o] = static_cast<T>(sum / static_cast<double>(p.countIncludePad ? padded : inside));
            }
            for (std::size_t d = nsp; d-- > 0;) {
                if (++oidx[d] < p.out[d]) break;
                oidx[d] = 0;
            }
        }
    }
}

}  // namespace trellis::kernels
