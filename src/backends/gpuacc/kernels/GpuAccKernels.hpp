// GpuAcc: the launch interface of the backend's own CUDA kernels (kernels/*.cu, one file per op
// family, as ggml's CUDA backend is split). Plain C++17 with the CUDA runtime types only, so the
// host side (C++20, g++) and the kernels (nvcc) share it. Every launcher is asynchronous on
// `stream` and returns the launch error (cudaSuccess when the launch was accepted).
//
// Why own kernels: cuDNN and cuBLASLt cover convolutions and matrix products (GpuAccConv.cpp,
// GpuAccMatMul.cpp); the rest of what a CNN or a transformer runs between them (element-wise
// chains with broadcasting fused into one pass, softmax with its scale and mask, layer
// normalization with its residual add, reductions, pooling over either layout, strided copies
// for transposes/slices/concatenation/casts, gathers) has no library call that fuses the way a
// region needs, so those are written here, each as one kernel over explicit strides.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace trellis::gpuacc {

/// Element types a GpuAcc buffer holds.
/// Bool is one byte, 0 or 1; converting to it tests for non-zero.
enum class DType : int32_t { F32 = 0, F16 = 1, BF16 = 2, I32 = 3, I64 = 4, U8 = 5, I8 = 6, Bool = 7 };
std::size_t DTypeSize(DType t);
const char* DTypeName(DType t);
inline bool IsFloat(DType t) { return t == DType::F32 || t == DType::F16 || t == DType::BF16; }

/// At most this many dims in any strided description.
constexpr int kMaxDims = 8;

/// A strided view: `rank` dims and, per dim, the element stride in the buffer (0 = broadcast).
struct Strided {
    int32_t rank = 0;
    int64_t dims[kMaxDims] = {};
    int64_t strides[kMaxDims] = {};
};

// ---- element-wise programs (eltwise.cu) ------------------------------------------------------

/// One instruction of a fused element-wise program. Registers hold floats; every input is read
/// as float (whatever its type), the output is written in its type.
enum class EwOp : uint8_t {
    Load,       ///< r[dst] = input[a] at this element
    Imm,        ///< r[dst] = f0
    // unary: r[dst] = f(r[a]) (f0, f1 are the op's parameters)
    Neg, Abs, Exp, Log, Sqrt, Rsqrt, Reciprocal, Relu, LeakyRelu, Elu, Sigmoid, Tanh, HardSigmoid, HardSwish,
    Erf, Gelu, GeluTanh, Clip, Floor, Ceil, Round, Sign, Softplus, Softsign, Selu, Celu, Mish, Swish,
    ThresholdedRelu, Shrink, Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh, Not, IsNaN, IsInf,
    Affine,     ///< r[dst] = r[a] * f0 + f1
    // binary: r[dst] = r[a] op r[b]
    Add, Sub, Mul, Div, Pow, Max, Min, Equal, Less, Greater, LessEq, GreaterEq, And, Or, Xor, FMod,
    PRelu,      ///< r[a] >= 0 ? r[a] : r[a] * r[b]
    // ternary
    Where,      ///< r[dst] = r[a] != 0 ? r[b] : r[c]
};

struct EwInstr {
    EwOp m_Op = EwOp::Imm;
    uint8_t m_Dst = 0, m_A = 0, m_B = 0, m_C = 0;
    float m_F0 = 0.0f, m_F1 = 0.0f;
};

constexpr int kEwMaxInputs = 8;
constexpr int kEwMaxInstrs = 48;
constexpr int kEwMaxRegs = 16;

