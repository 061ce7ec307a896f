#include "SoftOpGenerator.hpp"

#include "../../ArtifactTarget.hpp"

#include <RefKernelTable.hpp>

#include <trellis/Exceptions.hpp>

#include <cctype>

namespace trellis::codegen::soft {

namespace {

bool IsView(const GraphLayer& l) {
    const LayerType t = l.m_Layer->GetType();
    return (t == LayerType::Reshape || t == LayerType::Identity) && l.m_Inputs.size() == 1 && l.m_Outputs.size() == 1;
}

std::string LowerFirst(std::string s) {
    if (!s.empty()) s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
    return s;
}

}  // namespace

// ---- SoftLayer ----------------------------------------------------------------------------------

ArtifactExprPtr SoftLayer::In(unsigned int i) const { return m_Gen.Pointer(m_Layer.m_Inputs.at(i), false, false); }
ArtifactExprPtr SoftLayer::Out(unsigned int i) const { return m_Gen.Pointer(m_Layer.m_Outputs.at(i), true, false); }
ArtifactExprPtr SoftLayer::InRaw(unsigned int i) const { return m_Gen.Pointer(m_Layer.m_Inputs.at(i), false, true); }
ArtifactExprPtr SoftLayer::OutRaw(unsigned int i) const { return m_Gen.Pointer(m_Layer.m_Outputs.at(i), true, true); }

ArtifactExprPtr SoftLayer::Workspace(std::size_t bytes) const {
    if (bytes == 0) return ArtifactFactory::Lit("nullptr");
    const int buffer = m_Gen.Plan().AddBuffer(bytes, m_Index, m_Index);
    return m_Gen.ArenaPointer(buffer, "void*");
}

void SoftLayer::Use(const std::string& name) const { m_Gen.UseSnippet("kernels/" + name + ".hpp"); }

ArtifactExprPtr SoftLayer::Configure(const std::string& typeName, ArtifactExprPtr value) const {
    const std::string member =
        m_Gen.UniqueId(LowerFirst(GetLayerTypeName(m_Layer.m_Layer->GetType())) + "_" + std::to_string(m_Gen.m_NumConfigured++));
    ArtifactExprPtr ref = m_Gen.AddLayerMember(typeName, member);
    m_Gen.Configure().AddAssign(ref, std::move(value));
    return ref;
}

void SoftLayer::Call(const std::string& function, std::vector<ArtifactExprPtr> args) const {
    m_Gen.Inference().AddCall(function, std::move(args));
}

// ---- SoftOpGenerator ----------------------------------------------------------------------------

SoftOpGenerator::SoftOpGenerator(const ArtifactGraph& graph, const ArtifactOptions& options)
    : ArtifactOpGenerator(graph, options, "soft") {}

int SoftOpGenerator::Root(int tensor) const {
    while (m_Storage[static_cast<std::size_t>(tensor)].m_Kind == Storage::Kind::Alias) {
        tensor = m_Storage[static_cast<std::size_t>(tensor)].m_Index;
    }
    return tensor;
}

ArtifactExprPtr SoftOpGenerator::Pointer(int tensor, bool writable, bool raw) {
    const int root = Root(tensor);
    const Storage& s = m_Storage[static_cast<std::size_t>(root)];
    const DataType type = m_Graph.GetTensor(tensor).m_Info.GetDataType();
    const std::string element = raw ? "void" : CppType(type);
    const std::string pointer = (writable ? "" : "const ") + element + "*";
    switch (s.m_Kind) {
        case Storage::Kind::Input: return InputPointer(s.m_Index, pointer);
        case Storage::Kind::Output: return OutputPointer(s.m_Index, pointer);
        case Storage::Kind::Weight: return WeightPointer(root, pointer);
        case Storage::Kind::Arena: return ArenaPointer(s.m_Index, pointer);
        default: break;
    }
    throw InvalidArgumentException("code generator (soft): tensor '" + m_Graph.GetTensor(tensor).m_Name +
                                   "' is read before it is computed");
}

void SoftOpGenerator::Begin() {
    // Storage: inputs and outputs are the interface tensors, constants the weights file, views
    // their source, everything else an arena buffer live from its producer to its last reader.
    const auto& tensors = m_Graph.GetTensors();
    const auto& layers = m_Graph.GetLayers();
    m_Storage.assign(tensors.size(), {});
    for (std::size_t t = 0; t < tensors.size(); ++t) {
        const GraphTensor& g = tensors[t];
        if (g.m_Input >= 0) m_Storage[t] = {Storage::Kind::Input, g.m_Input};
        else if (g.m_Constant) m_Storage[t] = {Storage::Kind::Weight, static_cast<int>(t)};
    }
    for (const GraphLayer& l : layers) {
        if (IsView(l)) m_Storage[static_cast<std::size_t>(l.m_Outputs[0])] = {Storage::Kind::Alias, l.m_Inputs[0]};
    }
    // An output is written by its producer straight into the output tensor; so is the source of
    // an output that is a view (the view then needs no copy).
    for (std::size_t o = 0; o < m_Graph.GetOutputs().size(); ++o) {
        const int root = Root(m_Graph.GetOutputs()[o].m_Tensor);
        Storage& s = m_Storage[static_cast<std::size_t>(root)];
        if (s.m_Kind == Storage::Kind::None && tensors[static_cast<std::size_t>(root)].m_Producer >= 0) {
            s = {Storage::Kind::Output, static_cast<int>(o)};
        }
    }
    for (std::size_t i = 0; i < layers.size(); ++i) {
        const GraphLayer& l = layers[i];
        for (int t : l.m_Outputs) {
            Storage& s = m_Storage[static_cast<std::size_t>(t)];
            if (s.m_Kind != Storage::Kind::None) continue;
            s = {Storage::Kind::Arena,
                 Plan().AddBuffer(tensors[static_cast<std::size_t>(t)].m_Info.GetNumBytes(), static_cast<int>(i), static_cast<int>(i))};
        }
        for (int t : l.m_Inputs) {
            const Storage& s = m_Storage[static_cast<std::size_t>(Root(t))];
            if (s.m_Kind == Storage::Kind::Arena) Plan().Touch(s.m_Index, static_cast<int>(i));
        }
    }
}

void SoftOpGenerator::VisitLayer(const GraphLayer& layer, int index) {
    Inference().AddComment(layer.Describe());
    if (IsView(layer)) {
        Inference().AddComment("(a view of its input: nothing to compute)");
        return;
    }
    const SoftOpRow* row = FindSoftOp(layer.m_Layer->GetType());
    if (!row) {
        throw InvalidArgumentException("code generator (soft): no emitter for " + layer.Describe());
    }
    row->m_Emit(SoftLayer(*this, layer, index));
}

void SoftOpGenerator::Finish() {
    // Outputs not written by their producer: copied in.
    for (std::size_t o = 0; o < m_Graph.GetOutputs().size(); ++o) {
        const int t = m_Graph.GetOutputs()[o].m_Tensor;
        const Storage& s = m_Storage[static_cast<std::size_t>(Root(t))];
        if (s.m_Kind == Storage::Kind::Output && s.m_Index == static_cast<int>(o)) continue;
        Module().AddSourceInclude("cstring");
        Inference().AddComment("output '" + m_Graph.GetOutputs()[o].m_Name + "': a copy of " +
                               (s.m_Kind == Storage::Kind::Input    ? "an input"
                                : s.m_Kind == Storage::Kind::Weight ? "a constant"
                                                                    : "another output"));
        Inference().AddCall("std::memcpy", {OutputPointer(static_cast<int>(o), "void*"), Pointer(t, false, true),
                                            F::Size(m_Graph.GetTensor(t).m_Info.GetNumBytes())});
    }
    // The interface tensors point at their own arena buffers (inputs and outputs live throughout).
    const int end = static_cast<int>(m_Graph.GetLayers().size());
    const auto own = [&](const std::string& member, const TensorInfo& info) {
        const int buffer = Plan().AddBuffer(info.GetNumBytes(), 0, end);
        Allocate().AddAssign(F::Id(member + ".data"), ArenaPointer(buffer, "void*"));
    };
    for (std::size_t i = 0; i < m_Graph.GetInputs().size(); ++i) {
        own(InputMember(static_cast<int>(i)), m_Graph.GetTensor(m_Graph.GetInputs()[i]).m_Info);
    }
    for (std::size_t o = 0; o < m_Graph.GetOutputs().size(); ++o) {
        own(OutputMember(static_cast<int>(o)), m_Graph.GetTensor(m_Graph.GetOutputs()[o].m_Tensor).m_Info);
    }
}

// ---- the target ---------------------------------------------------------------------------------

namespace {

class SoftTarget final : public ArtifactTarget {
public:
    const char* GetName() const override { return "soft"; }

