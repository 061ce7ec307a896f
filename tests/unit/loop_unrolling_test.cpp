// Loop: unrolled by Optimize() (src/core/LoopUnrolling.cpp). Networks are built through the public
// INetwork API with a LoopDescriptor holding a body network; the ONNX import of Loop (outer
// values, nested bodies, Range in a body) is covered by tests/ops/cases_control_flow.py and the
// ONNX node tests test_loop11 and test_range_*_expanded.
#include "TestHelpers.hpp"

using namespace trellis;
using namespace trellis::test;

namespace {

/// Body of one Float32 loop-carried value v: v_next = v + v, the condition passed through, and
/// v_next as the scan value.
std::shared_ptr<const INetwork> DoublingBody() {
    INetworkPtr body = INetwork::Create();
    body->AddInputLayer(0, "iteration");
    IConnectableLayer* cond = body->AddInputLayer(1, "cond_in");
    IConnectableLayer* v = body->AddInputLayer(2, "v_in");
    IConnectableLayer* add = body->AddAdditionLayer("v_next");
    v->GetOutputSlot(0).Connect(add->GetInputSlot(0));
    v->GetOutputSlot(0).Connect(add->GetInputSlot(1));
    IConnectableLayer* condOut = body->AddLayer(LayerType::Identity, EmptyDescriptor{}, "cond_out");
    cond->GetOutputSlot(0).Connect(condOut->GetInputSlot(0));
    condOut->GetOutputSlot(0).Connect(body->AddOutputLayer(0)->GetInputSlot(0));
    add->GetOutputSlot(0).Connect(body->AddOutputLayer(1)->GetInputSlot(0));
    add->GetOutputSlot(0).Connect(body->AddOutputLayer(2)->GetInputSlot(0));
    return ShareNetwork(std::move(body));
}

LoopDescriptor DoublingLoop() {
    LoopDescriptor d;
    d.m_Body = DoublingBody();
    d.m_NumCarried = 1;
    d.m_NumScanOutputs = 1;
    return d;
}

IOutputSlot& NoCondition(LayerTestNetwork& n) {
    static const uint8_t none = 0;
    return n.Constant(TensorShape({0}), DataType::Boolean, &none);
}

IOutputSlot& TripCount(LayerTestNetwork& n, int64_t count) {
    return n.Constant(TensorShape(std::vector<unsigned int>{}), DataType::Signed64, &count);
}

}  // namespace

TEST(LoopUnrolling, TripCountFromAGraphInputIsPinnedPerRun) {
    LayerTestNetwork n;
    IOutputSlot& tripCount = n.Input(TensorShape(std::vector<unsigned int>{}), DataType::Signed64);
    IOutputSlot& v = n.Input(TensorShape({2}));
    n.Layer(LayerType::Loop, DoublingLoop(), "doubling", {&tripCount, &NoCondition(n), &v}, 2);
    NetworkId id = 0;
    ASSERT_EQ(n.m_Runtime->LoadNetwork(id, n.Optimize()), Status::Success);
    EXPECT_TRUE(n.m_Runtime->IsDynamic(id)) << "the trip count comes from a graph input: pinned per run";
    n.m_Runtime->UnloadNetwork(id);

    const std::vector<float> v0 = {1.5f, -2.0f};
    for (int64_t count : {3, 1}) {
        const auto outs = RunLayerTestNetwork(
            n, {MakeTensor(TensorShape(std::vector<unsigned int>{}), DataType::Signed64, std::vector<int64_t>{count}),
                MakeTensor(TensorShape({2}), DataType::Float32, v0)});
        ASSERT_EQ(outs.size(), 2u);
        const float scale = static_cast<float>(1 << count);
        EXPECT_EQ(Compare(outs[0], MakeTensor(TensorShape({2}), DataType::Float32,
                                              std::vector<float>{v0[0] * scale, v0[1] * scale}), 0, 0), "");
        ASSERT_EQ(outs[1].m_Info.GetShape(), TensorShape({static_cast<unsigned int>(count), 2}));
        std::vector<float> scan;
        for (int64_t i = 1; i <= count; ++i) {
            for (float x : v0) scan.push_back(x * static_cast<float>(1 << i));
        }
        EXPECT_EQ(Compare(outs[1], MakeTensor(outs[1].m_Info.GetShape(), DataType::Float32, scan), 0, 0), "")
            << "trip count " << count;
    }
}

