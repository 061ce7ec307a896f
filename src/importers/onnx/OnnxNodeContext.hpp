// Internal: what an ONNX converter sees while it turns one node into Trellis layers.
//
// OnnxGraphState holds the tensors of the model being imported: the output slot that carries
// each named tensor (graph inputs, node outputs) and the constants (initializers, Constant
// nodes). A constant used as a *data* input becomes one Constant layer, created on first use and
// shared by every consumer. A constant *parameter* input (a Reshape's shape, a Slice's starts...)
// is read by the converter and folded into the descriptor instead: no layer, no input slot.
//
// OnnxNodeContext wraps one node. Converters read attributes through it (each read marks the
// attribute as understood; the driver then rejects any attribute nobody read, so a new or unknown
// attribute is an error rather than silently ignored), look up inputs, add layers and register
// the node's outputs. Every error goes through Fail(), which formats
//   "<file>: node '<name>' (<OpType>, opset <N>): <what is wrong>".
#pragma once

#include "OnnxProto.hpp"
#include "OnnxTensor.hpp"

#include <trellis/INetwork.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace trellis::onnximport {

/// "[1, 2, 3]", for messages.
std::string FormatList(const std::vector<int64_t>& values);

class OnnxGraphState {
public:
    OnnxGraphState(INetwork& network, std::string fileLabel, std::string baseDir)
        : m_Network(network), m_FileLabel(std::move(fileLabel)), m_BaseDir(std::move(baseDir)) {}
    /// The state of a subgraph (a Loop body) built into `network`: a name the subgraph does not
    /// define is looked up in `parent` (ONNX's outer scope). An outer constant is shared (read as
    /// a parameter, or a Constant layer of this network); any other outer tensor becomes an Input
    /// layer of this network, with binding ids from `firstOuterBinding` on (see OuterValues()).
    /// `label` starts its messages ("model.onnx: node 'loop' (Loop, opset 11) body").
    OnnxGraphState(INetwork& network, std::string label, OnnxGraphState& parent, LayerBindingId firstOuterBinding)
        : m_Network(network), m_FileLabel(std::move(label)), m_BaseDir(parent.m_BaseDir), m_Parent(&parent),
          m_NextOuterBinding(firstOuterBinding) {}

    INetwork& Network() { return m_Network; }
    const std::string& FileLabel() const { return m_FileLabel; }
    const std::string& BaseDir() const { return m_BaseDir; }

    /// True when `name` is already a known tensor (produced or constant), here or in an outer scope.
    bool IsDefined(const std::string& name) const {
        return m_Slots.count(name) || m_Constants.count(name) || (m_Parent && m_Parent->IsDefined(name));
    }
    /// True when `name` is defined by this graph itself (not an outer scope).
    bool IsDefinedHere(const std::string& name) const { return m_Slots.count(name) || m_Constants.count(name); }
    /// Registers the slot that carries tensor `name` (the caller checked it is not yet defined).
    void SetProducer(const std::string& name, IOutputSlot& slot) { m_Slots[name] = &slot; }
    void AddConstant(const std::string& name, OnnxTensor tensor) { m_Constants[name] = std::move(tensor); }
    const OnnxTensor* FindConstant(const std::string& name) const;
    /// The slot carrying `name`; for a constant, its Constant layer (created on first use); for
    /// a subgraph's outer tensor, its Input layer (created on first use). nullptr when `name` is
    /// unknown.
    IOutputSlot* FindSlot(const std::string& name);
    /// A subgraph's outer tensors, in the order of their binding ids.
    const std::vector<std::string>& OuterValues() const { return m_OuterValues; }
    /// A 0-element Constant of `type`: stands for an omitted optional input in the middle of a
    /// layer's inputs (the core's InferContext::HasInput() reports it as absent).
    IOutputSlot& EmptyPlaceholder(DataType type);

    /// How many node inputs and graph outputs read tensor `name` (counted before conversion).
    void CountUse(const std::string& name) { ++m_Uses[name]; }
    bool IsUsed(const std::string& name) const { return m_Uses.count(name) != 0; }

private:
    INetwork& m_Network;
    std::string m_FileLabel;
    std::string m_BaseDir;
    std::unordered_map<std::string, IOutputSlot*> m_Slots;
    std::unordered_map<std::string, OnnxTensor> m_Constants;
    std::unordered_map<std::string, unsigned int> m_Uses;
    std::map<DataType, IOutputSlot*> m_Placeholders;
    OnnxGraphState* m_Parent = nullptr;
    LayerBindingId m_NextOuterBinding = 0;
    std::vector<std::string> m_OuterValues;
};

class OnnxNodeContext {
public:
    OnnxNodeContext(OnnxGraphState& graph, const onnx::NodeProto& node, std::string displayName, int64_t opset)
        : m_Graph(graph), m_Node(node), m_Name(std::move(displayName)), m_Opset(opset) {}

    const onnx::NodeProto& Node() const { return m_Node; }
    const std::string& OpType() const { return m_Node.op_type(); }
    const std::string& Name() const { return m_Name; }
    int64_t Opset() const { return m_Opset; }
    OnnxGraphState& Graph() { return m_Graph; }

