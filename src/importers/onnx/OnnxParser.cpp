// The ONNX importer's driver: loads the ModelProto, checks the opset, turns initializers into
// constants and graph inputs/outputs into binding layers, then converts the nodes in topological
// order through the converter table (OnnxConverters.cpp).
#include "OnnxConverters.hpp"

#include <algorithm>
#include "OnnxNodeContext.hpp"
#include "OnnxProto.hpp"

#include <trellis/Exceptions.hpp>
#include <trellis/OnnxParser.hpp>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <climits>
#include <filesystem>
#include <fstream>
#include <queue>
#include <set>
#include <unordered_map>

namespace trellis {
namespace onnximport {
namespace {

constexpr int64_t kMinOpset = 1;

/// Parses the model file in chunks (the file is never held in memory whole next to the parsed
/// message: a model's weights would be resident twice, e.g. 680 MB for a 340 MB BERT).
void ParseModelFile(const std::string& path, onnx::ModelProto& model) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) throw FileNotFoundException(path + ": file not found");
    if (!std::filesystem::is_regular_file(path, ec)) throw ParseException(path + ": not a regular file");
    const auto size = std::filesystem::file_size(path, ec);
    if (!ec && size > static_cast<std::uintmax_t>(INT_MAX)) {
        throw ParseException(path + ": the model is larger than 2 GB; protobuf cannot read it (store the weights "
                             "as ONNX external data)");
    }
    std::ifstream file(path, std::ios::binary);
    if (!file) throw ParseException(path + ": cannot open file");
    google::protobuf::io::IstreamInputStream stream(&file, 1 << 20);
    google::protobuf::io::CodedInputStream coded(&stream);
    coded.SetTotalBytesLimit(INT_MAX);  // the default 64 MB limit rejects models such as resnet50
    if (!model.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage()) {
        if (file.bad()) throw ParseException(path + ": reading the file failed");
        throw ParseException(path + ": not a valid ONNX model (protobuf parsing failed: the file is truncated "
                             "or is not an ONNX ModelProto)");
    }
    if (!model.has_graph()) throw ParseException(path + ": not an ONNX model (it has no graph)");
}

void ParseModelProto(const std::string& bytes, const std::string& label, onnx::ModelProto& model) {
    if (bytes.size() > static_cast<std::size_t>(INT_MAX)) {
        throw ParseException(label + ": the model is larger than 2 GB; protobuf cannot read it (store the weights "
                             "as ONNX external data)");
    }
    google::protobuf::io::ArrayInputStream stream(bytes.data(), static_cast<int>(bytes.size()));
    google::protobuf::io::CodedInputStream coded(&stream);
    coded.SetTotalBytesLimit(INT_MAX);  // the default 64 MB limit rejects models such as resnet50
    if (!model.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage()) {
        throw ParseException(label + ": not a valid ONNX model (protobuf parsing failed: the file is truncated "
                             "or is not an ONNX ModelProto)");
    }
    // Arbitrary bytes can happen to parse as a message of unknown fields.
    if (!model.has_graph()) throw ParseException(label + ": not an ONNX model (it has no graph)");
}

int64_t ReadOpset(const onnx::ModelProto& model, const std::string& label) {
    std::optional<int64_t> opset;
    for (const auto& import : model.opset_import()) {
        if (import.domain().empty() || import.domain() == "ai.onnx") opset = import.version();
    }
    if (!opset) throw ParseException(label + ": the model imports no opset of the default ONNX domain");
    const std::string supported = "Trellis reads opsets " + std::to_string(kMinOpset) + " to " +
                                  std::to_string(IOnnxParser::kHighestSupportedOpset) + " of the default ONNX domain";
    if (*opset < kMinOpset) {
        throw ParseException(label + ": opset " + std::to_string(*opset) + " is not supported (" + supported + ")");
    }
    // Refused rather than read with the older forms: an op whose meaning changed after the
    // highest supported opset would otherwise give a wrong answer without a word.
    if (*opset > IOnnxParser::kHighestSupportedOpset) {
        const std::string highest = std::to_string(IOnnxParser::kHighestSupportedOpset);
        throw ParseException(label + ": opset " + std::to_string(*opset) + " is newer than the highest supported "
                             "opset " + highest + " (" + supported + "); convert the model to opset " + highest +
                             " (onnx.version_converter.convert_version) or export it with opset_version=" + highest);
    }
    return *opset;
}

std::string DescribeDims(const onnx::TensorShapeProto& shape) {
    std::string text = "[";
    for (int i = 0; i < shape.dim_size(); ++i) {
        const auto& dim = shape.dim(i);
        text += i ? ", " : "";
        text += dim.has_dim_value() ? std::to_string(dim.dim_value()) : dim.has_dim_param() ? dim.dim_param() : "?";
    }
    return text + "]";
}

DataType ReadElementType(const onnx::ValueInfoProto& value, const std::string& where) {
    if (!value.type().has_tensor_type()) throw ParseException(where + ": only tensor values are supported");
    const int32_t elemType = value.type().tensor_type().elem_type();
    std::optional<DataType> type = FromOnnxDataType(elemType);
    if (!type) {
        throw ParseException(where + ": data type " + OnnxDataTypeName(elemType) + " is not supported by Trellis");
    }
    return *type;
}

// The shape of a graph input: the model's, with the caller's override where given. Dims the
// model leaves symbolic or unknown (and no override pins) are kUnknownDim: the network is then
// dynamic, and each run's input decides them. `dimNames` gets each dim's symbol ("?" for an
// unknown one, "" for a fixed one).
TensorInfo ReadInputInfo(const onnx::ValueInfoProto& input, const IOnnxParser::Options& options,
                         const std::string& label, std::vector<std::string>& dimNames) {
    const std::string& name = input.name();
    const std::string where = label + ": input '" + name + "'";
    const DataType type = ReadElementType(input, where);
    const auto& tensorType = input.type().tensor_type();
    const auto override = options.m_InputShapes.find(name);
    const std::string hint = "; pass --shape " + name + "=AxBxC (Options::m_InputShapes)";

    if (!tensorType.has_shape()) {
        if (override == options.m_InputShapes.end()) throw ParseException(where + ": the model gives no shape" + hint);
        dimNames.assign(override->second.GetNumDimensions(), "");
        return TensorInfo(override->second, type);
    }
    const auto& shape = tensorType.shape();
    dimNames.clear();
    for (int i = 0; i < shape.dim_size(); ++i) {
        const auto& dim = shape.dim(i);
        const bool fixed = dim.has_dim_value() && dim.dim_value() >= 0;
        dimNames.push_back(fixed ? "" : dim.has_dim_param() && !dim.dim_param().empty() ? dim.dim_param() : "?");
    }
    if (override != options.m_InputShapes.end()) {
        const TensorShape& given = override->second;
        if (given.GetNumDimensions() != static_cast<unsigned int>(shape.dim_size())) {
            throw ParseException(where + ": the given shape " + given.ToString() + " has rank " +
                                 std::to_string(given.GetNumDimensions()) + ", the model declares " +
                                 DescribeDims(shape));
        }
        for (int i = 0; i < shape.dim_size(); ++i) {
            const auto& dim = shape.dim(i);
            if (dim.has_dim_value() && dim.dim_value() >= 0 &&
                static_cast<uint64_t>(dim.dim_value()) != given[static_cast<unsigned int>(i)]) {
                throw ParseException(where + ": the given shape " + given.ToString() + " contradicts dim " +
                                     std::to_string(i) + " = " + std::to_string(dim.dim_value()) +
                                     " fixed by the model " + DescribeDims(shape));
            }
        }
        return TensorInfo(given, type);
    }
    std::vector<unsigned int> dims;
    for (int i = 0; i < shape.dim_size(); ++i) {
        const auto& dim = shape.dim(i);
        if (!dim.has_dim_value() || dim.dim_value() < 0) {
            dims.push_back(kUnknownDim);
            continue;
        }
        if (dim.dim_value() >= static_cast<int64_t>(kUnknownDim)) {
            throw ParseException(where + ": dim " + std::to_string(i) + " = " + std::to_string(dim.dim_value()) +
                                 " is too large");
        }
        dims.push_back(static_cast<unsigned int>(dim.dim_value()));
    }
    return TensorInfo(TensorShape(std::move(dims)), type);
}

// A graph output as the model declares it; dims it leaves symbolic or unknown are kUnknownDim.
TensorInfo ReadOutputInfo(const onnx::ValueInfoProto& output, const std::string& label) {
    const DataType type = ReadElementType(output, label + ": output '" + output.name() + "'");
    std::vector<unsigned int> dims;
    for (const auto& dim : output.type().tensor_type().shape().dim()) {
        const bool known = dim.has_dim_value() && dim.dim_value() >= 0 && dim.dim_value() < int64_t{kUnknownDim};
        dims.push_back(known ? static_cast<unsigned int>(dim.dim_value()) : kUnknownDim);
    }
    return TensorInfo(TensorShape(std::move(dims)), type);
}

void AddFreeNames(const onnx::GraphProto& graph, std::set<std::string>& names);

// The outer-scope tensors the subgraphs of `node` (a Loop's body) read: inputs of the node as far
// as the order of the enclosing graph is concerned.
std::set<std::string> ImplicitInputs(const onnx::NodeProto& node) {
    std::set<std::string> names;
    for (const auto& attribute : node.attribute()) {
        if (attribute.has_g()) AddFreeNames(attribute.g(), names);
        for (const auto& graph : attribute.graphs()) AddFreeNames(graph, names);
    }
    return names;
}

// Adds the names `graph` reads (its nodes' inputs, its subgraphs' free names, its outputs) but
// does not define (its inputs, initializers and node outputs).
void AddFreeNames(const onnx::GraphProto& graph, std::set<std::string>& names) {
    std::set<std::string> defined;
    for (const auto& input : graph.input()) defined.insert(input.name());
    for (const auto& initializer : graph.initializer()) defined.insert(initializer.name());
    for (const auto& node : graph.node()) {
        for (const auto& output : node.output()) defined.insert(output);
    }
    auto take = [&](const std::string& name) {
        if (!name.empty() && !defined.count(name)) names.insert(name);
    };
    for (const auto& node : graph.node()) {
        for (const auto& input : node.input()) take(input);
        for (const auto& name : ImplicitInputs(node)) take(name);
    }
    for (const auto& output : graph.output()) take(output.name());
}

std::string NodeDisplayName(const onnx::NodeProto& node, std::size_t index) {
    if (!node.name().empty()) return node.name();
    std::string name = node.op_type() + "_" + std::to_string(index);
    if (node.output_size() > 0 && !node.output(0).empty()) name += "->" + node.output(0);
    return name;
}

// Builds one network from one GraphProto: the model's graph, or a subgraph (a Loop body) read in
// the scope of the graph that holds it.
class NetworkBuilder {
public:
    NetworkBuilder(onnx::GraphProto& graph, std::string label, std::string baseDir, int64_t opset,
                   const IOnnxParser::Options& options)
        : m_Graph(graph), m_Network(INetwork::Create()),
          m_State(*m_Network, std::move(label), std::move(baseDir)), m_Opset(opset), m_Options(options) {}

