// CpuAcc: layer support. Every rule here matches what CpuAccRegion*.cpp can compile; a layer it
// declines falls back to the next backend in the user's list (normally CpuRef) with the reason.
#include "CpuAccSupport.hpp"
#include "CpuAccKernels.hpp"

#include "CpuAccRegion.hpp"

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cmath>
#include <optional>

namespace trellis::cpuacc {

namespace {

bool Refuse(std::string* reason, const std::string& why) {
    if (reason) *reason = why;
    return false;
}

constexpr unsigned int kMaxRank = 6;

/// Numpy broadcasting of `small` against `big` with `big` as the result (dims equal or 1).
bool BroadcastsTo(const TensorShape& small, const TensorShape& big) {
    if (small.GetNumDimensions() > big.GetNumDimensions()) return false;
    const unsigned int off = big.GetNumDimensions() - small.GetNumDimensions();
    for (unsigned int i = 0; i < small.GetNumDimensions(); ++i) {
        if (small[i] != 1 && small[i] != big[i + off]) return false;
    }
    return true;
}

bool IsPoolingSupported(const PoolingDescriptor& d, const std::vector<TensorInfo>& in,
                        const std::vector<TensorInfo>& out, std::string* reason) {
    const unsigned int rank = in[0].GetNumDimensions();
    if (rank < 3 || rank > 5) return Refuse(reason, "Pooling: " + std::to_string(rank - 2) + " spatial dims; CpuAcc pools 1 to 3");
    if (d.m_Global) return true;
    if (d.m_Algorithm == PoolingAlgorithm::Average && d.m_CeilMode && d.m_CountIncludePad) {
        return Refuse(reason, "Pooling: average pooling with ceil_mode and count_include_pad is not supported");
    }
    for (unsigned int dil : d.m_Dilations) {
        if (dil != 1 && d.m_Algorithm == PoolingAlgorithm::Average) {
            return Refuse(reason, "Pooling: dilated average pooling is not supported");
        }
    }
    (void)out;
    return true;
}

bool IsMatMulSupported(const std::vector<TensorInfo>& in, const std::vector<TensorInfo>& out, std::string* reason) {
    const unsigned int ra = in[0].GetNumDimensions(), rb = in[1].GetNumDimensions();
    if (ra < 2 || rb < 2) return Refuse(reason, "MatMul: 1-D operands are not supported");
    if (ra > kMaxRank || rb > kMaxRank) return Refuse(reason, "MatMul: rank above 6 is not supported");
    const unsigned int r = std::max(ra, rb);
    // Batch dims: equal, or 1 on one side.
    for (unsigned int i = 0; i + 2 < r; ++i) {
        const int ia = static_cast<int>(i) - static_cast<int>(r - ra);
        const int ib = static_cast<int>(i) - static_cast<int>(r - rb);
        const unsigned int da = ia >= 0 ? in[0].GetShape()[static_cast<unsigned int>(ia)] : 1;
        const unsigned int db = ib >= 0 ? in[1].GetShape()[static_cast<unsigned int>(ib)] : 1;
        if (da != db && da != 1 && db != 1) return Refuse(reason, "MatMul: batch dims do not broadcast");
    }
    (void)out;
    return true;
}

}  // namespace

std::optional<std::vector<EltwiseOp>> EltwiseOf(const ElementwiseUnaryDescriptor& d) {
    auto one = [](dnnl_alg_kind_t a, float alpha = 0.0f, float beta = 0.0f) {
        return std::vector<EltwiseOp>{EltwiseOp{static_cast<int>(a), alpha, beta}};
    };
    switch (d.m_Operation) {
        case UnaryOperation::Relu: return one(dnnl_eltwise_relu);
        case UnaryOperation::LeakyRelu: return one(dnnl_eltwise_relu, d.m_A);
        case UnaryOperation::Elu: return one(dnnl_eltwise_elu, d.m_A);
        case UnaryOperation::Sigmoid: return one(dnnl_eltwise_logistic);
        case UnaryOperation::Tanh: return one(dnnl_eltwise_tanh);
        case UnaryOperation::HardSigmoid:
            // max(0, min(1, a*x + b)) = clip(linear(x)); oneDNN 2.6 has no hardsigmoid.
            return std::vector<EltwiseOp>{EltwiseOp{static_cast<int>(dnnl_eltwise_linear), d.m_A, d.m_B},
                                          EltwiseOp{static_cast<int>(dnnl_eltwise_clip_v2), 0.0f, 1.0f}};
        case UnaryOperation::HardSwish: return one(dnnl_eltwise_hardswish);
        case UnaryOperation::Gelu: return one(dnnl_eltwise_gelu_erf);
        case UnaryOperation::GeluTanh: return one(dnnl_eltwise_gelu_tanh);
        case UnaryOperation::Clip: return one(dnnl_eltwise_clip_v2, d.m_A, d.m_B);
        case UnaryOperation::Exp: return one(dnnl_eltwise_exp);
        case UnaryOperation::Log: return one(dnnl_eltwise_log);
        case UnaryOperation::Sqrt: return one(dnnl_eltwise_sqrt);
        case UnaryOperation::Abs: return one(dnnl_eltwise_abs);
        case UnaryOperation::Neg: return one(dnnl_eltwise_linear, -1.0f, 0.0f);
        case UnaryOperation::Reciprocal: return one(dnnl_eltwise_pow, 1.0f, -1.0f);
        case UnaryOperation::Softplus: return one(dnnl_eltwise_soft_relu);
        case UnaryOperation::Mish: return one(dnnl_eltwise_mish);
        case UnaryOperation::Swish: return one(dnnl_eltwise_swish, d.m_A);  // x * sigmoid(alpha * x)
        default: return std::nullopt;
    }
}

bool IsCpuSupported(std::string* why) {
    const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
    switch (isa) {
        case dnnl::cpu_isa::avx2:
        case dnnl::cpu_isa::avx2_vnni:
        case dnnl::cpu_isa::avx512_core:
        case dnnl::cpu_isa::avx512_core_vnni:
        case dnnl::cpu_isa::avx512_core_bf16:
        case dnnl::cpu_isa::avx512_core_amx:
            return true;
        default:
            if (why) *why = "CpuAcc needs an x86-64 CPU with AVX2 or AVX-512; oneDNN found a lesser one";
            return false;
    }
}

NodeKind NodeKindOf(LayerType type, const LayerDescriptor& d) {
    switch (type) {
        case LayerType::Convolution: return NodeKind::Conv;
        case LayerType::Gemm:
        case LayerType::MatMul: return NodeKind::MatMul;
        case LayerType::Pooling: return NodeKind::Pool;
        case LayerType::ElementwiseUnary:
            return std::get<ElementwiseUnaryDescriptor>(d).m_Operation == UnaryOperation::Erf ? NodeKind::Erf
                                                                                               : NodeKind::Eltwise;
        case LayerType::ElementwiseBinary:
            return std::get<ElementwiseBinaryDescriptor>(d).m_Operation == BinaryOperation::Pow ? NodeKind::Eltwise
                                                                                                : NodeKind::Binary;
        case LayerType::Softmax: return NodeKind::Softmax;
        case LayerType::LayerNormalization: return NodeKind::LayerNorm;
        case LayerType::Concat: return NodeKind::Concat;
        case LayerType::Reshape:
        case LayerType::Identity: return NodeKind::Reshape;
        case LayerType::Transpose: return NodeKind::Transpose;
        case LayerType::Reduce: return NodeKind::Reduce;
        case LayerType::Split: return NodeKind::Split;
        case LayerType::Slice: return NodeKind::Slice;
        case LayerType::Recurrent: return NodeKind::Recurrent;
        case LayerType::BatchNormalization: return NodeKind::BatchNorm;
        case LayerType::Pad: return NodeKind::Pad;
        case LayerType::Resize: return NodeKind::Resize;
        case LayerType::Attention: return NodeKind::Attention;
        case LayerType::RmsNormalization: return NodeKind::RmsNorm;
        case LayerType::Expand: return NodeKind::Expand;
        case LayerType::QuantizeLinear: return NodeKind::Quantize;
        case LayerType::DequantizeLinear: return NodeKind::Dequantize;
        case LayerType::Where: return NodeKind::Where;
        case LayerType::Cast: return NodeKind::Cast;
        case LayerType::DynamicQuantizeLinear: return NodeKind::DynamicQuantize;
        default: break;
    }
    return NodeKind::Eltwise;
}

bool IsPadSupported(const PadDescriptor& d, std::string* reason) {
    if (d.m_Mode != PadMode::Constant) return Refuse(reason, "Pad: only mode constant is supported (reflect and edge are not)");
    for (int64_t p : d.m_Pads) {
        if (p < 0) return Refuse(reason, "Pad: negative pads (cropping) are not supported");
    }
    return true;
}

/// What oneDNN's resampling computes: nearest with integer upscaling of the spatial dims (any of
/// ONNX's coordinate modes and rounding agree there except tf_crop_and_resize), or linear with
/// half_pixel (pytorch_half_pixel agrees while every output dim is longer than 1); N and C kept.
bool IsResizeSupported(const ResizeDescriptor& d, const TensorInfo& in, std::string* reason) {
    const unsigned int rank = in.GetNumDimensions();
    if (rank < 3 || rank > 5) return Refuse(reason, "Resize: CpuAcc resizes 1 to 3 spatial dims of [N, C, ...]");
    if (d.m_Scales.size() != rank || d.m_Scales[0] != 1.0f || d.m_Scales[1] != 1.0f) {
        return Refuse(reason, "Resize: only the spatial dims may be scaled");
    }
    using CT = CoordinateTransform;
    if (d.m_CoordinateTransform == CT::TfCropAndResize) return Refuse(reason, "Resize: tf_crop_and_resize is not supported");
    if (d.m_CoordinateTransform == CT::HalfPixelSymmetric) return Refuse(reason, "Resize: half_pixel_symmetric is not supported");
    if (d.m_Antialias && d.m_Mode != ResizeMode::Nearest) return Refuse(reason, "Resize: antialias is not supported");
    if (d.m_Mode == ResizeMode::Nearest) {
        for (unsigned int i = 2; i < rank; ++i) {
            const float s = d.m_Scales[i];
            if (s < 1.0f || s != std::floor(s)) {
                return Refuse(reason, "Resize: nearest with a non-integer or shrinking scale (" + std::to_string(s) +
                                          ") is not supported (ONNX's rounding modes differ from oneDNN's there)");
            }
        }
        // oneDNN picks floor(o / s); ONNX agrees for asymmetric with floor, and for half_pixel with
        // either round-to-nearest mode (no ties occur with integer scales).
        const CT ct = d.m_CoordinateTransform;
        const NearestMode nm = d.m_NearestMode;
        const bool agrees = (ct == CT::Asymmetric && nm == NearestMode::Floor) ||
                            ((ct == CT::HalfPixel || ct == CT::PytorchHalfPixel) &&
                             (nm == NearestMode::RoundPreferFloor || nm == NearestMode::RoundPreferCeil));
        if (!agrees) return Refuse(reason, "Resize: nearest with this coordinate transformation and nearest mode is not supported");
        return true;
    }
    if (d.m_Mode == ResizeMode::Linear) {
        if (d.m_CoordinateTransform != CT::HalfPixel && d.m_CoordinateTransform != CT::PytorchHalfPixel) {
            return Refuse(reason, "Resize: linear with a coordinate mode other than half_pixel is not supported");
        }
        for (unsigned int i = 2; i < rank; ++i) {
            const double outSize = static_cast<double>(in.GetShape()[i]) * d.m_Scales[i];
            if (outSize != std::floor(outSize)) {
                return Refuse(reason, "Resize: linear where input size x scale is not a whole number is not supported");
            }
            if (d.m_CoordinateTransform == CT::PytorchHalfPixel && outSize <= 1.0) {
                return Refuse(reason, "Resize: pytorch_half_pixel with an output dim of 1 is not supported");
            }
        }
        return true;
    }
    return Refuse(reason, "Resize: cubic is not supported");
}

/// LSTM, GRU and RNN as oneDNN's RNN primitives compute them: the ONNX default activations (RNN:
/// tanh, relu or sigmoid), no cell clip, no coupled input-forget gate, full-length sequences.
bool IsRecurrentSupported(const RecurrentDescriptor& d, const std::vector<TensorInfo>& in, const std::vector<bool>& constants,
                          std::string* reason) {
    const auto has = [&](std::size_t i) { return i < in.size() && in[i].GetNumElements() > 0; };
    const auto isConst = [&](std::size_t i) { return i < constants.size() && constants[i]; };
    if (has(4)) {
        return Refuse(reason, "Recurrent: sequence_lens is not supported (oneDNN's RNN primitives run every sequence to "
                              "its full length)");
    }
    for (std::size_t i = 0; i < in.size(); ++i) {
        if (has(i) && in[i].GetDataType() != DataType::Float32) {
            return Refuse(reason, "Recurrent: CpuAcc runs Float32 only, input " + std::to_string(i) + " is " +
                                      GetDataTypeName(in[i].GetDataType()));
        }
    }
    for (std::size_t i : {1u, 2u, 3u, 7u}) {
        if (has(i) && !isConst(i)) {
            return Refuse(reason, std::string("Recurrent: ") + (i == 1 ? "W" : i == 2 ? "R" : i == 3 ? "B" : "P") +
                                      " must be constant (weights are packed once)");
        }
    }
    if (d.m_Clip) return Refuse(reason, "Recurrent: clip is not supported by oneDNN's RNN primitives");
    if (d.m_InputForget) return Refuse(reason, "Recurrent: input_forget is not supported by oneDNN's LSTM");
    using F = RecurrentActivationFunction;
    const std::size_t perDirection = d.m_Mode == RecurrentMode::Lstm ? 3 : d.m_Mode == RecurrentMode::Gru ? 2 : 1;
    for (std::size_t i = 0; i < d.m_Activations.size(); ++i) {
        const RecurrentActivation& a = d.m_Activations[i];
        const std::size_t k = i % perDirection;
        const bool ok = d.m_Mode == RecurrentMode::Rnn
                            ? (a.m_Function == F::Tanh || a.m_Function == F::Relu || a.m_Function == F::Sigmoid) &&
                                  a.m_Function == d.m_Activations[0].m_Function
                            : a.m_Function == (k == 0 ? F::Sigmoid : F::Tanh);
        if (!ok) {
            return Refuse(reason, std::string("Recurrent: activation ") + GetRecurrentActivationName(a.m_Function) +
                                      " at position " + std::to_string(i) +
                                      " is not supported (oneDNN: LSTM/GRU with the default sigmoid/tanh, RNN with tanh, "
                                      "relu or sigmoid, the same for both directions)");
        }
    }
    return true;
}

/// Attention as CpuAcc's fused kernel computes it (CpuAccKernels.hpp): Float32 Q, K, V (3-D or
/// 4-D, grouped-query), a Boolean or Float32 mask, is_causal and scale, past_key/past_value; Y and
/// present_key/present_value.
bool IsAttentionSupported(const AttentionDescriptor& d, const std::vector<TensorInfo>& in,
                          const std::vector<TensorInfo>& out, std::string* reason) {
    if (out.size() > 3) {
        return Refuse(reason, "Attention: qk_matmul_output is not supported (CpuAcc computes Y and the present "
                              "key/value only)");
    }
    if (d.m_HasNonpadKvSeqlen || in.size() > 6) return Refuse(reason, "Attention: nonpad_kv_seqlen is not supported");
    if (d.m_HasPast) {
        for (std::size_t i = 4; i < 6; ++i) {
            if (in.size() <= i || in[i].GetDataType() != DataType::Float32) {
                return Refuse(reason, "Attention: past_key and past_value must be Float32 (CpuAcc runs Float32 only)");
            }
        }
    }
    for (std::size_t i = 1; i < out.size(); ++i) {
        if (out[i].GetDataType() != DataType::Float32) {
            return Refuse(reason, "Attention: present_key and present_value must be Float32");
        }
    }
    if (d.m_Softcap != 0.0f) return Refuse(reason, "Attention: softcap is not supported");
    if (d.m_LeftWindow >= 0 || d.m_RightWindow >= 0) return Refuse(reason, "Attention: sliding windows are not supported");
    if (d.m_QNumHeads == 0 || d.m_KvNumHeads == 0) return Refuse(reason, "Attention: the head counts are not resolved");
    for (std::size_t i = 0; i < 3; ++i) {
        if (in[i].GetDataType() != DataType::Float32) {
            return Refuse(reason, std::string("Attention: CpuAcc runs Float32 only, input ") + std::to_string(i) + " is " +
                                      GetDataTypeName(in[i].GetDataType()));
        }
        if (in[i].GetNumElements() == 0) return Refuse(reason, "Attention: empty tensors are not supported");
    }
    if (d.m_HasMask && in[3].GetDataType() != DataType::Float32 && in[3].GetDataType() != DataType::Boolean) {
        return Refuse(reason, std::string("Attention: the mask must be Boolean or Float32, not ") +
                                  GetDataTypeName(in[3].GetDataType()));
    }
    if (out[0].GetDataType() != DataType::Float32 || out[0].GetNumElements() == 0) {
        return Refuse(reason, "Attention: Y must be a non-empty Float32 tensor");
    }
    return true;
}

/// Where as a masked fill: a constant Boolean condition (CpuAcc computes no Booleans, but reads a
/// constant one), Float32 x of the output's shape, a constant Float32 scalar for the rest - the
/// causal mask of transformers' exports (torch.where(causal_mask, scores, finfo.min)), which the
/// attention fusion takes into the kernel.
bool IsWhereSupported(const std::vector<TensorInfo>& in, const std::vector<TensorInfo>& out,
                      const std::vector<bool>& constants, std::string* reason) {
    const auto isConst = [&](std::size_t i) { return i < constants.size() && constants[i]; };
    if (in[0].GetDataType() != DataType::Boolean || !isConst(0)) {
        return Refuse(reason, "Where: the condition must be a constant Boolean tensor (CpuAcc computes no Booleans)");
    }
    if (in[1].GetDataType() != DataType::Float32 || in[2].GetDataType() != DataType::Float32 ||
        out[0].GetDataType() != DataType::Float32) {
        return Refuse(reason, "Where: CpuAcc selects Float32 values only");
    }
    if (!isConst(2) || in[2].GetNumElements() != 1) {
        return Refuse(reason, "Where: only x where the condition holds, else a constant scalar, is supported");
    }
    if (in[1].GetShape() != out[0].GetShape() || out[0].GetNumElements() == 0) {
        return Refuse(reason, "Where: x must have the output's shape (no broadcast of x), and not be empty");
    }
    if (out[0].GetNumDimensions() > kMaxRank) return Refuse(reason, "Where: rank above 6 is not supported");
    return true;
}

/// QuantizeLinear (Float32 -> UInt8/Signed8) and DequantizeLinear (UInt8/Signed8 -> Float32) per
/// tensor with a constant scale and zero point: CpuAcc's own kernels compute them exactly as ONNX
/// does (x / scale in Float32, rounded half to even, saturated), and they let int8 convolutions
/// and matmuls fuse with their neighbours (CpuAccFusion.cpp).
bool IsQuantizeSupported(LayerType type, const std::vector<TensorInfo>& in, const std::vector<TensorInfo>& out,
                         const std::vector<bool>& constants, std::string* reason) {
    const std::string op = GetLayerTypeName(type);
    const bool quantize = type == LayerType::QuantizeLinear;
    const auto isConst = [&](std::size_t i) { return i < constants.size() && constants[i]; };
    const auto is8Bit = [](DataType t) { return t == DataType::UInt8 || t == DataType::Signed8; };
    const DataType x = in[0].GetDataType(), y = out[0].GetDataType();
    if (quantize ? x != DataType::Float32 : !is8Bit(x)) {
        return Refuse(reason, op + ": x is " + GetDataTypeName(x) + "; CpuAcc " +
                                  (quantize ? "quantizes Float32" : "dequantizes UInt8 or Signed8") + " only");
    }
    if (quantize && !is8Bit(y)) return Refuse(reason, op + ": output type " + GetDataTypeName(y) + " is not UInt8 or Signed8");
    if (!quantize && y != DataType::Float32) {
        return Refuse(reason, op + ": output type " + GetDataTypeName(y) + "; CpuAcc dequantizes to Float32 only");
    }
    if (in[1].GetDataType() != DataType::Float32) {
        return Refuse(reason, op + ": scale type " + GetDataTypeName(in[1].GetDataType()) + "; CpuAcc takes Float32 scales");
    }
    if (!isConst(1)) {
        return Refuse(reason, op + ": the scale must be constant (CpuAcc folds it into its kernels and the int8 "
                                   "primitives' output scales)");
    }
    if (in[1].GetNumElements() != 1) {
        return Refuse(reason, op + ": per-axis scales (" + in[1].GetShape().ToString() +
                                  ") are not supported on activations; CpuAcc quantizes per tensor");
    }
    if (in.size() > 2) {
        if (!isConst(2)) return Refuse(reason, op + ": the zero point must be constant");
        if (!is8Bit(in[2].GetDataType())) {
            return Refuse(reason, op + ": zero point type " + GetDataTypeName(in[2].GetDataType()) +
                                      " is not supported (UInt8 or Signed8)");
        }
    }
    if (in[0].GetNumElements() == 0) return Refuse(reason, op + ": empty tensors are not supported");
    return true;
}

/// The Signed32 layers the ONNX importer builds QLinearConv and QLinearMatMul from
/// (OnnxConvertQuantization.cpp, after constant folding): Cast of 8-bit data to Signed32, Sub of a
/// scalar zero point, a 2-D Convolution or a MatMul of that with constant Signed32 weights (and
/// bias) or, for a MatMul, with a second operand made the same way (attention's products), Cast of
/// the Signed32 sum to Float32. CpuAcc claims them only to fuse each product
/// into one oneDNN int8 primitive (FuseIntegerProducts, CpuAccFusion.cpp); OptimizeSubgraph returns
/// every piece it could not fuse as a failed sub-graph, and the optimizer gives it to the next
/// backend. nullopt: not such a layer (the Float32 rules apply).
static std::optional<bool> IsIntegerProductPiece(LayerType type, const LayerDescriptor& descriptor,
                                                 const std::vector<TensorInfo>& in, const std::vector<TensorInfo>& out,
                                                 const std::vector<bool>& constants, std::string* reason) {
    const auto isConst = [&](std::size_t i) { return i < constants.size() && constants[i]; };
    const auto is = [&](const TensorInfo& t, DataType d) { return t.GetDataType() == d; };
    if (in.empty() || out.size() != 1 || out[0].GetNumElements() == 0) return std::nullopt;
    const bool s32In = is(in[0], DataType::Signed32);
    switch (type) {
        case LayerType::Cast:
            if ((is(in[0], DataType::UInt8) || is(in[0], DataType::Signed8)) && is(out[0], DataType::Signed32)) return true;
            if (s32In && is(out[0], DataType::Float32)) return true;
            return std::nullopt;
        case LayerType::ElementwiseBinary:
            if (!s32In || std::get<ElementwiseBinaryDescriptor>(descriptor).m_Operation != BinaryOperation::Sub) {
                return std::nullopt;
            }
            // The zero point may be known only at run time (DynamicQuantizeLinear's, cast to Signed32).
            if (in.size() != 2 || !is(in[1], DataType::Signed32) || in[1].GetNumElements() != 1 ||
                !is(out[0], DataType::Signed32)) {
                return Refuse(reason, "ElementwiseBinary(Sub): on Signed32 CpuAcc subtracts only a scalar zero point "
                                      "(inside an integer product)");
            }
            return true;
        case LayerType::Convolution:
        case LayerType::MatMul: {
            if (!s32In) return std::nullopt;
            const std::string op = GetLayerTypeName(type);
            const bool conv = type == LayerType::Convolution;
            if (!conv && in.size() == 2 && is(in[1], DataType::Signed32) && !isConst(1) && is(out[0], DataType::Signed32)) {
                // A product of two activations (attention's QLinearMatMuls): CpuAcc's own integer GEMM,
                // one matmul per batch, no broadcasting.
                const TensorShape& a = in[0].GetShape();
                const TensorShape& b = in[1].GetShape();
                bool same = a.GetNumDimensions() >= 2 && a.GetNumDimensions() == b.GetNumDimensions();
                for (unsigned int d = 0; same && d + 2 < a.GetNumDimensions(); ++d) same = a[d] == b[d];
                if (!same) {
                    return Refuse(reason, op + ": on Signed32 with both operands computed CpuAcc needs equal batch dims "
                                               "(no broadcasting)");
                }
                if (BestKernelIsa() == KernelIsa::Scalar) {
                    return Refuse(reason, op + ": on Signed32 with both operands computed CpuAcc needs AVX2 (its own "
                                               "integer GEMM)");
                }
                return true;
            }
            if (in.size() < 2 || !is(in[1], DataType::Signed32) || !isConst(1) || !is(out[0], DataType::Signed32)) {
                return Refuse(reason, op + ": on Signed32 CpuAcc needs constant Signed32 weights (an integer product "
                                           "with constant weights)");
            }
            if (in.size() > 2 && (!is(in[2], DataType::Signed32) || !isConst(2))) {
                return Refuse(reason, op + ": on Signed32 the bias must be a constant Signed32 tensor");
            }
            if (conv ? in[1].GetNumDimensions() != 4 : in[1].GetNumDimensions() != 2) {
                return Refuse(reason, op + (conv ? ": on Signed32 CpuAcc runs 2-D convolutions only"
                                                 : ": on Signed32 CpuAcc needs 2-D weights"));
            }
            return true;
        }
        default:
            return std::nullopt;
    }
}

bool IsSupportedLayer(LayerType type, const LayerDescriptor& descriptor, const std::vector<TensorInfo>& in,
                      const std::vector<TensorInfo>& out, const std::vector<bool>& constants, std::string* reason) {
    const std::string op = GetLayerTypeName(type);
    if (const std::optional<bool> piece = IsIntegerProductPiece(type, descriptor, in, out, constants, reason)) return *piece;
    if (type == LayerType::QuantizeLinear || type == LayerType::DequantizeLinear) {
        return IsQuantizeSupported(type, in, out, constants, reason);
    }
    if (type == LayerType::DynamicQuantizeLinear) {
        if (in.size() != 1 || out.size() != 3 || in[0].GetDataType() != DataType::Float32 ||
            out[0].GetDataType() != DataType::UInt8 || out[1].GetDataType() != DataType::Float32 ||
            out[2].GetDataType() != DataType::UInt8) {
            return Refuse(reason, op + ": CpuAcc quantizes Float32 to UInt8 (outputs y, Float32 y_scale, UInt8 y_zero_point)");
        }
        if (in[0].GetNumElements() == 0) return Refuse(reason, op + ": empty tensors are not supported");
        return true;
    }
    if (type == LayerType::Recurrent) return IsRecurrentSupported(std::get<RecurrentDescriptor>(descriptor), in, constants, reason);
    if (type == LayerType::Attention) return IsAttentionSupported(std::get<AttentionDescriptor>(descriptor), in, out, reason);
    if (type == LayerType::Where) return IsWhereSupported(in, out, constants, reason);
    if (type == LayerType::Pad || type == LayerType::Resize || type == LayerType::Expand) {
        // Their other inputs are parameters Optimize() folded into the descriptor.
        if (in[0].GetDataType() != DataType::Float32 || out[0].GetDataType() != DataType::Float32) {
            return Refuse(reason, op + ": CpuAcc runs Float32 only");
        }
        if (out[0].GetNumElements() == 0 || in[0].GetNumElements() == 0) return Refuse(reason, op + ": empty tensors are not supported");
        if (in[0].GetNumDimensions() > kMaxRank) return Refuse(reason, op + ": rank above 6 is not supported");
        if (type == LayerType::Expand) return true;  // a broadcasting copy of any shape inference accepted
        return type == LayerType::Pad ? IsPadSupported(std::get<PadDescriptor>(descriptor), reason)
                                      : IsResizeSupported(std::get<ResizeDescriptor>(descriptor), in[0], reason);
    }
    for (const TensorInfo& t : in) {
        if (t.GetDataType() != DataType::Float32) {
            return Refuse(reason, op + ": CpuAcc runs Float32 only, an input is " + GetDataTypeName(t.GetDataType()));
        }
        if (t.GetNumDimensions() > kMaxRank) return Refuse(reason, op + ": rank above 6 is not supported");
    }
    for (const TensorInfo& t : out) {
        if (t.GetDataType() != DataType::Float32) {
            return Refuse(reason, op + ": CpuAcc runs Float32 only, an output is " + GetDataTypeName(t.GetDataType()));
        }
        if (t.GetNumElements() == 0) return Refuse(reason, op + ": empty tensors are not supported");
    }
    auto isConst = [&](std::size_t i) { return i < constants.size() && constants[i]; };

    switch (type) {
        case LayerType::Convolution: {
            const auto& d = std::get<ConvolutionDescriptor>(descriptor);
            const unsigned int rank = in[0].GetNumDimensions();
            if (rank < 3 || rank > 5) return Refuse(reason, "Convolution: CpuAcc runs 1 to 3 spatial dims");
            if (!isConst(1)) return Refuse(reason, "Convolution: the weights must be constant");
            if (in.size() > 2 && !isConst(2)) return Refuse(reason, "Convolution: the bias must be constant");
            if (d.m_Groups == 0) return Refuse(reason, "Convolution: group count 0");
            std::string impl;
            if (!ConvolutionRunsFast(d, in[0].GetShape(), in[1].GetShape(), out[0].GetShape(), in.size() > 2, &impl)) {
                return Refuse(reason, "Convolution: oneDNN has only its reference implementation for this one on this "
                                      "CPU (" + std::to_string(d.m_Groups) + " group(s), " +
                                      std::to_string(in[1].GetShape()[1]) + " input channel(s) per group, weights " +
                                      in[1].GetShape().ToString() + "; implementation " + impl +
                                      "), no faster than CpuRef");
            }
            return true;
        }
        case LayerType::Gemm: {
            const auto& d = std::get<GemmDescriptor>(descriptor);
            if (d.m_TransA) return Refuse(reason, "Gemm: transA=1 is not supported");
            if (!isConst(1)) return Refuse(reason, "Gemm: B must be constant");
            if (in.size() > 2) {
                if (!isConst(2)) return Refuse(reason, "Gemm: C must be constant");
                const unsigned int n = out[0].GetShape()[1];
                const TensorShape& c = in[2].GetShape();
                if (c.GetNumElements() != n || (c.GetNumDimensions() > 0 && c[c.GetNumDimensions() - 1] != n)) {
                    return Refuse(reason, "Gemm: C must be a bias of N elements along the last dim (got " + c.ToString() + ")");
                }
            }
            return true;
        }
        case LayerType::MatMul: return IsMatMulSupported(in, out, reason);
        case LayerType::Pooling: return IsPoolingSupported(std::get<PoolingDescriptor>(descriptor), in, out, reason);
        case LayerType::ElementwiseUnary: {
            const auto& d = std::get<ElementwiseUnaryDescriptor>(descriptor);
            if (d.m_Operation == UnaryOperation::Erf || EltwiseOf(d)) return true;
            return Refuse(reason, std::string("ElementwiseUnary: CpuAcc has no kernel for ") +
                                      GetUnaryOperationName(d.m_Operation));
        }
        case LayerType::ElementwiseBinary: {
            const auto& d = std::get<ElementwiseBinaryDescriptor>(descriptor);
            const std::string name = std::string("ElementwiseBinary(") + GetBinaryOperationName(d.m_Operation) + ")";
            if (d.m_Operation == BinaryOperation::Pow) {
                if (!isConst(1) || in[1].GetNumElements() != 1) {
                    return Refuse(reason, name + ": only a constant scalar exponent is supported");
                }
                if (in[0].GetShape() != out[0].GetShape()) return Refuse(reason, name + ": the base must have the output's shape");
                return true;
            }
            switch (d.m_Operation) {
                case BinaryOperation::Add: case BinaryOperation::Sub: case BinaryOperation::Mul:
                case BinaryOperation::Div: case BinaryOperation::Maximum: case BinaryOperation::Minimum: break;
                default: return Refuse(reason, name + ": CpuAcc has no kernel for it");
            }
            const TensorShape& o = out[0].GetShape();
            const bool commutative = d.m_Operation != BinaryOperation::Sub && d.m_Operation != BinaryOperation::Div;
            const bool firstFull = in[0].GetNumDimensions() == o.GetNumDimensions() && in[0].GetShape() == o;
            const bool secondFull = in[1].GetNumDimensions() == o.GetNumDimensions() && in[1].GetShape() == o;
            if (firstFull && BroadcastsTo(in[1].GetShape(), o)) return true;
            if (commutative && secondFull && BroadcastsTo(in[0].GetShape(), o)) return true;
            // c - x and c / x with a constant scalar c: one eltwise (linear, pow) on x.
            if (secondFull && isConst(0) && in[0].GetNumElements() == 1 &&
                (d.m_Operation == BinaryOperation::Sub || d.m_Operation == BinaryOperation::Div)) {
                return true;
            }
            return Refuse(reason, name + ": one input must have the output's shape (" + o.ToString() +
                                      ")" + (commutative ? "" : ", the first one for this op, unless the other is a constant scalar"));
        }
        case LayerType::Softmax: {
            const auto& d = std::get<SoftmaxDescriptor>(descriptor);
            const int rank = static_cast<int>(in[0].GetNumDimensions());
            const int axis = d.m_Axis < 0 ? d.m_Axis + rank : d.m_Axis;
            if (rank == 0) return Refuse(reason, "Softmax: scalar input");
            if (d.m_Coerce2d && axis != rank - 1) {
                return Refuse(reason, "Softmax: the opset<13 form over several dims is supported only on the last axis");
            }
            return true;
        }
        case LayerType::LayerNormalization: {
            if (out.size() != 1) return Refuse(reason, "LayerNormalization: only output 0 is supported");
            if (!isConst(1) || (in.size() > 2 && !isConst(2))) {
                return Refuse(reason, "LayerNormalization: scale and bias must be constant");
            }
            const auto& d = std::get<LayerNormalizationDescriptor>(descriptor);
            const int rank = static_cast<int>(in[0].GetNumDimensions());
            const int axis = d.m_Axis < 0 ? d.m_Axis + rank : d.m_Axis;
            std::size_t inner = 1;
            for (int i = axis; i < rank; ++i) inner *= in[0].GetShape()[static_cast<unsigned int>(i)];
            if (in[1].GetNumElements() != inner || (in.size() > 2 && in[2].GetNumElements() != inner)) {
                return Refuse(reason, "LayerNormalization: scale/bias that broadcast over the normalized dims are not supported");
            }
            return true;
        }
        case LayerType::BatchNormalization: {
            const auto& d = std::get<BatchNormalizationDescriptor>(descriptor);
            if (d.m_Training || out.size() != 1) return Refuse(reason, "BatchNormalization: inference only (one output)");
            if (in[0].GetNumDimensions() < 2) return Refuse(reason, "BatchNormalization: needs [N, C, ...]");
            for (std::size_t i = 1; i < 5; ++i) {
                if (!isConst(i)) return Refuse(reason, "BatchNormalization: scale, bias, mean and variance must be constant");
            }
            return true;
        }
        case LayerType::Concat:
        case LayerType::Reshape:
        case LayerType::Identity:
        case LayerType::Transpose:
        case LayerType::Split:
            return true;
        case LayerType::Slice: {
            const auto& d = std::get<SliceDescriptor>(descriptor);
            for (int64_t s : d.m_Steps) {
                if (s < 1) return Refuse(reason, "Slice: only positive steps are supported");
            }
            if (in.size() != 1) return Refuse(reason, "Slice: parameter inputs must be constant");
            return true;
        }
        case LayerType::RmsNormalization: {
            // CpuAcc's kernel (the fused RMS normalization's) takes one scale value per normalized element.
            const auto& d = std::get<RmsNormalizationDescriptor>(descriptor);
            const unsigned int rank = in[0].GetNumDimensions();
            const int axis = d.m_Axis < 0 ? d.m_Axis + static_cast<int>(rank) : d.m_Axis;
            if (axis < 0 || axis >= static_cast<int>(rank)) return Refuse(reason, "RmsNormalization: the axis is not resolved");
            std::size_t normalized = 1;
            for (unsigned int i = static_cast<unsigned int>(axis); i < rank; ++i) normalized *= in[0].GetShape()[i];
            if (in[1].GetNumElements() != normalized) {
                return Refuse(reason, "RmsNormalization: the scale must hold one value per normalized element (" +
                                          std::to_string(normalized) + "), not " + in[1].GetShape().ToString());
            }
            return true;
        }
        case LayerType::Reduce: {
            const auto& d = std::get<ReduceDescriptor>(descriptor);
            const bool norm = d.m_Operation == ReduceOperation::L1 || d.m_Operation == ReduceOperation::L2 ||
                              d.m_Operation == ReduceOperation::SumSquare;
            switch (d.m_Operation) {
                case ReduceOperation::Mean: case ReduceOperation::Sum: case ReduceOperation::Max:
                case ReduceOperation::Min: case ReduceOperation::L1: case ReduceOperation::L2:
                case ReduceOperation::SumSquare: break;
                default: return Refuse(reason, std::string("Reduce: CpuAcc has no kernel for ") +
                                                   GetReduceOperationName(d.m_Operation));
            }
            if (in.size() != 1) return Refuse(reason, "Reduce: the axes must be constant");
            if (in[0].GetNumDimensions() == 0) return Refuse(reason, "Reduce: scalar input");
            if (norm) {
                // CpuAcc's own kernel (oneDNN 2.6 has only its reference one for the Lp norms):
                // Float32, over one run of adjacent dims.
                const std::string name = GetReduceOperationName(d.m_Operation);
                if (in[0].GetDataType() != DataType::Float32) return Refuse(reason, name + ": only Float32 is supported");
                const unsigned int rank = in[0].GetNumDimensions();
                std::vector<std::size_t> dims(rank);
                std::vector<bool> reduced(rank, d.m_Axes.empty() && !d.m_NoopWithEmptyAxes);
                for (unsigned int i = 0; i < rank; ++i) dims[i] = in[0].GetShape()[i];
                for (int64_t a : d.m_Axes) {
                    const int64_t axis = a < 0 ? a + rank : a;
                    if (axis < 0 || axis >= static_cast<int64_t>(rank)) return Refuse(reason, name + ": an axis is out of range");
                    reduced[static_cast<std::size_t>(axis)] = true;
                }
                std::size_t outer = 0, r = 0, inner = 0;
                if (!AxisRunOf(dims, reduced, outer, r, inner)) {
                    return Refuse(reason, name + ": only a reduction over adjacent dims is supported (CpuAcc's kernel)");
                }
            }
            if (in[0].GetNumElements() == 0) {
                // ONNX: Max over an empty set is -inf, Min +inf; oneDNN gives the largest finite value.
                return Refuse(reason, "Reduce: an empty input (reductions over an empty set run on the reference)");
            }
            return true;
        }
        default: break;
    }
    return Refuse(reason, "CpuAcc has no kernel for " + op);
}

bool CpuAccLayerSupport::IsLayerSupported(const QueueDescriptor& layer, const WorkloadInfo& info,
                                          std::string* reason) const {
    std::string why;
    if (!IsCpuSupported(&why)) return Refuse(reason, why);
    if (!layer.m_Descriptor) return Refuse(reason, "the layer has no descriptor");
    if (layer.m_Type == LayerType::PreCompiled) {
        const auto* d = std::get_if<PreCompiledDescriptor>(layer.m_Descriptor);
        if (!d || !IsRegionObject(d->m_PreCompiledObject.get())) {
            return Refuse(reason, "PreCompiled: the layer's object was not created by CpuAcc");
        }
        const auto& graph = *static_cast<const RegionObject*>(d->m_PreCompiledObject.get())->GetGraph();
        if (info.m_InputTensorInfos != graph.m_InputInfos || info.m_OutputTensorInfos != graph.m_OutputInfos) {
            return Refuse(reason, "PreCompiled: the tensors differ from those the region was compiled for");
        }
        return true;
    }
    std::vector<bool> constants;
    for (const ConstTensor* c : layer.m_ConstantInputs) constants.push_back(c != nullptr);
    return IsSupportedLayer(layer.m_Type, *layer.m_Descriptor, info.m_InputTensorInfos, info.m_OutputTensorInfos,
                            constants, reason);
}

}  // namespace trellis::cpuacc
