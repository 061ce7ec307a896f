// Dynamic backends, rule by rule as the backend developer guide states them: the file-name table,
// path validation, the compile-time list and the run-time override, symlinks and canonical paths,
// duplicates, the version rules, every malformed shared object (skipped with its reason, never a
// crash), and the valid test backend "TestValid" loaded, run and unloaded again.
//
// The shared objects come from tests/dynamic/ (built into TRELLIS_TEST_DYNAMIC_BACKENDS_DIR);
// each test lays out its own temporary directories with the names and symlinks it needs.
#include "core/DynamicBackendLoader.hpp"

#include <trellis/Trellis.hpp>
#include <trellis/backends/BackendRegistry.hpp>

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace fs = std::filesystem;
using namespace trellis;
using core::DynamicBackendSet;

const BackendId kValidId{"TestValid"};

/// A built test backend: tests/dynamic's Test_<name>_backend.so.
fs::path Built(const std::string& name) {
    return fs::path(TRELLIS_TEST_DYNAMIC_BACKENDS_DIR) / ("Test_" + name + "_backend.so");
}

/// Whether the process has `path` open (RTLD_NOLOAD never loads; it takes a reference if loaded).
bool IsLibraryLoaded(const fs::path& path) {
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
    if (!h) return false;
    dlclose(h);
    return true;
}

const DynamicBackendStatus* FindStatus(const std::vector<DynamicBackendStatus>& statuses, const fs::path& path) {
    for (const DynamicBackendStatus& s : statuses) {
        if (s.m_Path == path.string()) return &s;
    }
    return nullptr;
}

std::string Describe(const std::vector<DynamicBackendStatus>& statuses) {
    std::string text;
    for (const DynamicBackendStatus& s : statuses) {
        text += "  " + s.m_Path + " -> " + (s.m_Loaded ? "loaded" : "skipped: " + s.m_Reason) + "\n";
    }
    return text;
}

IRuntimePtr RuntimeWithPath(const std::string& path) {
    IRuntime::CreationOptions options;
    options.m_DynamicBackendsPath = path;
    return IRuntime::Create(options);
}

/// Input(0) -> Relu -> [Sigmoid ->] Output(0), Float32 2x7.
INetworkPtr ReluNetwork(bool withSigmoid) {
    INetworkPtr net = INetwork::Create();
    IConnectableLayer* input = net->AddInputLayer(0, "x");
    IConnectableLayer* relu = net->AddElementwiseUnaryLayer(ElementwiseUnaryDescriptor{UnaryOperation::Relu}, "relu");
    IConnectableLayer* output = net->AddOutputLayer(0, "y");
    input->GetOutputSlot(0).SetTensorInfo(TensorInfo(TensorShape({2, 7}), DataType::Float32));
    input->GetOutputSlot(0).Connect(relu->GetInputSlot(0));
    IConnectableLayer* last = relu;
    if (withSigmoid) {
        IConnectableLayer* sigmoid =
            net->AddElementwiseUnaryLayer(ElementwiseUnaryDescriptor{UnaryOperation::Sigmoid}, "sigmoid");
        relu->GetOutputSlot(0).Connect(sigmoid->GetInputSlot(0));
        last = sigmoid;
    }
    last->GetOutputSlot(0).Connect(output->GetInputSlot(0));
    return net;
}

const std::vector<float> kReluInput{-3.5f, -1.0f, -0.0f, 0.0f, 0.25f, 1.0f, 7.5f,
                                    -100.0f, 2.0f, -2.0f, 1e-3f, -1e-3f, 42.0f, -42.0f};

std::vector<float> RunRelu(IRuntime& runtime, IOptimizedNetworkPtr optimized) {
    NetworkId id = 0;
    std::string error;
    EXPECT_EQ(runtime.LoadNetwork(id, std::move(optimized), error), Status::Success) << error;
    std::vector<float> out(kReluInput.size(), -999.0f);
    InputTensors inputs{{0, ConstTensor(runtime.GetInputTensorInfo(id, 0), kReluInput.data())}};
    OutputTensors outputs{{0, Tensor(runtime.GetOutputTensorInfo(id, 0), out.data())}};
    runtime.EnqueueWorkload(id, inputs, outputs);
    return out;
}

class DynamicBackendTest : public ::testing::Test {
protected:
    void SetUp() override {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        m_Dir = fs::temp_directory_path() / ("trellis_dynamic_test_" + std::to_string(::getpid()) + "_" + info->name());
        fs::remove_all(m_Dir);
        fs::create_directories(m_Dir);
        ASSERT_TRUE(fs::exists(Built("Valid"))) << "test backends not built in " << TRELLIS_TEST_DYNAMIC_BACKENDS_DIR;
        ASSERT_FALSE(BackendRegistryInstance().IsBackendRegistered(kValidId));
    }
    void TearDown() override {
        std::error_code ec;
        fs::remove_all(m_Dir, ec);
        // Every test leaves the process as it found it.
        EXPECT_FALSE(BackendRegistryInstance().IsBackendRegistered(kValidId));
    }
    fs::path Dir(const std::string& name) {
        const fs::path d = m_Dir / name;
        fs::create_directories(d);
        return d;
    }
    fs::path m_Dir;
};

