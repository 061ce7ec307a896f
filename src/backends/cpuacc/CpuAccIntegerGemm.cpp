// CpuAcc's own exact integer GEMMs and convolution for CPUs with AVX2 but neither VNNI nor AMX
// (CpuAccKernels.hpp: IntegerGemmAvx2, IntegerGemmBytesAvx2, IntegerConvAvx2): the products of
// QLinearConv / QLinearMatMul, of QDQ convolutions and matmuls, of MatMulInteger / ConvInteger
// after DynamicQuantizeLinear.
// Why own code: there oneDNN 2.6's int8 kernels multiply u8 x s8 with vpmaddubsw, which adds each
// pair of products in saturating 16 bits (so do ONNX Runtime's MLAS kernels); a pair such as
// 255 x 127 + 255 x 127 saturates, and that is not ONNX's result. CpuAcc declines them
// (OneDnnInt8IsExact), and the integer layers used to run on CpuRef's plain loops: seconds for a
// BERT encoder. For two computed operands (IntegerGemmAvx2) both are widened to 16 bits first - A minus its zero point (within
// [-255, 255]) as it is packed per call, the constant weights once at load - and vpmaddwd adds
// each pair of 16-bit products into 32 bits, exactly; the k sums are exact in int32 while k stays
// below 65793 (255 x 128 x k < 2^31; callers check). Twice the multiply-adds of a float32 FMA per
// instruction, half the bytes of float32 weights; the result is float(sum) times the scale, as
// CpuRef's Cast and Mul compute it.
// Constant weights (the convolution, IntegerConvAvx2, and the matmul, IntegerGemmBytesAvx2: the
// same tiles with B^T as the weights and rows of A as the taps) keep 8 bits: vpmaddubsw multiplies u8 taps by s8 weights and
// adds each pair in 16 bits, exact when the pair's positive weights and its negative ones each sum
// to at most 128 in magnitude (x0 w0 + x1 w1 then lies within 255 x [-128, 128] for any u8 taps,
// inside 16 bits; a pair of opposite signs always does). The packing keeps every pair within that
// (a larger one - same signs, |w0 + w1| > 128 - halved, the rest a correction run after the block's
// main loop; 3-6% of resnet50's and BERT's quad-rows), an s8 input is shifted to u8
// with its zero point, and the zero point's share (zp times each channel's weight sum) is taken
// off per channel: twice the multiply-adds per instruction of the 16-bit form and half the bytes,
// about 10-25% faster per layer on an AVX-512 Xeon capped to AVX2.
// Twin quads (a convolution's blocks of 4 output channels): where two quads' weights keep each
// 16-bit lane's four products within 255 x [-128, 128] for every row of a block, their two
// vpmaddubsw results are added in 16 bits (vpaddw, exact) before one vpmaddwd, three multiplies
// for two quads instead of four - the two multiply pipes are what bounds the loop. Each block pairs
// its quads greedily in an order of its own (PairTwinQuads; resnet50's layers of depth 256 and more
// pair 93-100% of them with six variants per block, 55-93% in one); 3-13% faster per layer on a
// Zen 4 capped to AVX2.
#include "CpuAccKernels.hpp"
#include "CpuAccVectorMath.hpp"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
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
/// pixels (PlanIntegerConv gives each panel one run: its 16 pixels, fewer in a last panel).
struct PanelRuns {
    int m_Count = 0;
    std::size_t m_Lane[4] = {}, m_Length[4] = {}, m_Pixel[4] = {};
};

/// A convolution's 8-bit weights as PackIntegerConvWeights lays them out (one self-describing
/// blob): blocks of m_Rows output channels (kConvRows, or kQuadRows for a channel-quad output), each [quad][rows][4] int8 taps whose pairs (taps 0-1, 2-3
/// of a quad) are exact (PairIsExact); any other pair is halved there and the rest kept as
/// a correction of that (block, quad, row): 4 bytes again within that bound. Then each row's sum
/// of its weights (the zero point's share), and the corrections per block and row (a row's run
/// after the block's main loop into that row's registers). Where corrections are dense (at least
/// one quad-row in kDenseCorrections: a classifier's weights spread over the int8 range have one in
/// 40%), the corrections once more as blocks like the main ones (zero where a quad-row has none), for
/// the GEMV loop (GemvRow), which runs them as it runs the main blocks instead of gathering them.
struct ConvCorrection {
    uint32_t m_Quad;
    int32_t m_Bytes;  ///< 4 int8: the part of the quad's weights the block does not hold
};
struct ConvWeightsHeader {
    uint64_t m_OutChannels, m_Depth, m_Quads, m_Blocks, m_Corrections;
    uint64_t m_Dense;     ///< 1: the dense correction blocks follow the records
    uint64_t m_Pairings;  ///< 0, or the variants of each quad (kPairings or kVariants) a block chooses from (m_XOffsets)
    uint64_t m_Rows;      ///< output channels per block: kConvRows, or kQuadRows
    /// 1: without pairings, each quad of taps in one variant for every block (m_QuadVariants), the
    /// panels reordered to it (ReorderQuads) as they are packed.
    uint64_t m_QuadVariants;
    /// 1: the weights whole, no pair halved and no correction (PackIntegerGemvWeights): for the
    /// GEMV loop only, which splits each byte of A in two 4-bit halves instead.
    uint64_t m_Whole;
    /// 1: each block's quads in an order of its own (m_XOffsets: where each position's taps are), its
    /// first 2 x m_TwinPairs[block] positions in pairs whose products add in 16 bits before vpmaddwd
    /// (exact for every row of the block: PairTwinQuads; no correction), the rest one by one.
    uint64_t m_Twin;
};
/// Corrected quad-rows (one in this many, or more) that make the dense correction blocks.
constexpr std::size_t kDenseCorrections = 8;
constexpr std::size_t kBlobAlign = 64;
std::size_t AlignUp(std::size_t n) { return (n + kBlobAlign - 1) / kBlobAlign * kBlobAlign; }
std::size_t Quads(std::size_t depth) { return (depth + 3) / 4; }
/// Output channels per convolution tile: 5 x 2 accumulators, the panel's 2 vectors, the broadcast
/// weights, a product and the ones of vpmaddwd fill the 16 registers (6 rows spill one).
constexpr std::size_t kConvRows = 5;
/// Output channels per tile where the output is in channel quads (IntegerConvOutput::m_ChannelQuads):
/// one quad, so that a tile's rows are whole quads. As fast per multiply-add as 5 rows where each
/// thread packs its panels (resnet50's layers at 56x56), 3-6% slower where every panel is packed first
/// and streams from L2 (a quarter more panel bytes per multiply-add: its layers at 14x14 and 7x7).
constexpr std::size_t kQuadRows = 4;
/// A quad's variants a block of weights may choose (PackIntegerConvWeights): its three pairings
/// (kPairings), and where the depth allows (kVariantsDepth) each of them also with the second tap of
/// both pairs complemented (kVariants).
constexpr std::size_t kPairings = 3, kVariants = 6;
std::size_t ConvBlocks(std::size_t n, std::size_t rows = kConvRows) { return (n + rows - 1) / rows; }

struct ConvWeights {
    const ConvWeightsHeader* m_Header;
    const int8_t* m_Blocks;          ///< m_Blocks blocks of m_Quads * 4 * m_Rows bytes
    const int32_t* m_RowSums;        ///< per output channel
    const uint32_t* m_RowStart;      ///< m_Blocks * m_Rows + 1 indices into m_Corrections, per (block, row)
    const ConvCorrection* m_Corrections;
    const int8_t* m_Dense;           ///< the dense correction blocks (laid out as m_Blocks), or null
    /// With pairings: per (block, quad), where its taps lie in a panel of its variants
    /// (ExpandVariants: [quad][variant][16 pixels][4]), in bytes; else null.
    const int32_t* m_XOffsets;
    /// With complemented variants: per output channel, 255 times its weights on the taps its blocks
    /// read complemented (255 - x), which their sums lack; else null.
    const int32_t* m_Shifts;
    /// Per quad, the variant (of kVariants) every block takes it in, or null (each quad as it is).
    const uint8_t* m_QuadVariants;
    /// With twin quads (ConvWeightsHeader::m_Twin): per block, its pairs of positions; else null.
    const uint32_t* m_TwinPairs;
};
struct ConvWeightsLayout {
    std::size_t m_Blocks = 0, m_RowSums = 0, m_RowStart = 0, m_Corrections = 0, m_Dense = 0, m_XOffsets = 0, m_QuadVariants = 0,
                m_Shifts = 0, m_TwinPairs = 0, m_Bytes = 0;
};
ConvWeightsLayout LayoutOf(std::size_t outChannels, std::size_t depth, std::size_t corrections, bool dense, bool pairings,
                           bool quadVariants, bool shifts, std::size_t rows, bool twin = false) {
    ConvWeightsLayout l;
    const std::size_t blocks = ConvBlocks(outChannels, rows);
    l.m_Blocks = AlignUp(sizeof(ConvWeightsHeader));
    l.m_RowSums = l.m_Blocks + AlignUp(blocks * Quads(depth) * 4 * rows);
    l.m_RowStart = l.m_RowSums + AlignUp(outChannels * sizeof(int32_t));
    l.m_Corrections = l.m_RowStart + AlignUp((blocks * rows + 1) * sizeof(uint32_t));
    l.m_Dense = l.m_Corrections + AlignUp(corrections * sizeof(ConvCorrection));
    l.m_XOffsets = l.m_Dense + AlignUp(dense ? blocks * Quads(depth) * 4 * rows : 0);
    l.m_QuadVariants = l.m_XOffsets + AlignUp(pairings ? blocks * Quads(depth) * sizeof(int32_t) : 0);
    l.m_Shifts = l.m_QuadVariants + AlignUp(quadVariants ? Quads(depth) : 0);
    l.m_TwinPairs = l.m_Shifts + AlignUp(shifts ? outChannels * sizeof(int32_t) : 0);
    l.m_Bytes = l.m_TwinPairs + (twin ? blocks * sizeof(uint32_t) : 0);
    return l;
}
ConvWeights ViewOf(const uint8_t* blob) {
    ConvWeights v{};
    v.m_Header = reinterpret_cast<const ConvWeightsHeader*>(blob);
    const bool quadVariants = v.m_Header->m_QuadVariants != 0, shifts = v.m_Header->m_Pairings == kVariants || quadVariants;
    const ConvWeightsLayout l = LayoutOf(v.m_Header->m_OutChannels, v.m_Header->m_Depth, v.m_Header->m_Corrections,
                                         v.m_Header->m_Dense != 0, v.m_Header->m_Pairings != 0, quadVariants, shifts, v.m_Header->m_Rows,
                                         v.m_Header->m_Twin != 0);
    v.m_Blocks = reinterpret_cast<const int8_t*>(blob + l.m_Blocks);
    v.m_RowSums = reinterpret_cast<const int32_t*>(blob + l.m_RowSums);
    v.m_RowStart = reinterpret_cast<const uint32_t*>(blob + l.m_RowStart);
    v.m_Corrections = reinterpret_cast<const ConvCorrection*>(blob + l.m_Corrections);
    v.m_Dense = v.m_Header->m_Dense != 0 ? reinterpret_cast<const int8_t*>(blob + l.m_Dense) : nullptr;
    v.m_XOffsets = v.m_Header->m_Pairings != 0 ? reinterpret_cast<const int32_t*>(blob + l.m_XOffsets) : nullptr;
    v.m_Shifts = shifts ? reinterpret_cast<const int32_t*>(blob + l.m_Shifts) : nullptr;
    v.m_QuadVariants = quadVariants ? blob + l.m_QuadVariants : nullptr;
    v.m_TwinPairs = v.m_Header->m_Twin != 0 ? reinterpret_cast<const uint32_t*>(blob + l.m_TwinPairs) : nullptr;
    return v;
}

/// u8 x s8 products of a quad: vpmaddubsw adds each pair in 16 bits (exact: 255 x 128 < 2^15 for
/// the pairs the packing leaves), vpmaddwd by ones the two pairs into 32 bits.
__attribute__((target("avx2"), always_inline)) inline __m256i QuadSums(__m256i x, __m256i w, __m256i ones) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(x, w), ones);
}

/// The sums of one convolution tile: start[r] plus R rows of a weight block ([quad][rows][4] int8)
/// times one panel of taps ([quad][16 pixels][4] u8; kPairs: [quad][pairing][16][4], quad q of
/// this block at panel + xOffsets[q]), then each row's corrections (corr + rowStart[r] up to corr +
/// rowStart[r + 1]); into sums[r][0] (pixels 0-7) and sums[r][1] (8-15; not computed when kHalf:
/// a panel whose pixels are all in 0-7).
/// kPairs: 0, 1 (positions at xOffsets), or 2 (twin quads: positions at xOffsets, the first
/// `twinQuads` two at a time, their products added in 16 bits before vpmaddwd; R <= 4).
template <int R, bool kHalf, int kPairs, bool kPrefetch>
__attribute__((target("avx2"), always_inline)) inline void ConvTileSums(const int8_t* w, const int8_t* next, const uint8_t* panel,
                                                                         const int32_t* xOffsets, std::size_t quads, std::size_t rows,
                                                                         const ConvCorrection* corr,
                                                                         const uint32_t* rowStart, const int32_t* start,
                                                                         __m256i (&sums)[kRows][2], std::size_t twinQuads = 0) {
    static_assert(kPairs != 2 || R <= 4, "twin quads: 4 rows at most (8 sums, 4 vectors of taps, 2 weights, 2 products)");
    const __m256i ones = _mm256_set1_epi16(1);
    // vpmaddwd by ones; with twin quads read from memory (its own register would push a sum onto
    // the stack, stored and reloaded every pass).
    alignas(32) static constexpr int16_t kOnes[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    const auto maddOnes = [&](__m256i t) __attribute__((target("avx2"), always_inline)) {
        if constexpr (kPairs == 2) {
            __m256i r;
            asm("vpmaddwd %1, %2, %0" : "=x"(r) : "m"(*reinterpret_cast<const __m256i*>(kOnes)), "x"(t));
            return r;
        } else {
            return _mm256_madd_epi16(t, ones);
        }
    };
    // Rows past R start at 0 (start holds R values).
    const __m256i zero = _mm256_setzero_si256();
    __m256i c0a = _mm256_set1_epi32(start[0]), c0b = c0a, c1a = R > 1 ? _mm256_set1_epi32(start[1]) : zero, c1b = c1a;
    __m256i c2a = R > 2 ? _mm256_set1_epi32(start[2]) : zero, c2b = c2a, c3a = R > 3 ? _mm256_set1_epi32(start[3]) : zero, c3b = c3a;
    __m256i c4a = R > 4 ? _mm256_set1_epi32(start[4]) : zero, c4b = c4a, c5a = zero, c5b = c5a;
// One row: its quad of weights broadcast, times both vectors of the panel, added to its sums.
#define TRELLIS_INTEGER_CONV_ROW(lo, hi, quad)                                                     \
    do {                                                                                           \
        int32_t v_;                                                                                \
        std::memcpy(&v_, (quad), sizeof(v_));                                                      \
        const __m256i w_ = _mm256_set1_epi32(v_);                                                  \
        (lo) = _mm256_add_epi32((lo), maddOnes(_mm256_maddubs_epi16(x0, w_)));                     \
        if constexpr (!kHalf) (hi) = _mm256_add_epi32((hi), maddOnes(_mm256_maddubs_epi16(x1, w_))); \
    } while (false)
// Two positions' weights broadcast, their products with their taps added in 16 bits, one vpmaddwd.
#define TRELLIS_INTEGER_CONV_TWIN_ROW(lo, hi, qa, qb)                                                              \
    do {                                                                                                           \
        int32_t va_, vb_;                                                                                          \
        std::memcpy(&va_, (qa), sizeof(va_));                                                                      \
        std::memcpy(&vb_, (qb), sizeof(vb_));                                                                      \
        const __m256i wa_ = _mm256_set1_epi32(va_), wb_ = _mm256_set1_epi32(vb_);                                  \
        (lo) = _mm256_add_epi32((lo), maddOnes(_mm256_add_epi16(_mm256_maddubs_epi16(xa0, wa_),                    \
                                                                _mm256_maddubs_epi16(xb0, wb_))));                 \
        if constexpr (!kHalf) {                                                                                    \
            (hi) = _mm256_add_epi32((hi), maddOnes(_mm256_add_epi16(_mm256_maddubs_epi16(xa1, wa_),                \
                                                                    _mm256_maddubs_epi16(xb1, wb_))));             \
        }                                                                                                          \
    } while (false)
    std::size_t q = 0;
    if constexpr (kPairs == 2) {
        for (; q < twinQuads; q += 2) {
            const uint8_t* xa = panel + xOffsets[q];
            const uint8_t* xb = panel + xOffsets[q + 1];
            const __m256i xa0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xa));
            const __m256i xa1 = kHalf ? xa0 : _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xa + 32));
            const __m256i xb0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xb));
            const __m256i xb1 = kHalf ? xb0 : _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xb + 32));
            const int8_t* wa = w + q * 4 * rows;
            const int8_t* wb = wa + 4 * rows;
            if constexpr (kPrefetch) _mm_prefetch(reinterpret_cast<const char*>(next + q * 4 * rows), _MM_HINT_T0);
            TRELLIS_INTEGER_CONV_TWIN_ROW(c0a, c0b, wa, wb);
            if constexpr (R > 1) TRELLIS_INTEGER_CONV_TWIN_ROW(c1a, c1b, wa + 4, wb + 4);
            if constexpr (R > 2) TRELLIS_INTEGER_CONV_TWIN_ROW(c2a, c2b, wa + 8, wb + 8);
            if constexpr (R > 3) TRELLIS_INTEGER_CONV_TWIN_ROW(c3a, c3b, wa + 12, wb + 12);
        }
    }
#undef TRELLIS_INTEGER_CONV_TWIN_ROW
    for (; q < quads; ++q) {
        const uint8_t* xq = kPairs ? panel + xOffsets[q] : panel + q * 4 * kPanel;
        const __m256i x0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq));
        const __m256i x1 = kHalf ? x0 : _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq + 32));
        const int8_t* wq = w + q * 4 * rows;
        // The next block's weights on their way to L1 (from memory for the large layers: resnet50's
        // 1 MB 1x1 convolutions of layer4 ran 45% slower in the model than with their weights in L2);
        // not where they stay in L1 / L2 anyway (PrefetchesWeights).
        if constexpr (kPrefetch) _mm_prefetch(reinterpret_cast<const char*>(next + q * 4 * rows), _MM_HINT_T0);
        TRELLIS_INTEGER_CONV_ROW(c0a, c0b, wq);
        if constexpr (R > 1) TRELLIS_INTEGER_CONV_ROW(c1a, c1b, wq + 4);
        if constexpr (R > 2) TRELLIS_INTEGER_CONV_ROW(c2a, c2b, wq + 8);
        if constexpr (R > 3) TRELLIS_INTEGER_CONV_ROW(c3a, c3b, wq + 12);
        if constexpr (R > 4) TRELLIS_INTEGER_CONV_ROW(c4a, c4b, wq + 16);
        if constexpr (R > 5) TRELLIS_INTEGER_CONV_ROW(c5a, c5b, wq + 20);
    }
