// Phase 6 of Optimize(): sub-graph substitutions, graph in -> graph out.
//
// A small test backend "SubstTest" (registered per test) runs Add, Relu and Neg on host memory and
// its own PreCompiled layers. Its OptimizeSubgraph() does what the test's mode says with the
// chain add -> relu of the network  x, y -> add -> relu -> neg -> out  (neg is always left
// untouched): fuse the chain into one PreCompiled layer, replace it with two connected PreCompiled
// layers, fail part of it, or return views that break one of the rules.
#include <trellis/Exceptions.hpp>
#include <trellis/Trellis.hpp>
#include <trellis/backends/BackendRegistry.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <stdexcept>

using namespace trellis;

namespace {

enum class Mode {
    FuseChain,          // {add, relu} -> one PreCompiled(Add+Relu)
    SplitChain,         // {add, relu} -> PreCompiled(Add) -> PreCompiled(Relu)
    FailRelu,           // {add} -> PreCompiled(Add); relu failed
    MissingLayer,       // relu in none of the three lists
    FewerInputs,        // replacement has 1 input slot for the chain's 2
    MoreOutputs,        // replacement has 2 output slots for the chain's 1
    NoOutputInfo,       // replacement output info not set
    WrongOutputInfo,    // replacement output info differs from the chain's
    ForeignLayer,       // replacement layer created outside GetINetwork()
    IncompleteInputs,   // substitutable view of the chain lists only one of add's inputs
    DanglingInput,      // replacement layer input neither a boundary nor internally connected
    NonConvex,          // {add, neg} (relu between them stays) -> one layer: a cycle
    Throws,             // OptimizeSubgraph throws std::runtime_error
};

const char* kId = "SubstTest";

/// The backend-owned object of SubstTest's PreCompiled layers: a list of unary/binary steps.
struct FusedOps {
    bool m_Add = false;   // out = in0 + in1 first (else out = in0)
    bool m_Relu = false;  // then relu
};

void RunFused(const FusedOps& ops, const WorkloadIo& io) {
    const std::size_t n = io.m_Outputs[0]->GetTensorInfo().GetNumElements();
    const auto* a = static_cast<const float*>(io.m_Inputs[0]->Map());
    const auto* b = ops.m_Add ? static_cast<const float*>(io.m_Inputs[1]->Map()) : nullptr;
    auto* out = static_cast<float*>(io.m_Outputs[0]->Map());
    for (std::size_t i = 0; i < n; ++i) {
        float v = ops.m_Add ? a[i] + b[i] : a[i];
        out[i] = ops.m_Relu ? std::max(v, 0.f) : v;
    }
}

class FunctionWorkload final : public IWorkload {
public:
    explicit FunctionWorkload(std::function<void(const WorkloadIo&)> f) : m_F(std::move(f)) {}
    void Execute(const WorkloadIo& io) const override { m_F(io); }
private:
    std::function<void(const WorkloadIo&)> m_F;
};

bool IsOurPreCompiled(const QueueDescriptor& q) {
    const auto* d = std::get_if<PreCompiledDescriptor>(q.m_Descriptor);
    return d && d->m_Description.rfind("TestFused", 0) == 0 && d->m_PreCompiledObject;
}

class TestSupport final : public ILayerSupport {
public:
    bool IsLayerSupported(const QueueDescriptor& q, const WorkloadInfo& info, std::string* reason) const override {
        for (const TensorInfo& t : info.m_InputTensorInfos) {
            if (t.GetDataType() != DataType::Float32) return Refuse(reason, "Float32 only");
        }
        switch (q.m_Type) {
            case LayerType::ElementwiseBinary:
                if (q.Get<ElementwiseBinaryDescriptor>().m_Operation == BinaryOperation::Add &&
                    info.m_InputTensorInfos[0] == info.m_InputTensorInfos[1]) {
                    return true;
                }
                return Refuse(reason, "ElementwiseBinary: same-shape Add only");
            case LayerType::ElementwiseUnary: {
                const UnaryOperation op = q.Get<ElementwiseUnaryDescriptor>().m_Operation;
                if (op == UnaryOperation::Relu || op == UnaryOperation::Neg) return true;
                return Refuse(reason, "ElementwiseUnary: Relu and Neg only");
            }
            case LayerType::PreCompiled:
                return IsOurPreCompiled(q) ? true : Refuse(reason, "PreCompiled: not one of SubstTest's");
            default: return Refuse(reason, std::string(GetLayerTypeName(q.m_Type)) + ": unsupported");
        }
    }
private:
    static bool Refuse(std::string* reason, const std::string& why) {
        if (reason) *reason = why;
        return false;
    }
};

class TestFactory final : public IWorkloadFactory {
public:
    const BackendId& GetBackendId() const override {
        static const BackendId id(kId);
        return id;
    }
    IWorkloadPtr CreateWorkload(const QueueDescriptor& q, const WorkloadInfo&) const override {
        switch (q.m_Type) {
            case LayerType::ElementwiseBinary: return std::make_unique<FunctionWorkload>([](const WorkloadIo& io) {
                RunFused(FusedOps{true, false}, io);
            });
            case LayerType::ElementwiseUnary: {
                const bool neg = q.Get<ElementwiseUnaryDescriptor>().m_Operation == UnaryOperation::Neg;
                return std::make_unique<FunctionWorkload>([neg](const WorkloadIo& io) {
                    const std::size_t n = io.m_Outputs[0]->GetTensorInfo().GetNumElements();
                    const auto* a = static_cast<const float*>(io.m_Inputs[0]->Map());
                    auto* out = static_cast<float*>(io.m_Outputs[0]->Map());
                    for (std::size_t i = 0; i < n; ++i) out[i] = neg ? -a[i] : std::max(a[i], 0.f);
                });
            }
            case LayerType::PreCompiled: {
                auto ops = std::static_pointer_cast<const FusedOps>(q.Get<PreCompiledDescriptor>().m_PreCompiledObject);
                return std::make_unique<FunctionWorkload>([ops](const WorkloadIo& io) { RunFused(*ops, io); });
            }
            default: throw LayerValidationException("SubstTest: no workload for " + q.m_LayerName);
        }
    }
};

IConnectableLayer* FindLayer(const SubgraphView& view, const char* name) {
    for (IConnectableLayer* l : view.GetLayers()) {
        if (std::string(l->GetName()) == name) return l;
    }
    return nullptr;
}

IConnectableLayer* AddFused(INetwork& net, FusedOps ops, const char* name, int numInputs, int numOutputs) {
    PreCompiledDescriptor d;
    d.m_PreCompiledObject = std::make_shared<FusedOps>(ops);
    d.m_Description = std::string("TestFused(") + (ops.m_Add ? "Add" : "") + (ops.m_Add && ops.m_Relu ? "+" : "") +
                      (ops.m_Relu ? "Relu" : "") + ")";
    return net.AddLayer(LayerType::PreCompiled, d, name, numInputs, numOutputs);
}

class TestBackend final : public IBackendInternal {
public:
    explicit TestBackend(Mode mode) : m_Mode(mode) {}
    const BackendId& GetId() const override {
        static const BackendId id(kId);
        return id;
    }
    IWorkloadFactoryPtr CreateWorkloadFactory(const IMemoryManagerSharedPtr&) const override {
        return std::make_unique<TestFactory>();
    }
    ILayerSupportSharedPtr GetLayerSupport() const override { return std::make_shared<TestSupport>(); }

