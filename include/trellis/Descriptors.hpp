// Trellis application API: layer types and their descriptors (the parameters of each op).
//
// Descriptors are plain value types. Vectors left empty take the ONNX default (strides 1,
// dilations 1, pads 0, ...). After Optimize() every descriptor a backend sees is fully resolved:
// defaults filled in, auto-padding turned into explicit pads, and parameter inputs (a Reshape's
// shape input, a Slice's starts, ...) folded into the descriptor fields.
#pragma once

#include <trellis/Types.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace trellis {

/// Every layer type, generated from the op table (Ops.def).
enum class LayerType {
#define TRELLIS_OP(Name, Desc, MinIn, MaxIn, NumOut) Name,
#include <trellis/Ops.def>
#undef TRELLIS_OP
};
const char* GetLayerTypeName(LayerType type);
constexpr unsigned int kNumLayerTypes = 0
#define TRELLIS_OP(Name, Desc, MinIn, MaxIn, NumOut) + 1
#include <trellis/Ops.def>
#undef TRELLIS_OP
    ;

struct EmptyDescriptor {};

/// How a conversion to Float8E8M0 rounds a value between two powers of two (ONNX Cast round_mode).
enum class SmallTypeRounding { Up, Down, Nearest };

/// Input and Output layers: the id the application uses to bind tensors.
struct BindingDescriptor {
    LayerBindingId m_BindingId = 0;
};

/// Constant layer: the value. m_Storage keeps the memory m_Tensor points at alive (shared).
struct ConstantDescriptor {
    ConstTensor m_Tensor;
    std::shared_ptr<const void> m_Storage;
};

enum class BinaryOperation {
    Add, Sub, Mul, Div, Pow, Maximum, Minimum, Equal, Less, Greater, LessOrEqual, GreaterOrEqual,
    And, Or, Xor,  ///< Boolean inputs and output
    Mod,           ///< modulo whose result takes the divisor's sign (ONNX Mod fmod=0, numpy.mod)
    FMod,          ///< C fmod: the result takes the dividend's sign (ONNX Mod fmod=1)
    BitShiftLeft,  ///< unsigned integers: a << b (0 when b >= the bit width)
    BitShiftRight, ///< unsigned integers: a >> b (0 when b >= the bit width)
    BitwiseAnd, BitwiseOr, BitwiseXor,  ///< integers, bit by bit
};
const char* GetBinaryOperationName(BinaryOperation op);
/// Elementwise binary op with numpy broadcasting. Comparisons and And/Or/Xor produce Boolean.
struct ElementwiseBinaryDescriptor {
    BinaryOperation m_Operation = BinaryOperation::Add;
};

enum class UnaryOperation {
    Abs, Neg, Exp, Log, Sqrt, Reciprocal,
    Relu,
    LeakyRelu,    ///< m_A = alpha
    Elu,          ///< m_A = alpha
    Sigmoid, Tanh,
    HardSigmoid,  ///< max(0, min(1, m_A * x + m_B))
    HardSwish,
    Erf,
    Gelu,         ///< exact (erf) form
    GeluTanh,     ///< tanh approximation
    Clip,         ///< clamp to [m_A, m_B]
    Not,          ///< Boolean input and output
    Round,        ///< half to even
    Floor, Ceil, Sign,
    Softplus,     ///< log(1 + e^x)
    Softsign,     ///< x / (1 + |x|)
    Selu,         ///< m_B * (x > 0 ? x : m_A * (e^x - 1)); m_A = alpha, m_B = gamma
    Celu,         ///< max(0, x) + min(0, m_A * (e^(x / m_A) - 1)); m_A = alpha
    Mish,         ///< x * tanh(softplus(x))
    ThresholdedRelu,  ///< x > m_A ? x : 0
    Shrink,       ///< x < -m_A ? x + m_B : (x > m_A ? x - m_B : 0); m_A = lambd, m_B = bias
    Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh,
    IsNaN,        ///< Boolean output
    IsInf,        ///< Boolean output: x is +inf or -inf
    IsPosInf,     ///< Boolean output: x is +inf
    IsNegInf,     ///< Boolean output: x is -inf
    Swish,        ///< x * sigmoid(m_A * x); m_A = alpha
    BitwiseNot,   ///< integers: ~x
};
const char* GetUnaryOperationName(UnaryOperation op);
struct ElementwiseUnaryDescriptor {
    UnaryOperation m_Operation = UnaryOperation::Relu;
    float m_A = 0.0f;
    float m_B = 0.0f;
};

enum class PaddingMode { Explicit, SameUpper, SameLower, Valid };

/// Convolution and ConvolutionTranspose, layout NC<spatial...> (ONNX). Inputs: X, W, optional B.
/// Spatial rank comes from W. After Optimize: every vector has one entry per spatial dim and
/// m_AutoPad is Explicit.
struct ConvolutionDescriptor {
    std::vector<unsigned int> m_KernelShape;
    std::vector<unsigned int> m_Strides;
    std::vector<unsigned int> m_Dilations;
    std::vector<unsigned int> m_PadsBegin;
    std::vector<unsigned int> m_PadsEnd;
    std::vector<unsigned int> m_OutputPadding;   ///< ConvolutionTranspose only
    std::vector<unsigned int> m_OutputShape;     ///< ConvolutionTranspose only (spatial dims)
    unsigned int m_Groups = 1;
    PaddingMode m_AutoPad = PaddingMode::Explicit;
};