/// A program over the output's iteration space: `iter` is the output's physical dims (outermost
/// first, contiguous in the output); each input has one stride per iteration dim.
struct EwProgram {
    int32_t m_NumInputs = 0;
    int32_t m_NumInstrs = 0;
    int32_t m_ResultReg = 0;
    EwInstr m_Instrs[kEwMaxInstrs];
    DType m_InputTypes[kEwMaxInputs] = {};
    DType m_OutputType = DType::F32;
};
struct EwLaunch {
    EwProgram m_Program;
    int32_t m_Rank = 0;                       ///< iteration dims
    int64_t m_Dims[kMaxDims] = {};
    int64_t m_InputStrides[kEwMaxInputs][kMaxDims] = {};
    const void* m_Inputs[kEwMaxInputs] = {};
    void* m_Output = nullptr;
    int64_t m_Count = 0;
    /// Every input has the output's strides (no broadcast, same layout): offsets are the index.
    bool m_Contiguous = false;
};
cudaError_t LaunchEltwise(const EwLaunch& launch, cudaStream_t stream);

// ---- strided copies (copy.cu): transpose, slice, concat part, expand, layout and type changes --

/// out[outOffset + sum(i_d * outStrides_d)] = convert(in[inOffset + sum(i_d * inStrides_d)]) over
/// every index i of `dims`.
struct CopyLaunch {
    int32_t m_Rank = 0;
    int64_t m_Dims[kMaxDims] = {};
    int64_t m_InStrides[kMaxDims] = {};
    int64_t m_OutStrides[kMaxDims] = {};
    const void* m_In = nullptr;
    void* m_Out = nullptr;
    int64_t m_InOffset = 0;
    int64_t m_OutOffset = 0;
    DType m_InType = DType::F32;
    DType m_OutType = DType::F32;
};
cudaError_t LaunchCopy(const CopyLaunch& launch, cudaStream_t stream);

/// Gather along `axis` of data viewed as [outer, axisDim, inner]: out[o, j, i] =
/// data[o, index[j] (negative from the end), i]; `numIndices` indices of type `indexType`.
/// An index out of range writes zeros and sets *errorFlag (device int) to 1.
cudaError_t LaunchGather(const void* data, const void* indices, void* out, DType type, DType indexType,
                         int64_t outer, int64_t axisDim, int64_t inner, int64_t numIndices, int* errorFlag,
                         cudaStream_t stream);

// ---- softmax and normalization (softmax.cu, norm.cu) -----------------------------------------

/// Softmax (or log-softmax) over rows of `cols` elements, rows contiguous; x and y of `type`.
/// Optional: y = softmax(x * scale + mask), mask read at maskRowOffset(row) + col * maskColStride,
/// where the row index is decomposed over maskRowDims (rank-1 leading dims of the output).
struct SoftmaxLaunch {
    const void* m_X = nullptr;
    void* m_Y = nullptr;
    DType m_Type = DType::F32;
    int64_t m_Rows = 0;
    int64_t m_Cols = 0;
    /// Rows are spaced m_Cols * m_Inner apart and elements m_Inner apart (softmax over a middle
    /// axis); 1 for the last axis.
    int64_t m_Inner = 1;
    bool m_Log = false;
    float m_Scale = 1.0f;
    const void* m_Mask = nullptr;
    DType m_MaskType = DType::F32;
    int32_t m_MaskRank = 0;  ///< leading dims the row index runs over
    int64_t m_MaskDims[kMaxDims] = {};
    int64_t m_MaskStrides[kMaxDims] = {};
    int64_t m_MaskColStride = 0;
};
cudaError_t LaunchSoftmax(const SoftmaxLaunch& launch, cudaStream_t stream);

/// y = LayerNorm(x [+ residual]) over rows of `cols`; gamma/beta of F32 (beta may be null);
/// when sumOut is given, x + residual is written there too.
cudaError_t LaunchLayerNorm(const void* x, const void* residual, const float* gamma, const float* beta, void* y,
                            void* sumOut, DType type, int64_t rows, int64_t cols, float eps, bool rms,
                            cudaStream_t stream);

// ---- reductions and pooling (reduce.cu, pool.cu) ---------------------------------------------

enum class ReduceKind : int32_t { Sum, Mean, Max, Min, Prod, L1, L2, SumSquare, LogSum, LogSumExp };
/// Reduces x viewed as [outer, reduced, inner] over the middle dim into y [outer, inner].
cudaError_t LaunchReduce(const void* x, void* y, DType type, ReduceKind kind, int64_t outer, int64_t reduced,
                         int64_t inner, cudaStream_t stream);

