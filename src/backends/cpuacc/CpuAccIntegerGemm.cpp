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
#include <type_traits>
#include <vector>

namespace trellis::cpuacc {

namespace {

constexpr std::size_t kPanel = 16;  // columns per packed panel (two vectors of 8 int32 sums)
constexpr std::size_t kRows = 6;    // rows per register tile

std::size_t Panels(std::size_t n) { return (n + kPanel - 1) / kPanel; }
std::size_t Pairs(std::size_t k) { return (k + 1) / 2; }
std::size_t RowBlocks(std::size_t m) { return (m + kRows - 1) / kRows; }

/// The sums of one tile: R rows of packed A ([pair][6 rows][2]) times one packed panel ([pair][16
/// columns][2]), k pairs in all, into sums[r][0] (columns 0-7) and sums[r][1] (8-15).
template <int R>
__attribute__((target("avx2"), always_inline)) inline void TileSums(const int16_t* a, const int16_t* b, std::size_t pairs,
                                                                     __m256i (&sums)[kRows][2]) {
    // Named accumulators (an array of them made GCC keep some on the stack).
    __m256i c0a = _mm256_setzero_si256(), c0b = c0a, c1a = c0a, c1b = c0a, c2a = c0a, c2b = c0a;
    __m256i c3a = c0a, c3b = c0a, c4a = c0a, c4b = c0a, c5a = c0a, c5b = c0a;
// One row: its pair of 16-bit values broadcast, times both vectors of the panel, added to its sums.
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
    sums[0][0] = c0a, sums[0][1] = c0b, sums[1][0] = c1a, sums[1][1] = c1b, sums[2][0] = c2a, sums[2][1] = c2b;
    sums[3][0] = c3a, sums[3][1] = c3b, sums[4][0] = c4a, sums[4][1] = c4b, sums[5][0] = c5a, sums[5][1] = c5b;
}

/// Stores 16 values (8 + 8) to `row`, only its first `cols` when the panel is partial.
__attribute__((target("avx2"), always_inline)) inline void StoreRow(float* row, __m256 v0, __m256 v1, std::size_t cols) {
    if (cols == kPanel) {
        _mm256_storeu_ps(row, v0);
        _mm256_storeu_ps(row + 8, v1);
        return;
    }
    alignas(32) float tmp[kPanel];
    _mm256_store_ps(tmp, v0);
    _mm256_store_ps(tmp + 8, v1);
    std::memcpy(row, tmp, cols * sizeof(float));
}

/// One tile of the matmul: float(sum + bias[column]) * scale (one, or per column) to C.
template <int R>
__attribute__((target("avx2"))) void Tile(const int16_t* a, const int16_t* b, std::size_t pairs, const int32_t* bias,
                                          const float* scales, bool perColumn, float* c, std::size_t ldc, std::size_t cols) {
    __m256i sums[kRows][2];
    TileSums<R>(a, b, pairs, sums);
    const __m256 s0 = perColumn ? _mm256_loadu_ps(scales) : _mm256_set1_ps(scales[0]);
    const __m256 s1 = perColumn ? _mm256_loadu_ps(scales + 8) : s0;
    const __m256i bias0 = bias ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bias)) : _mm256_setzero_si256();
    const __m256i bias1 = bias ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bias + 8)) : _mm256_setzero_si256();
    for (int r = 0; r < R; ++r) {
        const __m256 v0 = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(sums[r][0], bias0)), s0);
        const __m256 v1 = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(sums[r][1], bias1)), s1);
        StoreRow(c + static_cast<std::size_t>(r) * ldc, v0, v1, cols);
    }
}

/// Where a panel's 16 columns go in an output plane: runs of consecutive lanes to consecutive
/// pixels (one run normally; up to three where the columns span rows of a padded-width layout).
struct PanelRuns {
    int m_Count = 0;
    std::size_t m_Lane[4] = {}, m_Length[4] = {}, m_Pixel[4] = {};
};

