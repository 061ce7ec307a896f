// The code generator's DOM and its two printers, on small hand-built DOMs: each printer's output
// is compared with the expected text in full (golden output).
#include "codegen/dom/ArtifactFactory.hpp"
#include "codegen/dom/ArtifactGeneratorCppCode.hpp"
#include "codegen/dom/ArtifactGeneratorCppDecl.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <sstream>

using namespace trellis::codegen;
using F = ArtifactFactory;

namespace {

std::string PrintDecl(const ArtifactModule& m) {
    std::ostringstream s;
    ArtifactGeneratorCppDecl printer(s);
    m.Accept(printer);
    return s.str();
}

std::string PrintCode(const ArtifactModule& m) {
    std::ostringstream s;
    ArtifactGeneratorCppCode printer(s);
    m.Accept(printer);
    return s.str();
}

/// Prints one statement the way the code printer prints it inside a function body.
std::string PrintStatement(ArtifactEntityPtr statement) {
    ArtifactModule m("M");
    auto f = F::Func("void", "f");
    f->GetBlock().Add(std::move(statement));
    m.AddSourceEntity(f);
    const std::string code = PrintCode(m);
    const std::string open = "void f() {\n", close = "}\n";
    const auto begin = code.find(open);
    return code.substr(begin + open.size(), code.size() - begin - open.size() - close.size());
}

// The seed's example, in our names: a class with a constructor, Inference(), accessors for the
// named tensors and getInput()/getOutput(), private tensors and layers.
ArtifactModulePtr SeedLikeModule() {
    auto m = F::Module("AclArtifact");
    m->SetDoc("Generated for a test.");
    m->AddHeaderInclude("cstddef");
    m->AddSourceInclude("cstring");
    m->AddSourceInclude("helpers.h", false);
    auto ns = F::Namespace("");
    ns->Add(F::Snippet("kernel: Relu", "inline void Relu(const float* x, float* y, std::size_t n) {\n"
                                        "    for (std::size_t i = 0; i < n; ++i) y[i] = x[i] > 0 ? x[i] : 0;\n"
                                        "}\n"));
    ns->Add(F::Var("constexpr std::size_t", "kShape", {F::Int(2)}, {F::Size(1), F::Size(8)}, ArtifactInitStyle::Brace));
    m->AddSourceEntity(ns);

    auto c = m->AddClass("AclArtifact");
    c->SetDoc("The network.");
    auto tensor = c->AddClass(ArtifactVisibility::Public, "Tensor", ArtifactClassPlacement::Header);
    tensor->AddVariable(ArtifactVisibility::Public, "float*", "data", {F::Lit("nullptr")});
    tensor->AddVariable(ArtifactVisibility::Public, "std::size_t", "size", {F::Size(0)});
    c->AddClass(ArtifactVisibility::Private, "Layers", ArtifactClassPlacement::Source)
        ->AddVariable(ArtifactVisibility::Public, "int", "relu_1", {F::Int(0)});
    auto ctor = c->AddConstructor(ArtifactVisibility::Public,
                                  {F::Var("const char*", "params_path", {}, {F::String("AclArtifact.params")})});
    ctor->GetFunction().SetExplicit(true);
    ctor->AddInitializer("_tensor1", {F::Braces({F::Lit("nullptr"), F::Size(8)}, "Tensor")});
    ctor->GetFunction().GetBlock().AddComment("configure, allocate, read");
    ctor->GetFunction().GetBlock().AddCall("Configure", {F::Id("params_path")});
    auto copy = c->AddFunction(ArtifactVisibility::Public, "", "AclArtifact", {F::Var("const AclArtifact&", "other")});
    copy->SetDeleted(true);
    auto inference = c->AddFunction(ArtifactVisibility::Public, "void", "Inference");
    inference->GetFunction().SetDoc("Runs the network.");
    inference->GetFunction().GetBlock().AddCall(
        "Relu", {F::Lit("_tensor1.data"), F::Lit("_tensor2.data"), F::Lit("_tensor1.size")});
    for (const char* name : {"tensor1", "tensor2"}) {
        auto get = c->AddFunction(ArtifactVisibility::Public, "Tensor&", std::string("get_") + name);
        get->GetFunction().GetBlock().AddReturn(F::Id(std::string("_") + name));
    }
    auto size = c->AddFunction(ArtifactVisibility::Public, "std::size_t", "size");
    size->GetFunction().SetConst(true);
    size->GetFunction().GetBlock().AddReturn(F::Lit("_tensor1.size"));
    auto cfg = c->AddFunction(ArtifactVisibility::Private, "void", "Configure", {F::Var("const char*", "params_path")});
    cfg->GetFunction().GetBlock().AddCall("Open", {F::Id("params_path")});
    c->AddVariable(ArtifactVisibility::Private, "Tensor", "_tensor1");
    c->AddVariable(ArtifactVisibility::Private, "Tensor", "_tensor2");
    return m;
}

}  // namespace

