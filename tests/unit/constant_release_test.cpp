// LoadNetwork frees a constant once every reader's workload has said it does not read it at run
// time (IWorkload::ReadsConstantInput, Backend API 1.1), and keeps it while any reader does.
#include <trellis/Trellis.hpp>
#include <trellis/backends/BackendRegistry.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <vector>

namespace {

using namespace trellis;

std::atomic<int> g_NullConstantSeen{0};
std::atomic<int> g_ConstantSeen{0};

/// y = a + c with c a constant copied at creation: input 1 is never read at run time.
class PackedAddWorkload final : public IWorkload {
public:
    explicit PackedAddWorkload(const ConstTensor& c)
        : m_C(static_cast<const float*>(c.GetMemoryArea()),
              static_cast<const float*>(c.GetMemoryArea()) + c.GetNumElements()) {}
    void Execute(const WorkloadIo& io) const override {
        (io.m_Inputs[1]->Map() == nullptr ? g_NullConstantSeen : g_ConstantSeen)++;
        const auto* a = static_cast<const float*>(io.m_Inputs[0]->Map());
        auto* y = static_cast<float*>(io.m_Outputs[0]->Map());
        for (std::size_t i = 0; i < m_C.size(); ++i) y[i] = a[i] + m_C[i];
    }
    bool ReadsConstantInput(unsigned int index) const override { return index != 1; }
private:
    std::vector<float> m_C;
};

bool IsPackedAdd(const QueueDescriptor& q, const WorkloadInfo& info) {
    return q.m_Type == LayerType::ElementwiseBinary &&
           q.Get<ElementwiseBinaryDescriptor>().m_Operation == BinaryOperation::Add && q.m_ConstantInputs.size() == 2 &&
           q.m_ConstantInputs[1] != nullptr && info.m_InputTensorInfos[0].GetShape() == info.m_InputTensorInfos[1].GetShape() &&
           info.m_OutputTensorInfos[0].GetDataType() == DataType::Float32;
}

class PackedSupport final : public ILayerSupport {
public:
    bool IsLayerSupported(const QueueDescriptor& q, const WorkloadInfo& info, std::string* reason) const override {
        if (IsPackedAdd(q, info)) return true;
        if (reason) *reason = "TestPacked runs x + constant only";
        return false;
    }
};

class PackedFactory final : public IWorkloadFactory {
public:
    const BackendId& GetBackendId() const override {
        static const BackendId id("TestPacked");
        return id;
    }
    IWorkloadPtr CreateWorkload(const QueueDescriptor& q, const WorkloadInfo&) const override {
        return std::make_unique<PackedAddWorkload>(*q.m_ConstantInputs[1]);
    }
};

class PackedBackend final : public IBackendInternal {
public:
    const BackendId& GetId() const override {
        static const BackendId id("TestPacked");
        return id;
    }
    IWorkloadFactoryPtr CreateWorkloadFactory(const IMemoryManagerSharedPtr&) const override {
        return std::make_unique<PackedFactory>();
    }
    ILayerSupportSharedPtr GetLayerSupport() const override { return std::make_shared<PackedSupport>(); }
};

struct ScopedPackedBackend {
    ScopedPackedBackend() {
        BackendRegistryInstance().Register("TestPacked", [] { return IBackendInternalUniquePtr(new PackedBackend()); });
    }
    ~ScopedPackedBackend() { BackendRegistryInstance().Deregister("TestPacked"); }
};

/// y0 = x + c; with `alsoMul`, y1 = x * c as well (a layer TestPacked declines: CpuRef reads c).
std::vector<std::vector<float>> RunAddAndMaybeMul(bool alsoMul) {
    const std::vector<float> c{1.0f, 2.0f, 3.0f, 4.0f}, x{10.0f, 20.0f, 30.0f, 40.0f};
    INetworkPtr net = INetwork::Create();
    auto* in = net->AddInputLayer(0, "x");
    in->GetOutputSlot(0).SetTensorInfo(TensorInfo({4}, DataType::Float32));
    auto* cl = net->AddConstantLayer(ConstTensor(TensorInfo({4}, DataType::Float32, 0.0f, 0, true), c.data()), "c");
    auto* add = net->AddAdditionLayer("add");
    in->GetOutputSlot(0).Connect(add->GetInputSlot(0));
    cl->GetOutputSlot(0).Connect(add->GetInputSlot(1));
    add->GetOutputSlot(0).Connect(net->AddOutputLayer(0)->GetInputSlot(0));
    if (alsoMul) {
        auto* mul = net->AddMultiplicationLayer("mul");
        in->GetOutputSlot(0).Connect(mul->GetInputSlot(0));
        cl->GetOutputSlot(0).Connect(mul->GetInputSlot(1));
        mul->GetOutputSlot(0).Connect(net->AddOutputLayer(1)->GetInputSlot(0));
    }
    IRuntimePtr runtime = IRuntime::Create({});
    NetworkId id = 0;
    std::string error;
    EXPECT_EQ(runtime->LoadNetwork(id, Optimize(*net, {"TestPacked", "CpuRef"}, runtime->GetDeviceSpec()), error),
              Status::Success)
        << error;
    std::vector<std::vector<float>> outs(alsoMul ? 2 : 1, std::vector<float>(4, -1.0f));
    OutputTensors out;
    for (std::size_t o = 0; o < outs.size(); ++o) {
        out.emplace_back(static_cast<LayerBindingId>(o), Tensor(TensorInfo({4}, DataType::Float32), outs[o].data()));
    }
    for (int run = 0; run < 2; ++run) {
        runtime->EnqueueWorkload(id, {{0, ConstTensor(TensorInfo({4}, DataType::Float32, 0.0f, 0, true), x.data())}}, out);
    }
    return outs;
}

TEST(ConstantRelease, AConstantOnlyPackedReadersUseIsFreedAtLoad) {
    ScopedPackedBackend backend;
    g_NullConstantSeen = 0;
    g_ConstantSeen = 0;
    const auto outs = RunAddAndMaybeMul(false);
    EXPECT_EQ(outs[0], (std::vector<float>{11.0f, 22.0f, 33.0f, 44.0f}));
    EXPECT_EQ(g_NullConstantSeen.load(), 2);  // released: Execute gets a handle that maps to nullptr
    EXPECT_EQ(g_ConstantSeen.load(), 0);
}

TEST(ConstantRelease, AConstantAnotherLayerReadsIsKept) {
    ScopedPackedBackend backend;
    g_NullConstantSeen = 0;
    g_ConstantSeen = 0;
    const auto outs = RunAddAndMaybeMul(true);
    EXPECT_EQ(outs[0], (std::vector<float>{11.0f, 22.0f, 33.0f, 44.0f}));
    EXPECT_EQ(outs[1], (std::vector<float>{10.0f, 40.0f, 90.0f, 160.0f}));  // CpuRef read c at run time
    EXPECT_EQ(g_NullConstantSeen.load(), 0);
    EXPECT_EQ(g_ConstantSeen.load(), 2);
}

}  // namespace
