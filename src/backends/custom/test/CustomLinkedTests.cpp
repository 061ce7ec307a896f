// trellis_custom_linked_tests: the Custom sample backend linked into the test executable (its
// static registration runs at start-up), running the guide's flows (CustomEndToEndTestImpl.hpp),
// plus unit-level tests of its parts: the pre-compiled addition against a naive reference, the
// device memory pool, the device-memory checks of its workloads and its layer support reasons.
#include "CustomEndToEndTestImpl.hpp"

#include "CustomBackend.hpp"
#include "CustomDevice.hpp"
#include "CustomLayerSupport.hpp"
#include "CustomMemoryManager.hpp"
#include "CustomPreCompiledObject.hpp"
#include "CustomWorkloadFactory.hpp"

#include <trellis/Exceptions.hpp>

#include <random>

using namespace trellis;
using namespace trellis::custom;

// ---- the guide's flows ---------------------------------------------------------------------

TEST(CustomLinkedBackend, IsRegisteredAsBuiltIn) {
    ASSERT_TRUE(BackendRegistryInstance().IsBackendRegistered("Custom"));
    EXPECT_EQ(BackendRegistryInstance().GetOrigin("Custom"), "built in");
    IBackendInternalUniquePtr backend = BackendRegistryInstance().GetFactory("Custom")();
    ASSERT_NE(backend, nullptr);
    EXPECT_EQ(backend->GetId(), BackendId("Custom"));
    EXPECT_EQ(backend->GetImportFlags(), ToFlags(MemorySource::Backend));
    ASSERT_NE(backend->GetDefaultAllocator(), nullptr);
    EXPECT_EQ(backend->GetDefaultAllocator()->GetMemorySourceType(), MemorySource::Backend);
}

TEST(CustomLinkedBackend, AdditionToPreCompiled) {
    trellis::custom::test::RunAdditionToPreCompiled(IRuntime::CreationOptions());
}

TEST(CustomLinkedBackend, MixedNetworkFallsBackToCpuRef) {
    trellis::custom::test::RunMixedNetworkWithFallback(IRuntime::CreationOptions());
}

TEST(CustomLinkedBackend, UnsupportedLayerWithoutFallbackIsAClearError) {
    trellis::custom::test::RunUnsupportedWithoutFallback(IRuntime::CreationOptions());
}

TEST(CustomLinkedBackend, ConcurrentInferencesEachGetTheirOwnDeviceMemory) {
    trellis::custom::test::RunConcurrentInferences(IRuntime::CreationOptions());
}

TEST(CustomLinkedBackend, ConstantAdditionIsFoldedOnTheReferenceNotOnCustom) {
    // Both inputs constant: the optimizer evaluates the addition at optimize time on a registered
    // reference-numerics backend (CpuRef), not on the preferred Custom, so folded values never
    // depend on which backends are preferred; Custom then runs only the remaining addition.
    IRuntimePtr runtime = trellis::custom::test::CreateProfilingRuntime(IRuntime::CreationOptions());
    const std::vector<float> a{1, 2, 3}, b{10, 20, 30};
    INetworkPtr net = INetwork::Create();
    auto* x = net->AddInputLayer(0, "x");
    auto* ca = net->AddConstantLayer(ConstTensor(TensorInfo({3}, DataType::Float32), a.data()), "ca");
    auto* cb = net->AddConstantLayer(ConstTensor(TensorInfo({3}, DataType::Float32), b.data()), "cb");
    auto* constAdd = net->AddAdditionLayer("const_add");
    auto* add = net->AddAdditionLayer("add");
    auto* out = net->AddOutputLayer(0);
    x->GetOutputSlot(0).SetTensorInfo(TensorInfo({3}, DataType::Float32));
    ca->GetOutputSlot(0).Connect(constAdd->GetInputSlot(0));
    cb->GetOutputSlot(0).Connect(constAdd->GetInputSlot(1));
    x->GetOutputSlot(0).Connect(add->GetInputSlot(0));
    constAdd->GetOutputSlot(0).Connect(add->GetInputSlot(1));
    add->GetOutputSlot(0).Connect(out->GetInputSlot(0));
    IOptimizedNetworkPtr opt = Optimize(*net, {"Custom"}, runtime->GetDeviceSpec());
    EXPECT_EQ(trellis::custom::test::LogLinesContaining(*opt, "folded Add 'const_add' into a constant (evaluated on CpuRef)"), 1u);
    EXPECT_EQ(trellis::custom::test::CustomCounter(*runtime, "workloads_executed"), 0u);
    NetworkId id = 0;
    ASSERT_EQ(runtime->LoadNetwork(id, std::move(opt)), Status::Success);
    const std::vector<float> xs{0.5f, 0.25f, 0.125f};
    std::vector<float> y(3);
    runtime->EnqueueWorkload(id, {{0, ConstTensor(runtime->GetInputTensorInfo(id, 0), xs.data())}},
                             {{0, Tensor(runtime->GetOutputTensorInfo(id, 0), y.data())}});
    EXPECT_EQ(y, (std::vector<float>{11.5f, 22.25f, 33.125f}));
}