/// 2-D max/average pooling over strided NC(H)(W) views of either layout. Strides are per logical
/// dim (n, c, h, w) for input and output.
struct PoolLaunch {
    const void* m_X = nullptr;
    void* m_Y = nullptr;
    DType m_Type = DType::F32;
    bool m_Max = true;
    bool m_CountIncludePad = false;
    int64_t m_N = 0, m_C = 0, m_H = 0, m_W = 0, m_OH = 0, m_OW = 0;
    int32_t m_KH = 1, m_KW = 1, m_SH = 1, m_SW = 1, m_PH = 0, m_PW = 0, m_DH = 1, m_DW = 1;
    int32_t m_PHEnd = 0, m_PWEnd = 0;  ///< end padding (average pooling's count_include_pad)
    int64_t m_XStrides[4] = {};
    int64_t m_YStrides[4] = {};
};
cudaError_t LaunchPool(const PoolLaunch& launch, cudaStream_t stream);

// ---- direct convolution (conv.cu): the fallback where cuDNN accepts no engine ------------------

/// 2-D grouped convolution, any layout through strides per logical dim (n, c, h, w); weights
/// [K, C/groups, R, S] dense in `wType`; optional bias [K] (F32). Accumulates in float.
struct DirectConvLaunch {
    const void* m_X = nullptr;
    const void* m_W = nullptr;
    const float* m_Bias = nullptr;
    void* m_Y = nullptr;
    DType m_Type = DType::F32;
    /// Y is written as F32 whatever m_Type is (the reference of a plan's check keeps its precision).
    bool m_FloatOut = false;
    int64_t m_N = 0, m_C = 0, m_H = 0, m_W_ = 0, m_K = 0, m_OH = 0, m_OW = 0;
    int32_t m_R = 1, m_S = 1, m_SH = 1, m_SW = 1, m_PH = 0, m_PW = 0, m_DH = 1, m_DW = 1, m_Groups = 1;
    int64_t m_XStrides[4] = {};
    int64_t m_YStrides[4] = {};
};
cudaError_t LaunchDirectConv(const DirectConvLaunch& launch, cudaStream_t stream);

/// The activation a convolution kernel or check applies after bias and residual.
enum class ConvAct : int32_t { None = 0, Relu, Clip, Sigmoid, Tanh, Swish };

/// The check of a convolution plan against the direct kernel, per image: for every element of
/// image n, want = act(ref + residual) and got = the plan's output (m_Type; ref F32; residual of
/// m_Type or null; all three in the same layout, image n at [n * perImage, (n + 1) * perImage)).
/// m_Sums (device, 2 * images doubles, zeroed by the launcher) receives per image
/// sum((got - want)^2) and sum(want^2); a NaN in got counts as an infinite difference.
struct ConvCheckLaunch {
    const void* m_Got = nullptr;
    const float* m_Ref = nullptr;
    const void* m_Residual = nullptr;
    DType m_Type = DType::F32;
    ConvAct m_Act = ConvAct::None;
    float m_ClipLow = 0.0f, m_ClipHigh = 0.0f;
    int64_t m_Images = 0, m_PerImage = 0;
    double* m_Sums = nullptr;
};
cudaError_t LaunchConvCheck(const ConvCheckLaunch& launch, cudaStream_t stream);

// ---- depthwise convolution (dwconv.cu) ----------------------------------------------------------