#undef TRELLIS_INTEGER_CONV_ROW
// A row's corrections, into its own registers (no store and reload per correction).
#define TRELLIS_INTEGER_CONV_CORRECT(r, lo, hi)                                                                        \
    for (const ConvCorrection *c_ = corr + rowStart[r], *e_ = corr + rowStart[(r) + 1]; c_ != e_; ++c_) {            \
        const uint8_t* xq_ = panel + c_->m_Quad * 4 * kPanel;                                                        \
        const __m256i w_ = _mm256_set1_epi32(c_->m_Bytes);                                                           \
        (lo) = _mm256_add_epi32((lo), maddOnes(_mm256_maddubs_epi16(                                                 \
                                          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq_)), w_)));          \
        if constexpr (!kHalf) {                                                                                      \
            (hi) = _mm256_add_epi32((hi), maddOnes(_mm256_maddubs_epi16(                                             \
                                              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq_ + 32)), w_))); \
        }                                                                                                            \
    }
    TRELLIS_INTEGER_CONV_CORRECT(0, c0a, c0b)
    if constexpr (R > 1) TRELLIS_INTEGER_CONV_CORRECT(1, c1a, c1b)
    if constexpr (R > 2) TRELLIS_INTEGER_CONV_CORRECT(2, c2a, c2b)
    if constexpr (R > 3) TRELLIS_INTEGER_CONV_CORRECT(3, c3a, c3b)
    if constexpr (R > 4) TRELLIS_INTEGER_CONV_CORRECT(4, c4a, c4b)
#undef TRELLIS_INTEGER_CONV_CORRECT
    sums[0][0] = c0a, sums[0][1] = c0b, sums[1][0] = c1a, sums[1][1] = c1b, sums[2][0] = c2a, sums[2][1] = c2b;
    sums[3][0] = c3a, sums[3][1] = c3b, sums[4][0] = c4a, sums[4][1] = c4b, sums[5][0] = c5a, sums[5][1] = c5b;
}

/// A tile's requantization (IntegerConvOutput::m_Requantize) as vectors.
struct Requantization {
    __m256 m_Scale, m_OutScale, m_Reciprocal, m_Lo, m_Hi;
    __m256i m_Zp;
    bool m_Relu, m_ByReciprocal;
};
__attribute__((target("avx2"), always_inline)) inline Requantization RequantizationOf(const IntegerConvOutput& out) {
    const float zp = static_cast<float>(out.m_RequantOutZeroPoint);
    return {_mm256_set1_ps(out.m_RequantScale),
            _mm256_set1_ps(out.m_RequantOutScale),
            _mm256_set1_ps(out.m_RequantReciprocal),
            _mm256_set1_ps((out.m_RequantOutSigned ? -128.0f : 0.0f) - zp),
            _mm256_set1_ps((out.m_RequantOutSigned ? 127.0f : 255.0f) - zp),
            _mm256_set1_epi32(out.m_RequantOutZeroPoint),
            out.m_RequantRelu,
            out.m_RequantReciprocal != 0.0f};
}
/// t (a quantized value less its zero point) dequantized (float(t) * scale), Relu, quantized again
/// (divided by the output scale - or multiplied by its reciprocal where that was checked to give
/// the same for every t - clamped, rounded half to even, the output zero point added):
/// DequantizeLinear, Relu and QuantizeLinear as their kernels compute them.
__attribute__((target("avx2"), always_inline)) inline __m256i Requantize(__m256i t, const Requantization& r) {
    __m256 d = _mm256_mul_ps(_mm256_cvtepi32_ps(t), r.m_Scale);
    if (r.m_Relu) d = _mm256_max_ps(d, _mm256_setzero_ps());
    return r.m_ByReciprocal ? vecmath::ClampRoundAvx2(_mm256_mul_ps(d, r.m_Reciprocal), r.m_Lo, r.m_Hi, r.m_Zp)
                            : vecmath::QuantizeAvx2(d, r.m_OutScale, r.m_Lo, r.m_Hi, r.m_Zp);
}

/// One row's 16 sums as float times the channel's scale (scales[0], or scales[ch] per channel),
/// plus its float bias (or none).
__attribute__((target("avx2"), always_inline)) inline void ScaledRow(const __m256i (&sums)[2], std::size_t ch, const float* scales,
                                                                      bool perChannel, const float* floatBias, __m256& v0, __m256& v1) {
    const __m256 s = _mm256_set1_ps(scales[perChannel ? ch : 0]);
    v0 = _mm256_mul_ps(_mm256_cvtepi32_ps(sums[0]), s), v1 = _mm256_mul_ps(_mm256_cvtepi32_ps(sums[1]), s);
    if (floatBias) {
        const __m256 fb = _mm256_set1_ps(floatBias[ch]);
        v0 = _mm256_add_ps(v0, fb), v1 = _mm256_add_ps(v1, fb);
    }
}

/// One row's 16 values requantized (IntegerConvOutput::m_Requantize), as 16 bits in vpackssdw's order
/// ([0-3, 8-11 | 4-7, 12-15]): float(sums) times the channel's scale, plus its float bias, clamped
/// to [vlo, vhi] (the first quantization's range less its zero point, Relu merged into vlo) and
/// rounded (the current rounding mode: half to even), then requantized (Requantize).
__attribute__((target("avx2"), always_inline)) inline __m256i RequantizedRow(const __m256i (&sums)[2], std::size_t ch, const float* scales,
                                                                              bool perChannel, const float* floatBias, __m256 vlo,
                                                                              __m256 vhi, const Requantization& rq) {
    __m256 v0, v1;
    ScaledRow(sums, ch, scales, perChannel, floatBias, v0, v1);
    const __m256i t0 = _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(v0, vlo), vhi));
    const __m256i t1 = _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(v1, vlo), vhi));
    return _mm256_packs_epi32(Requantize(t0, rq), Requantize(t1, rq));
}

/// One row's 16 values, float(sums) times the channel's scale plus its float bias, [Relu], rounded
/// (the current rounding mode: half to even) to int32 after only the upper clamp (hi: the type's
/// largest less the zero point): the lower bound is left to the saturating packs that follow
/// (StoreQuantizedRows) - a value below it, a NaN and -inf (vcvtps2dq's 0x80000000) all saturate
/// to the type's smallest, as the clamp gave them; min(hi, v) lets a NaN through to that.
/// `outScale`: a QDQ matmul's output scale the values are divided by after the Relu (null: none,
/// the scales already divided by it).
/// `upper`: false where the caller knows every value is below 2^31 (vcvtps2dq exact), so that the
/// saturating packs that follow give the upper bound as the clamp would.
__attribute__((target("avx2"), always_inline)) inline void RoundedRow(const __m256i (&sums)[2], std::size_t ch, const float* scales,
                                                                       bool perChannel, const float* floatBias, bool relu, __m256 vhi,
                                                                       __m256i& t0, __m256i& t1, const __m256* outScale = nullptr,
                                                                       bool upper = true) {
    __m256 v0, v1;
    ScaledRow(sums, ch, scales, perChannel, floatBias, v0, v1);
    if (relu) {  // v first: a NaN gives 0, as the clamp's lower bound 0 gave it
        v0 = _mm256_max_ps(v0, _mm256_setzero_ps()), v1 = _mm256_max_ps(v1, _mm256_setzero_ps());
    }
    if (outScale) v0 = _mm256_div_ps(v0, *outScale), v1 = _mm256_div_ps(v1, *outScale);
    if (upper) v0 = _mm256_min_ps(vhi, v0), v1 = _mm256_min_ps(vhi, v1);
    t0 = _mm256_cvtps_epi32(v0);
    t1 = _mm256_cvtps_epi32(v1);
}

/// RoundedRow's 16 int32 packed to 16 bits with saturation, the zero point added with saturation
/// ([0-3, 8-11 | 4-7, 12-15] as vpackssdw orders them).
/// `addZp`: false where the zero point is 0.
__attribute__((target("avx2"), always_inline)) inline __m256i PackedRow(const __m256i (&sums)[2], std::size_t ch, const float* scales,
                                                                         bool perChannel, const float* floatBias, bool relu,
                                                                         __m256 vhi, __m256i zp16, const __m256* outScale = nullptr,
                                                                         bool upper = true, bool addZp = true) {
    __m256i t0, t1;
    RoundedRow(sums, ch, scales, perChannel, floatBias, relu, vhi, t0, t1, outScale, upper);
    const __m256i packed = _mm256_packs_epi32(t0, t1);
    return addZp ? _mm256_adds_epi16(packed, zp16) : packed;
}

/// Row ch's 16 values as 16 bits for StoreQuantizedRows: requantized (RequantizedRow), or rounded
/// with the zero point added (PackedRow).
template <bool kRequant>
__attribute__((target("avx2"), always_inline)) inline __m256i Row16(const __m256i (&sums)[2], std::size_t ch, const float* scales,
                                                                     bool perChannel, const float* floatBias, bool relu, __m256 vlo,
                                                                     __m256 vhi, __m256i zp16, const Requantization& rq, bool upper,
                                                                     bool addZp) {
    if constexpr (kRequant) return RequantizedRow(sums, ch, scales, perChannel, floatBias, vlo, vhi, rq);
    else return PackedRow(sums, ch, scales, perChannel, floatBias, relu, vhi, zp16, nullptr, upper, addZp);
}

/// The usual end of a tile: R rows of 16 whole sums (bias included) times the scale, the float bias
/// added, Relu, quantized as QuantizeLinear with scale 1 and out.m_ZeroPoint computes it (clamped
/// to the type's range less the zero point, rounded half to even, the zero point added; kRequant:
/// requantized as out says) and stored as 8 bits to `to` (row r at to + r * planeSize). Its own
/// function: the general epilogue's branches and reloads (every byte store may alias `out`) took a
/// quarter of a depth-64 layer's time (resnet50's 1x1 convolutions of 64 channels: 0.81 -> 0.72 ms).
/// What StoreQuantizedRows needs of the output, as values (a tile run works it out once: read from
/// `out` it is read again after every byte store, which may alias it).
struct QuantizedStore {
    __m256 m_Lo, m_Hi;
    __m256i m_Zp16;
    const float* m_Scales;
    const float* m_FloatBias;
    bool m_PerChannel, m_Relu, m_OutSigned;
    Requantization m_Requant;
    /// Not requantized: whether the values need the upper clamp before vcvtps2dq (QuantizedStoreOf:
    /// yes; a tile run that bounds them below 2^31 clears it: ConvTileRun), and whether the zero
    /// point is added (not where it is 0).
    bool m_Upper, m_AddZp;
};
template <bool kRequant>
__attribute__((target("avx2"), always_inline)) inline QuantizedStore QuantizedStoreOf(const IntegerConvOutput& out, const float* scales,
                                                                                       bool perChannel) {
    const float zp = static_cast<float>(out.m_ZeroPoint);
    // Relu, then the clamp's lower bound: one max (a NaN gives the bound either way).
    float lower = (out.m_Signed ? -128.0f : 0.0f) - zp;
    if (out.m_Relu) lower = std::max(lower, 0.0f);
    // Not requantized, a Relu is the saturating packs' own lower bound where the zero point is the
    // type's smallest (a u8 output's 0): a value below 0 (a NaN too: vcvtps2dq's 0x80000000) packs
    // to it, as max(v, 0) does.
    const bool reluNeeded = kRequant || out.m_ZeroPoint != (out.m_Signed ? -128 : 0);
    return {_mm256_set1_ps(lower),
            _mm256_set1_ps((out.m_Signed ? 127.0f : 255.0f) - zp),
            _mm256_set1_epi16(static_cast<int16_t>(out.m_ZeroPoint)),
            scales,
            out.m_FloatBias,
            perChannel,
            out.m_Relu && reluNeeded,
            kRequant ? out.m_RequantOutSigned : out.m_Signed,
            RequantizationOf(out),
            true,
            out.m_ZeroPoint != 0};
}

/// Four rows' 16 bytes (rows 0-1 in r01's halves, 2-3 in r23's) as 16 pixels' 4 bytes ([pixel][4]):
/// pixels 0-7 in p07, 8-15 in p815.
__attribute__((target("avx2"), always_inline)) inline void PixelQuads(__m256i r01, __m256i r23, __m256i& p07, __m256i& p815) {
    const __m256i r02 = _mm256_permute2x128_si256(r01, r23, 0x20), r13 = _mm256_permute2x128_si256(r01, r23, 0x31);
    // Rows 0 and 1 byte by byte (pixels 0-7 | rows 2 and 3's), then pixels 8-15 likewise.
    const __m256i lo = _mm256_unpacklo_epi8(r02, r13), hi = _mm256_unpackhi_epi8(r02, r13);
    const __m256i w01 = _mm256_permute2x128_si256(lo, hi, 0x20), w23 = _mm256_permute2x128_si256(lo, hi, 0x31);
    // Each pixel's rows 0-1 beside its rows 2-3: pixels [0-3 | 8-11] and [4-7 | 12-15].
    const __m256i p0 = _mm256_unpacklo_epi16(w01, w23), p1 = _mm256_unpackhi_epi16(w01, w23);
    p07 = _mm256_permute2x128_si256(p0, p1, 0x20);
    p815 = _mm256_permute2x128_si256(p0, p1, 0x31);
}

/// Four rows' 16 bytes (as PixelQuads takes them) as 16 pixels of one channel quad ([pixel][4]) at
/// `to`: 64 bytes.
__attribute__((target("avx2"), always_inline)) inline void StoreChannelQuad(__m256i r01, __m256i r23, uint8_t* to) {
    __m256i p07, p815;
    PixelQuads(r01, r23, p07, p815);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(to), p07);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(to + 32), p815);
}

/// kQuads: the R (4) rows as one channel quad at `to` (IntegerConvOutput::m_ChannelQuads).
template <int R, bool kRequant, bool kQuads = false>
__attribute__((target("avx2"), always_inline)) inline void StoreQuantizedRows(const __m256i (&sums)[kRows][2], std::size_t channel,
                                                                               const QuantizedStore& k, uint8_t* to, std::size_t planeSize) {
    const __m256 vlo = k.m_Lo, vhi = k.m_Hi;
    const __m256i zp16 = k.m_Zp16;
    const float* scales = k.m_Scales;
    const float* floatBias = k.m_FloatBias;
    const bool perChannel = k.m_PerChannel, relu = k.m_Relu, outSigned = k.m_OutSigned, upper = k.m_Upper, addZp = k.m_AddZp;
    const Requantization& rq = k.m_Requant;
    // Each row's 16 values as 16 bits (Row16). Not requantized: rounded with only the upper clamp (RoundedRow),
    // packed to 16 bits with saturation, the zero point added with saturation, packed to 8 bits with
    // saturation below - the same bytes as the clamp to the type's range less the zero point, the
    // rounding and the zero point added in 32 bits (the bounds are integers, so clamping before or
    // after the rounding is the same), two vector operations fewer per 8 values (1x1 256->64 @56
    // 0.73 -> 0.65 ms).
    // Two rows at a time: each row's 16 bytes in order in a half (PackWordsInOrderAvx2).
    if constexpr (kQuads) {
        static_assert(R == 4, "a channel quad is 4 rows");
        const auto pair = [&](int r) __attribute__((target("avx2"))) {
            return vecmath::PackWordsInOrderAvx2(
                Row16<kRequant>(sums[r], channel + static_cast<std::size_t>(r), scales, perChannel, floatBias, relu, vlo, vhi, zp16, rq,
                                upper, addZp),
                Row16<kRequant>(sums[r + 1], channel + static_cast<std::size_t>(r + 1), scales, perChannel, floatBias, relu, vlo, vhi,
                                zp16, rq, upper, addZp),
                outSigned);
        };
        StoreChannelQuad(pair(0), pair(2), to);
        return;
    }
    int r = 0;
    for (; r + 1 < R; r += 2) {
        const __m256i a = Row16<kRequant>(sums[r], channel + static_cast<std::size_t>(r), scales, perChannel, floatBias, relu, vlo, vhi,
                                          zp16, rq, upper, addZp);
        const __m256i b = Row16<kRequant>(sums[r + 1], channel + static_cast<std::size_t>(r + 1), scales, perChannel, floatBias, relu, vlo,
                                          vhi, zp16, rq, upper, addZp);
        const __m256i bytes = vecmath::PackWordsInOrderAvx2(a, b, outSigned);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(to + static_cast<std::size_t>(r) * planeSize), _mm256_castsi256_si128(bytes));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(to + static_cast<std::size_t>(r + 1) * planeSize),
                         _mm256_extracti128_si256(bytes, 1));
    }
    if (r < R) {
        const __m256i w16 = _mm256_permute4x64_epi64(
            Row16<kRequant>(sums[r], channel + static_cast<std::size_t>(r), scales, perChannel, floatBias, relu, vlo, vhi, zp16, rq, upper,
                            addZp),
            0xD8);
        const __m128i lo = _mm256_castsi256_si128(w16), hi = _mm256_extracti128_si256(w16, 1);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(to + static_cast<std::size_t>(r) * planeSize),
                         outSigned ? _mm_packs_epi16(lo, hi) : _mm_packus_epi16(lo, hi));
    }
}

/// A matmul's tile of kConvRows rows (columns ch..ch+4 of C) and 16 whole pixels (rows of C,
/// `rowBytes` apart from `to`) as 8 bits, not requantized: each value float(sum) times the scale,
/// plus the float bias, [Relu], divided by the output scale where it is not 1 (PackedRow; the same
/// bytes as StoreTile's general loop). The five rows transposed in
/// registers and stored as each pixel's 4 + 1 bytes: the general loop's 80 byte stores, each
/// reloaded from the stack, took about 5% of BERT's 128x768x3072 product.
__attribute__((target("avx2"), always_inline)) inline void StorePixelMajorRows(const __m256i (&sums)[kRows][2], std::size_t channel,
                                                                                const QuantizedStore& k, float outScale, uint8_t* to,
                                                                                std::size_t rowBytes) {
    const __m256 vOutScale = _mm256_set1_ps(outScale);
    const __m256* divisor = outScale != 1.0f ? &vOutScale : nullptr;
    const auto row16 = [&](std::size_t r) __attribute__((target("avx2"), always_inline)) {
        return PackedRow(sums[r], channel + r, k.m_Scales, k.m_PerChannel, k.m_FloatBias, k.m_Relu, k.m_Hi, k.m_Zp16, divisor, true,
                         k.m_AddZp);
    };
    const __m256i r01 = vecmath::PackWordsInOrderAvx2(row16(0), row16(1), k.m_OutSigned);
    const __m256i r23 = vecmath::PackWordsInOrderAvx2(row16(2), row16(3), k.m_OutSigned);
    const __m256i w4 = row16(4);
    const __m256i r44 = vecmath::PackWordsInOrderAvx2(w4, w4, k.m_OutSigned);
    alignas(32) uint8_t quads[64];
    alignas(16) uint8_t last[16];
    __m256i p07, p815;
    PixelQuads(r01, r23, p07, p815);
    _mm256_store_si256(reinterpret_cast<__m256i*>(quads), p07);
    _mm256_store_si256(reinterpret_cast<__m256i*>(quads + 32), p815);
    _mm_store_si128(reinterpret_cast<__m128i*>(last), _mm256_castsi256_si128(r44));
    for (std::size_t j = 0; j < kPanel; ++j) {
        std::memcpy(to + j * rowBytes, quads + 4 * j, 4);
        to[j * rowBytes + 4] = last[j];
    }
}

