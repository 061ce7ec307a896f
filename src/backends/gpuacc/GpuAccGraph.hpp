// GpuAcc: the region graph - what OptimizeSubgraph() hands to the workload factory.
//
// GpuAcc replaces each run of its layers with one PreCompiled layer whose object is a RegionGraph:
// the layers as nodes over values, after GpuAcc's fusions (GpuAccFusion.cpp). The graph is plain
// data, built and fused at Optimize() time (where constants' small values are known); the device
// plan (cuDNN graphs, cuBLASLt matmuls, kernels, memory) is made from it when the network is
// loaded (GpuAccRegion.cpp).
#pragma once

#include "kernels/GpuAccKernels.hpp"

#include <trellis/Descriptors.hpp>
#include <trellis/backends/IWorkload.hpp>
#include <trellis/backends/SubgraphView.hpp>

#include <memory>
#include <string>
#include <vector>

namespace trellis::gpuacc {

/// An activation fused after a convolution or a matmul.
enum class Activation { None, Relu, Clip, Sigmoid, Tanh, Swish, Gelu };
const char* ActivationName(Activation a);

/// One instruction of an element-wise program at graph level: operands are earlier instructions
/// (SSA), or for Load the index into EltwiseProgram::m_Inputs.
struct EwNode {
    EwOp m_Op = EwOp::Imm;
    int m_A = -1, m_B = -1, m_C = -1;
    float m_F0 = 0.0f, m_F1 = 0.0f;
};

/// A fused chain of element-wise layers: one pass over its output.
struct EltwiseProgram {
    std::vector<int> m_Inputs;  ///< value ids
    std::vector<EwNode> m_Nodes;
    int m_Result = -1;
};

enum class NodeKind {
    Conv,        ///< inputs x, w, [b]; + epilogue (residual, activation)
    MatMul,      ///< MatMul or Gemm; inputs a, b, [bias]; + epilogue
    Pool,
    Eltwise,     ///< m_Program
    BatchNorm,   ///< inference BatchNormalization not folded by the core: x, scale, bias, mean, var
    Softmax,     ///< + optional scale and additive mask
    LayerNorm,   ///< inputs x, scale, [bias]; + optional residual added first
    Reduce,
    Copy,        ///< Transpose, Slice, Expand, Cast between integer types
    Concat,
    Split,
    Gather,
    Alias,       ///< Reshape, Flatten, Squeeze, Unsqueeze, Identity: the same bytes
    Attention,   ///< MatMul(q, kT) -> Softmax(m_Scale, m_Mask) -> MatMul(p, v): inputs q, kT, v, [mask]
    Remap,       ///< Resize, Pad, Trilu: each output element from input positions (input 0; the rest constant)
    Arg,         ///< ArgMin / ArgMax
    AttentionOp, ///< ONNX Attention (opset 23): inputs q, k, v, [mask]
    ConvTranspose,  ///< inputs x, w, [b] (constant)
};
const char* NodeKindName(NodeKind kind);

struct Node {
    NodeKind m_Kind = NodeKind::Eltwise;
    LayerType m_LayerType = LayerType::Input;
    LayerDescriptor m_Descriptor;
    std::string m_Name;
    std::vector<int> m_Inputs;   ///< value ids
    std::vector<int> m_Outputs;  ///< value ids
    bool m_Dead = false;

    EltwiseProgram m_Program;    ///< Eltwise

    // Conv and MatMul epilogue: + bias (an input), * alpha, + residual, activation.
    float m_Alpha = 1.0f;
    int m_Bias = -1;             ///< MatMul: value added over the last dim (Gemm's C or a fused Add)
    int m_Residual = -1;         ///< value of the output's shape added before the activation
    float m_BiasScale = 1.0f;    ///< Gemm's beta when the bias is its C
    float m_ResidualScale = 1.0f;  ///< Gemm's beta when the residual is its C
    Activation m_Activation = Activation::None;
    float m_ClipLow = 0.0f, m_ClipHigh = 0.0f;

    // Softmax: softmax(x * m_Scale + mask).
    float m_Scale = 1.0f;
    int m_Mask = -1;
    // LayerNorm: LN(x + m_LnResidual); m_LnSum is a value that also receives x + residual.
    int m_LnResidual = -1;
    int m_LnSum = -1;

    std::vector<std::string> m_Fused;  ///< names of the layers folded into this node

    /// Attention: the three nodes it replaced (MatMul, Softmax, MatMul), lowered as they were where
    /// no fused plan is available.
    std::vector<Node> m_Parts;
};

struct Value {
    TensorInfo m_Info;
    int m_Producer = -1;             ///< node id; -1 for a region input
    int m_RegionInput = -1;          ///< region input index feeding it (the first one)
    bool m_Constant = false;         ///< fed by a Constant layer
    std::vector<float> m_SmallConstant;  ///< the value, when constant Float32 with at most 64 elements
};

class RegionGraph {
public:
    std::vector<Value> m_Values;
    std::vector<Node> m_Nodes;
    std::vector<int> m_InputValues;   ///< per region input: its value
    std::vector<int> m_OutputValues;  ///< per region output: its value
    std::vector<TensorInfo> m_InputInfos;
    std::vector<TensorInfo> m_OutputInfos;
    std::vector<std::string> m_FusionLog;  ///< one line per fusion applied

    /// Live nodes reading value `v` (as an input or an epilogue operand), in node order.
    std::vector<int> Consumers(int v) const;
    bool IsRegionOutput(int v) const;
    /// "GpuAcc region: 17 nodes (Conv+relu x 10, ...)".
    std::string Describe() const;
};

/// The node kind a supported layer becomes.
NodeKind NodeKindOf(LayerType type, const LayerDescriptor& descriptor, const std::vector<TensorInfo>& inputs);

/// Builds the region graph of `subgraph` (every layer supported by GpuAcc) and fuses it.
/// Throws LayerValidationException naming a layer that cannot be represented.
std::shared_ptr<RegionGraph> BuildRegionGraph(const SubgraphView& subgraph);
/// A one-node region for a layer handed to the workload factory directly.
std::shared_ptr<RegionGraph> BuildSingleLayerGraph(const QueueDescriptor& descriptor, const WorkloadInfo& info);

/// Element-wise layers as one-node programs; false when the op has no element-wise form.
bool EltwiseProgramOf(LayerType type, const LayerDescriptor& descriptor, const std::vector<int>& inputs,
                      EltwiseProgram& program);

/// Registers of the kernel's program for `program`: one per instruction result, reused once its
/// last reader ran. `regs` gets each instruction's register; returns the count used.
int AllocateRegisters(const EltwiseProgram& program, std::vector<int>& regs);

/// Fusions (GpuAccFusion.cpp).
void FuseRegion(RegionGraph& graph);

/// Region objects handed out in PreCompiled descriptors, so the layer support can recognise them.
class RegionObject {
public:
    explicit RegionObject(std::shared_ptr<RegionGraph> graph);
    ~RegionObject();
    RegionObject(const RegionObject&) = delete;
    RegionObject& operator=(const RegionObject&) = delete;
    const std::shared_ptr<RegionGraph>& GetGraph() const { return m_Graph; }
    static bool IsRegionObject(const void* object);
private:
    std::shared_ptr<RegionGraph> m_Graph;
};

}  // namespace trellis::gpuacc