/// Y = alpha * op(A) * op(B) + beta * C, C broadcast to the output.
struct GemmDescriptor {
    float m_Alpha = 1.0f;
    float m_Beta = 1.0f;
    bool m_TransA = false;
    bool m_TransB = false;
};

/// Softmax (or LogSoftmax with m_Log) along m_Axis. m_Coerce2d: the opset < 13 form, which
/// normalizes over all dims from m_Axis to the end together.
struct SoftmaxDescriptor {
    int m_Axis = -1;
    bool m_Log = false;
    bool m_Coerce2d = false;
};

enum class PoolingAlgorithm { Max, Average };
/// Max/average pooling over the spatial dims (NC<spatial...>); m_Global pools all of them.
struct PoolingDescriptor {
    PoolingAlgorithm m_Algorithm = PoolingAlgorithm::Max;
    bool m_Global = false;
    std::vector<unsigned int> m_KernelShape;
    std::vector<unsigned int> m_Strides;
    std::vector<unsigned int> m_Dilations;
    std::vector<unsigned int> m_PadsBegin;
    std::vector<unsigned int> m_PadsEnd;
    PaddingMode m_AutoPad = PaddingMode::Explicit;
    bool m_CeilMode = false;
    bool m_CountIncludePad = false;
    /// Max pooling's optional output 1 (ONNX MaxPool Indices, Signed64): the flat offset of each
    /// maximum in the input, row major (0) or with the spatial dims column major (1).
    unsigned int m_StorageOrder = 0;
};

/// Batch normalization; inputs X, scale, bias, mean, variance (per channel, dim 1). Inference
/// uses the given mean and variance. m_Training (ONNX training_mode=1) normalizes with the batch
/// statistics instead; the layer may then have outputs 1 and 2, the updated running mean and
/// variance: input * m_Momentum + batch statistic * (1 - m_Momentum) (biased batch variance).
struct BatchNormalizationDescriptor {
    float m_Eps = 1e-5f;
    bool m_Training = false;
    float m_Momentum = 0.9f;
};

/// Normalizes over dims [m_Axis, rank); inputs X, scale, optional bias. Optional outputs 1 and 2
/// (ONNX Mean, InvStdDev): the statistics of each normalized block, shaped as X with dims
/// [m_Axis, rank) set to 1.
struct LayerNormalizationDescriptor {
    int m_Axis = -1;
    float m_Eps = 1e-5f;
};

struct ConcatDescriptor {
    int m_Axis = 0;
};

/// Split along m_Axis into the layer's outputs; m_Sizes empty = equal parts.
/// Optional parameter input 1: the sizes.
struct SplitDescriptor {
    int m_Axis = 0;
    std::vector<int64_t> m_Sizes;
};

/// ONNX Slice. Optional parameter inputs 1..4: starts, ends, axes, steps.
struct SliceDescriptor {
    std::vector<int64_t> m_Starts;
    std::vector<int64_t> m_Ends;
    std::vector<int64_t> m_Axes;   ///< empty = 0..n-1
    std::vector<int64_t> m_Steps;  ///< empty = all 1
};

/// Every op that changes the shape but not the data: Reshape, Flatten, Squeeze, Unsqueeze.
/// After Optimize m_Mode is Reshape and m_TargetShape holds the exact output shape.
enum class ReshapeMode { Reshape, Flatten, Squeeze, Unsqueeze };
struct ReshapeDescriptor {
    ReshapeMode m_Mode = ReshapeMode::Reshape;
    std::vector<int64_t> m_TargetShape;  ///< Reshape: ONNX semantics (0 = copy, -1 = infer)
    bool m_AllowZero = false;
    int m_Axis = 1;                      ///< Flatten
    std::vector<int64_t> m_Axes;         ///< Squeeze/Unsqueeze (Squeeze: empty = all size-1 dims)
};

/// m_Perm empty = reverse the dims.
struct TransposeDescriptor {
    std::vector<unsigned int> m_Perm;
};

struct GatherDescriptor {
    int m_Axis = 0;
};

/// Shape of the input as Signed64, dims [m_Start, m_End).
struct ShapeDescriptor {
    int64_t m_Start = 0;
    std::optional<int64_t> m_End;
};

/// A tensor of m_Shape filled with m_Value. Optional parameter input 0: the shape.
struct ConstantOfShapeDescriptor {
    std::vector<int64_t> m_Shape;
    DataType m_DataType = DataType::Float32;
    double m_Value = 0.0;
};

/// Broadcast the input to m_Shape (numpy rules). Optional parameter input 1: the shape.
struct ExpandDescriptor {
    std::vector<int64_t> m_Shape;
};

enum class ReduceOperation {
    Mean, Sum, Max, Min,
    L1,          ///< sum of |x|
    L2,          ///< sqrt of the sum of x^2
    Prod,
    LogSum,      ///< log of the sum
    LogSumExp,   ///< log of the sum of e^x
    SumSquare,   ///< sum of x^2
};
const char* GetReduceOperationName(ReduceOperation op);
/// Optional parameter input 1: the axes. m_Axes empty = all dims unless m_NoopWithEmptyAxes.
struct ReduceDescriptor {
    ReduceOperation m_Operation = ReduceOperation::Mean;
    std::vector<int64_t> m_Axes;
    bool m_KeepDims = true;
    bool m_NoopWithEmptyAxes = false;
};