/// Where output channel ch's sums start: its Signed32 bias less zp times its weights' sum (plus
/// what its complemented taps' sums lack: m_Shifts), in wrapping int32 (unsigned: no overflow in
/// C++); the result, (x - zp) * w summed, fits.
int32_t RowStart(const ConvWeights& wts, std::size_t ch, const int32_t* bias, int32_t zp) {
    return static_cast<int32_t>(static_cast<uint32_t>(bias ? bias[ch] : 0) -
                                static_cast<uint32_t>(zp) * static_cast<uint32_t>(wts.m_RowSums[ch]) +
                                static_cast<uint32_t>(wts.m_Shifts ? wts.m_Shifts[ch] : 0));
}

/// The epilogue of a tile's sums (bias included; lane j of sums[r] pixel lane j of the panel, rows:
/// output channels from `channel`): float(sum) * scale (one, or per channel), stored as Float32, or
/// quantized as QuantizeLinear with scale 1 and out.m_ZeroPoint computes it (clamped to the type's
/// range less the zero point, rounded half to even by the current rounding mode, the zero point
/// added; requantized where out says) and stored as 8 bits, the lanes `runs` names.
template <int R>
__attribute__((target("avx2"), always_inline)) inline void StoreTile(const __m256i (&sums)[kRows][2], std::size_t channel,
                                                                      const float* scales, bool perChannel, const IntegerConvOutput& out,
                                                                      std::size_t planeSize, const PanelRuns& runs) {
    const bool whole = runs.m_Count == 1 && runs.m_Lane[0] == 0 && runs.m_Length[0] == kPanel;
    if constexpr (R == kQuadRows) {
        if (whole && out.m_ChannelQuads && out.m_OutScale == 1.0f) {
            uint8_t* to = out.m_Quantized + (channel / 4 * planeSize + runs.m_Pixel[0]) * 4;
            if (out.m_Requantize) {
                StoreQuantizedRows<R, true, true>(sums, channel, QuantizedStoreOf<true>(out, scales, perChannel), to, planeSize);
            } else {
                StoreQuantizedRows<R, false, true>(sums, channel, QuantizedStoreOf<false>(out, scales, perChannel), to, planeSize);
            }
            return;
        }
    }
    if constexpr (R == kConvRows) {
        if (whole && out.m_Quantized && out.m_PixelMajor && !out.m_Requantize) {
            StorePixelMajorRows(sums, channel, QuantizedStoreOf<false>(out, scales, perChannel), out.m_OutScale,
                                out.m_Quantized + runs.m_Pixel[0] * planeSize + channel, planeSize);
            return;
        }
    }
    if (whole && out.m_Quantized && !out.m_PixelMajor && !out.m_ChannelQuads && out.m_OutScale == 1.0f) {
        uint8_t* to = out.m_Quantized + channel * planeSize + runs.m_Pixel[0];
        if (out.m_Requantize) StoreQuantizedRows<R, true>(sums, channel, QuantizedStoreOf<true>(out, scales, perChannel), to, planeSize);
        else StoreQuantizedRows<R, false>(sums, channel, QuantizedStoreOf<false>(out, scales, perChannel), to, planeSize);
        return;
    }
    const float lo = out.m_Signed ? -128.0f : 0.0f, hi = out.m_Signed ? 127.0f : 255.0f;
    const __m256 vlo = _mm256_set1_ps(lo - static_cast<float>(out.m_ZeroPoint));
    const __m256 vhi = _mm256_set1_ps(hi - static_cast<float>(out.m_ZeroPoint));
    const __m256i outZp = _mm256_set1_epi32(out.m_ZeroPoint);
    const Requantization rq = RequantizationOf(out);
    const __m256 outScale = _mm256_set1_ps(out.m_OutScale);
    for (int r = 0; r < R; ++r) {
        const std::size_t ch = channel + static_cast<std::size_t>(r);
        __m256 v0, v1;
        ScaledRow(sums[r], ch, scales, perChannel, out.m_FloatBias, v0, v1);
        if (out.m_Relu) {
            v0 = _mm256_max_ps(v0, _mm256_setzero_ps());
            v1 = _mm256_max_ps(v1, _mm256_setzero_ps());
        }
        const std::size_t plane = ch * planeSize;
        if (out.m_Float && out.m_PixelMajor) {
            // A matmul's C rows: this channel (column) of each pixel's (row's) row.
            alignas(32) float tmp[kPanel];
            _mm256_store_ps(tmp, v0);
            _mm256_store_ps(tmp + 8, v1);
            for (std::size_t j = 0; j < runs.m_Length[0]; ++j) out.m_Float[(runs.m_Pixel[0] + j) * planeSize + ch] = tmp[j];
            continue;
        }
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
        if (out.m_OutScale != 1.0f) v0 = _mm256_div_ps(v0, outScale), v1 = _mm256_div_ps(v1, outScale);
        // max(v, lo) with v first: a NaN gives lo, as the quantize kernel does. t: q less the zero point.
        const __m256i t0 = _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(v0, vlo), vhi));
        const __m256i t1 = _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(v1, vlo), vhi));
        __m256i q0, q1;
        bool outSigned = out.m_Signed;
        if (out.m_Requantize) {
            q0 = Requantize(t0, rq), q1 = Requantize(t1, rq);
            outSigned = out.m_RequantOutSigned;
        } else {
            q0 = _mm256_add_epi32(t0, outZp), q1 = _mm256_add_epi32(t1, outZp);
        }
        // The 16 int32 (each within the type's range) to 16 bytes, in order.
        const __m256i w16 = _mm256_permute4x64_epi64(_mm256_packs_epi32(q0, q1), 0xD8);
        const __m128i w16lo = _mm256_castsi256_si128(w16), w16hi = _mm256_extracti128_si256(w16, 1);
        const __m128i bytes = outSigned ? _mm_packs_epi16(w16lo, w16hi) : _mm_packus_epi16(w16lo, w16hi);
        if (whole && !out.m_PixelMajor && !out.m_ChannelQuads) {
            _mm_storeu_si128(reinterpret_cast<__m128i*>(out.m_Quantized + plane + runs.m_Pixel[0]), bytes);
            continue;
        }
        alignas(16) uint8_t tmp[kPanel];
        _mm_store_si128(reinterpret_cast<__m128i*>(tmp), bytes);
        if (out.m_ChannelQuads) {
            // Byte ch % 4 of each pixel of quad ch / 4.
            uint8_t* quad = out.m_Quantized + (ch / 4 * planeSize) * 4 + ch % 4;
            for (int u = 0; u < runs.m_Count; ++u) {
                for (std::size_t j = 0; j < runs.m_Length[u]; ++j) quad[(runs.m_Pixel[u] + j) * 4] = tmp[runs.m_Lane[u] + j];
            }
            continue;
        }
        if (out.m_PixelMajor) {
            for (std::size_t j = 0; j < runs.m_Length[0]; ++j) out.m_Quantized[(runs.m_Pixel[0] + j) * planeSize + ch] = tmp[j];
            continue;
        }
        for (int u = 0; u < runs.m_Count; ++u) {
            std::memcpy(out.m_Quantized + plane + runs.m_Pixel[u], tmp + runs.m_Lane[u], runs.m_Length[u]);
        }
    }
}

/// One tile of the convolution (rows: output channels, columns: 16 output pixels): the sums, from
/// each row's RowStart, then StoreTile.
template <int R, bool kHalf, int kPairs, bool kPrefetch>
__attribute__((target("avx2"))) void ConvTile(const ConvWeights& wts, std::size_t block, const uint8_t* panel, int32_t zp,
                                              const int32_t* bias, const float* scales, bool perChannel,
                                              const IntegerConvOutput& out, std::size_t planeSize, const PanelRuns& runs) {
    const std::size_t quads = wts.m_Header->m_Quads, rows = wts.m_Header->m_Rows, channel = block * rows;
    int32_t start[kRows] = {};
    for (int r = 0; r < R; ++r) start[r] = RowStart(wts, channel + static_cast<std::size_t>(r), bias, zp);
    __m256i sums[kRows][2];
    const std::size_t next = block + 1 < wts.m_Header->m_Blocks ? block + 1 : block;
    constexpr int kMode = kPairs == 2 && R > 4 ? 1 : kPairs;  // (never packed so: twin blocks have 4 rows)
    ConvTileSums<R, kHalf, kMode, kPrefetch>(wts.m_Blocks + block * quads * 4 * rows, wts.m_Blocks + next * quads * 4 * rows, panel,
                                             kPairs ? wts.m_XOffsets + block * quads : nullptr, quads, rows, wts.m_Corrections,
                                             wts.m_RowStart + block * rows, start, sums,
                                             wts.m_TwinPairs ? 2 * std::size_t{wts.m_TwinPairs[block]} : 0);
    StoreTile<R>(sums, channel, scales, perChannel, out, planeSize, runs);
}

/// StoreTile for sums computed elsewhere (a convolution's GEMV pixels: lanes[r][j], row r's sum
/// for panel lane j, bias included), R rows.
template <int R>
__attribute__((target("avx2"))) void StoreSums(const int32_t (&lanes)[kRows][kPanel], std::size_t channel, const float* scales,
                                               bool perChannel, const IntegerConvOutput& out, std::size_t planeSize,
                                               const PanelRuns& runs) {
    __m256i sums[kRows][2];
    for (std::size_t r = 0; r < kRows; ++r) {
        sums[r][0] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(lanes[r]));
        sums[r][1] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(lanes[r] + 8));
    }
    StoreTile<R>(sums, channel, scales, perChannel, out, planeSize, runs);
}
using StoreSumsFn = void (*)(const int32_t (&)[kRows][kPanel], std::size_t, const float*, bool, const IntegerConvOutput&,
                             std::size_t, const PanelRuns&);
constexpr StoreSumsFn kStoreSums[kConvRows + 1] = {nullptr, StoreSums<1>, StoreSums<2>, StoreSums<3>, StoreSums<4>, StoreSums<5>};

using ConvTileFn = void (*)(const ConvWeights&, std::size_t, const uint8_t*, int32_t, const int32_t*, const float*, bool,
                            const IntegerConvOutput&, std::size_t, const PanelRuns&);
/// [half][rows]: the tile for `rows` output channels, over 16 pixels or (half) the first 8; kPairs:
/// over a panel of its variants (weights packed with pairings); kPrefetch: the next block's
/// weights prefetched.
template <int kPairs, bool kPrefetch>
constexpr ConvTileFn kConvTilesOf[2][kConvRows + 1] = {
    {nullptr, ConvTile<1, false, kPairs, kPrefetch>, ConvTile<2, false, kPairs, kPrefetch>, ConvTile<3, false, kPairs, kPrefetch>,
     ConvTile<4, false, kPairs, kPrefetch>, ConvTile<5, false, kPairs, kPrefetch>},
    {nullptr, ConvTile<1, true, kPairs, kPrefetch>, ConvTile<2, true, kPairs, kPrefetch>, ConvTile<3, true, kPairs, kPrefetch>,
     ConvTile<4, true, kPairs, kPrefetch>, ConvTile<5, true, kPairs, kPrefetch>}};
using ConvTileTable = const ConvTileFn (&)[2][kConvRows + 1];
/// paired: 0, 1 (positions at xOffsets) or 2 (twin quads).
ConvTileTable ConvTilesFor(int paired, bool prefetch) {
    if (paired == 2) return prefetch ? kConvTilesOf<2, true> : kConvTilesOf<2, false>;
    if (paired == 1) return prefetch ? kConvTilesOf<1, true> : kConvTilesOf<1, false>;
    return prefetch ? kConvTilesOf<0, true> : kConvTilesOf<0, false>;
}

/// Blocks [from, to) of kR output channels over one whole panel quantized as StoreQuantizedRows does
/// (not requantized), in one call: the per-tile work of a call - its frame, the rows' starts
/// (`starts`: RowStart per channel, worked out once per call), the epilogue's constants - once per
/// run (resnet50's depth-64 1x1 layers spent about a tenth of their tiles' time there).
/// `at`: the panel's first pixel in channel 0's plane (blocks of kConvRows), or (kQuads: blocks of
/// kQuadRows, one quad each) in quad 0 - block blk's bytes start blk * kR * planeSize after it
/// either way. `upper`: whether the values need the upper clamp (UpperClampNeeded).
template <int kPairs, bool kPrefetch, bool kQuads>
__attribute__((target("avx2"))) void ConvTileRun(const ConvWeights& wts, std::size_t from, std::size_t to, const uint8_t* panel,
                                                 const int32_t* starts, const float* scales, bool perChannel,
                                                 const IntegerConvOutput& out, uint8_t* at, std::size_t planeSize, bool upper) {
    QuantizedStore k = QuantizedStoreOf<false>(out, scales, perChannel);
    k.m_Upper = upper;
    constexpr int kR = kQuads ? kQuadRows : kConvRows;
    const std::size_t quads = wts.m_Header->m_Quads, blocks = wts.m_Header->m_Blocks, blockBytes = quads * 4 * kR;
    for (std::size_t blk = from; blk < to; ++blk) {
        __m256i sums[kRows][2];
        const std::size_t next = blk + 1 < blocks ? blk + 1 : blk;
        constexpr int kMode = kPairs == 2 && kR > 4 ? 1 : kPairs;  // (never packed so: twin blocks have 4 rows)
        ConvTileSums<kR, false, kMode, kPrefetch>(
            wts.m_Blocks + blk * blockBytes, wts.m_Blocks + next * blockBytes, panel, kPairs ? wts.m_XOffsets + blk * quads : nullptr,
            quads, kR, wts.m_Corrections, wts.m_RowStart + blk * kR, starts + blk * kR, sums,
            wts.m_TwinPairs ? 2 * std::size_t{wts.m_TwinPairs[blk]} : 0);
        StoreQuantizedRows<kR, false, kQuads>(sums, blk * kR, k, at + blk * kR * planeSize, planeSize);
    }
}
/// Blocks a thread runs over every panel before the next ones where all panels are packed first.
constexpr std::size_t kRunBlocks = 4;
using ConvTileRunFn = void (*)(const ConvWeights&, std::size_t, std::size_t, const uint8_t*, const int32_t*, const float*, bool,
                               const IntegerConvOutput&, uint8_t*, std::size_t, bool);

/// Whether a tile run's values need the upper clamp before vcvtps2dq: not where every channel's
/// |float(sum) * scale + float bias| stays below 2^31 (then vcvtps2dq is exact and the saturating
/// packs give the type's largest as the clamp would; a NaN cannot come of finite scales and
/// biases). |sum| is at most |start| (RowStart) plus 255 x 128 per tap. 2^30 leaves room for the
/// float products' rounding.
bool UpperClampNeeded(const int32_t* starts, std::size_t channels, std::size_t taps, const float* scales, bool perChannel,
                      const float* floatBias) {
    double largest = 0.0;
    for (std::size_t ch = 0; ch < channels; ++ch) {
        const double scale = std::fabs(static_cast<double>(scales[perChannel ? ch : 0]));
        const double bias = floatBias ? std::fabs(static_cast<double>(floatBias[ch])) : 0.0;
        if (!std::isfinite(scale) || !std::isfinite(bias)) return true;
        const double sum = std::fabs(static_cast<double>(starts[ch])) + 255.0 * 128.0 * static_cast<double>(taps);
        largest = std::max(largest, sum * scale + bias);
    }
    return !(largest < 1073741824.0);
}
/// [paired: 0, 1, 2 (twin quads)][prefetch][channel quads]
constexpr ConvTileRunFn kConvTileRuns[3][2][2] = {
    {{ConvTileRun<0, false, false>, ConvTileRun<0, false, true>}, {ConvTileRun<0, true, false>, ConvTileRun<0, true, true>}},
    {{ConvTileRun<1, false, false>, ConvTileRun<1, false, true>}, {ConvTileRun<1, true, false>, ConvTileRun<1, true, true>}},
    {{ConvTileRun<2, false, false>, ConvTileRun<2, false, true>}, {ConvTileRun<2, true, false>, ConvTileRun<2, true, true>}}};

/// Weights of more than this many bytes are prefetched block by block in the tiles (a panel-major
/// loop re-reads them for every panel, from L2 or beyond).
constexpr std::size_t kPrefetchWeightBytes = 384 * 1024;
/// Whether the tiles prefetch the next block's weights: where each block runs over every panel
/// (its weights read once, the next one's from memory) or the weights outgrow kPrefetchWeightBytes.
/// Where they stay in L1 / L2 the prefetch is only a cost: resnet50's 1x1 64->256 @56 ran 10%
/// faster without it, 3x3 64 @56 5%; layer4's 1x1 512->2048 @7 with its weights from memory 43%
/// slower.
bool PrefetchesWeights(bool blocksOuter, std::size_t blocks, std::size_t quads, std::size_t rows) {
    return blocksOuter || blocks * quads * 4 * rows > kPrefetchWeightBytes;
}

/// Whether a panel's stored pixels are all in its first 8 lanes.
bool HalfPanel(const PanelRuns& runs) {
    for (int u = 0; u < runs.m_Count; ++u) {
        if (runs.m_Lane[u] + runs.m_Length[u] > kPanel / 2) return false;
    }
    return true;
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

/// A convolution's input copied with its padding (the zero point) around it, so that output pixel
/// (oh, ow) at index oh * m_Width + ow of the padded-width layout reads each tap at that index plus
/// a fixed offset: any 16 consecutive indices read 16 adjacent bytes. Stride 1: one plane per
/// channel of m_Height x m_Width (the output's rows and width plus the kernel's reach), tap (kh, kw)
/// at kh * dilation * m_Width + kw * dilation. Stride 2: the padded input split by the parity of
/// its rows and columns (m_PhasesY x m_PhasesX planes per channel; one where the kernel has one
/// row or column), plane (py, px) holding padded element (2i + py, 2j + px) at (i, j), so tap
/// (kh, kw) reads plane (kh % 2, kw % 2) at (kh / 2) * m_Width + kw / 2 - a stride-1 pattern.
/// m_Plane: the bytes of a plane, with slack after it for the 16-lane reads of the last panel.
struct PaddedInput {
    const void* m_Data = nullptr;
    std::size_t m_Height = 0, m_Width = 0, m_Plane = 0;
    std::size_t m_PhasesY = 1, m_PhasesX = 1;
};

/// Tap k of a convolution: its input channel and its offsets (kernel row and column times the
/// dilation), worked out once per layer (IntegerConvPlan; no divisions per panel or call).
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

/// Tap k of the convolution for the panel's 16 output pixels, as u8 (an s8 input's bytes plus 128,
/// as its zero point is): the input byte each reads, a tap in the padding reading the zero point
/// (so that it adds nothing), missing pixels and taps past the depth 0 (their weights are 0).
template <typename T>
__attribute__((target("avx2"))) __m128i TapRow(const T* x, const Im2ColShape& s, const std::vector<Tap>& taps, std::size_t k,
                                               const PanelPixels& px, bool flat, std::size_t pixel, uint8_t zpU8) {
    if (k >= taps.size()) return _mm_setzero_si128();
    const __m128i toU8 = _mm_set1_epi8(std::is_signed_v<T> ? static_cast<char>(0x80) : 0);
    const std::size_t c = taps[k].m_Channel;
    const T* plane = x + c * s.m_InH * s.m_InW;
    const long dy = taps[k].m_Dy, dx = taps[k].m_Dx;
    const long h = static_cast<long>(s.m_InH), w = static_cast<long>(s.m_InW);
    // The common cases as one 16-byte load: a 1x1 stride-1 unpadded convolution reads the plane as
    // it is; otherwise 16 pixels of one output row at stride 1 (or 2: every other byte of 32), the
    // tap inside the input for all. (Padded copies are read by PackDirectPanel.)
    const T* run = nullptr;
    if (flat) {
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
                return _mm_xor_si128(_mm256_castsi256_si128(_mm256_permute4x64_epi64(even, 0x08)), toU8);
            }
            run = plane + ih * w + iw;
        }
    }
    if (run) return _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(run)), toU8);
    alignas(16) uint8_t v[16];
    for (std::size_t j = 0; j < 16; ++j) {
        const long ih = px.m_Row[j] + dy, iw = px.m_Col[j] + dx;
        const bool inside = px.m_Valid[j] && ih >= 0 && ih < h && iw >= 0 && iw < w;
        v[j] = inside ? static_cast<uint8_t>(static_cast<uint8_t>(plane[ih * w + iw]) ^ (std::is_signed_v<T> ? 0x80 : 0)) : zpU8;
    }
    return _mm_load_si128(reinterpret_cast<const __m128i*>(v));
}