TEST(CodegenDom, DeclarationPrinterGolden) {
    EXPECT_EQ(PrintDecl(*SeedLikeModule()),
              "// Generated for a test.\n"
              "#ifndef TRELLIS_ARTIFACT_ACLARTIFACT_H\n"
              "#define TRELLIS_ARTIFACT_ACLARTIFACT_H\n"
              "\n"
              "#include <cstddef>\n"
              "\n"
              "/// The network.\n"
              "class AclArtifact {\n"
              "public:\n"
              "    struct Tensor {\n"
              "        float* data{nullptr};\n"
              "        std::size_t size{0u};\n"
              "    };\n"
              "    explicit AclArtifact(const char* params_path = \"AclArtifact.params\");\n"
              "    AclArtifact(const AclArtifact& other) = delete;\n"
              "    /// Runs the network.\n"
              "    void Inference();\n"
              "    Tensor& get_tensor1();\n"
              "    Tensor& get_tensor2();\n"
              "    std::size_t size() const;\n"
              "\n"
              "private:\n"
              "    struct Layers;\n"
              "    void Configure(const char* params_path);\n"
              "    Tensor _tensor1;\n"
              "    Tensor _tensor2;\n"
              "};\n"
              "\n"
              "#endif  // TRELLIS_ARTIFACT_ACLARTIFACT_H\n");
}

TEST(CodegenDom, CodePrinterGolden) {
    EXPECT_EQ(PrintCode(*SeedLikeModule()),
              "// Generated for a test.\n"
              "#include \"AclArtifact.h\"\n"
              "\n"
              "#include <cstring>\n"
              "#include \"helpers.h\"\n"
              "\n"
              "namespace {\n"
              "\n"
              "// ---- kernel: Relu ----\n"
              "inline void Relu(const float* x, float* y, std::size_t n) {\n"
              "    for (std::size_t i = 0; i < n; ++i) y[i] = x[i] > 0 ? x[i] : 0;\n"
              "}\n"
              "\n"
              "constexpr std::size_t kShape[2] = {1u, 8u};\n"
              "\n"
              "}  // namespace\n"
              "\n"
              "struct AclArtifact::Layers {\n"
              "    int relu_1{0};\n"
              "};\n"
              "\n"
              "AclArtifact::AclArtifact(const char* params_path)\n"
              "    : _tensor1(Tensor{nullptr, 8u}) {\n"
              "    // configure, allocate, read\n"
              "    Configure(params_path);\n"
              "}\n"
              "\n"
              "void AclArtifact::Inference() {\n"
              "    Relu(_tensor1.data, _tensor2.data, _tensor1.size);\n"
              "}\n"
              "\n"
              "AclArtifact::Tensor& AclArtifact::get_tensor1() {\n"
              "    return _tensor1;\n"
              "}\n"
              "\n"
              "AclArtifact::Tensor& AclArtifact::get_tensor2() {\n"
              "    return _tensor2;\n"
              "}\n"
              "\n"
              "std::size_t AclArtifact::size() const {\n"
              "    return _tensor1.size;\n"
              "}\n"
              "\n"
              "void AclArtifact::Configure(const char* params_path) {\n"
              "    Open(params_path);\n"
              "}\n");
}

