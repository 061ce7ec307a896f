// CpuAcc's own float32 GEMM against constant weights, for CPUs without AVX-512 (CpuAccKernels.hpp:
// PackGemmB, Gemm); on its tiles the tap-by-tap dilated convolution, and last the grouped
// convolution with 4 channels per group (both where oneDNN 2.6 runs its GEMM-based convolution).
// Why own code: there oneDNN 2.6 runs matmuls on its GEMM-based kernel (gemm:jit), which packs
// the weights again on every call (oneDNN's packed-GEMM entry points are internal to it); on an
// AVX2 EPYC it reached about 60 GFLOP/s on BERT's and ViT's fully connected
// layers at one thread, against about 80 for the same kernel on a 2048x2048 product and ONNX
// Runtime's 69 with weights packed once, which left the BERT encoder 1.15-1.36x slower than ONNX
// Runtime there (docs/performance.md). Here the weights are packed once, at load, into panels of 16
// columns (k-major), and a 6x16 register tile (12 accumulators) runs over blocks of 256 k so
// that a panel stays in L1 while every row block of A passes over it. On one thread each block of
// 256 columns of A is first repacked, six rows interleaved ([tile][k][6]), so that the tile reads
// one stream: read in place, the six rows of a 3072-wide A lie 12 KiB apart, a multiple of 4 KiB,
// and share L1 sets (ViT's second MLP matmul, 197x3072 by 3072x768, ran at 100 GFLOP/s on an
// AVX-512 Xeon capped to AVX2, ONNX Runtime's MLAS at 113; 3-8% more on BERT's and ViT's other
// layers too). XNNPACK, the other library at hand, measured 1.3-2.5x slower
// than oneDNN on these shapes.
#include "CpuAccKernels.hpp"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <utility>
#include <vector>

