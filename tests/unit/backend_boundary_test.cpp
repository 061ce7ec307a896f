// Phase 7 of Optimize() for a backend with memory of its own: MemCopy layers where host and
// backend memory meet, the bytes each copies (LayerPlacement::m_CopyBytes, shown by `trellis
// inspect`), constants a backend takes at load (IBackendInternal::ImportsConstantsAtLoad,
// Backend API 1.2), which need no copy, and inputs the caller gives in the backend's memory
// (Tensor::SetMemoryBackend), whose copy is skipped.
//
// The test backend "BoundaryTest" (registered per test) runs Float32 Add of an input and a
// constant: its workload copies the constant when it is created and never reads the constant's
// handle again. Its "device" memory is host memory labelled MemorySource::Backend from an
// allocator that remembers what it handed out, so every workload can check that the memory it is
// given is its own.
#include <trellis/Exceptions.hpp>
#include <trellis/Trellis.hpp>
#include <trellis/backends/BackendRegistry.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>

using namespace trellis;

namespace {

const char* kId = "BoundaryTest";

/// Host memory labelled as backend memory; knows which ranges it handed out.
class LabelledAllocator final : public ICustomAllocator {
public:
    void* allocate(std::size_t size, std::size_t alignment) override {
        void* p = std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
        std::lock_guard<std::mutex> lock(m_Mutex);
        m_Blocks[static_cast<const char*>(p)] = size;
        return p;
    }
    void free(void* ptr) override {
        {
            std::lock_guard<std::mutex> lock(m_Mutex);
            m_Blocks.erase(static_cast<const char*>(ptr));
        }
        std::free(ptr);
    }
    MemorySource GetMemorySourceType() override { return MemorySource::Backend; }
    bool Owns(const void* p) {
        std::lock_guard<std::mutex> lock(m_Mutex);
        const char* c = static_cast<const char*>(p);
        auto it = m_Blocks.upper_bound(c);
        if (it == m_Blocks.begin()) return false;
        --it;
        return c < it->first + it->second;
    }
private:
    std::mutex m_Mutex;
    std::map<const char*, std::size_t> m_Blocks;
};

LabelledAllocator& Device() {
    static auto* a = new LabelledAllocator();  // shared_ptr below never deletes it
    return *a;
}

bool g_ConstantsAtLoad = true;

class BoundarySupport final : public ILayerSupport {
public:
    bool IsLayerSupported(const QueueDescriptor& q, const WorkloadInfo& info, std::string* reason) const override {
        if (q.m_Type == LayerType::MemCopy) return true;
        // Add(input, constant): at assignment input 1 is a Constant layer; once phase 7 put a
        // MemCopy in front of it (no import at load), it is that copy's output.
        if (q.m_Type == LayerType::ElementwiseBinary && q.m_ConstantInputs.size() == 2 && !q.m_ConstantInputs[0] &&
            info.m_InputTensorInfos[0] == info.m_InputTensorInfos[1]) {
            return true;
        }
        if (reason) *reason = "BoundaryTest runs Add(input, constant of the same shape) and MemCopy only";
        return false;
    }
};

class FunctionWorkload final : public IWorkload {
public:
    FunctionWorkload(std::function<void(const WorkloadIo&)> f, bool readsConstants)
        : m_F(std::move(f)), m_ReadsConstants(readsConstants) {}
    void Execute(const WorkloadIo& io) const override { m_F(io); }
    bool ReadsConstantInput(unsigned int) const override { return m_ReadsConstants; }
private:
    std::function<void(const WorkloadIo&)> m_F;
    bool m_ReadsConstants;
};

class BoundaryFactory final : public IWorkloadFactory {
public:
    const BackendId& GetBackendId() const override {
        static const BackendId id(kId);
        return id;
    }
    IWorkloadPtr CreateWorkload(const QueueDescriptor& q, const WorkloadInfo& info) const override {
        const std::size_t bytes = info.m_OutputTensorInfos[0].GetNumBytes();
        if (q.m_Type == LayerType::MemCopy) {
            const bool toDevice = q.Get<MemCopyDescriptor>().m_Destination == BackendId(kId);
            return std::make_unique<FunctionWorkload>(
                [bytes, toDevice](const WorkloadIo& io) {
                    const void* src = io.m_Inputs[0]->Map();
                    void* dst = io.m_Outputs[0]->Map();
                    if (!Device().Owns(toDevice ? dst : src)) throw RuntimeException("MemCopy: the device side is not device memory");
                    std::memcpy(dst, src, bytes);
                },
                true);
        }
        // Add: a constant given at load is copied now ("uploaded") and its handle never read;
        // otherwise (no import at load) input 1 is the engine's copy, in our memory.
        const ConstTensor* c = q.m_ConstantInputs.at(1);
        if (!c) {
            return std::make_unique<FunctionWorkload>(
                [bytes](const WorkloadIo& io) {
                    const auto* x = static_cast<const float*>(io.m_Inputs[0]->Map());
                    const auto* k = static_cast<const float*>(io.m_Inputs[1]->Map());
                    auto* y = static_cast<float*>(io.m_Outputs[0]->Map());
                    if (!Device().Owns(x) || !Device().Owns(k) || !Device().Owns(y)) {
                        throw RuntimeException("Add: operands are not device memory");
                    }
                    for (std::size_t i = 0; i < bytes / sizeof(float); ++i) y[i] = x[i] + k[i];
                },
                true);
        }
        if (!c->GetMemoryArea()) throw LayerValidationException("BoundaryTest: the constant has no memory at load");
        std::vector<float> constant(c->GetNumElements());
        std::memcpy(constant.data(), c->GetMemoryArea(), bytes);
        return std::make_unique<FunctionWorkload>(
            [constant](const WorkloadIo& io) {
                const auto* x = static_cast<const float*>(io.m_Inputs[0]->Map());
                auto* y = static_cast<float*>(io.m_Outputs[0]->Map());
                if (!Device().Owns(x) || !Device().Owns(y)) throw RuntimeException("Add: operands are not device memory");
                for (std::size_t i = 0; i < constant.size(); ++i) y[i] = x[i] + constant[i];
            },
            false);
    }
};

class BoundaryBackend final : public IBackendInternal {
public:
    const BackendId& GetId() const override {
        static const BackendId id(kId);
        return id;
    }
    IWorkloadFactoryPtr CreateWorkloadFactory(const IMemoryManagerSharedPtr&) const override {
        return std::make_unique<BoundaryFactory>();
    }
    ILayerSupportSharedPtr GetLayerSupport() const override { return std::make_shared<BoundarySupport>(); }
    MemorySourceFlags GetImportFlags() const override { return ToFlags(MemorySource::Backend); }
    std::shared_ptr<ICustomAllocator> GetDefaultAllocator() const override {
        return std::shared_ptr<ICustomAllocator>(&Device(), [](ICustomAllocator*) {});
    }
    bool ImportsConstantsAtLoad() const override { return g_ConstantsAtLoad; }
};

class BackendBoundaryTest : public ::testing::Test {
protected:
    void SetUp() override {
        BackendRegistryInstance().Register(kId, [] { return IBackendInternalUniquePtr(new BoundaryBackend()); });
    }
    void TearDown() override {
        BackendRegistryInstance().Deregister(kId);
        g_ConstantsAtLoad = true;
    }