/// One tile of the convolution (rows: output channels, columns: 16 output pixels): float(sum +
/// bias[channel]) * scale (one, or per channel), stored as Float32, or quantized as QuantizeLinear
/// with scale 1 and out.m_ZeroPoint computes it (clamped to the type's range less the zero point,
/// rounded half to even by the current rounding mode, the zero point added) and stored as 8 bits.
template <int R>
__attribute__((target("avx2"))) void ConvTile(const int16_t* a, const int16_t* b, std::size_t pairs, const int32_t* bias,
                                              const float* scales, bool perChannel, const IntegerConvOutput& out,
                                              std::size_t planeSize, std::size_t channel, const PanelRuns& runs) {
    __m256i sums[kRows][2];
    TileSums<R>(a, b, pairs, sums);
    const float lo = out.m_Signed ? -128.0f : 0.0f, hi = out.m_Signed ? 127.0f : 255.0f;
    const __m256 vlo = _mm256_set1_ps(lo - static_cast<float>(out.m_ZeroPoint));
    const __m256 vhi = _mm256_set1_ps(hi - static_cast<float>(out.m_ZeroPoint));
    const __m256i zp = _mm256_set1_epi32(out.m_ZeroPoint);
    const bool whole = runs.m_Count == 1 && runs.m_Lane[0] == 0 && runs.m_Length[0] == kPanel;
    for (int r = 0; r < R; ++r) {
        const std::size_t ch = channel + static_cast<std::size_t>(r);
        const __m256 s = _mm256_set1_ps(scales[perChannel ? ch : 0]);
        const __m256i bv = _mm256_set1_epi32(bias ? bias[ch] : 0);
        __m256 v0 = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(sums[r][0], bv)), s);
        __m256 v1 = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(sums[r][1], bv)), s);
        if (out.m_FloatBias) {
            const __m256 fb = _mm256_set1_ps(out.m_FloatBias[ch]);
            v0 = _mm256_add_ps(v0, fb);
            v1 = _mm256_add_ps(v1, fb);
        }
        if (out.m_Relu) {
            v0 = _mm256_max_ps(v0, _mm256_setzero_ps());
            v1 = _mm256_max_ps(v1, _mm256_setzero_ps());
        }
        const std::size_t plane = ch * planeSize;
        if (out.m_Float) {
            if (whole) {
                StoreRow(out.m_Float + plane + runs.m_Pixel[0], v0, v1, kPanel);
                continue;
            }
            alignas(32) float tmp[kPanel];
            _mm256_store_ps(tmp, v0);
            _mm256_store_ps(tmp + 8, v1);
            for (int u = 0; u < runs.m_Count; ++u) {
                std::memcpy(out.m_Float + plane + runs.m_Pixel[u], tmp + runs.m_Lane[u], runs.m_Length[u] * sizeof(float));
            }
            continue;
        }
        // max(v, lo) with v first: a NaN gives lo, as the quantize kernel does.
        const __m256i q0 = _mm256_add_epi32(_mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(v0, vlo), vhi)), zp);
        const __m256i q1 = _mm256_add_epi32(_mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(v1, vlo), vhi)), zp);
        // The 16 int32 (each within the type's range) to 16 bytes, in order.
        const __m256i w16 = _mm256_permute4x64_epi64(_mm256_packs_epi32(q0, q1), 0xD8);
        const __m128i w16lo = _mm256_castsi256_si128(w16), w16hi = _mm256_extracti128_si256(w16, 1);
        const __m128i bytes = out.m_Signed ? _mm_packs_epi16(w16lo, w16hi) : _mm_packus_epi16(w16lo, w16hi);
        if (whole) {
            _mm_storeu_si128(reinterpret_cast<__m128i*>(out.m_Quantized + plane + runs.m_Pixel[0]), bytes);
            continue;
        }
        alignas(16) uint8_t tmp[kPanel];
        _mm_store_si128(reinterpret_cast<__m128i*>(tmp), bytes);
        for (int u = 0; u < runs.m_Count; ++u) {
            std::memcpy(out.m_Quantized + plane + runs.m_Pixel[u], tmp + runs.m_Lane[u], runs.m_Length[u]);
        }
    }
}

using ConvTileFn = void (*)(const int16_t*, const int16_t*, std::size_t, const int32_t*, const float*, bool,
                            const IntegerConvOutput&, std::size_t, std::size_t, const PanelRuns&);
constexpr ConvTileFn kConvTiles[kRows + 1] = {nullptr, ConvTile<1>, ConvTile<2>, ConvTile<3>, ConvTile<4>, ConvTile<5>, ConvTile<6>};

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