/// Four tap rows of 16 pixels interleaved to the panel's quad layout, (r0[j], r1[j], r2[j], r3[j])
/// per pixel j, at `to` (64 bytes).
__attribute__((target("avx2"), always_inline)) inline void StoreQuad(__m128i r0, __m128i r1, __m128i r2, __m128i r3,
                                                                      uint8_t* to) {
    const __m128i lo01 = _mm_unpacklo_epi8(r0, r1), hi01 = _mm_unpackhi_epi8(r0, r1);
    const __m128i lo23 = _mm_unpacklo_epi8(r2, r3), hi23 = _mm_unpackhi_epi8(r2, r3);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(to), _mm_unpacklo_epi16(lo01, lo23));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(to + 16), _mm_unpackhi_epi16(lo01, lo23));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(to + 32), _mm_unpacklo_epi16(hi01, hi23));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(to + 48), _mm_unpackhi_epi16(hi01, hi23));
}

/// The panel of taps for output pixels [pixel, pixel + 16): [quad][16][4] u8.
template <typename T>
__attribute__((target("avx2"))) void PackConvPanel(const T* x, const Im2ColShape& s, const std::vector<Tap>& taps,
                                                   std::size_t pixel, std::size_t pixels, uint8_t zpU8, uint8_t* out) {
    const std::size_t quads = Quads(taps.size());
    const PanelPixels px = PixelsOf(s, pixel, pixels);
    const bool flat = s.m_KernelH == 1 && s.m_KernelW == 1 && s.m_StrideH == 1 && s.m_StrideW == 1 && s.m_PadTop == 0 &&
                      s.m_PadLeft == 0 && s.m_InW == s.m_OutW && s.m_InH == s.m_OutH && pixel + 16 <= pixels;
    for (std::size_t q = 0; q < quads; ++q) {
        StoreQuad(TapRow(x, s, taps, 4 * q, px, flat, pixel, zpU8), TapRow(x, s, taps, 4 * q + 1, px, flat, pixel, zpU8),
                  TapRow(x, s, taps, 4 * q + 2, px, flat, pixel, zpU8), TapRow(x, s, taps, 4 * q + 3, px, flat, pixel, zpU8),
                  out + q * 4 * kPanel);
    }
}

/// The panel where every tap row is 16 adjacent bytes (a padded copy, or an unpadded stride-1 1x1
/// convolution's planes with 16 pixels left): tap k at from + offsets[k], as u8 (`flip`: an s8
/// input's bytes plus 128); taps past the depth 0. The common case without PackConvPanel's per-tap
/// geometry: about a fifth of a 3x3 layer's time at 64 channels went to that.
__attribute__((target("avx2"))) void PackDirectPanel(const uint8_t* from, const std::ptrdiff_t* offsets, std::size_t depth,
                                                     bool flip, uint8_t* out) {
    const __m128i toU8 = _mm_set1_epi8(flip ? static_cast<char>(0x80) : 0);
    const auto row = [&](std::size_t k) {
        return _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(from + offsets[k])), toU8);
    };
    const std::size_t whole = depth / 4;
    // Each tap row's next cache line on its way to L1 (the panel four on reads it): a 1x1
    // convolution's 64 to 256 channel planes are more streams than the hardware prefetcher follows.
    for (std::size_t k = 0; k < depth; ++k) _mm_prefetch(reinterpret_cast<const char*>(from + offsets[k] + 64), _MM_HINT_T0);
    for (std::size_t q = 0; q < whole; ++q) StoreQuad(row(4 * q), row(4 * q + 1), row(4 * q + 2), row(4 * q + 3), out + q * 4 * kPanel);
    if (whole * 4 < depth) {
        __m128i r[4] = {_mm_setzero_si128(), _mm_setzero_si128(), _mm_setzero_si128(), _mm_setzero_si128()};
        for (std::size_t k = whole * 4; k < depth; ++k) r[k - whole * 4] = row(k);
        StoreQuad(r[0], r[1], r[2], r[3], out + whole * 4 * kPanel);
    }
}

/// A panel of 16 consecutive output pixels over a padded copy that spans output rows: lane j reads
/// tap k at from + offsets[k] + rel[j] (rel: the pixel's index in the padded-width layout less the
/// first one's; lanes past the output read rel 0, not stored). Where the 16 lanes span at most 32
/// bytes (a row's end and the next's start with their padding; resnet50's 14x14 and 7x7 maps: two
/// or three rows), two 16-byte loads and a byte shuffle each per tap; else a byte per lane.
__attribute__((target("avx2"), always_inline)) inline __m128i CompactTapRow(const uint8_t* p, bool shuffled, __m128i maskLo,
                                                                              __m128i maskHi, const uint8_t (&rel)[kPanel],
                                                                              __m128i toU8) {
    if (shuffled) {
        const __m128i a = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)), maskLo);
        const __m128i b = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16)), maskHi);
        return _mm_xor_si128(_mm_or_si128(a, b), toU8);
    }
    alignas(16) uint8_t v[kPanel];
    for (std::size_t j = 0; j < kPanel; ++j) v[j] = p[rel[j]];
    return _mm_xor_si128(_mm_load_si128(reinterpret_cast<const __m128i*>(v)), toU8);
}

__attribute__((target("avx2"))) void PackCompactPanel(const uint8_t* from, const std::ptrdiff_t* offsets, std::size_t depth,
                                                      bool flip, const uint8_t (&rel)[kPanel], uint8_t* out) {
    const __m128i toU8 = _mm_set1_epi8(flip ? static_cast<char>(0x80) : 0);
    const bool shuffled = *std::max_element(std::begin(rel), std::end(rel)) < 32;
    alignas(16) uint8_t lo[kPanel], hi[kPanel];
    for (std::size_t j = 0; j < kPanel; ++j) {
        lo[j] = rel[j] < 16 ? rel[j] : 0x80;  // 0x80: pshufb writes 0
        hi[j] = rel[j] >= 16 ? static_cast<uint8_t>(rel[j] - 16) : 0x80;
    }
    const __m128i maskLo = _mm_load_si128(reinterpret_cast<const __m128i*>(lo));
    const __m128i maskHi = _mm_load_si128(reinterpret_cast<const __m128i*>(hi));
    __m128i r[4];
    for (std::size_t q = 0; q < Quads(depth); ++q) {
        for (std::size_t i = 0; i < 4; ++i) {
            const std::size_t k = 4 * q + i;
            r[i] = k < depth ? CompactTapRow(from + offsets[k], shuffled, maskLo, maskHi, rel, toU8) : _mm_setzero_si128();
        }
        StoreQuad(r[0], r[1], r[2], r[3], out + q * 4 * kPanel);
    }
}

/// Whether vpmaddubsw adds u8 x0 * w0 + x1 * w1 exactly for every x0, x1 in [0, 255]: the sum lies
/// between 255 times the pair's negative weights and 255 times its positive ones, so each of those
/// must stay within 128 in magnitude (255 x 128 = 32640 < 2^15). A pair of opposite signs always
/// does; one of the same sign does while |w0 + w1| <= 128.
bool PairIsExact(int w0, int w1) {
    const int positive = std::max(w0, 0) + std::max(w1, 0), negative = std::max(-w0, 0) + std::max(-w1, 0);
    return positive <= 128 && negative <= 128;
}

}  // namespace

namespace {

/// The tap order of each pairing of a quad's 4 taps (a, b, c, d): vpmaddubsw adds bytes 0-1 and
/// 2-3, so pairing 0 adds (a, b) and (c, d), pairing 1 (a, c) and (b, d), pairing 2 (a, d) and (b, c).
constexpr int kPairingOrder[3][4] = {{0, 1, 2, 3}, {0, 2, 1, 3}, {0, 3, 1, 2}};

/// Output channel o's 4 weights of quad q in variant v's order (0 past the depth or the channels):
/// pairing v % 3, and for v >= 3 the second tap of each pair complemented - the panel holds 255 - x
/// there, so the weight is negated (x w = 255 w - (255 - x) w; RowStart adds the 255 w back). That
/// makes a pair of the same signs one of opposite signs, exact whatever their size. False where a
/// weight to negate is -128 (128 is no int8).
bool QuadWeights(const int8_t* w, std::size_t outChannels, std::size_t depth, std::size_t o, std::size_t q, std::size_t v,
                 int (&out)[4]) {
    bool fits = true;
    for (std::size_t i = 0; i < 4; ++i) {
        const std::size_t k = 4 * q + static_cast<std::size_t>(kPairingOrder[v % kPairings][i]);
        out[i] = o < outChannels && k < depth ? w[o * depth + k] : 0;
        if (v >= kPairings && i % 2 == 1) {
            fits = fits && out[i] != -128;
            out[i] = -out[i];
        }
    }
    return fits;
}

/// What each variant of output channel o's quad q costs (0 past the depth or the channels): 0 where
/// both its pairs are exact, 1 where one needs a correction, kCannotNegate where it would negate a
/// -128. A pair of taps is large where |w0| + |w1| > 128 (so neither is 0): then it is exact as it
/// is only with opposite signs, complemented (w1 negated) only with the same signs (PairIsExact) -
/// so the six variants come from the quad's six pairs of taps, each looked at once.
constexpr uint8_t kCannotNegate = 2;
void QuadVariantCosts(const int8_t* w, std::size_t outChannels, std::size_t depth, std::size_t o, std::size_t q,
                      uint8_t (&cost)[kVariants]) {
    int t[4] = {};
    for (std::size_t i = 0; i < 4; ++i) t[i] = o < outChannels && 4 * q + i < depth ? w[o * depth + 4 * q + i] : 0;
    for (std::size_t v = 0; v < kPairings; ++v) {
        bool plain = false, complemented = false;  // whether the pairing leaves a pair to correct
        for (std::size_t pair = 0; pair < 2; ++pair) {
            const int a = t[kPairingOrder[v][2 * pair]], b = t[kPairingOrder[v][2 * pair + 1]];
            if (std::abs(a) + std::abs(b) <= 128) continue;
            ((a < 0) == (b < 0) ? plain : complemented) = true;
        }
        cost[v] = plain ? 1 : 0;
        cost[kPairings + v] = t[kPairingOrder[v][1]] == -128 || t[kPairingOrder[v][3]] == -128 ? kCannotNegate : complemented ? 1 : 0;
    }
}

/// The depth up to which blocks choose among kVariants rather than kPairings: a panel of six
/// variants (6 x 64 bytes a quad: 12 KB at depth 128) stays in L1 beside the weights. And the
/// blocks a panel must serve for that panel to be worth expanding six ways: resnet50's 1x1
/// 64->256 @56 (52 blocks) ran 2% faster with six variants, 128->512 @28 (103) 4%, but 64->64 @56
/// (13) 3% slower.
constexpr std::size_t kVariantsDepth = 128, kVariantsBlocks = 20;
/// The most variants weights of this depth packed with pairings may choose among (the workspace
/// that holds every panel expanded is sized by it; PackIntegerConvWeights takes kVariants only
/// with kVariantsBlocks blocks or more).
constexpr std::size_t MostPairingVariants(std::size_t depth) { return depth <= kVariantsDepth ? kVariants : kPairings; }

/// Quads a twin partner is looked for among (the next unpaired ones after a quad): resnet50's
/// layers of depth 256 and more pair 93-100% of their quads so with six variants, 55-93% in one.
constexpr std::size_t kTwinWindow = 16;

/// Per block of 4 rows (order, chosen: its positions' quads and variants, as the caller chose them
/// one by one), the pairs of quads whose products add exactly in 16 bits for every row
/// (each 16-bit lane's four weights: positive ones and negative ones each within 128 in magnitude),
/// each quad in one of its variants (`variants` of them where the panel holds them,
/// or 0: the one already chosen), found greedily: each unpaired quad with the first of the next
/// kTwinWindow unpaired ones that pairs with it. The pairs go first in the block's order
/// (twinPairs[block] of them), the unpaired quads after them with their variants as chosen.
void PairTwinQuads(const int8_t* w, std::size_t outChannels, std::size_t depth, std::size_t rows, std::size_t variants,
                   std::vector<uint32_t>& order, std::vector<uint8_t>& chosen, std::vector<uint32_t>& twinPairs) {
    const std::size_t quads = Quads(depth), blocks = twinPairs.size(), choices = variants == 0 ? 1 : variants;
    // Per quad, variant and row: each lane's positive and negative weight sums (a variant that
    // would negate a -128 marked unusable).
    struct Lanes {
        int16_t m_Positive[2], m_Negative[2];
        bool m_Fits;
    };
    std::vector<Lanes> lanes(quads * choices * rows);
    std::vector<uint8_t> paired(quads);
    std::vector<uint32_t> newOrder(quads);
    std::vector<uint8_t> newChosen(quads);
    for (std::size_t blk = 0; blk < blocks; ++blk) {
        for (std::size_t q = 0; q < quads; ++q) {
            for (std::size_t c = 0; c < choices; ++c) {
                const std::size_t v = variants == 0 ? chosen[blk * quads + q] : c;
                for (std::size_t r = 0; r < rows; ++r) {
                    int f[4];
                    Lanes& l = lanes[(q * choices + c) * rows + r];
                    l.m_Fits = QuadWeights(w, outChannels, depth, blk * rows + r, q, v, f);
                    for (int lane = 0; lane < 2; ++lane) {
                        l.m_Positive[lane] = static_cast<int16_t>(std::max(f[2 * lane], 0) + std::max(f[2 * lane + 1], 0));
                        l.m_Negative[lane] = static_cast<int16_t>(std::max(-f[2 * lane], 0) + std::max(-f[2 * lane + 1], 0));
                    }
                }
            }
        }
        const auto twinExact = [&](std::size_t a, std::size_t ca, std::size_t b, std::size_t cb) {
            for (std::size_t r = 0; r < rows; ++r) {
                const Lanes& x = lanes[(a * choices + ca) * rows + r];
                const Lanes& y = lanes[(b * choices + cb) * rows + r];
                if (!x.m_Fits || !y.m_Fits) return false;
                for (int lane = 0; lane < 2; ++lane) {
                    if (x.m_Positive[lane] + y.m_Positive[lane] > 128 || x.m_Negative[lane] + y.m_Negative[lane] > 128) return false;
                }
            }
            return true;
        };
        std::fill(paired.begin(), paired.end(), uint8_t{0});
        std::size_t at = 0;
        for (std::size_t a = 0; a < quads; ++a) {
            if (paired[a]) continue;
            std::size_t looked = 0;
            for (std::size_t b = a + 1; b < quads && looked < kTwinWindow && !paired[a]; ++b) {
                if (paired[b]) continue;
                ++looked;
                for (std::size_t ca = 0; ca < choices && !paired[a]; ++ca) {
                    for (std::size_t cb = 0; cb < choices; ++cb) {
                        if (!twinExact(a, ca, b, cb)) continue;
                        paired[a] = paired[b] = 1;
                        newOrder[at] = static_cast<uint32_t>(a);
                        newChosen[at++] = static_cast<uint8_t>(variants == 0 ? chosen[blk * quads + a] : ca);
                        newOrder[at] = static_cast<uint32_t>(b);
                        newChosen[at++] = static_cast<uint8_t>(variants == 0 ? chosen[blk * quads + b] : cb);
                        break;
                    }
                }
            }
        }
        twinPairs[blk] = static_cast<uint32_t>(at / 2);
        for (std::size_t q = 0; q < quads; ++q) {
            if (!paired[q]) newOrder[at] = static_cast<uint32_t>(q), newChosen[at++] = chosen[blk * quads + q];
        }
        std::copy(newOrder.begin(), newOrder.end(), order.begin() + static_cast<std::ptrdiff_t>(blk * quads));
        std::copy(newChosen.begin(), newChosen.end(), chosen.begin() + static_cast<std::ptrdiff_t>(blk * quads));
    }
}

}  // namespace