    /// x (1x13) + constant -> y, optimized for {BoundaryTest, CpuRef}, run once.
    struct Outcome {
        std::vector<LayerPlacement> m_Placements;
        std::vector<std::string> m_Log;
        std::vector<float> m_Y;
    };
    Outcome Run() {
        INetworkPtr net = INetwork::Create();
        const TensorInfo info(TensorShape({1, 13}), DataType::Float32);
        std::vector<float> c(13), x(13);
        for (int i = 0; i < 13; ++i) {
            c[static_cast<std::size_t>(i)] = 0.5f * static_cast<float>(i);
            x[static_cast<std::size_t>(i)] = 10.0f - static_cast<float>(i);
        }
        IConnectableLayer* in = net->AddInputLayer(0, "x");
        in->GetOutputSlot(0).SetTensorInfo(info);
        TensorInfo constInfo = info;
        constInfo.SetConstant();
        IConnectableLayer* k = net->AddConstantLayer(ConstTensor(constInfo, c.data()), "c");
        IConnectableLayer* add = net->AddElementwiseBinaryLayer(ElementwiseBinaryDescriptor{BinaryOperation::Add}, "add");
        IConnectableLayer* out = net->AddOutputLayer(0, "y");
        in->GetOutputSlot(0).Connect(add->GetInputSlot(0));
        k->GetOutputSlot(0).Connect(add->GetInputSlot(1));
        add->GetOutputSlot(0).Connect(out->GetInputSlot(0));

        IRuntimePtr runtime = IRuntime::Create(IRuntime::CreationOptions());
        IOptimizedNetworkPtr opt = Optimize(*net, {kId, "CpuRef"}, runtime->GetDeviceSpec());
        Outcome o;
        o.m_Placements = opt->GetLayerPlacements();
        o.m_Log = opt->GetOptimizationLog();
        NetworkId id = 0;
        std::string error;
        EXPECT_EQ(runtime->LoadNetwork(id, std::move(opt), error), Status::Success) << error;
        o.m_Y.assign(13, -1.0f);
        runtime->EnqueueWorkload(id, {{0, ConstTensor(info, x.data())}}, {{0, Tensor(info, o.m_Y.data())}});
        for (int i = 0; i < 13; ++i) {
            EXPECT_EQ(o.m_Y[static_cast<std::size_t>(i)], x[static_cast<std::size_t>(i)] + c[static_cast<std::size_t>(i)]);
        }
        return o;
    }
};

std::vector<const LayerPlacement*> Copies(const std::vector<LayerPlacement>& placements) {
    std::vector<const LayerPlacement*> copies;
    for (const LayerPlacement& p : placements) {
        if (p.m_Type == LayerType::MemCopy) copies.push_back(&p);
    }
    return copies;
}

}  // namespace

