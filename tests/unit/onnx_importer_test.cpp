// ONNX importer: bindings, error reporting, opset-dependent op forms, external data and input
// shapes. Models are built in C++ as onnx::ModelProto, parsed through the public IOnnxParser and,
// where numbers matter, optimized and run on CpuRef.
#ifndef ONNX_ML
#define ONNX_ML 1  // the onnx_proto target defines it; the fallback keeps the file checkable alone
#endif
#include <onnx/onnx_pb.h>

#include "TestHelpers.hpp"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace trellis;
using namespace trellis::test;

namespace {

constexpr int kFloat = onnx::TensorProto_DataType_FLOAT;
constexpr int kInt64 = onnx::TensorProto_DataType_INT64;

// ---- Building models ----

void AttrInt(onnx::NodeProto& n, const std::string& name, int64_t v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto_AttributeType_INT);
    a->set_i(v);
}
void AttrFloat(onnx::NodeProto& n, const std::string& name, float v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto_AttributeType_FLOAT);
    a->set_f(v);
}
void AttrString(onnx::NodeProto& n, const std::string& name, const std::string& v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto_AttributeType_STRING);
    a->set_s(v);
}
void AttrInts(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto_AttributeType_INTS);
    for (int64_t x : v) a->add_ints(x);
}

onnx::TensorProto FloatTensorProto(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& v) {
    onnx::TensorProto t;
    t.set_name(name);
    t.set_data_type(kFloat);
    for (int64_t d : dims) t.add_dims(d);
    t.set_raw_data(v.data(), v.size() * sizeof(float));
    return t;
}

onnx::TensorProto IntTensorProto(const std::string& name, const std::vector<int64_t>& dims, const std::vector<int64_t>& v) {
    onnx::TensorProto t;
    t.set_name(name);
    t.set_data_type(kInt64);
    for (int64_t d : dims) t.add_dims(d);
    for (int64_t x : v) t.add_int64_data(x);
    return t;
}

/// A ModelProto under construction. Dims of -1 become the symbolic dim "batch".
class TestModel {
public:
    explicit TestModel(int64_t opset) {
        m_Model.set_ir_version(8);
        m_Model.set_producer_name("trellis-unit-test");
        auto* import = m_Model.add_opset_import();
        import->set_domain("");
        import->set_version(opset);
        m_Model.mutable_graph()->set_name("test");
    }
    onnx::GraphProto& Graph() { return *m_Model.mutable_graph(); }
    onnx::ModelProto& Model() { return m_Model; }

    TestModel& Input(const std::string& name, const std::vector<int64_t>& dims, int elemType = kFloat) {
        SetValueInfo(Graph().add_input(), name, dims, elemType);
        return *this;
    }
    TestModel& Output(const std::string& name, const std::vector<int64_t>& dims, int elemType = kFloat) {
        SetValueInfo(Graph().add_output(), name, dims, elemType);
        return *this;
    }
    onnx::NodeProto& Node(const std::string& op, const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs, const std::string& name = "") {
        auto* n = Graph().add_node();
        n->set_op_type(op);
        n->set_name(name);
        for (const auto& i : inputs) n->add_input(i);
        for (const auto& o : outputs) n->add_output(o);
        return *n;
    }
    TestModel& FloatInit(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& v) {
        *Graph().add_initializer() = FloatTensorProto(name, dims, v);
        return *this;
    }
    TestModel& IntInit(const std::string& name, const std::vector<int64_t>& dims, const std::vector<int64_t>& v) {
        *Graph().add_initializer() = IntTensorProto(name, dims, v);
        return *this;
    }
    std::string Bytes() const { return m_Model.SerializeAsString(); }

private:
    static void SetValueInfo(onnx::ValueInfoProto* info, const std::string& name, const std::vector<int64_t>& dims,
                             int elemType) {
        info->set_name(name);
        auto* tensorType = info->mutable_type()->mutable_tensor_type();
        tensorType->set_elem_type(elemType);
        auto* shape = tensorType->mutable_shape();
        for (int64_t d : dims) {
            auto* dim = shape->add_dim();
            if (d < 0) dim->set_dim_param("batch");
            else dim->set_dim_value(d);
        }
    }
    onnx::ModelProto m_Model;
};

OwnedTensor FloatTensor(const TensorShape& shape, const std::vector<float>& values) {
    OwnedTensor t;
    t.m_Info = TensorInfo(shape, DataType::Float32);
    t.m_Data.resize(values.size() * sizeof(float));
    std::memcpy(t.m_Data.data(), values.data(), t.m_Data.size());
    return t;
}

std::vector<float> Floats(const OwnedTensor& t) {
    std::vector<float> v(t.m_Info.GetNumElements());
    std::memcpy(v.data(), t.m_Data.data(), v.size() * sizeof(float));
    return v;
}

std::vector<float> Iota(std::size_t n, float start = 0.0f, float step = 1.0f) {
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = start + step * static_cast<float>(i);
    return v;
}

/// Parses `bytes`, optimizes for CpuRef, runs with `inputs` (in binding order) and returns the
/// outputs (in binding order).
std::vector<OwnedTensor> ParseAndRun(const std::string& bytes, const std::vector<OwnedTensor>& inputs,
                                     const IOnnxParser::Options& options = {}, const std::string& baseDir = ".") {
    IOnnxParserPtr parser = IOnnxParser::Create();
    INetworkPtr network = parser->CreateNetworkFromBinary(bytes, baseDir, options);
    IRuntimePtr runtime = IRuntime::Create(IRuntime::CreationOptions());
    IOptimizedNetworkPtr optimized = Optimize(*network, {"CpuRef"}, runtime->GetDeviceSpec());
    NetworkId id = 0;
    std::string error;
    if (runtime->LoadNetwork(id, std::move(optimized), error) != Status::Success) {
        ADD_FAILURE() << "LoadNetwork failed: " << error;
        return {};
    }
    InputTensors in;
    for (std::size_t i = 0; i < inputs.size(); ++i) in.emplace_back(parser->GetInputs().at(i).m_BindingId, inputs[i].AsConstTensor());
    std::vector<OwnedTensor> outs(parser->GetOutputs().size());
    OutputTensors out;
    for (std::size_t i = 0; i < outs.size(); ++i) {
        const LayerBindingId bindingId = parser->GetOutputs()[i].m_BindingId;
        outs[i].m_Info = runtime->GetOutputTensorInfo(id, bindingId, in);
        outs[i].m_Data.assign(outs[i].m_Info.GetNumBytes(), 0);
        out.emplace_back(bindingId, outs[i].AsTensor());
    }
    EXPECT_EQ(runtime->EnqueueWorkload(id, in, out), Status::Success);
    return outs;
}

/// The message of the ParseException that parsing `bytes` throws ("" if none is thrown).
std::string ParseError(const std::string& bytes, const IOnnxParser::Options& options = {}, const std::string& baseDir = ".") {
    try {
        IOnnxParser::Create()->CreateNetworkFromBinary(bytes, baseDir, options);
    } catch (const ParseException& e) {
        return e.what();
    }
    return "";
}

void ExpectFloats(const OwnedTensor& got, const TensorShape& shape, const std::vector<float>& want) {
    EXPECT_EQ(got.m_Info.GetShape(), shape);
    EXPECT_EQ(Compare(got, FloatTensor(shape, want), 1e-5, 1e-6), "");
}