    bool IsLayerSupported(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) const override {
        const auto refuse = [&](const std::string& why) {
            if (reason) *reason = why;
            return false;
        };
        const SoftOpRow* row = FindSoftOp(layer.m_Type);
        const bool view = layer.m_Type == LayerType::Reshape || layer.m_Type == LayerType::Identity;
        if (!row && !view) {
            return refuse(std::string(GetLayerTypeName(layer.m_Type)) + ": the soft target has no kernel for this op");
        }
        for (const auto* infos : {&info.m_InputTensorInfos, &info.m_OutputTensorInfos}) {
            for (const TensorInfo& t : *infos) {
                if (!t.GetShape().AreAllDimensionsSpecified()) {
                    return refuse(std::string(GetLayerTypeName(layer.m_Type)) + ": shape " + t.GetShape().ToString() +
                                  " is not static (pin the input dims with --shape)");
                }
                if (t.IsQuantized() || t.GetDataType() == DataType::Float16 || t.GetDataType() == DataType::BFloat16) {
                    return refuse(std::string(GetLayerTypeName(layer.m_Type)) + ": data type " +
                                  GetDataTypeName(t.GetDataType()) + " (the soft target runs float32 networks: Float32, "
                                  "with integer and Boolean index, mask and shape tensors)");
                }
            }
        }
        const ref::RefKernelRow* kernel = ref::FindRefKernel(layer.m_Type);
        std::string why;
        if (!kernel || !kernel->m_Support(layer, info, &why)) {
            return refuse(kernel ? why : std::string(GetLayerTypeName(layer.m_Type)) + ": no CpuRef kernel");
        }
        if (row && row->m_Support && !row->m_Support(layer, info, reason)) return false;
        return true;
    }

    std::unique_ptr<ArtifactOpGenerator> CreateOpGenerator(const ArtifactGraph& graph,
                                                           const ArtifactOptions& options) const override {
        return std::make_unique<SoftOpGenerator>(graph, options);
    }

    std::string GetCMakeDependencies(const std::string&) const override { return ""; }
    std::vector<std::string> GetCompilerArguments() const override { return {}; }
};

}  // namespace

}  // namespace trellis::codegen::soft

namespace trellis::codegen {

const ArtifactTarget& GetSoftTarget() {
    static const soft::SoftTarget target;
    return target;
}

}  // namespace trellis::codegen