// Every row of the guide's file-name table, exactly as listed (for the symlink rows and the
// pathA/pathB rows the name checked is the file's own name; what the links do is tested below).
TEST(DynamicBackendFileName, EveryRowOfTheGuideTable) {
    const std::vector<std::pair<std::string, bool>> rows = {
        {"Arm_GpuAcc_backend.so", true},           // valid: basic backend name
        {"Arm_GpuAcc_backend.so.1", true},         // valid: single field version number
        {"Arm_GpuAcc_backend.so.1.2", true},       // valid: multiple field version number
        {"Arm_GpuAcc_backend.so.1.2.3", true},     // valid: multiple field version number
        {"Arm_GpuAcc_backend.so.10.1.27", true},   // valid: Multiple digit version
        {"Arm_GpuAcc_backend.so.10.1.33.", false}, // not valid: dot not followed by version number
        {"Arm_GpuAcc_backend.so.3.4..5", false},   // not valid: dot not followed by version number
        {"Arm_GpuAcc_backend.so.1,1.1", false},    // not valid: comma instead of dot in the version
        {"Arm123_GpuAcc_backend.so", true},        // valid: digits in vendor name are allowed
        {"Arm_GpuAcc456_backend.so", true},        // valid: digits in backend id are allowed
        {"Arm%Co_GpuAcc_backend.so", false},       // not valid: invalid character in vendor name
        {"Arm_Gpu.Acc_backend.so", false},         // not valid: invalid character in backend id
        {"GpuAcc_backend.so", false},              // not valid: missing vendor name
        {"_GpuAcc_backend.so", false},             // not valid: missing vendor name
        {"Arm__backend.so", false},                // not valid: missing backend id
        {"Arm_GpuAcc.so", false},                  // not valid: missing "backend" at the end
        {"__backend.so", false},                   // not valid: missing vendor name and backend id
        {"__.so", false},                          // not valid: missing all fields
        {"Arm_GpuAcc_backend", false},             // not valid: missing at least ".so" at the end
        {"Arm_GpuAcc_backend_v1.2.so", false},     // not valid: extra version info at the end
        {"Arm_CpuAcc_backend.so", true},           // valid: basic backend name
        {"Arm_CpuAcc_backend.so.1", true},         // valid: symlink to valid backend file
        {"Arm_CpuAcc_backend.so.1.2", true},       // valid: symlink to valid symlink
        {"Arm_CpuAcc_backend.so.1.2.3", true},     // valid: symlink to valid symlink
        {"Arm_no_backend.so", true},               // name valid; the dangling link is skipped below
        {"Arm_GpuAcc_backend.so", true},           // pathA/: valid: basic backend name
        {"Arm_GpuAcc_backend.so", true},           // pathB/: valid name, duplicate (tested below)
    };
    for (const auto& [name, valid] : rows) {
        EXPECT_EQ(core::IsValidDynamicBackendFileName(name), valid) << name;
    }
    // Beyond the table: the rule's edges.
    for (const char* name : {"Arm_GpuAcc_backend.so.", "Arm_GpuAcc_backend.so1", "Arm_GpuAcc_backend.so.1a",
                             "arm_gpu_backend.SO", " Arm_GpuAcc_backend.so", "Arm_Gpu_Acc_backend.so",
                             "Arm_GpuAcc_backend.so.1 ", "", "Arm-X_GpuAcc_backend.so"}) {
        EXPECT_FALSE(core::IsValidDynamicBackendFileName(name)) << "'" << name << "'";
    }
}

TEST(DynamicBackendPaths, SplitColonSeparatedList) {
    using V = std::vector<std::string>;
    EXPECT_EQ(core::SplitDynamicBackendPaths(""), V{});
    EXPECT_EQ(core::SplitDynamicBackendPaths("/a"), V{"/a"});
    EXPECT_EQ(core::SplitDynamicBackendPaths("/a:/b/c:/d"), (V{"/a", "/b/c", "/d"}));
    EXPECT_EQ(core::SplitDynamicBackendPaths(":/a::/b:"), (V{"/a", "/b"}));
    EXPECT_EQ(core::SplitDynamicBackendPaths(":::"), V{});
    EXPECT_EQ(core::SplitDynamicBackendPaths("rel:/abs"), (V{"rel", "/abs"}));  // validated later, not here
}

// An empty compile-time list and no override: the feature is off, nothing is scanned.
TEST(DynamicBackendPaths, CompileTimeListIsEmptyByDefault) {
    EXPECT_STREQ(core::GetCompiledDynamicBackendPaths(), "")
        << "this build was configured with -DDYNAMIC_BACKEND_PATHS; the default is empty";
    const std::size_t registered = BackendRegistryInstance().Size();
    IRuntimePtr runtime = IRuntime::Create(IRuntime::CreationOptions());
    EXPECT_TRUE(runtime->GetDynamicBackendStatus().empty());
    EXPECT_TRUE(runtime->GetDynamicBackendWarnings().empty());
    EXPECT_EQ(BackendRegistryInstance().Size(), registered);
}

