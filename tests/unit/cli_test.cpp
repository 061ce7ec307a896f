// The `trellis` command-line tool, run as a separate process: help texts (and that docs/cli.md
// quotes them), run/bench/inspect on the example MLP, input and output files, and that every bad
// model, file or option ends in exactly one `error: ` line and exit status 1 or 2, never a crash;
// `backends` and dynamic backends named in --backends (with the test backends of tests/dynamic).
#include <trellis/TensorIO.hpp>
#include <trellis/backends/BackendVersion.hpp>

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

const std::string kMlp = std::string(TRELLIS_SOURCE_DIR) + "/examples/models/mlp.onnx";

struct CliResult {
    int m_Exit = -1;  ///< exit status; 128 + signal when the process was killed
    std::string m_Out;
    std::string m_Err;
};

std::string ShellQuote(const std::string& word) {
    std::string quoted = "'";
    for (char c : word) {
        quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    return quoted + "'";
}

std::string ReadFile(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

void WriteFile(const fs::path& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary);
    out << bytes;
}

std::vector<std::string> Lines(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        lines.push_back(line);
    }
    return lines;
}

trellis::OwnedTensor FloatTensor(const std::string& name, trellis::TensorShape shape, float start) {
    trellis::OwnedTensor t;
    t.m_Name = name;
    t.m_Info = trellis::TensorInfo(shape, trellis::DataType::Float32);
    std::vector<float> values(shape.GetNumElements());
    for (std::size_t i = 0; i < values.size(); ++i) {
        values[i] = start + 0.1f * static_cast<float>(i % 13) - 0.6f;
    }
    t.m_Data.resize(values.size() * sizeof(float));
    std::memcpy(t.m_Data.data(), values.data(), t.m_Data.size());
    return t;
}

// A valid ONNX model with one node of `opType` (x -> y, Float32 1x4).
std::string OneNodeModelBytes(const std::string& opType, const std::string& nodeName) {
    onnx::ModelProto model;
    model.set_ir_version(8);
    model.add_opset_import()->set_version(13);
    onnx::GraphProto* graph = model.mutable_graph();
    graph->set_name("one_" + nodeName);
    auto declare = [](onnx::ValueInfoProto* info, const char* name) {
        info->set_name(name);
        auto* tensorType = info->mutable_type()->mutable_tensor_type();
        tensorType->set_elem_type(onnx::TensorProto::FLOAT);
        tensorType->mutable_shape()->add_dim()->set_dim_value(1);
        tensorType->mutable_shape()->add_dim()->set_dim_value(4);
    };
    declare(graph->add_input(), "x");
    declare(graph->add_output(), "y");
    onnx::NodeProto* node = graph->add_node();
    node->set_op_type(opType);
    node->set_name(nodeName);
    node->add_input("x");
    node->add_output("y");
    std::string bytes;
    model.SerializeToString(&bytes);
    return bytes;
}

// x [batch, 4] -> Relu -> y [batch, 4], with "batch" symbolic.
std::string SymbolicBatchModelBytes() {
    onnx::ModelProto model;
    model.set_ir_version(8);
    model.add_opset_import()->set_version(13);
    onnx::GraphProto* graph = model.mutable_graph();
    graph->set_name("symbolic_batch");
    auto declare = [](onnx::ValueInfoProto* info, const char* name) {
        info->set_name(name);
        auto* tensorType = info->mutable_type()->mutable_tensor_type();
        tensorType->set_elem_type(onnx::TensorProto::FLOAT);
        tensorType->mutable_shape()->add_dim()->set_dim_param("batch");
        tensorType->mutable_shape()->add_dim()->set_dim_value(4);
    };
    declare(graph->add_input(), "x");
    declare(graph->add_output(), "y");
    onnx::NodeProto* node = graph->add_node();
    node->set_op_type("Relu");
    node->add_input("x");
    node->add_output("y");
    std::string bytes;
    model.SerializeToString(&bytes);
    return bytes;
}

// y = x + (a + b): a and b are initializers [4], so constant folding turns a + b into the
// constant "sum".
std::string FoldableSumModelBytes() {
    onnx::ModelProto model;
    model.set_ir_version(8);
    model.add_opset_import()->set_version(13);
    onnx::GraphProto* graph = model.mutable_graph();
    graph->set_name("foldable_sum");
    auto declare = [](onnx::ValueInfoProto* info, const char* name) {
        info->set_name(name);
        auto* tensorType = info->mutable_type()->mutable_tensor_type();
        tensorType->set_elem_type(onnx::TensorProto::FLOAT);
        tensorType->mutable_shape()->add_dim()->set_dim_value(4);
    };
    declare(graph->add_input(), "x");
    declare(graph->add_output(), "y");
    for (const char* name : {"a", "b"}) {
        onnx::TensorProto* t = graph->add_initializer();
        t->set_name(name);
        t->set_data_type(onnx::TensorProto::FLOAT);
        t->add_dims(4);
        for (int i = 0; i < 4; ++i) t->add_float_data(static_cast<float>(i));
    }
    auto add = [&](const char* a, const char* b, const char* out) {
        onnx::NodeProto* node = graph->add_node();
        node->set_op_type("Add");
        node->set_name(out);
        node->add_input(a);
        node->add_input(b);
        node->add_output(out);
    };
    add("a", "b", "sum");
    add("x", "sum", "y");
    std::string bytes;
    model.SerializeToString(&bytes);
    return bytes;
}

// x BFLOAT16 [3] -> Cast to FLOAT -> y [3].
std::string CastBFloat16ModelBytes() {
    onnx::ModelProto model;
    model.set_ir_version(8);
    model.add_opset_import()->set_version(13);
    onnx::GraphProto* graph = model.mutable_graph();
    graph->set_name("cast_bfloat16");
    auto declare = [](onnx::ValueInfoProto* info, const char* name, int type) {
        info->set_name(name);
        auto* tensorType = info->mutable_type()->mutable_tensor_type();
        tensorType->set_elem_type(type);
        tensorType->mutable_shape()->add_dim()->set_dim_value(3);
    };
    declare(graph->add_input(), "x", onnx::TensorProto::BFLOAT16);
    declare(graph->add_output(), "y", onnx::TensorProto::FLOAT);
    onnx::NodeProto* node = graph->add_node();
    node->set_op_type("Cast");
    node->add_input("x");
    node->add_output("y");
    auto* to = node->add_attribute();
    to->set_name("to");
    to->set_type(onnx::AttributeProto::INT);
    to->set_i(onnx::TensorProto::FLOAT);
    std::string bytes;
    model.SerializeToString(&bytes);
    return bytes;
}

// A valid ONNX model whose only node is an op no one implements.
std::string UnknownOpModelBytes() {
    return OneNodeModelBytes("FooBar", "foo");
}

// A built test dynamic backend (tests/dynamic): Test_<name>_backend.so.
fs::path BuiltTestBackend(const std::string& name) {
    return fs::path(TRELLIS_TEST_DYNAMIC_BACKENDS_DIR) / ("Test_" + name + "_backend.so");
}

class CliTest : public ::testing::Test {
protected:
    void SetUp() override {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        m_Dir = fs::temp_directory_path() /
                ("trellis_cli_test_" + std::to_string(::getpid()) + "_" + info->name());
        fs::remove_all(m_Dir);
        fs::create_directories(m_Dir);
    }
    void TearDown() override {
        std::error_code ec;
        fs::remove_all(m_Dir, ec);
    }

    CliResult Cli(const std::vector<std::string>& args) {
        std::string command = ShellQuote(TRELLIS_CLI_PATH);
        for (const std::string& a : args) {
            command += ' ';
            command += ShellQuote(a);
        }
        const fs::path out = m_Dir / "stdout.txt";
        const fs::path err = m_Dir / "stderr.txt";
        command += " >";
        command += ShellQuote(out.string());
        command += " 2>";
        command += ShellQuote(err.string());
        const int status = std::system(command.c_str());
        CliResult result;
        result.m_Exit = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        result.m_Out = ReadFile(out);
        result.m_Err = ReadFile(err);
        return result;
    }

    // The error contract: status 1 or 2 (not a signal), exactly one stderr line, "error: ...".
    static void ExpectOneError(const CliResult& r, int expectedExit, const std::string& mentions) {
        EXPECT_EQ(r.m_Exit, expectedExit) << "stdout:\n" << r.m_Out << "stderr:\n" << r.m_Err;
        const std::vector<std::string> lines = Lines(r.m_Err);
        ASSERT_EQ(lines.size(), 1u) << "stderr:\n" << r.m_Err;
        EXPECT_EQ(lines[0].rfind("error: ", 0), 0u) << lines[0];
        EXPECT_NE(lines[0].find(mentions), std::string::npos) << "expected '" << mentions << "' in: " << lines[0];
        for (const char* crash : {"Aborted", "Segmentation", "terminate called", "core dumped"}) {
            EXPECT_EQ((r.m_Out + r.m_Err).find(crash), std::string::npos) << crash;
        }
    }

