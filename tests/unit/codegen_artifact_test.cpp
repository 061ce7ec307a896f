// The code generator's artifacts through the public API (<trellis/Codegen.hpp>): the weights
// file's header and alignment, and one artifact built with its generated CMakeLists.txt (with
// -Wall -Wextra -Werror) whose self-test program must reproduce CpuRef's output and refuse a
// missing, damaged, truncated or foreign weights file with one clear error.
#include "TestHelpers.hpp"

#include <trellis/Codegen.hpp>

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

namespace fs = std::filesystem;
using namespace trellis;
using namespace trellis::test;

namespace {

const std::string kMlp = std::string(TRELLIS_SOURCE_DIR) + "/examples/models/mlp.onnx";

IOptimizedNetworkPtr OptimizeForCodegen(const std::string& path, const IRuntime& runtime) {
    IOnnxParserPtr parser = IOnnxParser::Create();
    INetworkPtr net = parser->CreateNetworkFromBinaryFile(path);
    return Optimize(*net, {"CpuRef"}, runtime.GetDeviceSpec());
}

uint64_t ReadLe(const std::vector<uint8_t>& bytes, std::size_t at, int n) {
    uint64_t v = 0;
    for (int i = n; i-- > 0;) v = (v << 8) | bytes[at + static_cast<std::size_t>(i)];
    return v;
}

struct Shell {
    int m_Exit = -1;
    std::string m_Output;
};

/// Runs `command` through the shell, stdout and stderr together.
Shell RunShell(const std::string& command, const fs::path& log) {
    const int status = std::system((command + " >" + log.string() + " 2>&1").c_str());
    std::ifstream in(log);
    std::ostringstream text;
    text << in.rdbuf();
    return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), text.str()};
}

class CodegenArtifactTest : public ::testing::Test {
protected:
    void SetUp() override {
        m_Dir = fs::temp_directory_path() /
                ("trellis_codegen_test_" + std::to_string(::getpid()) + "_" +
                 ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(m_Dir);
        fs::create_directories(m_Dir);
    }
    void TearDown() override {
        std::error_code ec;
        fs::remove_all(m_Dir, ec);
    }
    fs::path m_Dir;
};

}  // namespace

TEST_F(CodegenArtifactTest, WeightsFileHeaderAndAlignment) {
    IRuntimePtr runtime = IRuntime::Create({});
    IOptimizedNetworkPtr net = OptimizeForCodegen(kMlp, *runtime);
    ArtifactOptions options;
    options.m_Name = "Mlp";
    const Artifact a = GenerateArtifact(*net, options);
    const std::vector<uint8_t>& p = a.m_Params;
    ASSERT_GE(p.size(), 64u);
    EXPECT_EQ(std::string(p.begin(), p.begin() + 8), "TRLPARAM");
    EXPECT_EQ(ReadLe(p, 8, 4), 1u);       // format version
    EXPECT_EQ(ReadLe(p, 12, 4), 64u);     // alignment
    EXPECT_EQ(ReadLe(p, 16, 8), a.m_ModelHash);
    EXPECT_EQ(ReadLe(p, 24, 8), p.size());
    EXPECT_EQ(ReadLe(p, 32, 8), 4u);      // fc1.weight, fc1.bias, fc2.weight, fc2.bias
    // Every weight the code reads sits at an offset that is a multiple of 64, inside the file.
    const std::string& code = a.m_Sources.at("Mlp.cpp");
    const std::regex weight(R"(l\.params\.Data\(\) \+ (\d+)u)");
    std::size_t count = 0;
    for (auto it = std::sregex_iterator(code.begin(), code.end(), weight); it != std::sregex_iterator(); ++it) {
        const std::size_t offset = std::stoul((*it)[1]);
        EXPECT_EQ(offset % 64, 0u) << offset;
        EXPECT_LT(offset, p.size());
        ++count;
    }
    EXPECT_EQ(count, 4u) << code;
    EXPECT_NE(code.find("constexpr std::uint64_t kParamsBytes = " + std::to_string(p.size()) + "u;"), std::string::npos);
    // The same network generates the same artifact; another network's hash differs.
    EXPECT_EQ(GenerateArtifact(*net, options).m_Params, p);
    EXPECT_EQ(a.m_Inputs.size(), 1u);
    EXPECT_EQ(a.m_Inputs[0].m_Accessor, "get_input");
    EXPECT_EQ(a.m_Outputs[0].m_Accessor, "get_probs");
}

