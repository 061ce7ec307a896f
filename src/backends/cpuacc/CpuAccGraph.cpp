// CpuAcc: building the region graph from a sub-graph view (or from one layer).
#include "CpuAccGraph.hpp"

#include "CpuAccSupport.hpp"

#include <trellis/Exceptions.hpp>

#include <oneapi/dnnl/dnnl.hpp>

#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

namespace trellis::cpuacc {

const char* GetNodeKindName(NodeKind kind) {
    switch (kind) {
        case NodeKind::Conv: return "Conv";
        case NodeKind::MatMul: return "MatMul";
        case NodeKind::Pool: return "Pool";
        case NodeKind::Eltwise: return "Eltwise";
        case NodeKind::Erf: return "Erf";
        case NodeKind::Binary: return "Binary";
        case NodeKind::Softmax: return "Softmax";
        case NodeKind::LayerNorm: return "LayerNorm";
        case NodeKind::Concat: return "Concat";
        case NodeKind::Reshape: return "Reshape";
        case NodeKind::Transpose: return "Transpose";
        case NodeKind::Reduce: return "Reduce";
        case NodeKind::Split: return "Split";
        case NodeKind::Slice: return "Slice";
        case NodeKind::Recurrent: return "Recurrent";
        case NodeKind::BatchNorm: return "BatchNorm";
        case NodeKind::Pad: return "Pad";
        case NodeKind::Resize: return "Resize";
        case NodeKind::Attention: return "Attention";
        case NodeKind::Expand: return "Expand";
        case NodeKind::RmsNorm: return "RmsNorm";
        case NodeKind::Quantize: return "Quantize";
        case NodeKind::Dequantize: return "Dequantize";
        case NodeKind::QuantizedAdd: return "QuantizedAdd";
        case NodeKind::ElementwiseChain: return "ElementwiseChain";
        case NodeKind::Where: return "Where";
        case NodeKind::DynamicQuantize: return "DynamicQuantize";
        case NodeKind::Cast: return "Cast";
    }
    return "?";
}

std::vector<int> RegionGraph::Consumers(int v) const {
    std::vector<int> result;
    for (std::size_t n = 0; n < m_Nodes.size(); ++n) {
        const Node& node = m_Nodes[n];
        if (node.m_Dead) continue;
        bool reads = false;
        for (int i : node.m_Inputs) reads = reads || i == v;
        for (const PostOp& p : node.m_PostOps) reads = reads || p.m_Value == v;
        if (reads) result.push_back(static_cast<int>(n));
    }
    return result;
}

bool RegionGraph::TouchesSigned32(const Node& n) const {
    for (const std::vector<int>* values : {&n.m_Inputs, &n.m_Outputs}) {
        for (int v : *values) {
            if (m_Values[static_cast<std::size_t>(v)].m_Info.GetDataType() == DataType::Signed32) return true;
        }
    }
    return false;
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
        std::string key = GetNodeKindName(n.m_Kind);
        if (n.m_Int8 && n.m_Kind == NodeKind::Quantize) key += "+dequantize";
        if (n.m_Int8 && (n.m_Kind == NodeKind::Conv || n.m_Kind == NodeKind::MatMul)) key += "(int8)";
        for (const PostOp& p : n.m_PostOps) key += p.m_Kind == PostOp::Kind::Add ? "+add" : "+eltwise";
        ++counts[key];
    }
    std::ostringstream os;
    os << "CpuAcc region: " << live << " nodes (";
    bool first = true;
    for (const auto& [k, c] : counts) {
        os << (first ? "" : ", ") << k << " x" << c;
        first = false;
    }
    os << ")";
    // The pattern fusions, by kind ("GELU x12, LayerNorm x25").
    std::map<std::string, int> fusions;
    for (const std::string& line : m_FusionLog) {
        const std::size_t colon = line.find(':');
        if (colon != std::string::npos && line.find(' ') > colon) ++fusions[line.substr(0, colon)];
    }
    if (!fusions.empty()) {
        os << ", fused";
        for (const auto& [k, c] : fusions) os << " " << k << " x" << c;
    }
    return os.str();
}