TEST(LoopUnrolling, ConstantLoopFoldsAway) {
    // Trip count and value constant: every unrolled layer folds; the log says it was unrolled.
    LayerTestNetwork n;
    const std::vector<float> v0 = {1.0f, 3.0f};
    IOutputSlot& v = n.ConstFloats(v0, TensorShape({2}));
    n.Layer(LayerType::Loop, DoublingLoop(), "folded_loop", {&TripCount(n, 2), &NoCondition(n), &v}, 2);
    IOptimizedNetworkPtr opt = n.Optimize();
    bool unrolled = false;
    for (const std::string& line : opt->GetOptimizationLog()) {
        unrolled = unrolled || line.find("unrolled Loop 'folded_loop': 2 iterations") != std::string::npos;
    }
    EXPECT_TRUE(unrolled);
    EXPECT_TRUE(opt->GetBackendLayerCounts().empty()) << "nothing is left to run";
    const auto outs = RunLayerTestNetwork(n, {});
    EXPECT_EQ(Compare(outs[0], MakeTensor(TensorShape({2}), DataType::Float32, std::vector<float>{4.0f, 12.0f}), 0, 0),
              "");
    EXPECT_EQ(Compare(outs[1], MakeTensor(TensorShape({2, 2}), DataType::Float32,
                                          std::vector<float>{2.0f, 6.0f, 4.0f, 12.0f}), 0, 0), "");
}

TEST(LoopUnrolling, MoreIterationsThanTheLimitAreRefusedNamingTheLoop) {
    LayerTestNetwork n;
    IOutputSlot& v = n.Input(TensorShape({2}));
    n.Layer(LayerType::Loop, DoublingLoop(), "long_loop",
            {&TripCount(n, int64_t{kMaxLoopIterations} + 1), &NoCondition(n), &v}, 2);
    ExpectRejected(n, "long_loop", "trip count 1025 needs more than 1024 iterations");
}

TEST(LoopUnrolling, UsedScanOutputOfALoopWithoutIterationsIsRefused) {
    LayerTestNetwork n;
    IOutputSlot& v = n.Input(TensorShape({2}));
    n.Layer(LayerType::Loop, DoublingLoop(), "empty_loop", {&TripCount(n, 0), &NoCondition(n), &v}, 2);
    ExpectRejected(n, "empty_loop", "scan output 0 is used, but the loop runs no iteration");
}

TEST(LoopUnrolling, FalseConditionRunsNoIteration) {
    LayerTestNetwork n;
    IOutputSlot& v = n.Input(TensorShape({2}));
    const uint8_t no = 0;
    LoopDescriptor d = DoublingLoop();
    d.m_NumScanOutputs = 0;  // the body's scan value is then a third result nobody reads
    IConnectableLayer* loop = n.m_Net->AddLayer(LayerType::Loop, d, "never", 3, 1);
    TripCount(n, 5).Connect(loop->GetInputSlot(0));
    n.Constant(TensorShape(std::vector<unsigned int>{}), DataType::Boolean, &no).Connect(loop->GetInputSlot(1));
    v.Connect(loop->GetInputSlot(2));
    loop->GetOutputSlot(0).Connect(n.m_Net->AddOutputLayer(n.m_NextOutput++)->GetInputSlot(0));
    const std::vector<float> v0 = {0.25f, 7.0f};
    const auto outs = RunLayerTestNetwork(n, {MakeTensor(TensorShape({2}), DataType::Float32, v0)});
    EXPECT_EQ(Compare(outs[0], MakeTensor(TensorShape({2}), DataType::Float32, v0), 0, 0), "");
}

TEST(LoopUnrolling, RulesNameTheLoop) {
    {
        LayerTestNetwork n;
        IOutputSlot& v = n.Input(TensorShape({2}));
        const float notAnInteger = 2.0f;
        IOutputSlot& m = n.Constant(TensorShape(std::vector<unsigned int>{}), DataType::Float32, &notAnInteger);
        n.Layer(LayerType::Loop, DoublingLoop(), "float_count", {&m, &NoCondition(n), &v}, 2);
        ExpectRejected(n, "float_count", "trip count M (input 0) is Float32 scalar; it must be a Signed64 scalar");
    }
    {
        LayerTestNetwork n;
        IOutputSlot& v = n.Input(TensorShape({2}));
        LoopDescriptor d = DoublingLoop();
        d.m_NumOuterValues = 1;  // promises an outer value the layer does not have
        n.Layer(LayerType::Loop, d, "short_of_inputs", {&TripCount(n, 1), &NoCondition(n), &v}, 2);
        ExpectRejected(n, "short_of_inputs", "has 3 inputs; its descriptor");
    }
    {
        LayerTestNetwork n;
        LoopDescriptor d = DoublingLoop();
        d.m_NumCarried = 0;  // the body still reads binding 2
        d.m_NumOuterValues = 0;
        d.m_NumScanOutputs = 2;
        n.Layer(LayerType::Loop, d, "unfed_body", {&TripCount(n, 1), &NoCondition(n)}, 2);
        ExpectRejected(n, "unfed_body", "has binding 2, which the loop does not provide");
    }
}