enum class PadMode { Constant, Reflect, Edge };
/// m_Pads in ONNX order: all begins, then all ends, one pair per dim of the input.
/// Optional parameter inputs 1..3: pads, constant value, axes.
struct PadDescriptor {
    PadMode m_Mode = PadMode::Constant;
    std::vector<int64_t> m_Pads;
    float m_Value = 0.0f;
};

enum class ResizeMode { Nearest, Linear, Cubic };
/// TfHalfPixelForNearest is ONNX's tf_half_pixel_for_nn; HalfPixelSymmetric is half_pixel_symmetric
/// (opset 19: half_pixel shifted to keep the resized content centred when scale * length is not whole).
enum class CoordinateTransform {
    HalfPixel, PytorchHalfPixel, AlignCorners, Asymmetric, TfHalfPixelForNearest, TfCropAndResize, HalfPixelSymmetric
};
/// ONNX Resize-18's keep_aspect_ratio_policy: how sizes apply to the resized axes.
enum class KeepAspectRatioPolicy { Stretch, NotLarger, NotSmaller };
enum class NearestMode { RoundPreferFloor, RoundPreferCeil, Floor, Ceil };
/// ONNX Resize. Optional parameter inputs 1..3: roi (read only for tf_crop_and_resize), scales,
/// sizes. After Optimize, m_Scales has one entry per dim (output/input for sizes-given forms).
/// Cubic mode uses m_CubicCoeffA and m_ExcludeOutside; tf_crop_and_resize samples the region
/// m_Roi (all starts, then all ends, one per dim, in normalized [0, 1] coordinates; empty = whole
/// input) and writes m_ExtrapolationValue where a sample falls outside the input. m_Antialias
/// (linear and cubic) widens the filter by 1 / scale when downsampling. Resize-18's m_Axes (the
/// dims scales, sizes and roi name; empty = all) and m_KeepAspectRatioPolicy are applied by
/// inference, which then leaves m_Axes empty and the policy Stretch.
struct ResizeDescriptor {
    ResizeMode m_Mode = ResizeMode::Nearest;
    CoordinateTransform m_CoordinateTransform = CoordinateTransform::HalfPixel;
    NearestMode m_NearestMode = NearestMode::RoundPreferFloor;
    std::vector<float> m_Scales;
    std::vector<int64_t> m_Sizes;
    float m_CubicCoeffA = -0.75f;
    bool m_ExcludeOutside = false;
    float m_ExtrapolationValue = 0.0f;
    std::vector<float> m_Roi;
    bool m_Antialias = false;
    std::vector<int64_t> m_Axes;
    KeepAspectRatioPolicy m_KeepAspectRatioPolicy = KeepAspectRatioPolicy::Stretch;
};

/// Cast to m_To. A Cast built with two inputs is ONNX CastLike: the target is input 1's type,
/// which inference learns from its producer (so it may be computed by other layers); inference
/// sets m_To and drops input 1, so after Optimize every Cast has one input and m_To is final.
struct CastDescriptor {
    DataType m_To = DataType::Float32;
    /// Float8/float4 targets: out-of-range values (and infinities) become the largest finite value
    /// (ONNX saturate=1, the default), else infinity or NaN. See backends/SmallTypes.hpp.
    bool m_Saturate = true;
    /// Float8E8M0 targets: how a value between two powers of two rounds (ONNX round_mode).
    SmallTypeRounding m_Rounding = SmallTypeRounding::Up;
};

/// ONNX Range: parameter inputs 0..2 (start, limit, delta), all required to be constant.
struct RangeDescriptor {
    double m_Start = 0.0;
    double m_Limit = 0.0;
    double m_Delta = 1.0;
    DataType m_DataType = DataType::Float32;
};

enum class ArgMinMaxFunction { Max, Min };
/// ONNX ArgMax/ArgMin: the Signed64 index of the largest (smallest) element along m_Axis; ties
/// go to the first index, or the last with m_SelectLastIndex. After Optimize m_Axis is in [0, rank).
struct ArgMinMaxDescriptor {
    ArgMinMaxFunction m_Function = ArgMinMaxFunction::Max;
    int64_t m_Axis = 0;
    bool m_KeepDims = true;
    bool m_SelectLastIndex = false;
};

/// ONNX Trilu: keeps the upper (m_Upper) or lower triangle of the last two dims, offset by the
/// diagonal m_K; the rest is zero. Optional parameter input 1: k.
struct TriluDescriptor {
    bool m_Upper = true;
    int64_t m_K = 0;
};

enum class ScatterReduction { None, Add, Mul, Max, Min };
const char* GetScatterReductionName(ScatterReduction r);
/// ONNX ScatterElements: inputs data, indices (Signed32/Signed64), updates. After Optimize
/// m_Axis is in [0, rank).
struct ScatterElementsDescriptor {
    int64_t m_Axis = 0;
    ScatterReduction m_Reduction = ScatterReduction::None;
};

/// ONNX Tile: output dim i = input dim i * m_Repeats[i]. Optional parameter input 1: repeats.
struct TileDescriptor {
    std::vector<int64_t> m_Repeats;
};