std::vector<uint8_t> PackIntegerConvWeights(const int8_t* w, std::size_t outChannels, std::size_t depth, bool pairings,
                                            bool channelQuadOutput, bool quadVariants, bool twinQuads) {
    const std::size_t rows = channelQuadOutput ? kQuadRows : kConvRows;
    if (channelQuadOutput && outChannels % 4 != 0) {
        throw std::invalid_argument("PackIntegerConvWeights: a channel-quad output needs a multiple of 4 output channels");
    }
    const std::size_t quads = Quads(depth), blocks = ConvBlocks(outChannels, rows);
    std::vector<int8_t> main(blocks * quads * 4 * rows, 0), dense(main.size(), 0);
    std::vector<ConvCorrection> corrections;
    std::vector<uint32_t> rowStart(blocks * rows + 1, 0);
    std::vector<int32_t> rowSums(outChannels, 0);
    for (std::size_t o = 0; o < outChannels; ++o) {
        for (std::size_t k = 0; k < depth; ++k) rowSums[o] += w[o * depth + k];
    }
    // Each (block, quad)'s variant: the one that leaves the fewest of its rows to correct (0 where
    // pairings are not asked for, or save fewer than 1 quad-row in 100). A variant that would
    // negate a -128 is not one to choose (rows + 1).
    const std::size_t variants = !pairings ? 1 : blocks >= kVariantsBlocks ? MostPairingVariants(depth) : kPairings;
    std::vector<std::size_t> pairing(blocks * quads, 0);
    if (pairings) {
        std::size_t before = 0, after = 0;
        for (std::size_t blk = 0; blk < blocks; ++blk) {
            for (std::size_t q = 0; q < quads; ++q) {
                std::size_t inexact[kVariants] = {};
                for (std::size_t r = 0; r < rows; ++r) {
                    uint8_t cost[kVariants];
                    QuadVariantCosts(w, outChannels, depth, blk * rows + r, q, cost);
                    for (std::size_t v = 0; v < variants; ++v) inexact[v] += cost[v] == kCannotNegate ? rows + 1 : cost[v];
                }
                const std::size_t best = static_cast<std::size_t>(std::min_element(inexact, inexact + variants) - inexact);
                pairing[blk * quads + q] = best;
                before += inexact[0], after += inexact[best];
            }
        }
        pairings = (before - after) * 100 >= blocks * quads * rows;
        if (!pairings) std::fill(pairing.begin(), pairing.end(), 0);
    }
    // Without pairings, each quad's variant for every block at once: the one that leaves the fewest
    // of all its rows to correct (a variant that would negate a -128 of any row is none to choose).
    // No panel grows: the kernel reorders each panel's quads as it packs them (ReorderQuads, about
    // a quarter of one block's tile per panel), so kept where the corrections saved outweigh that:
    // a corrected quad-row costs about a quarter more than the main loop's (1.27 x the share
    // corrected, in a layer's time), so at least 1 quad-row in 4 x blocks.
    std::vector<uint8_t> quadVariant;
    if (!pairings && quadVariants) {
        // inexact[q][v]: the rows variant v leaves to correct in quad q (more than all where it would
        // negate a -128). Channel by channel, each one's weights read once, in order.
        std::vector<std::array<std::size_t, kVariants>> inexact(quads, std::array<std::size_t, kVariants>{});
        for (std::size_t o = 0; o < outChannels; ++o) {
            for (std::size_t q = 0; q < quads; ++q) {
                uint8_t cost[kVariants];
                QuadVariantCosts(w, outChannels, depth, o, q, cost);
                for (std::size_t v = 0; v < kVariants; ++v) inexact[q][v] += cost[v] == kCannotNegate ? outChannels + 1 : cost[v];
            }
        }
        quadVariant.assign(quads, 0);
        std::size_t before = 0, after = 0;
        for (std::size_t q = 0; q < quads; ++q) {
            const std::size_t best = static_cast<std::size_t>(std::min_element(inexact[q].begin(), inexact[q].end()) - inexact[q].begin());
            quadVariant[q] = static_cast<uint8_t>(best);
            before += inexact[q][0], after += inexact[q][best];
        }
        if ((before - after) * 4 * blocks < outChannels * quads) quadVariant.clear();
    }
    const bool complemented = (pairings && variants == kVariants) || !quadVariant.empty();
    // Each block's positions: the quad (order) and variant each takes; with twin quads (blocks of 4
    // rows) first the pairs found exact together (PairTwinQuads, for every row; no correction), then
    // the other quads one by one in their variants as chosen above.
    std::vector<uint32_t> order(blocks * quads), twinPairs(blocks, 0);
    std::vector<uint8_t> chosen(blocks * quads);
    for (std::size_t blk = 0; blk < blocks; ++blk) {
        for (std::size_t q = 0; q < quads; ++q) {
            order[blk * quads + q] = static_cast<uint32_t>(q);
            chosen[blk * quads + q] = static_cast<uint8_t>(quadVariant.empty() ? pairing[blk * quads + q] : quadVariant[q]);
        }
    }
    const bool twin = twinQuads && rows == kQuadRows;
    if (twin) PairTwinQuads(w, outChannels, depth, rows, pairings ? variants : 0, order, chosen, twinPairs);
    const bool positioned = pairings || twin;  // m_XOffsets: each block's positions in the panel
    std::vector<int32_t> shifts(complemented ? outChannels : 0, 0);
    for (std::size_t blk = 0; blk < blocks; ++blk) {
        for (std::size_t r = 0; r < rows; ++r) {
            rowStart[blk * rows + r] = static_cast<uint32_t>(corrections.size());
            const std::size_t o = blk * rows + r;
            for (std::size_t at = 0; at < quads; ++at) {
                const std::size_t q = order[blk * quads + at], v = chosen[blk * quads + at];
                int quad[4];
                QuadWeights(w, outChannels, depth, o, q, v, quad);
                if (v >= kPairings && o < outChannels) shifts[o] -= 255 * (quad[1] + quad[3]);  // 255 x the negated weights' originals
                int8_t* to = main.data() + (blk * quads + at) * 4 * rows + 4 * r;
                int8_t rest[4] = {};
                bool corrected = false;
                for (std::size_t pair = 0; pair < 2; ++pair) {
                    const int* p = quad + 2 * pair;
                    if (PairIsExact(p[0], p[1])) {
                        to[2 * pair] = static_cast<int8_t>(p[0]), to[2 * pair + 1] = static_cast<int8_t>(p[1]);
                        continue;
                    }
                    // Same signs, |w0 + w1| > 128: halved (toward zero) in the block, the rest (each
                    // within 64) in a correction; both pairs exact.
                    for (std::size_t h = 0; h < 2; ++h) {
                        to[2 * pair + h] = static_cast<int8_t>(p[h] / 2);
                        rest[2 * pair + h] = static_cast<int8_t>(p[h] - p[h] / 2);
                    }
                    corrected = true;
                }
                if (corrected) {
                    // The taps it multiplies: quad q (with pairings, its variant's copy of quad q).
                    ConvCorrection c{static_cast<uint32_t>(pairings ? variants * q + v : q), 0};
                    std::memcpy(&c.m_Bytes, rest, sizeof(rest));
                    corrections.push_back(c);
                    std::memcpy(dense.data() + (to - main.data()), rest, sizeof(rest));
                }
            }
        }
    }
    rowStart[blocks * rows] = static_cast<uint32_t>(corrections.size());
    // Dense corrections are for the GEMV loop, which reads the taps in their own order: never with pairings.
    const bool denseCorrections = !pairings && corrections.size() * kDenseCorrections >= blocks * rows * quads;
    const ConvWeightsLayout l = LayoutOf(outChannels, depth, corrections.size(), denseCorrections, positioned, !quadVariant.empty(),
                                         complemented, rows, twin);
    std::vector<uint8_t> blob(l.m_Bytes, 0);
    const ConvWeightsHeader header{outChannels, depth, quads, blocks, corrections.size(), denseCorrections ? 1u : 0u,
                                   pairings ? variants : twin ? 1u : 0u, rows, quadVariant.empty() ? 0u : 1u, 0u, twin ? 1u : 0u};
    std::memcpy(blob.data(), &header, sizeof(header));
    std::memcpy(blob.data() + l.m_Blocks, main.data(), main.size());
    std::memcpy(blob.data() + l.m_RowSums, rowSums.data(), rowSums.size() * sizeof(int32_t));
    std::memcpy(blob.data() + l.m_RowStart, rowStart.data(), rowStart.size() * sizeof(uint32_t));
    if (!corrections.empty()) {
        std::memcpy(blob.data() + l.m_Corrections, corrections.data(), corrections.size() * sizeof(ConvCorrection));
    }
    if (denseCorrections) std::memcpy(blob.data() + l.m_Dense, dense.data(), dense.size());
    if (positioned) {
        // Without pairings the panel is one variant (the quads as they are, or as m_QuadVariants
        // reorders them).
        std::vector<int32_t> offsets(blocks * quads);
        for (std::size_t i = 0; i < offsets.size(); ++i) {
            offsets[i] = static_cast<int32_t>((pairings ? variants * order[i] + chosen[i] : order[i]) * 4 * kPanel);
        }
        std::memcpy(blob.data() + l.m_XOffsets, offsets.data(), offsets.size() * sizeof(int32_t));
    }
    if (twin) std::memcpy(blob.data() + l.m_TwinPairs, twinPairs.data(), twinPairs.size() * sizeof(uint32_t));
    if (!quadVariant.empty()) std::memcpy(blob.data() + l.m_QuadVariants, quadVariant.data(), quadVariant.size());
    if (complemented) std::memcpy(blob.data() + l.m_Shifts, shifts.data(), shifts.size() * sizeof(int32_t));
    return blob;
}

std::vector<uint8_t> PackIntegerGemvWeights(const int8_t* bT, std::size_t n, std::size_t k) {
    const std::size_t quads = Quads(k), blocks = ConvBlocks(n);
    const ConvWeightsLayout l = LayoutOf(n, k, 0, false, false, false, false, kConvRows);
    std::vector<uint8_t> blob(l.m_Bytes, 0);
    const ConvWeightsHeader header{n, k, quads, blocks, 0u, 0u, 0u, kConvRows, 0u, 1u, 0u};
    std::memcpy(blob.data(), &header, sizeof(header));
    auto* main = reinterpret_cast<int8_t*>(blob.data() + l.m_Blocks);
    auto* rowSums = reinterpret_cast<int32_t*>(blob.data() + l.m_RowSums);
    for (std::size_t o = 0; o < n; ++o) {
        const std::size_t blk = o / kConvRows, r = o % kConvRows;
        for (std::size_t i = 0; i < k; ++i) {
            main[(blk * quads + i / 4) * 4 * kConvRows + 4 * r + i % 4] = bT[o * k + i];
            rowSums[o] += bT[o * k + i];
        }
    }
    return blob;  // m_RowStart all 0: no corrections
}

bool IntegerConvWeightsArePaired(const uint8_t* packed) { return ViewOf(packed).m_Header->m_Pairings > 1; }

bool IntegerConvWeightsHaveQuadVariants(const uint8_t* packed) { return ViewOf(packed).m_QuadVariants != nullptr; }

std::size_t IntegerConvCorrections(const uint8_t* packed) { return ViewOf(packed).m_Header->m_Corrections; }

std::size_t IntegerConvTwinPairs(const uint8_t* packed) {
    const ConvWeights v = ViewOf(packed);
    std::size_t n = 0;
    for (std::size_t b = 0; v.m_TwinPairs && b < v.m_Header->m_Blocks; ++b) n += v.m_TwinPairs[b];
    return n;
}

namespace {

/// Whether IntegerConvAvx2 reads a padded copy of the input: a stride-1 convolution other than an
/// unpadded 1x1 one (which reads its planes as they are), and an undilated stride-2 one (split by
/// row and column parity).
bool UsesPaddedInput(const Im2ColShape& s) {
    const bool flat = s.m_KernelH == 1 && s.m_KernelW == 1 && s.m_PadTop == 0 && s.m_PadLeft == 0 && s.m_InW == s.m_OutW &&
                      s.m_InH == s.m_OutH;
    if (s.m_StrideH == 1 && s.m_StrideW == 1) return !flat;
    // Stride 2 gathered a byte per pixel wherever a panel's 16 pixels were not in one output row
    // (every panel at 14x14): resnet50's 3x3 stride-2 layers ran at 62 GMAC/s, the stride-1 ones 86.
    return s.m_StrideH == 2 && s.m_StrideW == 2 && s.m_DilationH == 1 && s.m_DilationW == 1;
}


/// The padded copy's geometry (PaddedInput), with slack after each plane for the 16-lane reads of
/// the last panel (whose extra lanes are not stored).
PaddedInput PaddedGeometry(const Im2ColShape& s) {
    PaddedInput p;
    if (s.m_StrideH == 2) {
        p.m_Height = s.m_OutH + (s.m_KernelH - 1) / 2;
        p.m_Width = s.m_OutW + (s.m_KernelW - 1) / 2;
        p.m_PhasesY = s.m_KernelH > 1 ? 2 : 1;
        p.m_PhasesX = s.m_KernelW > 1 ? 2 : 1;
        p.m_Plane = p.m_Height * p.m_Width + (s.m_KernelW - 1) / 2 + 2 * kPanel;
        return p;
    }
    p.m_Height = s.m_OutH + (s.m_KernelH - 1) * s.m_DilationH;
    p.m_Width = s.m_OutW + (s.m_KernelW - 1) * s.m_DilationW;
    p.m_Plane = p.m_Height * p.m_Width + (s.m_KernelW - 1) * s.m_DilationW + 2 * kPanel;
    return p;
}

/// The bytes of SplitByParity's row buffer: a padded row in whole chunks of 32.
std::size_t ParityRowBytes(const Im2ColShape& s, const PaddedInput& p) { return (2 * p.m_Width + 31) / 32 * 32 + s.m_PadLeft + s.m_InW; }

/// Channel c of the input, [in_h][in_w] bytes, into its stride-2 planes (PaddedInput) at `to`, the
/// planes already filled with the zero point: each padded row's even and odd bytes to the row of
/// planes (py, 0) and (py, 1), 32 bytes at a time (through `row`, ParityRowBytes, holding the left
/// padding).
__attribute__((target("avx2"))) void SplitByParity(const uint8_t* from, const Im2ColShape& s, const PaddedInput& p, uint8_t fill,
                                                   uint8_t* row, uint8_t* to) {
    // The padded row's positions 2j and 2j + 1 for j < m_Width, in chunks of 32 (the last chunk's
    // extra bytes are the zero point: they land in the next row, written after, or the slack).
    const std::size_t chunks = (2 * p.m_Width + 31) / 32, rowBytes = ParityRowBytes(s, p);
    // Only the input bytes some plane holds (padded columns below 2 * m_Width): a chunk's bytes past
    // them must be the zero point, since they land in the next row, which may be padding nobody
    // writes (an even kernel's input column past the last window, with padding below).
    const std::size_t used = std::min(s.m_InW, 2 * p.m_Width - std::min(2 * p.m_Width, s.m_PadLeft));
    const __m256i split = _mm256_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15, 0, 2, 4, 6, 8, 10, 12, 14, 1, 3,
                                           5, 7, 9, 11, 13, 15);
    for (std::size_t ih = 0; ih < s.m_InH; ++ih) {
        const std::size_t r = ih + s.m_PadTop, py = r % 2, i = r / 2;
        if (py >= p.m_PhasesY || i >= p.m_Height) continue;
        std::memset(row, fill, rowBytes);
        std::memcpy(row + s.m_PadLeft, from + ih * s.m_InW, used);
        uint8_t* even = to + py * p.m_PhasesX * p.m_Plane + i * p.m_Width;
        uint8_t* odd = p.m_PhasesX > 1 ? even + p.m_Plane : nullptr;
        for (std::size_t k = 0; k < chunks; ++k) {
            // Per 128-bit lane: its 8 even bytes, then its 8 odd ones; then the lanes' halves together.
            const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 32 * k));
            const __m256i parted = _mm256_permute4x64_epi64(_mm256_shuffle_epi8(v, split), 0xD8);
            _mm_storeu_si128(reinterpret_cast<__m128i*>(even + 16 * k), _mm256_castsi256_si128(parted));
            if (odd) _mm_storeu_si128(reinterpret_cast<__m128i*>(odd + 16 * k), _mm256_extracti128_si256(parted, 1));
        }
    }
}

/// Panels and the bytes of the workspace (packed panels, then the padded copy, then the GEMV rows
/// of the panels of few pixels where all panels are packed first).
struct ConvWorkspace {
    std::size_t m_Panels = 0, m_PanelsSize = 0, m_PaddedSize = 0, m_SmallSize = 0;
};

ConvWorkspace ConvWorkspaceOf(const Im2ColShape& s, std::size_t outChannels) {
    const std::size_t depth = s.m_Channels * s.m_KernelH * s.m_KernelW;
    ConvWorkspace w;
    w.m_Panels = Panels(s.m_OutH * s.m_OutW);
    const std::size_t panels = w.m_Panels * Quads(depth) * 4 * kPanel;
    w.m_PanelsSize = ConvBlocks(outChannels) * Quads(depth) * 4 * kConvRows > panels ? panels : 0;
    if (UsesPaddedInput(s)) {
        const PaddedInput p = PaddedGeometry(s);
        w.m_PaddedSize = s.m_Channels * p.m_PhasesY * p.m_PhasesX * p.m_Plane;
    }
    return w;
}
/// Panel t's 16 output pixels (a last panel's lanes past the output are not stored).
PanelRuns RunsOf(const Im2ColShape& s, std::size_t t) {
    PanelRuns runs;
    const std::size_t pixel = t * kPanel;
    runs.m_Count = 1;
    runs.m_Pixel[0] = pixel;
    runs.m_Length[0] = std::min(kPanel, s.m_OutH * s.m_OutW - pixel);
    return runs;
}

}  // namespace