    OptimizationViews OptimizeSubgraph(const SubgraphView& subgraph) const override {
        if (m_Mode == Mode::Throws) throw std::runtime_error("simulated compiler crash");
        OptimizationViews views;
        IConnectableLayer* add = FindLayer(subgraph, "add");
        IConnectableLayer* relu = FindLayer(subgraph, "relu");
        IConnectableLayer* neg = FindLayer(subgraph, "neg");
        if (m_Mode == Mode::NonConvex && add && relu && neg) {
            IConnectableLayer* p = AddFused(*views.GetINetwork(), {true, false}, "fused", 3, 2);
            p->GetOutputSlot(0).SetTensorInfo(add->GetOutputSlot(0).GetTensorInfo());
            p->GetOutputSlot(1).SetTensorInfo(neg->GetOutputSlot(0).GetTensorInfo());
            views.AddSubstitution(
                {SubgraphView({add, neg}, {&add->GetInputSlot(0), &add->GetInputSlot(1), &neg->GetInputSlot(0)},
                              {&add->GetOutputSlot(0), &neg->GetOutputSlot(0)}),
                 SubgraphView(p)});
            views.AddUntouchedSubgraph(SubgraphView(relu));
            return views;
        }
        for (IConnectableLayer* l : subgraph.GetLayers()) {
            if (l != add && l != relu) views.AddUntouchedSubgraph(SubgraphView(l));
        }
        if (!add || !relu) {
            if (add) views.AddUntouchedSubgraph(SubgraphView(add));
            if (relu) views.AddUntouchedSubgraph(SubgraphView(relu));
            return views;
        }
        const TensorInfo& outInfo = relu->GetOutputSlot(0).GetTensorInfo();
        SubgraphView chain({add, relu}, {&add->GetInputSlot(0), &add->GetInputSlot(1)}, {&relu->GetOutputSlot(0)});
        INetwork& net = *views.GetINetwork();
        switch (m_Mode) {
            case Mode::FuseChain: {
                IConnectableLayer* p = AddFused(net, {true, true}, "fused", 2, 1);
                p->GetOutputSlot(0).SetTensorInfo(outInfo);
                views.AddSubstitution({chain, SubgraphView(p)});
                break;
            }
            case Mode::SplitChain: {
                IConnectableLayer* pAdd = AddFused(net, {true, false}, "p_add", 2, 1);
                IConnectableLayer* pRelu = AddFused(net, {false, true}, "p_relu", 1, 1);
                pAdd->GetOutputSlot(0).SetTensorInfo(add->GetOutputSlot(0).GetTensorInfo());
                pRelu->GetOutputSlot(0).SetTensorInfo(outInfo);
                pAdd->GetOutputSlot(0).Connect(pRelu->GetInputSlot(0));
                views.AddSubstitution({chain, SubgraphView({pAdd, pRelu}, {&pAdd->GetInputSlot(0), &pAdd->GetInputSlot(1)},
                                                           {&pRelu->GetOutputSlot(0)})});
                break;
            }
            case Mode::FailRelu: {
                IConnectableLayer* pAdd = AddFused(net, {true, false}, "p_add", 2, 1);
                pAdd->GetOutputSlot(0).SetTensorInfo(add->GetOutputSlot(0).GetTensorInfo());
                views.AddSubstitution({SubgraphView(add), SubgraphView(pAdd)});
                views.AddFailedSubgraph(SubgraphView(relu));
                break;
            }
            case Mode::MissingLayer:
                views.AddUntouchedSubgraph(SubgraphView(add));
                break;
            case Mode::FewerInputs: {
                IConnectableLayer* p = AddFused(net, {false, true}, "fused", 1, 1);
                p->GetOutputSlot(0).SetTensorInfo(outInfo);
                views.AddSubstitution({chain, SubgraphView(p)});
                break;
            }
            case Mode::MoreOutputs: {
                IConnectableLayer* p = AddFused(net, {true, true}, "fused", 2, 2);
                p->GetOutputSlot(0).SetTensorInfo(outInfo);
                p->GetOutputSlot(1).SetTensorInfo(outInfo);
                views.AddSubstitution({chain, SubgraphView(p)});
                break;
            }
            case Mode::NoOutputInfo: {
                IConnectableLayer* p = AddFused(net, {true, true}, "fused", 2, 1);
                views.AddSubstitution({chain, SubgraphView(p)});
                break;
            }
            case Mode::WrongOutputInfo: {
                IConnectableLayer* p = AddFused(net, {true, true}, "fused", 2, 1);
                p->GetOutputSlot(0).SetTensorInfo(TensorInfo({6}, DataType::Float32));
                views.AddSubstitution({chain, SubgraphView(p)});
                break;
            }
            case Mode::ForeignLayer: {
                m_Foreign = INetwork::Create();
                IConnectableLayer* p = AddFused(*m_Foreign, {true, true}, "fused", 2, 1);
                p->GetOutputSlot(0).SetTensorInfo(outInfo);
                views.AddSubstitution({chain, SubgraphView(p)});
                break;
            }
            case Mode::IncompleteInputs: {
                IConnectableLayer* p = AddFused(net, {false, true}, "fused", 1, 1);
                p->GetOutputSlot(0).SetTensorInfo(outInfo);
                views.AddSubstitution(
                    {SubgraphView({add, relu}, {&add->GetInputSlot(0)}, {&relu->GetOutputSlot(0)}), SubgraphView(p)});
                break;
            }
            case Mode::DanglingInput: {
                IConnectableLayer* p = AddFused(net, {true, true}, "fused", 2, 1);
                p->GetOutputSlot(0).SetTensorInfo(outInfo);
                views.AddSubstitution({chain, SubgraphView({p}, {&p->GetInputSlot(0)}, {&p->GetOutputSlot(0)})});
                break;
            }
            case Mode::NonConvex:
            case Mode::Throws: break;
        }
        return views;
    }
private:
    Mode m_Mode;
    mutable INetworkPtr m_Foreign{nullptr, &INetwork::Destroy};
};

/// Registers SubstTest in `mode` for the scope.
struct ScopedTestBackend {
    explicit ScopedTestBackend(Mode mode) {
        BackendRegistryInstance().Register(kId, [mode]() { return IBackendInternalUniquePtr(new TestBackend(mode)); });
    }
    ~ScopedTestBackend() { BackendRegistryInstance().Deregister(kId); }
};

const TensorInfo kInfo({2, 3}, DataType::Float32);

/// x, y -> add -> relu -> neg -> out
INetworkPtr MakeChainNetwork() {
    INetworkPtr net = INetwork::Create();
    auto* x = net->AddInputLayer(0, "x");
    auto* y = net->AddInputLayer(1, "y");
    auto* add = net->AddAdditionLayer("add");
    auto* relu = net->AddElementwiseUnaryLayer({UnaryOperation::Relu}, "relu");
    auto* neg = net->AddElementwiseUnaryLayer({UnaryOperation::Neg}, "neg");
    auto* out = net->AddOutputLayer(0, "out");
    x->GetOutputSlot(0).SetTensorInfo(kInfo);
    y->GetOutputSlot(0).SetTensorInfo(kInfo);
    x->GetOutputSlot(0).Connect(add->GetInputSlot(0));
    y->GetOutputSlot(0).Connect(add->GetInputSlot(1));
    add->GetOutputSlot(0).Connect(relu->GetInputSlot(0));
    relu->GetOutputSlot(0).Connect(neg->GetInputSlot(0));
    neg->GetOutputSlot(0).Connect(out->GetInputSlot(0));
    return net;
}

struct Placed {
    std::string m_Name;
    LayerType m_Type;
    std::string m_Backend;
};

std::vector<Placed> ComputePlacements(const IOptimizedNetwork& opt) {
    std::vector<Placed> out;
    for (const LayerPlacement& p : opt.GetLayerPlacements()) {
        if (p.m_Type == LayerType::Input || p.m_Type == LayerType::Output || p.m_Type == LayerType::Constant) continue;
        out.push_back({p.m_LayerName, p.m_Type, p.m_Backend.Get()});
    }
    return out;
}

bool operator==(const Placed& a, const Placed& b) {
    return a.m_Name == b.m_Name && a.m_Type == b.m_Type && a.m_Backend == b.m_Backend;
}
std::ostream& operator<<(std::ostream& os, const Placed& p) {
    return os << p.m_Name << ":" << GetLayerTypeName(p.m_Type) << "@" << p.m_Backend;
}

bool LogHas(const IOptimizedNetwork& opt, const std::string& text) {
    for (const auto& line : opt.GetOptimizationLog()) {
        if (line.find(text) != std::string::npos) return true;
    }
    return false;
}

/// Runs the optimized chain network on fixed inputs; returns the output.
std::vector<float> RunChain(IRuntime& runtime, IOptimizedNetworkPtr opt) {
    NetworkId id = 0;
    std::string error;
    EXPECT_EQ(runtime.LoadNetwork(id, std::move(opt), error), Status::Success) << error;
    const std::vector<float> x{1, -2, 3, -4, 5, -6}, y{0.5f, 0.5f, -4, 4, -6, 7};
    std::vector<float> out(6, 99.f);
    runtime.EnqueueWorkload(id, {{0, ConstTensor(kInfo, x.data())}, {1, ConstTensor(kInfo, y.data())}},
                            {{0, Tensor(kInfo, out.data())}});
    runtime.UnloadNetwork(id);
    return out;
}

// -(relu(x + y)) for RunChain's inputs.
const std::vector<float> kExpected{-1.5f, -0.f, -0.f, -0.f, -0.f, -1.f};

std::string OptimizeError(Mode mode) {
    ScopedTestBackend backend(mode);
    IRuntimePtr runtime = IRuntime::Create(IRuntime::CreationOptions());
    INetworkPtr net = MakeChainNetwork();
    try {
        Optimize(*net, {kId, "CpuRef"}, runtime->GetDeviceSpec());
    } catch (const BackendUnavailableException& e) {
        return e.what();
    }
    return "(no error)";
}

}  // namespace

