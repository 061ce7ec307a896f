// The Codegen backend (Trellis_Codegen_backend.so, loaded through
// IRuntime::CreationOptions::m_DynamicBackendsPath): a network part of which runs as compiled
// artifacts (PreCompiled layers) and the rest on CpuRef, the compiled artifact found in the cache
// by the next load, and a missing or failing compiler as a clear error naming the command.
// Compiling costs seconds: the two tests that compile share one cache, so the network is compiled
// once per run of the test binary.
#include <trellis/IRuntime.hpp>
#include <trellis/INetwork.hpp>
#include <trellis/backends/BackendRegistry.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <cstdlib>
#include <map>
#include <set>
#include <unistd.h>

using namespace trellis;
namespace fs = std::filesystem;

namespace {

/// A cache directory of this test process, made empty on first use and removed at exit.
std::string SharedCacheDir() {
    struct Dir {
        std::string m_Path;
        Dir() : m_Path((fs::temp_directory_path() / ("trellis-codegen-backend-test-" + std::to_string(::getpid()))).string()) {
            fs::remove_all(m_Path);
        }
        ~Dir() {
            std::error_code ec;
            fs::remove_all(m_Path, ec);
        }
    };
    static const Dir dir;
    return dir.m_Path;
}

/// A compiler that records each run (one line in <script>.runs) and then runs the system's c++:
/// the cache test counts compiles with it. Made once per test process, beside the shared cache.
const std::string& CountingCompiler() {
    static const std::string script = [] {
        const std::string path = SharedCacheDir() + "-cc.sh";
        {
            std::ofstream s(path);
            s << "#!/bin/sh\necho run >> \"$0.runs\"\nexec c++ \"$@\"\n";
        }
        fs::permissions(path, fs::perms::owner_all);
        std::atexit([] {
            std::error_code ec;
            fs::remove(SharedCacheDir() + "-cc.sh", ec);
            fs::remove(SharedCacheDir() + "-cc.sh.runs", ec);
        });
        return path;
    }();
    return script;
}

/// How many times CountingCompiler() has run.
std::size_t CompilerRuns() {
    std::ifstream in(CountingCompiler() + ".runs");
    std::size_t n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
}

/// An empty directory of its own.
std::string FreshDir(const std::string& tag) {
    const fs::path d = fs::temp_directory_path() / ("trellis-codegen-backend-" + tag + "-" + std::to_string(::getpid()));
    fs::remove_all(d);
    return d.string();
}

IRuntime::CreationOptions CodegenOptions(std::map<std::string, std::string> backendOptions) {
    IRuntime::CreationOptions options;
    options.m_DynamicBackendsPath = TRELLIS_CODEGEN_BACKEND_DIR;
    options.m_BackendOptions["Codegen"] = std::move(backendOptions);
    return options;
}

/// x, y: Float32 2x3. a = x + y; h = cast(a, Float16); b = cast(h, Float32); m = b * y;
/// s = relu(m) - c (c a constant of 3, broadcast). Outputs: 0 = s, 1 = a. The casts through
/// Float16 are what the code generator's soft target refuses (it runs float32 networks), so they
/// fall back to CpuRef and split the rest into two sub-graphs for Codegen.
INetworkPtr BuildMixedNetwork(const std::vector<float>& c) {
    const TensorInfo info({2, 3}, DataType::Float32);
    INetworkPtr net(INetwork::Create());
    IConnectableLayer* x = net->AddInputLayer(0, "x");
    IConnectableLayer* y = net->AddInputLayer(1, "y");
    IConnectableLayer* constant = net->AddConstantLayer(ConstTensor(TensorInfo({3}, DataType::Float32), c.data()), "c");
    IConnectableLayer* add = net->AddAdditionLayer("add");
    IConnectableLayer* toHalf = net->AddLayer(LayerType::Cast, CastDescriptor{DataType::Float16}, "to_half", 1, 1);
    IConnectableLayer* toFloat = net->AddLayer(LayerType::Cast, CastDescriptor{DataType::Float32}, "to_float", 1, 1);
    IConnectableLayer* mul = net->AddMultiplicationLayer("mul");
    IConnectableLayer* relu = net->AddElementwiseUnaryLayer({UnaryOperation::Relu}, "relu");
    IConnectableLayer* sub = net->AddElementwiseBinaryLayer({BinaryOperation::Sub}, "sub");
    IConnectableLayer* out0 = net->AddOutputLayer(0, "s");
    IConnectableLayer* out1 = net->AddOutputLayer(1, "a");
    x->GetOutputSlot(0).SetTensorInfo(info);
    y->GetOutputSlot(0).SetTensorInfo(info);
    x->GetOutputSlot(0).Connect(add->GetInputSlot(0));
    y->GetOutputSlot(0).Connect(add->GetInputSlot(1));
    add->GetOutputSlot(0).Connect(toHalf->GetInputSlot(0));
    toHalf->GetOutputSlot(0).Connect(toFloat->GetInputSlot(0));
    toFloat->GetOutputSlot(0).Connect(mul->GetInputSlot(0));
    y->GetOutputSlot(0).Connect(mul->GetInputSlot(1));
    mul->GetOutputSlot(0).Connect(relu->GetInputSlot(0));
    relu->GetOutputSlot(0).Connect(sub->GetInputSlot(0));
    constant->GetOutputSlot(0).Connect(sub->GetInputSlot(1));
    sub->GetOutputSlot(0).Connect(out0->GetInputSlot(0));
    add->GetOutputSlot(0).Connect(out1->GetInputSlot(0));
    return net;
}

const std::vector<float> kC{0.5f, -1.0f, 2.0f};
const std::vector<float> kX{1.0f, -2.0f, 3.25f, -4.0f, 5.5f, -6.0f};
const std::vector<float> kY{0.5f, 0.5f, -1.0f, -1.0f, 2.0f, 2.0f};

struct Outputs {
    std::vector<float> s = std::vector<float>(6), a = std::vector<float>(6);
};

/// Optimizes the mixed network for `backends`, loads it (returning false with the error if that
/// fails) and runs it once.
bool LoadAndRun(IRuntime& runtime, const std::vector<BackendId>& backends, Outputs& out, std::string& error,
                std::vector<LayerPlacement>* placements = nullptr) {
    INetworkPtr net = BuildMixedNetwork(kC);
    IOptimizedNetworkPtr opt = Optimize(*net, backends, runtime.GetDeviceSpec());
    if (placements) *placements = opt->GetLayerPlacements();
    NetworkId id = 0;
    if (runtime.LoadNetwork(id, std::move(opt), error) != Status::Success) return false;
    const Status status = runtime.EnqueueWorkload(
        id, {{0, ConstTensor(runtime.GetInputTensorInfo(id, 0), kX.data())}, {1, ConstTensor(runtime.GetInputTensorInfo(id, 1), kY.data())}},
        {{0, Tensor(runtime.GetOutputTensorInfo(id, 0), out.s.data())}, {1, Tensor(runtime.GetOutputTensorInfo(id, 1), out.a.data())}});
    EXPECT_EQ(status, Status::Success);
    runtime.UnloadNetwork(id);
    return true;
}

Outputs CpuRefOutputs() {
    IRuntimePtr runtime = IRuntime::Create(IRuntime::CreationOptions());
    Outputs out;
    std::string error;
    EXPECT_TRUE(LoadAndRun(*runtime, {"CpuRef"}, out, error)) << error;
    return out;
}

/// The cache entries (directory names) and their libraries' modification times.
std::map<std::string, fs::file_time_type> CacheEntries(const std::string& dir) {
    std::map<std::string, fs::file_time_type> entries;
    if (!fs::is_directory(dir)) return entries;
    for (const auto& e : fs::directory_iterator(dir)) {
        if (!e.is_directory()) continue;
        for (const auto& f : fs::directory_iterator(e.path())) {
            if (f.path().extension() == ".so") entries[e.path().filename().string()] = fs::last_write_time(f.path());
        }
    }
    return entries;
}

}  // namespace