    NetworkBuilder(onnx::GraphProto& graph, std::string label, OnnxGraphState& parent, LayerBindingId firstOuterBinding,
                   int64_t opset)
        : m_Graph(graph), m_Network(INetwork::Create()),
          m_State(*m_Network, std::move(label), parent, firstOuterBinding),
          m_Opset(opset), m_Options(kNoOptions), m_Subgraph(true) {}

    INetworkPtr Build(std::vector<BindingPointInfo>& inputs, std::vector<BindingPointInfo>& outputs) {
        AddInitializers();
        if (m_Subgraph) {
            AddSubgraphInputs(inputs);
        } else {
            AddInputs(inputs);
        }
        for (const auto& node : m_Graph.node()) {
            for (const auto& name : node.input()) {
                if (!name.empty()) m_State.CountUse(name);
            }
            for (const auto& name : ImplicitInputs(node)) m_State.CountUse(name);
        }
        for (const auto& output : m_Graph.output()) m_State.CountUse(output.name());
        for (std::size_t index : TopologicalOrder()) ConvertNode(index);
        AddOutputs(outputs);
        return std::move(m_Network);
    }

    const OnnxGraphState& State() const { return m_State; }

private:
    static inline const IOnnxParser::Options kNoOptions{};

    // A subgraph's inputs, binding ids in order. Their declared types and shapes are optional (a
    // Loop body often leaves a loop-carried value's out): the optimizer learns them from what
    // feeds them.
    void AddSubgraphInputs(std::vector<BindingPointInfo>& inputs) {
        for (const auto& input : m_Graph.input()) {
            const std::string& name = input.name();
            const std::string where = Label() + ": input '" + name + "'";
            if (m_State.IsDefinedHere(name)) throw ParseException(where + " is defined twice");
            const auto id = static_cast<LayerBindingId>(inputs.size());
            IConnectableLayer* layer = m_Network->AddInputLayer(id, name.c_str());
            TensorInfo info;
            if (input.type().value_case() != onnx::TypeProto::VALUE_NOT_SET) {
                ReadElementType(input, where);  // refuses sequences, optionals and unsupported types
                if (input.type().tensor_type().has_shape()) info = ReadOutputInfo(input, Label());
                // Only a fully known info helps converters that look at an input's type or rank.
                if (info.GetShape().AreAllDimensionsSpecified()) layer->GetOutputSlot(0).SetTensorInfo(info);
            }
            m_State.SetProducer(name, layer->GetOutputSlot(0));
            inputs.push_back(BindingPointInfo{id, info, name, {}});
        }
    }