TEST(Substitution, ChainIsReplacedByOnePreCompiledLayer) {
    ScopedTestBackend backend(Mode::FuseChain);
    IRuntimePtr runtime = IRuntime::Create(IRuntime::CreationOptions());
    INetworkPtr net = MakeChainNetwork();
    IOptimizedNetworkPtr opt = Optimize(*net, {kId, "CpuRef"}, runtime->GetDeviceSpec());
    const std::vector<Placed> expected{{"fused", LayerType::PreCompiled, kId}, {"neg", LayerType::ElementwiseUnary, kId}};
    EXPECT_EQ(ComputePlacements(*opt), expected) << opt->ToString();
    EXPECT_TRUE(LogHas(*opt, "substituted Add 'add', Relu 'relu' on SubstTest with TestFused(Add+Relu) 'fused'"))
        << opt->ToString();
    // The PreCompiled layer reads both inputs, in order, and feeds neg.
    const std::string graph = opt->ToString();
    EXPECT_NE(graph.find("TestFused(Add+Relu) 'fused' [SubstTest] (x:0, y:0) -> Float32 2x3"), std::string::npos) << graph;
    EXPECT_NE(graph.find("Neg 'neg' [SubstTest] (fused:0)"), std::string::npos) << graph;
    EXPECT_EQ(RunChain(*runtime, std::move(opt)), kExpected);
}