namespace {

template <typename T>
void PackPanels(const T* b, int32_t zp, std::size_t k, std::size_t n, int16_t* packed) {
    const std::size_t pairs = Pairs(k);
    for (std::size_t panel = 0; panel < Panels(n); ++panel) {
        int16_t* out = packed + panel * pairs * 2 * kPanel;
        for (std::size_t p = 0; p < pairs; ++p) {
            for (std::size_t j = 0; j < kPanel; ++j) {
                const std::size_t col = panel * kPanel + j;
                for (std::size_t h = 0; h < 2; ++h) {
                    const std::size_t row = 2 * p + h;
                    out[(p * kPanel + j) * 2 + h] =
                        col < n && row < k ? static_cast<int16_t>(static_cast<int32_t>(b[row * n + col]) - zp) : int16_t{0};
                }
            }
        }
    }
}

}  // namespace

void PackIntegerWeights(const int8_t* b, std::size_t k, std::size_t n, int16_t* packed) { PackPanels(b, 0, k, n, packed); }

void PackIntegerOperand(const void* b, bool bSigned, int32_t zp, std::size_t k, std::size_t n, int16_t* packed) {
    if (bSigned) PackPanels(static_cast<const int8_t*>(b), zp, k, n, packed);
    else PackPanels(static_cast<const uint8_t*>(b), zp, k, n, packed);
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

namespace {

/// Where the 16 output pixels of a panel read: for pixel j, the input row and column of its tap
/// (0, 0) (negative in the top or left padding), and whether it exists.
struct PanelPixels {
    long m_Row[16], m_Col[16];
    bool m_Valid[16];
    bool m_Contiguous = false;  ///< one output row at stride 1: tap (kh, kw) reads 16 adjacent bytes
};

PanelPixels PixelsOf(const Im2ColShape& s, std::size_t pixel, std::size_t pixels) {
    PanelPixels p{};
    for (std::size_t j = 0; j < 16; ++j) {
        const std::size_t m = pixel + j;
        p.m_Valid[j] = m < pixels;
        const std::size_t y = p.m_Valid[j] ? m / s.m_OutW : 0, x = p.m_Valid[j] ? m % s.m_OutW : 0;
        p.m_Row[j] = static_cast<long>(y * s.m_StrideH) - static_cast<long>(s.m_PadTop);
        p.m_Col[j] = static_cast<long>(x * s.m_StrideW) - static_cast<long>(s.m_PadLeft);
    }
    p.m_Contiguous = (s.m_StrideW == 1 || s.m_StrideW == 2) && pixel % s.m_OutW + 16 <= s.m_OutW && pixel + 16 <= pixels;
    return p;
}

/// 16 values of row k of the convolution's B (= im2col transposed: tap k = (channel, kh, kw), the
/// panel's output pixels) minus the zero point, as 16-bit values; missing pixels and taps in the
/// padding give 0.
/// A stride-1 convolution's input copied with its padding (the zero point) around it: planes of
/// m_Height x m_Width (the output width plus the kernel's reach), output pixel (oh, ow) at index
/// oh * m_Width + ow of the padded-width layout reading tap (kh, kw) at that index plus
/// kh * dilation * m_Width + kw * dilation, so any 16 consecutive indices read 16 adjacent bytes.
struct PaddedInput {
    const void* m_Data = nullptr;
    std::size_t m_Height = 0, m_Width = 0, m_Plane = 0;  ///< m_Plane: bytes per channel (with slack)
};

/// Tap k of a convolution: its input channel and its offsets (kernel row and column times the
/// dilation), worked out once per call (no divisions per panel).
struct Tap {
    std::size_t m_Channel = 0;
    long m_Dy = 0, m_Dx = 0;
};

std::vector<Tap> TapsOf(const Im2ColShape& s) {
    std::vector<Tap> taps(s.m_Channels * s.m_KernelH * s.m_KernelW);
    for (std::size_t k = 0; k < taps.size(); ++k) {
        const std::size_t kw = k % s.m_KernelW, kh = (k / s.m_KernelW) % s.m_KernelH;
        taps[k] = {k / (s.m_KernelW * s.m_KernelH), static_cast<long>(kh * s.m_DilationH), static_cast<long>(kw * s.m_DilationW)};
    }
    return taps;
}

template <typename T>
__attribute__((target("avx2"))) __m256i TapRow(const T* x, const Im2ColShape& s, const std::vector<Tap>& taps, std::size_t k,
                                               const PanelPixels& px, bool flat, const PaddedInput& padded, std::size_t pixel,
                                               int32_t zp) {
    if (k >= taps.size()) return _mm256_setzero_si256();
    const std::size_t c = taps[k].m_Channel;
    const T* plane = x + c * s.m_InH * s.m_InW;
    const long dy = taps[k].m_Dy, dx = taps[k].m_Dx;
    const long h = static_cast<long>(s.m_InH), w = static_cast<long>(s.m_InW);
    // The common cases as one 16-byte load: a 1x1 stride-1 unpadded convolution reads the plane as
    // it is, a padded stride-1 one its padded copy; otherwise 16 pixels of one output row at
    // stride 1 (or 2: every other byte of 32), the tap inside the input for all.
    const T* run = nullptr;
    if (padded.m_Data) {
        run = static_cast<const T*>(padded.m_Data) + c * padded.m_Plane + pixel + static_cast<std::size_t>(dy) * padded.m_Width +
              static_cast<std::size_t>(dx);
    } else if (flat) {
        run = plane + pixel;
    } else if (px.m_Contiguous) {
        const long ih = px.m_Row[0] + dy, iw = px.m_Col[0] + dx;
        const long span = s.m_StrideW == 1 ? 16 : 32;
        if (ih >= 0 && ih < h && iw >= 0 && iw + span <= w) {
            if (s.m_StrideW == 2) {
                // The even bytes of 32: per 128-bit lane to its low 8, then the two lanes' halves together.
                const __m256i all = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(plane + ih * w + iw));
                const __m256i even = _mm256_shuffle_epi8(
                    all, _mm256_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, -1, -1, -1, -1, -1, -1, -1, -1, 0, 2, 4, 6, 8, 10, 12, 14,
                                          -1, -1, -1, -1, -1, -1, -1, -1));
                const __m128i bytes = _mm256_castsi256_si128(_mm256_permute4x64_epi64(even, 0x08));
                const __m256i wide = std::is_signed_v<T> ? _mm256_cvtepi8_epi16(bytes) : _mm256_cvtepu8_epi16(bytes);
                return _mm256_sub_epi16(wide, _mm256_set1_epi16(static_cast<int16_t>(zp)));
            }
            run = plane + ih * w + iw;
        }
    }
    if (run) {
        const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(run));
        const __m256i wide = std::is_signed_v<T> ? _mm256_cvtepi8_epi16(bytes) : _mm256_cvtepu8_epi16(bytes);
        return _mm256_sub_epi16(wide, _mm256_set1_epi16(static_cast<int16_t>(zp)));
    }
    alignas(32) int16_t v[16];
    for (std::size_t j = 0; j < 16; ++j) {
        const long ih = px.m_Row[j] + dy, iw = px.m_Col[j] + dx;
        const bool inside = px.m_Valid[j] && ih >= 0 && ih < h && iw >= 0 && iw < w;
        v[j] = inside ? static_cast<int16_t>(static_cast<int32_t>(plane[ih * w + iw]) - zp) : int16_t{0};
    }
    return _mm256_load_si256(reinterpret_cast<const __m256i*>(v));
}