    const std::string& Label() const { return m_State.FileLabel(); }

    [[noreturn]] void NodeFail(std::size_t index, const std::string& what) {
        const onnx::NodeProto& node = m_Graph.node(static_cast<int>(index));
        OnnxNodeContext(m_State, node, NodeDisplayName(node, index), m_Opset).Fail(what);
    }

    void AddInitializers() {
        if (m_Graph.sparse_initializer_size() > 0) {
            throw ParseException(Label() + ": sparse initializer '" + m_Graph.sparse_initializer(0).values().name() +
                                 "' is not supported");
        }
        for (auto& initializer : *m_Graph.mutable_initializer()) {
            const std::string name = initializer.name();
            const std::string where = Label() + ": initializer '" + name + "'";
            if (name.empty()) throw ParseException(Label() + ": an initializer has no name");
            if (m_State.IsDefined(name)) throw ParseException(where + " is defined twice");
            m_State.AddConstant(name, DecodeTensorProto(initializer, m_State.BaseDir(), where));
        }
    }

    void AddInputs(std::vector<BindingPointInfo>& inputs) {
        for (const auto& input : m_Graph.input()) {
            const std::string& name = input.name();
            if (m_State.FindConstant(name)) continue;  // an initializer listed as input (IR < 4): a constant
            if (m_State.IsDefined(name)) throw ParseException(Label() + ": input '" + name + "' is listed twice");
            std::vector<std::string> dimNames;
            const TensorInfo info = ReadInputInfo(input, m_Options, Label(), dimNames);
            const auto id = static_cast<LayerBindingId>(inputs.size());
            IConnectableLayer* layer = m_Network->AddInputLayer(id, name.c_str());
            layer->GetOutputSlot(0).SetTensorInfo(info);
            m_State.SetProducer(name, layer->GetOutputSlot(0));
            inputs.push_back(BindingPointInfo{id, info, name, std::move(dimNames)});
        }
        for (const auto& [name, shape] : m_Options.m_InputShapes) {
            bool found = false;
            std::string known;
            for (const auto& input : inputs) {
                found = found || input.m_Name == name;
                known += (known.empty() ? "" : ", ") + input.m_Name;
            }
            if (!found) {
                throw ParseException(Label() + ": a shape is given for '" + name + "', but the model has no input of "
                                     "that name (inputs: " + (known.empty() ? "none" : known) + ")");
            }
        }
    }

