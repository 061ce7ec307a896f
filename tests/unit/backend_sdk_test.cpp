// The backend contract's optional parts, with small backends defined here: short-lived backend
// objects, memory managers, backend contexts, profiling contexts, custom allocators, FP32->FP16
// reduction and debug layers.
#include "TestHelpers.hpp"

#include <trellis/backends/BackendRegistry.hpp>

#include <atomic>
#include <cstring>
#include <filesystem>

using namespace trellis;

namespace {

// ---- a host backend that runs float Add (Float32, and Float16 when enabled) -------------------

std::atomic<int> g_LiveBackends{0};
std::atomic<int> g_LiveAtExecute{-1};
std::atomic<int> g_Acquire{0}, g_Release{0};
std::atomic<int> g_BeforeLoad{0}, g_AfterLoad{0}, g_BeforeUnload{0}, g_AfterUnload{0};
std::atomic<int> g_Allocations{0}, g_Frees{0};
std::atomic<bool> g_AcceptAllocator{true};

// Exact for the values used here (all representable in binary16).
uint16_t ToHalf(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const int32_t exp = static_cast<int32_t>((x >> 23) & 0xff) - 127 + 15;
    const uint32_t mant = (x >> 13) & 0x3ffu;
    if (f == 0.0f) return static_cast<uint16_t>(sign);
    return static_cast<uint16_t>(sign | (static_cast<uint32_t>(exp) << 10) | mant);
}
float FromHalf(uint16_t h) {
    const uint32_t sign = (h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1f;
    const uint32_t mant = h & 0x3ffu;
    uint32_t x = exp == 0 ? sign : sign | ((exp - 15 + 127) << 23) | (mant << 13);
    float f;
    std::memcpy(&f, &x, 4);
    return f;
}

class AddWorkload final : public IWorkload {
public:
    AddWorkload(DataType t, std::size_t n, IBackendProfiling* profiling, uint16_t counter)
        : m_Type(t), m_N(n), m_Profiling(profiling), m_Counter(counter) {}
    void Execute(const WorkloadIo& io) const override {
        g_LiveAtExecute = g_LiveBackends.load();
        if (m_Type == DataType::Float32) {
            const auto* a = static_cast<const float*>(io.m_Inputs[0]->Map());
            const auto* b = static_cast<const float*>(io.m_Inputs[1]->Map());
            auto* y = static_cast<float*>(io.m_Outputs[0]->Map());
            for (std::size_t i = 0; i < m_N; ++i) y[i] = a[i] + b[i];
        } else {
            const auto* a = static_cast<const uint16_t*>(io.m_Inputs[0]->Map());
            const auto* b = static_cast<const uint16_t*>(io.m_Inputs[1]->Map());
            auto* y = static_cast<uint16_t*>(io.m_Outputs[0]->Map());
            for (std::size_t i = 0; i < m_N; ++i) y[i] = ToHalf(FromHalf(a[i]) + FromHalf(b[i]));
        }
        if (m_Profiling) m_Profiling->ReportCounterValue(m_Counter, 1);
    }
private:
    DataType m_Type;
    std::size_t m_N;
    IBackendProfiling* m_Profiling;
    uint16_t m_Counter;
};

IBackendProfiling* g_Profiling = nullptr;  // set by the profiling context, read by workloads
uint16_t g_ExecCounter = 0;

class TestSupport final : public ILayerSupport {
public:
    explicit TestSupport(bool fp16) : m_Fp16(fp16) {}
    bool IsLayerSupported(const QueueDescriptor& q, const WorkloadInfo& info, std::string* reason) const override {
        if (q.m_Type != LayerType::ElementwiseBinary || q.Get<ElementwiseBinaryDescriptor>().m_Operation != BinaryOperation::Add) {
            if (reason) *reason = "TestAdd runs Add only";
            return false;
        }
        const DataType t = info.m_OutputTensorInfos[0].GetDataType();
        const bool typeOk = t == DataType::Float32 || (m_Fp16 && t == DataType::Float16);
        if (!typeOk || info.m_InputTensorInfos[0].GetShape() != info.m_InputTensorInfos[1].GetShape()) {
            if (reason) *reason = "TestAdd: same-shape Float32 (or Float16) only";
            return false;
        }
        return true;
    }
private:
    bool m_Fp16;
};

class TestFactory final : public IWorkloadFactory {
public:
    const BackendId& GetBackendId() const override {
        static const BackendId id("TestAdd");
        return id;
    }
    IWorkloadPtr CreateWorkload(const QueueDescriptor&, const WorkloadInfo& info) const override {
        return std::make_unique<AddWorkload>(info.m_OutputTensorInfos[0].GetDataType(),
                                             info.m_OutputTensorInfos[0].GetNumElements(), g_Profiling, g_ExecCounter);
    }
};

class TestMemoryManager final : public IMemoryManager {
public:
    void Acquire() override { ++g_Acquire; }
    void Release() override { ++g_Release; }
};

class TestContext final : public IBackendContext {
public:
    explicit TestContext(const IRuntime::CreationOptions& o) : IBackendContext(o) {}
    bool BeforeLoadNetwork(NetworkId) override { ++g_BeforeLoad; return true; }
    bool AfterLoadNetwork(NetworkId) override { ++g_AfterLoad; return true; }
    bool BeforeUnloadNetwork(NetworkId) override { ++g_BeforeUnload; return true; }
    bool AfterUnloadNetwork(NetworkId) override { ++g_AfterUnload; return true; }
};

class TestProfilingContext final : public IBackendProfilingContext {
public:
    explicit TestProfilingContext(IBackendProfiling& p) : m_Profiling(p) {}
    void RegisterCounters() override {
        g_ExecCounter = m_Profiling.RegisterCounter("add_executions", "Add workloads executed");
        g_Profiling = &m_Profiling;
    }
    bool EnableProfiling(bool enabled) override { return enabled; }
    ~TestProfilingContext() override { g_Profiling = nullptr; }
private:
    IBackendProfiling& m_Profiling;
};

class CountingAllocator final : public ICustomAllocator {
public:
    void* allocate(std::size_t size, std::size_t alignment) override {
        ++g_Allocations;
        return std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
    }
    void free(void* p) override {
        ++g_Frees;
        std::free(p);
    }
    MemorySource GetMemorySourceType() override { return MemorySource::Malloc; }
};

template <bool Fp16>
class TestBackend final : public IBackendInternal {
public:
    TestBackend() { ++g_LiveBackends; }
    ~TestBackend() override { --g_LiveBackends; }
    const BackendId& GetId() const override {
        static const BackendId id("TestAdd");
        return id;
    }
    IMemoryManagerUniquePtr CreateMemoryManager() const override { return std::make_unique<TestMemoryManager>(); }
    IWorkloadFactoryPtr CreateWorkloadFactory(const IMemoryManagerSharedPtr&) const override {
        return std::make_unique<TestFactory>();
    }
    IBackendContextPtr CreateBackendContext(const IRuntime::CreationOptions& o) const override {
        return std::make_unique<TestContext>(o);
    }
    IBackendProfilingContextPtr CreateBackendProfilingContext(const IRuntime::CreationOptions&,
                                                              IBackendProfiling& p) const override {
        return std::make_shared<TestProfilingContext>(p);
    }
    ILayerSupportSharedPtr GetLayerSupport() const override { return std::make_shared<TestSupport>(Fp16); }
    BackendCapabilities GetCapabilities() const override { return {{"Float16", Fp16}}; }
    bool UseCustomMemoryAllocator(std::shared_ptr<ICustomAllocator>, std::string* reason) override {
        if (!g_AcceptAllocator && reason) *reason = "TestAdd refuses allocators in this test";
        return g_AcceptAllocator;
    }
};

/// Registers the test backend for one test.
template <bool Fp16>
struct ScopedTestBackend {
    ScopedTestBackend() {
        BackendRegistryInstance().Register("TestAdd", [] { return IBackendInternalUniquePtr(new TestBackend<Fp16>()); });
    }
    ~ScopedTestBackend() { BackendRegistryInstance().Deregister("TestAdd"); }
};

/// y = (x + c) + x, c constant; Float32 [4].
INetworkPtr BuildAddNetwork(const std::vector<float>& c) {
    INetworkPtr net = INetwork::Create();
    auto* in = net->AddInputLayer(0, "x");
    in->GetOutputSlot(0).SetTensorInfo(TensorInfo({4}, DataType::Float32));
    auto* cl = net->AddConstantLayer(ConstTensor(TensorInfo({4}, DataType::Float32), c.data()), "c");
    auto* add1 = net->AddAdditionLayer("add1");
    auto* add2 = net->AddAdditionLayer("add2");
    in->GetOutputSlot(0).Connect(add1->GetInputSlot(0));
    cl->GetOutputSlot(0).Connect(add1->GetInputSlot(1));
    add1->GetOutputSlot(0).Connect(add2->GetInputSlot(0));
    in->GetOutputSlot(0).Connect(add2->GetInputSlot(1));
    add2->GetOutputSlot(0).Connect(net->AddOutputLayer(0)->GetInputSlot(0));
    return net;
}

std::vector<float> RunAdd(IRuntime& runtime, NetworkId id, const std::vector<float>& x) {
    std::vector<float> y(4);
    runtime.EnqueueWorkload(id, {{0, ConstTensor(runtime.GetInputTensorInfo(id, 0), x.data())}},
                            {{0, Tensor(runtime.GetOutputTensorInfo(id, 0), y.data())}});
    return y;
}

}  // namespace

TEST(BackendSdk, BackendObjectsAreShortLivedAndCallbacksRun) {
    ScopedTestBackend<false> reg;
    g_Acquire = g_Release = g_BeforeLoad = g_AfterLoad = g_BeforeUnload = g_AfterUnload = 0;
    {
        IRuntime::CreationOptions options;
        options.m_ProfilingOptions.m_EnableProfiling = true;
        IRuntimePtr runtime = IRuntime::Create(options);
        INetworkPtr net = BuildAddNetwork({1, 2, 3, 4});
        NetworkId id;
        runtime->LoadNetwork(id, Optimize(*net, {"TestAdd", "CpuRef"}, runtime->GetDeviceSpec()));
        EXPECT_EQ(g_BeforeLoad, 1);
        EXPECT_EQ(g_AfterLoad, 1);
        EXPECT_EQ(g_Acquire, 1);
        // The runtime kept no backend object: workloads run with none alive.
        EXPECT_EQ(g_LiveBackends, 0);
        EXPECT_EQ(RunAdd(*runtime, id, {1, 1, 1, 1}), (std::vector<float>{3, 4, 5, 6}));
        EXPECT_EQ(g_LiveAtExecute, 0);
        EXPECT_EQ(runtime->GetProfilingCounters().at("TestAdd/add_executions"), 2u);
        EXPECT_EQ(runtime->UnloadNetwork(id), Status::Success);
        EXPECT_EQ(g_Release, 1);
        EXPECT_EQ(g_BeforeUnload, 1);
        EXPECT_EQ(g_AfterUnload, 1);
    }
    EXPECT_EQ(g_LiveBackends, 0);
}

TEST(BackendSdk, CustomAllocatorAllocatesTheBackendsWorkingMemory) {
    ScopedTestBackend<false> reg;
    g_AcceptAllocator = true;
    g_Allocations = g_Frees = 0;
    {
        IRuntime::CreationOptions options;
        options.m_CustomAllocatorMap["TestAdd"] = std::make_shared<CountingAllocator>();
        IRuntimePtr runtime = IRuntime::Create(options);
        INetworkPtr net = BuildAddNetwork({1, 2, 3, 4});
        NetworkId id;
        runtime->LoadNetwork(id, Optimize(*net, {"TestAdd"}, runtime->GetDeviceSpec()));
        EXPECT_EQ(RunAdd(*runtime, id, {0, 0, 0, 0}), (std::vector<float>{1, 2, 3, 4}));
        EXPECT_GE(g_Allocations, 1);  // add1's output lives in TestAdd's working memory
    }
    EXPECT_EQ(g_Allocations, g_Frees);

    g_AcceptAllocator = false;
    IRuntime::CreationOptions refused;
    refused.m_CustomAllocatorMap["TestAdd"] = std::make_shared<CountingAllocator>();
    try {
        IRuntime::Create(refused);
        FAIL() << "expected the refused allocator to be reported";
    } catch (const InvalidArgumentException& e) {
        EXPECT_NE(std::string(e.what()).find("TestAdd refuses allocators"), std::string::npos) << e.what();
    }
    g_AcceptAllocator = true;

    IRuntime::CreationOptions cpuRef;
    cpuRef.m_CustomAllocatorMap["CpuRef"] = std::make_shared<CountingAllocator>();
    EXPECT_THROW(IRuntime::Create(cpuRef), InvalidArgumentException);
}

TEST(BackendSdk, Fp32ToFp16ReductionConvertsWhereSupported) {
    ScopedTestBackend<true> reg;
    IRuntimePtr runtime = IRuntime::Create(IRuntime::CreationOptions());
    INetworkPtr net = BuildAddNetwork({0.25f, -1.5f, 2.0f, 0.125f});
    OptimizerOptions options;
    options.m_ReduceFp32ToFp16 = true;
    IOptimizedNetworkPtr opt = Optimize(*net, {"TestAdd", "CpuRef"}, runtime->GetDeviceSpec(), options);
    unsigned int casts = 0, halfAdds = 0, halfConstants = 0;
    for (const auto& p : opt->GetLayerPlacements()) {
        if (p.m_Type == LayerType::Cast) {
            ++casts;
            EXPECT_EQ(p.m_Backend, BackendId("CpuRef"));
        }
        if (p.m_Type == LayerType::ElementwiseBinary && p.m_Outputs[0].GetDataType() == DataType::Float16) ++halfAdds;
        if (p.m_Type == LayerType::Constant && p.m_Outputs[0].GetDataType() == DataType::Float16) ++halfConstants;
    }
    EXPECT_EQ(halfAdds, 2u);
    EXPECT_EQ(halfConstants, 1u);   // c converted once, at optimize time
    EXPECT_EQ(casts, 2u);           // x -> Float16 (shared by both adds), y -> Float32
    NetworkId id;
    runtime->LoadNetwork(id, std::move(opt));
    EXPECT_EQ(runtime->GetOutputTensorInfo(id, 0).GetDataType(), DataType::Float32);
    EXPECT_EQ(RunAdd(*runtime, id, {1.5f, 2.0f, -0.5f, 4.0f}), (std::vector<float>{3.25f, 2.5f, 1.0f, 8.125f}));

    // Without the option everything stays Float32.
    IOptimizedNetworkPtr plain = Optimize(*net, {"TestAdd", "CpuRef"}, runtime->GetDeviceSpec());
    for (const auto& p : plain->GetLayerPlacements()) EXPECT_NE(p.m_Type, LayerType::Cast);
}

TEST(BackendSdk, DebugLayersWriteEveryIntermediateTensor) {
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / "trellis_debug_layers_test";
    std::filesystem::remove_all(dir);
    IRuntimePtr runtime = IRuntime::Create(IRuntime::CreationOptions());
    INetworkPtr net = BuildAddNetwork({1, 2, 3, 4});
    OptimizerOptions options;
    options.m_Debug = true;
    options.m_DebugToFolder = dir.string();
    NetworkId id;
    runtime->LoadNetwork(id, Optimize(*net, {"CpuRef"}, runtime->GetDeviceSpec(), options));
    EXPECT_EQ(RunAdd(*runtime, id, {1, 1, 1, 1}), (std::vector<float>{3, 4, 5, 6}));
    const OwnedTensor add1 = LoadTensorFile((dir / "add1_out0.npy").string());
    EXPECT_EQ(add1.m_Info.GetShape(), TensorShape({4}));
    const float* v = reinterpret_cast<const float*>(add1.m_Data.data());
    EXPECT_EQ(std::vector<float>(v, v + 4), (std::vector<float>{2, 3, 4, 5}));
    EXPECT_TRUE(std::filesystem::exists(dir / "add2_out0.npy"));
    std::filesystem::remove_all(dir);

    OptimizerOptions noFolder;
    noFolder.m_Debug = true;
    EXPECT_THROW(Optimize(*net, {"CpuRef"}, runtime->GetDeviceSpec(), noFolder), InvalidArgumentException);
}
