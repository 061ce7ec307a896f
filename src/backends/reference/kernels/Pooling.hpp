// Kernel snippet: Pooling - N-d max and average pooling (global too) with strides, dilations,
// asymmetric pads, ceil_mode (folded into the output shape) and count_include_pad.
//
// The window is a Cartesian product of per-dim taps, so the tables are per dim: for output index o,
// the range of taps inside the input, and how many taps lie inside the padded input
// [-pad_begin, in + pad_end). Average divides by the product of the latter (count_include_pad) or
// of the former, as ONNX Runtime and PyTorch do; a ceil_mode window that overhangs the end padding
// therefore counts only its taps inside the padded input. Only ranges are stored (O(outputs)
// memory): a table of every tap's offset took outputs x kernel entries (a fuzzed 1-d MaxPool of
// 220000 inputs and a kernel of 4232 asked for 3.7 GB).
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

/// One spatial dim's windows: output index o's taps j in [first[o], last[o]) lie inside the input,
/// at positions start[o] + j * dilation.
struct PoolDimTaps {
    std::vector<long long> start;          ///< per output index: position of tap 0
    std::vector<long long> first, last;    ///< per output index: the taps inside the input
    std::vector<std::size_t> paddedCount;  ///< per output index: taps inside the padded input
    long long dilation = 1;
    std::size_t stride = 0;                ///< input elements between two positions of this dim
    template <typename F> void Fields(F&& f) const { f(start); f(first); f(last); f(paddedCount); f(dilation); f(stride); }
};

/// The taps j in [0, k) at positions base + j * dilation lying in [lo, hi), as the range [first,
/// last) of j: computed, not counted tap by tap, so a kernel far wider than its input (a fuzzed
/// kernel_shape of 56623103 took 25 s to build its tables) costs nothing extra.
inline void PoolingTapsIn(long long base, long long dilation, long long k, long long lo, long long hi, long long& first,
                          long long& last) {
    const auto ceilDiv = [](long long a, long long b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); };
    first = std::clamp(ceilDiv(lo - base, dilation), 0LL, k);
    last = std::max(first, std::clamp(ceilDiv(hi - base, dilation), 0LL, k));
}

/// One dim of one window (the kernel's workspace holds one per spatial dim).
struct PoolingWindow {
    long long start = 0, first = 0, last = 0, dilation = 1;
    std::size_t stride = 0;
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
    return p.out.size() * (sizeof(PoolingWindow) + sizeof(std::size_t));
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

/// Calls f(offset) for every tap of the window inside the input: the sums of one offset per dim.
template <typename F>
void ForEachPoolingTap(const PoolingWindow* window, std::size_t dims, std::size_t d, std::size_t base, F&& f) {
    if (d == dims) {
        f(base);
        return;
    }
    const PoolingWindow& w = window[d];
    for (long long j = w.first; j < w.last; ++j) {
        ForEachPoolingTap(window, dims, d + 1, base + static_cast<std::size_t>(w.start + j * w.dilation) * w.stride, f);
    }
}

/// `indices` (max pooling's output 1) may be null.
template <typename T>
void Pooling(const PoolingParams& p, const T* x, T* y, int64_t* indices, void* workspace) {
    const std::size_t nsp = p.out.size();
    // The windows first: PoolingWindow's alignment is at least std::size_t's.
    auto* window = static_cast<PoolingWindow*>(workspace);
    auto* oidx = reinterpret_cast<std::size_t*>(window + nsp);
    for (std::size_t pl = 0; pl < p.planes; ++pl) {
        const T* xp = x + pl * p.inPlane;
        T* yp = y + pl * p.outPlane;
        std::fill(oidx, oidx + nsp, std::size_t{0});
        for (std::size_t o = 0; o < p.outPlane; ++o) {
            std::size_t padded = 1, inside = 1;
            for (std::size_t d = 0; d < nsp; ++d) {
                const PoolDimTaps& taps = p.taps[d];
                window[d] = PoolingWindow{taps.start[oidx[d]], taps.first[oidx[d]], taps.last[oidx[d]], taps.dilation,
                                          taps.stride};
                inside *= static_cast<std::size_t>(window[d].last - window[d].first);
                padded *= taps.paddedCount[oidx[d]];
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