    fs::path m_Dir;
};

TEST_F(CliTest, HelpListsCommandsAndOptions) {
    const CliResult top = Cli({"--help"});
    EXPECT_EQ(top.m_Exit, 0);
    for (const char* word : {"run", "bench", "inspect", "backends", "onnx-test", "codegen", "Registered backends: ", "CpuRef"}) {
        EXPECT_NE(top.m_Out.find(word), std::string::npos) << word;
    }
    const std::vector<std::pair<std::string, std::vector<std::string>>> commands = {
        {"run", {"--backends", "--input", "--input-dir", "--output-dir", "--shape", "--seed", "--threads",
                 "--backend-option", "--dynamic-backends-path", "--max-tensor-bytes", "--max-working-memory"}},
        {"bench", {"--backends", "--threads", "--backend-option", "--warmup", "--iterations", "--shape", "--json",
                   "--seed", "--dynamic-backends-path", "--max-tensor-bytes", "--max-working-memory"}},
        {"inspect", {"--backends", "--shape", "--dynamic-backends-path", "--max-tensor-bytes",
                     "--max-working-memory"}},
        {"compare", {"--backends", "--reference", "--input", "--input-dir", "--shape", "--seed", "--rtol", "--atol",
                     "--all", "--threads", "--backend-option", "--dynamic-backends-path", "--max-tensor-bytes",
                     "--max-working-memory"}},
        {"backends", {"--dynamic-backends-path"}},
        {"onnx-test", {"--backends", "--filter", "--summary-json", "--dynamic-backends-path"}},
        {"codegen", {"-o, --output-dir", "--name", "--target", "--with-main", "--c-api", "--shape"}},
    };
    for (const auto& [command, options] : commands) {
        const CliResult r = Cli({command, "--help"});
        EXPECT_EQ(r.m_Exit, 0) << command;
        EXPECT_TRUE(r.m_Err.empty()) << command << ": " << r.m_Err;
        for (const std::string& option : options) {
            EXPECT_NE(r.m_Out.find(option), std::string::npos) << command << " --help lacks " << option;
        }
    }
}

// docs/cli.md must agree with the tool: it quotes every help text verbatim (all but the
// registered-backends line, which depends on the build).
TEST_F(CliTest, DocsQuoteEveryHelpText) {
    const std::string docs = ReadFile(fs::path(TRELLIS_SOURCE_DIR) / "docs" / "cli.md");
    ASSERT_FALSE(docs.empty());
    for (const std::vector<std::string>& args :
         std::vector<std::vector<std::string>>{{"--help"}, {"run", "--help"}, {"bench", "--help"},
                                              {"inspect", "--help"}, {"compare", "--help"}, {"backends", "--help"},
                                              {"onnx-test", "--help"}, {"codegen", "--help"}}) {
        const CliResult r = Cli(args);
        ASSERT_EQ(r.m_Exit, 0);
        const auto registered = r.m_Out.find("Registered backends: ");
        ASSERT_NE(registered, std::string::npos);
        const std::string help = r.m_Out.substr(0, registered);
        EXPECT_NE(docs.find(help), std::string::npos) << "docs/cli.md does not quote:\n" << help;
    }
}

TEST_F(CliTest, CompareMlpOnTheReferenceItselfFindsNoDivergence) {
    const CliResult r = Cli({"compare", kMlp, "--backends", "CpuRef", "--rtol", "0", "--atol", "0", "--all"});
    ASSERT_EQ(r.m_Exit, 0) << r.m_Out << r.m_Err;
    EXPECT_NE(r.m_Out.find("against CpuRef;"), std::string::npos) << r.m_Out;
    EXPECT_NE(r.m_Out.find("tensors (reference execution order):"), std::string::npos) << r.m_Out;
    EXPECT_NE(r.m_Out.find("ok  fc1:0 (Gemm, CpuRef)"), std::string::npos) << r.m_Out;
    EXPECT_NE(r.m_Out.find("no divergence: every observed tensor is within tolerance"), std::string::npos) << r.m_Out;
}

TEST_F(CliTest, CompareRefusesBadOptionsByName) {
    CliResult r = Cli({"compare", kMlp, "--rtol", "-1"});
    EXPECT_EQ(r.m_Exit, 2);
    EXPECT_NE(r.m_Err.find("option '--rtol' expects a number >= 0, got '-1'"), std::string::npos) << r.m_Err;
    r = Cli({"compare", kMlp, "--backends", "NoSuchBackend"});
    EXPECT_EQ(r.m_Exit, 2);
    EXPECT_NE(r.m_Err.find("NoSuchBackend"), std::string::npos) << r.m_Err;
    r = Cli({"compare", kMlp, "--reference", "NoSuchBackend"});
    EXPECT_EQ(r.m_Exit, 2);
    EXPECT_NE(r.m_Err.find("NoSuchBackend"), std::string::npos) << r.m_Err;
}

TEST_F(CliTest, BenchProfileWritesAChromeTraceAndSummarises) {
    const fs::path file = fs::temp_directory_path() / ("trellis_cli_profile_" + std::to_string(::getpid()) + ".json");
    const CliResult r = Cli({"bench", kMlp, "--backends", "CpuRef", "--warmup", "1", "--iterations", "4", "--profile", file.string()});
    ASSERT_EQ(r.m_Exit, 0) << r.m_Err;
    EXPECT_NE(r.m_Out.find("profile: time per run by op and backend (4 runs)"), std::string::npos) << r.m_Out;
    EXPECT_NE(r.m_Out.find("Gemm "), std::string::npos) << r.m_Out;
    EXPECT_NE(r.m_Out.find("profile: slowest layers and steps, per run"), std::string::npos) << r.m_Out;
    const std::string trace = ReadFile(file);
    fs::remove(file);
    EXPECT_EQ(trace.rfind("{\"displayTimeUnit\": \"ms\", \"traceEvents\": [", 0), 0u) << trace.substr(0, 200);
    std::size_t events = 0;
    for (std::size_t at = trace.find("\"ph\": \"X\""); at != std::string::npos; at = trace.find("\"ph\": \"X\"", at + 1)) ++events;
    EXPECT_EQ(events, 16u);  // 4 layers x 4 timed runs, warm-up left out
    const CliResult bad = Cli({"bench", kMlp, "--profile", ""});
    EXPECT_EQ(bad.m_Exit, 2);
}

TEST_F(CliTest, RunMlpPrintsOutputsLayersAndTime) {
    const CliResult r = Cli({"run", kMlp});
    ASSERT_EQ(r.m_Exit, 0) << r.m_Err;
    EXPECT_TRUE(r.m_Err.empty()) << r.m_Err;
    EXPECT_NE(r.m_Out.find("note: input 'input' (Float32 1x16) not given: filled with random data (seed 0)"),
              std::string::npos) << r.m_Out;
    EXPECT_NE(r.m_Out.find("output 'probs': Float32 1x10"), std::string::npos) << r.m_Out;
    EXPECT_NE(r.m_Out.find("  values: "), std::string::npos) << r.m_Out;
    EXPECT_NE(r.m_Out.find("  min "), std::string::npos) << r.m_Out;
    EXPECT_NE(r.m_Out.find("\nlayers: "), std::string::npos) << r.m_Out;
    // The default backends: CpuAcc (CpuRef behind it) where CpuAcc is built in, else CpuRef.
    const bool cpuAcc = Cli({"backends"}).m_Out.find("CpuAcc") != std::string::npos;
    EXPECT_NE(r.m_Out.find(cpuAcc ? " on CpuAcc" : " on CpuRef"), std::string::npos) << r.m_Out;
    EXPECT_NE(r.m_Out.find("\ntime: load "), std::string::npos) << r.m_Out;
}

TEST_F(CliTest, RunOutputDirWritesReadableTensorProto) {
    const fs::path outDir = m_Dir / "out" / "nested";  // created by the tool
    const CliResult r = Cli({"run", kMlp, "--output-dir", outDir.string(), "--seed", "7"});
    ASSERT_EQ(r.m_Exit, 0) << r.m_Err;
    const trellis::OwnedTensor probs = trellis::LoadTensorFile((outDir / "output_0.pb").string());
    EXPECT_EQ(probs.m_Name, "probs");
    EXPECT_EQ(probs.m_Info.GetDataType(), trellis::DataType::Float32);
    EXPECT_EQ(probs.m_Info.GetShape(), trellis::TensorShape({1, 10}));
    // Softmax output: a probability distribution.
    ASSERT_EQ(probs.m_Data.size(), 10 * sizeof(float));
    float values[10];
    std::memcpy(values, probs.m_Data.data(), sizeof(values));
    float sum = 0.0f;
    for (float v : values) {
        EXPECT_GE(v, 0.0f);
        sum += v;
    }
    EXPECT_NEAR(sum, 1.0f, 1e-5f);

    // The same seed reproduces the same random input, hence the same output bytes.
    const fs::path again = m_Dir / "again";
    ASSERT_EQ(Cli({"run", kMlp, "--output-dir", again.string(), "--seed", "7"}).m_Exit, 0);
    EXPECT_EQ(ReadFile(outDir / "output_0.pb"), ReadFile(again / "output_0.pb"));
}