__attribute__((target("avx2"))) float IntegerRequantizeReciprocal(const IntegerConvOutput& out) {
    IntegerConvOutput byReciprocal = out;
    byReciprocal.m_RequantReciprocal = 1.0f / out.m_RequantOutScale;
    if (!std::isfinite(byReciprocal.m_RequantReciprocal) || byReciprocal.m_RequantReciprocal == 0.0f) return 0.0f;
    IntegerConvOutput divided = out;
    divided.m_RequantReciprocal = 0.0f;
    const Requantization viaDivision = RequantizationOf(divided), viaReciprocal = RequantizationOf(byReciprocal);
    // Every t the first quantization can give: its type's range less its zero point.
    const int32_t first = (out.m_Signed ? -128 : 0) - out.m_ZeroPoint;
    for (int32_t t = first; t < first + 256; t += 8) {
        const __m256i v = _mm256_add_epi32(_mm256_set1_epi32(t), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        const __m256i differ = _mm256_xor_si256(Requantize(v, viaDivision), Requantize(v, viaReciprocal));
        if (!_mm256_testz_si256(differ, differ)) return 0.0f;
    }
    return byReciprocal.m_RequantReciprocal;
}

namespace {

/// Rows of A that IntegerGemmBytesAvx2 multiplies one at a time (GemvRow) rather than as a panel
/// of 16, where a tile would compute 8 lanes (a half tile) for at most 4 rows.
constexpr std::size_t kGemvRows = kIntegerGemvRows;
/// Likewise the output pixels of a convolution's panel of at most 2 (its last one: resnet50's 7x7
/// maps end in a panel of 1 pixel - the GEMV takes a third of the half tile's time there - while
/// the 4-pixel last panel of its 14x14 maps ran 5-10% slower per layer through the GEMV than as a
/// half tile, trellis_int8_conv_bench).
constexpr std::size_t kConvGemvPixels = 2;
/// The largest depth whose convolutions take pairings: the panel of three pairings (3 x 16 x depth
/// bytes, 24 KB at 512) stays in L1 beside the block of weights it runs against.
constexpr std::size_t kPairingsDepth = 512;
/// The kR (the block's rows) sums of one row of A times one block (GemvRowOf).
void GemvRow(const uint8_t* a, bool flip, std::size_t k, const ConvWeights& wts, std::size_t block, uint32_t (&sums)[kConvRows]);

/// The pixels a panel stores.
std::size_t PixelsIn(const PanelRuns& runs) {
    std::size_t n = 0;
    for (int u = 0; u < runs.m_Count; ++u) n += runs.m_Length[u];
    return n;
}

/// Each stored pixel's taps of a packed panel ([quad][16][4]) as a row of `rowBytes` (its depth,
/// rounded up to quads), one after the other.
void GatherPanelRows(const PanelRuns& runs, const uint8_t* panel, std::size_t quads, std::size_t rowBytes, uint8_t* rows) {
    std::size_t j = 0;
    for (int u = 0; u < runs.m_Count; ++u) {
        for (std::size_t i = 0; i < runs.m_Length[u]; ++i, ++j) {
            const std::size_t lane = runs.m_Lane[u] + i;
            for (std::size_t q = 0; q < quads; ++q) std::memcpy(rows + j * rowBytes + 4 * q, panel + q * 4 * kPanel + lane * 4, 4);
        }
    }
}

}  // namespace

/// A channel-quad plan's frame: the input as its taps read it, [channels / 4][m_Height][m_Width][4]
/// - a copy with the zero point around it where the convolution pads (m_Copy; slack after each
/// plane so that a segment's whole reads stay in it), else the input itself. m_Plane: dwords
/// (pixels) per quad of channels.
struct QuadFrame {
    bool m_Copy = false;
    std::size_t m_Height = 0, m_Width = 0, m_Plane = 0;
};
/// Lanes [m_Lane, m_Lane + m_Count) of a panel whose pixels lie a stride apart in the frame, the
/// first one's tap (0, 0) at dword m_Start of a plane. m_Whole: all 16 lanes read as if the run
/// went on both ways (16 strides of dwords from m_Start less m_Lane strides) stay within the plane
/// for every tap - PackQuadPanel's vector path.
struct QuadSegment {
    std::size_t m_Lane = 0, m_Count = 0, m_Start = 0;
    bool m_Whole = false;
};

/// What IntegerConvAvx2 works out from the shape alone (PlanIntegerConv, once per layer).
struct IntegerConvPlan {
    Im2ColShape m_Shape{};
    std::size_t m_OutChannels = 0, m_Depth = 0, m_Quads = 0, m_Pixels = 0, m_PanelSize = 0, m_RowBytes = 0;
    ConvWorkspace m_Workspace;
    /// The padded copy's geometry (m_Data unset) where the input is copied; the panels take 16
    /// consecutive output pixels over it (m_CompactPanels). They used to take 16 consecutive indices
    /// of its padded-width layout where rows are wider than a panel: lanes wasted on the padding
    /// columns (3.5% at 56x56, 7% at 28x28) and panels split over two rows stored through the slow
    /// epilogue; consecutive pixels ran resnet50's 3x3 64 @56 5% faster, 128 @28 7%.
    PaddedInput m_Padded;
    bool m_UsesPadded = false;
    std::vector<Tap> m_Taps;
    /// Where every tap row is 16 adjacent bytes (a padded copy, or an unpadded stride-1 1x1
    /// convolution's planes), each tap's offset from the panel's first pixel; else empty.
    std::vector<std::ptrdiff_t> m_Offsets;
    /// Per panel: where its lanes are stored, and (padded copy) its first pixel's index in the
    /// padded-width layout and each lane's from it (m_Fits: all within 256).
    struct CompactPanel {
        std::size_t m_First = 0;
        uint8_t m_Rel[kPanel] = {};
        bool m_Fits = false;
        bool m_Contiguous = false;  ///< every stored lane j at m_First + j: PackDirectPanel's reads
    };
    std::vector<PanelRuns> m_Runs;
    std::vector<CompactPanel> m_CompactPanels;
    /// Per panel, where all panels are packed first: its slot among the panels of at most
    /// kConvGemvPixels pixels (whose rows the GEMV reads), or m_Panels.
    std::vector<std::size_t> m_Slot;
    /// Whether weights packed with pairings may run here (IntegerConvTakesPairings), with twin quads
    /// (IntegerConvTakesTwinQuads: each block's quads in its own order, which the GEMV loop cannot read).
    bool m_TakesPairings = false, m_TakesTwinQuads = false;
    /// A channel-quad input (PlanIntegerConv's channelQuads): where its taps are (m_Frame), each
    /// depth quad's bytes from a pixel's tap (0, 0) (m_QuadOffsets), each panel's segments
    /// (m_Segments[m_SegmentsAt[t] .. m_SegmentsAt[t + 1])).
    bool m_ChannelQuads = false;
    QuadFrame m_Frame;
    std::vector<std::size_t> m_QuadOffsets;
    std::vector<QuadSegment> m_Segments;
    std::vector<std::size_t> m_SegmentsAt;
};

bool IntegerConvTakesChannelQuads(const Im2ColShape& s) { return s.m_Channels > 0 && s.m_Channels % 4 == 0; }

std::vector<int8_t> ChannelQuadWeights(const int8_t* w, std::size_t outChannels, const Im2ColShape& s) {
    const std::size_t taps = s.m_KernelH * s.m_KernelW, depth = s.m_Channels * taps;
    std::vector<int8_t> ordered(outChannels * depth);
    for (std::size_t o = 0; o < outChannels; ++o) {
        for (std::size_t c = 0; c < s.m_Channels; ++c) {
            for (std::size_t t = 0; t < taps; ++t) ordered[o * depth + t * s.m_Channels + c] = w[o * depth + c * taps + t];
        }
    }
    return ordered;
}

namespace {

/// A channel-quad plan's frame, depth quads and segments (IntegerConvPlan::m_ChannelQuads).
void PlanChannelQuads(const Im2ColShape& s, IntegerConvPlan& p) {
    if (!IntegerConvTakesChannelQuads(s)) {
        throw std::invalid_argument("PlanIntegerConv: channel quads need a multiple of 4 input channels, not " +
                                    std::to_string(s.m_Channels));
    }
    p.m_ChannelQuads = true;
    // The frame every tap of every output pixel reads within: the padded input's rows and columns
    // from the first window's to the last one's.
    const std::size_t height = (s.m_OutH - 1) * s.m_StrideH + (s.m_KernelH - 1) * s.m_DilationH + 1;
    const std::size_t width = (s.m_OutW - 1) * s.m_StrideW + (s.m_KernelW - 1) * s.m_DilationW + 1;
    QuadFrame& f = p.m_Frame;
    f.m_Copy = s.m_PadTop > 0 || s.m_PadLeft > 0 || height > s.m_InH || width > s.m_InW;
    f.m_Height = f.m_Copy ? height : s.m_InH;
    f.m_Width = f.m_Copy ? width : s.m_InW;
    f.m_Plane = f.m_Height * f.m_Width + (f.m_Copy ? 2 * kPanel * s.m_StrideW : 0);
    p.m_Workspace.m_PaddedSize = f.m_Copy ? s.m_Channels / 4 * f.m_Plane * 4 : 0;
    const std::size_t cq = s.m_Channels / 4;
    p.m_QuadOffsets.resize(p.m_Quads);
    for (std::size_t kh = 0; kh < s.m_KernelH; ++kh) {
        for (std::size_t kw = 0; kw < s.m_KernelW; ++kw) {
            const std::size_t tap = kh * s.m_KernelW + kw, at = kh * s.m_DilationH * f.m_Width + kw * s.m_DilationW;
            for (std::size_t q = 0; q < cq; ++q) p.m_QuadOffsets[tap * cq + q] = (q * f.m_Plane + at) * 4;
        }
    }
    const std::size_t reach = (s.m_KernelH - 1) * s.m_DilationH * f.m_Width + (s.m_KernelW - 1) * s.m_DilationW;
    const std::size_t panels = p.m_Workspace.m_Panels, stride = s.m_StrideW;
    p.m_SegmentsAt.assign(1, 0);
    for (std::size_t t = 0; t < panels; ++t) {
        for (std::size_t j = 0; j < kPanel && t * kPanel + j < p.m_Pixels; ++j) {
            const std::size_t pixel = t * kPanel + j;
            const std::size_t at = pixel / s.m_OutW * s.m_StrideH * f.m_Width + pixel % s.m_OutW * stride;
            if (j > 0 && at == p.m_Segments.back().m_Start + p.m_Segments.back().m_Count * stride) {
                ++p.m_Segments.back().m_Count;
                continue;
            }
            QuadSegment g;
            g.m_Lane = j, g.m_Count = 1, g.m_Start = at;
            p.m_Segments.push_back(g);
        }
        for (std::size_t i = p.m_SegmentsAt.back(); i < p.m_Segments.size(); ++i) {
            QuadSegment& g = p.m_Segments[i];
            g.m_Whole = stride <= 2 && g.m_Start >= g.m_Lane * stride &&
                        g.m_Start - g.m_Lane * stride + kPanel * stride + reach <= f.m_Plane;
        }
        p.m_SegmentsAt.push_back(p.m_Segments.size());
    }
}

}  // namespace

std::shared_ptr<const IntegerConvPlan> PlanIntegerConv(const Im2ColShape& s, std::size_t outChannels, bool channelQuads) {
    auto plan = std::make_shared<IntegerConvPlan>();
    IntegerConvPlan& p = *plan;
    p.m_Shape = s;
    p.m_OutChannels = outChannels;
    p.m_Depth = s.m_Channels * s.m_KernelH * s.m_KernelW;
    p.m_Quads = Quads(p.m_Depth);
    p.m_Pixels = s.m_OutH * s.m_OutW;
    p.m_PanelSize = p.m_Quads * 4 * kPanel;
    p.m_RowBytes = p.m_Quads * 4;
    p.m_Workspace = ConvWorkspaceOf(s, outChannels);
    if (channelQuads) {
        p.m_Workspace.m_PaddedSize = 0;
        PlanChannelQuads(s, p);
    }
    p.m_UsesPadded = !channelQuads && UsesPaddedInput(s);
    if (p.m_UsesPadded) p.m_Padded = PaddedGeometry(s);
    p.m_Taps = TapsOf(s);
    const bool flat = !channelQuads && s.m_KernelH == 1 && s.m_KernelW == 1 && s.m_StrideH == 1 && s.m_StrideW == 1 && s.m_PadTop == 0 &&
                      s.m_PadLeft == 0 && s.m_InW == s.m_OutW && s.m_InH == s.m_OutH;
    const PaddedInput& padded = p.m_Padded;
    if (p.m_UsesPadded || flat) {
        p.m_Offsets.resize(p.m_Taps.size());
        for (std::size_t k = 0; k < p.m_Taps.size(); ++k) {
            const Tap& tap = p.m_Taps[k];
            if (!p.m_UsesPadded) {
                p.m_Offsets[k] = static_cast<std::ptrdiff_t>(tap.m_Channel * s.m_InH * s.m_InW);
            } else if (s.m_StrideH == 2) {
                // Plane (kh % 2, kw % 2) of the channel, at (kh / 2, kw / 2) (undilated: m_Dy = kh).
                const std::size_t plane = (tap.m_Channel * padded.m_PhasesY + static_cast<std::size_t>(tap.m_Dy % 2)) *
                                              padded.m_PhasesX + static_cast<std::size_t>(tap.m_Dx % 2);
                p.m_Offsets[k] = static_cast<std::ptrdiff_t>(plane * padded.m_Plane) +
                                 tap.m_Dy / 2 * static_cast<std::ptrdiff_t>(padded.m_Width) + tap.m_Dx / 2;
            } else {
                p.m_Offsets[k] = static_cast<std::ptrdiff_t>(tap.m_Channel * padded.m_Plane) +
                                 tap.m_Dy * static_cast<std::ptrdiff_t>(padded.m_Width) + tap.m_Dx;
            }
        }
    }
    const std::size_t panels = p.m_Workspace.m_Panels;
    p.m_Runs.resize(panels);
    for (std::size_t t = 0; t < panels; ++t) p.m_Runs[t] = RunsOf(s, t);
    if (p.m_UsesPadded) {
        p.m_CompactPanels.resize(panels);
        const auto index = [&](std::size_t pixel) { return pixel / s.m_OutW * padded.m_Width + pixel % s.m_OutW; };
        for (std::size_t t = 0; t < panels; ++t) {
            IntegerConvPlan::CompactPanel& c = p.m_CompactPanels[t];
            c.m_First = index(t * kPanel);
            c.m_Fits = c.m_Contiguous = true;
            for (std::size_t j = 0; j < kPanel && t * kPanel + j < p.m_Pixels; ++j) {
                const std::size_t r = index(t * kPanel + j) - c.m_First;
                c.m_Fits = c.m_Fits && r < 256;
                c.m_Contiguous = c.m_Contiguous && r == j;
                c.m_Rel[j] = static_cast<uint8_t>(r);
            }
        }
    }
    if (p.m_Workspace.m_PanelsSize > 0) {
        p.m_Slot.assign(panels, panels);
        std::size_t small = 0;
        for (std::size_t t = 0; t < panels; ++t) {
            const std::size_t n = PixelsIn(p.m_Runs[t]);
            if (n > 0 && n <= kConvGemvPixels) p.m_Slot[t] = small++;
        }
        p.m_Workspace.m_SmallSize = small * kConvGemvPixels * p.m_RowBytes;
    }
    // Pairings: panel by panel (a panel of three pairings - or six variants - per thread, in L1 up to
    // kPairingsDepth), or with every panel packed first each expanded to its variants in the
    // workspace (L2; a tile reads one variant's 64 bytes per quad either way: resnet50's 1x1
    // 256->1024 @14 left 1.6% of its quad-rows to correct rather than 5.7%, 2% faster in the model),
    // and no panel through the GEMV loop, which reads the taps in their own order.
    // Twin quads likewise (each block's quads in an order of its own) at any depth.
    bool noGemvPanel = true;
    for (const PanelRuns& runs : p.m_Runs) {
        const std::size_t n = PixelsIn(runs);
        noGemvPanel = noGemvPanel && !(n > 0 && n <= kConvGemvPixels);
    }
    p.m_TakesTwinQuads = noGemvPanel;
    p.m_TakesPairings = noGemvPanel && p.m_Depth <= kPairingsDepth;
    if (p.m_TakesPairings && p.m_Workspace.m_PanelsSize > 0) p.m_Workspace.m_PanelsSize *= MostPairingVariants(p.m_Depth);
    return plan;
}

bool IntegerConvTakesPairings(const IntegerConvPlan& plan) { return plan.m_TakesPairings; }

bool IntegerConvTakesTwinQuads(const IntegerConvPlan& plan) { return plan.m_TakesTwinQuads; }

bool IntegerConvPacksPanelsFirst(const IntegerConvPlan& plan) { return plan.m_Workspace.m_PanelsSize > 0; }

std::size_t IntegerConvWorkspaceSize(const IntegerConvPlan& plan) {
    const ConvWorkspace& w = plan.m_Workspace;
    return w.m_PanelsSize + w.m_PaddedSize + w.m_SmallSize;
}

namespace {

/// Per variant of a quad (QuadWeights), the vpshufb control that puts each pixel's 4 taps in its
/// pairing's order (kPairingOrder[v % 3]) and the mask XORed in after it: bytes 1 and 3 complemented
/// (255 - x) for the complemented variants - the bytes ExpandVariants puts in variant v's place.
alignas(32) constexpr uint8_t kVariantBytes[kVariants][2][32] = {
    {{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {}},
    {{0, 2, 1, 3, 4, 6, 5, 7, 8, 10, 9, 11, 12, 14, 13, 15, 0, 2, 1, 3, 4, 6, 5, 7, 8, 10, 9, 11, 12, 14, 13, 15}, {}},
    {{0, 3, 1, 2, 4, 7, 5, 6, 8, 11, 9, 10, 12, 15, 13, 14, 0, 3, 1, 2, 4, 7, 5, 6, 8, 11, 9, 10, 12, 15, 13, 14}, {}},
    {{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
     {0, 255, 0, 255, 0, 255, 0, 255, 0, 255, 0, 255, 0, 255, 0, 255, 0, 255, 0, 255, 0, 255, 0, 255, 0, 255, 0, 255, 0, 255, 0, 255}},
    {{0, 2, 1, 3, 4, 6, 5, 7, 8, 10, 9, 11, 12, 14, 13, 15, 0, 2, 1, 3, 4, 6, 5, 7, 8, 10, 9, 11, 12, 14, 13, 15},
     {0, 255, 0, 255, 0, 255, 0, 255, 0, 255, 0, 255, 0, 255, 0, 255, 0, 255, 0, 255, 0, 255, 0, 255, 0, 255, 0, 255, 0, 255, 0, 255}},
    {{0, 3, 1, 2, 4, 7, 5, 6, 8, 11, 9, 10, 12, 15, 13, 14, 0, 3, 1, 2, 4, 7, 5, 6, 8, 11, 9, 10, 12, 15, 13, 14},
     {0, 255, 0, 255, 0, 255, 0, 255, 0, 255, 0, 255, 0, 255, 0, 255, 0, 255, 0, 255, 0, 255, 0, 255, 0, 255, 0, 255, 0, 255, 0, 255}}};

/// 8 pixels' 4 taps of a quad (v) in variant `variant`'s order and complements.
__attribute__((target("avx2"), always_inline)) inline __m256i InVariant(__m256i v, std::size_t variant) {
    const auto* b = reinterpret_cast<const __m256i*>(kVariantBytes[variant]);
    return _mm256_xor_si256(_mm256_shuffle_epi8(v, _mm256_load_si256(b)), _mm256_load_si256(b + 1));
}

/// One pixel's 4 taps of a quad (bytes of v) in variant `variant`'s order and complements.
uint32_t QuadInVariant(uint32_t v, std::size_t variant) {
    uint8_t from[4], to[4];
    std::memcpy(from, &v, 4);
    for (std::size_t i = 0; i < 4; ++i) to[i] = static_cast<uint8_t>(from[kVariantBytes[variant][0][i]] ^ kVariantBytes[variant][1][i]);
    std::memcpy(&v, to, 4);
    return v;
}

/// A panel ([quad][16 pixels][4] u8) as the panel of its variants ([quad][variant][16][4]): each
/// pixel's 4 taps of a quad in kPairingOrder's orders, and with `variants` kVariants the same with
/// bytes 1 and 3 of each complemented (255 - x: QuadWeights).
__attribute__((target("avx2"))) void ExpandVariants(const uint8_t* from, std::size_t quads, std::size_t variants, uint8_t* to) {
    const __m256i order1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(kVariantBytes[1][0]));
    const __m256i order2 = _mm256_load_si256(reinterpret_cast<const __m256i*>(kVariantBytes[2][0]));
    const __m256i odd = _mm256_load_si256(reinterpret_cast<const __m256i*>(kVariantBytes[kPairings][1]));
    for (std::size_t q = 0; q < quads; ++q) {
        for (std::size_t half = 0; half < 2; ++half) {
            const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(from + q * 4 * kPanel + 32 * half));
            const __m256i x1 = _mm256_shuffle_epi8(x, order1), x2 = _mm256_shuffle_epi8(x, order2);
            uint8_t* at = to + variants * q * 4 * kPanel + 32 * half;
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(at), x);
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(at + 4 * kPanel), x1);
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(at + 8 * kPanel), x2);
            if (variants == kVariants) {
                _mm256_storeu_si256(reinterpret_cast<__m256i*>(at + 12 * kPanel), _mm256_xor_si256(x, odd));
                _mm256_storeu_si256(reinterpret_cast<__m256i*>(at + 16 * kPanel), _mm256_xor_si256(x1, odd));
                _mm256_storeu_si256(reinterpret_cast<__m256i*>(at + 20 * kPanel), _mm256_xor_si256(x2, odd));
            }
        }
    }
}