class OnnxImporterTest : public ::testing::Test {
protected:
    void SetUp() override {
        m_Dir = fs::temp_directory_path() /
                ("trellis_onnx_importer_" + std::to_string(::getpid()) + "_" +
                 ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::create_directories(m_Dir);
    }
    void TearDown() override { fs::remove_all(m_Dir); }

    std::string WriteFile(const std::string& name, const std::string& bytes) {
        const fs::path path = m_Dir / name;
        std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        return path.string();
    }

    fs::path m_Dir;
};

// x[2,3] + w[3] -> Relu -> "sum";  x * y -> "product". w is also listed as a graph input (IR 3
// style), which must not make it a binding.
TestModel SmallModel() {
    TestModel m(13);
    m.Input("x", {2, 3}).Input("w", {3}).Input("y", {2, 3}).Output("sum", {2, 3}).Output("product", {2, 3});
    m.FloatInit("w", {3}, {1.0f, -2.0f, 0.5f});
    m.Node("Add", {"x", "w"}, {"t"}, "add");
    m.Node("Relu", {"t"}, {"sum"}, "relu");
    m.Node("Mul", {"x", "y"}, {"product"}, "mul");
    return m;
}

// ---- Bindings and a first run ----

TEST_F(OnnxImporterTest, SmallModelBindingsAndRun) {
    const std::string path = WriteFile("small.onnx", SmallModel().Bytes());
    IOnnxParserPtr parser = IOnnxParser::Create();
    INetworkPtr network = parser->CreateNetworkFromBinaryFile(path);
    EXPECT_EQ(parser->GetOpsetVersion(), 13);

    ASSERT_EQ(parser->GetInputs().size(), 2u);
    EXPECT_EQ(parser->GetInputs()[0].m_Name, "x");
    EXPECT_EQ(parser->GetInputs()[0].m_BindingId, 0);
    EXPECT_EQ(parser->GetInputs()[0].m_TensorInfo, TensorInfo(TensorShape({2, 3}), DataType::Float32));
    EXPECT_EQ(parser->GetInputs()[1].m_Name, "y");
    EXPECT_EQ(parser->GetInputs()[1].m_BindingId, 1);
    ASSERT_EQ(parser->GetOutputs().size(), 2u);
    EXPECT_EQ(parser->GetOutputs()[0].m_Name, "sum");
    EXPECT_EQ(parser->GetOutputs()[0].m_BindingId, 0);
    EXPECT_EQ(parser->GetOutputs()[1].m_Name, "product");
    EXPECT_EQ(parser->GetOutputs()[1].m_BindingId, 1);
    EXPECT_EQ(parser->GetNetworkInputBindingInfo("y").m_BindingId, 1);
    EXPECT_EQ(parser->GetNetworkOutputBindingInfo("product").m_TensorInfo.GetShape(), TensorShape({2, 3}));
    try {
        parser->GetNetworkInputBindingInfo("w");
        FAIL() << "an initializer is not an input binding";
    } catch (const InvalidArgumentException& e) {
        EXPECT_NE(std::string(e.what()).find("'w'"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("x, y"), std::string::npos) << e.what();
    }
    EXPECT_THROW(parser->GetNetworkOutputBindingInfo("t"), InvalidArgumentException);

    const std::vector<float> x = {1, 2, 3, -4, 5, -6};
    const std::vector<float> y = {2, 2, 2, 0.5f, 0.5f, 0.5f};
    const auto outs = ParseAndRun(SmallModel().Bytes(), {FloatTensor({2, 3}, x), FloatTensor({2, 3}, y)});
    ASSERT_EQ(outs.size(), 2u);
    ExpectFloats(outs[0], {2, 3}, {2, 0, 3.5f, 0, 3, 0});
    ExpectFloats(outs[1], {2, 3}, {2, 4, 6, -2, 2.5f, -3});
}

TEST_F(OnnxImporterTest, NodesOutOfOrderAreSorted) {
    TestModel m(13);
    m.Input("x", {3}).Output("y", {3});
    m.Node("Neg", {"a"}, {"y"});
    m.Node("Abs", {"x"}, {"a"});
    const auto outs = ParseAndRun(m.Bytes(), {FloatTensor({3}, {-1, 2, -3})});
    ASSERT_EQ(outs.size(), 1u);
    ExpectFloats(outs[0], {3}, {-1, -2, -3});
}

// ---- Malformed files ----

TEST_F(OnnxImporterTest, MissingModelFileIsFileNotFound) {
    EXPECT_THROW(IOnnxParser::Create()->CreateNetworkFromBinaryFile((m_Dir / "nope.onnx").string()), FileNotFoundException);
}

TEST_F(OnnxImporterTest, TruncatedModelFileIsParseException) {
    const std::string bytes = SmallModel().Bytes();
    const std::string path = WriteFile("truncated.onnx", bytes.substr(0, bytes.size() / 2));
    try {
        IOnnxParser::Create()->CreateNetworkFromBinaryFile(path);
        FAIL() << "a truncated model parsed";
    } catch (const ParseException& e) {
        EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
    // Every other cut point: either a (smaller) valid model or a ParseException, never a crash.
    for (std::size_t size = 0; size < bytes.size(); ++size) {
        try {
            IOnnxParser::Create()->CreateNetworkFromBinary(bytes.substr(0, size), m_Dir.string());
        } catch (const ParseException&) {
        }
    }
}

TEST_F(OnnxImporterTest, NotAProtobufIsParseException) {
    EXPECT_THROW(IOnnxParser::Create()->CreateNetworkFromBinaryFile(WriteFile("text.onnx", "this is not an ONNX model\n")),
                 ParseException);
    EXPECT_THROW(IOnnxParser::Create()->CreateNetworkFromBinaryFile(WriteFile("empty.onnx", "")), ParseException);
    std::mt19937 rng(7);
    for (int trial = 0; trial < 50; ++trial) {
        std::string garbage(64 + trial * 13, '\0');
        for (char& c : garbage) c = static_cast<char>(rng());
        EXPECT_THROW(IOnnxParser::Create()->CreateNetworkFromBinary(garbage, "."), ParseException) << "trial " << trial;
    }
}

TEST_F(OnnxImporterTest, OpsetChecks) {
    TestModel old(0);
    old.Input("x", {2}).Output("y", {2});
    old.Node("Relu", {"x"}, {"y"});
    EXPECT_NE(ParseError(old.Bytes()).find("opset 0 is not supported"), std::string::npos);

    TestModel noDefault(13);
    noDefault.Model().mutable_opset_import(0)->set_domain("com.example");
    noDefault.Input("x", {2}).Output("y", {2});
    EXPECT_NE(ParseError(noDefault.Bytes()).find("no opset of the default ONNX domain"), std::string::npos);
}

// ---- Node errors ----

TEST_F(OnnxImporterTest, UnknownOpNamesNodeOpAndOpset) {
    TestModel m(13);
    m.Input("x", {2}).Output("y", {2});
    m.Node("FancyOp", {"x"}, {"y"}, "my_node");
    const std::string path = WriteFile("unknown.onnx", m.Bytes());
    try {
        IOnnxParser::Create()->CreateNetworkFromBinaryFile(path);
        FAIL() << "unknown op accepted";
    } catch (const ParseException& e) {
        EXPECT_EQ(std::string(e.what()), path + ": node 'my_node' (FancyOp, opset 13): operator not supported by Trellis");
    }
    // Unnamed nodes are named after op type, index and first output.
    TestModel unnamed(13);
    unnamed.Input("x", {2}).Output("y", {2});
    unnamed.Node("Relu", {"x"}, {"r"});
    unnamed.Node("FancyOp", {"r"}, {"y"});
    EXPECT_NE(ParseError(unnamed.Bytes()).find("node 'FancyOp_1->y' (FancyOp, opset 13)"), std::string::npos);
}

TEST_F(OnnxImporterTest, NonDefaultDomainIsRefused) {
    TestModel m(13);
    m.Input("x", {2}).Output("y", {2});
    m.Node("Relu", {"x"}, {"y"}, "r").set_domain("com.microsoft");
    EXPECT_NE(ParseError(m.Bytes()).find("domain 'com.microsoft' is not supported"), std::string::npos);
}

TEST_F(OnnxImporterTest, GraphStructureErrors) {
    TestModel missing(13);
    missing.Input("x", {2}).Output("y", {2});
    missing.Node("Add", {"x", "ghost"}, {"y"}, "add");
    EXPECT_NE(ParseError(missing.Bytes()).find("node 'add' (Add, opset 13): input 'ghost' is not produced"), std::string::npos);

    TestModel cycle(13);
    cycle.Input("x", {2}).Output("y", {2});
    cycle.Node("Add", {"x", "b"}, {"a"}, "first");
    cycle.Node("Relu", {"a"}, {"b"}, "second");
    cycle.Node("Relu", {"a"}, {"y"}, "third");
    EXPECT_NE(ParseError(cycle.Bytes()).find("cycle"), std::string::npos);

    TestModel twice(13);
    twice.Input("x", {2}).Output("y", {2});
    twice.Node("Relu", {"x"}, {"y"}, "one");
    twice.Node("Neg", {"x"}, {"y"}, "two");
    EXPECT_NE(ParseError(twice.Bytes()).find("output 'y' is already defined"), std::string::npos);

    TestModel noOutput(13);
    noOutput.Input("x", {2}).Output("z", {2});
    noOutput.Node("Relu", {"x"}, {"y"});
    EXPECT_NE(ParseError(noOutput.Bytes()).find("output 'z' is not produced"), std::string::npos);
}

TEST_F(OnnxImporterTest, UnknownAttributeAndBadValuesAreNamed) {
    TestModel m(13);
    m.Input("x", {2}).Output("y", {2});
    AttrInt(m.Node("Relu", {"x"}, {"y"}, "r"), "mystery", 3);
    EXPECT_NE(ParseError(m.Bytes()).find("node 'r' (Relu, opset 13): attribute 'mystery' is not supported"), std::string::npos);

    TestModel cubic(13);
    cubic.Input("x", {1, 1, 2, 2}).Output("y", {1, 1, 4, 4});
    cubic.FloatInit("scales", {4}, {1, 1, 2, 2});
    AttrString(cubic.Node("Resize", {"x", "", "scales"}, {"y"}, "up"), "mode", "area");
    EXPECT_NE(ParseError(cubic.Bytes()).find("attribute mode='area' is not supported"), std::string::npos);

    TestModel wrongType(13);
    wrongType.Input("x", {2, 3}).Output("y", {2, 3});
    AttrFloat(wrongType.Node("Softmax", {"x"}, {"y"}, "s"), "axis", 1.0f);
    EXPECT_NE(ParseError(wrongType.Bytes()).find("attribute 'axis' must be INT, got FLOAT"), std::string::npos);

    TestModel cast(13);
    cast.Input("x", {2}).Output("y", {2}, onnx::TensorProto_DataType_COMPLEX64);
    AttrInt(cast.Node("Cast", {"x"}, {"y"}, "c"), "to", onnx::TensorProto_DataType_COMPLEX64);
    EXPECT_NE(ParseError(cast.Bytes()).find("attribute to=COMPLEX64"), std::string::npos);
}

TEST_F(OnnxImporterTest, UnsupportedDataTypesAreNamed) {
    TestModel init(13);
    init.Input("x", {2}).Output("y", {2});
    onnx::TensorProto* w = init.Graph().add_initializer();
    w->set_name("weights_c64");
    w->set_data_type(onnx::TensorProto_DataType_COMPLEX64);
    w->add_dims(2);
    w->add_float_data(1);
    w->add_float_data(2);
    w->add_float_data(3);
    w->add_float_data(4);
    init.Node("Add", {"x", "weights_c64"}, {"y"});
    const std::string message = ParseError(init.Bytes());
    EXPECT_NE(message.find("initializer 'weights_c64'"), std::string::npos) << message;
    EXPECT_NE(message.find("COMPLEX64"), std::string::npos) << message;

    TestModel input(13);
    input.Input("x128", {2}, onnx::TensorProto_DataType_COMPLEX128).Output("y", {2}, onnx::TensorProto_DataType_COMPLEX128);
    input.Node("Identity", {"x128"}, {"y"});
    const std::string inputMessage = ParseError(input.Bytes());
    EXPECT_NE(inputMessage.find("input 'x128'"), std::string::npos) << inputMessage;
    EXPECT_NE(inputMessage.find("COMPLEX128"), std::string::npos) << inputMessage;
}

// ---- Input shapes ----

TEST_F(OnnxImporterTest, SymbolicInputDimIsDecidedByTheRunOrPinned) {
    TestModel m(13);
    m.Input("data", {-1, 3}).Output("y", {-1, 3});
    m.Node("Relu", {"data"}, {"y"});
    {
        // Not pinned: the dim is kUnknownDim, named after its symbol, and each run decides it.
        IOnnxParserPtr parser = IOnnxParser::Create();
        parser->CreateNetworkFromBinary(m.Bytes(), ".");
        EXPECT_EQ(parser->GetInputs().at(0).m_TensorInfo.GetShape(), TensorShape({kUnknownDim, 3}));
        EXPECT_EQ(parser->GetInputs().at(0).m_TensorInfo.GetShape().ToString(), "?x3");
        EXPECT_EQ(parser->GetInputs().at(0).m_DimNames, (std::vector<std::string>{"batch", ""}));
        const auto outs = ParseAndRun(m.Bytes(), {FloatTensor({4, 3}, {-1, 1, -2, 2, -3, 3, 4, -4, 5, -5, 6, -6})});
        ASSERT_EQ(outs.size(), 1u);
        ExpectFloats(outs[0], {4, 3}, {0, 1, 0, 2, 0, 3, 4, 0, 5, 0, 6, 0});
    }

    IOnnxParser::Options options;
    options.m_InputShapes["data"] = TensorShape({2, 3});
    IOnnxParserPtr parser = IOnnxParser::Create();
    parser->CreateNetworkFromBinary(m.Bytes(), ".", options);
    EXPECT_EQ(parser->GetInputs().at(0).m_TensorInfo.GetShape(), TensorShape({2, 3}));
    EXPECT_EQ(parser->GetOutputs().at(0).m_TensorInfo.GetShape(), TensorShape({kUnknownDim, 3}));  // as declared
    const auto outs = ParseAndRun(m.Bytes(), {FloatTensor({2, 3}, {-1, 1, -2, 2, -3, 3})}, options);
    ASSERT_EQ(outs.size(), 1u);
    ExpectFloats(outs[0], {2, 3}, {0, 1, 0, 2, 0, 3});

    IOnnxParser::Options contradicting;
    contradicting.m_InputShapes["data"] = TensorShape({2, 4});
    EXPECT_NE(ParseError(m.Bytes(), contradicting).find("contradicts dim 1 = 3"), std::string::npos);
    IOnnxParser::Options wrongRank;
    wrongRank.m_InputShapes["data"] = TensorShape({6});
    EXPECT_NE(ParseError(m.Bytes(), wrongRank).find("has rank 1"), std::string::npos);
    IOnnxParser::Options unknownName;
    unknownName.m_InputShapes["date"] = TensorShape({2, 3});
    unknownName.m_InputShapes["data"] = TensorShape({2, 3});
    EXPECT_NE(ParseError(m.Bytes(), unknownName).find("no input of that name (inputs: data)"), std::string::npos);
}

// ---- External data ----

onnx::TensorProto ExternalFloatTensor(const std::string& name, int64_t count, const std::string& location,
                                      const std::string& offset, const std::string& length) {
    onnx::TensorProto t;
    t.set_name(name);
    t.set_data_type(kFloat);
    t.add_dims(count);
    t.set_data_location(onnx::TensorProto_DataLocation_EXTERNAL);
    auto add = [&](const char* key, const std::string& value) {
        auto* entry = t.add_external_data();
        entry->set_key(key);
        entry->set_value(value);
    };
    add("location", location);
    if (!offset.empty()) add("offset", offset);
    if (!length.empty()) add("length", length);
    return t;
}

TestModel ExternalModel(const std::string& location, const std::string& offset, const std::string& length) {
    TestModel m(13);
    m.Input("x", {3}).Output("y", {3});
    *m.Graph().add_initializer() = ExternalFloatTensor("w_ext", 3, location, offset, length);
    m.Node("Add", {"x", "w_ext"}, {"y"}, "add");
    return m;
}

TEST_F(OnnxImporterTest, ExternalDataIsReadRelativeToTheModel) {
    const std::vector<float> w = {10, 20, 30};
    std::string file(8, 'z');  // 8 bytes before the tensor
    file.append(reinterpret_cast<const char*>(w.data()), w.size() * sizeof(float));
    WriteFile("weights.bin", file);
    const std::string path = WriteFile("external.onnx", ExternalModel("weights.bin", "8", "12").Bytes());

    IOnnxParserPtr parser = IOnnxParser::Create();
    INetworkPtr network = parser->CreateNetworkFromBinaryFile(path);
    IRuntimePtr runtime = IRuntime::Create(IRuntime::CreationOptions());
    NetworkId id = 0;
    ASSERT_EQ(runtime->LoadNetwork(id, Optimize(*network, {"CpuRef"}, runtime->GetDeviceSpec())), Status::Success);
    const OwnedTensor x = FloatTensor({3}, {1, 2, 3});
    OwnedTensor y = FloatTensor({3}, {0, 0, 0});
    ASSERT_EQ(runtime->EnqueueWorkload(id, {{0, x.AsConstTensor()}}, {{0, y.AsTensor()}}), Status::Success);
    EXPECT_EQ(Floats(y), (std::vector<float>{11, 22, 33}));

    // The in-memory form resolves against the given folder; no length means "to the end".
    EXPECT_NO_THROW(IOnnxParser::Create()->CreateNetworkFromBinary(ExternalModel("weights.bin", "8", "").Bytes(),
                                                                     m_Dir.string()));
}

TEST_F(OnnxImporterTest, MissingExternalDataFileIsNamed) {
    const std::string path = WriteFile("external.onnx", ExternalModel("missing.bin", "", "").Bytes());
    try {
        IOnnxParser::Create()->CreateNetworkFromBinaryFile(path);
        FAIL() << "missing external data accepted";
    } catch (const FileNotFoundException& e) {
        EXPECT_NE(std::string(e.what()).find("initializer 'w_ext'"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find((m_Dir / "missing.bin").string()), std::string::npos) << e.what();
    }
}

TEST_F(OnnxImporterTest, ExternalDataMustStayInTheModelFolder) {
    for (const char* location : {"../weights.bin", "/etc/passwd", "sub/../../weights.bin"}) {
        const std::string message = ParseError(ExternalModel(location, "", "").Bytes(), {}, m_Dir.string());
        EXPECT_NE(message.find("must be a relative path inside the model's folder"), std::string::npos) << message;
    }
}

TEST_F(OnnxImporterTest, ShortExternalDataFileIsParseException) {
    WriteFile("short.bin", std::string(10, 'z'));
    const std::string path = WriteFile("external.onnx", ExternalModel("short.bin", "4", "12").Bytes());
    try {
        IOnnxParser::Create()->CreateNetworkFromBinaryFile(path);
        FAIL() << "short external data accepted";
    } catch (const FileNotFoundException& e) {
        FAIL() << "the file exists: " << e.what();
    } catch (const ParseException& e) {
        EXPECT_NE(std::string(e.what()).find("too short"), std::string::npos) << e.what();
    }
    // Without a length the available bytes (6) must still match the tensor (12).
    const std::string noLength = WriteFile("external2.onnx", ExternalModel("short.bin", "4", "").Bytes());
    EXPECT_THROW(IOnnxParser::Create()->CreateNetworkFromBinaryFile(noLength), ParseException);
}

// ---- Opset-dependent forms ----

std::vector<float> SoftmaxRows(const std::vector<float>& x, std::size_t rowLength) {
    std::vector<float> y(x.size());
    for (std::size_t r = 0; r < x.size() / rowLength; ++r) {
        double maxValue = -INFINITY, sum = 0;
        for (std::size_t i = 0; i < rowLength; ++i) maxValue = std::max(maxValue, double(x[r * rowLength + i]));
        for (std::size_t i = 0; i < rowLength; ++i) sum += std::exp(x[r * rowLength + i] - maxValue);
        for (std::size_t i = 0; i < rowLength; ++i) y[r * rowLength + i] = float(std::exp(x[r * rowLength + i] - maxValue) / sum);
    }
    return y;
}

TEST_F(OnnxImporterTest, SoftmaxDefaultAxisDependsOnOpset) {
    const std::vector<float> x = Iota(24, -1.0f, 0.13f);
    for (int64_t opset : {11, 13}) {
        TestModel m(opset);
        m.Input("x", {2, 3, 4}).Output("y", {2, 3, 4});
        m.Node("Softmax", {"x"}, {"y"});
        const auto outs = ParseAndRun(m.Bytes(), {FloatTensor({2, 3, 4}, x)});
        ASSERT_EQ(outs.size(), 1u);
        // Opset 11: coerced to 2-D at axis 1, i.e. rows of 3*4; opset 13: the last axis.
        ExpectFloats(outs[0], {2, 3, 4}, SoftmaxRows(x, opset < 13 ? 12 : 4));
    }
}

TEST_F(OnnxImporterTest, ClipBoundsDependOnOpset) {
    const std::vector<float> x = {-2, -0.25f, 0, 0.75f, 3};
    TestModel clip6(10);
    clip6.Input("x", {5}).Output("y", {5});
    auto& node6 = clip6.Node("Clip", {"x"}, {"y"});
    AttrFloat(node6, "min", -0.5f);
    AttrFloat(node6, "max", 0.5f);
    ExpectFloats(ParseAndRun(clip6.Bytes(), {FloatTensor({5}, x)}).at(0), {5}, {-0.5f, -0.25f, 0, 0.5f, 0.5f});

    // Opset 11+: bounds are inputs; an omitted min does not clamp.
    TestModel clip11(11);
    clip11.Input("x", {5}).Output("y", {5});
    clip11.FloatInit("hi", {}, {0.5f});
    clip11.Node("Clip", {"x", "", "hi"}, {"y"});
    ExpectFloats(ParseAndRun(clip11.Bytes(), {FloatTensor({5}, x)}).at(0), {5}, {-2, -0.25f, 0, 0.5f, 0.5f});

    // A bound fed by a graph input (or computed): Maximum / Minimum layers, numpy's clip.
    TestModel computed(13);
    computed.Input("x", {5}).Input("lo", {}).Output("y", {5});
    computed.Node("Clip", {"x", "lo"}, {"y"}, "clip");
    ExpectFloats(ParseAndRun(computed.Bytes(), {FloatTensor({5}, x), FloatTensor({}, {-0.5f})}).at(0), {5},
                 {-0.5f, -0.25f, 0, 0.75f, 3});
}

TEST_F(OnnxImporterTest, SplitFormsDependOnOpset) {
    const std::vector<float> x = Iota(6);
    TestModel split11(11);
    split11.Input("x", {6}).Output("a", {2}).Output("b", {4});
    AttrInts(split11.Node("Split", {"x"}, {"a", "b"}), "split", {2, 4});
    auto outs = ParseAndRun(split11.Bytes(), {FloatTensor({6}, x)});
    ASSERT_EQ(outs.size(), 2u);
    ExpectFloats(outs[0], {2}, {0, 1});
    ExpectFloats(outs[1], {4}, {2, 3, 4, 5});

    TestModel split13(13);
    split13.Input("x", {6}).Output("a", {5}).Output("b", {1});
    split13.IntInit("sizes", {2}, {5, 1});
    split13.Node("Split", {"x", "sizes"}, {"a", "b"});
    outs = ParseAndRun(split13.Bytes(), {FloatTensor({6}, x)});
    ASSERT_EQ(outs.size(), 2u);
    ExpectFloats(outs[0], {5}, {0, 1, 2, 3, 4});
    ExpectFloats(outs[1], {1}, {5});

    TestModel split18(18);
    split18.Input("x", {6}).Output("a", {2}).Output("b", {2}).Output("c", {2});
    AttrInt(split18.Node("Split", {"x"}, {"a", "b", "c"}), "num_outputs", 3);
    outs = ParseAndRun(split18.Bytes(), {FloatTensor({6}, x)});
    ASSERT_EQ(outs.size(), 3u);
    ExpectFloats(outs[2], {2}, {4, 5});

    TestModel mismatch(18);
    mismatch.Input("x", {6}).Output("a", {3}).Output("b", {3});
    AttrInt(mismatch.Node("Split", {"x"}, {"a", "b"}), "num_outputs", 3);
    EXPECT_NE(ParseError(mismatch.Bytes()).find("num_outputs=3 but the node has 2 outputs"), std::string::npos);
}

TEST_F(OnnxImporterTest, SqueezeAndUnsqueezeAxesDependOnOpset) {
    const std::vector<float> x = Iota(6);
    TestModel squeeze11(11);
    squeeze11.Input("x", {1, 3, 1, 2}).Output("y", {3, 2});
    AttrInts(squeeze11.Node("Squeeze", {"x"}, {"y"}), "axes", {0, 2});
    ExpectFloats(ParseAndRun(squeeze11.Bytes(), {FloatTensor({1, 3, 1, 2}, x)}).at(0), {3, 2}, x);

    TestModel squeeze13(13);
    squeeze13.Input("x", {1, 3, 1, 2}).Output("y", {3, 1, 2});
    squeeze13.IntInit("axes", {1}, {0});
    squeeze13.Node("Squeeze", {"x", "axes"}, {"y"});
    ExpectFloats(ParseAndRun(squeeze13.Bytes(), {FloatTensor({1, 3, 1, 2}, x)}).at(0), {3, 1, 2}, x);

    TestModel unsqueeze11(11);
    unsqueeze11.Input("x", {3, 2}).Output("y", {3, 2, 1});
    AttrInts(unsqueeze11.Node("Unsqueeze", {"x"}, {"y"}), "axes", {-1});
    ExpectFloats(ParseAndRun(unsqueeze11.Bytes(), {FloatTensor({3, 2}, x)}).at(0), {3, 2, 1}, x);

    TestModel unsqueeze13(13);
    unsqueeze13.Input("x", {3, 2}).Output("y", {1, 3, 2});
    unsqueeze13.IntInit("axes", {1}, {0});
    unsqueeze13.Node("Unsqueeze", {"x", "axes"}, {"y"});
    ExpectFloats(ParseAndRun(unsqueeze13.Bytes(), {FloatTensor({3, 2}, x)}).at(0), {1, 3, 2}, x);
}

TEST_F(OnnxImporterTest, ReduceSumAxesDependOnOpset) {
    const std::vector<float> x = {1, 2, 3, 4, 5, 6};
    TestModel reduce11(11);
    reduce11.Input("x", {2, 3}).Output("y", {2});
    auto& node11 = reduce11.Node("ReduceSum", {"x"}, {"y"});
    AttrInts(node11, "axes", {1});
    AttrInt(node11, "keepdims", 0);
    ExpectFloats(ParseAndRun(reduce11.Bytes(), {FloatTensor({2, 3}, x)}).at(0), {2}, {6, 15});

    TestModel reduce13(13);
    reduce13.Input("x", {2, 3}).Output("y", {1, 3});
    reduce13.IntInit("axes", {1}, {0});
    reduce13.Node("ReduceSum", {"x", "axes"}, {"y"});
    ExpectFloats(ParseAndRun(reduce13.Bytes(), {FloatTensor({2, 3}, x)}).at(0), {1, 3}, {5, 7, 9});

    // Before opset 18 ReduceMean keeps its axes attribute.
    TestModel mean13(13);
    mean13.Input("x", {2, 3}).Output("y", {2, 1});
    AttrInts(mean13.Node("ReduceMean", {"x"}, {"y"}), "axes", {-1});
    ExpectFloats(ParseAndRun(mean13.Bytes(), {FloatTensor({2, 3}, x)}).at(0), {2, 1}, {2, 5});

    TestModel mean18(18);
    mean18.Input("x", {2, 3}).Output("y", {2, 1});
    mean18.IntInit("axes", {1}, {1});
    mean18.Node("ReduceMean", {"x", "axes"}, {"y"});
    ExpectFloats(ParseAndRun(mean18.Bytes(), {FloatTensor({2, 3}, x)}).at(0), {2, 1}, {2, 5});
}

TEST_F(OnnxImporterTest, SliceFormsDependOnOpset) {
    const std::vector<float> x = Iota(10);
    TestModel slice9(9);
    slice9.Input("x", {10}).Output("y", {6});
    auto& node9 = slice9.Node("Slice", {"x"}, {"y"});
    AttrInts(node9, "starts", {2});
    AttrInts(node9, "ends", {8});
    ExpectFloats(ParseAndRun(slice9.Bytes(), {FloatTensor({10}, x)}).at(0), {6}, {2, 3, 4, 5, 6, 7});

    TestModel slice13(13);
    slice13.Input("x", {10}).Output("y", {4});
    slice13.IntInit("starts", {1}, {8}).IntInit("ends", {1}, {1}).IntInit("axes", {1}, {0}).IntInit("steps", {1}, {-2});
    slice13.Node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"});
    ExpectFloats(ParseAndRun(slice13.Bytes(), {FloatTensor({10}, x)}).at(0), {4}, {8, 6, 4, 2});
}

TEST_F(OnnxImporterTest, Resize10NearestRoundsLikeOnnxruntime) {
    // onnxruntime floors where a dim is upsampled and ceils where it is downsampled (values
    // checked against onnxruntime 1.x); one model mixing both is refused.
    const std::vector<float> x = Iota(5);
    struct Case {
        float m_Scale;
        std::vector<float> m_Want;
    };
    for (const Case& c : {Case{0.6f, {0, 2, 4}}, Case{1.5f, {0, 0, 1, 2, 2, 3, 4}}}) {
        TestModel m(10);
        const auto n = static_cast<int64_t>(c.m_Want.size());
        m.Input("x", {1, 1, 1, 5}).Output("y", {1, 1, 1, n});
        m.FloatInit("scales", {4}, {1, 1, 1, c.m_Scale});
        m.Node("Resize", {"x", "scales"}, {"y"});
        ExpectFloats(ParseAndRun(m.Bytes(), {FloatTensor({1, 1, 1, 5}, x)}).at(0), {1, 1, 1, static_cast<unsigned>(n)}, c.m_Want);
    }
    TestModel mixed(10);
    mixed.Input("x", {1, 1, 4, 4}).Output("y", {1, 1, 8, 2});
    mixed.FloatInit("scales", {4}, {1, 1, 2, 0.5f});
    mixed.Node("Resize", {"x", "scales"}, {"y"});
    EXPECT_NE(ParseError(mixed.Bytes()).find("both up- and downsample"), std::string::npos);
}

TEST_F(OnnxImporterTest, ResizeWithComputedSizes) {
    // Resize-13 with sizes = Concat(Shape(x)[:2], [4, 6]) and an omitted roi/scales: the layer gets
    // placeholders for the omitted middle inputs and the computed sizes as its last input.
    TestModel m(13);
    m.Input("x", {1, 1, 2, 3}).Output("y", {1, 1, 4, 6});
    m.IntInit("start", {1}, {0}).IntInit("end", {1}, {2}).IntInit("hw", {2}, {4, 6});
    m.Node("Shape", {"x"}, {"shape"});
    m.Node("Slice", {"shape", "start", "end"}, {"nc"});
    AttrInt(m.Node("Concat", {"nc", "hw"}, {"sizes"}), "axis", 0);
    auto& resize = m.Node("Resize", {"x", "", "", "sizes"}, {"y"});
    AttrString(resize, "mode", "nearest");
    AttrString(resize, "coordinate_transformation_mode", "asymmetric");
    AttrString(resize, "nearest_mode", "floor");
    const auto outs = ParseAndRun(m.Bytes(), {FloatTensor({1, 1, 2, 3}, {1, 2, 3, 4, 5, 6})});
    ASSERT_EQ(outs.size(), 1u);
    ExpectFloats(outs[0], {1, 1, 4, 6}, {1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 4, 4, 5, 5, 6, 6});
}

// ---- Parameter inputs computed by other nodes ----

TEST_F(OnnxImporterTest, ComputedParameterInputsAreConnected) {
    // Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])): the shape is a computed chain
    // the core folds before reading it.
    TestModel m(13);
    m.Input("x", {2, 3, 4}).Output("y", {2, 12});
    m.IntInit("zero", {}, {0}).IntInit("axis0", {1}, {0}).IntInit("minus_one", {1}, {-1});
    m.Node("Shape", {"x"}, {"shape"});
    AttrInt(m.Node("Gather", {"shape", "zero"}, {"batch"}), "axis", 0);
    m.Node("Unsqueeze", {"batch", "axis0"}, {"batch1"});
    AttrInt(m.Node("Concat", {"batch1", "minus_one"}, {"target"}), "axis", 0);
    m.Node("Reshape", {"x", "target"}, {"y"});
    const std::vector<float> x = Iota(24);
    ExpectFloats(ParseAndRun(m.Bytes(), {FloatTensor({2, 3, 4}, x)}).at(0), {2, 12}, x);

    // A Slice whose starts come through an Identity; its other parameters are constants.
    TestModel slice(13);
    slice.Input("x", {10}).Output("y", {3});
    slice.IntInit("starts", {1}, {4}).IntInit("ends", {1}, {7});
    slice.Node("Identity", {"starts"}, {"starts_copy"});
    slice.Node("Slice", {"x", "starts_copy", "ends"}, {"y"});
    ExpectFloats(ParseAndRun(slice.Bytes(), {FloatTensor({10}, Iota(10))}).at(0), {3}, {4, 5, 6});
}

// ---- Ops with extra outputs or training behaviour ----

TEST_F(OnnxImporterTest, DropoutIsIdentityWithAnAllTrueMask) {
    TestModel ok(13);
    ok.Input("x", {3}).Output("y", {3});
    onnx::TensorProto training;
    training.set_name("training");
    training.set_data_type(onnx::TensorProto_DataType_BOOL);
    training.add_int32_data(0);
    *ok.Graph().add_initializer() = training;
    ok.FloatInit("ratio", {}, {0.5f});
    ok.Node("Dropout", {"x", "ratio", "training"}, {"y", "unused_mask"});
    ExpectFloats(ParseAndRun(ok.Bytes(), {FloatTensor({3}, {1, -2, 3})}).at(0), {3}, {1, -2, 3});

    TestModel mask(13);  // inference keeps every element: the mask is all true
    mask.Input("x", {3}).Output("y", {3}).Output("m", {3}, onnx::TensorProto_DataType_BOOL);
    mask.Node("Dropout", {"x"}, {"y", "m"}, "drop");
    const auto outs = ParseAndRun(mask.Bytes(), {FloatTensor({3}, {1, -2, 3})});
    ASSERT_EQ(outs.size(), 2u);
    ExpectFloats(outs[0], {3}, {1, -2, 3});
    EXPECT_EQ(outs[1].m_Info.GetDataType(), DataType::Boolean);
    EXPECT_EQ(outs[1].m_Data, (std::vector<uint8_t>{1, 1, 1}));

    TestModel mask7(7);  // before opset 10 the mask has X's type, which Trellis does not produce
    mask7.Input("x", {3}).Output("y", {3}).Output("m", {3});
    mask7.Node("Dropout", {"x"}, {"y", "m"}, "drop7");
    const std::string message = ParseError(mask7.Bytes());
    EXPECT_NE(message.find("node 'drop7' (Dropout, opset 7): output 1 (mask) is used; before opset 10"), std::string::npos)
        << message;

    TestModel train(13);
    train.Input("x", {3}).Output("y", {3});
    training.set_int32_data(0, 1);
    *train.Graph().add_initializer() = training;
    train.Node("Dropout", {"x", "", "training"}, {"y"});
    EXPECT_NE(ParseError(train.Bytes()).find("training_mode) is true with a ratio other than a constant 0 (input 1 absent"),
              std::string::npos);

    TestModel trainHalf(13);
    trainHalf.Input("x", {3}).Output("y", {3});
    *trainHalf.Graph().add_initializer() = training;
    trainHalf.FloatInit("ratio", {}, {0.5f});
    trainHalf.Node("Dropout", {"x", "ratio", "training"}, {"y"});
    EXPECT_NE(ParseError(trainHalf.Bytes()).find("training_mode) is true with a ratio other than a constant 0"),
              std::string::npos);

    TestModel trainNothing(13);  // training mode that drops nothing (torchvision 0.14's Swin): the input
    trainNothing.Input("x", {3}).Output("y", {3}).Output("m", {3}, onnx::TensorProto_DataType_BOOL);
    *trainNothing.Graph().add_initializer() = training;
    trainNothing.FloatInit("ratio", {}, {0.0f});
    trainNothing.Node("Dropout", {"x", "ratio", "training"}, {"y", "m"});
    const auto kept = ParseAndRun(trainNothing.Bytes(), {FloatTensor({3}, {1, -2, 3})});
    ASSERT_EQ(kept.size(), 2u);
    ExpectFloats(kept[0], {3}, {1, -2, 3});
    EXPECT_EQ(kept[1].m_Data, (std::vector<uint8_t>{1, 1, 1}));
}

TEST_F(OnnxImporterTest, MaxPoolIndicesAreProducedWhenUsed) {
    TestModel m(13);
    m.Input("x", {1, 1, 4, 4}).Output("y", {1, 1, 2, 2}).Output("i", {1, 1, 2, 2}, kInt64);
    auto& node = m.Node("MaxPool", {"x"}, {"y", "i"}, "pool");
    AttrInts(node, "kernel_shape", {2, 2});
    AttrInts(node, "strides", {2, 2});
    const auto outs = ParseAndRun(m.Bytes(), {FloatTensor({1, 1, 4, 4}, {0, 9, 1, 2,  //
                                                                        3, 4, 8, 5,  //
                                                                        7, 6, 5, 5,  //
                                                                        6, 7, 4, 1})});
    ASSERT_EQ(outs.size(), 2u);
    ExpectFloats(outs[0], {1, 1, 2, 2}, {9, 8, 7, 5});
    std::vector<int64_t> indices(4);
    std::memcpy(indices.data(), outs[1].m_Data.data(), sizeof(int64_t) * 4);
    EXPECT_EQ(indices, (std::vector<int64_t>{1, 6, 8, 10}));  // ties keep the first in window order
}

// ---- Variadic ops and Constant nodes ----

TEST_F(OnnxImporterTest, VariadicMaxBecomesAChain) {
    TestModel m(13);
    m.Input("a", {3}).Input("b", {3}).Input("c", {3}).Output("y", {3}).Output("same", {3});
    m.Node("Max", {"a", "b", "c"}, {"y"}, "max3");
    m.Node("Min", {"a"}, {"same"}, "min1");
    const auto outs = ParseAndRun(m.Bytes(), {FloatTensor({3}, {1, 5, -1}), FloatTensor({3}, {4, 2, -3}),
                                              FloatTensor({3}, {0, 3, 7})});
    ASSERT_EQ(outs.size(), 2u);
    ExpectFloats(outs[0], {3}, {4, 5, 7});
    ExpectFloats(outs[1], {3}, {1, 5, -1});
}

TEST_F(OnnxImporterTest, ConstantNodeForms) {
    TestModel m(13);
    m.Input("x", {2, 3}).Output("y", {3, 2});
    auto& values = m.Node("Constant", {}, {"bias"});
    auto* floats = values.add_attribute();
    floats->set_name("value_floats");
    floats->set_type(onnx::AttributeProto_AttributeType_FLOATS);
    for (float f : {100.0f, 200.0f}) floats->add_floats(f);
    AttrInts(m.Node("Constant", {}, {"shape"}), "value_ints", {3, 2});
    m.Node("Reshape", {"x", "shape"}, {"r"});
    m.Node("Add", {"r", "bias"}, {"y"});
    ExpectFloats(ParseAndRun(m.Bytes(), {FloatTensor({2, 3}, Iota(6))}).at(0), {3, 2}, {100, 201, 102, 203, 104, 205});

    TestModel both(13);
    both.Input("x", {2}).Output("y", {2});
    auto& twoValues = both.Node("Constant", {}, {"c"}, "const");
    AttrInt(twoValues, "value_int", 1);
    AttrFloat(twoValues, "value_float", 1.0f);
    both.Node("Add", {"x", "c"}, {"y"});
    EXPECT_NE(ParseError(both.Bytes()).find("needs exactly one of the attributes"), std::string::npos);
}

// ---- Legacy opsets (1-6) ----

TEST_F(OnnxImporterTest, LegacyConsumedInputsIsIgnored) {
    TestModel m(6);
    m.Input("x", {3}).Output("y", {3});
    AttrInts(m.Node("Relu", {"x"}, {"y"}), "consumed_inputs", {0});
    ExpectFloats(ParseAndRun(m.Bytes(), {FloatTensor({3}, {-1, 0.5f, 2})}).at(0), {3}, {0, 0.5f, 2});
}

TEST_F(OnnxImporterTest, LegacyBroadcastWithAxisAlignsTheSecondInput) {
    // A[2,3,2] + B[3] with broadcast=1, axis=1: B runs along dim 1, not the last dim.
    TestModel m(6);
    m.Input("a", {2, 3, 2}).Input("b", {3}).Output("y", {2, 3, 2});
    auto& add = m.Node("Add", {"a", "b"}, {"y"}, "add");
    AttrInt(add, "broadcast", 1);
    AttrInt(add, "axis", 1);
    const std::vector<float> a = Iota(12);
    const std::vector<float> b = {100, 200, 300};
    std::vector<float> want(12);
    for (std::size_t i = 0; i < 12; ++i) want[i] = a[i] + b[(i / 2) % 3];
    ExpectFloats(ParseAndRun(m.Bytes(), {FloatTensor({2, 3, 2}, a), FloatTensor({3}, b)}).at(0), {2, 3, 2}, want);

    // axis at the trailing position is numpy's rule; broadcast=0 with equal shapes is plain.
    TestModel trailing(6);
    trailing.Input("a", {2, 3}).Input("b", {3}).Output("y", {2, 3});
    auto& mul = trailing.Node("Mul", {"a", "b"}, {"y"});
    AttrInt(mul, "broadcast", 1);
    AttrInt(mul, "axis", 1);
    ExpectFloats(ParseAndRun(trailing.Bytes(), {FloatTensor({2, 3}, Iota(6)), FloatTensor({3}, {1, 2, 3})}).at(0),
                 {2, 3}, {0, 2, 6, 3, 8, 15});

    // B does not fit A from that axis on.
    TestModel bad(6);
    bad.Input("a", {2, 3}).Input("b", {3}).Output("y", {2, 3});
    auto& sub = bad.Node("Sub", {"a", "b"}, {"y"}, "sub");
    AttrInt(sub, "broadcast", 1);
    AttrInt(sub, "axis", 2);
    const std::string message = ParseError(bad.Bytes());
    EXPECT_NE(message.find("node 'sub' (Sub, opset 6): attribute axis=2 does not fit"), std::string::npos) << message;
}

TEST_F(OnnxImporterTest, LegacyBatchNormalizationAndDropoutNeedIsTest) {
    TestModel m(6);
    m.Input("x", {1, 2, 2}).Output("y", {1, 2, 2});
    m.FloatInit("s", {2}, {2, 1}).FloatInit("b", {2}, {0, 1}).FloatInit("mean", {2}, {1, 0}).FloatInit("var", {2}, {1, 4});
    auto& bn = m.Node("BatchNormalization", {"x", "s", "b", "mean", "var"}, {"t"}, "bn");
    AttrInt(bn, "is_test", 1);
    AttrFloat(bn, "epsilon", 0.0f);
    AttrFloat(bn, "momentum", 0.9f);
    AttrInts(bn, "consumed_inputs", {0, 0, 0, 1, 1});
    auto& drop = m.Node("Dropout", {"t"}, {"y"});
    AttrInt(drop, "is_test", 1);
    AttrFloat(drop, "ratio", 0.5f);
    // channel 0: (x - 1) / 1 * 2 + 0; channel 1: x / 2 * 1 + 1
    ExpectFloats(ParseAndRun(m.Bytes(), {FloatTensor({1, 2, 2}, {1, 3, 2, 4})}).at(0), {1, 2, 2}, {0, 4, 2, 3});

    TestModel train(6);
    train.Input("x", {1, 2, 2}).Output("y", {1, 2, 2});
    train.Node("Dropout", {"x"}, {"y"}, "drop");
    const std::string message = ParseError(train.Bytes());
    EXPECT_NE(message.find("node 'drop' (Dropout, opset 6): attribute is_test=0 (training mode"), std::string::npos)
        << message;
}

TEST_F(OnnxImporterTest, LegacyReshapeConcatAndGemmForms) {
    // Reshape-1: shape attribute; Concat-1: axis defaults to 1; Gemm-1: broadcast attribute.
    TestModel m(3);
    m.Input("x", {6}).Input("z", {2, 1}).Output("y", {2, 4});
    AttrInts(m.Node("Reshape", {"x"}, {"r"}), "shape", {2, -1});
    m.Node("Concat", {"r", "z"}, {"y"});
    ExpectFloats(ParseAndRun(m.Bytes(), {FloatTensor({6}, Iota(6)), FloatTensor({2, 1}, {9, 8})}).at(0), {2, 4},
                 {0, 1, 2, 9, 3, 4, 5, 8});

    TestModel gemm(6);
    gemm.Input("a", {2, 2}).Output("y", {2, 2});
    gemm.FloatInit("b", {2, 2}, {1, 0, 0, 1}).FloatInit("c", {2}, {10, 20});
    AttrInt(gemm.Node("Gemm", {"a", "b", "c"}, {"y"}), "broadcast", 1);
    ExpectFloats(ParseAndRun(gemm.Bytes(), {FloatTensor({2, 2}, {1, 2, 3, 4})}).at(0), {2, 2}, {11, 22, 13, 24});

    TestModel missing(4);
    missing.Input("x", {6}).Output("y", {6});
    missing.Node("Reshape", {"x"}, {"y"}, "reshape");
    EXPECT_NE(ParseError(missing.Bytes()).find("node 'reshape' (Reshape, opset 4): attribute shape is missing"),
              std::string::npos);
}

TEST_F(OnnxImporterTest, LegacyFormsWithoutAConverterAreRefused) {
    TestModel tile(5);
    tile.Input("x", {2}).Input("t", {1}, kInt64).Input("a", {1}, kInt64).Output("y", {4});
    tile.Node("Tile", {"x", "t", "a"}, {"y"}, "tile");
    std::string message = ParseError(tile.Bytes());
    EXPECT_NE(message.find("node 'tile' (Tile, opset 5): Tile before opset 6"), std::string::npos) << message;

    TestModel pad(1);
    pad.Input("x", {2}).Output("y", {4});
    AttrInts(pad.Node("Pad", {"x"}, {"y"}, "pad"), "paddings", {1, 1});
    message = ParseError(pad.Bytes());
    EXPECT_NE(message.find("node 'pad' (Pad, opset 1): Pad-1 (attribute 'paddings')"), std::string::npos) << message;
}

TEST_F(OnnxImporterTest, PowWithMixedTypesIsCast) {
    TestModel m(15);
    m.Input("x", {3}).Input("e", {3}, kInt64).Output("y", {3});
    m.Node("Pow", {"x", "e"}, {"y"});
    OwnedTensor e;
    e.m_Info = TensorInfo(TensorShape({3}), DataType::Signed64);
    const std::vector<int64_t> exponents = {2, 3, 0};
    e.m_Data.resize(sizeof(int64_t) * 3);
    std::memcpy(e.m_Data.data(), exponents.data(), e.m_Data.size());
    ExpectFloats(ParseAndRun(m.Bytes(), {FloatTensor({3}, {3, -2, 5}), e}).at(0), {3}, {9, -8, 1});

    // An integer base with a float exponent: computed in float, truncated back to the base's type.
    TestModel ints(15);
    ints.Input("x", {3}, kInt64).Input("e", {3}).Output("y", {3}, kInt64);
    ints.Node("Pow", {"x", "e"}, {"y"});
    OwnedTensor x;
    x.m_Info = TensorInfo(TensorShape({3}), DataType::Signed64);
    const std::vector<int64_t> bases = {3, 2, 10};
    x.m_Data.resize(sizeof(int64_t) * 3);
    std::memcpy(x.m_Data.data(), bases.data(), x.m_Data.size());
    const auto outs = ParseAndRun(ints.Bytes(), {x, FloatTensor({3}, {4, 0.5f, 2})});
    ASSERT_EQ(outs.size(), 1u);
    ASSERT_EQ(outs[0].m_Info.GetDataType(), DataType::Signed64);
    int64_t got[3];
    std::memcpy(got, outs[0].m_Data.data(), sizeof(got));
    EXPECT_EQ(got[0], 81);
    EXPECT_EQ(got[1], 1);  // sqrt(2) = 1.41 truncated
    EXPECT_EQ(got[2], 100);
}

TEST_F(OnnxImporterTest, Uint16TensorFileIsReadAsUInt16) {
    // ONNX's test data also stores bfloat16 bits this way; `trellis onnx-test` retypes such a
    // tensor where the model expects BFloat16 (the castlike/cast BFLOAT16 conformance cases).
    onnx::TensorProto t;
    t.set_data_type(onnx::TensorProto_DataType_UINT16);
    t.add_dims(2);
    t.add_int32_data(0x3F80);
    t.add_int32_data(0xC040);
    const OwnedTensor loaded = LoadTensorFile(WriteFile("u16.pb", t.SerializeAsString()));
    ASSERT_EQ(loaded.m_Info.GetDataType(), DataType::UInt16);
    ASSERT_EQ(loaded.m_Data.size(), 4u);
    uint16_t bits[2];
    std::memcpy(bits, loaded.m_Data.data(), 4);
    EXPECT_EQ(bits[0], 0x3F80);
    EXPECT_EQ(bits[1], 0xC040);
}

TEST_F(OnnxImporterTest, UpsampleIsResizeWithScales) {
    // [1,1,2,2] nearest x2 in H and W: each value becomes a 2x2 block.
    const std::vector<float> want = {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4};
    TestModel seven(7);
    seven.Input("x", {1, 1, 2, 2}).Output("y", {1, 1, 4, 4});
    auto* scales = seven.Node("Upsample", {"x"}, {"y"}).add_attribute();
    scales->set_name("scales");
    scales->set_type(onnx::AttributeProto_AttributeType_FLOATS);
    for (float f : {1.0f, 1.0f, 2.0f, 2.0f}) scales->add_floats(f);
    ExpectFloats(ParseAndRun(seven.Bytes(), {FloatTensor({1, 1, 2, 2}, {1, 2, 3, 4})}).at(0), {1, 1, 4, 4}, want);

    TestModel nine(9);
    nine.Input("x", {1, 1, 2, 2}).Output("y", {1, 1, 4, 4});
    nine.FloatInit("s", {4}, {1, 1, 2, 2});
    nine.Node("Upsample", {"x", "s"}, {"y"});
    ExpectFloats(ParseAndRun(nine.Bytes(), {FloatTensor({1, 1, 2, 2}, {1, 2, 3, 4})}).at(0), {1, 1, 4, 4}, want);

    TestModel shrink(9);
    shrink.Input("x", {1, 1, 2, 2}).Output("y", {1, 1, 1, 1});
    shrink.FloatInit("s", {4}, {1, 1, 0.5f, 0.5f});
    shrink.Node("Upsample", {"x", "s"}, {"y"}, "up");
    const std::string message = ParseError(shrink.Bytes());
    EXPECT_NE(message.find("node 'up' (Upsample, opset 9): a scale of 0.5"), std::string::npos) << message;
}

TEST_F(OnnxImporterTest, LegacyPReluSlopeIsPerChannel) {
    // PRelu-6: a slope of C values applies along X's dim 1 (X is [1, 2, 3]).
    TestModel m(6);
    m.Input("x", {1, 2, 3}).Output("y", {1, 2, 3});
    m.FloatInit("slope", {2}, {0.5f, 2});
    m.Node("PRelu", {"x", "slope"}, {"y"});
    ExpectFloats(ParseAndRun(m.Bytes(), {FloatTensor({1, 2, 3}, {-2, 1, -4, -1, 3, -3})}).at(0), {1, 2, 3},
                 {-1, 1, -2, -2, 3, -6});
}

TEST_F(OnnxImporterTest, QuantizationAndLossAttributesAreChecked) {
    TestModel shift(11);
    shift.Input("x", {2}, onnx::TensorProto_DataType_UINT8).Input("s", {2}, onnx::TensorProto_DataType_UINT8);
    shift.Output("y", {2}, onnx::TensorProto_DataType_UINT8);
    AttrString(shift.Node("BitShift", {"x", "s"}, {"y"}, "shift"), "direction", "UP");
    std::string message = ParseError(shift.Bytes());
    EXPECT_NE(message.find("node 'shift' (BitShift, opset 11): attribute direction='UP' must be LEFT or RIGHT"),
              std::string::npos) << message;

    TestModel loss(13);
    loss.Input("x", {2, 3}).Input("t", {2}, kInt64).Output("y", {});
    AttrString(loss.Node("SoftmaxCrossEntropyLoss", {"x", "t"}, {"y"}, "sce"), "reduction", "max");
    message = ParseError(loss.Bytes());
    EXPECT_NE(message.find("node 'sce' (SoftmaxCrossEntropyLoss, opset 13): attribute reduction='max' is not supported"),
              std::string::npos) << message;

    // QLinearMatMul's y_scale must be one value; a_scale may be per row.
    TestModel qmm(10);
    const int u8 = onnx::TensorProto_DataType_UINT8;
    qmm.Input("a", {2, 3}, u8).Input("as", {}).Input("az", {}, u8).Input("b", {3, 2}, u8).Input("bs", {});
    qmm.Input("bz", {}, u8).Input("ys", {2}).Input("yz", {}, u8).Output("y", {2, 2}, u8);
    qmm.Node("QLinearMatMul", {"a", "as", "az", "b", "bs", "bz", "ys", "yz"}, {"y"}, "qmm");
    message = ParseError(qmm.Bytes());
    EXPECT_NE(message.find("node 'qmm' (QLinearMatMul, opset 10): input 6 (y_scale) holds 2 values"), std::string::npos)
        << message;
}

TEST_F(OnnxImporterTest, SignalParameterComputedFromAShapeIsFolded) {
    // HannWindow(size = Shape(x)[1]): the size is computed by nodes the optimizer folds, so the
    // window is known at load time.
    TestModel m(17);
    m.Input("x", {2, 8}).Output("y", {8});
    m.IntInit("one", {}, {1});
    m.Node("Shape", {"x"}, {"shape"});
    AttrInt(m.Node("Gather", {"shape", "one"}, {"size"}), "axis", 0);
    m.Node("HannWindow", {"size"}, {"y"});
    std::vector<float> want(8);
    for (int n = 0; n < 8; ++n) want[n] = static_cast<float>(0.5 - 0.5 * std::cos(2.0 * 3.14159265358979323846 * n / 8));
    ExpectFloats(ParseAndRun(m.Bytes(), {FloatTensor({2, 8}, std::vector<float>(16, 0.0f))}).at(0), {8}, want);
}

TEST_F(OnnxImporterTest, SignalParameterFedAsGraphInputIsReadPerRun) {
    // STFT's frame_step as a graph input (as the official ONNX test feeds it): the network is
    // optimized for the step each run gives. A signal of ones, frames of 16 without a window:
    // bin 0 of every frame is 16, every other bin 0.
    TestModel m(17);
    m.Input("signal", {1, 32, 1}).Input("step", {}, kInt64).Output("out", {-1, -1, 9, 2});
    m.IntInit("length", {}, {16});
    m.Node("STFT", {"signal", "step", "", "length"}, {"out"}, "stft");
    for (int64_t step : {8, 16}) {
        OwnedTensor stepTensor;
        stepTensor.m_Info = TensorInfo(TensorShape(), DataType::Signed64);
        stepTensor.m_Data.resize(sizeof(int64_t));
        std::memcpy(stepTensor.m_Data.data(), &step, sizeof(step));
        const auto outs = ParseAndRun(m.Bytes(), {FloatTensor({1, 32, 1}, std::vector<float>(32, 1.0f)), stepTensor});
        ASSERT_EQ(outs.size(), 1u);
        const unsigned int frames = static_cast<unsigned int>((32 - 16) / step + 1);
        std::vector<float> want(frames * 9 * 2, 0.0f);
        for (unsigned int f = 0; f < frames; ++f) want[f * 18] = 16.0f;
        ExpectFloats(outs[0], {1, frames, 9, 2}, want);
    }
}

// ---- Opsets up to kHighestSupportedOpset ----

TEST_F(OnnxImporterTest, OpsetsUpToTheHighestSupportedAreReadNewerAreRefused) {
    TestModel current(IOnnxParser::kHighestSupportedOpset);
    current.Input("x", {3}).Output("y", {3});
    current.Node("Relu", {"x"}, {"y"});
    ExpectFloats(ParseAndRun(current.Bytes(), {FloatTensor({3}, {-1, 2, -3})}).at(0), {3}, {0, 2, 0});

    TestModel newer(IOnnxParser::kHighestSupportedOpset + 1);
    newer.Input("x", {3}).Output("y", {3});
    newer.Node("Relu", {"x"}, {"y"});
    const std::string message = ParseError(newer.Bytes());
    const std::string highest = std::to_string(IOnnxParser::kHighestSupportedOpset);
    EXPECT_NE(message.find("opset " + std::to_string(IOnnxParser::kHighestSupportedOpset + 1) +
                           " is newer than the highest supported opset " + highest),
              std::string::npos) << message;
}

TEST_F(OnnxImporterTest, CastLikeTargetTypeComesFromTypeInference) {
    // The target is the type of a tensor other nodes compute (as in ONNX's function-expanded
    // Attention): inference learns it when the network is optimized, not the importer.
    TestModel m(23);
    m.Input("x", {4}).Input("a", {2}, kInt64).Output("y", {4}, kInt64);
    m.Node("Shape", {"a"}, {"shape"});              // Signed64
    m.Node("Add", {"shape", "shape"}, {"like"});    // Signed64, computed
    m.Node("CastLike", {"x", "like"}, {"y"}, "castlike");
    OwnedTensor a;
    a.m_Info = TensorInfo(TensorShape({2}), DataType::Signed64);
    a.m_Data.assign(2 * sizeof(int64_t), 0);
    const auto outs = ParseAndRun(m.Bytes(), {FloatTensor({4}, {1.5f, -2.5f, 3.0f, 7.9f}), a});
    ASSERT_EQ(outs.size(), 1u);
    ASSERT_EQ(outs[0].m_Info.GetDataType(), DataType::Signed64);
    std::vector<int64_t> got(4);
    std::memcpy(got.data(), outs[0].m_Data.data(), sizeof(int64_t) * 4);
    EXPECT_EQ(got, (std::vector<int64_t>{1, -2, 3, 7}));

    // The like input is a graph input of a dynamic network: its type is still known when each
    // specialization is inferred.
    TestModel dynamic(23);
    dynamic.Input("x", {-1}).Input("like", {-1}, kInt64).Output("y", {-1}, kInt64);
    dynamic.Node("Relu", {"like"}, {"like_relu"});
    dynamic.Node("CastLike", {"x", "like_relu"}, {"y"});
    OwnedTensor like;
    like.m_Info = TensorInfo(TensorShape({1}), DataType::Signed64);
    like.m_Data.assign(sizeof(int64_t), 0);
    const auto dynamicOuts = ParseAndRun(dynamic.Bytes(), {FloatTensor({2}, {2.5f, -1.0f}), like});
    ASSERT_EQ(dynamicOuts.size(), 1u);
    EXPECT_EQ(dynamicOuts[0].m_Info, TensorInfo(TensorShape({2}), DataType::Signed64));
}

TEST_F(OnnxImporterTest, WrapPadReadsTheInputPeriodically) {
    // Pad-19 mode wrap: index j of a padded axis reads (j - begin) mod dim, here with more
    // padding than the dim (two periods on the left).
    TestModel m(19);
    m.Input("x", {2, 3}).Output("y", {2, 10});
    m.IntInit("pads", {4}, {0, 5, 0, 2});
    AttrString(m.Node("Pad", {"x", "pads"}, {"y"}, "wrap"), "mode", "wrap");
    ExpectFloats(ParseAndRun(m.Bytes(), {FloatTensor({2, 3}, {0, 1, 2, 3, 4, 5})}).at(0), {2, 10},
                 {1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 4, 5, 3, 4, 5, 3, 4, 5, 3, 4});
}

TEST_F(OnnxImporterTest, ComposedOpsOfRecentOpsetsNameWhatTheyNeed) {
    const auto expectError = [](const TestModel& m, const std::string& want) {
        const std::string message = ParseError(m.Bytes());
        EXPECT_NE(message.find(want), std::string::npos) << message;
    };
    {
        TestModel m(19);  // wrap plans its slices from X's shape
        m.Input("x", {-1, 3}).Output("y", {-1, 5});
        m.IntInit("pads", {4}, {0, 1, 0, 1});
        AttrString(m.Node("Pad", {"x", "pads"}, {"y"}, "wrap_dyn"), "mode", "wrap");
        expectError(m, "node 'wrap_dyn' (Pad, opset 19): mode='wrap' needs data's shape when the model is imported");
    }
    {
        TestModel m(19);
        m.Input("x", {2, 3}).Output("y", {2, 2});
        m.IntInit("pads", {4}, {0, -1, 0, 0});
        AttrString(m.Node("Pad", {"x", "pads"}, {"y"}, "wrap_neg"), "mode", "wrap");
        expectError(m, "node 'wrap_neg' (Pad, opset 19): mode='wrap' takes no negative pads (axis 1)");
    }
    {
        TestModel m(18);  // wrap is an opset-19 mode
        m.Input("x", {2, 3}).Output("y", {2, 5});
        m.IntInit("pads", {4}, {0, 1, 0, 1});
        AttrString(m.Node("Pad", {"x", "pads"}, {"y"}, "wrap18"), "mode", "wrap");
        expectError(m, "node 'wrap18' (Pad, opset 18): attribute mode='wrap' is not supported");
    }
    {
        TestModel m(18);
        m.Input("x", {4, 4}).Input("shape", {1}, kInt64).Output("y", {4, 2});
        AttrInts(m.Node("CenterCropPad", {"x", "shape"}, {"y"}, "ccp"), "axes", {5});
        expectError(m, "node 'ccp' (CenterCropPad, opset 18): attribute axes=");
    }
    {
        TestModel m(22);
        m.Input("x", {1, 2, 4, 4}).Output("y", {1, 2, 3, 3});
        onnx::NodeProto& n = m.Node("LpPool", {"x"}, {"y"}, "lppool");
        AttrInts(n, "kernel_shape", {2, 2});
        AttrInt(n, "p", 0);
        expectError(m, "node 'lppool' (LpPool, opset 22): attribute p=0 must be at least 1");
    }
    {
        TestModel m(22);
        m.Input("x", {2, 3}).Output("y", {2, 3});
        AttrInt(m.Node("LpNormalization", {"x"}, {"y"}, "lpnorm"), "p", 3);
        expectError(m, "node 'lpnorm' (LpNormalization, opset 22): attribute p=3 is not supported");
    }
    {
        TestModel m(21);
        m.Input("x", {1, 4, 2}).Input("s", {4}).Input("b", {4}).Output("y", {1, 4, 2});
        AttrInt(m.Node("GroupNormalization", {"x", "s", "b"}, {"y"}, "gn"), "num_groups", 0);
        expectError(m, "node 'gn' (GroupNormalization, opset 21): attribute num_groups=0 must be at least 1");
    }
    {
        TestModel m(27);
        m.Input("x", {1, 2, 5}).Input("w", {2, 1, 3}).Output("y", {1, 2, 5});
        AttrString(m.Node("CausalConvWithState", {"x", "w"}, {"y"}, "ccs"), "activation", "gelu");
        expectError(m, "node 'ccs' (CausalConvWithState, opset 27): attribute activation='gelu' is not supported");
    }
    {
        TestModel m(27);
        m.Input("x", {1, 2, 5}).Input("w", {2, 2, 3}).Output("y", {1, 2, 5});
        m.Node("CausalConvWithState", {"x", "w"}, {"y"}, "ccs_w");
        expectError(m, "node 'ccs_w' (CausalConvWithState, opset 27): weight 2x2x3 must be (channels, 1, k)");
    }
    {
        TestModel m(27);
        m.Input("q", {1, 2, 8}).Input("k", {1, 2, 8}).Input("v", {1, 2, 8}).Output("y", {1, 2, 8});
        onnx::NodeProto& n = m.Node("LinearAttention", {"q", "k", "v"}, {"y"}, "la_heads");
        AttrInt(n, "q_num_heads", 3);
        AttrInt(n, "kv_num_heads", 2);
        AttrString(n, "update_rule", "linear");
        expectError(m, "node 'la_heads' (LinearAttention, opset 27): attributes q_num_heads=3 and kv_num_heads=2 must be "
                       "positive, q_num_heads a multiple of kv_num_heads");
    }
    {
        TestModel m(27);
        m.Input("q", {1, 2, 8}).Input("k", {1, 2, 8}).Input("v", {1, 2, 8}).Output("y", {1, 2, 8});
        onnx::NodeProto& n = m.Node("LinearAttention", {"q", "k", "v"}, {"y"}, "la_decay");
        AttrInt(n, "q_num_heads", 2);
        AttrInt(n, "kv_num_heads", 2);
        expectError(m, "node 'la_decay' (LinearAttention, opset 27): update_rule='gated_delta' needs input 4 (decay)");
    }
}

// Ops the importer composes of layers, with values read per run: CenterCropPad with a target
// shape fed by the graph, Pad's wrap mode with fed pads, CausalConvWithState and LinearAttention.
OwnedTensor Int64Tensor(const TensorShape& shape, const std::vector<int64_t>& values) {
    OwnedTensor t;
    t.m_Info = TensorInfo(shape, DataType::Signed64);
    t.m_Data.resize(values.size() * sizeof(int64_t));
    std::memcpy(t.m_Data.data(), values.data(), t.m_Data.size());
    return t;
}

TEST_F(OnnxImporterTest, CenterCropPadWithAFedShapeCropsAndPads) {
    TestModel m(18);
    m.Input("x", {2, 3}).Input("shape", {2}, kInt64).Output("y", {-1, -1});
    m.Node("CenterCropPad", {"x", "shape"}, {"y"}, "ccp");
    // Rows: 2 -> 4 (one padded row before, one after); columns: 3 -> 1 (the middle one).
    const auto out = ParseAndRun(m.Bytes(), {FloatTensor({2, 3}, {1, 2, 3, 4, 5, 6}), Int64Tensor({2}, {4, 1})});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].m_Info.GetShape(), TensorShape({4, 1}));
    EXPECT_EQ(Floats(out[0]), (std::vector<float>{0, 2, 5, 0}));
}

TEST_F(OnnxImporterTest, WrapPadWithFedPads) {
    TestModel m(19);
    m.Input("x", {1, 3}).Input("pads", {4}, kInt64).Output("y", {-1, -1});
    AttrString(m.Node("Pad", {"x", "pads"}, {"y"}, "wrap_fed"), "mode", "wrap");
    // Columns: 2 before (x[1], x[2]) and 4 after (x[0], x[1], x[2], x[0]).
    const auto out = ParseAndRun(m.Bytes(), {FloatTensor({1, 3}, {1, 2, 3}), Int64Tensor({4}, {0, 2, 0, 4})});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].m_Info.GetShape(), TensorShape({1, 9}));
    EXPECT_EQ(Floats(out[0]), (std::vector<float>{2, 3, 1, 2, 3, 1, 2, 3, 1}));
}