TEST(CodegenBackend, MixedNetworkRunsCompiledArtifactsAndCpuRef) {
    IRuntimePtr runtime = IRuntime::Create(CodegenOptions({{"CacheDir", SharedCacheDir()}, {"Compiler", CountingCompiler()}}));
    ASSERT_TRUE(BackendRegistryInstance().IsBackendRegistered("Codegen"));
    Outputs got;
    std::string error;
    std::vector<LayerPlacement> placements;
    ASSERT_TRUE(LoadAndRun(*runtime, {"Codegen", "CpuRef"}, got, error, &placements)) << error;

    // Two PreCompiled layers on Codegen (add; mul, relu and sub), the casts on CpuRef with
    // Codegen's reason.
    std::size_t preCompiled = 0;
    std::set<std::string> substituted;
    for (const LayerPlacement& p : placements) {
        if (p.m_Type == LayerType::PreCompiled) {
            EXPECT_EQ(p.m_Backend, BackendId("Codegen")) << p.m_LayerName;
            ++preCompiled;
            substituted.insert(p.m_SubstitutedLayers.begin(), p.m_SubstitutedLayers.end());
        }
        if (p.m_LayerName == "to_half" || p.m_LayerName == "to_float") {
            EXPECT_EQ(p.m_Backend, BackendId("CpuRef")) << p.m_LayerName;
            ASSERT_FALSE(p.m_Declined.empty()) << p.m_LayerName;
            EXPECT_EQ(p.m_Declined[0].first, BackendId("Codegen"));
            EXPECT_NE(p.m_Declined[0].second.find("Float16"), std::string::npos) << p.m_Declined[0].second;
        }
    }
    EXPECT_EQ(preCompiled, 2u);
    EXPECT_EQ(substituted, (std::set<std::string>{"add", "mul", "relu", "sub"}));

    const Outputs want = CpuRefOutputs();
    for (std::size_t i = 0; i < 6; ++i) {
        EXPECT_EQ(got.a[i], want.a[i]) << i;
        EXPECT_EQ(got.s[i], want.s[i]) << i;
    }
    // And by hand: a = x + y; s = relu(float16(a) * y) - c.
    EXPECT_EQ(got.a[2], 2.25f);
    EXPECT_EQ(got.s[4], 7.5f * 2.0f + 1.0f);
    EXPECT_EQ(got.s[0], 0.75f - 0.5f);
}