TEST(CodegenDom, ExpressionsGetTheParenthesesPrecedenceNeeds) {
    using Op = ArtifactBinOp;
    const auto a = F::Id("a"), b = F::Id("b"), c = F::Id("c");
    EXPECT_EQ(PrintStatement(F::Bin(Op::Assign, a, F::Bin(Op::Mult, F::Bin(Op::Plus, b, c), a))),
              "    a = (b + c) * a;\n");
    EXPECT_EQ(PrintStatement(F::Bin(Op::Minus, a, F::Bin(Op::Minus, b, c))), "    a - (b - c);\n");
    EXPECT_EQ(PrintStatement(F::Bin(Op::Minus, F::Bin(Op::Minus, a, b), c)), "    a - b - c;\n");
    EXPECT_EQ(PrintStatement(F::Bin(Op::Plus, a, F::Bin(Op::Mult, b, c))), "    a + b * c;\n");
    EXPECT_EQ(PrintStatement(F::Bin(Op::Assign, a, F::Bin(Op::Assign, b, c))), "    a = b = c;\n");
    EXPECT_EQ(PrintStatement(F::Bin(Op::LogicalOr, F::Bin(Op::LogicalAnd, a, b), F::Un(ArtifactUnOp::LogicalNot, c))),
              "    a && b || !c;\n");
    EXPECT_EQ(PrintStatement(F::Deref(F::Bin(Op::Plus, a, F::Int(1)))), "    *(a + 1);\n");
    EXPECT_EQ(PrintStatement(F::Call("f", {F::Ref(a), F::Index(F::Deref(b), F::Bin(Op::Plus, c, F::Int(2)))})),
              "    f(&a, (*b)[c + 2]);\n");
    EXPECT_EQ(PrintStatement(F::Call("size", {}, F::Deref(a), ArtifactCallType::Object)), "    (*a).size();\n");
    EXPECT_EQ(PrintStatement(F::Call("run", {F::Int(-3)}, a, ArtifactCallType::Pointer)), "    a->run(-3);\n");
    EXPECT_EQ(PrintStatement(F::Call("max", {a}, F::Id("std"), ArtifactCallType::Scope)), "    std::max(a);\n");
    EXPECT_EQ(PrintStatement(F::Un(ArtifactUnOp::UnaryMinus, F::Int(-3))), "    -(-3);\n");
    EXPECT_EQ(PrintStatement(F::Un(ArtifactUnOp::PostIncr, F::Deref(a))), "    (*a)++;\n");
}

TEST(CodegenDom, LiteralsReadBackExactly) {
    EXPECT_EQ(F::Float(0.1f)->GetText(), "0.1f");
    EXPECT_EQ(F::Float(3.0f)->GetText(), "3.0f");
    EXPECT_EQ(F::Float(1e-30f)->GetText(), "1e-30f");
    EXPECT_EQ(F::Double(0.1)->GetText(), "0.1");
    EXPECT_EQ(F::Int(5)->GetText(), "5");
    EXPECT_EQ(F::Int(-5000000000LL)->GetText(), "-5000000000LL");
    EXPECT_EQ(F::Size(7)->GetText(), "7u");
    EXPECT_EQ(F::String("a\"b\\c\n")->GetText(), "\"a\\\"b\\\\c\\n\"");
    EXPECT_EQ(F::Float(-std::numeric_limits<float>::infinity())->GetText(), "-std::numeric_limits<float>::infinity()");
}