TEST(Substitution, ReplacementKeepsItsInternalConnections) {
    ScopedTestBackend backend(Mode::SplitChain);
    IRuntimePtr runtime = IRuntime::Create(IRuntime::CreationOptions());
    INetworkPtr net = MakeChainNetwork();
    IOptimizedNetworkPtr opt = Optimize(*net, {kId}, runtime->GetDeviceSpec());
    const std::vector<Placed> expected{{"p_add", LayerType::PreCompiled, kId},
                                       {"p_relu", LayerType::PreCompiled, kId},
                                       {"neg", LayerType::ElementwiseUnary, kId}};
    EXPECT_EQ(ComputePlacements(*opt), expected) << opt->ToString();
    const std::string graph = opt->ToString();
    EXPECT_NE(graph.find("'p_add' [SubstTest] (x:0, y:0)"), std::string::npos) << graph;
    EXPECT_NE(graph.find("'p_relu' [SubstTest] (p_add:0)"), std::string::npos) << graph;
    EXPECT_NE(graph.find("'neg' [SubstTest] (p_relu:0)"), std::string::npos) << graph;
    EXPECT_EQ(RunChain(*runtime, std::move(opt)), kExpected);
}

TEST(Substitution, FailedPartIsReassignedToTheNextBackend) {
    ScopedTestBackend backend(Mode::FailRelu);
    IRuntimePtr runtime = IRuntime::Create(IRuntime::CreationOptions());
    INetworkPtr net = MakeChainNetwork();
    IOptimizedNetworkPtr opt = Optimize(*net, {kId, "CpuRef"}, runtime->GetDeviceSpec());
    const std::vector<Placed> expected{{"p_add", LayerType::PreCompiled, kId},
                                       {"relu", LayerType::ElementwiseUnary, "CpuRef"},
                                       {"neg", LayerType::ElementwiseUnary, kId}};
    EXPECT_EQ(ComputePlacements(*opt), expected) << opt->ToString();
    EXPECT_TRUE(LogHas(*opt, "re-assigned Relu 'relu' from SubstTest to CpuRef (failed sub-graph)"));
    EXPECT_TRUE(LogHas(*opt, "substituted Add 'add' on SubstTest with TestFused(Add) 'p_add'"));
    for (const LayerPlacement& p : opt->GetLayerPlacements()) {
        if (p.m_LayerName != "relu") continue;
        ASSERT_EQ(p.m_Declined.size(), 1u);
        EXPECT_EQ(p.m_Declined[0].first, BackendId(kId));
        EXPECT_NE(p.m_Declined[0].second.find("OptimizeSubgraph rejected it"), std::string::npos);
    }
    EXPECT_EQ(RunChain(*runtime, std::move(opt)), kExpected);
}

