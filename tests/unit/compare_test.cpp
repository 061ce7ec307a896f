// CompareBackends(): the first tensor where a backend diverges from the reference is found and
// described (layer, backend, region, inputs); tensors inside a fused region are reported as not
// observed; constants are folded on a reference-numerics backend whatever the preferences.
#include <trellis/Compare.hpp>
#include <trellis/Trellis.hpp>
#include <trellis/backends/BackendRegistry.hpp>
#include <trellis/backends/IBackendInternal.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

using namespace trellis;

namespace {

/// "Skewed": runs Abs only, and gets it wrong by +0.01 (a backend with a bug to find).
class SkewedAbsWorkload final : public IWorkload {
public:
    explicit SkewedAbsWorkload(std::size_t n) : m_N(n) {}
    void Execute(const WorkloadIo& io) const override {
        const auto* x = static_cast<const float*>(io.m_Inputs[0]->Map());
        auto* y = static_cast<float*>(io.m_Outputs[0]->Map());
        for (std::size_t i = 0; i < m_N; ++i) y[i] = std::fabs(x[i]) + 0.01f;
    }
private:
    std::size_t m_N;
};

class SkewedSupport final : public ILayerSupport {
public:
    bool IsLayerSupported(const QueueDescriptor& q, const WorkloadInfo& info, std::string* reason) const override {
        const bool ok = q.m_Type == LayerType::ElementwiseUnary &&
                        q.Get<ElementwiseUnaryDescriptor>().m_Operation == UnaryOperation::Abs &&
                        info.m_InputTensorInfos[0].GetDataType() == DataType::Float32;
        if (!ok && reason) *reason = "Skewed runs Float32 Abs only";
        return ok;
    }
};

class SkewedFactory final : public IWorkloadFactory {
public:
    const BackendId& GetBackendId() const override {
        static const BackendId id("Skewed");
        return id;
    }
    IWorkloadPtr CreateWorkload(const QueueDescriptor&, const WorkloadInfo& info) const override {
        return std::make_unique<SkewedAbsWorkload>(info.m_OutputTensorInfos[0].GetNumElements());
    }
};

class SkewedBackend final : public IBackendInternal {
public:
    const BackendId& GetId() const override {
        static const BackendId id("Skewed");
        return id;
    }
    IWorkloadFactoryPtr CreateWorkloadFactory(const IMemoryManagerSharedPtr&) const override {
        return std::make_unique<SkewedFactory>();
    }
    ILayerSupportSharedPtr GetLayerSupport() const override { return std::make_shared<SkewedSupport>(); }
};

struct ScopedSkewedBackend {
    ScopedSkewedBackend() {
        BackendRegistryInstance().Register("Skewed", [] { return IBackendInternalUniquePtr(new SkewedBackend()); });
    }
    ~ScopedSkewedBackend() { BackendRegistryInstance().Deregister("Skewed"); }
};

IConnectableLayer* Unary(INetwork& net, UnaryOperation op, const char* name, IOutputSlot& from) {
    ElementwiseUnaryDescriptor d;
    d.m_Operation = op;
    IConnectableLayer* l = net.AddElementwiseUnaryLayer(d, name);
    from.Connect(l->GetInputSlot(0));
    return l;
}

/// x -> Neg 'neg' -> Abs 'abs' -> Exp 'exp' -> output; Float32 [2, 5].
INetworkPtr NegAbsExp() {
    INetworkPtr net = INetwork::Create();
    auto* in = net->AddInputLayer(0, "x");
    in->GetOutputSlot(0).SetTensorInfo(TensorInfo({2, 5}, DataType::Float32));
    auto* neg = Unary(*net, UnaryOperation::Neg, "neg", in->GetOutputSlot(0));
    auto* abs = Unary(*net, UnaryOperation::Abs, "abs", neg->GetOutputSlot(0));
    auto* exp = Unary(*net, UnaryOperation::Exp, "exp", abs->GetOutputSlot(0));
    exp->GetOutputSlot(0).Connect(net->AddOutputLayer(0)->GetInputSlot(0));
    return net;
}

const std::vector<float> kX = {-2.0f, -1.5f, -1.0f, -0.5f, 0.0f, 0.25f, 0.5f, 1.0f, 1.5f, 3.0f};

}  // namespace