TEST_F(BackendBoundaryTest, ConstantsTakenAtLoadNeedNoCopyAndEachCopyCountsItsBytes) {
    const Outcome o = Run();
    const auto copies = Copies(o.m_Placements);
    ASSERT_EQ(copies.size(), 2u) << "one copy in for x, one out for y; none for the constant";
    EXPECT_EQ(copies[0]->m_CopySource, "host");
    EXPECT_EQ(copies[0]->m_CopyDestination, kId);
    EXPECT_EQ(copies[0]->m_Backend, BackendId(kId));
    EXPECT_EQ(copies[0]->m_CopyBytes, 13u * sizeof(float));
    EXPECT_EQ(copies[1]->m_CopySource, kId);
    EXPECT_EQ(copies[1]->m_CopyDestination, "host");
    EXPECT_EQ(copies[1]->m_CopyBytes, 13u * sizeof(float));
    bool logged = false;
    for (const std::string& line : o.m_Log) logged |= line.find("constants imported at load: 1 read by BoundaryTest") == 0;
    EXPECT_TRUE(logged);
    for (const LayerPlacement& p : o.m_Placements) {
        if (p.m_Type != LayerType::MemCopy) {
            EXPECT_EQ(p.m_CopyBytes, 0u) << p.m_LayerName;
            EXPECT_TRUE(p.m_CopySource.empty()) << p.m_LayerName;
        }
    }
}

TEST_F(BackendBoundaryTest, WithoutImportAtLoadTheConstantIsCopiedLikeAnyTensor) {
    g_ConstantsAtLoad = false;
    const Outcome o = Run();
    const auto copies = Copies(o.m_Placements);
    ASSERT_EQ(copies.size(), 3u) << "x, the constant and y";
    std::size_t total = 0;
    for (const LayerPlacement* p : copies) total += p->m_CopyBytes;
    EXPECT_EQ(total, 3u * 13u * sizeof(float));
    for (const std::string& line : o.m_Log) EXPECT_EQ(line.find("constants imported at load"), std::string::npos) << line;
}

// An input the caller holds in the backend's memory is read there: its MemCopy is skipped (the
// Add reads the caller's buffer, which the backend checks is its memory). An output in that
// memory is written by the copy out of it. Memory the network cannot take so is refused by name.
TEST_F(BackendBoundaryTest, InputsGivenInTheBackendsMemorySkipTheirCopy) {
    INetworkPtr net = INetwork::Create();
    const TensorInfo info(TensorShape({1, 13}), DataType::Float32);
    std::vector<float> c(13, 0.25f);
    IConnectableLayer* in = net->AddInputLayer(0, "x");
    in->GetOutputSlot(0).SetTensorInfo(info);
    TensorInfo constInfo = info;
    constInfo.SetConstant();
    IConnectableLayer* k = net->AddConstantLayer(ConstTensor(constInfo, c.data()), "c");
    IConnectableLayer* add = net->AddElementwiseBinaryLayer(ElementwiseBinaryDescriptor{BinaryOperation::Add}, "add");
    IConnectableLayer* out = net->AddOutputLayer(0, "y");
    in->GetOutputSlot(0).Connect(add->GetInputSlot(0));
    k->GetOutputSlot(0).Connect(add->GetInputSlot(1));
    add->GetOutputSlot(0).Connect(out->GetInputSlot(0));
    IRuntimePtr runtime = IRuntime::Create(IRuntime::CreationOptions());
    NetworkId id = 0;
    runtime->LoadNetwork(id, Optimize(*net, {kId, "CpuRef"}, runtime->GetDeviceSpec()));

    auto* x = static_cast<float*>(Device().allocate(13 * sizeof(float), 64));
    auto* y = static_cast<float*>(Device().allocate(13 * sizeof(float), 64));
    for (int i = 0; i < 13; ++i) x[i] = static_cast<float>(i);
    ConstTensor xt(info, x);
    xt.SetMemoryBackend(kId);
    Tensor yt(info, y);
    yt.SetMemoryBackend(kId);
    runtime->EnqueueWorkload(id, {{0, xt}}, {{0, yt}});
    for (int i = 0; i < 13; ++i) EXPECT_EQ(y[i], static_cast<float>(i) + 0.25f) << i;

    // The same run with host memory still copies in (the Add sees device memory either way).
    std::vector<float> hostX(x, x + 13), hostY(13, -1.0f);
    runtime->EnqueueWorkload(id, {{0, ConstTensor(info, hostX.data())}}, {{0, Tensor(info, hostY.data())}});
    EXPECT_EQ(hostY, std::vector<float>(y, y + 13));

    ConstTensor wrong(info, x);
    wrong.SetMemoryBackend("CpuRef");
    try {
        runtime->EnqueueWorkload(id, {{0, wrong}}, {{0, Tensor(info, hostY.data())}});
        ADD_FAILURE() << "an input in memory no reader copies from was accepted";
    } catch (const InvalidArgumentException& e) {
        EXPECT_NE(std::string(e.what()).find("input 0 is in CpuRef memory, but layer"), std::string::npos) << e.what();
    }
    Device().free(x);
    Device().free(y);
}