/// A panel ([quad][16 pixels][4] u8) in place in the variants its weights take (ConvWeights::
/// m_QuadVariants; the packers other than PackQuadPanel, which puts them in as it copies).
__attribute__((target("avx2"))) void ReorderQuads(uint8_t* panel, const uint8_t* variants, std::size_t quads) {
    for (std::size_t q = 0; q < quads; ++q) {
        for (std::size_t half = 0; half < 2; ++half) {
            auto* at = reinterpret_cast<__m256i*>(panel + q * 4 * kPanel + 32 * half);
            _mm256_storeu_si256(at, InVariant(_mm256_loadu_si256(at), variants[q]));
        }
    }
}

/// The even dwords of the 16 at `from`, in order (per 128-bit lane, then the lanes' halves).
__attribute__((target("avx2"), always_inline)) inline __m256i EvenDwords(const uint8_t* from) {
    const __m256 a = _mm256_loadu_ps(reinterpret_cast<const float*>(from));
    const __m256 b = _mm256_loadu_ps(reinterpret_cast<const float*>(from + 32));
    return _mm256_permute4x64_epi64(_mm256_castps_si256(_mm256_shuffle_ps(a, b, 0x88)), 0xD8);
}

/// Panel t of a channel-quad plan ([quad][16][4] u8; `flip`: an s8 input's bytes plus 128) from
/// its frame: per segment, each depth quad's 16 lanes read as one run (64 adjacent bytes at stride
/// 1; 128 with every other dword kept at stride 2) and stored under the segment's lanes (whole
/// when the segment is the panel), else dword by dword. Lanes past the output are left as they
/// are (not stored).
__attribute__((target("avx2"))) void PackQuadPanel(const uint8_t* frame, const IntegerConvPlan& p, std::size_t t, bool flip,
                                                   const uint8_t* variants, uint8_t* to) {
    const __m256i flipBytes = _mm256_set1_epi8(static_cast<char>(flip ? 0x80 : 0));
    const uint32_t flipQuad = flip ? 0x80808080u : 0u;
    const std::size_t quads = p.m_Quads, stride = p.m_Shape.m_StrideW;
    const std::size_t* offsets = p.m_QuadOffsets.data();
    const __m256i lanes0 = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), lanes1 = _mm256_setr_epi32(8, 9, 10, 11, 12, 13, 14, 15);
    for (std::size_t i = p.m_SegmentsAt[t]; i < p.m_SegmentsAt[t + 1]; ++i) {
        const QuadSegment& g = p.m_Segments[i];
        if (!g.m_Whole) {
            for (std::size_t q = 0; q < quads; ++q) {
                const uint8_t* from = frame + offsets[q] + g.m_Start * 4;
                for (std::size_t j = 0; j < g.m_Count; ++j) {
                    uint32_t v;
                    std::memcpy(&v, from + j * stride * 4, 4);
                    v ^= flipQuad;
                    if (variants) v = QuadInVariant(v, variants[q]);
                    std::memcpy(to + q * 4 * kPanel + (g.m_Lane + j) * 4, &v, 4);
                }
            }
            continue;
        }
        const uint8_t* base = frame + (g.m_Start - g.m_Lane * stride) * 4;
        const bool whole = g.m_Count == kPanel;
        const __m256i first = _mm256_set1_epi32(static_cast<int>(g.m_Lane)), end = _mm256_set1_epi32(static_cast<int>(g.m_Lane + g.m_Count));
        const __m256i mask0 = _mm256_andnot_si256(_mm256_cmpgt_epi32(first, lanes0), _mm256_cmpgt_epi32(end, lanes0));
        const __m256i mask1 = _mm256_andnot_si256(_mm256_cmpgt_epi32(first, lanes1), _mm256_cmpgt_epi32(end, lanes1));
        const auto store = [&](std::size_t q, uint8_t* d, __m256i v0, __m256i v1) __attribute__((target("avx2"))) {
            v0 = _mm256_xor_si256(v0, flipBytes), v1 = _mm256_xor_si256(v1, flipBytes);
            if (variants) v0 = InVariant(v0, variants[q]), v1 = InVariant(v1, variants[q]);
            if (whole) {
                _mm256_storeu_si256(reinterpret_cast<__m256i*>(d), v0);
                _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + 32), v1);
            } else {
                // The segment's lanes blended into what the panel holds, not vpmaskmovd: a masked
                // store is one of the slowest stores on AMD cores (Zen 4: 80% of this function's
                // samples on resnet50's 3x3 layers at 14x14, whose panels span two image rows).
                const __m256i old0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(d));
                const __m256i old1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(d + 32));
                _mm256_storeu_si256(reinterpret_cast<__m256i*>(d), _mm256_blendv_epi8(old0, v0, mask0));
                _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + 32), _mm256_blendv_epi8(old1, v1, mask1));
            }
        };
        if (stride == 1) {
            for (std::size_t q = 0; q < quads; ++q) {
                const uint8_t* from = base + offsets[q];
                store(q, to + q * 4 * kPanel, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(from)),
                      _mm256_loadu_si256(reinterpret_cast<const __m256i*>(from + 32)));
            }
            continue;
        }
        for (std::size_t q = 0; q < quads; ++q) {
            const uint8_t* from = base + offsets[q];
            store(q, to + q * 4 * kPanel, EvenDwords(from), EvenDwords(from + 64));
        }
    }
}

/// One plane of the input ([in_h][in_w] elements of `elementBytes`: 1, or 4 for a quad of channels)
/// into a padded frame of height x width elements (`planeBytes` with its slack) filled with the
/// zero point `fill`, at the convolution's leading padding; rows and columns past the frame left out.
void CopyIntoFrame(const uint8_t* from, const Im2ColShape& s, std::size_t elementBytes, std::size_t height, std::size_t width,
                   std::size_t planeBytes, uint8_t fill, uint8_t* plane) {
    std::memset(plane, fill, planeBytes);
    const std::size_t count = std::min(s.m_InW, width - std::min(width, s.m_PadLeft)) * elementBytes, rowBytes = s.m_InW * elementBytes;
    for (std::size_t ih = 0; ih < s.m_InH && ih + s.m_PadTop < height; ++ih) {
        std::memcpy(plane + ((ih + s.m_PadTop) * width + s.m_PadLeft) * elementBytes, from + ih * rowBytes, count);
    }
}

/// This thread's buffer of at least `bytes` (a panel and its GEMV rows, or a row of SplitByParity),
/// kept between calls: allocating and zeroing it per call and thread cost more than the small
/// layers' packing. kBlobAlign-aligned: the panels' 32-byte loads whole in a cache line each
/// (malloc's 16-byte alignment split every other one over two).
uint8_t* ThreadBuffer(std::size_t bytes) {
    thread_local std::vector<uint8_t> buffer;
    if (buffer.size() < bytes + kBlobAlign) buffer.resize(bytes + kBlobAlign);
    const std::size_t misaligned = reinterpret_cast<std::uintptr_t>(buffer.data()) % kBlobAlign;
    return buffer.data() + (misaligned == 0 ? 0 : kBlobAlign - misaligned);
}

}  // namespace

void IntegerConvAvx2(const void* x, bool xSigned, int32_t zp, const IntegerConvPlan& plan, const uint8_t* packed,
                     const int32_t* bias, const float* scales, bool perChannel, const IntegerConvOutput& out,
                     uint8_t* workspace) {
    const Im2ColShape& s = plan.m_Shape;
    const ConvWeights wts = ViewOf(packed);
    // 0: quads in order; 1: each block's positions at m_XOffsets (pairings); 2: twin quads too.
    const int paired = wts.m_XOffsets == nullptr ? 0 : wts.m_TwinPairs ? 2 : 1;
    if ((wts.m_Header->m_Pairings > 1 && !plan.m_TakesPairings) || (paired && !plan.m_TakesTwinQuads)) {
        throw std::invalid_argument(
            "IntegerConvAvx2: weights packed with pairings or twin quads for a convolution that does not take them");
    }
    // The panel's variants where the weights chose among them per block (ExpandVariants), else 1.
    const std::size_t expanded = wts.m_Header->m_Pairings > 1 ? wts.m_Header->m_Pairings : 1;
    if (plan.m_Workspace.m_PanelsSize > 0 && plan.m_Workspace.m_Panels * expanded * plan.m_PanelSize > plan.m_Workspace.m_PanelsSize) {
        throw std::invalid_argument("IntegerConvAvx2: weights with " + std::to_string(expanded) +
                                    " variants per quad for a workspace sized for fewer");
    }
    // Blocks of the weights' rows: kConvRows, or kQuadRows (packed for a channel-quad output).
    const std::size_t depth = plan.m_Depth, quads = plan.m_Quads, pixels = plan.m_Pixels, blocks = wts.m_Header->m_Blocks;
    const std::size_t blockRows = wts.m_Header->m_Rows;
    const std::size_t outChannels = plan.m_OutChannels, panelSize = plan.m_PanelSize, rowBytes = plan.m_RowBytes;
    const ConvWorkspace& layout = plan.m_Workspace;
    const std::size_t panels = layout.m_Panels;
    // The taps as u8 (an s8 input's bytes plus 128), so the zero point too.
    const int32_t zpU8 = xSigned ? zp + 128 : zp;
    PaddedInput padded = plan.m_Padded;
    if (plan.m_UsesPadded) padded.m_Data = workspace + layout.m_PanelsSize;
    const auto* direct = static_cast<const uint8_t*>(padded.m_Data ? padded.m_Data : x);
    const QuadFrame& frame = plan.m_Frame;
    const uint8_t* quadFrame = frame.m_Copy ? workspace + layout.m_PanelsSize : static_cast<const uint8_t*>(x);
    // Weights in blocks of a quad exactly where the output is in channel quads (PackIntegerConvWeights).
    if (wts.m_Header->m_Whole != 0) throw std::invalid_argument("IntegerConvAvx2: whole weights are for the matmul's GEMV rows");
    if ((blockRows == kQuadRows) != out.m_ChannelQuads || (out.m_ChannelQuads && (!out.m_Quantized || out.m_PixelMajor))) {
        throw std::invalid_argument("IntegerConvAvx2: weights packed for a channel-quad output run with another, or the reverse");
    }
    const auto packTaps = [&](std::size_t t, uint8_t* to) {
        if (plan.m_ChannelQuads) {
            PackQuadPanel(quadFrame, plan, t, xSigned, wts.m_QuadVariants, to);
            return;
        }
        if (plan.m_UsesPadded) {
            // Over the padded copy (slack after each plane for the reads past a last panel): 16
            // adjacent bytes per tap within an output row, gathered where the panel spans rows.
            const IntegerConvPlan::CompactPanel& c = plan.m_CompactPanels[t];
            if (c.m_Contiguous) {
                PackDirectPanel(direct + c.m_First, plan.m_Offsets.data(), plan.m_Offsets.size(), xSigned, to);
                return;
            }
            if (c.m_Fits) {
                PackCompactPanel(direct + c.m_First, plan.m_Offsets.data(), plan.m_Offsets.size(), xSigned, c.m_Rel, to);
                return;
            }
        } else if (!plan.m_Offsets.empty() && t * kPanel + kPanel <= pixels) {
            // An unpadded stride-1 1x1 convolution's planes as they are (no slack: not a last panel).
            PackDirectPanel(direct + t * kPanel, plan.m_Offsets.data(), plan.m_Offsets.size(), xSigned, to);
            return;
        }
        const auto fill = static_cast<uint8_t>(zpU8);
        if (xSigned) PackConvPanel(static_cast<const int8_t*>(x), s, plan.m_Taps, t * kPanel, pixels, fill, to);
        else PackConvPanel(static_cast<const uint8_t*>(x), s, plan.m_Taps, t * kPanel, pixels, fill, to);
    };
    // Panel t as the weights read it: its quads in their variants where the weights chose them
    // (PackQuadPanel puts them in as it copies).
    const auto pack = [&](std::size_t t, uint8_t* to) {
        packTaps(t, to);
        if (wts.m_QuadVariants && !plan.m_ChannelQuads) ReorderQuads(to, wts.m_QuadVariants, quads);
    };
    const bool prefetch = PrefetchesWeights(layout.m_PanelsSize > 0, blocks, quads, blockRows);
    ConvTileTable tiles = ConvTilesFor(paired, prefetch);
    // Whole panels quantized without a requantization run their blocks of channels in one call
    // (ConvTileRun), from each channel's RowStart worked out here once.
    const bool runsTiles = out.m_Quantized && !out.m_PixelMajor && out.m_OutScale == 1.0f && !out.m_Requantize;
    const ConvTileRunFn run = kConvTileRuns[paired][prefetch][out.m_ChannelQuads];
    std::vector<int32_t> starts(runsTiles ? blocks * blockRows : 0, 0);
    for (std::size_t ch = 0; ch < starts.size() && ch < outChannels; ++ch) starts[ch] = RowStart(wts, ch, bias, zpU8);
    const bool upper = runsTiles && UpperClampNeeded(starts.data(), outChannels, 4 * quads, scales, perChannel, out.m_FloatBias);
    const auto tile = [&](std::size_t blk, const PanelRuns& runs, const uint8_t* panel) {
        const std::size_t rows = std::min(blockRows, outChannels - blk * blockRows);
        tiles[HalfPanel(runs)][rows](wts, blk, panel, zpU8, bias, scales, perChannel, out, pixels, runs);
    };
    // A panel of at most kConvGemvPixels pixels: each pixel's taps as a row (GatherPanelRows) against
    // each block in the GEMV loop, every lane useful (a tile's 8 lanes for 1 pixel took 14% of a
    // 7x7 layer); the sums go in their pixels' lanes through the tile's epilogue (kStoreSums).
    const auto gemv = [&](std::size_t blk, const PanelRuns& runs, const uint8_t* rows) {
        const std::size_t ch = blk * blockRows, count = std::min(blockRows, outChannels - ch);
        int32_t lanes[kRows][kPanel] = {};
        std::size_t j = 0;
        for (int u = 0; u < runs.m_Count; ++u) {
            for (std::size_t i = 0; i < runs.m_Length[u]; ++i, ++j) {
                uint32_t sums[kConvRows];
                GemvRow(rows + j * rowBytes, false, depth, wts, blk, sums);
                for (std::size_t r = 0; r < count; ++r) {
                    lanes[r][runs.m_Lane[u] + i] = static_cast<int32_t>(sums[r] + static_cast<uint32_t>(RowStart(wts, ch + r, bias, zpU8)));
                }
            }
        }
        kStoreSums[count](lanes, ch, scales, perChannel, out, pixels, runs);
    };
    // Blocks [from, to) over one panel: a run of the whole blocks where it takes one, then tiles.
    const auto blocksOver = [&](std::size_t from, std::size_t to, const PanelRuns& runs, const uint8_t* panel) {
        std::size_t blk = from;
        if (runsTiles && runs.m_Count == 1 && runs.m_Length[0] == kPanel) {
            const std::size_t end = std::min(to, outChannels / blockRows);
            if (blk < end) {
                run(wts, blk, end, panel, starts.data(), scales, perChannel, out,
                    out.m_Quantized + runs.m_Pixel[0] * (out.m_ChannelQuads ? 4 : 1), pixels, upper);
            }
            blk = std::max(blk, end);
        }
        for (; blk < to; ++blk) tile(blk, runs, panel);
    };
    const std::size_t parityBytes = plan.m_UsesPadded && s.m_StrideH == 2 ? ParityRowBytes(s, padded) : 0;
    // One team for the padded copy and the products (a second fork per layer cost more than it saved).
#pragma omp parallel
    {
        if (padded.m_Data) {
            // The padded copy (the zero point around the input, and as slack after each plane).
            uint8_t* to = workspace + layout.m_PanelsSize;
            const auto* from = static_cast<const uint8_t*>(x);
            const uint8_t fill = static_cast<uint8_t>(zp);
            const std::size_t planes = padded.m_PhasesY * padded.m_PhasesX;
            uint8_t* parityRow = parityBytes > 0 ? ThreadBuffer(parityBytes) : nullptr;
#pragma omp for schedule(static)
            for (std::size_t c = 0; c < s.m_Channels; ++c) {
                uint8_t* plane = to + c * planes * padded.m_Plane;
                if (s.m_StrideH == 2) {
                    std::memset(plane, fill, planes * padded.m_Plane);
                    SplitByParity(from + c * s.m_InH * s.m_InW, s, padded, fill, parityRow, plane);
                    continue;
                }
                CopyIntoFrame(from + c * s.m_InH * s.m_InW, s, 1, padded.m_Height, padded.m_Width, padded.m_Plane, fill, plane);
            }
        }
        if (frame.m_Copy) {
            // A channel-quad input's padded copy: each quad's rows of 4-byte pixels into the frame
            // filled with the zero point.
            uint8_t* to = workspace + layout.m_PanelsSize;
            const auto* from = static_cast<const uint8_t*>(x);
            const std::size_t planeBytes = frame.m_Plane * 4;
#pragma omp for schedule(static)
            for (std::size_t q = 0; q < s.m_Channels / 4; ++q) {
                CopyIntoFrame(from + q * s.m_InH * s.m_InW * 4, s, 4, frame.m_Height, frame.m_Width, planeBytes, static_cast<uint8_t>(zp),
                              to + q * planeBytes);
            }
        }
        if (layout.m_PanelsSize > 0) {
            // The weights outweigh the input's taps (deep layers on small images): every panel packed
            // first (and the rows of the panels of few pixels gathered once), then each block of
            // output channels runs over all of them, its weights read once.
            uint8_t* all = workspace;
            uint8_t* small = workspace + layout.m_PanelsSize + layout.m_PaddedSize;
            uint8_t* packedAt = expanded > 1 ? ThreadBuffer(panelSize) : nullptr;
#pragma omp for schedule(static)
            for (std::size_t t = 0; t < panels; ++t) {
                if (expanded > 1) {
                    pack(t, packedAt);
                    ExpandVariants(packedAt, quads, expanded, all + t * expanded * panelSize);
                    continue;
                }
                pack(t, all + t * panelSize);
                if (plan.m_Slot[t] < panels) {
                    GatherPanelRows(plan.m_Runs[t], all + t * panelSize, quads, rowBytes, small + plan.m_Slot[t] * kConvGemvPixels * rowBytes);
                }
            }
            // Each thread its equal share of the blocks, kRunBlocks at a time over every panel (their
            // weights stay in L1 while the panels come from L2), so that whole panels run them in one
            // call (ConvTileRun).
            const std::size_t threads = static_cast<std::size_t>(omp_get_num_threads());
            const std::size_t me = static_cast<std::size_t>(omp_get_thread_num());
            const std::size_t first = blocks * me / threads, last = blocks * (me + 1) / threads;
            for (std::size_t b0 = first; b0 < last; b0 += kRunBlocks) {
                const std::size_t b1 = std::min(last, b0 + kRunBlocks);
                for (std::size_t t = 0; t < panels; ++t) {
                    const PanelRuns& runs = plan.m_Runs[t];
                    if (plan.m_Slot[t] < panels) {
                        for (std::size_t blk = b0; blk < b1; ++blk) gemv(blk, runs, small + plan.m_Slot[t] * kConvGemvPixels * rowBytes);
                    } else if (runs.m_Count > 0) {
                        blocksOver(b0, b1, runs, all + t * expanded * panelSize);
                    }
                }
            }
        } else {
            // Each thread packs a panel of 16 pixels (in L1) and runs blocks of output channels over
            // it: an equal share of the (panel, block) pairs, in panel order, so that no thread waits
            // for another's extra panel (2-4% of a 28x28 layer's time at 2 threads); a panel split
            // between two threads is packed by both.
            // With pairings the panel is packed at `packedAt` and expanded to its variants.
            const std::size_t variants = expanded > 1 ? expanded : 0;
            uint8_t* panel = ThreadBuffer((variants + 1) * panelSize + kConvGemvPixels * rowBytes);
            uint8_t* packedAt = panel + variants * panelSize;
            uint8_t* rows = packedAt + panelSize;
            const std::size_t threads = static_cast<std::size_t>(omp_get_num_threads());
            const std::size_t me = static_cast<std::size_t>(omp_get_thread_num()), units = panels * blocks;
            const std::size_t first = units * me / threads, last = units * (me + 1) / threads;
            for (std::size_t u = first; u < last;) {
                const std::size_t t = u / blocks, from = u % blocks, to = std::min(blocks, from + (last - u));
                u += to - from;
                const PanelRuns& runs = plan.m_Runs[t];
                if (runs.m_Count == 0) continue;
                pack(t, packedAt);
                if (variants > 0) ExpandVariants(packedAt, quads, variants, panel);
                if (PixelsIn(runs) <= kConvGemvPixels) {
                    GatherPanelRows(runs, packedAt, quads, rowBytes, rows);  // the one-pairing panel (never paired here)
                    for (std::size_t blk = from; blk < to; ++blk) gemv(blk, runs, rows);
                    continue;
                }
                blocksOver(from, to, runs, panel);
            }
        }
    }
}