/// The panel of B for output pixels [pixel, pixel + 16): [pair][16][2] 16-bit values.
template <typename T>
__attribute__((target("avx2"))) void PackConvPanel(const T* x, const Im2ColShape& s, const std::vector<Tap>& taps,
                                                   const PaddedInput& padded, std::size_t pixel, std::size_t pixels,
                                                   int32_t zp, int16_t* out) {
    const std::size_t pairs = Pairs(s.m_Channels * s.m_KernelH * s.m_KernelW);
    const PanelPixels px = padded.m_Data ? PanelPixels{} : PixelsOf(s, pixel, pixels);
    const bool flat = s.m_KernelH == 1 && s.m_KernelW == 1 && s.m_StrideH == 1 && s.m_StrideW == 1 && s.m_PadTop == 0 &&
                      s.m_PadLeft == 0 && s.m_InW == s.m_OutW && s.m_InH == s.m_OutH && pixel + 16 <= pixels;
    for (std::size_t p = 0; p < pairs; ++p) {
        const __m256i r0 = TapRow(x, s, taps, 2 * p, px, flat, padded, pixel, zp);
        const __m256i r1 = TapRow(x, s, taps, 2 * p + 1, px, flat, padded, pixel, zp);
        // Interleave to (r0[j], r1[j]) pairs: unpack works within 128-bit lanes, the permute puts
        // columns 0-7 in the first vector and 8-15 in the second.
        const __m256i lo = _mm256_unpacklo_epi16(r0, r1), hi = _mm256_unpackhi_epi16(r0, r1);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + p * 2 * kPanel), _mm256_permute2x128_si256(lo, hi, 0x20));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + p * 2 * kPanel + 16), _mm256_permute2x128_si256(lo, hi, 0x31));
    }
}

}  // namespace

