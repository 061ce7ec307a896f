// CpuAcc: the region graph - what OptimizeSubgraph() hands to the workload factory.
//
// CpuAcc replaces each sub-graph it is given with one PreCompiled layer whose object is a
// RegionGraph: the sub-graph's layers as nodes over values, after CpuAcc's fusions (post-ops,
// layer normalization, GELU, SiLU). The graph is plain data; oneDNN primitives are created from it
// by the workload factory (CpuAccRegion*.cpp), when the thread count and the constants are known.
#pragma once

#include <trellis/Descriptors.hpp>
#include <trellis/backends/SubgraphView.hpp>
#include <trellis/backends/IWorkload.hpp>

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace trellis::cpuacc {

/// What a node computes.
enum class NodeKind {
    Conv,       ///< Convolution; inputs x, w, [b]
    MatMul,     ///< MatMul or Gemm; inputs a, b, [bias]
    Pool,       ///< Pooling
    Eltwise,    ///< oneDNN eltwise algorithms (m_Eltwise, applied in order)
    Erf,        ///< erf (own kernel: oneDNN has no erf eltwise)
    Binary,     ///< ElementwiseBinary Add/Sub/Mul/Div/Max/Min with broadcasting
    Softmax,
    LayerNorm,  ///< inputs x, scale, [bias]
    Concat,
    Reshape,    ///< Reshape/Identity: a view of the same data
    Transpose,
    Reduce,
    Split,
    Slice,
    Recurrent,  ///< LSTM/GRU/RNN (oneDNN's RNN primitives); inputs as RecurrentDescriptor says
    BatchNorm,  ///< inference BatchNormalization not folded into a convolution; x, scale, B, mean, var
    Pad,        ///< constant-mode Pad with non-negative pads (parameter inputs ignored: folded)
    Resize,     ///< nearest/linear Resize oneDNN's resampling computes exactly (parameter inputs folded)
    Attention,  ///< scaled dot-product attention, one fused own kernel (CpuAccKernels.hpp); inputs Q, K, V,
                ///< [mask]: an ONNX Attention layer, or MatMul -> [scale] -> [mask Add] -> Softmax -> MatMul
                ///< fused (m_KeyTransposed; AttentionDescriptor made by the fusion)
    Expand,     ///< numpy broadcast to the output shape (shape input folded)
    RmsNorm,    ///< fused RMS normalization (own kernel); inputs x, [gamma]; LayerNormalizationDescriptor, or
                ///< RmsNormalizationDescriptor for an ONNX RMSNormalization layer
    Quantize,   ///< QuantizeLinear, per tensor, Float32 -> UInt8/Signed8 (own kernel); x, scale, [zero point]
    Dequantize, ///< DequantizeLinear, per tensor, UInt8/Signed8 -> Float32 (own kernel); x, scale, [zero point]
    QuantizedAdd,  ///< DequantizeLinear a, b -> Add -> [Relu] -> QuantizeLinear in one pass (own kernel); a, b 8-bit
    Where,      ///< Where(constant Boolean condition, x, constant scalar): x where the condition holds, else
                ///< the scalar (a masked fill: transformers' causal masks); inputs condition, x, scalar
    DynamicQuantize,  ///< DynamicQuantizeLinear, Float32 -> UInt8 with its scale and zero point computed from the
                      ///< data (own kernel); outputs y, y_scale (Float32 scalar), y_zero_point (UInt8 scalar)
    ElementwiseChain,  ///< element-wise steps (m_Chain) run in one pass over row blocks (own kernel): a QDQ
                       ///< model's Dequantize -> ops with fake quantization between -> Quantize; inputs: the
                       ///< chain's input, then the other operands its Binary steps read (constant vectors
                       ///< over the last dim, tensors of its shape)
    Cast,       ///< Cast UInt8/Signed8 -> Signed32 or Signed32 -> Float32: only as a piece of an integer
                ///< product (QLinearConv, QLinearMatMul as imported) that FuseIntegerProducts turns into an
                ///< int8 node; never compiled (CpuAccBackend::OptimizeSubgraph fails unfused pieces)
};
const char* GetNodeKindName(NodeKind kind);

/// A oneDNN eltwise operation, by oneDNN's algorithm number (dnnl_alg_kind_t) and its alpha/beta.
struct EltwiseOp {
    int m_Algorithm = 0;
    float m_Alpha = 0.0f;
    float m_Beta = 0.0f;
};

/// An operation fused after a Conv or MatMul node.
struct PostOp {
    enum class Kind {
        Eltwise,  ///< m_Eltwise on the result
        Add,      ///< result + m_Value (same shape, or broadcast for MatMul)
    };
    Kind m_Kind = Kind::Eltwise;
    EltwiseOp m_Eltwise;
    int m_Value = -1;
    std::string m_Name;  ///< the layer it came from
};

/// A Conv or MatMul node run as a oneDNN int8 primitive: fused from DequantizeLinear (input 0)
/// -> Conv/MatMul/Gemm (weights folded from an int8 DequantizeLinear) -> [Relu] -> QuantizeLinear.
/// Input 0 is then the 8-bit tensor the DequantizeLinear read, the output the 8-bit tensor the
/// QuantizeLinear wrote; the weights stay the Float32 constant (the int8 values are in its Value).
struct Int8Params {
    DataType m_SrcType = DataType::UInt8;
    float m_SrcScale = 1.0f;
    int32_t m_SrcZeroPoint = 0;
    DataType m_DstType = DataType::UInt8;
    float m_DstScale = 1.0f;
    int32_t m_DstZeroPoint = 0;
    /// A QLinearConv / QLinearMatMul as imported (FuseIntegerProducts): the value id of the constant
    /// Float32 multiplier x_scale * w_scale / y_scale (one, or per output channel), taken as the
    /// output scales as it is; the bias is then the constant Signed32 one, added to the integer sum.
    /// -1 for a QDQ node (output scales from the scales, a Float32 bias).
    int m_Multipliers = -1;
    /// A MatMulInteger after DynamicQuantizeLinear as imported (FuseIntegerProducts): the value id of
    /// the Float32 scales x_scale * w_scale computed at run time (one, or one per output column),
    /// taken as the primitive's output scales when it runs; the output is then Float32 (no
    /// QuantizeLinear), and this value is the node's input 2. -1 otherwise.
    int m_RuntimeScales = -1;
    /// The value id of an 8-bit scalar source zero point known only at run time (the zero point
    /// DynamicQuantizeLinear computed), the node's input 3 (then m_SrcZeroPoint is unused); -1 otherwise.
    int m_RuntimeSrcZeroPoint = -1;
    /// A product with run-time scales computed by CpuAcc's own exact integer GEMM (IntegerGemmAvx2),
    /// where oneDNN's int8 would saturate (AVX2 without VNNI); its post-ops run after it as oneDNN
    /// Float32 primitives.
    bool m_OwnKernel = false;
    /// A product of two computed 8-bit operands (attention's QLinearMatMul): input 1 is the second
    /// 8-bit operand (not constant weights), m_BZeroPoint its zero point; always m_OwnKernel.
    bool m_ActivationB = false;
    int32_t m_BZeroPoint = 0;
    /// A dynamic product's computed B with its zero point known only at run time (a second
    /// DynamicQuantizeLinear's): that 8-bit scalar's value id, the node's last input; -1 otherwise.
    int m_RuntimeBZeroPoint = -1;
    /// The own convolution's 8-bit result dequantized with its own scale and zero point, [a Relu],
    /// and quantized again, in the tile's epilogue: a QOperator model's QLinearConv ->
    /// DequantizeLinear -> Relu -> QuantizeLinear (FuseRequantizeIntoIntegerConv), each step as the
    /// separate kernels compute it. m_Dst* stay the product's own (the first quantization).
    struct Requantize {
        float m_Scale = 1.0f;  ///< the DequantizeLinear's (the product's output scale)
        bool m_Relu = false;
        float m_OutScale = 1.0f;  ///< the QuantizeLinear's
        int32_t m_OutZeroPoint = 0;
        DataType m_OutType = DataType::UInt8;
    };
    std::optional<Requantize> m_Requantize;
    float m_Src2Scale = 1.0f;  ///< QuantizedAdd: the second input's scale and zero point
    int32_t m_Src2ZeroPoint = 0;
    bool m_Relu = false;       ///< QuantizedAdd: a Relu before the QuantizeLinear
};

/// One step of an ElementwiseChain node, applied to the running value v (each as the separate
/// node it replaces computes it).
struct ChainStep {
    enum class Op {
        Dequantize,  ///< first step only: v = (x - m_Zp) * m_Scale of the chain's 8-bit input
        FakeQuant,   ///< QuantizeLinear (m_Scale, m_Zp) then DequantizeLinear (m_Scale2, m_Zp2)
        Quantize,    ///< last step only: the chain's 8-bit output, QuantizeLinear (m_Scale, m_Zp)
        Erf,
        Linear,      ///< m_Scale * v + m_Scale2 (oneDNN's eltwise_linear, one rounding)
        Relu,        ///< v < 0 ? 0 : v
        Binary,      ///< v op w (w op v when m_Reversed); w: step m_Operand's value (-1: the chain's Float32
                     ///< input), or the node's input m_Operand: with m_Vector a constant over the last dim,
                     ///< with m_Tensor a Float32 tensor of the chain's shape computed before it
    };
    Op m_Op = Op::Erf;
    float m_Scale = 1.0f, m_Scale2 = 0.0f;
    int32_t m_Zp = 0, m_Zp2 = 0;
    bool m_Signed = false;  ///< the 8-bit type of a (fake) quantization step: Signed8, else UInt8
    BinaryOperation m_Binary = BinaryOperation::Add;
    int m_Operand = -1;
    bool m_Vector = false, m_Tensor = false, m_Reversed = false;
    /// With m_Tensor: the operand is the 8-bit input of a DequantizeLinear (m_OperandScale,
    /// m_OperandZp; Signed8 when m_OperandSigned), dequantized block by block as the step reads it
    /// (a QOperator model's residual branch), not a Float32 tensor written by a pass of its own.
    bool m_OperandBytes = false, m_OperandSigned = false;
    float m_OperandScale = 1.0f;
    int32_t m_OperandZp = 0;
    std::string m_Name;  ///< the layer it came from
};

struct Node {
    NodeKind m_Kind = NodeKind::Eltwise;
    LayerType m_LayerType = LayerType::Input;
    LayerDescriptor m_Descriptor;
    std::string m_Name;
    std::vector<int> m_Inputs;   ///< value ids
    std::vector<int> m_Outputs;  ///< value ids
    std::vector<EltwiseOp> m_Eltwise;  ///< Eltwise nodes: applied in order
    std::vector<PostOp> m_PostOps;
    /// Conv/MatMul run in int8 (see Int8Params); on a Quantize node: a DequantizeLinear fused after
    /// it (m_Dst* are the DequantizeLinear's scale and zero point; the output is Float32).
    std::optional<Int8Params> m_Int8;
    /// Attention fused from MatMul -> Softmax -> MatMul: input 1 is K^T (.., head size, keys), as
    /// the first MatMul read it, rather than ONNX Attention's K.
    bool m_KeyTransposed = false;
    /// Attention fused with a Where that masks the scores causally (a constant lower-triangular
    /// condition, the form of transformers' GPT-2 exports): key j > query i + m_CausalOffset gets
    /// m_CausalFill (the Where's scalar), before the mask Add, as the layers compute it. ONNX
    /// Attention's is_causal: offset 0 (or the past length) and -inf.
    std::size_t m_CausalOffset = 0;
    float m_CausalFill = -std::numeric_limits<float>::infinity();
    std::vector<ChainStep> m_Chain;  ///< ElementwiseChain nodes
    bool m_Dead = false;
};

struct Value {
    TensorInfo m_Info;
    int m_Producer = -1;             ///< node id; -1 for a region input
    int m_RegionInput = -1;          ///< region input index feeding it (the first one)
    bool m_Constant = false;         ///< fed by a Constant layer
    std::vector<float> m_SmallConstant;  ///< the value, when constant Float32 with at most 64 elements
    /// The bytes of a constant Boolean tensor (0 or 1 each), else null.
    std::shared_ptr<const std::vector<uint8_t>> m_BooleanConstant;
    /// A constant Float32 tensor folded from DequantizeLinear of 8-bit data (the scales are in
    /// m_Info): the integers q - zero_point when each is in [-128, 127] and q * scale gives back
    /// every value bit for bit; empty otherwise (or when not checked).
    std::shared_ptr<const std::vector<int8_t>> m_Int8Values;
    std::optional<int32_t> m_IntScalar;  ///< the value, when a constant UInt8/Signed8/Signed32 with one element
    std::string m_Int8Why;  ///< why m_Int8Values is empty for a tensor carrying scales
};

class RegionGraph {
public:
    std::vector<Value> m_Values;
    std::vector<Node> m_Nodes;  ///< node i is layer i of the sub-graph; fusions add none (they mark nodes dead)
    std::vector<int> m_InputValues;   ///< per region input: its value
    std::vector<int> m_OutputValues;  ///< per region output: its value
    std::vector<TensorInfo> m_InputInfos;
    std::vector<TensorInfo> m_OutputInfos;
    std::vector<std::string> m_FusionLog;  ///< one line per fusion applied

    /// Live nodes reading value `v` (as an input or a post-op operand), in node order.
    std::vector<int> Consumers(int v) const;
    bool IsRegionOutput(int v) const;
    /// Whether node `n` reads or writes a Signed32 value: an unfused piece of an integer product
    /// (see NodeKind::Cast), which no CpuAcc kernel computes.
    bool TouchesSigned32(const Node& n) const;
    /// One line: "CpuAcc region: 42 layers -> 17 nodes (conv+relu x 10, ...)".
    std::string Describe() const;
};

/// Which of the optional fusions FuseRegion applies.
struct FusionOptions {
    /// MatMul -> [scale] -> [mask Add] -> Softmax -> MatMul into one Attention node (CpuAcc's own
    /// kernel). The onednn code-generation target, which emits oneDNN primitives only, turns it off.
    bool m_Attention = true;
};

/// Builds the region graph of `subgraph` (every layer already supported by CpuAcc) and applies the
/// fusions. Throws LayerValidationException naming a layer if one cannot be represented.
std::shared_ptr<RegionGraph> BuildRegionGraph(const SubgraphView& subgraph, const FusionOptions& fusions = {});

/// A one-node region for one layer handed directly to the workload factory.
std::shared_ptr<RegionGraph> BuildSingleLayerGraph(const QueueDescriptor& descriptor, const WorkloadInfo& info);

/// Fusions (CpuAccFusion.cpp): pattern rewrites, then post-op fusion.
void FuseRegion(RegionGraph& graph, const FusionOptions& fusions = {});

/// Region objects handed out in PreCompiled descriptors, so the layer support can recognise them.
void RegisterRegionObject(const void* object);
void UnregisterRegionObject(const void* object);
bool IsRegionObject(const void* object);

/// Owns a RegionGraph and keeps it registered while alive.
class RegionObject {
public:
    explicit RegionObject(std::shared_ptr<RegionGraph> graph) : m_Graph(std::move(graph)) { RegisterRegionObject(this); }
    ~RegionObject() { UnregisterRegionObject(this); }
    RegionObject(const RegionObject&) = delete;
    RegionObject& operator=(const RegionObject&) = delete;
    const std::shared_ptr<RegionGraph>& GetGraph() const { return m_Graph; }
private:
    std::shared_ptr<RegionGraph> m_Graph;
};

}  // namespace trellis::cpuacc