TEST(CodegenDom, StatementsGolden) {
    using Op = ArtifactBinOp;
    auto block = F::Block();
    block->AddVariable("std::size_t", "n", {}, {F::Size(4)});
    block->AddVariable("float", "buf", {F::Int(4)}, {F::Float(1.0f), F::Float(2.5f)}, ArtifactInitStyle::Brace);
    block->AddVariable("std::string", "s", {}, {F::Int(3), F::Lit("'x'")}, ArtifactInitStyle::Paren);
    auto loop = block->AddForLoop(F::Var("std::size_t", "i", {}, {F::Size(0)}), F::Bin(Op::Less, F::Id("i"), F::Id("n")),
                                  F::Un(ArtifactUnOp::PreIncr, F::Id("i")));
    auto branch = loop->GetBody().AddIf(F::Bin(Op::Eq, F::Index(F::Id("buf"), F::Id("i")), F::Float(0.0f)));
    branch->GetBlock().AddAssign(F::Index(F::Id("buf"), F::Id("i")), F::Float(1.0f));
    branch->GetElseBlock().Add(F::Bin(Op::MultAssign, F::Index(F::Id("buf"), F::Id("i")), F::Float(2.0f)));
    loop->GetBody().AddComment("two lines\nof comment");
    block->AddIf(F::Id("n"));  // an empty branch
    block->AddBlock()->AddReturn(nullptr);
    auto attempt = block->AddTryCatch("std::exception", "e");
    attempt->GetTryBlock().AddCall("Configure", {F::Int(1)});
    attempt->GetCatchBlock().AddCall("Configure", {F::Int(0)});
    EXPECT_EQ(PrintStatement(block),
              "    {\n"
              "        std::size_t n = 4u;\n"
              "        float buf[4] = {1.0f, 2.5f};\n"
              "        std::string s(3, 'x');\n"
              "        for (std::size_t i = 0u; i < n; ++i) {\n"
              "            if (buf[i] == 0.0f) {\n"
              "                buf[i] = 1.0f;\n"
              "            } else {\n"
              "                buf[i] *= 2.0f;\n"
              "            }\n"
              "            // two lines\n"
              "            // of comment\n"
              "        }\n"
              "        if (n) {}\n"
              "        {\n"
              "            return;\n"
              "        }\n"
              "        try {\n"
              "            Configure(1);\n"
              "        } catch (const std::exception& e) {\n"
              "            Configure(0);\n"
              "        }\n"
              "    }\n");
}

TEST(CodegenDom, FreeFunctionsAndSourceClasses) {
    ArtifactModule m("Net");
    auto ns = F::Namespace("detail");
    auto helper = m.AddClass("Helper", ArtifactClassPlacement::Source);
    helper->AddVariable(ArtifactVisibility::Private, "int", "count_", {F::Int(0)});
    auto inc = helper->AddFunction(ArtifactVisibility::Public, "int", "Next");
    inc->GetFunction().GetBlock().AddReturn(F::Un(ArtifactUnOp::PreIncr, F::Id("count_")));
    auto fn = F::Func("void*", "net_create", {F::Var("const char*", "path")});
    fn->SetExternC(true);
    fn->GetBlock().AddReturn(F::Lit("nullptr"));
    auto st = F::Func("int", "Twice", {F::Var("int", "x")});
    st->SetStatic(true);
    st->GetBlock().AddReturn(F::Bin(ArtifactBinOp::Mult, F::Id("x"), F::Int(2)));
    ns->Add(st);
    m.AddSourceEntity(ns);
    m.AddSourceEntity(fn);
    EXPECT_EQ(PrintDecl(m),
              "#ifndef TRELLIS_ARTIFACT_NET_H\n"
              "#define TRELLIS_ARTIFACT_NET_H\n"
              "\n"
              "#endif  // TRELLIS_ARTIFACT_NET_H\n");
    EXPECT_EQ(PrintCode(m),
              "#include \"Net.h\"\n"
              "\n"
              "namespace detail {\n"
              "\n"
              "static int Twice(int x) {\n"
              "    return x * 2;\n"
              "}\n"
              "\n"
              "}  // namespace detail\n"
              "\n"
              "extern \"C\" void* net_create(const char* path) {\n"
              "    return nullptr;\n"
              "}\n"
              "\n"
              "class Helper {\n"
              "public:\n"
              "    int Next() {\n"
              "        return ++count_;\n"
              "    }\n"
              "private:\n"
              "    int count_{0};\n"
              "};\n");
}