TEST_F(CliTest, RunInputFromNpyPbAndInputDirAgree) {
    const trellis::OwnedTensor input = FloatTensor("input", {1, 16}, 0.25f);
    trellis::SaveNpy((m_Dir / "x.npy").string(), input);
    trellis::SaveTensorProto((m_Dir / "x.pb").string(), input);
    fs::create_directories(m_Dir / "inputs");
    trellis::SaveTensorProto((m_Dir / "inputs" / "input_0.pb").string(), input);

    std::vector<std::string> outputs;
    for (const std::vector<std::string>& feed : std::vector<std::vector<std::string>>{
             {"--input", "input=" + (m_Dir / "x.npy").string()},
             {"--input", "input=" + (m_Dir / "x.pb").string()},
             {"--input-dir", (m_Dir / "inputs").string()}}) {
        const fs::path outDir = m_Dir / ("out" + std::to_string(outputs.size()));
        std::vector<std::string> args = {"run", kMlp, "--output-dir", outDir.string()};
        args.insert(args.end(), feed.begin(), feed.end());
        const CliResult r = Cli(args);
        ASSERT_EQ(r.m_Exit, 0) << r.m_Err;
        EXPECT_EQ(r.m_Out.find("note: input"), std::string::npos) << r.m_Out;
        outputs.push_back(ReadFile(outDir / "output_0.pb"));
    }
    EXPECT_FALSE(outputs[0].empty());
    EXPECT_EQ(outputs[0], outputs[1]);
    EXPECT_EQ(outputs[0], outputs[2]);
}

TEST_F(CliTest, RunRejectsInputOfWrongShapeNamingIt) {
    trellis::SaveNpy((m_Dir / "bad.npy").string(), FloatTensor("", {1, 8}, 0.0f));
    const CliResult r = Cli({"run", kMlp, "--input", "input=" + (m_Dir / "bad.npy").string()});
    ExpectOneError(r, 1, "input 'input'");
    EXPECT_NE(r.m_Err.find("1x16"), std::string::npos) << r.m_Err;
    EXPECT_NE(r.m_Err.find("1x8"), std::string::npos) << r.m_Err;
    EXPECT_NE(r.m_Err.find("bad.npy"), std::string::npos) << r.m_Err;
}

TEST_F(CliTest, RunTakesAUInt16FileAsTheBFloat16ItHolds) {
    // ONNX's test data stores bfloat16 tensors as UINT16 TensorProtos; 1, -2 and 0.5 in bfloat16.
    WriteFile(m_Dir / "cast.onnx", CastBFloat16ModelBytes());
    trellis::OwnedTensor bits;
    bits.m_Info = trellis::TensorInfo(trellis::TensorShape({3}), trellis::DataType::UInt16);
    const std::vector<uint16_t> values = {0x3F80, 0xC000, 0x3F00};
    bits.m_Data.resize(sizeof(uint16_t) * values.size());
    std::memcpy(bits.m_Data.data(), values.data(), bits.m_Data.size());
    trellis::SaveTensorProto((m_Dir / "x.pb").string(), bits);
    const CliResult r = Cli({"run", (m_Dir / "cast.onnx").string(), "--input", "x=" + (m_Dir / "x.pb").string()});
    ASSERT_EQ(r.m_Exit, 0) << r.m_Err;
    EXPECT_NE(r.m_Out.find("values: 1 -2 0.5"), std::string::npos) << r.m_Out;

    // Any other mismatch of types is still refused.
    trellis::SaveTensorProto((m_Dir / "f.pb").string(), FloatTensor("x", {3}, 1.0f));
    const CliResult bad = Cli({"run", (m_Dir / "cast.onnx").string(), "--input", "x=" + (m_Dir / "f.pb").string()});
    ExpectOneError(bad, 1, "expected BFloat16 3, got Float32 3");
}

TEST_F(CliTest, RunSymbolicBatchTakesItsShapeFromTheInputFile) {
    const fs::path model = m_Dir / "symbolic.onnx";
    WriteFile(model, SymbolicBatchModelBytes());
    // No input file and no --shape: the dim that needs deciding is named, with both remedies.
    const CliResult none = Cli({"run", model.string()});
    ExpectOneError(none, 2, "input 'x' is Float32 ?x4: dim 0 ('batch') must be decided");
    EXPECT_NE(none.m_Err.find("--input x=FILE"), std::string::npos) << none.m_Err;
    EXPECT_NE(none.m_Err.find("--shape x="), std::string::npos) << none.m_Err;

    // The file decides the batch: 3 rows, then 5 rows through the same command.
    for (unsigned int rows : {3u, 5u}) {
        const std::string file = (m_Dir / ("x" + std::to_string(rows) + ".npy")).string();
        trellis::SaveNpy(file, FloatTensor("", {rows, 4}, 0.0f));
        const fs::path outDir = m_Dir / ("out" + std::to_string(rows));
        const CliResult r = Cli({"run", model.string(), "--input", "x=" + file, "--output-dir", outDir.string()});
        ASSERT_EQ(r.m_Exit, 0) << r.m_Err;
        EXPECT_NE(r.m_Out.find("inputs: x Float32 " + std::to_string(rows) + "x4"), std::string::npos) << r.m_Out;
        EXPECT_NE(r.m_Out.find("output 'y': Float32 " + std::to_string(rows) + "x4"), std::string::npos) << r.m_Out;
        EXPECT_NE(r.m_Out.find("layers: placed per input shape (dynamic network)"), std::string::npos) << r.m_Out;
        const trellis::OwnedTensor y = trellis::LoadTensorFile((outDir / "output_0.pb").string());
        const trellis::OwnedTensor x = FloatTensor("", {rows, 4}, 0.0f);
        ASSERT_EQ(y.m_Data.size(), x.m_Data.size());
        for (std::size_t i = 0; i < rows * 4; ++i) {
            float xv, yv;
            std::memcpy(&xv, x.m_Data.data() + i * 4, 4);
            std::memcpy(&yv, y.m_Data.data() + i * 4, 4);
            EXPECT_EQ(yv, std::max(xv, 0.0f)) << i;
        }
    }
    // A file whose fixed dim disagrees is refused naming both shapes.
    trellis::SaveNpy((m_Dir / "bad.npy").string(), FloatTensor("", {2, 3}, 0.0f));
    const CliResult bad = Cli({"run", model.string(), "--input", "x=" + (m_Dir / "bad.npy").string()});
    ExpectOneError(bad, 1, "expected Float32 ?x4");
    EXPECT_NE(bad.m_Err.find("got Float32 2x3"), std::string::npos) << bad.m_Err;
    // Pinned with --shape: a static network, random data.
    const CliResult pinned = Cli({"run", model.string(), "--shape", "x=2x4", "--backends", "CpuRef"});
    ASSERT_EQ(pinned.m_Exit, 0) << pinned.m_Err;
    EXPECT_NE(pinned.m_Out.find("output 'y': Float32 2x4"), std::string::npos) << pinned.m_Out;
    EXPECT_NE(pinned.m_Out.find("layers: 1 on CpuRef"), std::string::npos) << pinned.m_Out;
}

TEST_F(CliTest, RunRejectsUnknownInputNameAndBadInputFile) {
    trellis::SaveNpy((m_Dir / "x.npy").string(), FloatTensor("", {1, 16}, 0.0f));
    ExpectOneError(Cli({"run", kMlp, "--input", "nosuch=" + (m_Dir / "x.npy").string()}), 1, "nosuch");
    WriteFile(m_Dir / "garbage.npy", "\x93NUMPY garbage");
    ExpectOneError(Cli({"run", kMlp, "--input", "input=" + (m_Dir / "garbage.npy").string()}), 1, "garbage.npy");
    ExpectOneError(Cli({"run", kMlp, "--input", "input=" + (m_Dir / "absent.pb").string()}), 1, "absent.pb");
}

TEST_F(CliTest, BadModelFilesGiveOneErrorLine) {
    ExpectOneError(Cli({"run", (m_Dir / "missing.onnx").string()}), 1, "missing.onnx");

    const std::string mlp = ReadFile(kMlp);
    ASSERT_GT(mlp.size(), 100u);
    WriteFile(m_Dir / "truncated.onnx", mlp.substr(0, mlp.size() / 2));
    ExpectOneError(Cli({"run", (m_Dir / "truncated.onnx").string()}), 1, "truncated.onnx");

    WriteFile(m_Dir / "text.onnx", "this is not a model\nbut a text file\n");
    ExpectOneError(Cli({"run", (m_Dir / "text.onnx").string()}), 1, "text.onnx");

    WriteFile(m_Dir / "foobar.onnx", UnknownOpModelBytes());
    ExpectOneError(Cli({"run", (m_Dir / "foobar.onnx").string()}), 1, "FooBar");
    ExpectOneError(Cli({"inspect", (m_Dir / "foobar.onnx").string()}), 1, "FooBar");
    ExpectOneError(Cli({"bench", (m_Dir / "foobar.onnx").string()}), 1, "FooBar");

    ExpectOneError(Cli({"inspect", m_Dir.string()}), 1, "directory");
}