    /// "<file>: node '<name>' (<OpType>, opset <N>)", the start of every message about this node.
    std::string Where() const;
    [[noreturn]] void Fail(const std::string& what) const;

    // ---- Attributes. Readers fail when the attribute has the wrong type. ----
    const onnx::AttributeProto* FindAttribute(const std::string& name);
    std::optional<int64_t> FindInt(const std::string& name);
    int64_t GetInt(const std::string& name, int64_t defaultValue);
    int64_t GetRequiredInt(const std::string& name);
    /// An INT attribute that must be 0 or 1.
    bool GetBool(const std::string& name, bool defaultValue);
    std::optional<float> FindFloat(const std::string& name);
    float GetFloat(const std::string& name, float defaultValue);
    std::optional<std::string> FindString(const std::string& name);
    std::string GetString(const std::string& name, const std::string& defaultValue);
    std::optional<std::vector<int64_t>> FindInts(const std::string& name);
    /// INTS attribute; empty when absent.
    std::vector<int64_t> GetInts(const std::string& name);
    std::optional<std::vector<float>> FindFloats(const std::string& name);
    /// TENSOR attribute, decoded; std::nullopt when absent.
    std::optional<OnnxTensor> FindTensor(const std::string& name);
    /// Marks attributes as understood without using them (they cannot change inference results).
    void IgnoreAttributes(std::initializer_list<const char*> names);
    /// Fails naming the first attribute no reader asked for.
    void CheckAttributesUnderstood() const;

    // ---- Checked conversions of attribute or input values; `what` names the value in errors. ----
    int ToInt(int64_t value, const std::string& what) const;
    /// Every value must be >= `minimum` and fit unsigned int.
    std::vector<unsigned int> ToUnsigned(const std::vector<int64_t>& values, const std::string& what,
                                         int64_t minimum) const;

    // ---- Inputs. Index i is the node's i-th input; "" (or past the end) means omitted. ----
    unsigned int NumInputs() const { return static_cast<unsigned int>(m_Node.input_size()); }
    bool HasInput(unsigned int i) const { return i < NumInputs() && !m_Node.input(static_cast<int>(i)).empty(); }
    const std::string& InputName(unsigned int i) const { return m_Node.input(static_cast<int>(i)); }
    /// Fails unless the node has between min and max inputs (counting omitted ones) and the first
    /// `min` are present.
    void ExpectInputs(unsigned int min, unsigned int max) const;
    void ExpectOutputs(unsigned int min, unsigned int max) const;
    /// The value of input i when it is a constant (initializer or Constant node), else nullptr.
    const OnnxTensor* ConstantInput(unsigned int i) const;
    /// True when every present input from `first` on is a constant.
    bool InputsConstant(unsigned int first) const;
    /// Values of constant integer input i (fails if it is not constant or not an integer type).
    std::vector<int64_t> ConstInts(unsigned int i, const char* what) const;
    std::vector<double> ConstDoubles(unsigned int i, const char* what) const;
    /// The slot carrying data input i (a Constant layer for a constant).
    IOutputSlot& InputSlot(unsigned int i);

    // ---- Outputs ----
    unsigned int NumOutputs() const { return static_cast<unsigned int>(m_Node.output_size()); }
    /// True when output i exists, is named and something reads it (a node or a graph output).
    bool IsOutputUsed(unsigned int i) const;
    /// Fails when any output from `first` on is used; `why` completes "output <i> ('<name>') <why>".
    void RejectUsedOutputs(unsigned int first, const std::string& why) const;

    // ---- Layers ----
    /// Adds a layer named after the node (plus `suffix`), connected to `inputs`.
    IConnectableLayer* AddLayer(LayerType type, const LayerDescriptor& descriptor,
                                const std::vector<IOutputSlot*>& inputs, int numOutputs = -1,
                                const std::string& suffix = "");
    /// Adds the layer for the whole node: slots 0..numSlots-1 take node inputs 0..numSlots-1
    /// (omitted ones a 0-element placeholder of `placeholderType`); every named node output is
    /// registered as the matching layer output.
    /// `numOutputs` = -1 takes the op table's output count; node outputs past the layer's are
    /// left unregistered (the converter has rejected any that are used).
    IConnectableLayer* AddNodeLayer(LayerType type, const LayerDescriptor& descriptor, unsigned int numSlots,
                                    DataType placeholderType = DataType::Signed64, int numOutputs = -1);
    /// How many slots a layer needs whose node inputs from `firstParam` on are parameter inputs:
    /// `firstParam` when all present ones are constant (the converter folds them into the
    /// descriptor), else up to the last present input (the core reads them after folding).
    unsigned int ParamSlots(unsigned int firstParam) const;
    /// Registers layer output `slot` as node output i (skipped when the output is unnamed).
    void SetOutput(unsigned int i, IOutputSlot& slot);

private:
    const onnx::AttributeProto* Lookup(const std::string& name, int expectedType, const char* typeName);

    OnnxGraphState& m_Graph;
    const onnx::NodeProto& m_Node;
    std::string m_Name;
    int64_t m_Opset;
    std::set<std::string> m_Understood;
};

}  // namespace trellis::onnximport