/// Depthwise 2-D convolution (groups = C = K) with bias and activation fused: NHWC (weights
/// [R][S][C], several channels per thread in 16-byte vectors where C allows) or NCHW (weights
/// [C][R][S], one output per thread). Any R, S up to 7, stride and padding, no dilation;
/// accumulates in float; the bias (F32, may be null) and activation are applied before the store.
struct DepthwiseConvLaunch {
    const void* m_X = nullptr;
    const void* m_W = nullptr;
    const float* m_Bias = nullptr;
    void* m_Y = nullptr;
    DType m_Type = DType::F32;
    bool m_Nhwc = true;
    int64_t m_N = 0, m_C = 0, m_H = 0, m_W_ = 0, m_OH = 0, m_OW = 0;
    int32_t m_R = 3, m_S = 3, m_SH = 1, m_SW = 1, m_PH = 0, m_PW = 0;
    ConvAct m_Act = ConvAct::None;
    float m_ClipLow = 0.0f, m_ClipHigh = 0.0f;
};
/// Whether LaunchDepthwiseConv takes this shape (R, S <= 7; a type it is built for).
bool DepthwiseConvSupports(int32_t r, int32_t s, DType type);
cudaError_t LaunchDepthwiseConv(const DepthwiseConvLaunch& launch, cudaStream_t stream);

// ---- attention reference (attention.cu) ---------------------------------------------------------

/// out = softmax(scale * Q K^T + mask) V per (batch, head), naively in float: what a fused
/// attention plan is checked against at load, and ONNX Attention where no fused plan runs (fp32).
/// Grouped-query: K and V have m_HKv heads (dividing m_H), query head h reading kv head
/// h / (m_H / m_HKv); m_Causal hides key j from query i where j > i. Q [B,H,Sq,D], K [B,HKv,Skv,D],
/// V [B,HKv,Skv,Dv] of
/// m_Type with element strides per dim; the mask (may be null) of m_MaskType, read at strides per
/// dim of the scores [B,H,Sq,Skv] (0 where it broadcasts); out dense F32 [B,H,Sq,Dv].
struct AttentionRefLaunch {
    const void* m_Q = nullptr;
    const void* m_K = nullptr;
    const void* m_V = nullptr;
    DType m_Type = DType::F16;
    int64_t m_B = 0, m_H = 0, m_Sq = 0, m_Skv = 0, m_D = 0, m_Dv = 0;
    int64_t m_HKv = 0;  ///< 0: m_H
    bool m_Causal = false;
    int64_t m_QStrides[4] = {};
    int64_t m_KStrides[4] = {};
    int64_t m_VStrides[4] = {};
    const void* m_Mask = nullptr;
    DType m_MaskType = DType::F32;
    int64_t m_MaskStrides[4] = {};
    float m_Scale = 1.0f;
    float* m_Out = nullptr;
};
/// The reference keeps a row of scores in shared memory: Skv up to this.
constexpr int64_t kAttentionRefMaxKeys = 8192;
cudaError_t LaunchAttentionReference(const AttentionRefLaunch& launch, cudaStream_t stream);

// ---- remapping (remap.cu): Resize, Pad, Trilu; ArgMin/ArgMax ------------------------------------

/// Each output element from input positions: Resize (nearest, linear, cubic), Pad (constant, edge,
/// reflect), Trilu. Input and output are strided (any layout) of m_Type, a float type.
struct RemapLaunch {
    enum class Kind : int32_t { Resize, Pad, Trilu } m_Kind = Kind::Pad;
    DType m_Type = DType::F32;
    int32_t m_Rank = 0;
    int64_t m_OutDims[kMaxDims] = {};
    int64_t m_OutStrides[kMaxDims] = {};
    int64_t m_InDims[kMaxDims] = {};
    int64_t m_InStrides[kMaxDims] = {};
    // Resize: for each resampled dim (the others map index to index; with 2 or 4 taps at most
    // kMaxResampledDims of them), a table of m_Taps (input index, weight) pairs per output index,
    // made on the host; m_Table holds them all, dim d's from entry m_TableAt[d].
    struct Tap {
        int32_t m_Index;
        float m_Weight;
    };
    const Tap* m_Table = nullptr;
    int64_t m_TableAt[kMaxDims] = {};
    bool m_Resampled[kMaxDims] = {};
    int32_t m_Taps = 1;
    // Pad: per dim, the begin pad; mode 0 constant, 1 reflect, 2 edge.
    int64_t m_PadBegin[kMaxDims] = {};
    int32_t m_PadMode = 0;
    float m_Value = 0.0f;
    // Trilu: keep the upper (c - r >= k) or lower (c - r <= k) triangle of the last two dims.
    bool m_Upper = true;
    int64_t m_K = 0;
    const void* m_X = nullptr;
    void* m_Y = nullptr;
};
constexpr int kMaxResampledDims = 3;
cudaError_t LaunchRemap(const RemapLaunch& launch, cudaStream_t stream);