namespace trellis::cpuacc {

namespace {

constexpr std::size_t kPanel = 16;  // columns per packed panel (two AVX2 vectors)
constexpr std::size_t kRows = 6;    // rows per register tile
constexpr std::size_t kDepth = 256; // k per block: a panel block is 16 KiB, in L1

std::size_t Panels(std::size_t n) { return (n + kPanel - 1) / kPanel; }

// One tile of R rows x 16 columns over k in [k0, k0 + kc): C (+)= A B. `first`: C starts from
// the bias (or 0) instead of its contents. `cols` valid columns (the last panel may be partial).
// A's element (r, k) is a[r * rs + k * ks]: rows of A in place (rs = lda, ks = 1) or repacked
// ([k][kRows]: rs = 1, ks = kRows).
template <std::size_t R>
__attribute__((target("avx2,fma"))) inline void Tile(const float* a, std::size_t rs, std::size_t ks, const float* bp,
                                                     std::size_t kc,
                                                     float* c, std::size_t ldc, const float* bias, bool first,
                                                     std::size_t cols) {
    __m256 acc[R][2];
#pragma GCC unroll 6
    for (std::size_t r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
    // Unrolled by 4: 3-4% more GFLOP/s on BERT's and ViT's layers (loop overhead next to 12 FMAs).
#pragma GCC unroll 4
    for (std::size_t k = 0; k < kc; ++k, bp += kPanel, a += ks) {
        const __m256 b0 = _mm256_loadu_ps(bp), b1 = _mm256_loadu_ps(bp + 8);
#pragma GCC unroll 6
        for (std::size_t r = 0; r < R; ++r) {
            const __m256 x = _mm256_broadcast_ss(a + r * rs);
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

__attribute__((target("avx2,fma"))) void TileRows(std::size_t rows, const float* a, std::size_t rs, std::size_t ks,
                                                  const float* bp,
                                                  std::size_t kc, float* c, std::size_t ldc, const float* bias,
                                                  bool first, std::size_t cols) {
    switch (rows) {
        case 6: Tile<6>(a, rs, ks, bp, kc, c, ldc, bias, first, cols); return;
        case 5: Tile<5>(a, rs, ks, bp, kc, c, ldc, bias, first, cols); return;
        case 4: Tile<4>(a, rs, ks, bp, kc, c, ldc, bias, first, cols); return;
        case 3: Tile<3>(a, rs, ks, bp, kc, c, ldc, bias, first, cols); return;
        case 2: Tile<2>(a, rs, ks, bp, kc, c, ldc, bias, first, cols); return;
        default: Tile<1>(a, rs, ks, bp, kc, c, ldc, bias, first, cols); return;
    }
}

// Packs kRows rows of A, k floats each, into one tile [k][kRows] as the tiles read it: rows[r] is
// row r's first element, null for a row past A's end (zeros).
void PackTile(const float* const* rows, std::size_t k, float* out) {
    for (std::size_t r = 0; r < kRows; ++r) {
        const float* in = rows[r];
        for (std::size_t kk = 0; kk < k; ++kk) out[kk * kRows + r] = in ? in[kk] : 0.0f;
    }
}

// Prefetches (into L2) the part of `next` (the slice of packed B the loop reads after the current
// one, `floats` long, or null) that tile `t` of `tiles` is to fetch: the loop over a panel's tiles
// brings the next panel slice in while the current one is in use. B is streamed from L3 or memory
// in a whole network (BERT-base has 340 MB of weights); without this a 128x768 by 768x3072 layer
// took 6.1-6.4 ms instead of 5.3 when B was not in L2.
// Inlined early: as a call, GCC took the function for one without effects (a prefetch is not one
// to it) and dropped every call.
__attribute__((always_inline)) inline void PrefetchShare(const float* next, std::size_t floats, std::size_t t,
                                                        std::size_t tiles) {
    if (!next) return;
    constexpr std::size_t kLine = 16;  // floats per 64-byte line
    const std::size_t lines = floats / kLine, per = (lines + tiles - 1) / tiles;
    for (std::size_t l = t * per; l < std::min(lines, (t + 1) * per); ++l) {
        _mm_prefetch(reinterpret_cast<const char*>(next + l * kLine), _MM_HINT_T1);
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

std::size_t GemmWorkspaceSize(std::size_t m, std::size_t k) { return (m + kRows - 1) / kRows * kRows * std::max<std::size_t>(1, k); }

void GemmAvx2(const float* a, std::size_t lda, const float* packed, const float* bias, float* c, std::size_t ldc,
              std::size_t m, std::size_t k, std::size_t n, float* workspace) {
    const std::size_t panels = Panels(n), tiles = (m + kRows - 1) / kRows;
    const bool parallel = panels > 1 && m * k * n > 32768 && omp_get_max_threads() > 1;
    if (!parallel) {
        // One thread: A repacked once, six rows interleaved ([tile][k][6]; see the top of the
        // file), then groups of 8 panels (128 columns, whose part of C stays in L2 over the k
        // blocks: 3-4% more GFLOP/s than a k block over all panels where n is 2304 or 3072).
        for (std::size_t t = 0; t < tiles; ++t) {
            const float* rows[kRows];
            for (std::size_t r = 0; r < kRows; ++r) rows[r] = t * kRows + r < m ? a + (t * kRows + r) * lda : nullptr;
            PackTile(rows, k, workspace + t * k * kRows);
        }
        constexpr std::size_t kGroup = 8;
        for (std::size_t p0 = 0; p0 < panels; p0 += kGroup) {
            const std::size_t p1 = std::min(panels, p0 + kGroup);
            for (std::size_t k0 = 0; k0 < k || k0 == 0; k0 += kDepth) {
                const std::size_t kc = std::min(kDepth, k - k0);
                for (std::size_t p = p0; p < p1; ++p) {
                    const std::size_t col = p * kPanel, cols = std::min(kPanel, n - col);
                    const float* panel = packed + p * k * kPanel + k0 * kPanel;
                    // Next: the following panel's slice, else the group's first panel's next k block.
                    const bool lastOfBlock = p + 1 == p1;
                    const std::size_t nextK0 = lastOfBlock ? k0 + kDepth : k0;
                    const float* next = nextK0 >= k ? nullptr
                                                    : packed + (lastOfBlock ? p0 : p + 1) * k * kPanel + nextK0 * kPanel;
                    const std::size_t nextFloats = next ? std::min(kDepth, k - nextK0) * kPanel : 0;
                    for (std::size_t t = 0; t < tiles; ++t) {
                        PrefetchShare(next, nextFloats, t, tiles);
                        TileRows(std::min(kRows, m - t * kRows), workspace + (t * k + k0) * kRows, 1, kRows, panel, kc,
                                 c + t * kRows * ldc + col, ldc, bias ? bias + col : nullptr, k0 == 0, cols);
                    }
                }
                if (k == 0) break;
            }
        }
        return;
    }
    // A team: panels over the threads, each thread all rows of its panels, A read in place (the
    // packing above, shared, would need the team to meet after it: at two threads that cost more
    // than it gave, 3-8% fewer GFLOP/s on the shapes above). Guided, not static: on the 2-vCPU EPYC
    // one core ran the same panels up to 35% slower than the other (per-thread times inside the
    // region), so an even split waited on it; guided hands out shrinking chunks, and measured 8-15%
    // more GFLOP/s at 2 threads on BERT's and ViT's layers (mean of 30 interleaved runs per schedule).
#pragma omp parallel for schedule(guided)
    for (long long pp = 0; pp < static_cast<long long>(panels); ++pp) {
        const std::size_t p = static_cast<std::size_t>(pp);
        const std::size_t col = p * kPanel, cols = std::min(kPanel, n - col);
        const float* panel = packed + p * k * kPanel;
        const float* b = bias ? bias + col : nullptr;
        for (std::size_t k0 = 0; k0 < k || k0 == 0; k0 += kDepth) {
            const std::size_t kc = std::min(kDepth, k - k0);
            // Next: this panel's next k block, else the next panel's first (guided chunks are runs).
            const float* next = k0 + kDepth < k ? panel + (k0 + kDepth) * kPanel
                                                : (p + 1 < panels ? packed + (p + 1) * k * kPanel : nullptr);
            const std::size_t nextFloats = next ? std::min(kDepth, k0 + kDepth < k ? k - k0 - kDepth : k) * kPanel : 0;
            for (std::size_t t = 0; t < tiles; ++t) {
                PrefetchShare(next, nextFloats, t, tiles);
                TileRows(std::min(kRows, m - t * kRows), a + t * kRows * lda + k0, lda, 1, panel + k0 * kPanel, kc,
                         c + t * kRows * ldc + col, ldc, b, k0 == 0, cols);
            }
            if (k == 0) break;
        }
    }
}

namespace {

/// The output range [begin, end) of one dimension whose tap `t` reads inside the input (stride 1).
std::pair<std::size_t, std::size_t> TapRange(std::size_t out, std::size_t in, std::size_t pad, std::size_t t,
                                             std::size_t dilation) {
    // in index = o - pad + t * dilation, which must lie in [0, in).
    const long long shift = static_cast<long long>(t * dilation) - static_cast<long long>(pad);
    const long long begin = std::max<long long>(0, -shift);
    const long long end = std::min<long long>(static_cast<long long>(out), static_cast<long long>(in) - shift);
    return end > begin ? std::pair<std::size_t, std::size_t>{static_cast<std::size_t>(begin), static_cast<std::size_t>(end)}
                       : std::pair<std::size_t, std::size_t>{0, 0};
}

}  // namespace

std::size_t TapConvWeightsSize(const TapConvShape& s) {
    return s.m_KernelH * s.m_KernelW * PackedGemmWeightsSize(s.m_InC, s.m_OutC);
}

void PackTapConvWeights(const TapConvShape& s, const float* weights, float* packed) {
    const std::size_t taps = s.m_KernelH * s.m_KernelW, per = PackedGemmWeightsSize(s.m_InC, s.m_OutC);
    std::vector<float> tap(s.m_OutC * s.m_InC);
    for (std::size_t t = 0; t < taps; ++t) {
        // B of tap t as [OutC][InC] (transposed: k = InC, n = OutC).
        for (std::size_t o = 0; o < s.m_OutC; ++o) {
            for (std::size_t i = 0; i < s.m_InC; ++i) tap[o * s.m_InC + i] = weights[(o * s.m_InC + i) * taps + t];
        }
        PackGemmWeights(tap.data(), s.m_InC, s.m_OutC, /*transposed=*/true, 1.0f, packed + t * per);
    }
}

std::size_t TapConvWorkspaceSize(const TapConvShape& s) {
    // The packed rows of A for one tap: each output row's run of columns in tiles of kRows.
    return s.m_OutH * ((s.m_OutW + kRows - 1) / kRows) * kRows * std::max<std::size_t>(1, s.m_InC);
}

void TapConvAvx2(const TapConvShape& s, const float* in, const float* packed, const float* bias, float* out,
                 float* workspace) {
    const std::size_t k = s.m_InC, n = s.m_OutC, panels = Panels(n), per = PackedGemmWeightsSize(k, n);
    const std::size_t pixels = s.m_OutH * s.m_OutW;
    // out = bias: every tap then adds its products (Tile with first = false adds to C).
#pragma omp parallel for schedule(static)
    for (long long px = 0; px < static_cast<long long>(pixels); ++px) {
        float* o = out + static_cast<std::size_t>(px) * n;
        if (bias) std::memcpy(o, bias, n * sizeof(float));
        else std::memset(o, 0, n * sizeof(float));
    }
    for (std::size_t ky = 0; ky < s.m_KernelH; ++ky) {
        const auto [y0, y1] = TapRange(s.m_OutH, s.m_InH, s.m_PadTop, ky, s.m_DilationH);
        for (std::size_t kx = 0; kx < s.m_KernelW; ++kx) {
            const auto [x0, x1] = TapRange(s.m_OutW, s.m_InW, s.m_PadLeft, kx, s.m_DilationW);
            if (y1 <= y0 || x1 <= x0) continue;  // this tap reads only padding
            const std::size_t width = x1 - x0, rowTiles = (width + kRows - 1) / kRows, tiles = (y1 - y0) * rowTiles;
            const float* b = packed + (ky * s.m_KernelW + kx) * per;
#pragma omp parallel
            {
                // A: the input pixels this tap reads, tile by tile (a tile stays in one output row,
                // so its rows of C are consecutive), [tile][k][kRows], missing rows zero.
#pragma omp for schedule(static)
                for (long long tt = 0; tt < static_cast<long long>(tiles); ++tt) {
                    const std::size_t t = static_cast<std::size_t>(tt), oy = y0 + t / rowTiles;
                    const std::size_t ox0 = x0 + (t % rowTiles) * kRows, rows = std::min(kRows, x1 - ox0);
                    const std::size_t iy = oy + ky * s.m_DilationH - s.m_PadTop;
                    const float* starts[kRows];
                    for (std::size_t r = 0; r < kRows; ++r) {
                        starts[r] = r < rows ? in + (iy * s.m_InW + ox0 + r + kx * s.m_DilationW - s.m_PadLeft) * k : nullptr;
                    }
                    PackTile(starts, k, workspace + t * k * kRows);
                }
                // Panels over the team (disjoint columns of C); each panel's k blocks over all tiles.
#pragma omp for schedule(guided)
                for (long long pp = 0; pp < static_cast<long long>(panels); ++pp) {
                    const std::size_t p = static_cast<std::size_t>(pp), col = p * kPanel, cols = std::min(kPanel, n - col);
                    for (std::size_t k0 = 0; k0 < k; k0 += kDepth) {
                        const std::size_t kc = std::min(kDepth, k - k0);
                        const float* panel = b + p * k * kPanel + k0 * kPanel;
                        const float* next = k0 + kDepth < k ? panel + kDepth * kPanel : nullptr;
                        const std::size_t nextFloats = next ? std::min(kDepth, k - k0 - kDepth) * kPanel : 0;
                        for (std::size_t t = 0; t < tiles; ++t) {
                            PrefetchShare(next, nextFloats, t, tiles);
                            const std::size_t oy = y0 + t / rowTiles, ox0 = x0 + (t % rowTiles) * kRows;
                            TileRows(std::min(kRows, x1 - ox0), workspace + (t * k + k0) * kRows, 1, kRows, panel, kc,
                                     out + (oy * s.m_OutW + ox0) * n + col, n, nullptr, false, cols);
                        }
                    }
                }
            }
        }
    }
}

std::size_t Group4WeightsSize(const Group4ConvShape& s) { return s.m_KernelH * s.m_KernelW * 4 * s.m_Channels; }

void PackGroup4Weights(const Group4ConvShape& s, const float* weights, float* packed) {
    const std::size_t taps = s.m_KernelH * s.m_KernelW;
    for (std::size_t t = 0; t < taps; ++t) {
        for (std::size_t ci = 0; ci < 4; ++ci) {
            for (std::size_t c = 0; c < s.m_Channels; ++c) packed[(t * 4 + ci) * s.m_Channels + c] = weights[(c * 4 + ci) * taps + t];
        }
    }
}

__attribute__((target("avx2,fma"))) void Group4ConvAvx2(const Group4ConvShape& s, const float* in, const float* packed,
                                                        const float* bias, float* out) {
    const std::size_t c = s.m_Channels, vectors = c / 8;
    constexpr std::size_t kChunk = 4;  // output vectors accumulated at once
#pragma omp parallel for schedule(static)
    for (long long row = 0; row < static_cast<long long>(s.m_OutH); ++row) {
        const std::size_t oy = static_cast<std::size_t>(row);
        // Lane l of vector v is output channel 8v + l, of group 2v + l / 4; input channel ci of
        // that group is lane 4 (l / 4) + ci of the input vector v.
        __m256i pick[4];
        for (int ci = 0; ci < 4; ++ci) pick[ci] = _mm256_setr_epi32(ci, ci, ci, ci, 4 + ci, 4 + ci, 4 + ci, 4 + ci);
        for (std::size_t ox = 0; ox < s.m_OutW; ++ox) {
            float* o = out + (oy * s.m_OutW + ox) * c;
            for (std::size_t v0 = 0; v0 < vectors; v0 += kChunk) {
                const std::size_t nv = std::min(kChunk, vectors - v0);
                __m256 acc[kChunk];
                for (std::size_t v = 0; v < nv; ++v) acc[v] = bias ? _mm256_loadu_ps(bias + (v0 + v) * 8) : _mm256_setzero_ps();
                for (std::size_t ky = 0; ky < s.m_KernelH; ++ky) {
                    const long long iy = static_cast<long long>(oy * s.m_StrideH + ky * s.m_DilationH) - static_cast<long long>(s.m_PadTop);
                    if (iy < 0 || iy >= static_cast<long long>(s.m_InH)) continue;
                    for (std::size_t kx = 0; kx < s.m_KernelW; ++kx) {
                        const long long ix = static_cast<long long>(ox * s.m_StrideW + kx * s.m_DilationW) - static_cast<long long>(s.m_PadLeft);
                        if (ix < 0 || ix >= static_cast<long long>(s.m_InW)) continue;
                        const float* src = in + (static_cast<std::size_t>(iy) * s.m_InW + static_cast<std::size_t>(ix)) * c + v0 * 8;
                        const float* w = packed + (ky * s.m_KernelW + kx) * 4 * c + v0 * 8;
                        for (std::size_t v = 0; v < nv; ++v) {
                            const __m256 x = _mm256_loadu_ps(src + v * 8);
                            for (int ci = 0; ci < 4; ++ci) {
                                acc[v] = _mm256_fmadd_ps(_mm256_permutevar8x32_ps(x, pick[ci]),
                                                         _mm256_loadu_ps(w + static_cast<std::size_t>(ci) * c + v * 8), acc[v]);
                            }
                        }
                    }
                }
                for (std::size_t v = 0; v < nv; ++v) _mm256_storeu_ps(o + (v0 + v) * 8, acc[v]);
            }
        }
    }
}

}  // namespace trellis::cpuacc