// y = ConstantOfShape([d0, d1]) (Float32), the shape an initializer.
std::string ConstantOfShapeModelBytes(int64_t d0, int64_t d1) {
    onnx::ModelProto model;
    model.set_ir_version(8);
    model.add_opset_import()->set_version(13);
    onnx::GraphProto* graph = model.mutable_graph();
    graph->set_name("fill");
    onnx::TensorProto* shape = graph->add_initializer();
    shape->set_name("shape");
    shape->set_data_type(onnx::TensorProto::INT64);
    shape->add_dims(2);
    shape->add_int64_data(d0);
    shape->add_int64_data(d1);
    onnx::ValueInfoProto* y = graph->add_output();
    y->set_name("y");
    y->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    onnx::NodeProto* node = graph->add_node();
    node->set_op_type("ConstantOfShape");
    node->set_name("fill");
    node->add_input("shape");
    node->add_output("y");
    return model.SerializeAsString();
}

// The crash (a ConstantOfShape of 2^31 x 2^31 ended in SIGSEGV), and the limit options.
TEST_F(CliTest, ResourceLimitsRefuseWithOneErrorLine) {
    WriteFile(m_Dir / "huge.onnx", ConstantOfShapeModelBytes(1ll << 31, 1ll << 31));
    for (const char* command : {"run", "bench", "inspect"}) {
        ExpectOneError(Cli({command, (m_Dir / "huge.onnx").string()}), 1, "ConstantOfShape 'fill'");
    }
    WriteFile(m_Dir / "fill.onnx", ConstantOfShapeModelBytes(256, 1024));  // 1 MiB
    ExpectOneError(Cli({"run", (m_Dir / "fill.onnx").string(), "--max-tensor-bytes", "512K"}), 1,
                   "more than the maximum tensor size of 512.00 KiB (524288 bytes)");
    EXPECT_EQ(Cli({"run", (m_Dir / "fill.onnx").string(), "--max-tensor-bytes", "1M"}).m_Exit, 0);
    ExpectOneError(Cli({"run", kMlp, "--backends", "CpuRef", "--max-working-memory", "64"}), 1,
                   "more than the limit of 64 bytes");
    ExpectOneError(Cli({"run", kMlp, "--max-tensor-bytes", "1X"}), 2, "--max-tensor-bytes");
    ExpectOneError(Cli({"run", kMlp, "--max-working-memory", "-5"}), 2, "--max-working-memory");
    ExpectOneError(Cli({"run", kMlp, "--max-working-memory", "99999999999T"}), 2, "--max-working-memory");
}

TEST_F(CliTest, BadOptionsAreUsageErrors) {
    const CliResult unknownBackend = Cli({"run", kMlp, "--backends", "NoSuchBackend"});
    ExpectOneError(unknownBackend, 2, "NoSuchBackend");
    EXPECT_NE(unknownBackend.m_Err.find("CpuRef"), std::string::npos) << "should list the registered backends";

    ExpectOneError(Cli({"run", kMlp, "--shape", "input=1xx16"}), 2, "--shape");
    ExpectOneError(Cli({"run", kMlp, "--shape", "1x16"}), 2, "--shape");
    ExpectOneError(Cli({"run", kMlp, "--frobnicate"}), 2, "--frobnicate");
    ExpectOneError(Cli({"inspect", kMlp, "--seed", "1"}), 2, "--seed");
    ExpectOneError(Cli({"bench", kMlp, "--iterations", "0"}), 2, "--iterations");
    ExpectOneError(Cli({"bench", kMlp, "--iterations", "abc"}), 2, "--iterations");
    ExpectOneError(Cli({"bench", kMlp, "--warmup", "-1"}), 2, "--warmup");
    ExpectOneError(Cli({"run", kMlp, "--threads", "1025"}), 2, "--threads");
    ExpectOneError(Cli({"run", kMlp, "--threads", "-1"}), 2, "--threads");
    ExpectOneError(Cli({"run", kMlp, "--backend-option", "CpuAcc=FastMath"}), 2, "BACKEND:NAME=VALUE");
    ExpectOneError(Cli({"bench", kMlp, "--backend-option", ":x=1"}), 2, "BACKEND:NAME=VALUE");
    ExpectOneError(Cli({"run", kMlp, "--seed"}), 2, "--seed");
    ExpectOneError(Cli({"run", kMlp, "--seed", "1", "--seed", "2"}), 2, "--seed");
    ExpectOneError(Cli({"run", kMlp, "--backends", "CpuRef,,CpuRef"}), 2, "--backends");
    ExpectOneError(Cli({"run"}), 2, "MODEL");
    ExpectOneError(Cli({"run", kMlp, kMlp}), 2, "MODEL");
    ExpectOneError(Cli({"frobnicate"}), 2, "frobnicate");
    ExpectOneError(Cli({}), 2, "no command");
    // A --shape that names no graph input is the model's business, reported by the parser.
    const CliResult r = Cli({"run", kMlp, "--shape", "nosuch=1x16"});
    EXPECT_NE(r.m_Exit, 0);
    ExpectOneError(r, r.m_Exit, "nosuch");
}

TEST_F(CliTest, BenchJsonIsOneObject) {
    const CliResult r =
        Cli({"bench", kMlp, "--json", "--iterations", "3", "--warmup", "1", "--threads", "2", "--backends", "CpuRef"});
    ASSERT_EQ(r.m_Exit, 0) << r.m_Err;
    const std::vector<std::string> lines = Lines(r.m_Out);
    ASSERT_EQ(lines.size(), 1u) << r.m_Out;
    const std::string& json = lines[0];
    EXPECT_EQ(json.front(), '{');
    EXPECT_EQ(json.back(), '}');
    for (const char* key : {"\"model\": ", "\"backends\": [\"CpuRef\"]", "\"threads\": 2", "\"warmup\": 1",
                            "\"iterations\": 3", "\"min_ms\": ", "\"median_ms\": ", "\"p90_ms\": ", "\"mean_ms\": ",
                            "\"parse_ms\": ", "\"optimize_ms\": ", "\"load_ms\": ", "\"peak_working_memory_bytes\": ", "\"layers_per_backend\": {\"CpuRef\": "}) {
        EXPECT_NE(json.find(key), std::string::npos) << key << " missing in " << json;
    }
}

TEST_F(CliTest, BenchHumanReport) {
    const CliResult r = Cli({"bench", kMlp, "--iterations", "2", "--warmup", "0"});
    ASSERT_EQ(r.m_Exit, 0) << r.m_Err;
    for (const char* word : {"latency over 2 runs after 0 warm-up: min ", " median ", " p90 ", " mean ",
                             "peak working memory: ", "parse: ", " ms, optimize: ", " ms, load: ", "layers: "}) {
        EXPECT_NE(r.m_Out.find(word), std::string::npos) << word << " missing in " << r.m_Out;
    }
}

TEST_F(CliTest, InspectListsLayersAndBackend) {
    const CliResult r = Cli({"inspect", kMlp, "--backends", "CpuRef"});
    ASSERT_EQ(r.m_Exit, 0) << r.m_Err;
    for (const char* word : {"(opset 13)", "inputs:", "'input' binding", "Float32 1x16", "outputs:",
                             "'probs' binding", "Float32 1x10", "layers (execution order):", "Gemm", "Softmax",
                             "on CpuRef", "\nlayers: ", "optimization log:"}) {
        EXPECT_NE(r.m_Out.find(word), std::string::npos) << word << " missing in " << r.m_Out;
    }
}

// inspect lists the constants constant folding made only with --all (counting them otherwise),
// and shows the layers inside a fused region.
TEST_F(CliTest, InspectHidesFoldedConstantsUnlessAllAndListsRegionLayers) {
    const fs::path model = m_Dir / "foldable.onnx";
    WriteFile(model, FoldableSumModelBytes());
    const CliResult plain = Cli({"inspect", model.string(), "--backends", "CpuRef"});
    ASSERT_EQ(plain.m_Exit, 0) << plain.m_Err;
    EXPECT_EQ(plain.m_Out.find("Constant(folded on CpuRef)"), std::string::npos) << plain.m_Out;
    EXPECT_NE(plain.m_Out.find("  (1 constant made by constant folding not shown; --all lists them)\n"),
              std::string::npos) << plain.m_Out;
    const CliResult all = Cli({"inspect", model.string(), "--backends", "CpuRef", "--all"});
    ASSERT_EQ(all.m_Exit, 0) << all.m_Err;
    EXPECT_NE(all.m_Out.find("  sum  Constant(folded on CpuRef)  -> Float32 4\n"), std::string::npos) << all.m_Out;
    EXPECT_EQ(all.m_Out.find("not shown; --all lists them"), std::string::npos) << all.m_Out;

    const CliResult backends = Cli({"backends"});
    if (backends.m_Out.find("\n  CpuAcc\n") == std::string::npos) GTEST_SKIP() << "CpuAcc is not built in";
    const CliResult region = Cli({"inspect", kMlp, "--backends", "CpuAcc,CpuRef"});
    ASSERT_EQ(region.m_Exit, 0) << region.m_Err;
    EXPECT_NE(region.m_Out.find("PreCompiled(CpuAcc region"), std::string::npos) << region.m_Out;
    EXPECT_NE(region.m_Out.find("\n      layers inside (4): fc1, relu, fc2, softmax\n"), std::string::npos)
        << region.m_Out;
}