/// ONNX CumSum along m_Axis (optional parameter input 1: the axis). m_Exclusive leaves out the
/// element itself; m_Reverse sums from the end. After Optimize m_Axis is in [0, rank).
struct CumSumDescriptor {
    int64_t m_Axis = 0;
    bool m_Product = false;  ///< ONNX CumProd: running products instead of sums
    bool m_Exclusive = false;
    bool m_Reverse = false;
};

/// DepthToSpace / SpaceToDepth on NCHW. m_ColumnRowCrd: the CRD channel order (DCR otherwise;
/// SpaceToDepth has it from opset 28, as the inverse of DepthToSpace's CRD).
struct SpaceDepthDescriptor {
    unsigned int m_BlockSize = 1;
    bool m_ColumnRowCrd = false;
};

/// ONNX OneHot: inputs indices, values (2 elements: off, on) and optional parameter input
/// depth (absorbed into m_Depth; the layer then has inputs indices, values). The output has the
/// values' type and a new dim of size m_Depth at m_Axis (in [0, rank] after Optimize).
struct OneHotDescriptor {
    int64_t m_Axis = -1;
    int64_t m_Depth = 0;
};

/// ONNX EyeLike: a 2-D tensor of the input's shape with ones on diagonal m_K. m_DataType:
/// the output type, or the input's when unset.
struct EyeLikeDescriptor {
    int64_t m_K = 0;
    std::optional<DataType> m_DataType;
};

/// Where the tensor a Debug layer observes comes from (filled in by Optimize()).
struct DebugTensorSource {
    std::string m_LayerName;       ///< the optimized network's layer producing it
    unsigned int m_OutputIndex = 0;
    /// The tensor as the network was built: "<layer>:<output>". For an output of a layer a backend
    /// substituted (a fused region), the output of the original layer it stands for; for a folded
    /// constant, the output of the layer that was folded.
    std::string m_Tensor;
    BackendId m_Backend;           ///< the producing layer's backend (for a folded constant: the
                                   ///< backend that evaluated it; empty when nothing did)
    std::string m_OpDetail;        ///< the producing layer's op ("Conv", "PreCompiled(CpuAcc region: ...)")
    /// When the producing layer replaced others (OptimizeSubgraph substitution): their names.
    std::vector<std::string> m_SubstitutedLayers;
    /// The tensors the producing layer reads ("<layer>:<output>", as m_Tensor).
    std::vector<std::string> m_InputTensors;
};

/// What a Debug layer hands the callback (OptimizerOptions::m_DebugCallback) each time it runs.
/// m_Value points at the tensor's memory and is valid during the call only.
struct DebugTensorEvent {
    const DebugTensorSource& m_Source;
    ConstTensor m_Value;
};
using DebugCallback = std::function<void(const DebugTensorEvent&)>;

/// A layer Optimize() inserts (OptimizerOptions::m_Debug) to observe its input tensor each time it
/// runs: it writes "<m_Folder>/<m_FileStem>.npy" when m_Folder is set and calls m_Callback when
/// that is set. It has no outputs.
struct DebugDescriptor {
    std::string m_Folder;
    std::string m_FileStem;
    std::shared_ptr<const DebugCallback> m_Callback;
    DebugTensorSource m_Source;
};

/// A copy Optimize() inserts where a tensor crosses into memory the consumer cannot read. The
/// output lives in m_Destination's working memory (empty = host memory); the layer itself runs on
/// the backend it is assigned to (the side that owns the non-host memory).
struct MemCopyDescriptor {
    BackendId m_Destination;
};

/// A layer a backend substituted for part of the graph; the object is backend-owned and opaque
/// to the core. See include/trellis/backends/OptimizationViews.hpp.
struct PreCompiledDescriptor {
    std::shared_ptr<void> m_PreCompiledObject;
    std::string m_Description;
};

/// An activation of a recurrent layer (ONNX LSTM/GRU/RNN "activations" with their alpha/beta).
enum class RecurrentActivationFunction {
    Sigmoid, Tanh, Relu, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, Softplus
};
const char* GetRecurrentActivationName(RecurrentActivationFunction f);
struct RecurrentActivation {
    RecurrentActivationFunction m_Function = RecurrentActivationFunction::Sigmoid;
    float m_Alpha = 0.0f;
    float m_Beta = 0.0f;
};

enum class RecurrentMode { Lstm, Gru, Rnn };
enum class RecurrentDirection { Forward, Reverse, Bidirectional };

/// ONNX LSTM / GRU / RNN (m_Mode). Inputs, as ONNX numbers them: X, W, R, then optional B,
/// sequence_lens (Signed32, read at run time), initial_h, initial_c (LSTM), P (LSTM peepholes);
/// an omitted one in the middle is a 0-element placeholder. Outputs Y, Y_h and, for LSTM, Y_c.
/// m_Activations: per direction f, g, h (LSTM), f, g (GRU) or f (RNN), forward first; empty =
/// the ONNX defaults. m_Clip: cell-input clip (none when unset). m_Layout 1 puts batch first in
/// X, Y, the initial and the final states.
struct RecurrentDescriptor {
    RecurrentMode m_Mode = RecurrentMode::Lstm;
    RecurrentDirection m_Direction = RecurrentDirection::Forward;
    unsigned int m_HiddenSize = 0;
    std::vector<RecurrentActivation> m_Activations;
    std::optional<float> m_Clip;
    bool m_InputForget = false;
    bool m_LinearBeforeReset = false;
    unsigned int m_Layout = 0;
};