// Invalid paths (relative, missing, a file) are warnings; creation never throws; nothing loads.
TEST_F(DynamicBackendTest, InvalidPathsAreWarningsNeverErrors) {
    fs::create_symlink(Built("Valid"), Dir("real") / "Test_Valid_backend.so");
    const fs::path file = m_Dir / "a_file";
    std::ofstream(file) << "not a directory";
    const fs::path missing = m_Dir / "missing";
    const std::string relative = "tests/dynamic";

    const std::vector<std::pair<std::string, std::string>> cases = {
        {relative, "'" + relative + "' is not absolute"},
        {missing.string(), "'" + missing.string() + "' does not exist"},
        {file.string(), "'" + file.string() + "' is not a directory"},
        {(m_Dir / "real" / "Test_Valid_backend.so").string(), "is not a directory"},
    };
    for (const auto& [path, expected] : cases) {
        IRuntimePtr runtime{nullptr, &IRuntime::Destroy};
        ASSERT_NO_THROW(runtime = RuntimeWithPath(path)) << path;
        const std::vector<std::string> warnings = runtime->GetDynamicBackendWarnings();
        ASSERT_EQ(warnings.size(), 1u) << path;
        EXPECT_NE(warnings[0].find(expected), std::string::npos) << warnings[0];
        EXPECT_NE(warnings[0].find("skipped"), std::string::npos) << warnings[0];
        EXPECT_TRUE(runtime->GetDynamicBackendStatus().empty()) << path;
        EXPECT_FALSE(BackendRegistryInstance().IsBackendRegistered(kValidId));
    }

    // In a list (as DYNAMIC_BACKEND_PATHS is processed): the bad ones warn, the good one loads.
    auto set = DynamicBackendSet::LoadPaths({relative, missing.string(), (m_Dir / "real").string(), file.string()});
    EXPECT_EQ(set->GetWarnings().size(), 3u);
    ASSERT_EQ(set->GetStatus().size(), 1u);
    EXPECT_TRUE(set->GetStatus()[0].m_Loaded) << Describe(set->GetStatus());
    EXPECT_TRUE(BackendRegistryInstance().IsBackendRegistered(kValidId));
    set.reset();
    EXPECT_FALSE(BackendRegistryInstance().IsBackendRegistered(kValidId));
}

// The guide's example: a small network on the dynamically loaded backend, through
// CreationOptions::m_DynamicBackendsPath; unloaded again when the runtime goes.
// A backend built against an older minor API (1.0) loads into this engine and runs; the engine
// creates its factory with CreateWorkloadFactory() and never calls the later additions
// (CreateWorkloadFactoryWithOptions and IWorkload::ReadsConstantInput of 1.1, GetOptionWarnings of
// 1.2), which that backend's vtable would not have. The test backend throws if they are called.
TEST_F(DynamicBackendTest, OlderMinorApiBackendGetsOnlyTheCallsItKnows) {
    const fs::path dir = Dir("backends");
    fs::create_symlink(Built("ValidApi10"), dir / "Test_ValidApi10_backend.so");
    IRuntime::CreationOptions options;
    options.m_DynamicBackendsPath = dir.string();
    options.m_BackendOptions["TestValid10"]["Anything"] = "1";
    {
        IRuntimePtr runtime = IRuntime::Create(options);
        const std::vector<DynamicBackendStatus> status = runtime->GetDynamicBackendStatus();
        ASSERT_EQ(status.size(), 1u);
        ASSERT_TRUE(status[0].m_Loaded) << status[0].m_Reason;
        EXPECT_EQ(status[0].m_Version, (BackendVersion{1, 0}));
        EXPECT_EQ(BackendRegistryInstance().GetApiVersion("TestValid10"), (BackendVersion{1, 0}));
        EXPECT_TRUE(runtime->GetBackendOptionWarnings().empty());
        IOptimizedNetworkPtr optimized = Optimize(*ReluNetwork(false), {"TestValid10"}, runtime->GetDeviceSpec());
        const std::vector<float> out = RunRelu(*runtime, std::move(optimized));
        for (std::size_t i = 0; i < kReluInput.size(); ++i) {
            EXPECT_EQ(out[i], kReluInput[i] > 0.0f ? kReluInput[i] : 0.0f) << i;
        }
    }
    EXPECT_FALSE(BackendRegistryInstance().IsBackendRegistered("TestValid10"));
}