// `trellis backends`: the built-in backend, a dynamic one with its file, API versions and
// capabilities, and the skipped files with their reasons.
TEST_F(CliTest, BackendsListsOriginsVersionsCapabilitiesAndSkippedFiles) {
    const fs::path dir = m_Dir / "dynamic";
    fs::create_directories(dir);
    for (const char* name : {"Valid", "Unavailable", "NullFactory", "MajorNewer"}) {
        fs::create_symlink(BuiltTestBackend(name), dir / BuiltTestBackend(name).filename());
    }
    WriteFile(dir / "Test_Text_backend.so", "not a shared object\n");
    const std::string api = trellis::kBackendApiVersion.ToString();
    const std::string newer = std::to_string(trellis::kBackendApiVersion.m_Major + 1) + ".0";
    const auto canonical = [](const char* name) { return fs::canonical(BuiltTestBackend(name)).string(); };

    const CliResult r = Cli({"backends", "--dynamic-backends-path", dir.string()});
    ASSERT_EQ(r.m_Exit, 0) << r.m_Err;
    EXPECT_TRUE(r.m_Err.empty()) << r.m_Err;
    for (const std::string& text : std::vector<std::string>{
             "Backend API version of this engine: " + api + "\n",
             "dynamic backend paths: " + dir.string() + "\n",
             "registered backends:\n",
             "  CpuRef\n    origin: built in\n    Backend API: " + api + " (the engine's)\n    available: yes\n"
                 "    capabilities: ",
             "  TestValid\n    origin: " + canonical("Valid") + "\n    Backend API: file " + api + ", engine " + api +
                 "\n    available: yes\n    capabilities: TestValidRelu=true, NonConstWeights=false\n",
             "  TestUnavailable\n    origin: " + canonical("Unavailable") + "\n    Backend API: file " + api +
                 ", engine " + api + "\n    available: no: no TestUnavailable device found (test backend)\n",
             "dynamic backend files skipped:\n",
             "  " + (dir / "Test_MajorNewer_backend.so").string() + " (id TestMalformed, Backend API " + newer +
                 ", resolves to " + canonical("MajorNewer") + "): incompatible Backend API version " + newer +
                 ": this engine implements " + api,
             "  " + (dir / "Test_NullFactory_backend.so").string() + " (id TestMalformed, Backend API " + api +
                 ", resolves to " + canonical("NullFactory") + "): BackendFactory() returned null\n",
             "  " + (dir / "Test_Text_backend.so").string() + ": not a loadable shared object: ",
             "dynamic backend path warnings: (none)\n"}) {
        EXPECT_NE(r.m_Out.find(text), std::string::npos) << "missing:\n" << text << "\nin:\n" << r.m_Out;
    }
    // The loaded file is listed as the backend's origin, not as skipped.
    EXPECT_EQ(r.m_Out.find((dir / "Test_Valid_backend.so").string()), std::string::npos) << r.m_Out;
}

// docs/backend-guide.md section 13.5 quotes every reason the loader records for a skipped file:
// each reason `trellis backends` prints for a file of every kind matches a row of the table, and
// each row matches a printed reason, except the rows no test file can produce (named below).
TEST_F(CliTest, BackendGuideQuotesEverySkipReason) {
    const std::string guide = ReadFile(fs::path(TRELLIS_SOURCE_DIR) / "docs" / "backend-guide.md");
    const auto section = guide.find("### 13.5 What gets skipped, and why");
    ASSERT_NE(section, std::string::npos);
    const auto sectionEnd = guide.find("\n### ", section + 1);
    // The second column of each table row: `reason`, with <...> for what varies.
    std::vector<std::pair<std::string, std::regex>> rows;
    std::istringstream lines(guide.substr(section, sectionEnd - section));
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind("| ", 0) != 0 || line.size() < 4 || line.compare(line.size() - 3, 3, "` |") != 0) continue;
        const auto open = line.rfind("| `");
        if (open == std::string::npos) continue;
        const std::string quoted = line.substr(open + 3, line.size() - 3 - (open + 3));
        std::string pattern;
        std::size_t at = 0;
        while (at < quoted.size()) {
            const auto lt = quoted.find('<', at);
            const std::string literal = quoted.substr(at, lt == std::string::npos ? std::string::npos : lt - at);
            for (char c : literal) {
                if (std::string("\\^$.|?*+()[]{}").find(c) != std::string::npos) pattern += '\\';
                pattern += c;
            }
            if (lt == std::string::npos) break;
            pattern += ".+";
            at = quoted.find('>', lt) + 1;
        }
        rows.emplace_back(quoted, std::regex(pattern));
    }
    ASSERT_GE(rows.size(), 14u) << "the skip-reason table of section 13.5 was not found";

    const fs::path dir = m_Dir / "dynamic";
    fs::create_directories(dir);
    for (const char* name : {"Valid", "NoGetBackendId", "NullFactory", "ThrowingFactory", "ThrowingGetId",
                             "ThrowingGetVersion", "MajorNewer", "IdCpuRef", "EmptyId", "IdMismatch"}) {
        fs::create_symlink(BuiltTestBackend(name), dir / BuiltTestBackend(name).filename());
    }
    fs::create_symlink(BuiltTestBackend("Valid"), dir / "Test_ValidAgain_backend.so");
    fs::create_symlink(dir / "nothing.so", dir / "Test_Dangling_backend.so");
    fs::create_directories(dir / "Test_Folder_backend.so");
    WriteFile(dir / "Test_Text_backend.so", "not a shared object\n");
    const CliResult r = Cli({"backends", "--dynamic-backends-path", dir.string()});
    ASSERT_EQ(r.m_Exit, 0) << r.m_Err;

    std::vector<bool> rowSeen(rows.size(), false);
    const auto skipped = r.m_Out.find("dynamic backend files skipped:\n");
    ASSERT_NE(skipped, std::string::npos) << r.m_Out;
    std::istringstream out(r.m_Out.substr(skipped + 31, r.m_Out.find("dynamic backend path warnings:") - skipped - 31));
    unsigned int reasons = 0;
    for (std::string line; std::getline(out, line);) {
        const auto colon = line.find(": ");
        ASSERT_NE(colon, std::string::npos) << line;
        const std::string reason = line.substr(colon + 2);
        ++reasons;
        bool documented = false;
        for (std::size_t i = 0; i < rows.size(); ++i) {
            if (std::regex_match(reason, rows[i].second)) {
                documented = true;
                rowSeen[i] = true;
            }
        }
        EXPECT_TRUE(documented) << "docs/backend-guide.md 13.5 does not quote the reason: " << reason;
    }
    EXPECT_EQ(reasons, 13u) << r.m_Out;
    // Rows no test file produces: an unresolvable name other than a dangling symlink, an object
    // GetId() that throws, and a GetVersion() that throws a std::exception (the test file throws
    // an int: the non-standard row).
    const std::vector<std::string> unproducible{"cannot resolve the file: <error>",
                                                "the backend object's GetId() threw: <message>",
                                                "GetVersion() threw: <message>"};
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const bool exempt =
            std::find(unproducible.begin(), unproducible.end(), rows[i].first) != unproducible.end();
        EXPECT_TRUE(rowSeen[i] || exempt) << "docs/backend-guide.md 13.5 quotes a reason the tool did not print: "
                                          << rows[i].first << "\n" << r.m_Out;
    }
}