std::size_t PackedIntegerConvWeightsSize(std::size_t outChannels, std::size_t depth) {
    return RowBlocks(outChannels) * Pairs(depth) * 2 * kRows;
}

void PackIntegerConvWeights(const int8_t* w, std::size_t outChannels, std::size_t depth, int16_t* packed) {
    for (std::size_t blk = 0; blk < RowBlocks(outChannels); ++blk) {
        PackRows(w, depth, outChannels, depth, 0, blk * kRows, packed + blk * Pairs(depth) * 2 * kRows);
    }
}

namespace {

/// Whether IntegerConvAvx2 reads a padded copy of the input: a stride-1 convolution other than an
/// unpadded 1x1 one (which reads its planes as they are).
bool UsesPaddedInput(const Im2ColShape& s) {
    const bool flat = s.m_KernelH == 1 && s.m_KernelW == 1 && s.m_PadTop == 0 && s.m_PadLeft == 0 && s.m_InW == s.m_OutW &&
                      s.m_InH == s.m_OutH;
    return s.m_StrideH == 1 && s.m_StrideW == 1 && !flat;
}

/// The padded copy's geometry: the output's rows and width plus the kernel's reach, and slack after
/// each plane for the 16-lane reads of the last panel (whose extra lanes are not stored).
PaddedInput PaddedGeometry(const Im2ColShape& s) {
    PaddedInput p;
    p.m_Height = s.m_OutH + (s.m_KernelH - 1) * s.m_DilationH;
    p.m_Width = s.m_OutW + (s.m_KernelW - 1) * s.m_DilationW;
    p.m_Plane = p.m_Height * p.m_Width + (s.m_KernelW - 1) * s.m_DilationW + 2 * kPanel;
    return p;
}

/// Panels and the bytes of the workspace (packed panels, then the padded copy), in int16 elements.
struct ConvWorkspace {
    std::size_t m_Panels = 0, m_PanelsSize = 0, m_PaddedSize = 0;
};

ConvWorkspace ConvWorkspaceOf(const Im2ColShape& s, std::size_t outChannels) {
    const std::size_t depth = s.m_Channels * s.m_KernelH * s.m_KernelW;
    ConvWorkspace w;
    const std::size_t columns = UsesPaddedInput(s) ? s.m_OutH * PaddedGeometry(s).m_Width : s.m_OutH * s.m_OutW;
    w.m_Panels = Panels(columns);
    const std::size_t panels = w.m_Panels * Pairs(depth) * 2 * kPanel;
    w.m_PanelsSize = PackedIntegerConvWeightsSize(outChannels, depth) > panels ? panels : 0;
    w.m_PaddedSize = UsesPaddedInput(s) ? (s.m_Channels * PaddedGeometry(s).m_Plane + 1) / 2 : 0;
    return w;
}

/// Panel t's columns as output pixels: columns past the output (or in a padded-width layout's
/// extra columns) are not stored.
PanelRuns RunsOf(const Im2ColShape& s, bool padded, std::size_t width, std::size_t t) {
    PanelRuns runs;
    const std::size_t pixels = s.m_OutH * s.m_OutW;
    if (!padded) {
        const std::size_t pixel = t * kPanel;
        runs.m_Count = 1;
        runs.m_Pixel[0] = pixel;
        runs.m_Length[0] = std::min(kPanel, pixels - pixel);
        return runs;
    }
    for (std::size_t j = 0; j < kPanel; ++j) {
        const std::size_t index = t * kPanel + j, oh = index / width, ow = index % width;
        if (oh >= s.m_OutH || ow >= s.m_OutW) continue;
        const std::size_t pixel = oh * s.m_OutW + ow;
        if (runs.m_Count > 0 && runs.m_Pixel[runs.m_Count - 1] + runs.m_Length[runs.m_Count - 1] == pixel &&
            runs.m_Lane[runs.m_Count - 1] + runs.m_Length[runs.m_Count - 1] == j) {
            ++runs.m_Length[runs.m_Count - 1];
            continue;
        }
        runs.m_Lane[runs.m_Count] = j;
        runs.m_Pixel[runs.m_Count] = pixel;
        runs.m_Length[runs.m_Count] = 1;
        ++runs.m_Count;
    }
    return runs;
}

}  // namespace

