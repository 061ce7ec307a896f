// GpuAcc: building the region graph from a sub-graph view (or from one layer).
#include "GpuAccGraph.hpp"

#include <trellis/Exceptions.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

namespace trellis::gpuacc {

const char* ActivationName(Activation a) {
    switch (a) {
        case Activation::None: return "none";
        case Activation::Relu: return "relu";
        case Activation::Clip: return "clip";
        case Activation::Sigmoid: return "sigmoid";
        case Activation::Tanh: return "tanh";
        case Activation::Swish: return "swish";
        case Activation::Gelu: return "gelu";
    }
    return "?";
}

const char* NodeKindName(NodeKind kind) {
    switch (kind) {
        case NodeKind::Conv: return "Conv";
        case NodeKind::MatMul: return "MatMul";
        case NodeKind::Pool: return "Pool";
        case NodeKind::Eltwise: return "Eltwise";
        case NodeKind::BatchNorm: return "BatchNorm";
        case NodeKind::Softmax: return "Softmax";
        case NodeKind::LayerNorm: return "LayerNorm";
        case NodeKind::Reduce: return "Reduce";
        case NodeKind::Copy: return "Copy";
        case NodeKind::Concat: return "Concat";
        case NodeKind::Split: return "Split";
        case NodeKind::Gather: return "Gather";
        case NodeKind::Alias: return "Alias";
        case NodeKind::Attention: return "Attention";
        case NodeKind::Remap: return "Remap";
        case NodeKind::Arg: return "Arg";
        case NodeKind::AttentionOp: return "AttentionOp";
        case NodeKind::ConvTranspose: return "ConvTranspose";
    }
    return "?";
}

std::vector<int> RegionGraph::Consumers(int v) const {
    std::vector<int> result;
    for (std::size_t n = 0; n < m_Nodes.size(); ++n) {
        const Node& node = m_Nodes[n];
        if (node.m_Dead) continue;
        bool reads = node.m_Bias == v || node.m_Residual == v || node.m_Mask == v || node.m_LnResidual == v;
        for (int i : node.m_Inputs) reads = reads || i == v;
        for (int i : node.m_Program.m_Inputs) reads = reads || i == v;
        if (reads) result.push_back(static_cast<int>(n));
    }
    return result;
}

bool RegionGraph::IsRegionOutput(int v) const {
    for (int o : m_OutputValues) {
        if (o == v) return true;
    }
    return false;
}

std::string RegionGraph::Describe() const {
    std::map<std::string, int> counts;
    int live = 0;
    for (const Node& n : m_Nodes) {
        if (n.m_Dead) continue;
        ++live;
        std::string key = NodeKindName(n.m_Kind);
        if (n.m_Bias >= 0 || (n.m_Kind == NodeKind::Conv && n.m_Inputs.size() > 2)) key += "+bias";
        if (n.m_Residual >= 0 || n.m_LnResidual >= 0) key += "+residual";
        if (n.m_Activation != Activation::None) key += std::string("+") + ActivationName(n.m_Activation);
        if (n.m_Mask >= 0) key += "+mask";
        ++counts[key];
    }
    std::ostringstream os;
    os << "GpuAcc region: " << live << " nodes (";
    bool first = true;
    for (const auto& [k, c] : counts) {
        os << (first ? "" : ", ") << k << " x" << c;
        first = false;
    }
    os << ")";
    // The pattern fusions by kind ("GELU x12, element-wise chain x30"): log lines "KIND: ...".
    std::map<std::string, int> fusions;
    for (const std::string& line : m_FusionLog) {
        const std::size_t colon = line.find(':');
        if (colon != std::string::npos && line.find('\'') > colon) ++fusions[line.substr(0, colon)];
    }
    if (!fusions.empty()) {
        os << ", fused";
        bool firstFusion = true;
        for (const auto& [k, c] : fusions) {
            os << (firstFusion ? " " : ", ") << k << " x" << c;
            firstFusion = false;
        }
    }
    return os.str();
}

namespace {

/// One-op programs: unary ops read input 0; binary ops read inputs 0 and 1.
bool UnaryOpOf(const ElementwiseUnaryDescriptor& d, EwNode& n) {
    n.m_F0 = d.m_A;
    n.m_F1 = d.m_B;
    switch (d.m_Operation) {
        case UnaryOperation::Abs: n.m_Op = EwOp::Abs; return true;
        case UnaryOperation::Neg: n.m_Op = EwOp::Neg; return true;
        case UnaryOperation::Exp: n.m_Op = EwOp::Exp; return true;
        case UnaryOperation::Log: n.m_Op = EwOp::Log; return true;
        case UnaryOperation::Sqrt: n.m_Op = EwOp::Sqrt; return true;
        case UnaryOperation::Reciprocal: n.m_Op = EwOp::Reciprocal; return true;
        case UnaryOperation::Relu: n.m_Op = EwOp::Relu; return true;
        case UnaryOperation::LeakyRelu: n.m_Op = EwOp::LeakyRelu; return true;
        case UnaryOperation::Elu: n.m_Op = EwOp::Elu; return true;
        case UnaryOperation::Sigmoid: n.m_Op = EwOp::Sigmoid; return true;
        case UnaryOperation::Tanh: n.m_Op = EwOp::Tanh; return true;
        case UnaryOperation::HardSigmoid: n.m_Op = EwOp::HardSigmoid; return true;
        case UnaryOperation::HardSwish: n.m_Op = EwOp::HardSwish; return true;
        case UnaryOperation::Erf: n.m_Op = EwOp::Erf; return true;
        case UnaryOperation::Gelu: n.m_Op = EwOp::Gelu; return true;
        case UnaryOperation::GeluTanh: n.m_Op = EwOp::GeluTanh; return true;
        case UnaryOperation::Clip: n.m_Op = EwOp::Clip; return true;
        case UnaryOperation::Not: n.m_Op = EwOp::Not; return true;
        case UnaryOperation::Round: n.m_Op = EwOp::Round; return true;
        case UnaryOperation::Floor: n.m_Op = EwOp::Floor; return true;
        case UnaryOperation::Ceil: n.m_Op = EwOp::Ceil; return true;
        case UnaryOperation::Sign: n.m_Op = EwOp::Sign; return true;
        case UnaryOperation::Softplus: n.m_Op = EwOp::Softplus; return true;
        case UnaryOperation::Softsign: n.m_Op = EwOp::Softsign; return true;
        case UnaryOperation::Selu: n.m_Op = EwOp::Selu; return true;
        case UnaryOperation::Celu: n.m_Op = EwOp::Celu; return true;
        case UnaryOperation::Mish: n.m_Op = EwOp::Mish; return true;
        case UnaryOperation::ThresholdedRelu: n.m_Op = EwOp::ThresholdedRelu; return true;
        case UnaryOperation::Shrink: n.m_Op = EwOp::Shrink; return true;
        case UnaryOperation::Sin: n.m_Op = EwOp::Sin; return true;
        case UnaryOperation::Cos: n.m_Op = EwOp::Cos; return true;
        case UnaryOperation::Tan: n.m_Op = EwOp::Tan; return true;
        case UnaryOperation::Asin: n.m_Op = EwOp::Asin; return true;
        case UnaryOperation::Acos: n.m_Op = EwOp::Acos; return true;
        case UnaryOperation::Atan: n.m_Op = EwOp::Atan; return true;
        case UnaryOperation::Sinh: n.m_Op = EwOp::Sinh; return true;
        case UnaryOperation::Cosh: n.m_Op = EwOp::Cosh; return true;
        case UnaryOperation::Asinh: n.m_Op = EwOp::Asinh; return true;
        case UnaryOperation::Acosh: n.m_Op = EwOp::Acosh; return true;
        case UnaryOperation::Atanh: n.m_Op = EwOp::Atanh; return true;
        case UnaryOperation::IsNaN: n.m_Op = EwOp::IsNaN; return true;
        case UnaryOperation::IsInf: n.m_Op = EwOp::IsInf; n.m_F0 = 1.0f; n.m_F1 = 1.0f; return true;
        case UnaryOperation::IsPosInf: n.m_Op = EwOp::IsInf; n.m_F0 = 1.0f; n.m_F1 = 0.0f; return true;
        case UnaryOperation::IsNegInf: n.m_Op = EwOp::IsInf; n.m_F0 = 0.0f; n.m_F1 = 1.0f; return true;
        case UnaryOperation::Swish:       // opset 24; no GpuAcc program yet (CpuRef runs it)
        case UnaryOperation::BitwiseNot:  // integers only
            return false;
    }
    return false;
}

bool BinaryOpOf(BinaryOperation op, EwOp& out) {
    switch (op) {
        case BinaryOperation::Add: out = EwOp::Add; return true;
        case BinaryOperation::Sub: out = EwOp::Sub; return true;
        case BinaryOperation::Mul: out = EwOp::Mul; return true;
        case BinaryOperation::Div: out = EwOp::Div; return true;
        case BinaryOperation::Pow: out = EwOp::Pow; return true;
        case BinaryOperation::Maximum: out = EwOp::Max; return true;
        case BinaryOperation::Minimum: out = EwOp::Min; return true;
        case BinaryOperation::Equal: out = EwOp::Equal; return true;
        case BinaryOperation::Less: out = EwOp::Less; return true;
        case BinaryOperation::Greater: out = EwOp::Greater; return true;
        case BinaryOperation::LessOrEqual: out = EwOp::LessEq; return true;
        case BinaryOperation::GreaterOrEqual: out = EwOp::GreaterEq; return true;
        case BinaryOperation::And: out = EwOp::And; return true;
        case BinaryOperation::Or: out = EwOp::Or; return true;
        case BinaryOperation::Xor: out = EwOp::Xor; return true;
        case BinaryOperation::FMod: out = EwOp::FMod; return true;
        default: return false;  // Mod (integer), bit shifts
    }
}

std::vector<float> SmallConstantOf(const ConstTensor& t) {
    std::vector<float> values;
    if (t.GetDataType() != DataType::Float32 || t.GetNumElements() > 64 || !t.GetMemoryArea()) return values;
    values.resize(t.GetNumElements());
    std::memcpy(values.data(), t.GetMemoryArea(), values.size() * sizeof(float));
    return values;
}

bool IsIntegral(DataType t) {
    return t == DataType::Signed32 || t == DataType::Signed64 || t == DataType::Boolean || t == DataType::UInt8 ||
           t == DataType::Signed8;
}

Node MakeNode(LayerType type, const LayerDescriptor& descriptor, const std::string& name,
              const std::vector<TensorInfo>& inputs) {
    Node node;
    node.m_Kind = NodeKindOf(type, descriptor, inputs);
    node.m_LayerType = type;
    node.m_Descriptor = descriptor;
    node.m_Name = name;
    return node;
}

/// Eltwise nodes get their one-op program once their inputs are known.
void FinishNode(Node& node) {
    if (node.m_Kind != NodeKind::Eltwise) return;
    if (node.m_LayerType == LayerType::Cast) {
        node.m_Program.m_Inputs = {node.m_Inputs[0]};
        node.m_Program.m_Nodes = {EwNode{EwOp::Load, 0}};
        node.m_Program.m_Result = 0;
        return;
    }
    if (!EltwiseProgramOf(node.m_LayerType, node.m_Descriptor, node.m_Inputs, node.m_Program)) {
        throw LayerValidationException("GpuAcc: layer '" + node.m_Name + "' has no element-wise form");
    }
}

std::mutex& RegistryMutex() {
    static std::mutex m;
    return m;
}
std::set<const void*>& Registry() {
    static std::set<const void*> s;
    return s;
}

}  // namespace

bool EltwiseProgramOf(LayerType type, const LayerDescriptor& descriptor, const std::vector<int>& inputs,
                      EltwiseProgram& program) {
    program = EltwiseProgram{};
    program.m_Inputs = inputs;
    auto load = [&](int i) {
        program.m_Nodes.push_back(EwNode{EwOp::Load, i});
        return static_cast<int>(program.m_Nodes.size() - 1);
    };
    switch (type) {
        case LayerType::ElementwiseUnary: {
            EwNode n;
            if (!UnaryOpOf(std::get<ElementwiseUnaryDescriptor>(descriptor), n)) return false;
            n.m_A = load(0);
            program.m_Nodes.push_back(n);
            break;
        }
        case LayerType::ElementwiseBinary: {
            EwNode n;
            if (!BinaryOpOf(std::get<ElementwiseBinaryDescriptor>(descriptor).m_Operation, n.m_Op)) return false;
            n.m_A = load(0);
            n.m_B = load(1);
            program.m_Nodes.push_back(n);
            break;
        }
        case LayerType::PRelu: {
            EwNode n{EwOp::PRelu};
            n.m_A = load(0);
            n.m_B = load(1);
            program.m_Nodes.push_back(n);
            break;
        }
        case LayerType::Where: {
            EwNode n{EwOp::Where};
            n.m_A = load(0);
            n.m_B = load(1);
            n.m_C = load(2);
            program.m_Nodes.push_back(n);
            break;
        }
        default: return false;
    }
    program.m_Result = static_cast<int>(program.m_Nodes.size() - 1);
    return true;
}

int AllocateRegisters(const EltwiseProgram& program, std::vector<int>& regs) {
    const int n = static_cast<int>(program.m_Nodes.size());
    std::vector<int> lastUse(static_cast<std::size_t>(n), -1);
    for (int i = 0; i < n; ++i) {
        const EwNode& e = program.m_Nodes[static_cast<std::size_t>(i)];
        if (e.m_Op == EwOp::Load || e.m_Op == EwOp::Imm) continue;
        for (int s : {e.m_A, e.m_B, e.m_C}) {
            if (s >= 0) lastUse[static_cast<std::size_t>(s)] = i;
        }
    }
    if (program.m_Result >= 0) lastUse[static_cast<std::size_t>(program.m_Result)] = n;
    regs.assign(static_cast<std::size_t>(n), -1);
    std::vector<int> freeRegs;
    int used = 0;
    for (int i = 0; i < n; ++i) {
        // Operands whose last reader is this instruction free their registers for its result.
        const EwNode& e = program.m_Nodes[static_cast<std::size_t>(i)];
        if (e.m_Op != EwOp::Load && e.m_Op != EwOp::Imm) {
            for (int s : {e.m_A, e.m_B, e.m_C}) {
                if (s >= 0 && lastUse[static_cast<std::size_t>(s)] == i && regs[static_cast<std::size_t>(s)] >= 0 &&
                    std::find(freeRegs.begin(), freeRegs.end(), regs[static_cast<std::size_t>(s)]) == freeRegs.end()) {
                    freeRegs.push_back(regs[static_cast<std::size_t>(s)]);
                }
            }
        }
        if (!freeRegs.empty()) {
            regs[static_cast<std::size_t>(i)] = freeRegs.back();
            freeRegs.pop_back();
        } else {
            regs[static_cast<std::size_t>(i)] = used++;
        }
        // A result nobody reads is free at once.
        if (lastUse[static_cast<std::size_t>(i)] < 0) freeRegs.push_back(regs[static_cast<std::size_t>(i)]);
    }
    return used;
}

NodeKind NodeKindOf(LayerType type, const LayerDescriptor& descriptor, const std::vector<TensorInfo>& inputs) {
    (void)descriptor;
    switch (type) {
        case LayerType::Convolution: return NodeKind::Conv;
        case LayerType::Gemm:
        case LayerType::MatMul: return NodeKind::MatMul;
        case LayerType::Pooling: return NodeKind::Pool;
        case LayerType::BatchNormalization: return NodeKind::BatchNorm;
        case LayerType::Softmax: return NodeKind::Softmax;
        case LayerType::LayerNormalization:
        case LayerType::RmsNormalization: return NodeKind::LayerNorm;
        case LayerType::Reduce: return NodeKind::Reduce;
        case LayerType::Transpose:
        case LayerType::Slice:
        case LayerType::Expand: return NodeKind::Copy;
        case LayerType::Cast:
            // Integer to integer exactly by the copy kernel; through float (fusable) otherwise.
            return !inputs.empty() && IsIntegral(inputs[0].GetDataType()) ? NodeKind::Copy : NodeKind::Eltwise;
        case LayerType::Concat: return NodeKind::Concat;
        case LayerType::Split: return NodeKind::Split;
        case LayerType::Gather: return NodeKind::Gather;
        case LayerType::Reshape:
        case LayerType::Identity: return NodeKind::Alias;
        case LayerType::Resize:
        case LayerType::Pad:
        case LayerType::Trilu: return NodeKind::Remap;
        case LayerType::ArgMinMax: return NodeKind::Arg;
        case LayerType::Attention: return NodeKind::AttentionOp;
        case LayerType::ConvolutionTranspose: return NodeKind::ConvTranspose;
        default: return NodeKind::Eltwise;
    }
}

std::shared_ptr<RegionGraph> BuildRegionGraph(const SubgraphView& subgraph) {
    auto graph = std::make_shared<RegionGraph>();
    std::map<const IOutputSlot*, int> valueOf;

    // Region inputs: one per boundary input slot (several slots may read one producer).
    const auto& inputs = subgraph.GetInputSlots();
    for (std::size_t k = 0; k < inputs.size(); ++k) {
        const IOutputSlot* src = inputs[k]->GetConnection();
        if (!src) {
            throw LayerValidationException("GpuAcc: input slot " + std::to_string(inputs[k]->GetSlotIndex()) +
                                           " of layer '" + inputs[k]->GetOwningIConnectableLayer().GetName() +
                                           "' is not connected");
        }
        graph->m_InputInfos.push_back(src->GetTensorInfo());
        auto it = valueOf.find(src);
        if (it == valueOf.end()) {
            Value v;
            v.m_Info = src->GetTensorInfo();
            v.m_RegionInput = static_cast<int>(k);
            const IConnectableLayer& producer = src->GetOwningIConnectableLayer();
            if (producer.GetType() == LayerType::Constant) {
                v.m_Constant = true;
                v.m_SmallConstant = SmallConstantOf(std::get<ConstantDescriptor>(producer.GetDescriptor()).m_Tensor);
            }
            graph->m_Values.push_back(std::move(v));
            it = valueOf.emplace(src, static_cast<int>(graph->m_Values.size() - 1)).first;
        }
        graph->m_InputValues.push_back(it->second);
    }

    for (IConnectableLayer* layer : subgraph.GetLayers()) {
        std::vector<TensorInfo> infos;
        std::vector<int> ins;
        for (unsigned int i = 0; i < layer->GetNumInputSlots(); ++i) {
            const IOutputSlot* src = layer->GetInputSlot(i).GetConnection();
            auto it = src ? valueOf.find(src) : valueOf.end();
            if (it == valueOf.end()) {
                throw LayerValidationException("GpuAcc: input " + std::to_string(i) + " of layer '" + layer->GetName() +
                                               "' is neither a region input nor produced inside the region");
            }
            ins.push_back(it->second);
            infos.push_back(src->GetTensorInfo());
        }
        Node node = MakeNode(layer->GetType(), layer->GetDescriptor(), layer->GetName(), infos);
        node.m_Inputs = ins;
        FinishNode(node);
        const int nodeId = static_cast<int>(graph->m_Nodes.size());
        for (unsigned int o = 0; o < layer->GetNumOutputSlots(); ++o) {
            Value v;
            v.m_Info = layer->GetOutputSlot(o).GetTensorInfo();
            v.m_Producer = nodeId;
            graph->m_Values.push_back(std::move(v));
            const int id = static_cast<int>(graph->m_Values.size() - 1);
            valueOf[&layer->GetOutputSlot(o)] = id;
            node.m_Outputs.push_back(id);
        }
        graph->m_Nodes.push_back(std::move(node));
    }
    for (const IOutputSlot* out : subgraph.GetOutputSlots()) {
        auto it = valueOf.find(out);
        if (it == valueOf.end()) throw LayerValidationException("GpuAcc: a region output is not produced inside the region");
        graph->m_OutputValues.push_back(it->second);
        graph->m_OutputInfos.push_back(out->GetTensorInfo());
    }
    FuseRegion(*graph);
    return graph;
}

std::shared_ptr<RegionGraph> BuildSingleLayerGraph(const QueueDescriptor& descriptor, const WorkloadInfo& info) {
    auto graph = std::make_shared<RegionGraph>();
    Node node = MakeNode(descriptor.m_Type, *descriptor.m_Descriptor, descriptor.m_LayerName, info.m_InputTensorInfos);
    for (std::size_t i = 0; i < info.m_InputTensorInfos.size(); ++i) {
        Value v;
        v.m_Info = info.m_InputTensorInfos[i];
        v.m_RegionInput = static_cast<int>(i);
        const ConstTensor* c = i < descriptor.m_ConstantInputs.size() ? descriptor.m_ConstantInputs[i] : nullptr;
        if (c) {
            v.m_Constant = true;
            v.m_SmallConstant = SmallConstantOf(*c);
        }
        graph->m_Values.push_back(std::move(v));
        graph->m_InputValues.push_back(static_cast<int>(i));
        graph->m_InputInfos.push_back(info.m_InputTensorInfos[i]);
        node.m_Inputs.push_back(static_cast<int>(i));
    }
    for (const TensorInfo& t : info.m_OutputTensorInfos) {
        Value v;
        v.m_Info = t;
        v.m_Producer = 0;
        graph->m_Values.push_back(std::move(v));
        const int id = static_cast<int>(graph->m_Values.size() - 1);
        node.m_Outputs.push_back(id);
        graph->m_OutputValues.push_back(id);
        graph->m_OutputInfos.push_back(t);
    }
    FinishNode(node);
    graph->m_Nodes.push_back(std::move(node));
    FuseRegion(*graph);  // a lone Gemm's C becomes its bias or residual
    return graph;
}

RegionObject::RegionObject(std::shared_ptr<RegionGraph> graph) : m_Graph(std::move(graph)) {
    std::lock_guard<std::mutex> lock(RegistryMutex());
    Registry().insert(this);
}

RegionObject::~RegionObject() {
    std::lock_guard<std::mutex> lock(RegistryMutex());
    Registry().erase(this);
}

bool RegionObject::IsRegionObject(const void* object) {
    std::lock_guard<std::mutex> lock(RegistryMutex());
    return object && Registry().count(object) != 0;
}

}  // namespace trellis::gpuacc
