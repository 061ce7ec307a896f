#include "ArtifactOpGenerator.hpp"

#include "EmbeddedSources.hpp"

#include <trellis/Exceptions.hpp>

#include <cctype>
#include <cstdio>

namespace trellis::codegen {

namespace {

constexpr ArtifactVisibility kPublic = ArtifactVisibility::Public;
constexpr ArtifactVisibility kPrivate = ArtifactVisibility::Private;

/// `text` made a C++ identifier: other characters become '_', a leading digit gets a prefix.
std::string Identifier(const std::string& text) {
    std::string id;
    for (unsigned char c : text) id += std::isalnum(c) ? static_cast<char>(c) : '_';
    // Runs of '_' (from "/layer1/conv.0") collapse; none at either end.
    std::string out;
    for (char c : id) {
        if (c == '_' && (out.empty() || out.back() == '_')) continue;
        out += c;
    }
    while (!out.empty() && out.back() == '_') out.pop_back();
    if (out.empty()) out = "tensor";
    if (std::isdigit(static_cast<unsigned char>(out[0]))) out = "t" + out;
    return out;
}

std::string Hex64(std::uint64_t v) {
    char text[32];
    std::snprintf(text, sizeof(text), "0x%016llxull", static_cast<unsigned long long>(v));
    return text;
}

}  // namespace

ArtifactOpGenerator::ArtifactOpGenerator(const ArtifactGraph& graph, const ArtifactOptions& options, std::string target)
    : m_Graph(graph), m_Options(options), m_TargetName(std::move(target)) {}

std::string ArtifactOpGenerator::UniqueId(const std::string& base) {
    std::string id = Identifier(base);
    if (m_Ids.insert(id).second) return id;
    for (int k = 2;; ++k) {
        const std::string candidate = id + "_" + std::to_string(k);
        if (m_Ids.insert(candidate).second) return candidate;
    }
}

std::string ArtifactOpGenerator::CppType(DataType type) {
    switch (type) {
        case DataType::Float32: return "float";
        case DataType::Float64: return "double";
        case DataType::Signed8: return "std::int8_t";
        case DataType::Signed16: return "std::int16_t";
        case DataType::Signed32: return "std::int32_t";
        case DataType::Signed64: return "std::int64_t";
        case DataType::UInt8: return "std::uint8_t";
        case DataType::UInt16: return "std::uint16_t";
        case DataType::UInt32: return "std::uint32_t";
        case DataType::UInt64: return "std::uint64_t";
        case DataType::Boolean: return "std::uint8_t";
        default: break;
    }
    throw InvalidArgumentException(std::string("code generator: data type ") + GetDataTypeName(type) +
                                   " has no element type in generated code");
}

std::string ArtifactOpGenerator::TypeName(DataType type) {
    switch (type) {
        case DataType::Float32: return "float32";
        case DataType::Float64: return "float64";
        case DataType::Float16: return "float16";
        case DataType::BFloat16: return "bfloat16";
        case DataType::Signed8: return "int8";
        case DataType::Signed16: return "int16";
        case DataType::Signed32: return "int32";
        case DataType::Signed64: return "int64";
        case DataType::UInt8: return "uint8";
        case DataType::UInt16: return "uint16";
        case DataType::UInt32: return "uint32";
        case DataType::UInt64: return "uint64";
        case DataType::Boolean: return "bool";
        default: return GetDataTypeName(type);
    }
}

void ArtifactOpGenerator::UseSnippet(const std::string& name) {
    if (!m_Snippets.insert(name).second) return;
    const SnippetParts parts = SplitSnippet(name);
    for (const std::string& dep : parts.m_Dependencies) UseSnippet(dep);
    for (const auto& [include, condition] : parts.m_SystemIncludes) m_Module->AddSourceInclude(include, true, condition);
    // A snippet holds more functions than one artifact calls. In the main file, clang's
    // -Wunused-function reports unused inline functions of an anonymous namespace (GCC does not):
    // silenced for the snippet alone, so the artifact still builds with -Wall -Wextra -Werror.
    m_Detail->Add(F::Snippet(name, "#if defined(__clang__)\n#pragma clang diagnostic push\n"
                                   "#pragma clang diagnostic ignored \"-Wunused-function\"\n#endif\n" +
                                       parts.m_Body +
                                       "\n#if defined(__clang__)\n#pragma clang diagnostic pop\n#endif\n"));
}

ArtifactExprPtr ArtifactOpGenerator::AddLayerMember(const std::string& typeName, const std::string& name) {
    m_Layers->AddVariable(kPublic, typeName, name);
    return F::Id("l." + name);
}

std::uint64_t ArtifactOpGenerator::WeightOffset(int tensor) {
    if (auto it = m_WeightOffsets.find(tensor); it != m_WeightOffsets.end()) return it->second;
    const GraphTensor& t = m_Graph.GetTensor(tensor);
    if (!t.m_Constant) {
        throw InvalidArgumentException("code generator: tensor '" + t.m_Name + "' is not a constant");
    }
    const std::uint64_t offset = m_Params.Add(t.m_Constant->GetMemoryArea(), t.m_Constant->GetNumBytes());
    m_WeightOffsets[tensor] = offset;
    return offset;
}

ArtifactExprPtr ArtifactOpGenerator::WeightPointer(int tensor, const std::string& pointerType) {
    const std::uint64_t offset = WeightOffset(tensor);
    return F::Call("reinterpret_cast<" + pointerType + ">",
                   {F::Bin(ArtifactBinOp::Plus, F::Call("Data", {}, F::Id("l.params"), ArtifactCallType::Object),
                           F::Size(offset))});
}

ArtifactExprPtr ArtifactOpGenerator::InputPointer(int index, const std::string& pointerType) {
    return F::Call("static_cast<" + pointerType + ">", {F::Id(InputMember(index) + ".data")});
}

ArtifactExprPtr ArtifactOpGenerator::OutputPointer(int index, const std::string& pointerType) {
    return F::Call("static_cast<" + pointerType + ">", {F::Id(OutputMember(index) + ".data")});
}

ArtifactExprPtr ArtifactOpGenerator::ArenaPointer(int buffer, const std::string& pointerType, std::size_t byteOffset) {
    auto offset = F::Lit("?");
    m_ArenaOffsets.push_back({offset, {buffer, byteOffset}});
    return F::Call("reinterpret_cast<" + pointerType + ">", {F::Bin(ArtifactBinOp::Plus, F::Id("l.arena"), offset)});
}

ArtifactExprPtr ArtifactOpGenerator::ArenaSize() {
    if (!m_ArenaSize) m_ArenaSize = F::Lit("?");
    return m_ArenaSize;
}

void ArtifactOpGenerator::BuildSkeleton() {
    const std::string& name = m_Options.m_Name;
    m_Module = F::Module(name);
    m_Module->SetDoc("Generated by trellis codegen (target " + m_TargetName + "). Do not edit.\n" + name +
                     ".h declares the artifact, " + name + ".cpp implements it, " + name + ".params holds its weights.");
    m_Module->AddHeaderInclude("cstddef");
    m_Module->AddHeaderInclude("memory");
    m_Module->AddHeaderInclude("string");
    m_Module->AddSourceInclude("cstdint");
    m_Detail = F::Namespace("");
    m_Module->AddSourceEntity(m_Detail);
    UseSnippet("resources/ParamsFile.hpp");
    UseSnippet("resources/Arena.hpp");

    m_Class = m_Module->AddClass(name);
    std::string doc = "The network as a C++ class (target " + m_TargetName + "). The constructor configures every layer,\n"
                      "allocates one arena and reads the weights file; Inference() runs the network on the\n"
                      "input tensors and writes the output tensors. Not thread-safe: one Inference() at a time\n"
                      "per object (objects are independent).";
    m_Class->SetDoc(doc);
    auto tensor = m_Class->AddClass(kPublic, "Tensor", ArtifactClassPlacement::Header);
    tensor->SetDoc("An input or output of the network: `size` elements of `type` at `data`, row-major and densely\n"
                   "packed, in the artifact's own memory. Point `data` at a buffer of your own (of the same\n"
                   "size) to have Inference() read or write there instead.");
    tensor->AddVariable(kPublic, "void*", "data");
    tensor->AddVariable(kPublic, "const char*", "type")->SetDoc("\"float32\", \"int64\", \"bool\", ...");
    tensor->AddVariable(kPublic, "std::size_t", "rank");
    tensor->AddVariable(kPublic, "const std::size_t*", "shape")->SetDoc("`rank` dims");
    tensor->AddVariable(kPublic, "std::size_t", "size");

    m_Layers = m_Class->AddClass(kPrivate, "Layers", ArtifactClassPlacement::Source);
    m_Layers->SetDoc("The configured layers, the arena and the weights.");
    m_Layers->AddVariable(kPublic, "trellis::artifact::ParamsFile", "params");
    m_Layers->AddVariable(kPublic, "trellis::artifact::Arena", "arena_storage");
    m_Layers->AddVariable(kPublic, "unsigned char*", "arena", {F::Lit("nullptr")});

    m_ParamsSize = F::Lit("?");
    m_ParamsHash = F::Lit("?");
    m_Detail->Add(F::Var("constexpr std::uint64_t", "kModelHash", {}, {m_ParamsHash}));
    m_Detail->Add(F::Var("constexpr std::uint64_t", "kParamsBytes", {}, {m_ParamsSize}));

    // Interface tensors.
    const auto shapeArray = [&](const std::string& id, const TensorShape& shape) -> ArtifactExprPtr {
        if (shape.GetNumDimensions() == 0) return F::Lit("nullptr");
        std::vector<ArtifactExprPtr> dims;
        for (unsigned int d : shape.GetDims()) dims.push_back(F::Size(d));
        const std::string array = "kShape_" + id;
        m_Detail->Add(F::Var("constexpr std::size_t", array, {F::Size(shape.GetNumDimensions())}, dims, ArtifactInitStyle::Brace));
        return F::Id(array);
    };
    const auto binding = [&](const std::string& tensorName, int tensorId, const char* prefix,
                             std::vector<std::string>& members, std::vector<ArtifactBinding>& bindings) {
        const std::string id = UniqueId(tensorName);
        const TensorInfo& info = m_Graph.GetTensor(tensorId).m_Info;
        const std::string member = prefix + id + "_";
        members.push_back(member);
        bindings.push_back({tensorName, "get_" + id, info});
        m_Class->AddVariable(kPrivate, "Tensor", member);
        return std::make_pair(member, shapeArray(id, info.GetShape()));
    };
    // layers_ first: it is initialized first.
    m_Class->AddVariable(kPrivate, "std::unique_ptr<Layers>", "layers_");
    std::vector<std::pair<std::string, ArtifactExprPtr>> members;
    for (int t : m_Graph.GetInputs()) {
        members.push_back(binding(m_Graph.GetTensor(t).m_Name, t, "in_", m_InputMembers, m_InputBindings));
    }
    for (const GraphOutput& o : m_Graph.GetOutputs()) {
        members.push_back(binding(o.m_Name, o.m_Tensor, "out_", m_OutputMembers, m_OutputBindings));
    }

    auto ctor = m_Class->AddConstructor(kPublic, {F::Var("const std::string&", "params_path", {}, {F::String(name + ".params")})});
    ctor->GetFunction().SetExplicit(true);
    ctor->GetFunction().SetDoc("Configures every layer, allocates the arena, and maps (or reads) the weights file;\n"
                               "throws std::runtime_error naming the file if it is missing, truncated, or of another model.");
    ctor->AddInitializer("layers_", {F::Call("std::make_unique<Layers>", {})});
    std::size_t k = 0;
    const auto infoOf = [&](std::size_t i) -> const TensorInfo& {
        return i < m_InputBindings.size() ? m_InputBindings[i].m_Info : m_OutputBindings[i - m_InputBindings.size()].m_Info;
    };
    for (const auto& [member, shape] : members) {
        const TensorInfo& info = infoOf(k++);
        ctor->AddInitializer(member, {F::Braces({F::Lit("nullptr"), F::String(TypeName(info.GetDataType())),
                                                 F::Size(info.GetNumDimensions()), shape, F::Size(info.GetNumElements())},
                                                "Tensor")});
    }
    auto dtor = m_Class->AddDestructor();
    (void)dtor;
    m_Class->AddFunction(kPublic, "", name, {F::Var("const " + name + "&", "other")})->SetDeleted(true);
    m_Class->AddFunction(kPublic, name + "&", "operator=", {F::Var("const " + name + "&", "other")})->SetDeleted(true);

    m_Configure = &*m_ConfigureBlock.emplace_back(F::Block());
    m_Allocate = &*m_ConfigureBlock.emplace_back(F::Block());
    m_ReadWeights = &*m_ConfigureBlock.emplace_back(F::Block());
    m_Inference = &*m_ConfigureBlock.emplace_back(F::Block());
    m_Ctor = ctor;
}

void ArtifactOpGenerator::FinishSkeleton() {
    // The arena: planned now that every buffer is known.
    m_Plan.Plan();
    for (auto& [literal, where] : m_ArenaOffsets) literal->SetText(std::to_string(m_Plan.GetOffset(where.first) + where.second) + "u");
    const std::size_t arenaBytes = m_Plan.GetSize();
    if (m_ArenaSize) m_ArenaSize->SetText(std::to_string(arenaBytes) + "u");

    ArtifactBlock& body = m_Ctor->GetFunction().GetBlock();
    body.AddVariable("Layers&", "l", {}, {F::Deref(F::Id("layers_"))});
    body.AddComment("1. Configure every layer.");
    body.Append(*m_Configure);
    body.AddComment("2. Allocate: one arena; its first " + std::to_string(arenaBytes) +
                    " bytes hold the tensors at the offsets of the static memory plan (" +
                    std::to_string(m_Plan.GetUnplannedSize()) + " bytes without reuse)" +
                    (m_ExtraArenaBytes ? std::string(", then what the layers were configured with") : std::string()) + ".");
    ArtifactExprPtr size = F::Size(arenaBytes);
    if (m_ExtraArenaBytes) size = F::Bin(ArtifactBinOp::Plus, size, m_ExtraArenaBytes);
    body.AddAssign(F::Id("l.arena"), F::Call("Allocate", {size, F::Size(arenaBytes)}, F::Id("l.arena_storage"), ArtifactCallType::Object));
    body.Append(*m_Allocate);
    body.AddComment("3. Read the weights.");
    body.AddCall("Open", {F::Id("params_path"), F::Id("kModelHash"), F::Id("kParamsBytes")}, F::Id("l.params"),
                 ArtifactCallType::Object);
    body.Append(*m_ReadWeights);

    auto inference = m_Class->AddFunction(kPublic, "void", "Inference");
    inference->GetFunction().SetDoc("Runs the network: reads the inputs, writes the outputs. Allocates nothing.");
    ArtifactBlock& run = inference->GetFunction().GetBlock();
    run.AddVariable("Layers&", "l", {}, {F::Deref(F::Id("layers_"))});
    run.Add(F::Call("static_cast<void>", {F::Id("l")}));
    run.Append(*m_Inference);

    // Accessors.
    const auto accessor = [&](const ArtifactBinding& b, const std::string& member, const std::string& fn, const std::string& doc) {
        auto f = m_Class->AddFunction(kPublic, "Tensor&", fn);
        f->GetFunction().SetDoc(doc);
        f->GetFunction().GetBlock().AddReturn(F::Id(member));
        (void)b;
    };
    for (std::size_t i = 0; i < m_InputBindings.size(); ++i) {
        const ArtifactBinding& b = m_InputBindings[i];
        accessor(b, m_InputMembers[i], b.m_Accessor, "Input '" + b.m_Name + "': " + b.m_Info.ToString() + ".");
    }
    for (std::size_t i = 0; i < m_OutputBindings.size(); ++i) {
        const ArtifactBinding& b = m_OutputBindings[i];
        accessor(b, m_OutputMembers[i], b.m_Accessor, "Output '" + b.m_Name + "': " + b.m_Info.ToString() + ".");
    }
    if (m_InputBindings.size() == 1) accessor(m_InputBindings[0], m_InputMembers[0], "getInput", "The only input.");
    if (m_OutputBindings.size() == 1) accessor(m_OutputBindings[0], m_OutputMembers[0], "getOutput", "The only output.");

    if (m_Options.m_CEntryPoints) AddCEntryPoints();

    // The weights file is complete: its size and the model hash.
    m_ParamsFile = m_Params.Finish(m_Graph.DescribeStructure());
    m_ParamsHash->SetText(Hex64(m_Params.GetHash()));
    m_ParamsSize->SetText(std::to_string(m_Params.GetFileSize()) + "u");
}

void ArtifactOpGenerator::AddCEntryPoints() {
    // C entry points for loading the artifact with dlopen (the Codegen backend): no C++ type or
    // exception crosses them; a failure returns nullptr or -1 and <Name>_error() says why.
    const std::string& name = m_Options.m_Name;
    m_Module->AddSourceInclude("exception");
    m_Detail->Add(F::Var("thread_local std::string", "last_error"));
    const auto failure = [&](ArtifactBlock& block, ArtifactExprPtr result) {
        auto attempt = std::make_shared<ArtifactTryCatch>("std::exception", "e");
        block.Add(attempt);
        attempt->GetCatchBlock().AddAssign(F::Id("last_error"), F::Call("what", {}, F::Id("e"), ArtifactCallType::Object));
        attempt->GetCatchBlock().AddReturn(std::move(result));
        return attempt;
    };

    auto create = F::Func("void*", name + "_create", {F::Var("const char*", "params_path")});
    create->SetExternC(true);
    create->SetDoc("A new " + name + " reading the weights file `params_path`; nullptr on failure (" + name +
                   "_error() says why).");
    failure(create->GetBlock(), F::Lit("nullptr"))->GetTryBlock().AddReturn(F::Call("new " + name, {F::Id("params_path")}));
    m_Module->AddSourceEntity(create);

    auto run = F::Func("int", name + "_run",
                       {F::Var("void*", "net"), F::Var("const void* const*", "inputs"), F::Var("void* const*", "outputs")});
    run->SetExternC(true);
    run->SetDoc("Runs `net` on `inputs` (one pointer per input, in order) into `outputs` (one per output);\n"
                "0 on success, -1 on failure (" + name + "_error() says why).");
    ArtifactBlock& body = failure(run->GetBlock(), F::Int(-1))->GetTryBlock();
    body.AddVariable(name + "&", "n", {}, {F::Deref(F::Call("static_cast<" + name + "*>", {F::Id("net")}))});
    for (std::size_t i = 0; i < m_InputBindings.size(); ++i) {
        body.AddAssign(F::Id("n." + m_InputBindings[i].m_Accessor + "().data"),
                       F::Call("const_cast<void*>", {F::Index(F::Id("inputs"), F::Size(i))}));
    }
    for (std::size_t o = 0; o < m_OutputBindings.size(); ++o) {
        body.AddAssign(F::Id("n." + m_OutputBindings[o].m_Accessor + "().data"), F::Index(F::Id("outputs"), F::Size(o)));
    }
    body.AddCall("Inference", {}, F::Id("n"), ArtifactCallType::Object);
    body.AddReturn(F::Int(0));
    m_Module->AddSourceEntity(run);

    auto destroy = F::Func("void", name + "_destroy", {F::Var("void*", "net")});
    destroy->SetExternC(true);
    destroy->SetDoc("Destroys a " + name + " made by " + name + "_create().");
    destroy->GetBlock().AddCall("delete", {F::Call("static_cast<" + name + "*>", {F::Id("net")})});
    m_Module->AddSourceEntity(destroy);

    auto error = F::Func("const char*", name + "_error");
    error->SetExternC(true);
    error->SetDoc("Why this thread's last " + name + "_create() or " + name + "_run() failed.");
    error->GetBlock().AddReturn(F::Call("c_str", {}, F::Id("last_error"), ArtifactCallType::Object));
    m_Module->AddSourceEntity(error);
}

ArtifactModulePtr ArtifactOpGenerator::Generate() {
    BuildSkeleton();
    Begin();
    for (std::size_t i = 0; i < m_Graph.GetLayers().size(); ++i) VisitLayer(m_Graph.GetLayers()[i], static_cast<int>(i));
    Finish();
    FinishSkeleton();
    return m_Module;
}

}  // namespace trellis::codegen