// A backend whose device is missing (IsAvailable() says no, Backend API 1.3) stays registered,
// says why, and the optimizer places its layers on the next preferred backend with that reason
// for every layer; preferred alone, Optimize() fails naming the reason.
TEST_F(DynamicBackendTest, UnavailableBackendsLayersGoToTheNextBackendWithItsReason) {
    const fs::path dir = Dir("backends");
    fs::create_symlink(Built("Unavailable"), dir / "Test_Unavailable_backend.so");
    IRuntimePtr runtime = RuntimeWithPath(dir.string());
    ASSERT_TRUE(BackendRegistryInstance().IsBackendRegistered("TestUnavailable"));
    const std::string want = "no TestUnavailable device found (test backend)";
    std::string reason;
    EXPECT_FALSE(BackendRegistryInstance().IsBackendAvailable("TestUnavailable", &reason));
    EXPECT_EQ(reason, want);
    EXPECT_TRUE(BackendRegistryInstance().IsBackendAvailable("CpuRef"));

    std::vector<std::string> messages;
    IOptimizedNetworkPtr optimized = Optimize(*ReluNetwork(true), {"TestUnavailable", "CpuRef"},
                                              runtime->GetDeviceSpec(), OptimizerOptions(), &messages);
    unsigned int declined = 0;
    for (const LayerPlacement& p : optimized->GetLayerPlacements()) {
        if (p.m_LayerName != "relu" && p.m_LayerName != "sigmoid") continue;
        EXPECT_EQ(p.m_Backend, BackendId("CpuRef")) << p.m_LayerName;
        ASSERT_EQ(p.m_Declined.size(), 1u) << p.m_LayerName;
        EXPECT_EQ(p.m_Declined[0].first, BackendId("TestUnavailable"));
        EXPECT_EQ(p.m_Declined[0].second, "TestUnavailable is not available: " + want);
        ++declined;
    }
    EXPECT_EQ(declined, 2u);
    bool warned = false;
    for (const std::string& m : messages) warned |= m.find("'TestUnavailable' is not available: " + want) != std::string::npos;
    EXPECT_TRUE(warned);
    const std::vector<float> out = RunRelu(*runtime, std::move(optimized));
    for (std::size_t i = 0; i < kReluInput.size(); ++i) {
        const double relu = kReluInput[i] > 0.0f ? kReluInput[i] : 0.0f;
        EXPECT_NEAR(out[i], 1.0 / (1.0 + std::exp(-relu)), 1e-6) << i;
    }
    try {
        Optimize(*ReluNetwork(false), {"TestUnavailable"}, runtime->GetDeviceSpec());
        ADD_FAILURE() << "Optimize() on an unavailable backend alone must fail";
    } catch (const BackendUnavailableException& e) {
        EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
}

TEST_F(DynamicBackendTest, LoadsValidBackendRunsItAndUnloadsIt) {
    const fs::path dir = Dir("backends");
    const fs::path link = dir / "Test_Valid_backend.so";
    fs::create_symlink(Built("Valid"), link);
    const std::string canonical = fs::canonical(Built("Valid")).string();
    ASSERT_FALSE(IsLibraryLoaded(canonical));

    IRuntimePtr runtime = RuntimeWithPath(dir.string());
    EXPECT_TRUE(runtime->GetDynamicBackendWarnings().empty());
    const std::vector<DynamicBackendStatus> status = runtime->GetDynamicBackendStatus();
    ASSERT_EQ(status.size(), 1u);
    EXPECT_TRUE(status[0].m_Loaded) << status[0].m_Reason;
    EXPECT_TRUE(status[0].m_Reason.empty());
    EXPECT_EQ(status[0].m_Path, link.string());
    EXPECT_EQ(status[0].m_CanonicalPath, canonical);
    EXPECT_EQ(status[0].m_Id, kValidId);
    EXPECT_EQ(status[0].m_Version, kBackendApiVersion);

    BackendRegistry& registry = BackendRegistryInstance();
    ASSERT_TRUE(registry.IsBackendRegistered(kValidId));
    EXPECT_EQ(registry.GetOrigin(kValidId), canonical);
    EXPECT_EQ(registry.GetOrigin("CpuRef"), "built in");
    EXPECT_TRUE(IsLibraryLoaded(canonical));
    const BackendIdVector& spec = runtime->GetDeviceSpec().GetSupportedBackends();
    EXPECT_NE(std::find(spec.begin(), spec.end(), kValidId), spec.end());
    {
        IBackendInternalUniquePtr backend = registry.GetFactory(kValidId)();
        ASSERT_TRUE(backend);
        EXPECT_EQ(backend->GetId(), kValidId);
        const BackendCapabilities caps = backend->GetCapabilities();
        EXPECT_NE(std::find(caps.begin(), caps.end(), std::make_pair(std::string("TestValidRelu"), true)), caps.end());
    }

    // Relu alone on TestValid.
    IOptimizedNetworkPtr optimized = Optimize(*ReluNetwork(false), {kValidId}, runtime->GetDeviceSpec());
    EXPECT_EQ(optimized->GetBackendLayerCounts().at(kValidId), 1u);
    const std::vector<float> out = RunRelu(*runtime, std::move(optimized));
    for (std::size_t i = 0; i < kReluInput.size(); ++i) {
        EXPECT_EQ(out[i], kReluInput[i] > 0.0f ? kReluInput[i] : 0.0f) << i;
    }

    // Relu on TestValid, Sigmoid (which TestValid declines, with its reason) falls back to CpuRef.
    std::vector<std::string> messages;
    IOptimizedNetworkPtr mixed =
        Optimize(*ReluNetwork(true), {kValidId, "CpuRef"}, runtime->GetDeviceSpec(), OptimizerOptions(), &messages);
    bool sigmoidDeclined = false;
    for (const LayerPlacement& p : mixed->GetLayerPlacements()) {
        if (p.m_LayerName == "relu") {
            EXPECT_EQ(p.m_Backend, kValidId);
        }
        if (p.m_LayerName == "sigmoid") {
            EXPECT_EQ(p.m_Backend, BackendId("CpuRef"));
            for (const auto& [backend, reason] : p.m_Declined) {
                sigmoidDeclined |= backend == kValidId &&
                                   reason.find("Sigmoid is not supported by TestValid") != std::string::npos;
            }
        }
    }
    EXPECT_TRUE(sigmoidDeclined);
    const std::vector<float> mixedOut = RunRelu(*runtime, std::move(mixed));
    for (std::size_t i = 0; i < kReluInput.size(); ++i) {
        const double relu = kReluInput[i] > 0.0f ? kReluInput[i] : 0.0f;
        EXPECT_NEAR(mixedOut[i], 1.0 / (1.0 + std::exp(-relu)), 1e-6) << i;
    }

    runtime.reset();
    EXPECT_FALSE(registry.IsBackendRegistered(kValidId));
    EXPECT_FALSE(IsLibraryLoaded(canonical)) << "the handle must be closed when the runtime is destroyed";
}

// Every malformed object is skipped with its reason; the runtime works; nothing stays loaded.
TEST_F(DynamicBackendTest, MalformedObjectsAreSkippedWithTheirReason) {
    const std::string major = std::to_string(kBackendApiVersion.m_Major);
    const std::string minor = std::to_string(kBackendApiVersion.m_Minor);
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"NoGetBackendId", "missing symbol(s) GetBackendId ("},
        {"NoGetVersion", "missing symbol(s) GetVersion ("},
        {"NoBackendFactory", "missing symbol(s) BackendFactory ("},
        {"NullFactory", "BackendFactory() returned null"},
        {"ThrowingFactory", "BackendFactory() threw: BackendFactory of the test backend fails on purpose"},
        {"ThrowingGetId", "GetBackendId() threw: GetBackendId of the test backend fails on purpose"},
        {"ThrowingGetVersion", "GetVersion() threw a non-standard exception"},
        {"MajorNewer", "incompatible Backend API version " + std::to_string(kBackendApiVersion.m_Major + 1) +
                           ".0: this engine implements " + major + "." + minor},
        {"MinorNewer", "incompatible Backend API version " + major + "." +
                           std::to_string(kBackendApiVersion.m_Minor + 1) + ": this engine implements"},
        {"MajorOlder", "incompatible Backend API version " + std::to_string(kBackendApiVersion.m_Major - 1) +
                           ".9: this engine implements"},
        {"IdCpuRef", "backend id 'CpuRef' is already registered (built in)"},
        {"EmptyId", "GetBackendId() returned an empty id"},
        {"IdMismatch", "the backend object's GetId() ('TestOtherId') differs from GetBackendId() ('TestMalformed')"},
    };
    const fs::path dir = Dir("malformed");
    for (const auto& [name, reason] : cases) {
        ASSERT_TRUE(fs::exists(Built(name))) << Built(name);
        fs::create_symlink(Built(name), dir / Built(name).filename());
    }
    // Not a shared object at all: a text file named like a backend.
    std::ofstream(dir / "Test_NotElf_backend.so") << "this is a text file, not an ELF shared object\n";
    // Named unlike a backend: never even looked at.
    fs::create_symlink(Built("Valid"), dir / "libTestValid.so");

    const std::size_t registered = BackendRegistryInstance().Size();
    IRuntimePtr runtime = RuntimeWithPath(dir.string());
    const std::vector<DynamicBackendStatus> status = runtime->GetDynamicBackendStatus();
    EXPECT_EQ(status.size(), cases.size() + 1) << Describe(status);
    for (const auto& [name, reason] : cases) {
        const DynamicBackendStatus* s = FindStatus(status, dir / Built(name).filename());
        ASSERT_NE(s, nullptr) << name << " not reported:\n" << Describe(status);
        EXPECT_FALSE(s->m_Loaded) << name;
        EXPECT_NE(s->m_Reason.find(reason), std::string::npos) << name << ": expected '" << reason << "' in '"
                                                               << s->m_Reason << "'";
        EXPECT_EQ(s->m_CanonicalPath, fs::canonical(Built(name)).string());
        EXPECT_FALSE(IsLibraryLoaded(s->m_CanonicalPath)) << name << " was skipped but left open";
    }
    const DynamicBackendStatus* notElf = FindStatus(status, dir / "Test_NotElf_backend.so");
    ASSERT_NE(notElf, nullptr) << Describe(status);
    EXPECT_FALSE(notElf->m_Loaded);
    EXPECT_NE(notElf->m_Reason.find("not a loadable shared object: "), std::string::npos) << notElf->m_Reason;
    EXPECT_EQ(FindStatus(status, dir / "libTestValid.so"), nullptr);

    // Nothing was registered; the engine still runs on CpuRef.
    EXPECT_EQ(BackendRegistryInstance().Size(), registered);
    for (const char* id : {"TestMalformed", "TestOtherId", ""}) {
        EXPECT_FALSE(BackendRegistryInstance().IsBackendRegistered(id)) << id;
    }
    EXPECT_EQ(BackendRegistryInstance().GetOrigin("CpuRef"), "built in");
    const std::vector<float> out =
        RunRelu(*runtime, Optimize(*ReluNetwork(false), {"CpuRef"}, runtime->GetDeviceSpec()));
    EXPECT_EQ(out[0], 0.0f);
    EXPECT_EQ(out[6], 7.5f);
}

