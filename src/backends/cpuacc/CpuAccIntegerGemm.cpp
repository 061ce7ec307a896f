// CpuAcc's own exact integer GEMM for CPUs with AVX2 but neither VNNI nor AMX (CpuAccKernels.hpp:
// PackIntegerWeights, IntegerGemmAvx2): the products of a MatMulInteger after DynamicQuantizeLinear.
// Why own code: there oneDNN 2.6's int8 kernels multiply u8 x s8 with vpmaddubsw, which adds each
// pair of products in saturating 16 bits (so do ONNX Runtime's MLAS kernels); a pair such as
// 255 x 127 + 255 x 127 saturates, and that is not ONNX's result. CpuAcc declines them
// (OneDnnInt8IsExact), and the integer layers used to run on CpuRef's plain loops: seconds for a
// BERT encoder. Here both operands are widened to 16 bits first - A minus its zero point (within
// [-255, 255]) as it is packed per call, the constant weights once at load - and vpmaddwd adds
// each pair of 16-bit products into 32 bits, exactly; the k sums are exact in int32 while k stays
// below 65793 (255 x 128 x k < 2^31; callers check). Twice the multiply-adds of a float32 FMA per
// instruction, half the bytes of float32 weights; the result is float(sum) times the scale, as
// CpuRef's Cast and Mul compute it.
#include "CpuAccKernels.hpp"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace trellis::cpuacc {

namespace {

constexpr std::size_t kPanel = 16;  // columns per packed panel (two vectors of 8 int32 sums)
constexpr std::size_t kRows = 6;    // rows per register tile

std::size_t Panels(std::size_t n) { return (n + kPanel - 1) / kPanel; }
std::size_t Pairs(std::size_t k) { return (k + 1) / 2; }
std::size_t RowBlocks(std::size_t m) { return (m + kRows - 1) / kRows; }

/// One tile: R rows of packed A ([pair][6 rows][2]) times one packed panel ([pair][16 columns][2]),
/// k pairs in all; float(sum) * scale stored to C's `cols` valid columns.
template <int R>
__attribute__((target("avx2"))) void Tile(const int16_t* a, const int16_t* b, std::size_t pairs, const int32_t* bias,
                                          const float* scales, bool perColumn, float* c, std::size_t ldc, std::size_t cols) {
    // Named accumulators (an array of them made GCC keep some on the stack).
    __m256i c0a = _mm256_setzero_si256(), c0b = c0a, c1a = c0a, c1b = c0a, c2a = c0a, c2b = c0a;
    __m256i c3a = c0a, c3b = c0a, c4a = c0a, c4b = c0a, c5a = c0a, c5b = c0a;
// One row: its pair of 16-bit values broadcast, times both weight vectors, added to its sums.
#define TRELLIS_INTEGER_GEMM_ROW(lo, hi, pair)                                             \
    do {                                                                                   \
        int32_t v_;                                                                        \
        std::memcpy(&v_, (pair), sizeof(v_));                                              \
        const __m256i x_ = _mm256_set1_epi32(v_);                                          \
        (lo) = _mm256_add_epi32((lo), _mm256_madd_epi16(x_, b0));                          \
        (hi) = _mm256_add_epi32((hi), _mm256_madd_epi16(x_, b1));                          \
    } while (false)
    for (std::size_t p = 0; p < pairs; ++p) {
        const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + p * 2 * kPanel));
        const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + p * 2 * kPanel + 16));
        const int16_t* ap = a + p * 2 * kRows;
        TRELLIS_INTEGER_GEMM_ROW(c0a, c0b, ap);
        if constexpr (R > 1) TRELLIS_INTEGER_GEMM_ROW(c1a, c1b, ap + 2);
        if constexpr (R > 2) TRELLIS_INTEGER_GEMM_ROW(c2a, c2b, ap + 4);
        if constexpr (R > 3) TRELLIS_INTEGER_GEMM_ROW(c3a, c3b, ap + 6);
        if constexpr (R > 4) TRELLIS_INTEGER_GEMM_ROW(c4a, c4b, ap + 8);
        if constexpr (R > 5) TRELLIS_INTEGER_GEMM_ROW(c5a, c5b, ap + 10);
    }
