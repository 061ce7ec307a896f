// CpuAcc's own float32 GEMM against constant weights, for CPUs without AVX-512 (CpuAccKernels.hpp:
// PackGemmB, Gemm). Why own code: there oneDNN 2.6 runs matmuls on its GEMM-based kernel
// (gemm:jit), which packs the weights again on every call (oneDNN's packed-GEMM entry points are
// internal to it); on an AVX2 EPYC it reached about 60 GFLOP/s on BERT's and ViT's fully connected
// layers at one thread, against about 80 for the same kernel on a 2048x2048 product and ONNX
// Runtime's 69 with weights packed once, which left the BERT encoder 1.15-1.36x slower than ONNX
// Runtime there (docs/performance.md). Here the weights are packed once, at load, into panels of 16
// columns (k-major), and a 6x16 register tile (12 accumulators) runs over blocks of 256 k so
// that a panel stays in L1 while every row block of A passes over it. XNNPACK, the other library
// at hand, measured 1.3-2.5x slower than oneDNN on these shapes.
#include "CpuAccKernels.hpp"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <cstring>

namespace trellis::cpuacc {

namespace {

constexpr std::size_t kPanel = 16;  // columns per packed panel (two AVX2 vectors)
constexpr std::size_t kRows = 6;    // rows per register tile
constexpr std::size_t kDepth = 256; // k per block: a panel block is 16 KiB, in L1

std::size_t Panels(std::size_t n) { return (n + kPanel - 1) / kPanel; }

// One tile of R rows x 16 columns over k in [k0, k0 + kc): C (+)= A B. `first`: C starts from
// the bias (or 0) instead of its contents. `cols` valid columns (the last panel may be partial).
template <std::size_t R>
__attribute__((target("avx2,fma"))) inline void Tile(const float* a, std::size_t lda, const float* bp, std::size_t kc,
                                                     float* c, std::size_t ldc, const float* bias, bool first,
                                                     std::size_t cols) {
    __m256 acc[R][2];
#pragma GCC unroll 6
    for (std::size_t r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
    for (std::size_t k = 0; k < kc; ++k, bp += kPanel) {
        const __m256 b0 = _mm256_loadu_ps(bp), b1 = _mm256_loadu_ps(bp + 8);
#pragma GCC unroll 6
        for (std::size_t r = 0; r < R; ++r) {
            const __m256 x = _mm256_broadcast_ss(a + r * lda + k);
            acc[r][0] = _mm256_fmadd_ps(x, b0, acc[r][0]);
            acc[r][1] = _mm256_fmadd_ps(x, b1, acc[r][1]);
        }
    }
    if (cols == kPanel) {
        __m256 base0 = _mm256_setzero_ps(), base1 = _mm256_setzero_ps();
        if (first && bias) base0 = _mm256_loadu_ps(bias), base1 = _mm256_loadu_ps(bias + 8);
#pragma GCC unroll 6
        for (std::size_t r = 0; r < R; ++r) {
            float* row = c + r * ldc;
            const __m256 c0 = first ? base0 : _mm256_loadu_ps(row), c1 = first ? base1 : _mm256_loadu_ps(row + 8);
            _mm256_storeu_ps(row, _mm256_add_ps(c0, acc[r][0]));
            _mm256_storeu_ps(row + 8, _mm256_add_ps(c1, acc[r][1]));
        }
        return;
    }
    // A partial last panel: through a buffer, only the valid columns stored.
    alignas(32) float out[kPanel];
#pragma GCC unroll 6
    for (std::size_t r = 0; r < R; ++r) {
        float* row = c + r * ldc;
        _mm256_store_ps(out, acc[r][0]);
        _mm256_store_ps(out + 8, acc[r][1]);
        for (std::size_t j = 0; j < cols; ++j) row[j] = (first ? (bias ? bias[j] : 0.0f) : row[j]) + out[j];
    }
}

__attribute__((target("avx2,fma"))) void TileRows(std::size_t rows, const float* a, std::size_t lda, const float* bp,
                                                  std::size_t kc, float* c, std::size_t ldc, const float* bias,
                                                  bool first, std::size_t cols) {
    switch (rows) {
        case 6: Tile<6>(a, lda, bp, kc, c, ldc, bias, first, cols); return;
        case 5: Tile<5>(a, lda, bp, kc, c, ldc, bias, first, cols); return;
        case 4: Tile<4>(a, lda, bp, kc, c, ldc, bias, first, cols); return;
        case 3: Tile<3>(a, lda, bp, kc, c, ldc, bias, first, cols); return;
        case 2: Tile<2>(a, lda, bp, kc, c, ldc, bias, first, cols); return;
        default: Tile<1>(a, lda, bp, kc, c, ldc, bias, first, cols); return;
    }
}

}  // namespace

std::size_t PackedGemmWeightsSize(std::size_t k, std::size_t n) { return Panels(n) * kPanel * k; }

void PackGemmWeights(const float* b, std::size_t k, std::size_t n, bool transposed, float scale, float* packed) {
    // packed[panel][k][16] = scale * B[k][panel * 16 + j], 0 past the last column.
    for (std::size_t p = 0; p < Panels(n); ++p) {
        for (std::size_t kk = 0; kk < k; ++kk) {
            float* out = packed + (p * k + kk) * kPanel;
            for (std::size_t j = 0; j < kPanel; ++j) {
                const std::size_t col = p * kPanel + j;
                out[j] = col < n ? scale * (transposed ? b[col * k + kk] : b[kk * n + col]) : 0.0f;
            }
        }
    }
}

void GemmAvx2(const float* a, std::size_t lda, const float* packed, const float* bias, float* c, std::size_t ldc,
              std::size_t m, std::size_t k, std::size_t n) {
    const long long panels = static_cast<long long>(Panels(n));
    // Panels over the team; each thread takes all rows of its panels, k block by k block. Guided,
    // not static: on the 2-vCPU EPYC one core ran the same panels up to 35% slower than the other
    // (per-thread times inside the region), so an even split waited on it; guided hands out
    // shrinking chunks, and measured 8-15% more GFLOP/s at 2 threads on BERT's and ViT's layers
    // (mean of 30 interleaved runs per schedule).
#pragma omp parallel for schedule(guided) if (panels > 1 && m * k * n > 32768)
    for (long long p = 0; p < panels; ++p) {
        const std::size_t col = static_cast<std::size_t>(p) * kPanel, cols = std::min(kPanel, n - col);
        const float* panel = packed + static_cast<std::size_t>(p) * k * kPanel;
        const float* b = bias ? bias + col : nullptr;
        for (std::size_t k0 = 0; k0 < k || k0 == 0; k0 += kDepth) {
            const std::size_t kc = std::min(kDepth, k - k0);
            for (std::size_t r = 0; r < m; r += kRows) {
                TileRows(std::min(kRows, m - r), a + r * lda + k0, lda, panel + k0 * kPanel, kc, c + r * ldc + col, ldc,
                         b, k0 == 0, cols);
            }
            if (k == 0) break;
        }
    }
}

}  // namespace trellis::cpuacc