TEST(CodegenBackend, SecondLoadFindsTheCompiledArtifactsInTheCache) {
    const std::string cache = SharedCacheDir();
    const auto load = [&](Outputs& out) {
        IRuntimePtr runtime = IRuntime::Create(CodegenOptions({{"CacheDir", cache}, {"Compiler", CountingCompiler()}}));
        std::string error;
        const auto start = std::chrono::steady_clock::now();
        EXPECT_TRUE(LoadAndRun(*runtime, {"Codegen", "CpuRef"}, out, error)) << error;
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    };
    // The first load compiles, unless the mixed-network test already filled the shared cache.
    Outputs first;
    const double firstMs = load(first);
    const auto before = CacheEntries(cache);
    ASSERT_EQ(before.size(), 2u) << "one cache entry per PreCompiled layer in " << cache;
    const std::size_t runsBefore = CompilerRuns();
    EXPECT_GE(runsBefore, 2u);

    // A new runtime (nothing shared in memory), the same compiler and cache: nothing compiled,
    // the libraries untouched.
    Outputs got;
    const double secondMs = load(got);
    EXPECT_EQ(CompilerRuns(), runsBefore) << "the second load ran the compiler";
    EXPECT_EQ(CacheEntries(cache), before);
    std::cout << "[ CODEGEN  ] load + run: " << firstMs << " ms (first in this test), " << secondMs
              << " ms (cache hit); compiler runs " << runsBefore << "\n";
    const Outputs want = CpuRefOutputs();
    EXPECT_EQ(got.s, want.s);
    EXPECT_EQ(got.a, want.a);
    EXPECT_EQ(first.s, want.s);
}

TEST(CodegenBackend, MissingCompilerIsAClearErrorNamingTheCommand) {
    const std::string cache = FreshDir("missing-compiler");
    IRuntimePtr runtime = IRuntime::Create(CodegenOptions({{"CacheDir", cache}, {"Compiler", "/nonexistent/trellis-test-c++"}}));
    Outputs out;
    std::string error;
    EXPECT_FALSE(LoadAndRun(*runtime, {"Codegen", "CpuRef"}, out, error));
    EXPECT_NE(error.find("cannot run the C++ compiler"), std::string::npos) << error;
    EXPECT_NE(error.find("/nonexistent/trellis-test-c++ -O2"), std::string::npos) << error;
    EXPECT_NE(error.find("option Compiler"), std::string::npos) << error;
    EXPECT_TRUE(CacheEntries(cache).empty());
    fs::remove_all(cache);
}

TEST(CodegenBackend, FailingCompilerIsAClearErrorWithItsOutput) {
    const std::string cache = FreshDir("failing-compiler");
    // A "compiler" that prints a diagnostic and fails.
    const fs::path script = fs::path(cache + "-cc.sh");
    {
        std::ofstream s(script);
        s << "#!/bin/sh\necho \"fatal: this compiler refuses everything\" >&2\nexit 3\n";
    }
    fs::permissions(script, fs::perms::owner_all);
    IRuntimePtr runtime = IRuntime::Create(CodegenOptions({{"CacheDir", cache}, {"Compiler", script.string()}}));
    Outputs out;
    std::string error;
    EXPECT_FALSE(LoadAndRun(*runtime, {"Codegen", "CpuRef"}, out, error));
    EXPECT_NE(error.find("the C++ compiler failed (exit status 3)"), std::string::npos) << error;
    EXPECT_NE(error.find(script.string() + " -O2"), std::string::npos) << error;
    EXPECT_NE(error.find("fatal: this compiler refuses everything"), std::string::npos) << error;
    EXPECT_TRUE(CacheEntries(cache).empty()) << "a failed compile leaves no cache entry";
    fs::remove_all(cache);
    fs::remove(script);
}

TEST(CodegenBackend, BadOptionValuesAreRefusedByName) {
    IRuntimePtr runtime = IRuntime::Create(CodegenOptions({{"Compiler", "   "}}));
    Outputs out;
    std::string error;
    EXPECT_FALSE(LoadAndRun(*runtime, {"Codegen", "CpuRef"}, out, error));
    EXPECT_NE(error.find("Codegen: option Compiler='   ' names no command"), std::string::npos) << error;
}