#undef TRELLIS_INTEGER_GEMM_ROW
    const __m256 s0 = perColumn ? _mm256_loadu_ps(scales) : _mm256_set1_ps(scales[0]);
    const __m256 s1 = perColumn ? _mm256_loadu_ps(scales + 8) : s0;
    const __m256i bias0 = bias ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bias)) : _mm256_setzero_si256();
    const __m256i bias1 = bias ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bias + 8)) : _mm256_setzero_si256();
    const __m256i sums[6][2] = {{c0a, c0b}, {c1a, c1b}, {c2a, c2b}, {c3a, c3b}, {c4a, c4b}, {c5a, c5b}};
    for (int r = 0; r < R; ++r) {
        const __m256 v0 = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(sums[r][0], bias0)), s0);
        const __m256 v1 = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(sums[r][1], bias1)), s1);
        float* row = c + static_cast<std::size_t>(r) * ldc;
        if (cols == kPanel) {
            _mm256_storeu_ps(row, v0);
            _mm256_storeu_ps(row + 8, v1);
        } else {
            alignas(32) float tmp[kPanel];
            _mm256_store_ps(tmp, v0);
            _mm256_store_ps(tmp + 8, v1);
            std::memcpy(row, tmp, cols * sizeof(float));
        }
    }
}

using TileFn = void (*)(const int16_t*, const int16_t*, std::size_t, const int32_t*, const float*, bool, float*, std::size_t,
                        std::size_t);
constexpr TileFn kTiles[kRows + 1] = {nullptr, Tile<1>, Tile<2>, Tile<3>, Tile<4>, Tile<5>, Tile<6>};

/// Rows [r0, r0 + 6) of A (u8 or s8) minus `zp`, as 16-bit pairs [pair][6 rows][2]; rows past m
/// and the odd k's partner are 0.
template <typename T>
void PackRows(const T* a, std::size_t lda, std::size_t m, std::size_t k, int32_t zp, std::size_t r0, int16_t* out) {
    const std::size_t pairs = Pairs(k);
    for (std::size_t r = 0; r < kRows; ++r) {
        const std::size_t row = r0 + r;
        for (std::size_t p = 0; p < pairs; ++p) {
            int16_t* dst = out + p * 2 * kRows + 2 * r;
            if (row >= m) {
                dst[0] = dst[1] = 0;
                continue;
            }
            const T* src = a + row * lda + 2 * p;
            dst[0] = static_cast<int16_t>(static_cast<int32_t>(src[0]) - zp);
            dst[1] = 2 * p + 1 < k ? static_cast<int16_t>(static_cast<int32_t>(src[1]) - zp) : int16_t{0};
        }
    }
}

}  // namespace

std::size_t PackedIntegerWeightsSize(std::size_t k, std::size_t n) { return Panels(n) * Pairs(k) * 2 * kPanel; }

void PackIntegerWeights(const int8_t* b, std::size_t k, std::size_t n, int16_t* packed) {
    const std::size_t pairs = Pairs(k);
    for (std::size_t panel = 0; panel < Panels(n); ++panel) {
        int16_t* out = packed + panel * pairs * 2 * kPanel;
        for (std::size_t p = 0; p < pairs; ++p) {
            for (std::size_t j = 0; j < kPanel; ++j) {
                const std::size_t col = panel * kPanel + j;
                for (std::size_t h = 0; h < 2; ++h) {
                    const std::size_t row = 2 * p + h;
                    out[(p * kPanel + j) * 2 + h] = col < n && row < k ? int16_t{b[row * n + col]} : int16_t{0};
                }
            }
        }
    }
}