TEST_F(CodegenArtifactTest, InvalidNamesAndUnknownTargetsAreRefused) {
    IRuntimePtr runtime = IRuntime::Create({});
    IOptimizedNetworkPtr net = OptimizeForCodegen(kMlp, *runtime);
    ArtifactOptions options;
    options.m_Name = "3net";
    try {
        GenerateArtifact(*net, options);
        FAIL() << "a name starting with a digit was accepted";
    } catch (const InvalidArgumentException& e) {
        EXPECT_NE(std::string(e.what()).find("'3net' is not a C++ identifier"), std::string::npos) << e.what();
    }
    options.m_Name = "Net";
    options.m_Target = "fpga";
    try {
        GenerateArtifact(*net, options);
        FAIL() << "an unknown target was accepted";
    } catch (const InvalidArgumentException& e) {
        EXPECT_NE(std::string(e.what()).find("no target 'fpga' (targets: soft"), std::string::npos) << e.what();
    }
}

// One artifact (the example MLP) built with its own CMakeLists.txt, warnings as errors, and run.
TEST_F(CodegenArtifactTest, GeneratedCMakeListsBuildsTheSelfTestProgram) {
    IRuntimePtr runtime = IRuntime::Create({});
    ArtifactOptions options;
    options.m_WithMain = true;
    const Artifact a = GenerateArtifact(*OptimizeForCodegen(kMlp, *runtime), options);
    const fs::path src = m_Dir / "src", build = m_Dir / "build";
    WriteArtifact(a, src.string());
    for (const char* file : {"Net.h", "Net.cpp", "Net.params", "Net_main.cpp", "CMakeLists.txt"}) {
        ASSERT_TRUE(fs::exists(src / file)) << file;
    }
    const Shell configure = RunShell("cmake -S " + src.string() + " -B " + build.string() +
                                    " -DCMAKE_BUILD_TYPE=Release '-DCMAKE_CXX_FLAGS=-Wall -Wextra -Werror'",
                                m_Dir / "configure.log");
    ASSERT_EQ(configure.m_Exit, 0) << configure.m_Output;
    const Shell make = RunShell("cmake --build " + build.string(), m_Dir / "build.log");
    ASSERT_EQ(make.m_Exit, 0) << make.m_Output;
    ASSERT_TRUE(fs::exists(build / "Net_main"));
    ASSERT_TRUE(fs::exists(build / "Net.params"));

    // The same input through CpuRef and through the artifact.
    OwnedTensor input;
    input.m_Info = TensorInfo({1, 16}, DataType::Float32);
    input.m_Data.resize(16 * sizeof(float));
    for (int i = 0; i < 16; ++i) reinterpret_cast<float*>(input.m_Data.data())[i] = 0.25f * static_cast<float>(i % 7) - 0.6f;
    SaveNpy((m_Dir / "input.npy").string(), input);
    const LoadedModel ref = LoadedModel::Load(kMlp, {"CpuRef"});
    const OwnedTensor want = ref.Run({input})[0];

    const std::string main = (build / "Net_main").string();
    const Shell run = RunShell(main + " --input input=" + (m_Dir / "input.npy").string() + " --output-dir " + (m_Dir / "out").string(),
                          m_Dir / "run.log");
    ASSERT_EQ(run.m_Exit, 0) << run.m_Output;
    const OwnedTensor got = LoadTensorFile((m_Dir / "out" / "probs.npy").string());
    ASSERT_EQ(got.m_Info.GetShape(), want.m_Info.GetShape());
    EXPECT_LT(RelativeL2(got, want), 1e-6);

    // Usage errors: exit status 2, one line.
    Shell r = RunShell(main + " --output-dir " + (m_Dir / "out").string(), m_Dir / "e1.log");
    EXPECT_EQ(r.m_Exit, 2);
    EXPECT_EQ(r.m_Output, "error: input 'input' not given (--input input=FILE.npy)\n");
    r = RunShell(main + " --input nope=x.npy --output-dir x", m_Dir / "e2.log");
    EXPECT_EQ(r.m_Exit, 2);
    EXPECT_EQ(r.m_Output, "error: 'nope' is not an input of the network (inputs: input)\n");
    // A file of the wrong shape.
    OwnedTensor wrong;
    wrong.m_Info = TensorInfo({1, 8}, DataType::Float32);
    wrong.m_Data.assign(8 * sizeof(float), 0);
    SaveNpy((m_Dir / "wrong.npy").string(), wrong);
    r = RunShell(main + " --input input=" + (m_Dir / "wrong.npy").string() + " --output-dir x", m_Dir / "e3.log");
    EXPECT_EQ(r.m_Exit, 1);
    EXPECT_NE(r.m_Output.find("expected <f4 (1, 16), got <f4 (1, 8)"), std::string::npos) << r.m_Output;

    // Weights files: missing, not one, truncated, another model's.
    const std::string inputArg = " --input input=" + (m_Dir / "input.npy").string() + " --output-dir " + (m_Dir / "o").string();
    const auto runWith = [&](const fs::path& params, const char* log) {
        return RunShell(main + inputArg + " --params " + params.string(), m_Dir / log);
    };
    r = runWith(m_Dir / "missing.params", "p1.log");
    EXPECT_EQ(r.m_Exit, 1);
    EXPECT_NE(r.m_Output.find("missing.params: cannot open the weights file"), std::string::npos) << r.m_Output;
    std::vector<uint8_t> bytes = a.m_Params;
    bytes[0] = 'X';
    std::ofstream(m_Dir / "magic.params", std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                                                 static_cast<std::streamsize>(bytes.size()));
    r = runWith(m_Dir / "magic.params", "p2.log");
    EXPECT_EQ(r.m_Exit, 1);
    EXPECT_NE(r.m_Output.find("not a Trellis artifact weights file"), std::string::npos) << r.m_Output;
    std::ofstream(m_Dir / "short.params", std::ios::binary).write(reinterpret_cast<const char*>(a.m_Params.data()),
                                                                 static_cast<std::streamsize>(a.m_Params.size() - 100));
    r = runWith(m_Dir / "short.params", "p3.log");
    EXPECT_EQ(r.m_Exit, 1);
    EXPECT_NE(r.m_Output.find("truncated or damaged weights file"), std::string::npos) << r.m_Output;
    std::ofstream(m_Dir / "tiny.params", std::ios::binary).write(reinterpret_cast<const char*>(a.m_Params.data()), 10);
    r = runWith(m_Dir / "tiny.params", "p4.log");
    EXPECT_EQ(r.m_Exit, 1);
    EXPECT_NE(r.m_Output.find("truncated weights file (10 bytes"), std::string::npos) << r.m_Output;
    // Another model: the MLP with its first bias changed, so its hash differs.
    bytes = a.m_Params;
    bytes[bytes.size() - 1] ^= 0x40;
    const uint64_t otherHash = ReadLe(bytes, 16, 8) ^ 0x1;
    for (int i = 0; i < 8; ++i) bytes[16 + static_cast<std::size_t>(i)] = static_cast<uint8_t>(otherHash >> (8 * i));
    std::ofstream(m_Dir / "other.params", std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                                                 static_cast<std::streamsize>(bytes.size()));
    r = runWith(m_Dir / "other.params", "p5.log");
    EXPECT_EQ(r.m_Exit, 1);
    EXPECT_NE(r.m_Output.find("the weights file belongs to another model"), std::string::npos) << r.m_Output;
}