TEST(Compare, FindsTheFirstLayerAWrongBackendComputes) {
    ScopedSkewedBackend skewed;
    INetworkPtr net = NegAbsExp();
    const InputTensors inputs{{0, ConstTensor(TensorInfo({2, 5}, DataType::Float32, 0.0f, 0, true), kX.data())}};
    CompareOptions options;
    options.m_Backends = {"Skewed", "CpuRef"};
    const CompareResult r = CompareBackends(*net, inputs, options);

    ASSERT_EQ(r.m_Tensors.size(), 3u);
    EXPECT_EQ(r.m_Tensors[0].m_Tensor, "neg:0");
    EXPECT_FALSE(r.m_Tensors[0].m_Differs);
    ASSERT_EQ(r.m_FirstDivergence, 1);
    const TensorComparison& first = r.m_Tensors[1];
    EXPECT_EQ(first.m_Tensor, "abs:0");
    EXPECT_TRUE(first.m_Observed);
    EXPECT_EQ(first.m_CandidateBackend, BackendId("Skewed"));
    EXPECT_EQ(first.m_Inputs, std::vector<std::string>{"neg:0"});
    EXPECT_NEAR(first.m_MaxAbsError, 0.01, 1e-6);
    EXPECT_EQ(first.m_ElementsOutOfTolerance, 10u);
    EXPECT_NEAR(first.m_Candidate.m_Mean - first.m_Reference.m_Mean, 0.01, 1e-6);
    EXPECT_TRUE(r.m_Tensors[2].m_Differs);  // exp inherits the error
    EXPECT_EQ(r.m_Tensors[2].m_CandidateBackend, BackendId("CpuRef"));
    EXPECT_EQ(r.m_CandidateLayerCounts.at("Skewed"), 1u);
    EXPECT_EQ(r.m_CandidateLayerCounts.at("CpuRef"), 2u);

    const std::string text = DescribeTensorComparison(first);
    EXPECT_NE(text.find("abs:0"), std::string::npos) << text;
    EXPECT_NE(text.find("on Skewed"), std::string::npos) << text;
    EXPECT_NE(text.find("inputs: neg:0"), std::string::npos) << text;
    EXPECT_NE(text.find("10 of 10 elements out of tolerance"), std::string::npos) << text;

    // A tolerance above Abs's error accepts it; Exp then amplifies it (e^3.01 - e^3 = 0.2).
    options.m_AbsTolerance = 0.011;
    options.m_RelTolerance = 0.0;
    EXPECT_EQ(CompareBackends(*net, inputs, options).m_FirstDivergence, 2);
    options.m_AbsTolerance = 0.25;
    EXPECT_EQ(CompareBackends(*net, inputs, options).m_FirstDivergence, -1);
}

TEST(Compare, SameBackendAsTheReferenceNeverDiverges) {
    INetworkPtr net = NegAbsExp();
    const InputTensors inputs{{0, ConstTensor(TensorInfo({2, 5}, DataType::Float32, 0.0f, 0, true), kX.data())}};
    CompareOptions options;
    options.m_Backends = {"CpuRef"};
    options.m_RelTolerance = 0.0;
    options.m_AbsTolerance = 0.0;
    const CompareResult r = CompareBackends(*net, inputs, options);
    EXPECT_EQ(r.m_FirstDivergence, -1);
    EXPECT_EQ(r.m_ObservedTensors, 3u);
    for (const TensorComparison& c : r.m_Tensors) EXPECT_EQ(c.m_MaxAbsError, 0.0) << c.m_Tensor;
}

TEST(Compare, BadOptionsAreRefused) {
    INetworkPtr net = NegAbsExp();
    const InputTensors inputs{{0, ConstTensor(TensorInfo({2, 5}, DataType::Float32, 0.0f, 0, true), kX.data())}};
    CompareOptions options;
    EXPECT_THROW(CompareBackends(*net, inputs, options), InvalidArgumentException);  // no candidates
    options.m_Backends = {"CpuRef"};
    options.m_RelTolerance = -1.0;
    EXPECT_THROW(CompareBackends(*net, inputs, options), InvalidArgumentException);
}