// The guide's symlink rows: Arm_CpuAcc_backend.so.1 -> .so, .so.1.2 -> .so.1, .so.1.2.3 -> .so.1.2
// are followed to one canonical file, loaded once; Arm_no_backend.so -> nothing is skipped.
// Checked on the file's bytes before dlopen: a truncated copy of a valid backend used to kill the
// process with SIGBUS inside dlopen (its last segment was mapped past the end of the file).
TEST_F(DynamicBackendTest, TruncatedAndForeignFilesAreRefusedBeforeDlopen) {
    std::ifstream in(Built("Valid"), std::ios::binary);
    const std::string valid((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_GT(valid.size(), 4096u);
    const fs::path dir = Dir("foreign");
    auto write = [&](const std::string& name, const std::string& bytes) {
        std::ofstream(dir / name, std::ios::binary) << bytes;
    };
    // Cut inside the loadable segments (a build with debug information keeps megabytes of
    // sections after them, and cutting those off leaves a loadable file).
    ElfW(Ehdr) eh;
    std::memcpy(&eh, valid.data(), sizeof(eh));
    std::size_t segmentsEnd = 0;
    for (unsigned int i = 0; i < eh.e_phnum; ++i) {
        ElfW(Phdr) ph;
        std::memcpy(&ph, valid.data() + eh.e_phoff + i * sizeof(ph), sizeof(ph));
        if (ph.p_type == PT_LOAD) segmentsEnd = std::max<std::size_t>(segmentsEnd, ph.p_offset + ph.p_filesz);
    }
    ASSERT_GT(segmentsEnd, 4096u);
    write("Test_Half_backend.so", valid.substr(0, segmentsEnd / 2));
    write("Test_Header_backend.so", valid.substr(0, 40));
    write("Test_Empty_backend.so", "");
    std::string bits32 = valid;
    bits32[4] = 1;  // EI_CLASS: ELFCLASS32
    write("Test_Bits32_backend.so", bits32);
    std::string object = valid;
    object[16] = 1;  // e_type: ET_REL
    object[17] = 0;
    write("Test_Object_backend.so", object);
    std::string machine = valid;
    machine[18] = 0x28;  // e_machine: EM_ARM (x86-64 is 0x3e, AArch64 0xb7)
    machine[19] = 0;
    write("Test_Machine_backend.so", machine);
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"Test_Half_backend.so", "truncated: segment "},
        {"Test_Header_backend.so", "truncated: 40 bytes, shorter than an ELF header"},
        {"Test_Empty_backend.so", "not an ELF file"},
        {"Test_Bits32_backend.so", "an ELF file of the other word size (32-bit)"},
        {"Test_Object_backend.so", "an ELF relocatable object file (.o), not a shared object"},
        {"Test_Machine_backend.so", "a shared object for another machine (ELF e_machine 40"},
    };
    IRuntimePtr runtime = RuntimeWithPath(dir.string());
    const std::vector<DynamicBackendStatus> status = runtime->GetDynamicBackendStatus();
    EXPECT_EQ(status.size(), cases.size()) << Describe(status);
    for (const auto& [name, reason] : cases) {
        const DynamicBackendStatus* s = FindStatus(status, dir / name);
        ASSERT_NE(s, nullptr) << name << "\n" << Describe(status);
        EXPECT_FALSE(s->m_Loaded) << name;
        EXPECT_NE(s->m_Reason.find("not a loadable shared object: " + reason), std::string::npos)
            << name << ": " << s->m_Reason;
        EXPECT_FALSE(IsLibraryLoaded(s->m_CanonicalPath)) << name;
    }
    // The untouched file passes the same check.
    EXPECT_EQ(core::CheckSharedObjectFile(Built("Valid").string()), "");
}