namespace {

std::vector<float> SmallConstantOf(const ConstTensor& t) {
    std::vector<float> values;
    if (t.GetDataType() != DataType::Float32 || t.GetNumElements() == 0 || t.GetNumElements() > 64 ||
        !t.GetMemoryArea()) {
        return values;  // an empty constant has no data to copy (memcpy from or to null is undefined)
    }
    values.resize(t.GetNumElements());
    std::memcpy(values.data(), t.GetMemoryArea(), values.size() * sizeof(float));
    return values;
}

std::shared_ptr<const std::vector<uint8_t>> BooleanConstantOf(const ConstTensor& t) {
    if (t.GetDataType() != DataType::Boolean || t.GetNumElements() == 0 || !t.GetMemoryArea()) return nullptr;
    const auto* p = static_cast<const uint8_t*>(t.GetMemoryArea());
    auto bytes = std::make_shared<std::vector<uint8_t>>(p, p + t.GetNumElements());
    for (uint8_t& b : *bytes) b = b ? 1 : 0;
    return bytes;
}

/// Fills v.m_Int8Values from a constant Float32 tensor that carries the scales of the
/// DequantizeLinear it was folded from (see Value::m_Int8Values), or from a constant Signed32
/// tensor (the centered weights w - w_zero_point of an imported QLinearConv / QLinearMatMul) whose
/// values all fit in a signed byte.
void RecoverInt8Values(Value& v, const ConstTensor& t) {
    const TensorInfo& info = v.m_Info;
    if (info.GetDataType() == DataType::Signed32 && t.GetMemoryArea() && t.GetNumElements() > 0) {
        const auto* w = static_cast<const int32_t*>(t.GetMemoryArea());
        auto q = std::make_shared<std::vector<int8_t>>(t.GetNumElements());
        for (std::size_t i = 0; i < q->size(); ++i) {
            if (w[i] < -128 || w[i] > 127) {
                v.m_Int8Why = "w - w_zero_point leaves [-128, 127] (oneDNN's int8 weights are signed 8-bit)";
                return;
            }
            (*q)[i] = static_cast<int8_t>(w[i]);
        }
        v.m_Int8Values = std::move(q);
        return;
    }
    const std::vector<float>& scales = info.GetQuantizationScales();
    if (info.GetDataType() != DataType::Float32 || scales.empty() || !t.GetMemoryArea()) return;
    const std::size_t count = scales.size();
    std::size_t inner = 1;
    if (count > 1) {
        const std::optional<unsigned int> axis = info.GetQuantizationDim();
        if (!axis || *axis >= info.GetNumDimensions() || info.GetShape()[*axis] != count) {
            v.m_Int8Why = "its per-axis scales do not line up with its shape";
            return;
        }
        for (unsigned int d = *axis + 1; d < info.GetNumDimensions(); ++d) inner *= info.GetShape()[d];
    }
    const float* w = static_cast<const float*>(t.GetMemoryArea());
    auto q = std::make_shared<std::vector<int8_t>>(t.GetNumElements());
    for (std::size_t i = 0; i < q->size(); ++i) {
        const float scale = scales[count == 1 ? 0 : (i / inner) % count];
        if (!(scale > 0.0f) || !std::isfinite(scale)) {
            v.m_Int8Why = "a scale is not positive and finite";
            return;
        }
        const float r = std::nearbyint(w[i] / scale);
        if (r < -128.0f || r > 127.0f) {
            v.m_Int8Why = "q - zero_point leaves [-128, 127] (oneDNN's int8 weights are signed 8-bit)";
            return;
        }
        if (r * scale != w[i]) {
            v.m_Int8Why = "its values are not (q - zero_point) * scale (rewritten after folding)";
            return;
        }
        (*q)[i] = static_cast<int8_t>(r);
    }
    v.m_Int8Values = std::move(q);
}

std::optional<int32_t> IntScalarOf(const ConstTensor& t) {
    if (t.GetNumElements() != 1 || !t.GetMemoryArea()) return std::nullopt;
    if (t.GetDataType() == DataType::UInt8) return *static_cast<const uint8_t*>(t.GetMemoryArea());
    if (t.GetDataType() == DataType::Signed8) return *static_cast<const int8_t*>(t.GetMemoryArea());
    if (t.GetDataType() == DataType::Signed32) return *static_cast<const int32_t*>(t.GetMemoryArea());
    return std::nullopt;
}

Node MakeNode(LayerType type, const LayerDescriptor& descriptor, const std::string& name) {
    Node node;
    node.m_Kind = NodeKindOf(type, descriptor);
    node.m_LayerType = type;
    node.m_Descriptor = descriptor;
    node.m_Name = name;
    if (type == LayerType::ElementwiseUnary && node.m_Kind == NodeKind::Eltwise) {
        node.m_Eltwise = *EltwiseOf(std::get<ElementwiseUnaryDescriptor>(descriptor));
    }
    return node;
}

/// Pow with a constant scalar exponent becomes eltwise pow on the base alone.
void FinishNode(const RegionGraph& graph, Node& node) {
    if (node.m_LayerType != LayerType::ElementwiseBinary || node.m_Kind != NodeKind::Eltwise) return;
    const Value& exponent = graph.m_Values[static_cast<std::size_t>(node.m_Inputs[1])];
    if (exponent.m_SmallConstant.size() != 1) {
        throw LayerValidationException("CpuAcc: Pow '" + node.m_Name + "' needs a constant scalar Float32 exponent");
    }
    node.m_Eltwise = {EltwiseOp{static_cast<int>(dnnl_eltwise_pow), 1.0f, exponent.m_SmallConstant[0]}};
    node.m_Inputs.resize(1);
}

}  // namespace