// The class of bug a T5 encoder showed: constants folded on whichever preferred backend ran the
// op first, so a folded value (there, log-spaced position buckets truncated to integers) depended
// on that backend's rounding. Folding now runs on a reference-numerics backend first.
TEST(Compare, ConstantsAreFoldedOnTheReferenceWhateverThePreferences) {
    ScopedSkewedBackend skewed;
    INetworkPtr net = INetwork::Create();
    auto* in = net->AddInputLayer(0, "x");
    in->GetOutputSlot(0).SetTensorInfo(TensorInfo({2, 5}, DataType::Float32));
    const std::vector<float> c = {-1.0f, 2.0f, -3.0f, 4.0f, -5.0f, 6.0f, -7.0f, 8.0f, -9.0f, 10.0f};
    auto* cl = net->AddConstantLayer(ConstTensor(TensorInfo({2, 5}, DataType::Float32, 0.0f, 0, true), c.data()), "c");
    auto* cabs = Unary(*net, UnaryOperation::Abs, "cabs", cl->GetOutputSlot(0));
    auto* add = net->AddAdditionLayer("add");
    in->GetOutputSlot(0).Connect(add->GetInputSlot(0));
    cabs->GetOutputSlot(0).Connect(add->GetInputSlot(1));
    add->GetOutputSlot(0).Connect(net->AddOutputLayer(0)->GetInputSlot(0));

    IRuntimePtr runtime = IRuntime::Create({});
    IOptimizedNetworkPtr opt = Optimize(*net, {"Skewed", "CpuRef"}, runtime->GetDeviceSpec());
    bool foldedOnRef = false;
    for (const std::string& line : opt->GetOptimizationLog()) {
        foldedOnRef = foldedOnRef || (line.find("'cabs'") != std::string::npos && line.find("evaluated on CpuRef") != std::string::npos);
    }
    EXPECT_TRUE(foldedOnRef);

    NetworkId id = 0;
    runtime->LoadNetwork(id, std::move(opt));
    std::vector<float> y(10);
    runtime->EnqueueWorkload(id, {{0, ConstTensor(TensorInfo({2, 5}, DataType::Float32, 0.0f, 0, true), kX.data())}},
                             {{0, Tensor(TensorInfo({2, 5}, DataType::Float32), y.data())}});
    for (std::size_t i = 0; i < y.size(); ++i) EXPECT_EQ(y[i], kX[i] + std::fabs(c[i])) << i;

    // compare sees the folded constant as a tensor of both runs, equal.
    CompareOptions options;
    options.m_Backends = {"Skewed", "CpuRef"};
    options.m_RelTolerance = 0.0;
    options.m_AbsTolerance = 0.0;
    const CompareResult r = CompareBackends(*net, {{0, ConstTensor(TensorInfo({2, 5}, DataType::Float32, 0.0f, 0, true), kX.data())}},
                                            options);
    ASSERT_FALSE(r.m_Tensors.empty());
    EXPECT_EQ(r.m_Tensors[0].m_Tensor, "cabs:0");
    EXPECT_EQ(r.m_Tensors[0].m_OpDetail, "Constant (folded)");
    EXPECT_EQ(r.m_Tensors[0].m_CandidateBackend, BackendId("CpuRef"));
    EXPECT_EQ(r.m_FirstDivergence, -1);
}

TEST(Compare, TensorsInsideAFusedRegionAreNotObservedAndNameTheRegion) {
    if (!BackendRegistryInstance().IsBackendRegistered("CpuAcc")) GTEST_SKIP() << "CpuAcc is not built in";
    // x -> Neg -> Abs -> Exp: CpuAcc runs all three as one region (element-wise chain).
    INetworkPtr net = NegAbsExp();
    const InputTensors inputs{{0, ConstTensor(TensorInfo({2, 5}, DataType::Float32, 0.0f, 0, true), kX.data())}};
    CompareOptions options;
    options.m_Backends = {"CpuAcc", "CpuRef"};
    const CompareResult r = CompareBackends(*net, inputs, options);
    ASSERT_EQ(r.m_Tensors.size(), 3u);
    EXPECT_EQ(r.m_FirstDivergence, -1);
    const TensorComparison& out = r.m_Tensors[2];
    ASSERT_TRUE(out.m_Observed);
    EXPECT_EQ(out.m_CandidateBackend, BackendId("CpuAcc"));
    EXPECT_EQ(out.m_CandidateRegionLayers, (std::vector<std::string>{"neg", "abs", "exp"}));
    for (int i = 0; i < 2; ++i) {
        EXPECT_FALSE(r.m_Tensors[static_cast<std::size_t>(i)].m_Observed) << r.m_Tensors[static_cast<std::size_t>(i)].m_Tensor;
        EXPECT_EQ(r.m_Tensors[static_cast<std::size_t>(i)].m_CandidateLayer, out.m_CandidateLayer);
    }
    EXPECT_NE(DescribeTensorComparison(r.m_Tensors[0]).find("inside the region"), std::string::npos);
}