TEST_F(DynamicBackendTest, SymlinksFollowedAndTheFileLoadedOnce) {
    const fs::path dir = Dir("links");
    fs::copy_file(Built("Valid"), dir / "Arm_CpuAcc_backend.so");
    fs::create_symlink("Arm_CpuAcc_backend.so", dir / "Arm_CpuAcc_backend.so.1");
    fs::create_symlink("Arm_CpuAcc_backend.so.1", dir / "Arm_CpuAcc_backend.so.1.2");
    fs::create_symlink("Arm_CpuAcc_backend.so.1.2", dir / "Arm_CpuAcc_backend.so.1.2.3");
    fs::create_symlink("nothing", dir / "Arm_no_backend.so");
    const std::string canonical = fs::canonical(dir / "Arm_CpuAcc_backend.so").string();

    IRuntimePtr runtime = RuntimeWithPath(dir.string());
    const std::vector<DynamicBackendStatus> status = runtime->GetDynamicBackendStatus();
    ASSERT_EQ(status.size(), 5u) << Describe(status);
    const DynamicBackendStatus* file = FindStatus(status, dir / "Arm_CpuAcc_backend.so");
    ASSERT_NE(file, nullptr);
    EXPECT_TRUE(file->m_Loaded) << file->m_Reason;
    EXPECT_EQ(file->m_CanonicalPath, canonical);
    for (const char* link : {"Arm_CpuAcc_backend.so.1", "Arm_CpuAcc_backend.so.1.2", "Arm_CpuAcc_backend.so.1.2.3"}) {
        const DynamicBackendStatus* s = FindStatus(status, dir / link);
        ASSERT_NE(s, nullptr) << link;
        EXPECT_FALSE(s->m_Loaded) << link;
        EXPECT_EQ(s->m_CanonicalPath, canonical) << link;
        EXPECT_NE(s->m_Reason.find("duplicate: the same file (" + canonical + ")"), std::string::npos) << s->m_Reason;
    }
    const DynamicBackendStatus* dangling = FindStatus(status, dir / "Arm_no_backend.so");
    ASSERT_NE(dangling, nullptr);
    EXPECT_FALSE(dangling->m_Loaded);
    EXPECT_TRUE(dangling->m_CanonicalPath.empty());
    EXPECT_NE(dangling->m_Reason.find("symlink to 'nothing', which resolves to a non-existent file"), std::string::npos)
        << dangling->m_Reason;
    EXPECT_EQ(BackendRegistryInstance().GetOrigin(kValidId), canonical);
}

