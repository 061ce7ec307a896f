// CpuAcc's own vectorized kernels, for the ops neither oneDNN nor XNNPACK covers. Each has an
// AVX-512, an AVX2 and a scalar version of the same formula, chosen at run time by the CPU's
// features (the library is built for baseline x86-64).
#pragma once

#include <trellis/Descriptors.hpp>

#include <cstddef>
#include <limits>
#include <memory>
#include <cstdint>
#include <optional>
#include <vector>

namespace trellis::cpuacc {

enum class KernelIsa { Scalar, Avx2, Avx512 };

/// The best version this CPU runs.
KernelIsa CpuKernelIsa();
/// Every version this CPU runs, scalar first, whatever TRELLIS_MAX_CPU_ISA caps the engine's
/// choice to (tests run each).
std::vector<KernelIsa> CpuKernelIsas();
/// The cap set by the environment variable TRELLIS_MAX_CPU_ISA (avx512, avx2 or scalar, any
/// case; unset or empty: none) - the own kernels' equivalent of oneDNN's ONEDNN_MAX_CPU_ISA, so
/// the AVX2 and scalar paths can be run and tested on any machine. A bad value throws
/// InvalidArgumentException naming it. Read on every call (cheap), so a test may change it.
std::optional<KernelIsa> KernelIsaCap();
/// The version CpuAcc's kernels use: the CPU's best, capped by TRELLIS_MAX_CPU_ISA.
KernelIsa BestKernelIsa();
const char* KernelIsaName(KernelIsa isa);

/// out[i] = erf(in[i]) for n floats (in == out allowed), with the given version; `isa` must be
/// one this CPU runs (at most BestKernelIsa()). Accuracy: at most 3.6e-7 relative error (about
/// 3 ulp) against the exact erf, NaN stays NaN, +-inf gives +-1 (scripts/fit_erf.py made the
/// approximation).
void Erf(const float* in, float* out, std::size_t n, KernelIsa isa);

/// out[i] = in[i] * sigmoid(in[i]) (SiLU / swish) for n floats (in == out allowed), without a
/// division: exp by a degree-5 polynomial after range reduction, then a reciprocal estimate and
/// Newton step. Accuracy: at most 3e-7 relative error against the exact value (plus 1e-38 in the
/// denormal range); below -80 the result (under 2e-33 in magnitude) may be 0, and below -88 it is
/// 0; +inf gives +inf, NaN stays NaN.
void Swish(const float* in, float* out, std::size_t n, KernelIsa isa);

/// The sizes and options of one scaled dot-product attention: an ONNX Attention (no softcap,
/// window or qk output; with a past, K and V are the present tensors, past and new keys) or a
/// fused MatMul -> [scale] -> [mask Add] -> Softmax -> MatMul.
struct AttentionShape {
    std::size_t m_Batch = 0, m_QHeads = 0, m_KvHeads = 0, m_QLen = 0, m_KvLen = 0, m_HeadSize = 0, m_VHeadSize = 0;
    /// Where each element lies, in floats: element (batch b, head h, position i, element e) of Q is
    /// q[b * s[0] + h * s[1] + i * s[2] + e * s[3]] (h is the kv head for K and V; i the key for K
    /// and V). Any strides (transposed or head-split views read in place); Y is written the same way.
    std::size_t m_QStrides[4] = {0, 0, 0, 0}, m_KStrides[4] = {0, 0, 0, 0}, m_VStrides[4] = {0, 0, 0, 0},
                m_YStrides[4] = {0, 0, 0, 0};
    float m_Scale = 1.0f;
    /// Causal: key j > query i + m_CausalOffset is masked (the offset is the past length: the
    /// queries are the last of the keys, ONNX Attention's bottom-right alignment with a past).
    bool m_Causal = false;
    std::size_t m_CausalOffset = 0;
    /// What a causally masked score becomes: -inf (ONNX Attention; applied after the mask, which
    /// cannot undo it), or a finite value (a fused Where(causal, scores, finfo.min)), then applied
    /// before the mask is added, as those layers compute it.
    float m_CausalFill = -std::numeric_limits<float>::infinity();
    enum class Mask { None, Boolean, Additive } m_Mask = Mask::None;
    /// Mask element of (batch, q head, query, key) = sum of index * stride (0 where it broadcasts);
    /// keys at or past m_MaskLen are masked.
    std::size_t m_MaskStride[4] = {0, 0, 0, 0};
    std::size_t m_MaskLen = 0;
    /// A row whose keys are all masked gives NaN (what Softmax over a row of -inf gives, so the
    /// fused MatMul-Softmax-MatMul pattern computes what its layers do) rather than ONNX
    /// Attention's 0.
    bool m_AllMaskedIsNan = false;
    KernelIsa m_Isa = KernelIsa::Scalar;  ///< the inner loops' version (the exp: AVX2 also on AVX-512)
};

/// The strides of a dense row-major (batch, heads, sequence, size) tensor, for AttentionShape.
void DenseAttentionStrides(std::size_t heads, std::size_t len, std::size_t size, std::size_t out[4]);

/// Y = softmax(scale * Q K^T + bias) V for every (batch, head, query) row, one fused pass per row
/// over the OpenMP team: the scores of a row stay in a thread's buffer, never in memory between
/// primitives. Grouped-query: q head h reads kv head h / (q heads / kv heads). A row whose keys
/// are all masked gives 0 (as ONNX's reference) or NaN (m_AllMaskedIsNan). `mask` is bytes (Boolean: 0 masks) or floats
/// (added), per m_Mask; Float32 throughout, the dot products and the softmax in float. K (as K^T)
/// is packed once per kv head; V is read in place where its elements are contiguous (packed once
/// per kv head otherwise), Q rows and Y rows likewise.
void Attention(const AttentionShape& s, const float* q, const float* k, const float* v, const void* mask, float* y);

/// RMS normalization of `rows` rows of `inner` floats: y = x / sqrt(mean(x^2) + eps) * gamma
/// (gamma: `inner` floats, or nullptr for none), as T5 and LLaMA compute it (exported as Pow,
/// ReduceMean, Add, Sqrt, Div/Reciprocal, Mul, Mul; ONNX 23's RMSNormalization). Float32 sums over
/// the vector lanes (as PyTorch's float32 computation does); `isa` as for Erf. Rows are spread over
/// the calling thread's OpenMP team.
void RmsNorm(const float* in, const float* gamma, float* out, std::size_t rows, std::size_t inner, float eps,
             KernelIsa isa);

/// A reduction over one run of adjacent dims of a plain Float32 tensor viewed as [outer][r][inner]:
/// out[o][i] = f over j of in[o][j][i]. Sum, Mean (the sum over r), L1 (sum of |x|), L2 (the square
/// root of the sum of x^2) and SumSquare, the sums in float32 (in order over j for inner > 1, over the
/// vector lanes for inner == 1). oneDNN 2.6 has only its reference kernel for the Lp norms and for a
/// sum over a dim that is not the innermost (ReduceL2 in Swin V2's cosine attention, L1/L2 of
/// LpNormalization); `isa` as for Erf; outer rows spread over the calling thread's OpenMP team.
enum class AxisReduction { Sum, Mean, L1, L2, SumSquare };
/// The [outer][r][inner] view of `dims` reduced over the dims marked in `reduced`, when those of
/// them with more than one element are adjacent (false otherwise: ReduceAxis cannot do it in one pass).
bool AxisRunOf(const std::vector<std::size_t>& dims, const std::vector<bool>& reduced, std::size_t& outer, std::size_t& r,
               std::size_t& inner);
void ReduceAxis(const float* in, float* out, std::size_t outer, std::size_t r, std::size_t inner, AxisReduction op,
                KernelIsa isa);

/// Steps of an element-wise chain (CpuAcc's ElementwiseChain node), one block of n floats each:
/// out = v op w with w full (`columns` 0: w[i]) or a vector over rows of `columns` (w[i % columns],
/// the block starting a row); reversed: w op v. Add/Sub/Mul/Div, one IEEE rounding each.
void ChainBinary(BinaryOperation op, const float* v, const float* w, std::size_t columns, bool reversed, float* out,
                 std::size_t n, KernelIsa isa);
/// out = alpha * v + beta with one rounding (fma), as oneDNN's eltwise_linear computes it.
void ChainLinear(const float* v, float alpha, float beta, float* out, std::size_t n, KernelIsa isa);
/// out = v < 0 ? 0 : v (NaN and -0 kept, as oneDNN's relu).
void ChainRelu(const float* v, float* out, std::size_t n, KernelIsa isa);

/// A 2-D max pooling over a channel-blocked image: `blocks` blocks of channels, each an
/// [in height][in width][block] array of floats (oneDNN's nChw8c / nChw16c at batch 1: one block
/// per group of 8 or 16 channels; NHWC: one block of all channels; plain NCHW: blocks of 1). Output likewise, [out
/// height][out width][block] per block. Windows are clipped to the image (padding never wins, as
/// ONNX's MaxPool pads with -inf); every window must hold at least one input pixel.
struct MaxPoolShape {
    std::size_t m_Blocks = 0, m_Block = 0;  ///< the channel blocks, and floats per pixel in a block
    std::size_t m_InH = 0, m_InW = 0, m_OutH = 0, m_OutW = 0;
    std::size_t m_KernelH = 1, m_KernelW = 1, m_StrideH = 1, m_StrideW = 1;
    std::size_t m_PadTop = 0, m_PadLeft = 0;
};
/// Runs the pooling over the calling thread's OpenMP team (output rows of all blocks spread over
/// it); `isa` as for Erf (AVX-512 only where the block is a multiple of 16 floats, otherwise the
/// AVX2 version runs). The maximum of a window is exact (no arithmetic); NaN propagates as
/// _mm*_max_ps does (an input NaN may or may not win), as oneDNN's kernel does.
void MaxPoolBlocked(const MaxPoolShape& s, const float* in, float* out, KernelIsa isa);

/// The widest row MaxPool8Plain (and MaxPoolBlocked's plain layout) vectorizes: its left padding,
/// the input row and the windows' reach past it (per output row it builds the window rows' maximum,
/// then the windows' sliding one, on the stack).
constexpr std::size_t kMaxPoolSlidingRow = 4096;
bool MaxPoolPlainFits(const MaxPoolShape& s);
/// Max pooling of plain 8-bit planes (s.m_Block 1, s.m_Blocks planes of u8, s8 when `s8`): a
/// QDQ model's DequantizeLinear -> MaxPool -> QuantizeLinear on one grid, computed on the 8-bit
/// values (the dequantization is increasing, so the maximum is the same element). Every window must
/// hold an input pixel; the row as described by kMaxPoolSlidingRow. `isa` as for Erf.
void MaxPool8Plain(const MaxPoolShape& s, const void* in, void* out, bool s8, KernelIsa isa);

/// ONNX QuantizeLinear per tensor of n floats to UInt8 (s8: Signed8) at `out`:
/// saturate(round_half_even(in / scale) + zp), bit for bit what ONNX and CpuRef compute (the
/// division in float32); NaN gives the type's minimum (ONNX leaves it undefined).
void Quantize(const float* in, void* out, bool s8, std::size_t n, float scale, int32_t zp, KernelIsa isa);
/// The range DynamicQuantizeLinear quantizes n floats over: lo = min(0, min in), hi = max(0, max
/// in), NaN elements ignored (as CpuRef's std::min / std::max loop does). Exact (no arithmetic).
void ZeroBasedRange(const float* in, std::size_t n, float& lo, float& hi, KernelIsa isa);
/// Quantize then DequantizeLinear with (dqScale, dqZp) in one pass, Float32 to Float32: the same
/// values as the two kernels one after the other.
void QuantizeDequantize(const float* in, float* out, bool s8, std::size_t n, float scale, int32_t zp, float dqScale,
                        int32_t dqZp, KernelIsa isa);
struct QuantizedAddParams {
    float m_ScaleA = 1.0f, m_ScaleB = 1.0f, m_Scale = 1.0f;  ///< a's, b's and the output's scales
    int32_t m_ZpA = 0, m_ZpB = 0, m_Zp = 0;
    bool m_Relu = false;
    /// Nonzero: the sum is multiplied by it instead of divided by m_Scale - only as
    /// QuantizedAddReciprocal gives it, which checked that every pair of inputs gives the same bytes.
    float m_Reciprocal = 0.0f;
};
/// DequantizeLinear a and b, add, [Relu], QuantizeLinear, in one pass over n 8-bit elements of
/// one type (s8: Signed8, else UInt8): the values the separate kernels give.
void QuantizedAdd(const void* a, const void* b, void* out, bool s8, std::size_t n, const QuantizedAddParams& p, KernelIsa isa);
/// 1 / p.m_Scale where QuantizedAdd multiplying by it gives the bytes of the division for every pair
/// of 8-bit inputs (checked on all 65536, with the ISA's kernel and the scalar one), else 0. The
/// division is most of the pass's work on AVX2; the product rounds differently at some ties for
/// about one scale in fifteen.
float QuantizedAddReciprocal(bool s8, const QuantizedAddParams& p, KernelIsa isa);
/// ONNX DequantizeLinear per tensor: out = (in - zp) * scale (exact up to the one float32 rounding).
void Dequantize(const void* in, bool s8, float* out, std::size_t n, float scale, int32_t zp, KernelIsa isa);

/// Floats PackGemmWeights writes for constant weights of k x n.
std::size_t PackedGemmWeightsSize(std::size_t k, std::size_t n);
/// Packs scale * B for GemmAvx2: B is [k][n] row-major, or [n][k] when `transposed`.
void PackGemmWeights(const float* b, std::size_t k, std::size_t n, bool transposed, float scale, float* packed);
/// Floats of the workspace GemmAvx2 needs for m x k A (one block of A's columns, repacked).
std::size_t GemmWorkspaceSize(std::size_t m, std::size_t k);
/// C[m][n] = A[m][k] B + bias (bias: n floats, or nullptr), row-major with row strides lda and
/// ldc, B packed by PackGemmWeights; float32 with FMA, the k sums in blocks of 256. AVX2 + FMA only
/// (CpuAcc uses it where oneDNN would run its GEMM-based kernel, CPUs without AVX-512); on the
/// calling thread's OpenMP team, 16-column panels per thread. `workspace`: GemmWorkspaceSize(m, k)
/// floats.
void GemmAvx2(const float* a, std::size_t lda, const float* packed, const float* bias, float* c, std::size_t ldc,
              std::size_t m, std::size_t k, std::size_t n, float* workspace);

/// The largest k IntegerGemmAvx2 sums exactly in int32: 255 x 128 x k < 2^31 (int8 weights), and
/// 255 x 255 x k < 2^31 for B packed from 8-bit data minus a zero point (PackIntegerOperand).
constexpr std::size_t kMaxIntegerGemmDepth = 65792;
constexpr std::size_t kMaxActivationGemmDepth = 33025;
/// int16 elements PackIntegerOperand writes for a B of k x n.
std::size_t PackedIntegerWeightsSize(std::size_t k, std::size_t n);
/// Packs computed 8-bit B ([k][n] row-major, u8 or s8 when `bSigned`) minus `zp` for
/// IntegerGemmAvx2: 16-bit pairs of k in 16-column panels.
void PackIntegerOperand(const void* b, bool bSigned, int32_t zp, std::size_t k, std::size_t n, int16_t* packed);
/// int16 elements of the workspace IntegerGemmAvx2 needs for m x k A (A repacked as 16-bit pairs).
std::size_t IntegerGemmWorkspaceSize(std::size_t m, std::size_t k);
/// C[m][n] = float(sum over k of (A[m][k] - zp) * B[k][n] + bias[n]) * scale, the sums exact in
/// int32 (k <= kMaxIntegerGemmDepth; the caller keeps bias small enough not to wrap): A is u8 (or s8
/// when `aSigned`) row-major [m][k], B packed by PackIntegerOperand, bias n int32 values or null,
/// scale scales[0] or scales[j] per column (`perColumn`), C row-major [m][n]. AVX2 only (16-bit
/// vpmaddwd: no saturation, unlike vpmaddubsw); on the calling thread's OpenMP team. `workspace`:
/// IntegerGemmWorkspaceSize(m, k) int16 elements. (The products of two computed operands; constant
/// weights take IntegerGemmBytesAvx2.)
void IntegerGemmAvx2(const void* a, bool aSigned, int32_t zp, std::size_t m, std::size_t k, const int16_t* packed,
                     std::size_t n, const int32_t* bias, const float* scales, bool perColumn, float* c, int16_t* workspace);
/// One image and group of a 2-D convolution: its input planes, output size, kernel, strides,
/// dilations (ONNX's: 1 = none) and leading padding.
struct Im2ColShape {
    std::size_t m_Channels, m_InH, m_InW, m_OutH, m_OutW, m_KernelH, m_KernelW;
    std::size_t m_StrideH, m_StrideW, m_DilationH, m_DilationW, m_PadTop, m_PadLeft;
};
/// Packs one group's int8 convolution weights (ONNX's [outChannels][channels][kh][kw], depth =
/// channels x kh x kw) for IntegerConvAvx2: one blob of bytes (its layout is the kernel's).
/// `pairings` (only for a convolution whose plan IntegerConvTakesPairings): each block of output
/// channels pairs each quad of taps whichever of the three ways leaves the fewest weight pairs to
/// correct (vpmaddubsw adds taps (0, 1) and (2, 3); pairing (0, 2), (1, 3) or (0, 3), (1, 2)
/// instead), kept only where that saves at least 1 quad-row in 100; the kernel then reads a panel
/// holding the three orders. resnet50's depth-64 1x1 layers correct 13.7% of their quad-rows with
/// one pairing and 5.2% with the best of three. Up to depth 128 with 20 blocks or more each
/// pairing also with the second tap of both pairs complemented (the panel holds 255 - x, the
/// weights negated, 255 times them added back per channel): a pair of the same signs becomes one
/// of opposite signs, exact whatever its size - six variants, about 1% of those quad-rows corrected.
/// `channelQuadOutput`: blocks of 4 output channels, one quad each, for a convolution that writes
/// channel quads (IntegerConvOutput::m_ChannelQuads; outChannels a multiple of 4), else of 5.
/// `quadVariants` (IntegerConvAvx2's weights only, not IntegerGemmBytesAvx2's): where no pairings
/// are kept, each quad in whichever of those six variants leaves the fewest pairs to correct over
/// all output channels at once, kept where that saves at least 1 quad-row in 100; the kernel
/// reorders each panel's quads to them as it packs it (the panel does not grow). resnet50's 3x3
/// layers correct 1.4-4.6% of their quad-rows in one variant and 0.8-1.9% in the best of six.
/// `twinQuads` (only for a convolution whose plan IntegerConvTakesTwinQuads; with
/// `channelQuadOutput`, blocks of 4 rows): each block's quads in an order of its own, first the
/// pairs whose products add exactly in 16 bits for every row of the block (each 16-bit lane's four
/// weights: positive ones and negative ones each at most 128 in magnitude; each quad in one of the
/// panel's variants), then the others one by one as above.
std::vector<uint8_t> PackIntegerConvWeights(const int8_t* w, std::size_t outChannels, std::size_t depth, bool pairings = false,
                                            bool channelQuadOutput = false, bool quadVariants = false, bool twinQuads = false);
/// Whether PackIntegerConvWeights kept pairings (variants chosen per block) in this blob.
bool IntegerConvWeightsArePaired(const uint8_t* packed);
/// Whether PackIntegerConvWeights kept a variant per quad (`quadVariants`) in this blob.
bool IntegerConvWeightsHaveQuadVariants(const uint8_t* packed);
/// The quad-rows whose weights the blob keeps as corrections (run after a block's main loop).
std::size_t IntegerConvCorrections(const uint8_t* packed);
/// The pairs of twin quads the blob's blocks hold in all (0 without `twinQuads`).
std::size_t IntegerConvTwinPairs(const uint8_t* packed);
/// Where IntegerConvAvx2 writes: Float32 planes, or 8-bit planes quantized with scale 1.
struct IntegerConvOutput {
    float* m_Float = nullptr;        ///< [outChannels][out_h * out_w] Float32 (or, m_PixelMajor, [pixels][outChannels]), or null
    bool m_PixelMajor = false;       ///< IntegerGemmBytesAvx2's: rows of all channels, one per pixel (row of A)
    uint8_t* m_Quantized = nullptr;  ///< else [outChannels][out_h * out_w] UInt8 (Signed8 when m_Signed)
    /// m_Quantized in channel quads: [outChannels / 4][out_h * out_w][4], each pixel's 4 channels of
    /// a quad adjacent (oneDNN's aBcd4b; outChannels a multiple of 4) - the layout a convolution
    /// planned with channelQuads reads without reordering its taps (PlanIntegerConv).
    bool m_ChannelQuads = false;
    bool m_Signed = false;
    int32_t m_ZeroPoint = 0;
    /// QuantizeLinear's scale for the quantized result: the value divided by it before the clamp
    /// (a QDQ matmul's; 1, no division, where the scales were divided by it already).
    float m_OutScale = 1.0f;
    /// A QDQ convolution's: a Float32 bias per channel added after the scale (already divided by
    /// the output scale, as the scale is), and a Relu before the quantization (or null / false).
    const float* m_FloatBias = nullptr;
    bool m_Relu = false;
    /// The quantized result taken on: dequantized ((q - m_ZeroPoint) * m_RequantScale), a Relu when
    /// m_RequantRelu, quantized again (m_RequantOutScale, m_RequantOutZeroPoint, Signed8 when
    /// m_RequantOutSigned) - DequantizeLinear, Relu and QuantizeLinear as their kernels compute them.
    bool m_Requantize = false;
    float m_RequantScale = 1.0f;
    bool m_RequantRelu = false;
    float m_RequantOutScale = 1.0f;
    int32_t m_RequantOutZeroPoint = 0;
    bool m_RequantOutSigned = false;
    /// Nonzero: the requantization multiplies by it instead of dividing by m_RequantOutScale - only
    /// as IntegerRequantizeReciprocal gives it.
    float m_RequantReciprocal = 0.0f;
};
/// 1 / out.m_RequantOutScale where the requantization multiplying by it gives what the division
/// gives for every value the first quantization can produce (all 256 checked), else 0.
float IntegerRequantizeReciprocal(const IntegerConvOutput& out);
/// One image and group of a 2-D convolution in exact integers, the weights stationary: out[o][pixel]
/// = float(sum over taps of (x - zp) * w[o] + bias[o]) * scale (scales[0], or scales[o] per
/// channel), stored as Float32 or quantized (QuantizeLinear with scale 1 and the output's zero
/// point, as CpuRef's Cast, Mul and QuantizeLinear compute it). x: the group's input planes
/// [channels][in_h][in_w], u8 (s8 when xSigned); the taps are read straight from them, 16 output
/// pixels at a time (no im2col buffer), padding adding 0. The products are u8 x s8 by vpmaddubsw,
/// whose 16-bit pair sums saturate: exact here because the packed weights keep every pair's
/// positive and negative weights each within 128 in magnitude (255 x 128 < 2^15; a larger pair is
/// split into two such, the second run as a correction), and an s8 input is taken as u8 by adding 128 to it and to its zero point (the
/// zero point's share, zp times the weights' sum, subtracted per channel). Weights by
/// PackIntegerConvWeights (depth <= kMaxIntegerGemmDepth); AVX2; on the calling thread's OpenMP
/// team. `workspace`: IntegerConvWorkspaceSize bytes (null when that is 0): where the weights
/// outweigh the packed taps, all taps are packed first and each block of weights is read once.
/// The plan (PlanIntegerConv, made once per layer) holds what follows from the shape and the
/// output channels alone: where each tap reads, each panel's output pixels, the workspace's layout
/// (worked out per call it cost 5-100 us a layer: three divisions per tap at a depth of 4608).
/// `channelQuads`: the input in channel quads ([channels / 4][in_h][in_w][4], channels a multiple of
/// 4: IntegerConvTakesChannelQuads; what a convolution writes with IntegerConvOutput::m_ChannelQuads),
/// its depth ordered tap by tap, the channels within each (weights as ChannelQuadWeights orders
/// them): a quad of taps is one pixel's 4 adjacent bytes, so a panel is copies of 16 pixels' 4 bytes
/// (64 adjacent bytes within an output row at stride 1) rather than 4 planes' bytes interleaved.
struct IntegerConvPlan;
std::shared_ptr<const IntegerConvPlan> PlanIntegerConv(const Im2ColShape& s, std::size_t outChannels, bool channelQuads = false);
/// Whether every panel is packed before the products (the weights outweigh the taps: deep layers
/// on small images), each block of weights then run over all of them.
bool IntegerConvPacksPanelsFirst(const IntegerConvPlan& plan);
/// Whether a convolution of this shape (one group) may read channel quads.
bool IntegerConvTakesChannelQuads(const Im2ColShape& s);
/// ONNX's weights [outChannels][channels][kh][kw] in a channel-quad plan's depth order:
/// [outChannels][kh][kw][channels].
std::vector<int8_t> ChannelQuadWeights(const int8_t* w, std::size_t outChannels, const Im2ColShape& s);
std::size_t IntegerConvWorkspaceSize(const IntegerConvPlan& plan);
/// Whether weights packed with pairings may run with this plan: panel by panel (each block of
/// weights against a panel in L1: depth at most 512) and no panel run through the GEMV loop.
/// IntegerConvAvx2 throws std::invalid_argument for paired weights with any other plan.
bool IntegerConvTakesPairings(const IntegerConvPlan& plan);
/// Whether weights packed with twin quads (PackIntegerConvWeights' `twinQuads`) may run on this plan:
/// where no panel runs the GEMV loop.
bool IntegerConvTakesTwinQuads(const IntegerConvPlan& plan);
void IntegerConvAvx2(const void* x, bool xSigned, int32_t zp, const IntegerConvPlan& plan, const uint8_t* packed,
                     const int32_t* bias, const float* scales, bool perChannel, const IntegerConvOutput& out,
                     uint8_t* workspace);

/// C[m][n] = float(sum over k of (A[m][k] - zp) * B[k][n] + bias[n]) * scale, as IntegerGemmAvx2,
/// for constant int8 weights in 8 bits: IntegerConvAvx2's kernel with B^T as its weights (packed by
/// PackIntegerConvWeights from B^T [n][k]) and 16 rows of A at a time as its taps (each row's 4
/// k's of a quad are 4 adjacent bytes of A), writing C's rows: out.m_Float (Float32 [m][n]), or
/// out.m_Quantized ([m][n] 8-bit, quantized in the tile as IntegerConvOutput says: float bias,
/// Relu, m_OutScale, zero point); m_PixelMajor is implied. `workspace`:
/// IntegerGemmBytesWorkspaceSize(m, k, n) bytes (null when that is 0). AVX2; the calling thread's team.
std::size_t IntegerGemmBytesWorkspaceSize(std::size_t m, std::size_t k, std::size_t n);
/// The rows of A up to which IntegerGemmBytesAvx2 runs each row against the weights (its GEMV loop).
constexpr std::size_t kIntegerGemvRows = 4;
/// B^T ([n][k] int8) packed whole for IntegerGemmBytesAvx2 with at most kIntegerGemvRows rows of A:
/// no pair halved and no correction - the GEMV loop splits each byte of A in two 4-bit halves
/// instead (exact for any weights), so the weights are read once. A classifier (resnet50's
/// 1 x 2048 x 1000, a correction in 43% of its quad-rows) read them twice over as dense corrections.
/// IntegerGemmBytesAvx2 refuses them for more rows, IntegerConvAvx2 always.
std::vector<uint8_t> PackIntegerGemvWeights(const int8_t* bT, std::size_t n, std::size_t k);
void IntegerGemmBytesAvx2(const void* a, bool aSigned, int32_t zp, std::size_t m, std::size_t k, const uint8_t* packed,
                          std::size_t n, const int32_t* bias, const float* scales, bool perColumn, const IntegerConvOutput& out,
                          uint8_t* workspace);

/// A 2-D convolution (one group, stride 1, any dilation and padding) in NHWC, batch 1, as one GEMM
/// per kernel tap over the output rectangle where that tap reads the input: the taps that read
/// only padding there cost nothing (at dilation 24 on a 28x28 map 82% of a 3x3 kernel's work).
struct TapConvShape {
    std::size_t m_InH, m_InW, m_InC;    ///< input [H][W][C]
    std::size_t m_OutH, m_OutW, m_OutC; ///< output [H][W][C]
    std::size_t m_KernelH, m_KernelW;
    std::size_t m_DilationH, m_DilationW;  ///< ONNX's (1 = none)
    std::size_t m_PadTop, m_PadLeft;
};
/// Floats of the packed weights (every tap's B packed for GemmAvx2).
std::size_t TapConvWeightsSize(const TapConvShape& s);
/// Packs ONNX weights [OutC][InC][KernelH][KernelW] tap by tap.
void PackTapConvWeights(const TapConvShape& s, const float* weights, float* packed);
/// Floats of the workspace TapConvAvx2 needs.
std::size_t TapConvWorkspaceSize(const TapConvShape& s);
/// out = bias (or 0) + the convolution of `in`; AVX2 + FMA, on the calling thread's OpenMP team.
void TapConvAvx2(const TapConvShape& s, const float* in, const float* packed, const float* bias, float* out,
                 float* workspace);

/// A 2-D grouped convolution with 4 input and 4 output channels per group (ResNeXt's 32x4d
/// stages), NHWC, batch 1, any stride, dilation and padding: out = bias (or 0) + the convolution.
/// Eight output channels (two groups) per AVX2 vector, each input channel of a group broadcast to
/// its group's four lanes by a permute. Weights as PackGroup4Weights packs them.
struct Group4ConvShape {
    std::size_t m_InH, m_InW, m_OutH, m_OutW, m_Channels;  ///< channels in = out, a multiple of 8
    std::size_t m_KernelH, m_KernelW, m_StrideH, m_StrideW, m_DilationH, m_DilationW, m_PadTop, m_PadLeft;
};
std::size_t Group4WeightsSize(const Group4ConvShape& s);
/// From ONNX weights [C][4][KernelH][KernelW] to [tap][input channel of the group][C].
void PackGroup4Weights(const Group4ConvShape& s, const float* weights, float* packed);
void Group4ConvAvx2(const Group4ConvShape& s, const float* in, const float* packed, const float* bias, float* out);

/// The cells GatedRecurrence runs, with ONNX's default activations (sigmoid, tanh, tanh).
enum class RecurrentCell { Lstm, GruLinearBeforeReset };

/// One direction of an ONNX LSTM or GRU (linear_before_reset = 1, as PyTorch exports it) over a
/// whole sequence, for inference. The input's contribution to every gate at every step,
/// x W^T + Wb (+ Rb, except the GRU's h gate, whose Rb is m_RecurrentBias), is computed before
/// (one matmul over all steps); each step here is one pass over the packed recurrent weights with
/// the cell's element-wise math fused. Float32; strides are in floats; one unit's gates are
/// contiguous per row (unit stride 1).
struct GatedRecurrenceShape {
    RecurrentCell m_Cell = RecurrentCell::Lstm;
    std::size_t m_SeqLen = 0, m_Batch = 0, m_Hidden = 0;
    bool m_Reverse = false;  ///< steps from the last to the first
    /// Gate g (ONNX's order: LSTM i, o, f, c; GRU z, r, h) of unit j at (step t, batch n):
    /// m_Xw[t * m_XwStride[0] + n * m_XwStride[1] + g * m_Hidden + j].
    const float* m_Xw = nullptr;
    std::size_t m_XwStride[2] = {0, 0};
    const float* m_R = nullptr;              ///< PackRecurrentWeights' result
    const float* m_Peephole = nullptr;       ///< LSTM: P of this direction, [3 * H] (i, o, f), or nullptr
    const float* m_RecurrentBias = nullptr;  ///< GRU: Rb of the h gate, [H], or nullptr for 0
    const float* m_H0 = nullptr;             ///< initial h, row n at m_H0 + n * m_H0Stride; nullptr: 0
    std::size_t m_H0Stride = 0;
    const float* m_C0 = nullptr;             ///< LSTM: initial c, likewise; nullptr: 0
    std::size_t m_C0Stride = 0;
    float* m_Y = nullptr;                    ///< h of (t, n) at m_Y + t * m_YStride[0] + n * m_YStride[1]
    std::size_t m_YStride[2] = {0, 0};
    float* m_C = nullptr;                    ///< LSTM: the cell state (N rows), the final c after the call
    std::size_t m_CStride = 0;
    float* m_Yh = nullptr;                   ///< the final h, row n at m_Yh + n * m_YhStride; nullptr: not written
    std::size_t m_YhStride = 0;
    KernelIsa m_Isa = KernelIsa::Scalar;
};
/// Floats PackRecurrentWeights writes for one direction of `hidden` units.
std::size_t PackedRecurrentWeightsSize(RecurrentCell cell, std::size_t hidden, KernelIsa isa);
/// Packs one direction's ONNX R ([gates * hidden, hidden], row-major) for GatedRecurrence with `isa`.
void PackRecurrentWeights(RecurrentCell cell, const float* r, std::size_t hidden, KernelIsa isa, float* packed);
/// Runs the sequence on the calling thread's OpenMP team (at most one thread per block of 16 or 32
/// units); `isa` as for Erf. Accuracy: the exp-based sigmoid and tanh of the swish kernel (about
/// 3e-7 relative, 1e-7 absolute).
void GatedRecurrence(const GatedRecurrenceShape& s);

}  // namespace trellis::cpuacc
