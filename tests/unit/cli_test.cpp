// The `trellis` command-line tool, run as a separate process: help texts (and that docs/cli.md
// quotes them), run/bench/inspect on the example MLP, input and output files, and that every bad
// model, file or option ends in exactly one `error: ` line and exit status 1 or 2, never a crash.
#include <trellis/TensorIO.hpp>

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
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

// A valid ONNX model whose only node is an op no one implements.
std::string UnknownOpModelBytes() {
    onnx::ModelProto model;
    model.set_ir_version(8);
    model.add_opset_import()->set_version(13);
    onnx::GraphProto* graph = model.mutable_graph();
    graph->set_name("unknown_op");
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
    node->set_op_type("FooBar");
    node->set_name("foo");
    node->add_input("x");
    node->add_output("y");
    std::string bytes;
    model.SerializeToString(&bytes);
    return bytes;
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
    for (const char* word : {"run", "bench", "inspect", "Registered backends: ", "CpuRef"}) {
        EXPECT_NE(top.m_Out.find(word), std::string::npos) << word;
    }
    const std::vector<std::pair<std::string, std::vector<std::string>>> commands = {
        {"run", {"--backends", "--input", "--input-dir", "--output-dir", "--shape", "--seed", "--threads",
                 "--dynamic-backends-path"}},
        {"bench", {"--backends", "--threads", "--warmup", "--iterations", "--shape", "--json", "--seed",
                   "--dynamic-backends-path"}},
        {"inspect", {"--backends", "--shape", "--dynamic-backends-path"}},
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
         std::vector<std::vector<std::string>>{{"--help"}, {"run", "--help"}, {"bench", "--help"}, {"inspect", "--help"}}) {
        const CliResult r = Cli(args);
        ASSERT_EQ(r.m_Exit, 0);
        const auto registered = r.m_Out.find("Registered backends: ");
        ASSERT_NE(registered, std::string::npos);
        const std::string help = r.m_Out.substr(0, registered);
        EXPECT_NE(docs.find(help), std::string::npos) << "docs/cli.md does not quote:\n" << help;
    }
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
    EXPECT_NE(r.m_Out.find(" on CpuRef"), std::string::npos) << r.m_Out;
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
    ExpectOneError(Cli({"run", kMlp, "--threads", "0"}), 2, "--threads");
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
    const CliResult r = Cli({"bench", kMlp, "--json", "--iterations", "3", "--warmup", "1", "--threads", "2"});
    ASSERT_EQ(r.m_Exit, 0) << r.m_Err;
    const std::vector<std::string> lines = Lines(r.m_Out);
    ASSERT_EQ(lines.size(), 1u) << r.m_Out;
    const std::string& json = lines[0];
    EXPECT_EQ(json.front(), '{');
    EXPECT_EQ(json.back(), '}');
    for (const char* key : {"\"model\": ", "\"backends\": [\"CpuRef\"]", "\"threads\": 2", "\"warmup\": 1",
                            "\"iterations\": 3", "\"min_ms\": ", "\"median_ms\": ", "\"p90_ms\": ", "\"mean_ms\": ",
                            "\"load_ms\": ", "\"peak_working_memory_bytes\": ", "\"layers_per_backend\": {\"CpuRef\": "}) {
        EXPECT_NE(json.find(key), std::string::npos) << key << " missing in " << json;
    }
}

TEST_F(CliTest, BenchHumanReport) {
    const CliResult r = Cli({"bench", kMlp, "--iterations", "2", "--warmup", "0"});
    ASSERT_EQ(r.m_Exit, 0) << r.m_Err;
    for (const char* word : {"latency over 2 runs after 0 warm-up: min ", " median ", " p90 ", " mean ",
                             "peak working memory: ", "load: ", "layers: "}) {
        EXPECT_NE(r.m_Out.find(word), std::string::npos) << word << " missing in " << r.m_Out;
    }
}

TEST_F(CliTest, InspectListsLayersAndBackend) {
    const CliResult r = Cli({"inspect", kMlp});
    ASSERT_EQ(r.m_Exit, 0) << r.m_Err;
    for (const char* word : {"(opset 13)", "inputs:", "'input' binding", "Float32 1x16", "outputs:",
                             "'probs' binding", "Float32 1x10", "layers (execution order):", "Gemm", "Softmax",
                             "on CpuRef", "\nlayers: ", "optimization log:"}) {
        EXPECT_NE(r.m_Out.find(word), std::string::npos) << word << " missing in " << r.m_Out;
    }
}

}  // namespace