std::shared_ptr<RegionGraph> BuildRegionGraph(const SubgraphView& subgraph, const FusionOptions& fusions) {
    auto graph = std::make_shared<RegionGraph>();
    std::map<const IOutputSlot*, int> valueOf;

    // Region inputs: one per boundary input slot (several slots may read one producer).
    const auto& inputs = subgraph.GetInputSlots();
    for (std::size_t k = 0; k < inputs.size(); ++k) {
        const IOutputSlot* src = inputs[k]->GetConnection();
        if (!src) {
            throw LayerValidationException("CpuAcc: input slot " + std::to_string(inputs[k]->GetSlotIndex()) + " of layer '" +
                                           inputs[k]->GetOwningIConnectableLayer().GetName() + "' is not connected");
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
                v.m_BooleanConstant = BooleanConstantOf(std::get<ConstantDescriptor>(producer.GetDescriptor()).m_Tensor);
                RecoverInt8Values(v, std::get<ConstantDescriptor>(producer.GetDescriptor()).m_Tensor);
                v.m_IntScalar = IntScalarOf(std::get<ConstantDescriptor>(producer.GetDescriptor()).m_Tensor);
            }
            graph->m_Values.push_back(std::move(v));
            it = valueOf.emplace(src, static_cast<int>(graph->m_Values.size() - 1)).first;
        }
        graph->m_InputValues.push_back(it->second);
    }

    for (IConnectableLayer* layer : subgraph.GetLayers()) {
        Node node = MakeNode(layer->GetType(), layer->GetDescriptor(), layer->GetName());
        for (unsigned int i = 0; i < layer->GetNumInputSlots(); ++i) {
            const IOutputSlot* src = layer->GetInputSlot(i).GetConnection();
            auto it = src ? valueOf.find(src) : valueOf.end();
            if (it == valueOf.end()) {
                throw LayerValidationException("CpuAcc: input " + std::to_string(i) + " of layer '" + layer->GetName() +
                                               "' is neither a region input nor produced inside the region");
            }
            node.m_Inputs.push_back(it->second);
        }
        FinishNode(*graph, node);
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
        if (it == valueOf.end()) throw LayerValidationException("CpuAcc: a region output is not produced inside the region");
        graph->m_OutputValues.push_back(it->second);
        graph->m_OutputInfos.push_back(out->GetTensorInfo());
    }
    FuseRegion(*graph, fusions);
    return graph;
}

std::shared_ptr<RegionGraph> BuildSingleLayerGraph(const QueueDescriptor& descriptor, const WorkloadInfo& info) {
    auto graph = std::make_shared<RegionGraph>();
    Node node = MakeNode(descriptor.m_Type, *descriptor.m_Descriptor, descriptor.m_LayerName);
    for (std::size_t i = 0; i < info.m_InputTensorInfos.size(); ++i) {
        Value v;
        v.m_Info = info.m_InputTensorInfos[i];
        v.m_RegionInput = static_cast<int>(i);
        const ConstTensor* c = i < descriptor.m_ConstantInputs.size() ? descriptor.m_ConstantInputs[i] : nullptr;
        if (c) {
            v.m_Constant = true;
            v.m_SmallConstant = SmallConstantOf(*c);
            v.m_BooleanConstant = BooleanConstantOf(*c);
            RecoverInt8Values(v, *c);
            v.m_IntScalar = IntScalarOf(*c);
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
    FinishNode(*graph, node);
    graph->m_Nodes.push_back(std::move(node));
    FuseRegion(*graph);  // one node: only its own rewrites (x op scalar, c - x, c / x) apply
    return graph;
}

namespace {
std::mutex& RegistryMutex() {
    static std::mutex m;
    return m;
}
std::set<const void*>& Registry() {
    static std::set<const void*> s;
    return s;
}
}  // namespace

void RegisterRegionObject(const void* object) {
    std::lock_guard<std::mutex> lock(RegistryMutex());
    Registry().insert(object);
}
void UnregisterRegionObject(const void* object) {
    std::lock_guard<std::mutex> lock(RegistryMutex());
    Registry().erase(object);
}
bool IsRegionObject(const void* object) {
    std::lock_guard<std::mutex> lock(RegistryMutex());
    return object && Registry().count(object) != 0;
}

}  // namespace trellis::cpuacc
