// Kernel snippet: Gemm, Y [M, N] = alpha * op(A) * op(B) + beta * C, C broadcast to [M, N] (scalar,
// [N], [1, N], [M, 1], [M, N], ...) or absent.
//
// Y starts as beta * C (or 0), then the shared i-p-j GEMM (Gemm.hpp) accumulates
// alpha * op(A) * op(B). A transposed A is read through swapped strides; a transposed B is first
// packed row-major into the workspace so the GEMM's inner loop stays contiguous.
#pragma once

#include "Gemm.hpp"

#include <algorithm>
#include <cstddef>

namespace trellis::kernels {

struct GemmParams {
    float alpha = 1.0f, beta = 1.0f;
    bool transA = false, transB = false;
    std::size_t m = 0, k = 0, n = 0;
    bool hasC = false;
    std::size_t cRowStride = 0, cColStride = 0;  ///< C's strides over Y's rows and columns (0: broadcast)
    template <typename F> void Fields(F&& f) const {
        f(alpha); f(beta); f(transA); f(transB); f(m); f(k); f(n); f(hasC); f(cRowStride); f(cColStride);
    }
};

inline std::size_t GemmWorkspaceBytes(const GemmParams& p) { return p.transB ? p.k * p.n * sizeof(float) : 0; }

/// `c` may be null (no C).
inline void Gemm(const GemmParams& p, const float* a, const float* b, const float* c, float* y, void* workspace) {
    if (p.hasC) {
        for (std::size_t i = 0; i < p.m; ++i) {
            for (std::size_t j = 0; j < p.n; ++j) y[i * p.n + j] = p.beta * c[i * p.cRowStride + j * p.cColStride];
        }
    } else {
        std::fill_n(y, p.m * p.n, 0.0f);
    }
    if (p.transB) {  // B is [N, K]: pack op(B) = B^T as [K, N]
        float* packed = static_cast<float*>(workspace);
        for (std::size_t j = 0; j < p.n; ++j) {
            for (std::size_t q = 0; q < p.k; ++q) packed[q * p.n + j] = b[j * p.k + q];
        }
        b = packed;
    }
    const std::size_t aRow = p.transA ? 1 : p.k, aCol = p.transA ? p.m : 1;
    GemmAccumulate(p.m, p.n, p.k, p.alpha, a, aRow, aCol, b, p.n, y, p.n);
}

}  // namespace trellis::kernels