    // Kahn's algorithm, always taking the lowest ready index, so a sorted graph keeps its order.
    std::vector<std::size_t> TopologicalOrder() {
        const std::size_t n = static_cast<std::size_t>(m_Graph.node_size());
        std::unordered_map<std::string, std::size_t> producer;
        for (std::size_t i = 0; i < n; ++i) {
            for (const auto& name : m_Graph.node(static_cast<int>(i)).output()) {
                if (name.empty()) continue;
                if (m_State.IsDefined(name) || producer.count(name)) {
                    NodeFail(i, "output '" + name + "' is already defined elsewhere in the graph");
                }
                producer[name] = i;
            }
        }
        std::vector<std::size_t> pending(n, 0);
        std::vector<std::vector<std::size_t>> consumers(n);
        for (std::size_t i = 0; i < n; ++i) {
            const onnx::NodeProto& node = m_Graph.node(static_cast<int>(i));
            std::vector<std::string> names(node.input().begin(), node.input().end());
            for (const auto& name : ImplicitInputs(node)) names.push_back(name);
            for (const auto& name : names) {
                if (name.empty() || m_State.IsDefined(name)) continue;
                auto it = producer.find(name);
                if (it == producer.end()) {
                    NodeFail(i, "input '" + name + "' is not produced by any node, graph input or initializer" +
                                    (m_Subgraph ? " (of the subgraph or its enclosing graphs)" : ""));
                }
                if (it->second == i) NodeFail(i, "its subgraph reads '" + name + "', which the node itself produces");
                ++pending[i];
                consumers[it->second].push_back(i);
            }
        }
        std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
        for (std::size_t i = 0; i < n; ++i) {
            if (pending[i] == 0) ready.push(i);
        }
        std::vector<std::size_t> order;
        while (!ready.empty()) {
            const std::size_t i = ready.top();
            ready.pop();
            order.push_back(i);
            for (std::size_t c : consumers[i]) {
                if (--pending[c] == 0) ready.push(c);
            }
        }
        for (std::size_t i = 0; i < n; ++i) {
            if (pending[i] != 0) NodeFail(i, "is part of a cycle: its inputs depend on its own outputs");
        }
        return order;
    }