// pathA/ and pathB/ in order, as the compile-time list is processed. Two copies are two files
// with one backend id: the second is skipped because the id is registered. A symlink in pathB to
// pathA's file is the same canonical file: skipped as a duplicate. The order decides which loads.
TEST_F(DynamicBackendTest, SameNameInTwoPathsCopiesAndSymlinks) {
    const fs::path pathA = Dir("pathA");
    const fs::path pathB = Dir("pathB");
    const fs::path pathC = Dir("pathC");
    fs::copy_file(Built("Valid"), pathA / "Arm_GpuAcc_backend.so");
    fs::copy_file(Built("Valid"), pathB / "Arm_GpuAcc_backend.so");
    fs::create_symlink(pathA / "Arm_GpuAcc_backend.so", pathC / "Arm_GpuAcc_backend.so");
    const std::string inA = fs::canonical(pathA / "Arm_GpuAcc_backend.so").string();
    const std::string inB = fs::canonical(pathB / "Arm_GpuAcc_backend.so").string();

    {
        auto set = DynamicBackendSet::LoadPaths({pathA.string(), pathB.string(), pathC.string()});
        const std::vector<DynamicBackendStatus>& status = set->GetStatus();
        ASSERT_EQ(status.size(), 3u) << Describe(status);
        EXPECT_TRUE(status[0].m_Loaded) << status[0].m_Reason;
        EXPECT_EQ(status[0].m_CanonicalPath, inA);
        EXPECT_FALSE(status[1].m_Loaded);
        EXPECT_EQ(status[1].m_CanonicalPath, inB);
        EXPECT_NE(status[1].m_Reason.find("backend id 'TestValid' is already registered (" + inA + ")"),
                  std::string::npos) << status[1].m_Reason;
        EXPECT_FALSE(IsLibraryLoaded(inB));
        EXPECT_FALSE(status[2].m_Loaded);
        EXPECT_EQ(status[2].m_CanonicalPath, inA);
        EXPECT_NE(status[2].m_Reason.find("duplicate: the same file (" + inA + ")"), std::string::npos)
            << status[2].m_Reason;
        EXPECT_EQ(BackendRegistryInstance().GetOrigin(kValidId), inA);
    }
    EXPECT_FALSE(IsLibraryLoaded(inA));
    {
        auto set = DynamicBackendSet::LoadPaths({pathB.string(), pathA.string()});
        ASSERT_EQ(set->GetStatus().size(), 2u);
        EXPECT_TRUE(set->GetStatus()[0].m_Loaded);
        EXPECT_FALSE(set->GetStatus()[1].m_Loaded);
        EXPECT_EQ(BackendRegistryInstance().GetOrigin(kValidId), inB);
    }
    // The same directory twice in the list: its file is the same file the second time.
    {
        auto set = DynamicBackendSet::LoadPaths({pathA.string(), pathA.string()});
        ASSERT_EQ(set->GetStatus().size(), 2u);
        EXPECT_TRUE(set->GetStatus()[0].m_Loaded);
        EXPECT_NE(set->GetStatus()[1].m_Reason.find("duplicate"), std::string::npos);
    }
}