std::size_t IntegerGemmWorkspaceSize(std::size_t m, std::size_t k) { return RowBlocks(m) * Pairs(k) * 2 * kRows; }

void IntegerGemmAvx2(const void* a, bool aSigned, int32_t zp, std::size_t m, std::size_t k, const int16_t* packed,
                     std::size_t n, const int32_t* bias, const float* scales, bool perColumn, float* c, int16_t* workspace) {
    const std::size_t pairs = Pairs(k), blocks = RowBlocks(m), panels = Panels(n);
    const std::size_t blockSize = pairs * 2 * kRows, panelSize = pairs * 2 * kPanel;
#pragma omp parallel
    {
#pragma omp for schedule(static)
        for (std::size_t blk = 0; blk < blocks; ++blk) {
            int16_t* out = workspace + blk * blockSize;
            if (aSigned) PackRows(static_cast<const int8_t*>(a), k, m, k, zp, blk * kRows, out);
            else PackRows(static_cast<const uint8_t*>(a), k, m, k, zp, blk * kRows, out);
        }
        // Each thread a run of panels; every row block of A passes over a panel while it is in cache.
#pragma omp for schedule(static)
        for (std::size_t panel = 0; panel < panels; ++panel) {
            const std::size_t col = panel * kPanel, cols = std::min(kPanel, n - col);
            const int16_t* b = packed + panel * panelSize;
            const float* s = perColumn ? scales + col : scales;
            const int32_t* bs = bias ? bias + col : nullptr;
            alignas(32) float lastScales[kPanel] = {};
            alignas(32) int32_t lastBias[kPanel] = {};
            if (cols < kPanel) {  // the tile reads 16 scales and 16 biases
                if (perColumn) s = static_cast<const float*>(std::memcpy(lastScales, s, cols * sizeof(float)));
                if (bs) bs = static_cast<const int32_t*>(std::memcpy(lastBias, bs, cols * sizeof(int32_t)));
            }
            for (std::size_t blk = 0; blk < blocks; ++blk) {
                const std::size_t rows = std::min(kRows, m - blk * kRows);
                kTiles[rows](workspace + blk * blockSize, b, pairs, bs, s, perColumn, c + blk * kRows * n + col, n, cols);
            }
        }
    }
}

void Im2Col8(const uint8_t* x, const Im2ColShape& s, uint8_t pad, uint8_t* a) {
    const std::size_t k = s.m_Channels * s.m_KernelH * s.m_KernelW;
#pragma omp parallel for schedule(static)
    for (std::size_t oh = 0; oh < s.m_OutH; ++oh) {
        for (std::size_t ow = 0; ow < s.m_OutW; ++ow) {
            uint8_t* row = a + (oh * s.m_OutW + ow) * k;
            for (std::size_t c = 0; c < s.m_Channels; ++c) {
                const uint8_t* plane = x + c * s.m_InH * s.m_InW;
                for (std::size_t kh = 0; kh < s.m_KernelH; ++kh) {
                    // Signed: the tap may fall in the top or left padding.
                    const long ih = static_cast<long>(oh * s.m_StrideH + kh * s.m_DilationH) - static_cast<long>(s.m_PadTop);
                    const bool rowInside = ih >= 0 && ih < static_cast<long>(s.m_InH);
                    for (std::size_t kw = 0; kw < s.m_KernelW; ++kw) {
                        const long iw = static_cast<long>(ow * s.m_StrideW + kw * s.m_DilationW) - static_cast<long>(s.m_PadLeft);
                        *row++ = rowInside && iw >= 0 && iw < static_cast<long>(s.m_InW)
                                     ? plane[static_cast<std::size_t>(ih) * s.m_InW + static_cast<std::size_t>(iw)]
                                     : pad;
                    }
                }
            }
        }
    }
}

}  // namespace trellis::cpuacc