TEST_F(CliTest, BackendsWithoutDynamicPathsAndWithBadOnes) {
    const CliResult plain = Cli({"backends"});
    ASSERT_EQ(plain.m_Exit, 0) << plain.m_Err;
    EXPECT_NE(plain.m_Out.find("  CpuRef\n    origin: built in\n"), std::string::npos) << plain.m_Out;
    EXPECT_EQ(plain.m_Out.find("TestValid"), std::string::npos) << plain.m_Out;
    // The defaults end with the installed folder next to libtrellis, absent in a build tree.
    EXPECT_NE(plain.m_Out.find("dynamic backend paths:\n"), std::string::npos) << plain.m_Out;
    EXPECT_NE(plain.m_Out.find("/trellis/backends (not present)\n"), std::string::npos) << plain.m_Out;
    EXPECT_NE(plain.m_Out.find("dynamic backend files skipped: (none)\n"), std::string::npos) << plain.m_Out;
    EXPECT_NE(plain.m_Out.find("dynamic backend path warnings: (none)\n"), std::string::npos) << plain.m_Out;

    // A bad path is a warning in the report, not an error.
    const std::string missing = (m_Dir / "missing").string();
    const CliResult bad = Cli({"backends", "--dynamic-backends-path", missing});
    ASSERT_EQ(bad.m_Exit, 0) << bad.m_Err;
    EXPECT_NE(bad.m_Out.find("dynamic backend path warnings:\n  dynamic backend path '" + missing +
                             "' does not exist; skipped\n"),
              std::string::npos) << bad.m_Out;
    const CliResult relative = Cli({"backends", "--dynamic-backends-path=relative/dir"});
    ASSERT_EQ(relative.m_Exit, 0) << relative.m_Err;
    EXPECT_NE(relative.m_Out.find("'relative/dir' is not absolute"), std::string::npos) << relative.m_Out;

    ExpectOneError(Cli({"backends", "extra"}), 2, "extra");
    ExpectOneError(Cli({"backends", "--dynamic-backends-path="}), 2, "--dynamic-backends-path");
    ExpectOneError(Cli({"backends", "--backends", "CpuRef"}), 2, "--backends");
}

// run, bench and inspect pass --dynamic-backends-path on; the backend it loads can be named in
// --backends, and runs.
TEST_F(CliTest, DynamicBackendNamedInBackendsRunsTheModel) {
    const fs::path dir = m_Dir / "dynamic";
    fs::create_directories(dir);
    fs::create_symlink(BuiltTestBackend("Valid"), dir / "Test_Valid_backend.so");
    fs::create_symlink(BuiltTestBackend("ThrowingFactory"), dir / "Test_ThrowingFactory_backend.so");
    const fs::path model = m_Dir / "relu.onnx";
    WriteFile(model, OneNodeModelBytes("Relu", "relu"));
    trellis::OwnedTensor x;
    x.m_Info = trellis::TensorInfo(trellis::TensorShape({1, 4}), trellis::DataType::Float32);
    const float values[4] = {-2.0f, -0.5f, 0.5f, 3.0f};
    x.m_Data.resize(sizeof(values));
    std::memcpy(x.m_Data.data(), values, sizeof(values));
    trellis::SaveNpy((m_Dir / "x.npy").string(), x);

    const CliResult r = Cli({"run", model.string(), "--backends", "TestValid", "--dynamic-backends-path", dir.string(),
                             "--input", "x=" + (m_Dir / "x.npy").string(), "--output-dir", (m_Dir / "out").string()});
    ASSERT_EQ(r.m_Exit, 0) << r.m_Err;
    EXPECT_NE(r.m_Out.find("layers: 1 on TestValid"), std::string::npos) << r.m_Out;
    const trellis::OwnedTensor y = trellis::LoadTensorFile((m_Dir / "out" / "output_0.pb").string());
    ASSERT_EQ(y.m_Data.size(), sizeof(values));
    float got[4];
    std::memcpy(got, y.m_Data.data(), sizeof(got));
    EXPECT_EQ(got[0], 0.0f);
    EXPECT_EQ(got[1], 0.0f);
    EXPECT_EQ(got[2], 0.5f);
    EXPECT_EQ(got[3], 3.0f);

    const CliResult inspect = Cli({"inspect", model.string(), "--backends", "TestValid,CpuRef",
                                   "--dynamic-backends-path", dir.string()});
    ASSERT_EQ(inspect.m_Exit, 0) << inspect.m_Err;
    EXPECT_NE(inspect.m_Out.find("Relu)  -> Float32 1x4  on TestValid"), std::string::npos) << inspect.m_Out;
    const CliResult bench = Cli({"bench", model.string(), "--backends", "TestValid", "--dynamic-backends-path",
                                 dir.string(), "--iterations", "2", "--warmup", "0", "--json"});
    ASSERT_EQ(bench.m_Exit, 0) << bench.m_Err;
    EXPECT_NE(bench.m_Out.find("\"layers_per_backend\": {\"TestValid\": 1}"), std::string::npos) << bench.m_Out;

    // Without the path the backend does not exist; with a skipped file the error says why.
    const CliResult absent = Cli({"run", model.string(), "--backends", "TestValid"});
    ExpectOneError(absent, 2, "unknown backend 'TestValid'");
    fs::remove(dir / "Test_Valid_backend.so");
    const CliResult skipped = Cli({"run", model.string(), "--backends", "TestMalformed", "--dynamic-backends-path",
                                   dir.string()});
    ExpectOneError(skipped, 2, "unknown backend 'TestMalformed'");
    EXPECT_NE(skipped.m_Err.find("Test_ThrowingFactory_backend.so' (id TestMalformed) was skipped: BackendFactory() "
                                 "threw: BackendFactory of the test backend fails on purpose"),
              std::string::npos) << skipped.m_Err;
}

}

// ---- trellis onnx-test ----

// A one-node model `z = op(x, y)` over tensors of ONNX type `elemType` and shape `dims`.
std::string BinaryModelBytes(const char* op, int elemType, const std::vector<int64_t>& dims) {
    onnx::ModelProto model;
    model.set_ir_version(8);
    model.add_opset_import()->set_version(13);
    onnx::GraphProto* graph = model.mutable_graph();
    graph->set_name("binary");
    auto declare = [&](onnx::ValueInfoProto* info, const char* name) {
        info->set_name(name);
        auto* tensorType = info->mutable_type()->mutable_tensor_type();
        tensorType->set_elem_type(elemType);
        for (int64_t d : dims) {
            tensorType->mutable_shape()->add_dim()->set_dim_value(d);
        }
    };
    declare(graph->add_input(), "x");
    declare(graph->add_input(), "y");
    declare(graph->add_output(), "z");
    onnx::NodeProto* node = graph->add_node();
    node->set_op_type(op);
    node->set_name("node");
    node->add_input("x");
    node->add_input("y");
    node->add_output("z");
    std::string bytes;
    model.SerializeToString(&bytes);
    return bytes;
}

template <typename T>
trellis::OwnedTensor ValuesTensor(const std::string& name, trellis::TensorShape shape, trellis::DataType type,
                                  const std::vector<T>& values) {
    trellis::OwnedTensor t;
    t.m_Name = name;
    t.m_Info = trellis::TensorInfo(shape, type);
    t.m_Data.resize(values.size() * sizeof(T));
    std::memcpy(t.m_Data.data(), values.data(), t.m_Data.size());
    return t;
}

trellis::OwnedTensor Floats(const std::string& name, const std::vector<float>& values,
                            trellis::TensorShape shape = {}) {
    if (shape.GetNumDimensions() == 0) {
        shape = trellis::TensorShape({static_cast<unsigned int>(values.size())});
    }
    return ValuesTensor(name, shape, trellis::DataType::Float32, values);
}

trellis::OwnedTensor Int64s(const std::string& name, const std::vector<int64_t>& values) {
    return ValuesTensor(name, {static_cast<unsigned int>(values.size())}, trellis::DataType::Signed64, values);
}

// A case folder: model.onnx and (unless both lists are empty) test_data_set_0 with the tensors.
void WriteCase(const fs::path& dir, const std::string& model, const std::vector<trellis::OwnedTensor>& inputs,
               const std::vector<trellis::OwnedTensor>& outputs) {
    fs::create_directories(dir);
    WriteFile(dir / "model.onnx", model);
    if (inputs.empty() && outputs.empty()) {
        return;
    }
    const fs::path set = dir / "test_data_set_0";
    fs::create_directories(set);
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        trellis::SaveTensorProto((set / ("input_" + std::to_string(i) + ".pb")).string(), inputs[i]);
    }
    for (std::size_t i = 0; i < outputs.size(); ++i) {
        trellis::SaveTensorProto((set / ("output_" + std::to_string(i) + ".pb")).string(), outputs[i]);
    }
}

constexpr int kOnnxFloat = 1;
constexpr int kOnnxInt64 = 7;
const float kNaN = std::nanf("");
const float kInf = INFINITY;