// The versioning examples of the guide, then the rule as the loader applies it.
TEST(DynamicBackendVersion, GuideExamples) {
    EXPECT_TRUE(IsBackendApiCompatible({2, 4}, {2, 4}));   // same version
    EXPECT_TRUE(IsBackendApiCompatible({2, 4}, {2, 1}));   // same major, earlier compatible API
    EXPECT_FALSE(IsBackendApiCompatible({2, 4}, {2, 5}));  // same major, later API
    EXPECT_FALSE(IsBackendApiCompatible({1, 0}, {2, 0}));  // backend needs a newer major
    EXPECT_FALSE(IsBackendApiCompatible({3, 0}, {2, 0}));  // backward compatibility broken
    EXPECT_TRUE(IsBackendApiCompatible(kBackendApiVersion, kBackendApiVersion));
    EXPECT_TRUE(IsBackendApiCompatible({1, 7}, {1, 0}));
    EXPECT_FALSE(IsBackendApiCompatible({1, 7}, {0, 7}));
    EXPECT_EQ(IBackendInternal::GetApiVersion(), kBackendApiVersion);
    EXPECT_EQ((BackendVersion{2, 4}).ToString(), "2.4");
}

// Two runtimes scanning the same directory share the one loaded file: destroying the first does
// not pull the backend from under the second.
TEST_F(DynamicBackendTest, TwoRuntimesShareTheLoadedFile) {
    const fs::path dir = Dir("shared");
    fs::create_symlink(Built("Valid"), dir / "Test_Valid_backend.so");
    const std::string canonical = fs::canonical(Built("Valid")).string();

    IRuntimePtr first = RuntimeWithPath(dir.string());
    IRuntimePtr second = RuntimeWithPath(dir.string());
    ASSERT_EQ(second->GetDynamicBackendStatus().size(), 1u);
    EXPECT_TRUE(second->GetDynamicBackendStatus()[0].m_Loaded) << second->GetDynamicBackendStatus()[0].m_Reason;
    first.reset();
    ASSERT_TRUE(BackendRegistryInstance().IsBackendRegistered(kValidId));
    const std::vector<float> out = RunRelu(*second, Optimize(*ReluNetwork(false), {kValidId}, second->GetDeviceSpec()));
    EXPECT_EQ(out[4], 0.25f);
    EXPECT_EQ(out[7], 0.0f);
    second.reset();
    EXPECT_FALSE(BackendRegistryInstance().IsBackendRegistered(kValidId));
    EXPECT_FALSE(IsLibraryLoaded(canonical));
}

// Runtimes created and destroyed concurrently: loading is serialized, each one sees the backend,
// and the last one to go deregisters it and closes the file.
TEST_F(DynamicBackendTest, ConcurrentRuntimesLoadAndUnloadCleanly) {
    const fs::path dir = Dir("concurrent");
    fs::create_symlink(Built("Valid"), dir / "Test_Valid_backend.so");
    fs::create_symlink(Built("NullFactory"), dir / "Test_NullFactory_backend.so");
    const std::string canonical = fs::canonical(Built("Valid")).string();
    constexpr int kThreads = 4;
    std::vector<int> loaded(kThreads, 0);
    std::vector<float> results(kThreads, -1.0f);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            for (int round = 0; round < 5; ++round) {
                IRuntimePtr runtime = RuntimeWithPath(dir.string());
                for (const DynamicBackendStatus& s : runtime->GetDynamicBackendStatus()) {
                    loaded[t] += s.m_Loaded ? 1 : 0;
                }
                NetworkId id = 0;
                std::string error;
                IOptimizedNetworkPtr optimized = Optimize(*ReluNetwork(false), {kValidId}, runtime->GetDeviceSpec());
                if (runtime->LoadNetwork(id, std::move(optimized), error) != Status::Success) return;
                std::vector<float> out(kReluInput.size());
                runtime->EnqueueWorkload(id, {{0, ConstTensor(runtime->GetInputTensorInfo(id, 0), kReluInput.data())}},
                                         {{0, Tensor(runtime->GetOutputTensorInfo(id, 0), out.data())}});
                results[t] = out[12];
            }
        });
    }
    for (std::thread& th : threads) th.join();
    for (int t = 0; t < kThreads; ++t) {
        EXPECT_EQ(loaded[t], 5) << "thread " << t;
        EXPECT_EQ(results[t], 42.0f) << "thread " << t;
    }
    EXPECT_FALSE(BackendRegistryInstance().IsBackendRegistered(kValidId));
    EXPECT_FALSE(IsLibraryLoaded(canonical));
}

// The file stays open while something built from it lives (here an optimized network that
// outlives its runtime), and closes when that goes.
TEST_F(DynamicBackendTest, LibraryStaysOpenWhileItsObjectsLive) {
    const fs::path dir = Dir("lifetime");
    fs::create_symlink(Built("Valid"), dir / "Test_Valid_backend.so");
    const std::string canonical = fs::canonical(Built("Valid")).string();

    IRuntimePtr runtime = RuntimeWithPath(dir.string());
    IOptimizedNetworkPtr optimized = Optimize(*ReluNetwork(false), {kValidId}, runtime->GetDeviceSpec());
    runtime.reset();
    EXPECT_FALSE(BackendRegistryInstance().IsBackendRegistered(kValidId));
    EXPECT_TRUE(IsLibraryLoaded(canonical));
    optimized.reset();
    EXPECT_FALSE(IsLibraryLoaded(canonical));
}

}  // namespace