    void ConvertNode(std::size_t index) {
        const onnx::NodeProto& node = m_Graph.node(static_cast<int>(index));
        OnnxNodeContext ctx(m_State, node, NodeDisplayName(node, index), m_Opset);
        if (!node.domain().empty() && node.domain() != "ai.onnx") {
            throw UnsupportedOperatorException(ctx.Where() + ": domain '" + node.domain() +
                                               "' is not supported (only the default ONNX domain)");
        }
        const OnnxConverterRow* row = FindOnnxConverter(node.op_type());
        if (!row) throw UnsupportedOperatorException(ctx.Where() + ": operator not supported by Trellis");
        if (m_Opset < 7) CheckLegacyForm(ctx);
        row->m_Convert(ctx);
        ctx.CheckAttributesUnderstood();
        for (unsigned int i = 0; i < ctx.NumOutputs(); ++i) {
            if (ctx.IsOutputUsed(i) && !m_State.IsDefined(node.output(static_cast<int>(i)))) {
                ctx.Fail("internal error: the converter did not produce output " + std::to_string(i));
            }
        }
    }

    void AddOutputs(std::vector<BindingPointInfo>& outputs) {
        for (const auto& output : m_Graph.output()) {
            const std::string& name = output.name();
            IOutputSlot* slot = m_State.FindSlot(name);
            if (!slot) {
                throw ParseException(Label() + ": output '" + name +
                                     "' is not produced by any node, graph input or initializer");
            }
            // A subgraph's outputs may leave their type out: the optimizer infers it.
            const bool untyped = m_Subgraph && output.type().value_case() == onnx::TypeProto::VALUE_NOT_SET;
            const TensorInfo info = untyped ? TensorInfo() : ReadOutputInfo(output, Label());
            const auto id = static_cast<LayerBindingId>(outputs.size());
            IConnectableLayer* layer = m_Network->AddOutputLayer(id, name.c_str());
            slot->Connect(layer->GetInputSlot(0));
            outputs.push_back(BindingPointInfo{id, info, name, {}});
        }
    }