namespace {

/// Rows [row0, row0 + 16) of A ([m][k], u8 or s8: as u8, an s8 byte plus 128) as a panel of taps,
/// [quad][16][4]: each row's 4 k's of a quad are 4 adjacent bytes of A. Rows past m and k's past
/// k are 0 (their weights are 0; such rows are not stored).
void PackRowPanel(const uint8_t* a, bool aSigned, std::size_t m, std::size_t k, std::size_t row0, uint8_t* out) {
    const std::size_t quads = Quads(k), whole = k / 4;
    const uint32_t toU8 = aSigned ? 0x80808080u : 0u;
    for (std::size_t j = 0; j < kPanel; ++j) {
        const std::size_t row = row0 + j;
        uint8_t* to = out + 4 * j;
        if (row >= m) {
            for (std::size_t q = 0; q < quads; ++q) std::memset(to + q * 4 * kPanel, 0, 4);
            continue;
        }
        const uint8_t* from = a + row * k;
        for (std::size_t q = 0; q < whole; ++q) {
            uint32_t v;
            std::memcpy(&v, from + 4 * q, 4);
            v ^= toU8;
            std::memcpy(to + q * 4 * kPanel, &v, 4);
        }
        if (whole < quads) {
            uint8_t tail[4] = {};
            for (std::size_t i = 4 * whole; i < k; ++i) tail[i - 4 * whole] = static_cast<uint8_t>(from[i] ^ (toU8 & 0xFF));
            std::memcpy(to + whole * 4 * kPanel, tail, 4);
        }
    }
}


/// One group of 16 bytes of A (a16: 4 quads) times one group of a block's bytes (16 x kR at wg: [4
/// quads][kR rows][4]) as vectors, A's bytes shuffled under each weight byte, into the lanes of
/// (quad, row) of acc0-acc2 (GemvRow's layout of them; acc2 unused at 4 rows).
template <std::size_t kR>
__attribute__((target("avx2"), always_inline)) inline void GemvGroup(__m128i a16, const int8_t* wg, __m256i& acc0, __m256i& acc1,
                                                                      __m128i& acc2) {
    const __m256i ones = _mm256_set1_epi16(1);
    const __m256i both = _mm256_broadcastsi128_si256(a16);
    const __m256i w0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wg));
    const __m256i w1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wg + 32));
    if constexpr (kR == kQuadRows) {
        // Lanes (q0 rows 0-3, q1 rows 0-3) and (q2, q3).
        const __m256i pick0 = _mm256_setr_epi8(0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 6, 7, 4, 5, 6, 7, 4, 5, 6, 7, 4, 5, 6, 7);
        const __m256i pick1 = _mm256_setr_epi8(8, 9, 10, 11, 8, 9, 10, 11, 8, 9, 10, 11, 8, 9, 10, 11, 12, 13, 14, 15, 12, 13, 14, 15, 12,
                                               13, 14, 15, 12, 13, 14, 15);
        acc0 = _mm256_add_epi32(acc0, QuadSums(_mm256_shuffle_epi8(both, pick0), w0, ones));
        acc1 = _mm256_add_epi32(acc1, QuadSums(_mm256_shuffle_epi8(both, pick1), w1, ones));
    } else {
        static_assert(kR == kConvRows, "blocks of kConvRows or kQuadRows");
        const __m256i pick0 = _mm256_setr_epi8(0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 6, 7, 4, 5, 6, 7, 4, 5, 6, 7);
        const __m256i pick1 = _mm256_setr_epi8(4, 5, 6, 7, 4, 5, 6, 7, 8, 9, 10, 11, 8, 9, 10, 11, 8, 9, 10, 11, 8, 9, 10, 11, 8, 9, 10, 11,
                                               12, 13, 14, 15);
        const __m128i pick2 = _mm_setr_epi8(12, 13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15);
        const __m128i w2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(wg + 64));
        acc0 = _mm256_add_epi32(acc0, QuadSums(_mm256_shuffle_epi8(both, pick0), w0, ones));
        acc1 = _mm256_add_epi32(acc1, QuadSums(_mm256_shuffle_epi8(both, pick1), w1, ones));
        acc2 = _mm_add_epi32(acc2, _mm_madd_epi16(_mm_maddubs_epi16(_mm_shuffle_epi8(a16, pick2), w2), _mm256_castsi256_si128(ones)));
    }
}

/// One row of A (u8; an s8 row's bytes read plus 128 when `flip`, as the tiles read them, zpU8
/// likewise) times one block of the packed weights: the block's kR rows' sums. Per 4 quads of
/// depth the block's 16 x kR bytes ([quad][kR rows][4]) as vectors, A's 16 bytes of those quads
/// spread to match by byte shuffles, vpmaddubsw and vpmaddwd into lanes of (quad, row) - every lane
/// useful - summed per row after the loop; the tail quads and the block's corrections in scalar
/// code. resnet50's classifier (1 x 2048 x 1000) ran 0.54-0.75 ms on half tiles (one lane of eight
/// used) in the model.
/// How far ahead of its reads the GEMV loop on whole weights prefetches them (two lines per group of
/// 80 bytes): a classifier's (resnet50's 2 MB) come from L3 or memory, and the hardware prefetcher
/// alone left the loop waiting on them (0.27 ms cold in the kernel bench, 0.12 with these).
constexpr std::size_t kGemvPrefetchBytes = 1024;

template <std::size_t kR>
__attribute__((target("avx2"))) void GemvRowOf(const uint8_t* a, bool flip, std::size_t k, const ConvWeights& wts, std::size_t block,
                                               uint32_t (&sums)[kConvRows]) {
    const std::size_t quads = wts.m_Header->m_Quads, groups = k / 16;
    const uint8_t flipByte = flip ? 0x80 : 0;
    const uint32_t flipQuad = flip ? 0x80808080u : 0u;
    const __m128i toU8 = _mm_set1_epi8(static_cast<char>(flipByte));
    const int8_t* w = wts.m_Blocks + block * quads * 4 * kR;
    const int8_t* dense = wts.m_Dense ? wts.m_Dense + block * quads * 4 * kR : nullptr;
    __m256i acc0 = _mm256_setzero_si256(), acc1 = acc0;
    __m128i acc2 = _mm_setzero_si128();
    if (wts.m_Header->m_Whole != 0) {
        // Whole weights (PackIntegerGemvWeights): each byte of A as 16 x its high 4 bits plus its low
        // 4, each half's products by vpmaddubsw (a pair within 15 x 128 x 2, never saturating), the
        // high half's sums times 16 after the loop - the weights read once, no correction.
        const __m128i low4 = _mm_set1_epi8(0x0F);
        __m256i high0 = _mm256_setzero_si256(), high1 = high0;
        __m128i high2 = _mm_setzero_si128();
        for (std::size_t g = 0; g < groups; ++g) {
            const __m128i a16 = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + 16 * g)), toU8);
            const int8_t* wg = w + g * 4 * 4 * kR;
            _mm_prefetch(reinterpret_cast<const char*>(wg + kGemvPrefetchBytes), _MM_HINT_T0);
            _mm_prefetch(reinterpret_cast<const char*>(wg + kGemvPrefetchBytes + 64), _MM_HINT_T0);
            GemvGroup<kR>(_mm_and_si128(a16, low4), wg, acc0, acc1, acc2);
            GemvGroup<kR>(_mm_and_si128(_mm_srli_epi16(a16, 4), low4), wg, high0, high1, high2);
        }
        acc0 = _mm256_add_epi32(acc0, _mm256_slli_epi32(high0, 4));
        acc1 = _mm256_add_epi32(acc1, _mm256_slli_epi32(high1, 4));
        acc2 = _mm_add_epi32(acc2, _mm_slli_epi32(high2, 4));
    }
    for (std::size_t g = 0; g < groups && wts.m_Header->m_Whole == 0; ++g) {
        const __m128i a16 = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + 16 * g)), toU8);
        GemvGroup<kR>(a16, w + g * 4 * 4 * kR, acc0, acc1, acc2);
        // The group's corrections, laid out as its weights: the same shuffled taps (every pair of
        // both within 128 in magnitude, so each product pair is exact) into the same lanes.
        if (dense) GemvGroup<kR>(a16, dense + g * 4 * 4 * kR, acc0, acc1, acc2);
    }
    if constexpr (kR == kQuadRows) {
        // acc0 + acc1: rows 0-3 of quads (0, 2), then of quads (1, 3).
        alignas(32) uint32_t l[8];
        _mm256_store_si256(reinterpret_cast<__m256i*>(l), _mm256_add_epi32(acc0, acc1));
        for (std::size_t r = 0; r < kR; ++r) sums[r] = l[r] + l[4 + r];
    } else {
        alignas(32) uint32_t l0[8], l1[8], l2[4];
        _mm256_store_si256(reinterpret_cast<__m256i*>(l0), acc0);
        _mm256_store_si256(reinterpret_cast<__m256i*>(l1), acc1);
        _mm_store_si128(reinterpret_cast<__m128i*>(l2), acc2);
        // Lanes: l0 = q0 rows 0-4, q1 rows 0-2; l1 = q1 rows 3-4, q2 rows 0-4, q3 row 0; l2 = q3 rows 1-4.
        sums[0] = l0[0] + l0[5] + l1[2] + l1[7];
        sums[1] = l0[1] + l0[6] + l1[3] + l2[0];
        sums[2] = l0[2] + l0[7] + l1[4] + l2[1];
        sums[3] = l0[3] + l1[0] + l1[5] + l2[2];
        sums[4] = l0[4] + l1[1] + l1[6] + l2[3];
    }
    // The quads after the last whole group (depth past k: weight 0, and A not read there).
    for (std::size_t q = 4 * groups; q < quads; ++q) {
        for (std::size_t r = 0; r < kR; ++r) {
            for (std::size_t i = 0; i < 4 && 4 * q + i < k; ++i) {
                const std::size_t at = (q * kR + r) * 4 + i;
                const int32_t weight = int32_t{w[at]} + (dense ? int32_t{dense[at]} : 0);
                sums[r] += static_cast<uint32_t>(a[4 * q + i] ^ flipByte) * static_cast<uint32_t>(weight);
            }
        }
    }
    if (dense) return;
    // The corrections, four at a time where their quads lie within k (a classifier with weights
    // spread over the int8 range has a correction in 40% of its quad-rows).
    const std::size_t wholeQuads = k / 4;
    for (std::size_t r = 0; r < kR; ++r) {
        const ConvCorrection* c = wts.m_Corrections + wts.m_RowStart[block * kR + r];
        const ConvCorrection* end = wts.m_Corrections + wts.m_RowStart[block * kR + r + 1];
        __m128i acc = _mm_setzero_si128();
        for (; end - c >= 4 && c[3].m_Quad < wholeQuads; c += 4) {
            uint32_t x[4];
            for (int j = 0; j < 4; ++j) {
                std::memcpy(&x[j], a + 4 * c[j].m_Quad, 4);
                x[j] ^= flipQuad;
            }
            const __m128i taps = _mm_setr_epi32(static_cast<int32_t>(x[0]), static_cast<int32_t>(x[1]), static_cast<int32_t>(x[2]),
                                                static_cast<int32_t>(x[3]));
            const __m128i bytes = _mm_setr_epi32(c[0].m_Bytes, c[1].m_Bytes, c[2].m_Bytes, c[3].m_Bytes);
            acc = _mm_add_epi32(acc, _mm_madd_epi16(_mm_maddubs_epi16(taps, bytes), _mm_set1_epi16(1)));
        }
        alignas(16) uint32_t four[4];
        _mm_store_si128(reinterpret_cast<__m128i*>(four), acc);
        sums[r] += four[0] + four[1] + four[2] + four[3];
        for (; c != end; ++c) {
            int8_t bytes[4];
            std::memcpy(bytes, &c->m_Bytes, 4);
            for (std::size_t i = 0; i < 4 && 4 * c->m_Quad + i < k; ++i) {
                sums[r] += static_cast<uint32_t>(a[4 * c->m_Quad + i] ^ flipByte) * static_cast<uint32_t>(static_cast<int32_t>(bytes[i]));
            }
        }
    }
}

void GemvRow(const uint8_t* a, bool flip, std::size_t k, const ConvWeights& wts, std::size_t block, uint32_t (&sums)[kConvRows]) {
    if (wts.m_Header->m_Rows == kQuadRows) GemvRowOf<kQuadRows>(a, flip, k, wts, block, sums);
    else GemvRowOf<kConvRows>(a, flip, k, wts, block, sums);
}

/// The float part of ConvTile's epilogue for one GEMV value: float(sum + bias - zp x the weight
/// sum) x scale, the float bias, Relu (column `ch`).
float GemvValue(uint32_t sum, std::size_t ch, int32_t zpU8, const ConvWeights& wts, const int32_t* bias, const float* scales,
                bool perColumn, const IntegerConvOutput& out) {
    const auto shift = static_cast<uint32_t>(RowStart(wts, ch, bias, zpU8));
    float v = static_cast<float>(static_cast<int32_t>(sum + shift)) * scales[perColumn ? ch : 0];
    if (out.m_FloatBias) v = v + out.m_FloatBias[ch];
    return out.m_Relu ? (v > 0.0f ? v : 0.0f) : v;  // as vmaxps(v, 0)
}

bool GemmPanelsFirst(std::size_t m, std::size_t k, std::size_t n) {
    return ConvBlocks(n) * Quads(k) * 4 * kConvRows > Panels(m) * Quads(k) * 4 * kPanel;
}

}  // namespace

std::size_t IntegerGemmBytesWorkspaceSize(std::size_t m, std::size_t k, std::size_t n) {
    return m > kGemvRows && GemmPanelsFirst(m, k, n) ? Panels(m) * Quads(k) * 4 * kPanel : 0;
}

void IntegerGemmBytesAvx2(const void* a, bool aSigned, int32_t zp, std::size_t m, std::size_t k, const uint8_t* packed,
                          std::size_t n, const int32_t* bias, const float* scales, bool perColumn, const IntegerConvOutput& to,
                          uint8_t* workspace) {
    const ConvWeights wts = ViewOf(packed);
    if (wts.m_QuadVariants) {
        throw std::invalid_argument("IntegerGemmBytesAvx2: weights packed with a variant per quad (a convolution's)");
    }
    if (wts.m_XOffsets) {
        throw std::invalid_argument("IntegerGemmBytesAvx2: weights packed with pairings or twin quads (a convolution's)");
    }
    if (wts.m_Header->m_Whole != 0 && m > kGemvRows) {
        throw std::invalid_argument("IntegerGemmBytesAvx2: whole weights (PackIntegerGemvWeights) for " + std::to_string(m) +
                                    " rows of A; they are for at most " + std::to_string(kGemvRows));
    }
    const std::size_t panels = Panels(m), blocks = ConvBlocks(n), panelSize = Quads(k) * 4 * kPanel;
    const int32_t zpU8 = aSigned ? zp + 128 : zp;
    const auto* rows = static_cast<const uint8_t*>(a);
    IntegerConvOutput out = to;
    out.m_PixelMajor = true;
    if (m <= kGemvRows) {
        // A few rows: each row against each block in the GEMV loop (every lane useful); a quantized
        // result through the quantize kernel (the division by m_OutScale, clamp, rounding, zero point).
#pragma omp parallel for schedule(static)
        for (std::size_t blk = 0; blk < blocks; ++blk) {
            const std::size_t ch = blk * kConvRows, count = std::min(kConvRows, n - ch);
            for (std::size_t i = 0; i < m; ++i) {
                uint32_t sums[kConvRows];
                GemvRow(rows + i * k, aSigned, k, wts, blk, sums);
                float values[kConvRows];
                for (std::size_t r = 0; r < count; ++r) values[r] = GemvValue(sums[r], ch + r, zpU8, wts, bias, scales, perColumn, out);
                if (out.m_Float) std::memcpy(out.m_Float + i * n + ch, values, count * sizeof(float));
                else Quantize(values, out.m_Quantized + i * n + ch, out.m_Signed, count, out.m_OutScale, out.m_ZeroPoint, KernelIsa::Avx2);
            }
        }
        return;
    }
    ConvTileTable tiles = ConvTilesFor(false, PrefetchesWeights(GemmPanelsFirst(m, k, n), blocks, Quads(k), kConvRows));
    const auto tile = [&](std::size_t blk, std::size_t t, const uint8_t* panel) {
        PanelRuns runs;
        runs.m_Count = 1;
        runs.m_Pixel[0] = t * kPanel;
        runs.m_Length[0] = std::min(kPanel, m - t * kPanel);
        tiles[HalfPanel(runs)][std::min(kConvRows, n - blk * kConvRows)](wts, blk, panel, zpU8, bias, scales, perColumn, out, n,
                                                                          runs);
    };
    if (GemmPanelsFirst(m, k, n)) {
        // The weights outweigh A: every panel of A packed first, then each block of weights over all of them.
#pragma omp parallel
        {
#pragma omp for schedule(static)
            for (std::size_t t = 0; t < panels; ++t) PackRowPanel(rows, aSigned, m, k, t * kPanel, workspace + t * panelSize);
#pragma omp for schedule(static)
            for (std::size_t blk = 0; blk < blocks; ++blk) {
                for (std::size_t t = 0; t < panels; ++t) tile(blk, t, workspace + t * panelSize);
            }
        }
        return;
    }
#pragma omp parallel
    {
        std::vector<uint8_t> panel(panelSize);
#pragma omp for schedule(static)
        for (std::size_t t = 0; t < panels; ++t) {
            PackRowPanel(rows, aSigned, m, k, t * kPanel, panel.data());
            for (std::size_t blk = 0; blk < blocks; ++blk) tile(blk, t, panel.data());
        }
    }
}

}  // namespace trellis::cpuacc