/// ONNX QuantizeLinear (y = saturate(round_half_even(x / scale) + zero_point)) and
/// DequantizeLinear (y = (x - zero_point) * scale). Inputs: x, scale, optional zero point. The
/// scale is a scalar (per tensor) or a 1-D tensor with one value per index of x's dim m_Axis (per
/// axis); the zero point has the scale's shape and, for QuantizeLinear, gives the output type.
/// m_DataType: QuantizeLinear's output type when there is no zero point (UInt8, ONNX's default).
/// After Optimize m_Axis is in [0, rank).
struct QuantizeLinearDescriptor {
    int64_t m_Axis = 1;
    DataType m_DataType = DataType::UInt8;
    /// Blocked quantization (opset 21): m_BlockSize > 0 gives the scale x's rank, with dim m_Axis
    /// ceil(x dim / m_BlockSize) (each scale covers m_BlockSize consecutive elements along it).
    int64_t m_BlockSize = 0;
    /// QuantizeLinear to float8: saturate out-of-range values (ONNX saturate, default 1).
    bool m_Saturate = true;
    /// DequantizeLinear's output type (opset 23 output_dtype); unset = the scale's type.
    std::optional<DataType> m_OutputDataType;
};

enum class LossReduction { None, Sum, Mean };
const char* GetLossReductionName(LossReduction r);
/// ONNX NegativeLogLikelihoodLoss (SoftmaxCrossEntropyLoss imports as a LogSoftmax along dim 1
/// followed by this). Inputs: x [N, C, d1...] (log-probabilities), target [N, d1...]
/// (Signed32/Signed64 class indices), optional weight [C]. loss = -x[n, target, d...] *
/// weight[target]; targets equal to m_IgnoreIndex contribute 0 (and no weight). Mean divides the
/// sum by the sum of the weights used; None keeps the shape of the target.
struct NegativeLogLikelihoodLossDescriptor {
    LossReduction m_Reduction = LossReduction::Mean;
    std::optional<int64_t> m_IgnoreIndex;
};

enum class GridSampleMode { Bilinear, Nearest, Bicubic };
enum class GridSamplePadding { Zeros, Border, Reflection };
/// ONNX GridSample (4-D): inputs X (N, C, H, W) and grid (N, Hout, Wout, 2) holding (x, y)
/// sample positions normalized to [-1, 1]; output (N, C, Hout, Wout). m_AlignCorners: -1 and 1
/// are the centres of the corner pixels (else their outer edges).
struct GridSampleDescriptor {
    GridSampleMode m_Mode = GridSampleMode::Bilinear;
    GridSamplePadding m_Padding = GridSamplePadding::Zeros;
    bool m_AlignCorners = false;
};

/// ONNX AffineGrid: input theta (N, 2, 3) or (N, 3, 4) and parameter input size, folded into
/// m_Size: (N, C, H, W) or (N, C, D, H, W). Output: the grid (N, H, W, 2) or (N, D, H, W, 3) of
/// theta applied to the normalized coordinates of each output pixel (x first, as GridSample reads
/// them). m_AlignCorners: -1 and 1 are the centres of the corner pixels (else their outer edges).
struct AffineGridDescriptor {
    bool m_AlignCorners = false;
    std::vector<unsigned int> m_Size;
};

/// ONNX Col2Im: input (N, C * prod(block), L) of sliding blocks, summed back into an image
/// (N, C, image...). Parameter inputs image_shape and block_shape are folded into m_ImageShape and
/// m_BlockShape; the attributes (one entry per image dim once resolved) are as Convolution's.
struct Col2ImDescriptor {
    std::vector<unsigned int> m_ImageShape;
    std::vector<unsigned int> m_BlockShape;
    std::vector<unsigned int> m_Strides;
    std::vector<unsigned int> m_Dilations;
    std::vector<unsigned int> m_PadsBegin;
    std::vector<unsigned int> m_PadsEnd;
};

/// ONNX DeformConv (2-D): inputs X (N, C, H, W), W (M, C / group, kH, kW), offset (N,
/// offset_group * kH * kW * 2, oH, oW), optional B (M) and mask (N, offset_group * kH * kW, oH, oW).
/// Each kernel tap samples X bilinearly (zero outside) at its regular position plus its offset
/// (dy, dx), scaled by the mask. Attributes as Convolution's, once resolved one entry per spatial dim.
struct DeformConvolutionDescriptor {
    std::vector<unsigned int> m_KernelShape;
    std::vector<unsigned int> m_Strides;
    std::vector<unsigned int> m_Dilations;
    std::vector<unsigned int> m_PadsBegin;
    std::vector<unsigned int> m_PadsEnd;
    unsigned int m_Groups = 1;
    unsigned int m_OffsetGroups = 1;
};

/// ONNX TensorScatter (opset 24): inputs past_cache, update (the cache's shape but for m_Axis,
/// which may be shorter) and optional write_indices (batch, Signed64; 0s when absent). Output: the
/// cache with update[..., s, ...] written at write_indices[b] + s along m_Axis (modulo the axis
/// length when m_Circular). m_Axis is normalized by inference (never 0, the batch dim).
struct TensorScatterDescriptor {
    int64_t m_Axis = -2;
    bool m_Circular = false;
};

