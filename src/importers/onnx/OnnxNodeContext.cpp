// OnnxGraphState and OnnxNodeContext (see OnnxNodeContext.hpp).
#include "OnnxNodeContext.hpp"

#include <trellis/Exceptions.hpp>

#include <algorithm>
#include <climits>

namespace trellis::onnximport {

const OnnxTensor* OnnxGraphState::FindConstant(const std::string& name) const {
    auto it = m_Constants.find(name);
    if (it != m_Constants.end()) return &it->second;
    // An outer constant, unless this graph's own tensor of that name hides it.
    return m_Parent && !m_Slots.count(name) ? m_Parent->FindConstant(name) : nullptr;
}

IOutputSlot* OnnxGraphState::FindSlot(const std::string& name) {
    if (auto it = m_Slots.find(name); it != m_Slots.end()) return it->second;
    const OnnxTensor* constant = FindConstant(name);
    if (!constant && m_Parent) {
        IOutputSlot* outer = m_Parent->FindSlot(name);
        if (!outer) return nullptr;
        // An outer tensor computed at run time: an input of the subgraph, fed by the node that
        // owns the subgraph (the Loop layer reads it as one of its inputs).
        IConnectableLayer* input = m_Network.AddInputLayer(m_NextOuterBinding++, name.c_str());
        if (outer->IsTensorInfoSet()) input->GetOutputSlot(0).SetTensorInfo(outer->GetTensorInfo());
        m_OuterValues.push_back(name);
        m_Slots[name] = &input->GetOutputSlot(0);
        return m_Slots[name];
    }
    if (!constant) return nullptr;
    // Created on first use so that constants only ever read as parameters cost no layer.
    ConstantDescriptor descriptor{constant->AsConstTensor(), constant->m_Storage};
    IConnectableLayer* layer = m_Network.AddLayer(LayerType::Constant, descriptor, name.c_str(), 0, 1);
    IOutputSlot* slot = &layer->GetOutputSlot(0);
    m_Slots[name] = slot;
    return slot;
}

IOutputSlot& OnnxGraphState::EmptyPlaceholder(DataType type) {
    IOutputSlot*& slot = m_Placeholders[type];
    if (!slot) {
        // Non-null storage although there are no elements: nobody may see a null data pointer.
        auto storage = std::make_shared<uint64_t>(0);
        TensorInfo info(TensorShape({0}), type, 0.0f, 0, /*isConstant=*/true);
        ConstantDescriptor descriptor{ConstTensor(info, storage.get()), storage};
        const std::string name = std::string("omitted_input_") + GetDataTypeName(type);
        slot = &m_Network.AddLayer(LayerType::Constant, descriptor, name.c_str(), 0, 1)->GetOutputSlot(0);
    }
    return *slot;
}

std::string FormatList(const std::vector<int64_t>& values) {
    std::string text = "[";
    for (std::size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + std::to_string(values[i]);
    return text + "]";
}

std::string OnnxNodeContext::Where() const {
    return m_Graph.FileLabel() + ": node '" + m_Name + "' (" + OpType() + ", opset " + std::to_string(m_Opset) + ")";
}

void OnnxNodeContext::Fail(const std::string& what) const { throw ParseException(Where() + ": " + what); }

int OnnxNodeContext::ToInt(int64_t value, const std::string& what) const {
    if (value < INT_MIN || value > INT_MAX) Fail(what + "=" + std::to_string(value) + " is out of range");
    return static_cast<int>(value);
}

std::vector<unsigned int> OnnxNodeContext::ToUnsigned(const std::vector<int64_t>& values, const std::string& what,
                                                      int64_t minimum) const {
    std::vector<unsigned int> out;
    for (int64_t v : values) {
        if (v < minimum || v > static_cast<int64_t>(UINT_MAX)) {
            Fail(what + "=" + FormatList(values) + ": every value must be >= " + std::to_string(minimum));
        }
        out.push_back(static_cast<unsigned int>(v));
    }
    return out;
}

const onnx::AttributeProto* OnnxNodeContext::FindAttribute(const std::string& name) {
    for (const auto& attribute : m_Node.attribute()) {
        if (attribute.name() == name) {
            m_Understood.insert(name);
            return &attribute;
        }
    }
    return nullptr;
}

const onnx::AttributeProto* OnnxNodeContext::Lookup(const std::string& name, int expectedType, const char* typeName) {
    const onnx::AttributeProto* attribute = FindAttribute(name);
    // Very old exporters leave `type` unset; then the value field alone tells.
    if (attribute && attribute->type() != expectedType &&
        attribute->type() != onnx::AttributeProto_AttributeType_UNDEFINED) {
        Fail("attribute '" + name + "' must be " + typeName + ", got " +
             onnx::AttributeProto_AttributeType_Name(attribute->type()));
    }
    return attribute;
}

std::optional<int64_t> OnnxNodeContext::FindInt(const std::string& name) {
    const auto* a = Lookup(name, onnx::AttributeProto_AttributeType_INT, "INT");
    return a ? std::optional<int64_t>(a->i()) : std::nullopt;
}

int64_t OnnxNodeContext::GetInt(const std::string& name, int64_t defaultValue) {
    return FindInt(name).value_or(defaultValue);
}

int64_t OnnxNodeContext::GetRequiredInt(const std::string& name) {
    std::optional<int64_t> value = FindInt(name);
    if (!value) Fail("required attribute '" + name + "' is missing");
    return *value;
}

bool OnnxNodeContext::GetBool(const std::string& name, bool defaultValue) {
    const int64_t value = GetInt(name, defaultValue ? 1 : 0);
    if (value != 0 && value != 1) Fail("attribute " + name + "=" + std::to_string(value) + " must be 0 or 1");
    return value == 1;
}

std::optional<float> OnnxNodeContext::FindFloat(const std::string& name) {
    const auto* a = Lookup(name, onnx::AttributeProto_AttributeType_FLOAT, "FLOAT");
    return a ? std::optional<float>(a->f()) : std::nullopt;
}

float OnnxNodeContext::GetFloat(const std::string& name, float defaultValue) {
    return FindFloat(name).value_or(defaultValue);
}

std::optional<std::string> OnnxNodeContext::FindString(const std::string& name) {
    const auto* a = Lookup(name, onnx::AttributeProto_AttributeType_STRING, "STRING");
    return a ? std::optional<std::string>(a->s()) : std::nullopt;
}

std::string OnnxNodeContext::GetString(const std::string& name, const std::string& defaultValue) {
    return FindString(name).value_or(defaultValue);
}

std::optional<std::vector<int64_t>> OnnxNodeContext::FindInts(const std::string& name) {
    const auto* a = Lookup(name, onnx::AttributeProto_AttributeType_INTS, "INTS");
    if (!a) return std::nullopt;
    return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

std::vector<int64_t> OnnxNodeContext::GetInts(const std::string& name) {
    return FindInts(name).value_or(std::vector<int64_t>{});
}

std::optional<std::vector<float>> OnnxNodeContext::FindFloats(const std::string& name) {
    const auto* a = Lookup(name, onnx::AttributeProto_AttributeType_FLOATS, "FLOATS");
    if (!a) return std::nullopt;
    return std::vector<float>(a->floats().begin(), a->floats().end());
}

std::optional<OnnxTensor> OnnxNodeContext::FindTensor(const std::string& name) {
    const auto* a = Lookup(name, onnx::AttributeProto_AttributeType_TENSOR, "TENSOR");
    if (!a) return std::nullopt;
    onnx::TensorProto copy = a->t();  // decoding moves raw_data out; the node stays intact
    return DecodeTensorProto(copy, m_Graph.BaseDir(), Where() + ": attribute '" + name + "'");
}

void OnnxNodeContext::IgnoreAttributes(std::initializer_list<const char*> names) {
    for (const char* name : names) m_Understood.insert(name);
}

void OnnxNodeContext::CheckAttributesUnderstood() const {
    for (const auto& attribute : m_Node.attribute()) {
        if (!m_Understood.count(attribute.name())) {
            Fail("attribute '" + attribute.name() + "' is not supported by Trellis");
        }
    }
}

void OnnxNodeContext::ExpectInputs(unsigned int min, unsigned int max) const {
    if (NumInputs() < min || NumInputs() > max) {
        Fail("has " + std::to_string(NumInputs()) + " inputs, expected " +
             (min == max ? std::to_string(min) : std::to_string(min) + " to " + std::to_string(max)));
    }
    for (unsigned int i = 0; i < min; ++i) {
        if (!HasInput(i)) Fail("input " + std::to_string(i) + " is required but omitted");
    }
}

void OnnxNodeContext::ExpectOutputs(unsigned int min, unsigned int max) const {
    if (NumOutputs() < min || NumOutputs() > max) {
        Fail("has " + std::to_string(NumOutputs()) + " outputs, expected " +
             (min == max ? std::to_string(min) : std::to_string(min) + " to " + std::to_string(max)));
    }
}

const OnnxTensor* OnnxNodeContext::ConstantInput(unsigned int i) const {
    return HasInput(i) ? m_Graph.FindConstant(InputName(i)) : nullptr;
}

bool OnnxNodeContext::InputsConstant(unsigned int first) const {
    for (unsigned int i = first; i < NumInputs(); ++i) {
        if (HasInput(i) && !ConstantInput(i)) return false;
    }
    return true;
}

std::vector<int64_t> OnnxNodeContext::ConstInts(unsigned int i, const char* what) const {
    const OnnxTensor* constant = ConstantInput(i);
    if (!constant) Fail("input " + std::to_string(i) + " (" + what + ") must be a constant");
    std::optional<std::vector<int64_t>> values = constant->AsInts();
    if (!values) {
        Fail("input " + std::to_string(i) + " (" + what + ") must be an integer tensor, got " +
             GetDataTypeName(constant->m_Info.GetDataType()));
    }
    return std::move(*values);
}

std::vector<double> OnnxNodeContext::ConstDoubles(unsigned int i, const char* what) const {
    const OnnxTensor* constant = ConstantInput(i);
    if (!constant) Fail("input " + std::to_string(i) + " (" + what + ") must be a constant");
    return constant->AsDoubles();
}

IOutputSlot& OnnxNodeContext::InputSlot(unsigned int i) {
    if (!HasInput(i)) Fail("input " + std::to_string(i) + " is required but omitted");
    IOutputSlot* slot = m_Graph.FindSlot(InputName(i));
    if (!slot) Fail("input '" + InputName(i) + "' is not produced by any node, graph input or initializer");
    return *slot;
}

bool OnnxNodeContext::IsOutputUsed(unsigned int i) const {
    return i < NumOutputs() && !m_Node.output(static_cast<int>(i)).empty() &&
           m_Graph.IsUsed(m_Node.output(static_cast<int>(i)));
}

void OnnxNodeContext::RejectUsedOutputs(unsigned int first, const std::string& why) const {
    for (unsigned int i = first; i < NumOutputs(); ++i) {
        if (IsOutputUsed(i)) {
            Fail("output " + std::to_string(i) + " ('" + m_Node.output(static_cast<int>(i)) + "') " + why);
        }
    }
}

IConnectableLayer* OnnxNodeContext::AddLayer(LayerType type, const LayerDescriptor& descriptor,
                                             const std::vector<IOutputSlot*>& inputs, int numOutputs,
                                             const std::string& suffix) {
    const std::string name = m_Name + suffix;
    IConnectableLayer* layer = nullptr;
    try {
        layer = m_Graph.Network().AddLayer(type, descriptor, name.c_str(), static_cast<int>(inputs.size()), numOutputs);
        for (std::size_t i = 0; i < inputs.size(); ++i) {
            inputs[i]->Connect(layer->GetInputSlot(static_cast<unsigned int>(i)));
        }
    } catch (const ParseException&) {
        throw;
    } catch (const Exception& e) {
        Fail(std::string("cannot add ") + GetLayerTypeName(type) + " layer: " + e.what());
    }
    return layer;
}

IConnectableLayer* OnnxNodeContext::AddNodeLayer(LayerType type, const LayerDescriptor& descriptor,
                                                 unsigned int numSlots, DataType placeholderType, int numOutputs) {
    std::vector<IOutputSlot*> inputs;
    for (unsigned int i = 0; i < numSlots; ++i) {
        inputs.push_back(HasInput(i) ? &InputSlot(i) : &m_Graph.EmptyPlaceholder(placeholderType));
    }
    IConnectableLayer* layer = AddLayer(type, descriptor, inputs, numOutputs);
    const unsigned int count = std::min(layer->GetNumOutputSlots(), NumOutputs());
    for (unsigned int i = 0; i < count; ++i) SetOutput(i, layer->GetOutputSlot(i));
    return layer;
}

unsigned int OnnxNodeContext::ParamSlots(unsigned int firstParam) const {
    if (InputsConstant(firstParam)) return firstParam;
    unsigned int slots = firstParam;
    for (unsigned int i = firstParam; i < NumInputs(); ++i) {
        if (HasInput(i)) slots = i + 1;
    }
    return slots;
}

void OnnxNodeContext::SetOutput(unsigned int i, IOutputSlot& slot) {
    const std::string& name = m_Node.output(static_cast<int>(i));
    if (name.empty()) return;
    if (m_Graph.IsDefined(name)) Fail("output '" + name + "' is already defined elsewhere in the graph");
    m_Graph.SetProducer(name, slot);
}

}  // namespace trellis::onnximport