// ---- CustomPreCompiledObject ---------------------------------------------------------------

namespace {

/// Naive numpy-broadcast addition over explicit multi-indices.
std::vector<float> NaiveAdd(const std::vector<float>& a, const TensorShape& sa, const std::vector<float>& b,
                            const TensorShape& sb, const TensorShape& so) {
    std::vector<float> out(so.GetNumElements());
    const unsigned int rank = so.GetNumDimensions();
    auto offset = [&](const TensorShape& s, const std::vector<unsigned int>& idx) {
        std::size_t off = 0;
        const unsigned int shift = rank - s.GetNumDimensions();
        for (unsigned int d = 0; d < s.GetNumDimensions(); ++d) off = off * s[d] + (s[d] == 1 ? 0 : idx[d + shift]);
        return off;
    };
    std::vector<unsigned int> idx(rank, 0);
    for (std::size_t i = 0; i < out.size(); ++i) {
        std::size_t rem = i;
        for (unsigned int d = rank; d-- > 0;) {
            idx[d] = static_cast<unsigned int>(rem % so[d]);
            rem /= so[d];
        }
        out[i] = a[offset(sa, idx)] + b[offset(sb, idx)];
    }
    return out;
}

std::vector<float> Random(std::size_t n, std::mt19937& rng) {
    std::uniform_real_distribution<float> dist(-10.f, 10.f);
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
}

}  // namespace

TEST(CustomPreCompiledObject, BroadcastAdditionMatchesNaiveReference) {
    struct Case {
        TensorShape a, b, out;
    };
    const std::vector<Case> cases{
        {{3, 4}, {3, 4}, {3, 4}},            {{2, 1, 13}, {3, 1}, {2, 3, 13}}, {{127}, {1}, {127}},
        {{1, 4}, {3, 1}, {3, 4}},            {{}, {2, 5}, {2, 5}},             {{5, 1, 7}, {1, 6, 1}, {5, 6, 7}},
        {{2, 3, 4, 5}, {4, 1}, {2, 3, 4, 5}}, {{0, 3}, {3}, {0, 3}},
    };
    std::mt19937 rng(7);
    for (const Case& c : cases) {
        const TensorInfo ia(c.a, DataType::Float32), ib(c.b, DataType::Float32), io(c.out, DataType::Float32);
        CustomPreCompiledObject object("case", ia, ib, io);
        const auto a = Random(ia.GetNumElements(), rng), b = Random(ib.GetNumElements(), rng);
        std::vector<float> got(io.GetNumElements() + 1, 12345.f);
        object.Run(a.data(), b.data(), got.data());
        EXPECT_EQ(got.back(), 12345.f) << "wrote past the output for " << c.out.ToString();
        got.pop_back();
        EXPECT_EQ(got, NaiveAdd(a, c.a, b, c.b, c.out)) << object.ToString();
    }
}