// The cuda target, generated without CUDA: the kernels file, the library calls configured in the
// constructor, the capture, and an Inference() that only copies, launches the graph and waits.
TEST_F(CodegenArtifactTest, CudaTargetConfiguresInTheConstructorAndLaunchesAGraph) {
    IRuntimePtr runtime = IRuntime::Create({});
    ArtifactOptions options;
    options.m_Target = "cuda";
    options.m_WithMain = true;
    const Artifact a = GenerateArtifact(*OptimizeForCodegen(kMlp, *runtime), options);
    for (const char* file : {"Net.h", "Net.cpp", "Net_kernels.cu", "Net_main.cpp", "CMakeLists.txt"}) {
        ASSERT_TRUE(a.m_Sources.count(file)) << file;
    }
    const std::string& cpp = a.m_Sources.at("Net.cpp");
    const std::string& cu = a.m_Sources.at("Net_kernels.cu");
    EXPECT_NE(cu.find("namespace Net_kernels {"), std::string::npos);
    EXPECT_NE(cu.find("__global__ void SoftmaxKernel("), std::string::npos);
    EXPECT_NE(cpp.find("namespace Net_kernels {"), std::string::npos);
    EXPECT_EQ(cpp.find("__global__"), std::string::npos) << "the host file must compile with a C++ compiler";
    // Configured in the constructor: the two Gemms through cuBLASLt with the bias epilogue.
    EXPECT_NE(cpp.find("    l.matmul_0.Configure(l.cuda, \"Gemm 'fc1'\", 1u, 32u, 16u, false, true, 1.0f, 1.0f, true, false, 1, 0, 0, 0, 64u);\n"),
              std::string::npos)
        << cpp;
    EXPECT_NE(cpp.find("    l.cuda.Capture([this] { RunLayers(); });\n"), std::string::npos);
    const std::string inference = cpp.substr(cpp.find("void Net::Inference() {"));
    EXPECT_EQ(inference.substr(0, inference.find("\n}\n") + 3),
              "void Net::Inference() {\n"
              "    Layers& l = *layers_;\n"
              "    static_cast<void>(l);\n"
              "    l.cuda.CopyIn(reinterpret_cast<void*>(l.device + 256u), in_input_.data, 64u);\n"
              "    l.cuda.Launch();\n"
              "    l.cuda.CopyOut(out_probs_.data, reinterpret_cast<const void*>(l.device + 320u), 40u);\n"
              "    l.cuda.Synchronize(\"Inference\");\n"
              "}\n");
    const std::string& cmake = a.m_Sources.at("CMakeLists.txt");
    for (const char* line : {"enable_language(CUDA)\n", "find_package(CUDAToolkit REQUIRED)\n", "target_sources(Net PRIVATE Net_kernels.cu)\n",
                             "target_link_libraries(Net PUBLIC ${CUDNN_LIBRARY} CUDA::cublasLt CUDA::cudart_static)\n"}) {
        EXPECT_NE(cmake.find(line), std::string::npos) << line;
    }
}