// Nine cases, one per outcome the command distinguishes.
void WriteOnnxTestCases(const fs::path& root) {
    const std::string add = BinaryModelBytes("Add", kOnnxFloat, {3});
    WriteCase(root / "add_nan_inf_pass", BinaryModelBytes("Add", kOnnxFloat, {4}),
              {Floats("x", {kNaN, kInf, 1.0f, -kInf}), Floats("y", {0.0f, 0.0f, 1.0f, 0.0f})},
              {Floats("z", {kNaN, kInf, 2.0f, -kInf})});
    // |got - want| <= 1e-7 + 1e-3 * |want|: 0.9 <= 1.0009 and 0.0009 <= 0.0010010.
    WriteCase(root / "add_within_tolerance", add, {Floats("x", {1000.0f, 1.0f, 0.0f}), Floats("y", {0, 0, 0})},
              {Floats("z", {1000.9f, 1.0009f, 0.0f})});
    // 0 against 2e-7: atol 1e-7 is exceeded.
    WriteCase(root / "add_outside_tolerance", add, {Floats("x", {1000.0f, 1.0f, 0.0f}), Floats("y", {0, 0, 0})},
              {Floats("z", {1000.0f, 1.0f, 2e-7f})});
    // Input files named after graph inputs bind by name: input_0.pb feeds y here.
    WriteCase(root / "sub_by_name_int64", BinaryModelBytes("Sub", kOnnxInt64, {3}),
              {Int64s("y", {1, 2, 3}), Int64s("x", {10, 20, 30000000000})}, {Int64s("z", {9, 18, 29999999997})});
    // Unnamed files bind by position; integers must match exactly.
    WriteCase(root / "sub_int64_exact_fail", BinaryModelBytes("Sub", kOnnxInt64, {3}),
              {Int64s("", {10, 20, 30}), Int64s("", {1, 2, 3})}, {Int64s("", {9, 18, 28})});
    WriteCase(root / "unsupported_op", UnknownOpModelBytes(), {Floats("x", {1, 2, 3, 4}, {1, 4})},
              {Floats("y", {1, 2, 3, 4}, {1, 4})});
    WriteCase(root / "wrong_shape", add, {Floats("x", {1, 2, 3}), Floats("y", {1, 2, 3})},
              {Floats("z", {2, 4, 6, 0}, {2, 2})});
    WriteCase(root / "no_data", add, {}, {});
    // A named input file whose shape contradicts the model's declared [3]: bad test data (a failure),
    // not a model the engine refuses.
    WriteCase(root / "input_contradicts_model", add, {Floats("x", {1, 2}), Floats("y", {1, 2, 3})},
              {Floats("z", {2, 4, 6})});
}

TEST_F(CliTest, OnnxTestReportsEachCaseAndCounts) {
    const fs::path root = m_Dir / "cases";
    WriteOnnxTestCases(root);
    const fs::path summary = m_Dir / "summary.json";
    const CliResult r = Cli({"onnx-test", root.string(), "--summary-json", summary.string()});
    EXPECT_EQ(r.m_Exit, 1) << r.m_Out << r.m_Err;  // cases failed
    EXPECT_TRUE(r.m_Err.empty()) << r.m_Err;
    const std::vector<std::string> expected = {
        "add_nan_inf_pass: pass",
        "add_outside_tolerance: fail: output 'z' (test_data_set_0/output_0.pb) element 2 [2] (1 of 3 differ): "
        "got 0, want 2.00000002e-07 (rtol 1e-3, atol 1e-7)",
        "add_within_tolerance: pass",
        "input_contradicts_model: fail: test data contradicts the model: model.onnx: input 'x': the given shape 2 "
        "contradicts dim 0 = 3 fixed by the model [3] (a graph input's value must have the shape the model declares)",
        "no_data: fail: the case has no test_data_set_* folder",
        "sub_by_name_int64: pass",
        "sub_int64_exact_fail: fail: output 'z' (test_data_set_0/output_0.pb) element 2 [2] (1 of 3 differ): "
        "got 27, want 28 (exact match required)",
        "unsupported_op: unsupported: model.onnx: node 'foo' (FooBar, opset 13): operator not supported by Trellis",
        "wrong_shape: fail: output 'z': got Float32 3, want Float32 2x2 (test_data_set_0/output_0.pb)",
        "3 passed, 5 failed, 1 skipped",
    };
    EXPECT_EQ(Lines(r.m_Out), expected) << r.m_Out;

    const std::string json = ReadFile(summary);
    for (const std::string& part : {
             std::string("{\"backends\": [\"CpuRef\"], \"passed\": 3, \"failed\": 5, \"skipped\": 1, \"cases\": ["),
             "\"dir\": \"" + root.string() + "\", \"case\": \"add_nan_inf_pass\", \"status\": \"pass\", \"reason\": \"\"",
             std::string("\"case\": \"unsupported_op\", \"status\": \"unsupported\", \"reason\": \"model.onnx: node "),
             std::string("\"case\": \"no_data\", \"status\": \"fail\", \"reason\": \"the case has no test_data_set_* folder\""),
         }) {
        EXPECT_NE(json.find(part), std::string::npos) << part << "\nmissing in:\n" << json;
    }
}

TEST_F(CliTest, OnnxTestFilterAndSingleCaseDirectory) {
    const fs::path root = m_Dir / "cases";
    WriteOnnxTestCases(root);
    const CliResult filtered = Cli({"onnx-test", root.string(), "--filter", "^add_(nan|within)"});
    EXPECT_EQ(filtered.m_Exit, 0) << filtered.m_Out << filtered.m_Err;
    EXPECT_EQ(Lines(filtered.m_Out),
              (std::vector<std::string>{"add_nan_inf_pass: pass", "add_within_tolerance: pass",
                                        "2 passed, 0 failed, 0 skipped"}));

    // Unsupported cases do not fail the command; a DIR holding model.onnx is one case.
    const CliResult single = Cli({"onnx-test", (root / "unsupported_op").string() + "/"});
    EXPECT_EQ(single.m_Exit, 0) << single.m_Out << single.m_Err;
    const std::vector<std::string> lines = Lines(single.m_Out);
    ASSERT_EQ(lines.size(), 2u) << single.m_Out;
    EXPECT_EQ(lines[0].rfind("unsupported_op: unsupported: ", 0), 0u) << lines[0];
    EXPECT_EQ(lines[1], "0 passed, 0 failed, 1 skipped");

    // Several DIRs run in the order given.
    const CliResult two = Cli({"onnx-test", (root / "wrong_shape").string(), (root / "add_nan_inf_pass").string()});
    EXPECT_EQ(two.m_Exit, 1);
    const std::vector<std::string> twoLines = Lines(two.m_Out);
    ASSERT_EQ(twoLines.size(), 3u) << two.m_Out;
    EXPECT_EQ(twoLines[0].rfind("wrong_shape: fail: ", 0), 0u);
    EXPECT_EQ(twoLines[1], "add_nan_inf_pass: pass");
}

TEST_F(CliTest, OnnxTestBadArgumentsGiveOneErrorLine) {
    ExpectOneError(Cli({"onnx-test"}), 2, "DIR");
    ExpectOneError(Cli({"onnx-test", m_Dir.string(), "--filter", "("}), 2, "--filter");
    ExpectOneError(Cli({"onnx-test", m_Dir.string(), "--backends", "NoSuchBackend"}), 2, "NoSuchBackend");
    ExpectOneError(Cli({"onnx-test", (m_Dir / "absent").string()}), 1, "absent");
    fs::create_directories(m_Dir / "empty");
    ExpectOneError(Cli({"onnx-test", (m_Dir / "empty").string()}), 1, "holds no test case");
}

// tests/conformance/run_conformance.py (the ctest wrapper) must fail when the pass count drops and
// when the command crashes or hangs, not only pass.
TEST_F(CliTest, ConformanceWrapperFailsOnFewerPassesCrashAndHang) {
    const fs::path root = m_Dir / "cases";
    WriteOnnxTestCases(root);
    const fs::path wrapper = fs::path(TRELLIS_SOURCE_DIR) / "tests" / "conformance" / "run_conformance.py";
    auto runWrapper = [&](const std::string& trellis, int recorded, const std::string& extra) {
        WriteFile(m_Dir / "expected.json", "{\"mini\": " + std::to_string(recorded) + "}");
        const std::string command = ShellQuote(TRELLIS_PYTHON) + " " + ShellQuote(wrapper.string()) +
                                    " --trellis " + ShellQuote(trellis) + " --dir " + ShellQuote(root.string()) +
                                    " --key mini --expected " + ShellQuote((m_Dir / "expected.json").string()) +
                                    " --summary-json " + ShellQuote((m_Dir / "s" / "mini.json").string()) + extra +
                                    " >" + ShellQuote((m_Dir / "wrapper.txt").string()) + " 2>&1";
        const int status = std::system(command.c_str());
        return std::make_pair(WIFEXITED(status) ? WEXITSTATUS(status) : -1, ReadFile(m_Dir / "wrapper.txt"));
    };
    auto [okExit, okOut] = runWrapper(TRELLIS_CLI_PATH, 3, "");
    EXPECT_EQ(okExit, 0) << okOut;
    EXPECT_NE(okOut.find("mini: 3 passed, 5 failed, 1 skipped"), std::string::npos) << okOut;

    auto [dropExit, dropOut] = runWrapper(TRELLIS_CLI_PATH, 4, "");
    EXPECT_EQ(dropExit, 1) << dropOut;
    EXPECT_NE(dropOut.find("3 cases pass, fewer than the 4 recorded"), std::string::npos) << dropOut;
    EXPECT_NE(dropOut.find("  wrong_shape: fail: "), std::string::npos) << dropOut;

    WriteFile(m_Dir / "crash.sh", "#!/bin/sh\necho 'first_case: pass'\nkill -SEGV $$\n");
    fs::permissions(m_Dir / "crash.sh", fs::perms::owner_all);
    auto [crashExit, crashOut] = runWrapper((m_Dir / "crash.sh").string(), 0, "");
    EXPECT_EQ(crashExit, 1) << crashOut;
    EXPECT_NE(crashOut.find("exited with status -11 (a crash"), std::string::npos) << crashOut;
    EXPECT_NE(crashOut.find("the last case reported was: first_case: pass"), std::string::npos) << crashOut;

    WriteFile(m_Dir / "hang.sh", "#!/bin/sh\nexec sleep 30\n");
    fs::permissions(m_Dir / "hang.sh", fs::perms::owner_all);
    auto [hangExit, hangOut] = runWrapper((m_Dir / "hang.sh").string(), 0, " --timeout 1");
    EXPECT_EQ(hangExit, 1) << hangOut;
    EXPECT_NE(hangOut.find("onnx-test hung"), std::string::npos) << hangOut;

}  // namespace