TEST(CustomPreCompiledObject, RejectsWhatItCannotComputeNamingTheLayer) {
    const TensorInfo f({2, 3}, DataType::Float32);
    try {
        CustomPreCompiledObject("int_add", TensorInfo({2, 3}, DataType::Signed32), f, f);
        FAIL() << "expected LayerValidationException";
    } catch (const LayerValidationException& e) {
        EXPECT_NE(std::string(e.what()).find("'int_add'"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("Signed32"), std::string::npos) << e.what();
    }
    std::string reason;
    EXPECT_FALSE(IsAdditionSupported(TensorInfo({2, 4}, DataType::Float32), f, f, &reason));
    EXPECT_NE(reason.find("does not broadcast"), std::string::npos) << reason;
    EXPECT_FALSE(IsAdditionSupported(TensorInfo({1, 3}, DataType::Float32), TensorInfo({3}, DataType::Float32), f, &reason));
    EXPECT_NE(reason.find("is not the broadcast"), std::string::npos) << reason;
    EXPECT_TRUE(IsAdditionSupported(f, TensorInfo({3}, DataType::Float32), f, &reason));
}

// ---- device memory -------------------------------------------------------------------------

TEST(CustomDevice, PoolServesMemoryOnlyWhileAMemoryManagerHoldsIt) {
    CustomDevice& device = CustomDevice::Instance();
    ASSERT_EQ(device.GetPoolHolders(), 0u) << "a previous test left the pool held";
    CustomDeviceAllocator allocator;
    EXPECT_EQ(allocator.allocate(100, 64), nullptr) << "allocation without an acquired pool must fail";

    const uint64_t acquires = device.GetTotal(CustomCounter::PoolAcquires);
    CustomMemoryManager manager;
    manager.Acquire();
    manager.Acquire();  // held once per manager
    EXPECT_EQ(device.GetPoolHolders(), 1u);
    EXPECT_EQ(device.GetTotal(CustomCounter::PoolAcquires), acquires + 1);

    void* p = allocator.allocate(100, 64);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
    EXPECT_TRUE(device.IsDeviceMemory(p, 100));
    EXPECT_TRUE(device.IsDeviceMemory(static_cast<char*>(p) + 50, 50));
    EXPECT_FALSE(device.IsDeviceMemory(static_cast<char*>(p) + 50, 4096));
    float host[4] = {};
    EXPECT_FALSE(device.IsDeviceMemory(host, sizeof(host)));
    EXPECT_EQ(allocator.allocate(16, 3), nullptr) << "alignment must be a power of two";

    // A freed block is cached and handed out again while the pool is held.
    allocator.free(p);
    EXPECT_FALSE(device.IsDeviceMemory(p, 100));
    void* q = allocator.allocate(100, 64);
    EXPECT_EQ(q, p);
    allocator.free(q);

    manager.Release();
    manager.Release();  // no underflow
    EXPECT_EQ(device.GetPoolHolders(), 0u);
    EXPECT_EQ(allocator.allocate(100, 64), nullptr);
}

TEST(CustomWorkloads, PreCompiledWorkloadRunsOnDeviceMemoryOnly) {
    const TensorInfo info({4}, DataType::Float32);
    PreCompiledDescriptor d;
    d.m_PreCompiledObject = std::make_shared<CustomPreCompiledObject>("p", info, info, info);
    LayerDescriptor ld = d;
    QueueDescriptor q;
    q.m_Type = LayerType::PreCompiled;
    q.m_Descriptor = &ld;
    q.m_LayerName = "p";
    WorkloadInfo wi{{info, info}, {info}};
    auto manager = std::make_shared<CustomMemoryManager>();
    IWorkloadFactoryPtr factory = CustomBackend().CreateWorkloadFactory(manager);
    IWorkloadPtr workload = factory->CreateWorkload(q, wi);

    std::vector<float> a{1, 2, 3, 4}, b{10, 20, 30, 40}, out(4);
    PassthroughTensorHandle ha(info, a.data()), hb(info, b.data()), ho(info, out.data());
    ITensorHandle* ins[] = {&ha, &hb};
    ITensorHandle* outs[] = {&ho};
    WorkloadIo io{ins, outs, nullptr};
    try {
        workload->Execute(io);
        FAIL() << "host memory must be refused";
    } catch (const RuntimeException& e) {
        EXPECT_NE(std::string(e.what()).find("not in Custom device memory"), std::string::npos) << e.what();
    }

    manager->Acquire();
    CustomDeviceAllocator allocator;
    auto* da = static_cast<float*>(allocator.allocate(16, 64));
    auto* db = static_cast<float*>(allocator.allocate(16, 64));
    auto* dout = static_cast<float*>(allocator.allocate(16, 64));
    ASSERT_TRUE(da && db && dout);
    std::copy(a.begin(), a.end(), da);
    std::copy(b.begin(), b.end(), db);
    ha.Reset(info, da);
    hb.Reset(info, db);
    ho.Reset(info, dout);
    workload->Execute(io);
    EXPECT_EQ(std::vector<float>(dout, dout + 4), (std::vector<float>{11, 22, 33, 44}));
    allocator.free(da);
    allocator.free(db);
    allocator.free(dout);
    manager->Release();
}

TEST(CustomLayerSupport, ReasonsNameTheOpAndTheRule) {
    CustomLayerSupport support;
    const TensorInfo f({2, 2}, DataType::Float32);
    std::string reason;
    LayerDescriptor mul = ElementwiseBinaryDescriptor{BinaryOperation::Mul};
    QueueDescriptor q;
    q.m_Type = LayerType::ElementwiseBinary;
    q.m_Descriptor = &mul;
    EXPECT_FALSE(support.IsLayerSupported(q, {{f, f}, {f}}, &reason));
    EXPECT_NE(reason.find("Mul"), std::string::npos) << reason;

    LayerDescriptor add = ElementwiseBinaryDescriptor{BinaryOperation::Add};
    q.m_Descriptor = &add;
    EXPECT_TRUE(support.IsLayerSupported(q, {{f, f}, {f}}, &reason)) << reason;

    // A PreCompiled layer whose object is not Custom's is refused, never cast.
    PreCompiledDescriptor foreign;
    foreign.m_PreCompiledObject = std::make_shared<int>(42);
    LayerDescriptor fd = foreign;
    q.m_Type = LayerType::PreCompiled;
    q.m_Descriptor = &fd;
    EXPECT_FALSE(support.IsLayerSupported(q, {{f, f}, {f}}, &reason));
    EXPECT_NE(reason.find("not created by the Custom backend"), std::string::npos) << reason;

    LayerDescriptor conv = ConvolutionDescriptor{};
    q.m_Type = LayerType::Convolution;
    q.m_Descriptor = &conv;
    EXPECT_FALSE(support.IsLayerSupported(q, {{f, f}, {f}}, &reason));
    EXPECT_NE(reason.find("Convolution"), std::string::npos) << reason;
}