    onnx::GraphProto& m_Graph;
    INetworkPtr m_Network;
    OnnxGraphState m_State;
    int64_t m_Opset;
    const IOnnxParser::Options& m_Options;
    bool m_Subgraph = false;
};

class OnnxParserImpl final : public IOnnxParser {
public:
    INetworkPtr CreateNetworkFromBinaryFile(const std::string& path, const Options& options) override {
        Reset();
        onnx::ModelProto model;
        ParseModelFile(path, model);
        std::string baseDir = std::filesystem::path(path).parent_path().string();
        return Build(model, path, baseDir.empty() ? "." : baseDir, options);
    }

    INetworkPtr CreateNetworkFromBinary(const std::string& bytes, const std::string& baseDir,
                                        const Options& options) override {
        Reset();
        onnx::ModelProto model;
        const std::string label = "<in-memory model>";
        ParseModelProto(bytes, label, model);
        return Build(model, label, baseDir.empty() ? "." : baseDir, options);
    }

    const std::vector<BindingPointInfo>& GetInputs() const override { return m_Inputs; }
    const std::vector<BindingPointInfo>& GetOutputs() const override { return m_Outputs; }

    BindingPointInfo GetNetworkInputBindingInfo(const std::string& name) const override {
        return FindBinding(m_Inputs, name, "input");
    }
    BindingPointInfo GetNetworkOutputBindingInfo(const std::string& name) const override {
        return FindBinding(m_Outputs, name, "output");
    }
    int64_t GetOpsetVersion() const override { return m_Opset; }

private:
    void Reset() {
        m_Inputs.clear();
        m_Outputs.clear();
        m_Opset = 0;
    }

    INetworkPtr Build(onnx::ModelProto& model, const std::string& label, const std::string& baseDir,
                      const Options& options) {
        const int64_t opset = ReadOpset(model, label);
        std::vector<BindingPointInfo> inputs;
        std::vector<BindingPointInfo> outputs;
        INetworkPtr network =
            NetworkBuilder(*model.mutable_graph(), label, baseDir, opset, options).Build(inputs, outputs);
        // Only a complete parse replaces the binding tables.
        m_Inputs = std::move(inputs);
        m_Outputs = std::move(outputs);
        m_Opset = opset;
        return network;
    }

    static BindingPointInfo FindBinding(const std::vector<BindingPointInfo>& bindings, const std::string& name,
                                        const char* kind) {
        std::string known;
        for (const auto& binding : bindings) {
            if (binding.m_Name == name) return binding;
            known += (known.empty() ? "" : ", ") + binding.m_Name;
        }
        throw InvalidArgumentException(std::string("IOnnxParser: the model has no ") + kind + " named '" + name +
                                       "' (" + kind + "s: " + (known.empty() ? "none" : known) + ")");
    }

    std::vector<BindingPointInfo> m_Inputs;
    std::vector<BindingPointInfo> m_Outputs;
    int64_t m_Opset = 0;
};

}  // namespace

OnnxSubgraph BuildOnnxSubgraph(const onnx::GraphProto& graph, const std::string& label, OnnxGraphState& parent,
                               LayerBindingId firstOuterBinding, int64_t opset) {
    onnx::GraphProto copy = graph;  // decoding moves initializer data out of the proto
    NetworkBuilder builder(copy, label, parent, firstOuterBinding, opset);
    OnnxSubgraph subgraph;
    subgraph.m_Network = builder.Build(subgraph.m_Inputs, subgraph.m_Outputs);
    subgraph.m_OuterValues = builder.State().OuterValues();
    return subgraph;
}

}  // namespace onnximport

IOnnxParserPtr IOnnxParser::Create() { return std::make_unique<onnximport::OnnxParserImpl>(); }

std::vector<std::string> IOnnxParser::GetSupportedOperators() {
    std::vector<std::string> ops;
    for (const auto& row : onnximport::GetOnnxConverterTable()) ops.emplace_back(row.m_OpType);
    std::sort(ops.begin(), ops.end());
    return ops;
}

}  // namespace trellis