/// ArgMin/ArgMax over one axis of a strided float tensor x [outer..., axis, inner...] into a dense
/// Int64 tensor of the other dims (keepdims only changes its shape). NaN wins, first or last by
/// m_SelectLast, as numpy and CpuRef.
struct ArgLaunch {
    bool m_Max = true;
    bool m_SelectLast = false;
    DType m_Type = DType::F32;
    int32_t m_Rank = 0;           ///< of x
    int32_t m_Axis = 0;
    int64_t m_Dims[kMaxDims] = {};
    int64_t m_Strides[kMaxDims] = {};
    const void* m_X = nullptr;
    int64_t* m_Y = nullptr;
};
cudaError_t LaunchArg(const ArgLaunch& launch, cudaStream_t stream);

/// 2-D ConvTranspose, directly: y[n, m, oh, ow] = bias[m] + sum over the group's input channels c
/// and taps (kh, kw) with oh = ih * sh - ph + kh * dh (and the same along w) of x[n, c, ih, iw] *
/// w[c, m % Mg, kh, kw]. x strided (any layout) of m_Type, w [C, M / groups, R, S] and bias Float32,
/// y dense NCHW of m_Type; sums in float.
struct ConvTransposeLaunch {
    DType m_Type = DType::F32;
    int64_t m_N = 0, m_C = 0, m_H = 0, m_W_ = 0, m_M = 0, m_OH = 0, m_OW = 0;
    int32_t m_R = 1, m_S = 1, m_SH = 1, m_SW = 1, m_PH = 0, m_PW = 0, m_DH = 1, m_DW = 1, m_Groups = 1;
    int64_t m_XStrides[4] = {};
    const void* m_X = nullptr;
    const float* m_W = nullptr;
    const float* m_Bias = nullptr;  ///< may be null
    void* m_Y = nullptr;
};
cudaError_t LaunchConvTranspose(const ConvTransposeLaunch& launch, cudaStream_t stream);

/// The first `rows` rows of D = act(alpha * op(A) op(B) + beta * C + bias) for one matrix, naively
/// in float (kernels/reference.cu): what GpuAcc checks a cuBLASLt algorithm against at load. A is
/// M x K row-major with leading dimension ldA (K x M when transA), B is K x N (N x K when
/// transB); C (may be null), D and the result are rows x N dense; bias (may be null) has N.
struct GemmReferenceLaunch {
    const void* m_A = nullptr;
    const void* m_B = nullptr;
    const void* m_C = nullptr;
    const void* m_Bias = nullptr;
    float* m_Out = nullptr;
    DType m_Type = DType::F32;
    int64_t m_Rows = 0, m_N = 0, m_K = 0, m_LdA = 0, m_LdB = 0;
    bool m_TransA = false, m_TransB = false;
    float m_Alpha = 1.0f, m_Beta = 0.0f;
    int32_t m_Activation = 0;  ///< 0 none, 1 relu, 2 gelu (erf)
};
cudaError_t LaunchGemmReference(const GemmReferenceLaunch& launch, cudaStream_t stream);

/// Fills `count` elements of `type` at p with `value`.
cudaError_t LaunchFill(void* p, DType type, int64_t count, float value, cudaStream_t stream);
/// An empty kernel: launched between two steps, it starts only when the step before has finished
/// (it is launched without programmatic dependent launch), and the step after follows it.
cudaError_t LaunchStepBarrier(cudaStream_t stream);
/// Fills `count` elements of `type` at p with pseudo-random values uniform in
/// [offset - scale, offset + scale) (a hash of `seed` and the index: the same every time).
cudaError_t LaunchFillRandom(void* p, DType type, int64_t count, uint32_t seed, float scale, cudaStream_t stream,
                             float offset = 0.0f);

}  // namespace trellis::gpuacc