std::size_t IntegerConvWorkspaceSize(const Im2ColShape& s, std::size_t outChannels) {
    const ConvWorkspace w = ConvWorkspaceOf(s, outChannels);
    return w.m_PanelsSize + w.m_PaddedSize;
}

void IntegerConvAvx2(const void* x, bool xSigned, int32_t zp, const Im2ColShape& s, const int16_t* packed,
                     std::size_t outChannels, const int32_t* bias, const float* scales, bool perChannel,
                     const IntegerConvOutput& out, int16_t* workspace) {
    const std::size_t depth = s.m_Channels * s.m_KernelH * s.m_KernelW, pairs = Pairs(depth);
    const std::size_t pixels = s.m_OutH * s.m_OutW, blocks = RowBlocks(outChannels);
    const std::size_t panelSize = pairs * 2 * kPanel, blockSize = pairs * 2 * kRows;
    const ConvWorkspace layout = ConvWorkspaceOf(s, outChannels);
    const std::size_t panels = layout.m_Panels;
    PaddedInput padded;
    if (UsesPaddedInput(s)) {
        // The padded copy (the zero point around the input, and as slack after each plane).
        padded = PaddedGeometry(s);
        auto* to = reinterpret_cast<uint8_t*>(workspace + layout.m_PanelsSize);
        padded.m_Data = to;
        const auto* from = static_cast<const uint8_t*>(x);
        const uint8_t fill = static_cast<uint8_t>(zp);
#pragma omp parallel for schedule(static)
        for (std::size_t c = 0; c < s.m_Channels; ++c) {
            uint8_t* plane = to + c * padded.m_Plane;
            std::memset(plane, fill, padded.m_Plane);
            for (std::size_t ih = 0; ih < s.m_InH; ++ih) {
                const std::size_t row = ih + s.m_PadTop;
                if (row >= padded.m_Height) break;
                const std::size_t count = std::min(s.m_InW, padded.m_Width - std::min(padded.m_Width, s.m_PadLeft));
                std::memcpy(plane + row * padded.m_Width + s.m_PadLeft, from + (c * s.m_InH + ih) * s.m_InW, count);
            }
        }
    }
    const bool paddedLayout = padded.m_Data != nullptr;
    const std::vector<Tap> taps = TapsOf(s);
    const std::size_t columns = paddedLayout ? s.m_OutH * padded.m_Width : pixels;
    const auto pack = [&](std::size_t t, int16_t* to) {
        if (xSigned) PackConvPanel(static_cast<const int8_t*>(x), s, taps, padded, t * kPanel, columns, zp, to);
        else PackConvPanel(static_cast<const uint8_t*>(x), s, taps, padded, t * kPanel, columns, zp, to);
    };
    const auto tile = [&](std::size_t blk, const PanelRuns& runs, const int16_t* panel) {
        const std::size_t rows = std::min(kRows, outChannels - blk * kRows);
        kConvTiles[rows](packed + blk * blockSize, panel, pairs, bias, scales, perChannel, out, pixels, blk * kRows, runs);
    };
    if (layout.m_PanelsSize > 0) {
        // The weights outweigh the input's taps (deep layers on small images): every panel packed
        // first, then each block of output channels runs over all of them, its weights read once.
        int16_t* all = workspace;
#pragma omp parallel
        {
#pragma omp for schedule(static)
            for (std::size_t t = 0; t < panels; ++t) pack(t, all + t * panelSize);
#pragma omp for schedule(static)
            for (std::size_t blk = 0; blk < blocks; ++blk) {
                for (std::size_t t = 0; t < panels; ++t) {
                    const PanelRuns runs = RunsOf(s, paddedLayout, padded.m_Width, t);
                    if (runs.m_Count > 0) tile(blk, runs, all + t * panelSize);
                }
            }
        }
        return;
    }
#pragma omp parallel
    {
        // Each thread packs a panel of 16 pixels (in L1) and runs every block of output channels over it.
        std::vector<int16_t> panel(panelSize);
#pragma omp for schedule(static)
        for (std::size_t t = 0; t < panels; ++t) {
            const PanelRuns runs = RunsOf(s, paddedLayout, padded.m_Width, t);
            if (runs.m_Count == 0) continue;
            pack(t, panel.data());
            for (std::size_t blk = 0; blk < blocks; ++blk) tile(blk, runs, panel.data());
        }
    }
}

}  // namespace trellis::cpuacc