TEST_F(OnnxImporterTest, CausalConvWithStateCarriesTheState) {
    TestModel m(27);
    m.Input("x", {1, 1, 3}).Input("w", {1, 1, 2}).Input("past", {1, 1, 1}).Output("y", {1, 1, 3}).Output("state", {1, 1, 1});
    m.Node("CausalConvWithState", {"x", "w", "", "past"}, {"y", "state"}, "ccs");
    // y[t] = w0 * padded[t] + w1 * padded[t + 1] over padded = [past, x].
    const auto out = ParseAndRun(m.Bytes(), {FloatTensor({1, 1, 3}, {1, 2, 3}), FloatTensor({1, 1, 2}, {10, 1}),
                                             FloatTensor({1, 1, 1}, {5})});
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(Floats(out[0]), (std::vector<float>{51, 12, 23}));
    EXPECT_EQ(Floats(out[1]), (std::vector<float>{3}));
}

TEST_F(OnnxImporterTest, LinearAttentionLinearRuleAccumulatesTheState) {
    TestModel m(27);
    m.Input("q", {1, 2, 1}).Input("k", {1, 2, 1}).Input("v", {1, 2, 1}).Output("y", {1, 2, 1}).Output("s", {1, 1, 1, 1});
    onnx::NodeProto& n = m.Node("LinearAttention", {"q", "k", "v"}, {"y", "s"}, "la");
    AttrInt(n, "q_num_heads", 1);
    AttrInt(n, "kv_num_heads", 1);
    AttrString(n, "update_rule", "linear");
    // d_k = 1, scale 1: S_1 = k_1 v_1 = 6, y_1 = q_1 S_1 = 6; S_2 = 6 + k_2 v_2 = 6 + 20, y_2 = 2 * 26.
    const auto out = ParseAndRun(m.Bytes(), {FloatTensor({1, 2, 1}, {1, 2}), FloatTensor({1, 2, 1}, {2, 4}),
                                             FloatTensor({1, 2, 1}, {3, 5})});
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(Floats(out[0]), (std::vector<float>{6, 52}));
    EXPECT_EQ(Floats(out[1]), (std::vector<float>{26}));
}

}  // namespace