enum class RoiAlignMode { Average, Max };
/// ONNX RoiAlign: inputs X (N, C, H, W), rois (R, 4: x1, y1, x2, y2 in input coordinates before
/// m_SpatialScale), batch_indices (R, Signed64); output (R, C, m_OutputHeight, m_OutputWidth).
/// m_SamplingRatio 0 = adaptive (ceil(roi size / output size) samples per bin). m_HalfPixel:
/// coordinate_transformation_mode half_pixel (shift by -0.5; output_half_pixel otherwise).
struct RoiAlignDescriptor {
    RoiAlignMode m_Mode = RoiAlignMode::Average;
    unsigned int m_OutputHeight = 1;
    unsigned int m_OutputWidth = 1;
    unsigned int m_SamplingRatio = 0;
    float m_SpatialScale = 1.0f;
    bool m_HalfPixel = true;
};

enum class WindowFunction { Hann, Hamming, Blackman };
const char* GetWindowFunctionName(WindowFunction f);
/// ONNX HannWindow / HammingWindow / BlackmanWindow: a 1-D window of m_Size values of type
/// m_DataType. Optional parameter input 0: the size (a scalar). m_Periodic: the window of
/// m_Size + 1 points without its last one (else symmetric).
struct WindowDescriptor {
    WindowFunction m_Function = WindowFunction::Hann;
    int64_t m_Size = 0;
    bool m_Periodic = true;
    DataType m_DataType = DataType::Float32;
};

/// ONNX DFT (opsets 17, 20): input (..., n, 1 or 2) real or complex (last dim re, im); output
/// (..., m, 2) along m_Axis (in [1, rank - 1) after Optimize). Optional parameter input 1:
/// dft_length (the signal is zero-padded or truncated to it; unset = the input's length); optional
/// parameter input 2: the axis (DFT-20). m_Onesided keeps the
/// first length / 2 + 1 frequencies (real input only, not with m_Inverse).
struct DftDescriptor {
    int64_t m_Axis = 1;
    bool m_Inverse = false;
    bool m_Onesided = false;
    std::optional<int64_t> m_DftLength;
};

/// ONNX STFT: inputs signal (batch, length, 1 or 2), parameter input frame_step (scalar), data
/// input window (frame_length values, optional) and parameter input frame_length (scalar,
/// optional). Output (batch, frames, bins, 2); bins = frame_length / 2 + 1 when m_Onesided.
/// After Optimize the layer's inputs are signal and, if given, window.
struct StftDescriptor {
    bool m_Onesided = true;
    int64_t m_FrameStep = 0;
    std::optional<int64_t> m_FrameLength;
};

/// ONNX MelWeightMatrix: parameter inputs 0..4 (num_mel_bins, dft_length, sample_rate,
/// lower_edge_hertz, upper_edge_hertz), all folded into the descriptor. Output
/// (dft_length / 2 + 1, num_mel_bins) of m_DataType.
struct MelWeightMatrixDescriptor {
    int64_t m_NumMelBins = 0;
    int64_t m_DftLength = 0;
    int64_t m_SampleRate = 0;
    float m_LowerEdgeHertz = 0.0f;
    float m_UpperEdgeHertz = 0.0f;
    DataType m_DataType = DataType::Float32;
};

enum class TfIdfMode { Tf, Idf, TfIdf };
/// ONNX TfIdfVectorizer on integer input (1-D, or 2-D rows): counts the n-grams of m_Pool
/// (m_NgramCounts[k] = where the (k+1)-grams start in m_Pool) with up to m_MaxSkipCount skipped
/// tokens between items; output (…, max(m_NgramIndexes) + 1) Float32. m_Weights: IDF weights
/// (empty = all 1).
struct TfIdfVectorizerDescriptor {
    TfIdfMode m_Mode = TfIdfMode::Tf;
    int64_t m_MinGramLength = 1;
    int64_t m_MaxGramLength = 1;
    int64_t m_MaxSkipCount = 0;
    std::vector<int64_t> m_NgramCounts;
    std::vector<int64_t> m_NgramIndexes;
    std::vector<int64_t> m_Pool;
    std::vector<float> m_Weights;
};

/// ONNX Einsum: m_Equation as ONNX writes it ("ij,jk->ik", implicit output, "...", spaces
/// allowed); any number of inputs of one type.
struct EinsumDescriptor {
    std::string m_Equation;
};

/// ONNX TopK: the m_K largest (smallest unless m_Largest) elements along m_Axis, outputs values
/// and their Signed64 indices; equal values keep the lower index first. Optional parameter input
/// 1: K (absorbed into m_K). The output is always sorted (m_Sorted = false allows any order).
/// After Optimize m_Axis is in [0, rank).
struct TopKDescriptor {
    int64_t m_Axis = -1;
    int64_t m_K = 0;
    bool m_Largest = true;
    bool m_Sorted = true;
};

/// ONNX GatherND: inputs data, indices (Signed64); the first m_BatchDims dims are batch dims.
struct GatherNDDescriptor {
    int64_t m_BatchDims = 0;
};

/// ONNX ScatterND: inputs data, indices (Signed64), updates. Reductions None, Add, Mul, and (opset
/// 18) Max, Min.
struct ScatterNDDescriptor {
    ScatterReduction m_Reduction = ScatterReduction::None;
};

/// ONNX ReverseSequence: inputs X, sequence_lens (Signed64, one per batch entry); reverses the
/// first sequence_lens[b] elements along m_TimeAxis of batch entry b (along m_BatchAxis).
struct ReverseSequenceDescriptor {
    int64_t m_BatchAxis = 1;
    int64_t m_TimeAxis = 0;
};