// The cuda target's artifact built with its generated CMakeLists.txt (nvcc and C++ warnings as
// errors) where the CUDA toolkit and cuDNN are; running it needs a GPU (the codegen_models_cuda
// tests and bench/gpu/device_run.sh's codegen stage).
TEST_F(CodegenArtifactTest, CudaTargetGeneratedCMakeListsBuilds) {
    const char* home = std::getenv("CUDA_HOME");
    const fs::path cuda = home && *home ? fs::path(home) : fs::path("/usr/local/cuda");
    if (!fs::exists(cuda / "bin" / "nvcc") || !fs::exists(cuda / "include" / "cudnn.h")) {
        GTEST_SKIP() << "no CUDA toolkit with cuDNN at " << cuda << " (set CUDA_HOME)";
    }
    IRuntimePtr runtime = IRuntime::Create({});
    ArtifactOptions options;
    options.m_Target = "cuda";
    options.m_WithMain = true;
    const Artifact a = GenerateArtifact(*OptimizeForCodegen(kMlp, *runtime), options);
    const fs::path src = m_Dir / "src", build = m_Dir / "build";
    WriteArtifact(a, src.string());
    const Shell configure =
        RunShell("cmake -S " + src.string() + " -B " + build.string() + " -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_COMPILER=" +
                     (cuda / "bin" / "nvcc").string() +
                     " '-DCMAKE_CXX_FLAGS=-Wall -Wextra -Werror' '-DCMAKE_CUDA_FLAGS=-Werror all-warnings -Xcompiler -Wall,-Wextra,-Werror'",
                 m_Dir / "configure.log");
    ASSERT_EQ(configure.m_Exit, 0) << configure.m_Output;
    const Shell make = RunShell("cmake --build " + build.string(), m_Dir / "build.log");
    ASSERT_EQ(make.m_Exit, 0) << make.m_Output;
    EXPECT_TRUE(fs::exists(build / "Net_main"));
    EXPECT_TRUE(fs::exists(build / "Net.params"));
}