TEST(Substitution, FailedPartWithoutAnotherBackendIsAnError) {
    ScopedTestBackend backend(Mode::FailRelu);
    IRuntimePtr runtime = IRuntime::Create(IRuntime::CreationOptions());
    INetworkPtr net = MakeChainNetwork();
    try {
        Optimize(*net, {kId}, runtime->GetDeviceSpec());
        FAIL() << "expected BackendUnavailableException";
    } catch (const BackendUnavailableException& e) {
        EXPECT_NE(std::string(e.what()).find("Relu 'relu'"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("SubstTest: the backend's OptimizeSubgraph rejected it"), std::string::npos)
            << e.what();
    }
}

TEST(Substitution, ViewsThatDoNotCoverTheSubgraphAreRejected) {
    const std::string e = OptimizeError(Mode::MissingLayer);
    EXPECT_NE(e.find("backend 'SubstTest'"), std::string::npos) << e;
    EXPECT_NE(e.find("do not exactly cover"), std::string::npos) << e;
    EXPECT_NE(e.find("3 layers given, 2 covered"), std::string::npos) << e;
}

TEST(Substitution, MismatchedSlotCountsAreRejected) {
    std::string e = OptimizeError(Mode::FewerInputs);
    EXPECT_NE(e.find("backend 'SubstTest' returned an invalid substitution (#1, replacing Add 'add', Relu 'relu')"),
              std::string::npos)
        << e;
    EXPECT_NE(e.find("the replacement has 1 input slots but the substitutable sub-graph has 2"), std::string::npos) << e;
    e = OptimizeError(Mode::MoreOutputs);
    EXPECT_NE(e.find("backend 'SubstTest'"), std::string::npos) << e;
    EXPECT_NE(e.find("the replacement has 2 output slots but the substitutable sub-graph has 1"), std::string::npos) << e;
}

TEST(Substitution, ReplacementOutputInfosMustBeSetAndMatch) {
    std::string e = OptimizeError(Mode::NoOutputInfo);
    EXPECT_NE(e.find("backend 'SubstTest'"), std::string::npos) << e;
    EXPECT_NE(e.find("output slot 0 of TestFused(Add+Relu) 'fused' of the replacement has no tensor info"),
              std::string::npos)
        << e;
    e = OptimizeError(Mode::WrongOutputInfo);
    EXPECT_NE(e.find("is Float32 6 but the output it replaces (output slot 0 of Relu 'relu') is Float32 2x3"),
              std::string::npos)
        << e;
}

TEST(Substitution, ReplacementLayersMustComeFromTheViewsNetwork) {
    const std::string e = OptimizeError(Mode::ForeignLayer);
    EXPECT_NE(e.find("backend 'SubstTest'"), std::string::npos) << e;
    EXPECT_NE(e.find("layer 0 of the replacement sub-graph is not a layer of the network of "
                     "OptimizationViews::GetINetwork()"),
              std::string::npos)
        << e;
}

TEST(Substitution, BoundariesMustBeComplete) {
    std::string e = OptimizeError(Mode::IncompleteInputs);
    EXPECT_NE(e.find("input slot 1 of Add 'add' is fed from outside the substitutable sub-graph but is not one of its "
                     "input slots"),
              std::string::npos)
        << e;
    e = OptimizeError(Mode::DanglingInput);
    EXPECT_NE(e.find("input slot 1 of TestFused(Add+Relu) 'fused' of the replacement is neither one of its input slots "
                     "nor connected to another replacement layer"),
              std::string::npos)
        << e;
}

TEST(Substitution, ThrowingOptimizeSubgraphIsAnErrorNamingTheBackend) {
    const std::string e = OptimizeError(Mode::Throws);
    EXPECT_NE(e.find("backend 'SubstTest': OptimizeSubgraph threw: simulated compiler crash"), std::string::npos) << e;
}

TEST(Substitution, NonConvexSubstitutionIsAnErrorNamingTheBackend) {
    const std::string e = OptimizeError(Mode::NonConvex);
    EXPECT_NE(e.find("backend 'SubstTest': applying its substitutions made the graph cyclic"), std::string::npos) << e;
    EXPECT_NE(e.find("cycle"), std::string::npos) << e;
}