/// ONNX MaxUnpool: inputs X, I (Signed64) and optional parameter input 2, the output shape
/// (absorbed into m_OutputShape). The unpooled shape has each spatial dim (in - 1) * stride +
/// kernel - pads; I holds flat offsets into it (as MaxPool's Indices into its input). Without
/// output_shape the output is the unpooled shape; a larger output_shape holds the unpooled tensor
/// in its leading corner, zeros elsewhere (ONNX's reading). Empty strides/pads = 1/0.
struct MaxUnpoolDescriptor {
    std::vector<unsigned int> m_KernelShape;
    std::vector<unsigned int> m_Strides;
    std::vector<unsigned int> m_PadsBegin;
    std::vector<unsigned int> m_PadsEnd;
    std::vector<int64_t> m_OutputShape;
};

/// ONNX InstanceNormalization: inputs X (N, C, spatial...), scale and B (C); each (n, c) is
/// normalized over its spatial dims.
struct InstanceNormalizationDescriptor {
    float m_Eps = 1e-5f;
};

/// ONNX LRN across channels (dim 1): y = x / (m_Bias + m_Alpha / m_Size * sum of x^2 over the
/// m_Size channels around c)^m_Beta.
struct LrnDescriptor {
    float m_Alpha = 1e-4f;
    float m_Beta = 0.75f;
    float m_Bias = 1.0f;
    unsigned int m_Size = 1;
};

/// ONNX MeanVarianceNormalization: (x - mean) / (sqrt(variance) + 1e-9) over m_Axes (empty =
/// the ONNX default 0, 2, 3). After Optimize m_Axes is non-negative, sorted and unique.
struct MeanVarianceNormalizationDescriptor {
    std::vector<int64_t> m_Axes;
};

class INetwork;

/// ONNX Loop. Inputs: the trip count (Signed64 scalar) and the condition (Boolean scalar), each
/// a 0-element placeholder when the model leaves it out; the m_NumCarried initial values of the
/// loop-carried variables; then the m_NumOuterValues values of the enclosing graph that the body
/// reads. Outputs: the final loop-carried values, then the m_NumScanOutputs scan outputs (each
/// iteration's value stacked along a new first axis).
/// m_Body is the body: a network whose Input binding ids are 0 the iteration number (Signed64
/// scalar), 1 the condition, 2.. the loop-carried values, then the outer values in input order;
/// whose Output binding ids are 0 the next condition, 1.. the next loop-carried values, then the
/// scan values. It is shared and never changed.
/// Optimize() unrolls the loop, one iteration of the body's layers after another: the trip count
/// and the condition (the input, then each iteration's condition output) must be known when the
/// network is optimized (a graph input that decides them is pinned per run, as NonZero's input
/// is), and at most kMaxLoopIterations iterations are unrolled. m_IterationsUnrolled is the
/// optimizer's count of iterations unrolled so far (0 in a network as built); the scan values of
/// those iterations are inputs appended after the outer values.
struct LoopDescriptor {
    std::shared_ptr<const INetwork> m_Body;
    unsigned int m_NumCarried = 0;
    unsigned int m_NumScanOutputs = 0;
    unsigned int m_NumOuterValues = 0;
    unsigned int m_IterationsUnrolled = 0;
};
/// The most iterations of one Loop that Optimize() unrolls.
inline constexpr unsigned int kMaxLoopIterations = 1024;

/// ONNX Compress: the slices of input 0 along m_Axis (the flattened input when unset) whose entry
/// in input 1 (a 1-D Boolean condition, read when the network is specialized) is true.
struct CompressDescriptor {
    std::optional<int64_t> m_Axis;
};

/// ONNX Unique: the distinct elements (m_Axis unset: of the flattened input) or slices along
/// m_Axis, sorted ascending when m_Sorted, else in order of first occurrence. Outputs Y,
/// indices, inverse_indices, counts (Signed64).
struct UniqueDescriptor {
    std::optional<int64_t> m_Axis;
    bool m_Sorted = true;
};

/// ONNX NonMaxSuppression. Inputs boxes [B, N, 4], scores [B, C, N], then the optional
/// max_output_boxes_per_class, iou_threshold, score_threshold (folded into the fields below).
/// Output selected_indices [K, 3] Signed64 rows (batch, class, box).
struct NonMaxSuppressionDescriptor {
    bool m_CenterPointBox = false;
    int64_t m_MaxOutputBoxesPerClass = 0;
    float m_IouThreshold = 0.0f;
    std::optional<float> m_ScoreThreshold;
};