// trellis codegen: the files, the interface it reports, and refusals naming the layer and the op.
TEST_F(CliTest, CodegenWritesTheArtifactFiles) {
    const fs::path out = m_Dir / "mlp";
    const CliResult r = Cli({"codegen", kMlp, "-o", out.string(), "--name", "Mlp", "--with-main"});
    ASSERT_EQ(r.m_Exit, 0) << r.m_Err;
    EXPECT_TRUE(r.m_Err.empty()) << r.m_Err;
    EXPECT_NE(r.m_Out.find("artifact Mlp (target soft): 4 layers"), std::string::npos) << r.m_Out;
    EXPECT_NE(r.m_Out.find("input 'input' Float32 1x16: get_input()"), std::string::npos) << r.m_Out;
    EXPECT_NE(r.m_Out.find("output 'probs' Float32 1x10: get_probs()"), std::string::npos) << r.m_Out;
    for (const char* file : {"Mlp.h", "Mlp.cpp", "Mlp.params", "Mlp_main.cpp", "CMakeLists.txt"}) {
        EXPECT_TRUE(fs::exists(out / file)) << file;
    }
    const std::string header = ReadFile(out / "Mlp.h");
    for (const char* decl : {"class Mlp {", "explicit Mlp(const std::string& params_path = \"Mlp.params\");",
                             "void Inference();", "Tensor& get_input();", "Tensor& getInput();", "Tensor& getOutput();"}) {
        EXPECT_NE(header.find(decl), std::string::npos) << decl << " in\n" << header;
    }
    // --target cuda: the kernels file besides the host code (building it needs CUDA; generating does not).
    const CliResult cuda = Cli({"codegen", kMlp, "-o", (m_Dir / "cuda").string(), "--target", "cuda", "--with-main"});
    ASSERT_EQ(cuda.m_Exit, 0) << cuda.m_Err;
    EXPECT_NE(cuda.m_Out.find("artifact Net (target cuda): 4 layers"), std::string::npos) << cuda.m_Out;
    for (const char* file : {"Net.h", "Net.cpp", "Net_kernels.cu", "Net.params", "Net_main.cpp", "CMakeLists.txt"}) {
        EXPECT_TRUE(fs::exists(m_Dir / "cuda" / file)) << file;
    }
    // Without --with-main, no program; the long option works like -o.
    const CliResult plain = Cli({"codegen", kMlp, "--output-dir", (m_Dir / "plain").string()});
    ASSERT_EQ(plain.m_Exit, 0) << plain.m_Err;
    EXPECT_TRUE(fs::exists(m_Dir / "plain" / "Net.cpp"));
    EXPECT_FALSE(fs::exists(m_Dir / "plain" / "Net_main.cpp"));
    EXPECT_EQ(ReadFile(m_Dir / "plain" / "Net.cpp").find("Net_create"), std::string::npos);
    // --c-api: the C entry points.
    const CliResult capi = Cli({"codegen", kMlp, "-o", (m_Dir / "capi").string(), "--c-api"});
    ASSERT_EQ(capi.m_Exit, 0) << capi.m_Err;
    const std::string source = ReadFile(m_Dir / "capi" / "Net.cpp");
    for (const char* def : {"extern \"C\" void* Net_create(const char* params_path)",
                            "extern \"C\" int Net_run(void* net, const void* const* inputs, void* const* outputs)",
                            "extern \"C\" void Net_destroy(void* net)", "extern \"C\" const char* Net_error()"}) {
        EXPECT_NE(source.find(def), std::string::npos) << def << " in\n" << source;
    }
}

TEST_F(CliTest, CodegenRefusesWithOneErrorLine) {
    ExpectOneError(Cli({"codegen", kMlp}), 2, "-o DIR (--output-dir) is required");
    ExpectOneError(Cli({"codegen", kMlp, "-o", m_Dir.string(), "--target", "fpga"}), 2, "unknown target 'fpga'");
    ExpectOneError(Cli({"codegen", kMlp, "-o", m_Dir.string(), "--name", "my-net"}), 1, "'my-net' is not a C++ identifier");
    ExpectOneError(Cli({"codegen", kMlp, "-x"}), 2, "unknown option '-x'");
    // Dims the model leaves symbolic must be pinned.
    const fs::path symbolic = m_Dir / "symbolic.onnx";
    WriteFile(symbolic, SymbolicBatchModelBytes());
    ExpectOneError(Cli({"codegen", symbolic.string(), "-o", (m_Dir / "s").string()}), 1,
                   "input 'x' is Float32 ?x4: dim 0 ('batch') must be static to generate code; pin the dims with --shape x=AxBx...");
    EXPECT_EQ(Cli({"codegen", symbolic.string(), "-o", (m_Dir / "s").string(), "--shape", "x=3x4"}).m_Exit, 0);
    // An op the soft target does not generate (quantization): named with its layer.
    onnx::ModelProto model;
    model.set_ir_version(8);
    model.add_opset_import()->set_version(13);
    onnx::GraphProto* graph = model.mutable_graph();
    graph->set_name("quantize");
    auto* in = graph->add_input();
    in->set_name("x");
    in->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    in->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(4);
    auto* out = graph->add_output();
    out->set_name("q");
    out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::UINT8);
    out->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(4);
    auto* scale = graph->add_initializer();
    scale->set_name("scale");
    scale->set_data_type(onnx::TensorProto::FLOAT);
    scale->add_float_data(0.5f);
    onnx::NodeProto* node = graph->add_node();
    node->set_op_type("QuantizeLinear");
    node->set_name("quant");
    node->add_input("x");
    node->add_input("scale");
    node->add_output("q");
    std::string bytes;
    model.SerializeToString(&bytes);
    WriteFile(m_Dir / "quantize.onnx", bytes);
    ExpectOneError(Cli({"codegen", (m_Dir / "quantize.onnx").string(), "-o", (m_Dir / "q").string()}), 1,
                   "the soft target cannot generate 1 layer: layer 'quant' (QuantizeLinear): QuantizeLinear: the soft "
                   "target has no kernel for this op");
    // The cuda target names the layer, the op and its rule too.
    ExpectOneError(Cli({"codegen", (m_Dir / "quantize.onnx").string(), "-o", (m_Dir / "q").string(), "--target", "cuda"}), 1,
                   "the cuda target cannot generate 1 layer: layer 'quant' (QuantizeLinear): QuantizeLinear: ");
}

namespace {

// `trellis inspect` lists the copies between backends with the bytes each copies per inference:
// the Custom sample backend (device memory of its own) copies both inputs in and the sum out; a
// backend on host memory copies nothing.
TEST_F(CliTest, InspectReportsTheBytesCopiedBetweenBackends) {
    const fs::path model = m_Dir / "add.onnx";
    WriteFile(model, BinaryModelBytes("Add", onnx::TensorProto::FLOAT, {2, 13}));
    const CliResult r = Cli({"inspect", model.string(), "--backends", "Custom,CpuRef", "--dynamic-backends-path",
                             TRELLIS_CUSTOM_BACKEND_DIR});
    ASSERT_EQ(r.m_Exit, 0) << r.m_Err;
    for (const char* text : {"copies between backends per inference: 312 bytes in 3 MemCopy layers\n",
                             "  host -> Custom: 104 bytes  '", "  Custom -> host: 104 bytes  '",
                             "  total host -> Custom: 208 bytes in 2 copies\n",
                             "  total Custom -> host: 104 bytes in 1 copy\n"}) {
        EXPECT_NE(r.m_Out.find(text), std::string::npos) << text << " missing in " << r.m_Out;
    }
    const CliResult host = Cli({"inspect", model.string(), "--backends", "CpuRef"});
    ASSERT_EQ(host.m_Exit, 0) << host.m_Err;
    EXPECT_NE(host.m_Out.find("copies between backends per inference: none\n"), std::string::npos) << host.m_Out;
}

}  // namespace