/// ONNX Attention (opsets 23-25): Y = softmax(softcap(Q K^T * scale) + bias) V per head.
/// Inputs: Q, K, V, then the optional attn_mask, past_key, past_value, nonpad_kv_seqlen (a
/// 0-element placeholder where omitted). Q, K and V are all 4-D (batch, heads, sequence, head
/// size) or all 3-D (batch, sequence, heads * head size; m_QNumHeads and m_KvNumHeads split
/// them). K and V may have fewer heads than Q when they divide it (grouped-query attention: query
/// head h reads key/value head h / (q heads / kv heads)). past_key/past_value (batch, kv heads,
/// past length, head size) are prepended to K/V along the sequence; outputs: Y (Q's layout with
/// V's head size), optional present_key/present_value (the concatenations, 4-D) and
/// qk_matmul_output (batch, q heads, q length, total length), chosen by m_QkMatmulOutputMode:
/// 0 and 1 the scaled (and soft-capped) scores, 2 with the bias added, 3 the softmax.
/// The bias: attn_mask (Boolean: true attends; or additive, Q's type; broadcast to (batch, q heads,
/// q length, total length) with a last dim that may be shorter and is then padded with -inf),
/// plus with m_IsCausal a bottom-right causal mask (query i attends key j <= i + offset, offset =
/// past length, or nonpad_kv_seqlen[b] - q length), plus the sliding window of m_LeftWindow /
/// m_RightWindow (-1: unbounded), plus -inf for keys past nonpad_kv_seqlen[b]. A row whose bias is
/// all -inf gives 0. m_Scale unset = 1 / sqrt(head size); m_Softcap 0 = none.
/// After Optimize: m_QNumHeads and m_KvNumHeads are set, and m_HasMask, m_HasPast and
/// m_HasNonpadKvSeqlen say which optional inputs are real (not placeholders).
struct AttentionDescriptor {
    bool m_IsCausal = false;
    unsigned int m_QNumHeads = 0;
    unsigned int m_KvNumHeads = 0;
    std::optional<float> m_Scale;
    float m_Softcap = 0.0f;
    int m_QkMatmulOutputMode = 0;
    int64_t m_LeftWindow = -1;
    int64_t m_RightWindow = -1;
    bool m_HasMask = false;
    bool m_HasPast = false;
    bool m_HasNonpadKvSeqlen = false;
};

/// ONNX RMSNormalization (opset 23): Y = X / sqrt(mean(X^2 over dims [m_Axis, rank)) + m_Eps) *
/// scale, scale broadcast unidirectionally to X. After Optimize m_Axis is in [0, rank).
struct RmsNormalizationDescriptor {
    int m_Axis = -1;
    float m_Eps = 1e-5f;
};

/// ONNX RotaryEmbedding (opset 23): inputs X (batch, heads, sequence, head size) or (batch,
/// sequence, hidden) with m_NumHeads, cos_cache and sin_cache ((max position, dim / 2) with
/// position_ids, else (batch, sequence, dim / 2)), optional position_ids (batch, sequence;
/// Signed64, read when the layer runs). The first m_RotaryDim elements of each head (all when 0)
/// are rotated in pairs, (x[i], x[i + dim/2]) or (x[2i], x[2i + 1]) with m_Interleaved; the rest
/// is copied.
struct RotaryEmbeddingDescriptor {
    bool m_Interleaved = false;
    unsigned int m_NumHeads = 0;
    unsigned int m_RotaryDim = 0;
};

using LayerDescriptor = std::variant<
    EmptyDescriptor, BindingDescriptor, ConstantDescriptor, ElementwiseBinaryDescriptor,
    ElementwiseUnaryDescriptor, ConvolutionDescriptor, GemmDescriptor, SoftmaxDescriptor,
    PoolingDescriptor, BatchNormalizationDescriptor, LayerNormalizationDescriptor, ConcatDescriptor,
    SplitDescriptor, SliceDescriptor, ReshapeDescriptor, TransposeDescriptor, GatherDescriptor,
    ShapeDescriptor, ConstantOfShapeDescriptor, ExpandDescriptor, ReduceDescriptor, PadDescriptor,
    ResizeDescriptor, CastDescriptor, RangeDescriptor, DebugDescriptor, MemCopyDescriptor, PreCompiledDescriptor,
    ArgMinMaxDescriptor, TriluDescriptor, ScatterElementsDescriptor, TileDescriptor, CumSumDescriptor,
    SpaceDepthDescriptor, OneHotDescriptor, EyeLikeDescriptor, RecurrentDescriptor,
    QuantizeLinearDescriptor, NegativeLogLikelihoodLossDescriptor,
    GridSampleDescriptor, RoiAlignDescriptor, WindowDescriptor, DftDescriptor, StftDescriptor,
    MelWeightMatrixDescriptor, TfIdfVectorizerDescriptor,
    EinsumDescriptor, TopKDescriptor, GatherNDDescriptor, ScatterNDDescriptor, ReverseSequenceDescriptor,
    MaxUnpoolDescriptor, InstanceNormalizationDescriptor, LrnDescriptor, MeanVarianceNormalizationDescriptor,
    CompressDescriptor, UniqueDescriptor, NonMaxSuppressionDescriptor, LoopDescriptor,
    AttentionDescriptor, RmsNormalizationDescriptor, RotaryEmbeddingDescriptor,
    AffineGridDescriptor, Col2ImDescriptor, DeformConvolutionDescriptor, TensorScatterDescriptor>;

/// The descriptor type the op table gives each layer type.
template <LayerType T> struct DescriptorOf;
#define TRELLIS_OP(Name, Desc, MinIn, MaxIn, NumOut) \
    template <> struct DescriptorOf<LayerType::Name> { using Type = Desc; };
#include <trellis/Ops.def>
#undef TRELLIS_OP

/// A default-constructed descriptor of the type the op table gives `type`.
LayerDescriptor MakeDefaultDescriptor(LayerType type);
/// True when `d` holds the descriptor type the op table gives `type`.
bool DescriptorMatches(LayerType type, const LayerDescriptor& d);

}  // namespace trellis
