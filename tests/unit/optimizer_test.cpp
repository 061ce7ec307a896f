// Optimizer: graph in -> graph out, for each backend-independent pass, plus validation errors.
#include "TestHelpers.hpp"

#include "core/Graph.hpp"
#include "core/MemoryPlanner.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace trellis;
using namespace trellis::test;

namespace {

struct Built {
    INetworkPtr net = INetwork::Create();
    IRuntimePtr runtime = IRuntime::Create(IRuntime::CreationOptions());
};

IConnectableLayer* AddFloatConstant(INetwork& net, const TensorShape& shape, const std::vector<float>& values,
                                    const char* name) {
    return net.AddConstantLayer(ConstTensor(TensorInfo(shape, DataType::Float32), values.data()), name);
}

IConnectableLayer* AddInt64Constant(INetwork& net, const std::vector<int64_t>& values, const char* name) {
    return net.AddConstantLayer(
        ConstTensor(TensorInfo(TensorShape({static_cast<unsigned int>(values.size())}), DataType::Signed64), values.data()),
        name);
}

std::vector<LayerType> ComputeTypes(const IOptimizedNetwork& opt) {
    std::vector<LayerType> types;
    for (const auto& p : opt.GetLayerPlacements()) {
        if (p.m_Type != LayerType::Input && p.m_Type != LayerType::Output && p.m_Type != LayerType::Constant) {
            types.push_back(p.m_Type);
        }
    }
    return types;
}

bool Mentions(const std::vector<std::string>& log, const std::string& text) {
    return std::any_of(log.begin(), log.end(), [&](const std::string& l) { return l.find(text) != std::string::npos; });
}

bool LogMentions(const IOptimizedNetwork& opt, const std::string& text) { return Mentions(opt.GetOptimizationLog(), text); }

std::vector<float> RunSingle(IRuntime& runtime, IOptimizedNetworkPtr opt, const std::vector<float>& input) {
    NetworkId id;
    runtime.LoadNetwork(id, std::move(opt));
    std::vector<float> out(runtime.GetOutputTensorInfo(id, 0).GetNumElements());
    runtime.EnqueueWorkload(id, {{0, ConstTensor(runtime.GetInputTensorInfo(id, 0), input.data())}},
                            {{0, Tensor(runtime.GetOutputTensorInfo(id, 0), out.data())}});
    runtime.UnloadNetwork(id);
    return out;
}

}  // namespace

TEST(Optimizer, RemovesDeadLayersAndIdentities) {
    Built b;
    auto* in = b.net->AddInputLayer(0, "x");
    in->GetOutputSlot(0).SetTensorInfo(TensorInfo({2, 3}, DataType::Float32));
    auto* id = b.net->AddLayer(LayerType::Identity, EmptyDescriptor{}, "identity");
    auto* relu = b.net->AddElementwiseUnaryLayer({UnaryOperation::Relu}, "relu");
    auto* dead = b.net->AddElementwiseUnaryLayer({UnaryOperation::Exp}, "dead_exp");
    auto* out = b.net->AddOutputLayer(0);
    in->GetOutputSlot(0).Connect(id->GetInputSlot(0));
    id->GetOutputSlot(0).Connect(relu->GetInputSlot(0));
    in->GetOutputSlot(0).Connect(dead->GetInputSlot(0));
    relu->GetOutputSlot(0).Connect(out->GetInputSlot(0));
    auto opt = Optimize(*b.net, {"CpuRef"}, b.runtime->GetDeviceSpec());
    EXPECT_EQ(ComputeTypes(*opt), std::vector<LayerType>{LayerType::ElementwiseUnary});
    EXPECT_TRUE(LogMentions(*opt, "removed 1 dead layers"));
    EXPECT_TRUE(LogMentions(*opt, "removed Identity 'identity'"));
    const auto y = RunSingle(*b.runtime, std::move(opt), {-1, 2, -3, 4, -5, 6});
    EXPECT_EQ(y, (std::vector<float>{0, 2, 0, 4, 0, 6}));
}

TEST(Optimizer, RemovesCastsToTheTypeTheInputHasKeepsOthers) {
    Built b;
    auto* in = b.net->AddInputLayer(0, "x");
    in->GetOutputSlot(0).SetTensorInfo(TensorInfo({2, 3}, DataType::Float32));
    auto* same = b.net->AddLayer(LayerType::Cast, CastDescriptor{DataType::Float32}, "cast_same");
    auto* toInt = b.net->AddLayer(LayerType::Cast, CastDescriptor{DataType::Signed32}, "cast_int");
    auto* back = b.net->AddLayer(LayerType::Cast, CastDescriptor{DataType::Float32}, "cast_back");
    auto* out = b.net->AddOutputLayer(0);
    in->GetOutputSlot(0).Connect(same->GetInputSlot(0));
    same->GetOutputSlot(0).Connect(toInt->GetInputSlot(0));
    toInt->GetOutputSlot(0).Connect(back->GetInputSlot(0));
    back->GetOutputSlot(0).Connect(out->GetInputSlot(0));
    auto opt = Optimize(*b.net, {"CpuRef"}, b.runtime->GetDeviceSpec());
    EXPECT_EQ(ComputeTypes(*opt), (std::vector<LayerType>{LayerType::Cast, LayerType::Cast}));
    EXPECT_TRUE(LogMentions(*opt, "removed Cast 'cast_same' (a cast to the type it already has)"));
    // The float -> int -> float round trip truncates: it stays.
    const auto y = RunSingle(*b.runtime, std::move(opt), {-1.5f, 2.5f, -3.25f, 4.75f, 0.5f, 6.0f});
    EXPECT_EQ(y, (std::vector<float>{-1, 2, -3, 4, 0, 6}));
}

TEST(Optimizer, FoldsConstantSubgraphs) {
    Built b;
    auto* in = b.net->AddInputLayer(0, "x");
    in->GetOutputSlot(0).SetTensorInfo(TensorInfo({4}, DataType::Float32));
    auto* c = AddFloatConstant(*b.net, {4}, {-1, 2, -3, 4}, "c");
    auto* crelu = b.net->AddElementwiseUnaryLayer({UnaryOperation::Relu}, "const_relu");
    auto* add = b.net->AddAdditionLayer("add");
    auto* out = b.net->AddOutputLayer(0);
    c->GetOutputSlot(0).Connect(crelu->GetInputSlot(0));
    in->GetOutputSlot(0).Connect(add->GetInputSlot(0));
    crelu->GetOutputSlot(0).Connect(add->GetInputSlot(1));
    add->GetOutputSlot(0).Connect(out->GetInputSlot(0));
    auto opt = Optimize(*b.net, {"CpuRef"}, b.runtime->GetDeviceSpec());
    EXPECT_EQ(ComputeTypes(*opt), std::vector<LayerType>{LayerType::ElementwiseBinary});
    EXPECT_TRUE(LogMentions(*opt, "folded Relu 'const_relu'"));
    EXPECT_EQ(RunSingle(*b.runtime, std::move(opt), {1, 1, 1, 1}), (std::vector<float>{1, 3, 1, 5}));
}

TEST(Optimizer, FoldsShapeChainIntoReshape) {
    // Shape -> Gather -> Unsqueeze -> Concat -> Reshape(shape input): the chain exporters emit.
    Built b;
    auto* in = b.net->AddInputLayer(0, "x");
    in->GetOutputSlot(0).SetTensorInfo(TensorInfo({2, 3, 4}, DataType::Float32));
    auto* shape = b.net->AddLayer(LayerType::Shape, ShapeDescriptor{}, "shape");
    auto* idx = AddInt64Constant(*b.net, {0}, "idx");
    auto* gather = b.net->AddLayer(LayerType::Gather, GatherDescriptor{0}, "gather");
    auto* minusOne = AddInt64Constant(*b.net, {-1}, "minus_one");
    auto* concat = b.net->AddLayer(LayerType::Concat, ConcatDescriptor{0}, "concat", 2);
    auto* reshape = b.net->AddLayer(LayerType::Reshape, ReshapeDescriptor{}, "reshape", 2);
    auto* out = b.net->AddOutputLayer(0);
    in->GetOutputSlot(0).Connect(shape->GetInputSlot(0));
    shape->GetOutputSlot(0).Connect(gather->GetInputSlot(0));
    idx->GetOutputSlot(0).Connect(gather->GetInputSlot(1));
    gather->GetOutputSlot(0).Connect(concat->GetInputSlot(0));
    minusOne->GetOutputSlot(0).Connect(concat->GetInputSlot(1));
    in->GetOutputSlot(0).Connect(reshape->GetInputSlot(0));
    concat->GetOutputSlot(0).Connect(reshape->GetInputSlot(1));
    reshape->GetOutputSlot(0).Connect(out->GetInputSlot(0));
    auto opt = Optimize(*b.net, {"CpuRef"}, b.runtime->GetDeviceSpec());
    EXPECT_EQ(ComputeTypes(*opt), std::vector<LayerType>{LayerType::Reshape});
    NetworkId id;
    b.runtime->LoadNetwork(id, std::move(opt));
    EXPECT_EQ(b.runtime->GetOutputTensorInfo(id, 0).GetShape(), TensorShape({2, 12}));
}

TEST(Optimizer, MergesReshapesAndCancelsTransposes) {
    Built b;
    auto* in = b.net->AddInputLayer(0, "x");
    in->GetOutputSlot(0).SetTensorInfo(TensorInfo({2, 3, 4}, DataType::Float32));
    ReshapeDescriptor r1;
    r1.m_TargetShape = {6, 4};
    ReshapeDescriptor r2;
    r2.m_TargetShape = {24};
    auto* reshape1 = b.net->AddReshapeLayer(r1, "r1");
    auto* reshape2 = b.net->AddReshapeLayer(r2, "r2");
    auto* t1 = b.net->AddLayer(LayerType::Transpose, TransposeDescriptor{{1, 0, 2}}, "t1");
    auto* t2 = b.net->AddLayer(LayerType::Transpose, TransposeDescriptor{{1, 0, 2}}, "t2");
    auto* add = b.net->AddAdditionLayer("add");
    ReshapeDescriptor r3;
    r3.m_TargetShape = {24};
    auto* reshape3 = b.net->AddReshapeLayer(r3, "r3");
    auto* out = b.net->AddOutputLayer(0);
    // add(reshape(reshape(x)), reshape(transpose(transpose(x))))
    in->GetOutputSlot(0).Connect(reshape1->GetInputSlot(0));
    reshape1->GetOutputSlot(0).Connect(reshape2->GetInputSlot(0));
    in->GetOutputSlot(0).Connect(t1->GetInputSlot(0));
    t1->GetOutputSlot(0).Connect(t2->GetInputSlot(0));
    t2->GetOutputSlot(0).Connect(reshape3->GetInputSlot(0));
    reshape2->GetOutputSlot(0).Connect(add->GetInputSlot(0));
    reshape3->GetOutputSlot(0).Connect(add->GetInputSlot(1));
    add->GetOutputSlot(0).Connect(out->GetInputSlot(0));
    auto opt = Optimize(*b.net, {"CpuRef"}, b.runtime->GetDeviceSpec());
    const auto types = ComputeTypes(*opt);
    EXPECT_EQ(std::count(types.begin(), types.end(), LayerType::Transpose), 0);
    EXPECT_EQ(std::count(types.begin(), types.end(), LayerType::Reshape), 2);
    EXPECT_TRUE(LogMentions(*opt, "merged Reshape 'r1' into Reshape 'r2'"));
    EXPECT_TRUE(LogMentions(*opt, "(identity permutation)"));
    std::vector<float> x(24);
    for (int i = 0; i < 24; ++i) x[i] = static_cast<float>(i);
    const auto y = RunSingle(*b.runtime, std::move(opt), x);
    for (int i = 0; i < 24; ++i) EXPECT_EQ(y[i], 2.0f * i);
}

TEST(Optimizer, FoldsBatchNormIntoConvolutionWithSameResult) {
    auto build = [](INetwork& net) {
        auto* in = net.AddInputLayer(0, "x");
        in->GetOutputSlot(0).SetTensorInfo(TensorInfo({1, 3, 5, 5}, DataType::Float32));
        std::vector<float> w(4 * 3 * 3 * 3);
        for (std::size_t i = 0; i < w.size(); ++i) w[i] = 0.01f * static_cast<float>(static_cast<int>(i % 17) - 8);
        auto* wc = AddFloatConstant(net, {4, 3, 3, 3}, w, "w");
        auto* bc = AddFloatConstant(net, {4}, {0.1f, -0.2f, 0.3f, 0.0f}, "b");
        ConvolutionDescriptor cd;
        cd.m_PadsBegin = {1, 1};
        cd.m_PadsEnd = {1, 1};
        auto* conv = net.AddConvolutionLayer(cd, true, "conv");
        auto* bn = net.AddLayer(LayerType::BatchNormalization, BatchNormalizationDescriptor{1e-5f}, "bn");
        const char* names[] = {"scale", "shift", "mean", "var"};
        const std::vector<float> params[] = {{1.5f, 0.5f, 2.0f, 1.0f}, {0.1f, 0.2f, 0.3f, 0.4f},
                                             {0.05f, -0.1f, 0.0f, 0.2f}, {1.0f, 2.0f, 0.5f, 0.25f}};
        in->GetOutputSlot(0).Connect(conv->GetInputSlot(0));
        wc->GetOutputSlot(0).Connect(conv->GetInputSlot(1));
        bc->GetOutputSlot(0).Connect(conv->GetInputSlot(2));
        conv->GetOutputSlot(0).Connect(bn->GetInputSlot(0));
        for (unsigned int i = 0; i < 4; ++i) {
            AddFloatConstant(net, {4}, params[i], names[i])->GetOutputSlot(0).Connect(bn->GetInputSlot(i + 1));
        }
        bn->GetOutputSlot(0).Connect(net.AddOutputLayer(0)->GetInputSlot(0));
    };
    std::vector<float> x(75);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.3f * static_cast<float>(i));

    Built folded, plain;
    build(*folded.net);
    build(*plain.net);
    auto optFolded = Optimize(*folded.net, {"CpuRef"}, folded.runtime->GetDeviceSpec());
    OptimizerOptions noPasses;
    noPasses.m_EnableGraphOptimizations = false;
    auto optPlain = Optimize(*plain.net, {"CpuRef"}, plain.runtime->GetDeviceSpec(), noPasses);
    EXPECT_EQ(ComputeTypes(*optFolded), std::vector<LayerType>{LayerType::Convolution});
    EXPECT_EQ(ComputeTypes(*optPlain), (std::vector<LayerType>{LayerType::Convolution, LayerType::BatchNormalization}));
    const auto a = RunSingle(*folded.runtime, std::move(optFolded), x);
    const auto e = RunSingle(*plain.runtime, std::move(optPlain), x);
    ASSERT_EQ(a.size(), e.size());
    for (std::size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], e[i], 1e-5f) << i;
}

namespace {

/// Optimizes the network `build` makes for CpuRef with the graph passes and without; returns the
/// first's compute layer types and optimization log, and both outputs for input `x`.
struct PassComparison {
    std::vector<LayerType> m_Types;
    std::vector<std::string> m_Log;
    std::vector<float> m_With, m_Without;
};
template <typename Build>
PassComparison CompareGraphPasses(Build build, const std::vector<float>& x) {
    Built with, without;
    build(*with.net);
    build(*without.net);
    auto optWith = Optimize(*with.net, {"CpuRef"}, with.runtime->GetDeviceSpec());
    OptimizerOptions noPasses;
    noPasses.m_EnableGraphOptimizations = false;
    auto optWithout = Optimize(*without.net, {"CpuRef"}, without.runtime->GetDeviceSpec(), noPasses);
    PassComparison r;
    r.m_Types = ComputeTypes(*optWith);
    r.m_Log = optWith->GetOptimizationLog();
    r.m_With = RunSingle(*with.runtime, std::move(optWith), x);
    r.m_Without = RunSingle(*without.runtime, std::move(optWithout), x);
    return r;
}

}  // namespace

TEST(Optimizer, RemovesWheresWhoseConditionIsConstantAndUniform) {
    // DistilBERT's Where(mask == 0, finfo.min, scores) with a mask of ones folded to a constant
    // all-false condition: the scores. All true picks input 1; a mixed condition, or a picked
    // input that would broadcast to the output's shape, keeps the Where.
    struct Case {
        const char* what;
        std::vector<uint8_t> cond;
        bool scalarFill;  // input 1 a scalar (DistilBERT's) or a full tensor
        bool removed;
    };
    const Case cases[] = {
        {"all false: the scores", {0, 0, 0, 0, 0, 0}, true, true},
        {"all true: the fill, a tensor of the output's shape", {1, 1, 1, 1, 1, 1}, false, true},
        {"all true but the fill is a scalar that broadcasts", {1, 1, 1, 1, 1, 1}, true, false},
        {"mixed", {0, 1, 0, 0, 0, 0}, true, false},
    };
    std::vector<float> x(6);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.5f * static_cast<float>(i) - 1.0f;
    for (const Case& c : cases) {
        const PassComparison r = CompareGraphPasses(
            [&](INetwork& net) {
                auto* in = net.AddInputLayer(0, "x");
                in->GetOutputSlot(0).SetTensorInfo(TensorInfo({2, 3}, DataType::Float32));
                auto* cond = net.AddConstantLayer(ConstTensor(TensorInfo({2, 3}, DataType::Boolean), c.cond.data()), "cond");
                const std::vector<float> fill(c.scalarFill ? 1 : 6, -3.0e38f);
                auto* f = AddFloatConstant(net, c.scalarFill ? TensorShape({1}) : TensorShape({2, 3}), fill, "fill");
                auto* w = net.AddLayer(LayerType::Where, EmptyDescriptor{}, "where", 3);
                cond->GetOutputSlot(0).Connect(w->GetInputSlot(0));
                f->GetOutputSlot(0).Connect(w->GetInputSlot(1));
                in->GetOutputSlot(0).Connect(w->GetInputSlot(2));
                w->GetOutputSlot(0).Connect(net.AddOutputLayer(0)->GetInputSlot(0));
            },
            x);
        EXPECT_EQ(std::count(r.m_Types.begin(), r.m_Types.end(), LayerType::Where), c.removed ? 0 : 1) << c.what;
        EXPECT_EQ(Mentions(r.m_Log, "removed Where 'where'"), c.removed) << c.what;
        EXPECT_EQ(r.m_With, r.m_Without) << c.what;
    }
}

TEST(Optimizer, LowersGathersOfOneConstantIndexToSlicesWithTheSameResult) {
    // PyTorch 2.x splits MultiheadAttention's packed Q/K/V [3, L, N, E] with Gather(index 0/1/2,
    // axis 0). Scalar and 1-element indices, negative ones, an inner axis; a list of two indices
    // and an index out of range stay Gathers.
    struct Case {
        const char* what;
        std::vector<int64_t> index;
        bool scalar;
        int axis;
        bool lowered;
    };
    const Case cases[] = {
        {"scalar index 1 on axis 0", {1}, true, 0, true},
        {"scalar index -1 on axis 2", {-1}, true, 2, true},
        {"a 1-element list on axis 1 (keeps the axis)", {2}, false, 1, true},
        {"two indices", {0, 2}, false, 1, false},
        {"out of range", {5}, true, 0, false},
    };
    std::vector<float> x(3 * 4 * 5);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.25f * static_cast<float>(i) - 3.0f;
    for (const Case& c : cases) {
        auto build = [&](INetwork& net) {
            auto* in = net.AddInputLayer(0, "x");
            in->GetOutputSlot(0).SetTensorInfo(TensorInfo({3, 4, 5}, DataType::Float32));
            const TensorShape is = c.scalar ? TensorShape() : TensorShape({static_cast<unsigned int>(c.index.size())});
            auto* idx = net.AddConstantLayer(ConstTensor(TensorInfo(is, DataType::Signed64), c.index.data()), "idx");
            auto* g = net.AddLayer(LayerType::Gather, GatherDescriptor{c.axis}, "gather", 2);
            in->GetOutputSlot(0).Connect(g->GetInputSlot(0));
            idx->GetOutputSlot(0).Connect(g->GetInputSlot(1));
            g->GetOutputSlot(0).Connect(net.AddOutputLayer(0)->GetInputSlot(0));
        };
        if (!c.lowered && c.index[0] == 5) {
            // Out of range: the pass leaves it, and Gather's own validation names the index.
            Built b;
            build(*b.net);
            EXPECT_THROW(Optimize(*b.net, {"CpuRef"}, b.runtime->GetDeviceSpec()), Exception) << c.what;
            continue;
        }
        const PassComparison r = CompareGraphPasses(build, x);
        EXPECT_EQ(std::count(r.m_Types.begin(), r.m_Types.end(), LayerType::Gather), c.lowered ? 0 : 1) << c.what;
        EXPECT_EQ(std::count(r.m_Types.begin(), r.m_Types.end(), LayerType::Slice), c.lowered ? 1 : 0) << c.what;
        EXPECT_EQ(Mentions(r.m_Log, "lowered Gather 'gather'"), c.lowered) << c.what;
        EXPECT_EQ(r.m_With, r.m_Without) << c.what;
    }
}

TEST(Optimizer, FoldsAZeroPadIntoTheAveragePoolAfterItWithTheSameResult) {
    // PyTorch exports avg_pool2d(x, 3, stride=1, padding=1) (Inception's pool branches) as a Pad
    // of zeros and an AveragePool without pads; and the forms that must stay two layers.
    struct Case {
        const char* what;
        std::vector<int64_t> pads;  // ONNX order: all begins, then all ends
        float value;
        std::vector<unsigned int> poolPads;
        bool countIncludePad, ceil, folded;
    };
    const Case cases[] = {
        {"Inception's pool branch", {0, 0, 1, 1, 0, 0, 1, 1}, 0.0f, {0, 0}, false, false, true},
        {"uneven pads, and pads of the pool's own that it counts", {0, 0, 0, 1, 0, 0, 1, 0}, 0.0f, {1, 0}, true, false, true},
        {"a pad value of 1", {0, 0, 1, 1, 0, 0, 1, 1}, 1.0f, {0, 0}, false, false, false},
        {"pool pads it does not count", {0, 0, 1, 1, 0, 0, 1, 1}, 0.0f, {1, 1}, false, false, false},
        {"ceil mode", {0, 0, 1, 1, 0, 0, 1, 1}, 0.0f, {0, 0}, false, true, false},
        {"a padded channel dim", {0, 1, 1, 1, 0, 0, 1, 1}, 0.0f, {0, 0}, false, false, false},
        {"a pad as wide as the window", {0, 0, 3, 0, 0, 0, 0, 0}, 0.0f, {0, 0}, false, false, false},
    };
    std::vector<float> x(2 * 3 * 7 * 6);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * static_cast<float>(i)) + 0.1f;
    for (const Case& c : cases) {
        const PassComparison r = CompareGraphPasses(
            [&](INetwork& net) {
                auto* in = net.AddInputLayer(0, "x");
                in->GetOutputSlot(0).SetTensorInfo(TensorInfo({2, 3, 7, 6}, DataType::Float32));
                PadDescriptor pd;
                pd.m_Pads = c.pads;
                pd.m_Value = c.value;
                auto* pad = net.AddLayer(LayerType::Pad, pd, "pad");
                PoolingDescriptor pool;
                pool.m_Algorithm = PoolingAlgorithm::Average;
                pool.m_KernelShape = {3, 3};
                pool.m_Strides = {1, 2};
                pool.m_PadsBegin = {c.poolPads[0], c.poolPads[1]};
                pool.m_PadsEnd = {c.poolPads[0], c.poolPads[1]};
                pool.m_CountIncludePad = c.countIncludePad;
                pool.m_CeilMode = c.ceil;
                auto* p = net.AddLayer(LayerType::Pooling, pool, "pool");
                in->GetOutputSlot(0).Connect(pad->GetInputSlot(0));
                pad->GetOutputSlot(0).Connect(p->GetInputSlot(0));
                p->GetOutputSlot(0).Connect(net.AddOutputLayer(0)->GetInputSlot(0));
            },
            x);
        EXPECT_EQ(std::count(r.m_Types.begin(), r.m_Types.end(), LayerType::Pad), c.folded ? 0 : 1) << c.what;
        EXPECT_EQ(Mentions(r.m_Log, "folded Pad 'pad' into"), c.folded) << c.what;
        ASSERT_EQ(r.m_With.size(), r.m_Without.size()) << c.what;
        for (std::size_t i = 0; i < r.m_With.size(); ++i) EXPECT_NEAR(r.m_With[i], r.m_Without[i], 1e-6f) << c.what << " element " << i;
    }
}

TEST(Optimizer, CropsConvolutionTapsThatReadOnlyPaddingWithTheSameResult) {
    // DeepLab's ASPP on a small map: with dilation 8 and pads 8 on a 6x6 input every outer tap
    // reads padding at every output position, so the 3x3 kernel is a 1x1 one; only rows where
    // the map is short; dilation 3 reaches the input from some positions and stays; a dropped
    // weight that is not finite keeps the kernel (weight x 0 would be NaN).
    struct Case {
        const char* what;
        unsigned int h, w, kh, kw, dilH, dilW, padH, padW, strideH;
        bool nanInCorner, cropped;
        const char* log;
    };
    const Case cases[] = {
        {"dilation 8 on 6x6", 6, 6, 3, 3, 8, 8, 8, 8, 1, false, true, "(3->1x3->1)"},
        {"only the short axis, stride 2", 4, 9, 3, 3, 5, 1, 5, 1, 2, false, true, "(3->1x3->3)"},
        {"a 1x5 kernel whose last taps miss", 5, 3, 1, 5, 1, 2, 0, 4, 1, false, true, "(1->1x5->3)"},
        {"dilation 3 reaches the input", 6, 6, 3, 3, 3, 3, 3, 3, 1, false, false, ""},
        {"a NaN among the dropped weights", 6, 6, 3, 3, 8, 8, 8, 8, 1, true, false, ""},
    };
    for (const Case& c : cases) {
        std::vector<float> x(2 * c.h * c.w);
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.41f * static_cast<float>(i));
        const PassComparison r = CompareGraphPasses(
            [&](INetwork& net) {
                auto* in = net.AddInputLayer(0, "x");
                in->GetOutputSlot(0).SetTensorInfo(TensorInfo({1, 2, c.h, c.w}, DataType::Float32));
                std::vector<float> w(4 * 2 * c.kh * c.kw);
                for (std::size_t i = 0; i < w.size(); ++i) w[i] = 0.05f * static_cast<float>(static_cast<int>(i % 13) - 6);
                if (c.nanInCorner) w[0] = std::nanf("");
                auto* wc = AddFloatConstant(net, {4, 2, c.kh, c.kw}, w, "w");
                auto* bc = AddFloatConstant(net, {4}, {0.1f, -0.2f, 0.3f, 0.0f}, "b");
                ConvolutionDescriptor cd;
                cd.m_KernelShape = {c.kh, c.kw};
                cd.m_Dilations = {c.dilH, c.dilW};
                cd.m_Strides = {c.strideH, 1};
                cd.m_PadsBegin = {c.padH, c.padW};
                cd.m_PadsEnd = {c.padH, c.padW};
                auto* conv = net.AddConvolutionLayer(cd, true, "conv");
                in->GetOutputSlot(0).Connect(conv->GetInputSlot(0));
                wc->GetOutputSlot(0).Connect(conv->GetInputSlot(1));
                bc->GetOutputSlot(0).Connect(conv->GetInputSlot(2));
                conv->GetOutputSlot(0).Connect(net.AddOutputLayer(0)->GetInputSlot(0));
            },
            x);
        EXPECT_EQ(Mentions(r.m_Log, "cropped the kernel of Convolution 'conv'"), c.cropped) << c.what;
        if (c.cropped) {
            EXPECT_TRUE(Mentions(r.m_Log, c.log)) << c.what;
        }
        ASSERT_EQ(r.m_With.size(), r.m_Without.size()) << c.what;
        for (std::size_t i = 0; i < r.m_With.size(); ++i) {
            if (std::isnan(r.m_Without[i])) EXPECT_TRUE(std::isnan(r.m_With[i])) << c.what << " element " << i;
            else EXPECT_NEAR(r.m_With[i], r.m_Without[i], 1e-6f) << c.what << " element " << i;
        }
    }
}

TEST(Optimizer, LowersMatrixProductEinsumsToMatMulWithTheSameResult) {
    // The two Einsums of torchvision's MaxViT attention (spaces and capitals as it writes them),
    // one that needs a Transpose of its output, and two that are no matrix product and stay.
    struct Case {
        const char* equation;
        TensorShape a, b;
        bool lowered;
    };
    const Case cases[] = {
        {"B G H I D, B G H J D -> B G H I J", {1, 2, 3, 4, 5}, {1, 2, 3, 6, 5}, true},
        {"B G H I J, B G H J D -> B G H I D", {1, 2, 3, 4, 6}, {1, 2, 3, 6, 5}, true},
        {"bik,bkj->bji", {2, 3, 4}, {2, 4, 5}, true},
        {"ij,ij->i", {3, 4}, {3, 4}, false},     // a row-wise dot product: no free dim on one side
        {"ik,jl->ij", {3, 4}, {5, 6}, false},    // sums over a label of one input
    };
    for (const Case& c : cases) {
        auto build = [&](INetwork& net) {
            auto* a = net.AddInputLayer(0, "a");
            a->GetOutputSlot(0).SetTensorInfo(TensorInfo(c.a, DataType::Float32));
            std::vector<float> bv(c.b.GetNumElements());
            for (std::size_t i = 0; i < bv.size(); ++i) bv[i] = std::cos(0.7f * static_cast<float>(i));
            auto* b = AddFloatConstant(net, c.b, bv, "b");
            auto* e = net.AddLayer(LayerType::Einsum, EinsumDescriptor{c.equation}, "einsum", 2);
            a->GetOutputSlot(0).Connect(e->GetInputSlot(0));
            b->GetOutputSlot(0).Connect(e->GetInputSlot(1));
            e->GetOutputSlot(0).Connect(net.AddOutputLayer(0)->GetInputSlot(0));
        };
        std::vector<float> x(c.a.GetNumElements());
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.3f * static_cast<float>(i));
        Built lowered, plain;
        build(*lowered.net);
        build(*plain.net);
        auto optLowered = Optimize(*lowered.net, {"CpuRef"}, lowered.runtime->GetDeviceSpec());
        OptimizerOptions noPasses;
        noPasses.m_EnableGraphOptimizations = false;
        auto optPlain = Optimize(*plain.net, {"CpuRef"}, plain.runtime->GetDeviceSpec(), noPasses);
        const std::vector<LayerType> types = ComputeTypes(*optLowered);
        EXPECT_EQ(std::count(types.begin(), types.end(), LayerType::Einsum), c.lowered ? 0 : 1) << c.equation;
        EXPECT_EQ(std::count(types.begin(), types.end(), LayerType::MatMul), c.lowered ? 1 : 0) << c.equation;
        EXPECT_EQ(LogMentions(*optLowered, "to a MatMul"), c.lowered) << c.equation;
        const auto got = RunSingle(*lowered.runtime, std::move(optLowered), x);
        const auto want = RunSingle(*plain.runtime, std::move(optPlain), x);
        ASSERT_EQ(got.size(), want.size()) << c.equation;
        for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5f) << c.equation << " element " << i;
    }
}

TEST(Optimizer, FoldsBatchNormIntoGemm) {
    auto build = [](INetwork& net) {
        auto* in = net.AddInputLayer(0, "x");
        in->GetOutputSlot(0).SetTensorInfo(TensorInfo({2, 3}, DataType::Float32));
        auto* w = AddFloatConstant(net, {4, 3}, {1, 2, 3, -1, 0, 1, 0.5f, 0.5f, 0.5f, 2, -2, 1}, "w");
        auto* c = AddFloatConstant(net, {4}, {0.1f, 0.2f, 0.3f, 0.4f}, "c");
        GemmDescriptor gd;
        gd.m_TransB = true;
        gd.m_Beta = 0.5f;
        auto* gemm = net.AddLayer(LayerType::Gemm, gd, "gemm", 3);
        auto* bn = net.AddLayer(LayerType::BatchNormalization, BatchNormalizationDescriptor{1e-3f}, "bn");
        in->GetOutputSlot(0).Connect(gemm->GetInputSlot(0));
        w->GetOutputSlot(0).Connect(gemm->GetInputSlot(1));
        c->GetOutputSlot(0).Connect(gemm->GetInputSlot(2));
        gemm->GetOutputSlot(0).Connect(bn->GetInputSlot(0));
        const std::vector<float> params[] = {{2, 1, 0.5f, 1}, {0, 1, 0, -1}, {0.5f, 0, 0, 1}, {1, 4, 1, 0.5f}};
        for (unsigned int i = 0; i < 4; ++i) {
            AddFloatConstant(net, {4}, params[i], "p")->GetOutputSlot(0).Connect(bn->GetInputSlot(i + 1));
        }
        bn->GetOutputSlot(0).Connect(net.AddOutputLayer(0)->GetInputSlot(0));
    };
    Built folded, plain;
    build(*folded.net);
    build(*plain.net);
    OptimizerOptions noPasses;
    noPasses.m_EnableGraphOptimizations = false;
    auto optFolded = Optimize(*folded.net, {"CpuRef"}, folded.runtime->GetDeviceSpec());
    EXPECT_EQ(ComputeTypes(*optFolded), std::vector<LayerType>{LayerType::Gemm});
    const std::vector<float> x{1, -2, 3, 0.5f, 0.25f, -1};
    const auto a = RunSingle(*folded.runtime, std::move(optFolded), x);
    const auto e = RunSingle(*plain.runtime, Optimize(*plain.net, {"CpuRef"}, plain.runtime->GetDeviceSpec(), noPasses), x);
    for (std::size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], e[i], 1e-5f) << i;
}

TEST(Optimizer, UnconnectedSlotAndCycleAreClearErrors) {
    Built b;
    auto* in = b.net->AddInputLayer(0, "x");
    in->GetOutputSlot(0).SetTensorInfo(TensorInfo({2}, DataType::Float32));
    auto* add = b.net->AddAdditionLayer("lonely_add");
    in->GetOutputSlot(0).Connect(add->GetInputSlot(0));
    add->GetOutputSlot(0).Connect(b.net->AddOutputLayer(0)->GetInputSlot(0));
    try {
        Optimize(*b.net, {"CpuRef"}, b.runtime->GetDeviceSpec());
        FAIL();
    } catch (const GraphValidationException& e) {
        EXPECT_NE(std::string(e.what()).find("Add 'lonely_add': input slot 1 is not connected"), std::string::npos) << e.what();
    }

    Built c;
    auto* x = c.net->AddInputLayer(0, "x");
    x->GetOutputSlot(0).SetTensorInfo(TensorInfo({2}, DataType::Float32));
    auto* a1 = c.net->AddAdditionLayer("a1");
    auto* a2 = c.net->AddElementwiseUnaryLayer({UnaryOperation::Relu}, "a2");
    x->GetOutputSlot(0).Connect(a1->GetInputSlot(0));
    a1->GetOutputSlot(0).Connect(a2->GetInputSlot(0));
    a2->GetOutputSlot(0).Connect(a1->GetInputSlot(1));
    a2->GetOutputSlot(0).Connect(c.net->AddOutputLayer(0)->GetInputSlot(0));
    EXPECT_THROW(Optimize(*c.net, {"CpuRef"}, c.runtime->GetDeviceSpec()), GraphValidationException);
}

TEST(Optimizer, MismatchedUserInfoIsReported) {
    Built b;
    auto* in = b.net->AddInputLayer(0, "x");
    in->GetOutputSlot(0).SetTensorInfo(TensorInfo({2, 3}, DataType::Float32));
    auto* relu = b.net->AddElementwiseUnaryLayer({UnaryOperation::Relu}, "relu");
    relu->GetOutputSlot(0).SetTensorInfo(TensorInfo({3, 2}, DataType::Float32));
    in->GetOutputSlot(0).Connect(relu->GetInputSlot(0));
    relu->GetOutputSlot(0).Connect(b.net->AddOutputLayer(0)->GetInputSlot(0));
    try {
        Optimize(*b.net, {"CpuRef"}, b.runtime->GetDeviceSpec());
        FAIL();
    } catch (const LayerValidationException& e) {
        EXPECT_NE(std::string(e.what()).find("'relu'"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("3x2"), std::string::npos) << e.what();
    }
}

TEST(Optimizer, UnsupportedLayersAreListedTogetherWithReasons) {
    // PreCompiled layers only come from a backend's substitutions; CpuRef has no kernel for them.
    Built b;
    auto* in = b.net->AddInputLayer(0, "x");
    in->GetOutputSlot(0).SetTensorInfo(TensorInfo({2}, DataType::Float32));
    auto* p1 = b.net->AddLayer(LayerType::PreCompiled, PreCompiledDescriptor{}, "blob1", 1, 1);
    auto* p2 = b.net->AddLayer(LayerType::PreCompiled, PreCompiledDescriptor{}, "blob2", 1, 1);
    p1->GetOutputSlot(0).SetTensorInfo(TensorInfo({2}, DataType::Float32));
    p2->GetOutputSlot(0).SetTensorInfo(TensorInfo({2}, DataType::Float32));
    in->GetOutputSlot(0).Connect(p1->GetInputSlot(0));
    p1->GetOutputSlot(0).Connect(p2->GetInputSlot(0));
    p2->GetOutputSlot(0).Connect(b.net->AddOutputLayer(0)->GetInputSlot(0));
    try {
        Optimize(*b.net, {"CpuRef"}, b.runtime->GetDeviceSpec());
        FAIL();
    } catch (const BackendUnavailableException& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("2 layers are not supported"), std::string::npos) << msg;
        EXPECT_NE(msg.find("'blob1'"), std::string::npos) << msg;
        EXPECT_NE(msg.find("'blob2'"), std::string::npos) << msg;
        EXPECT_NE(msg.find("CpuRef: PreCompiled: no CpuRef kernel"), std::string::npos) << msg;
    }
}

TEST(Runtime, WrongInputsAreRejectedWithTheBinding) {
    Built b;
    auto* in = b.net->AddInputLayer(0, "x");
    in->GetOutputSlot(0).SetTensorInfo(TensorInfo({4}, DataType::Float32));
    auto* relu = b.net->AddElementwiseUnaryLayer({UnaryOperation::Relu}, "relu");
    in->GetOutputSlot(0).Connect(relu->GetInputSlot(0));
    relu->GetOutputSlot(0).Connect(b.net->AddOutputLayer(0)->GetInputSlot(0));
    NetworkId id;
    b.runtime->LoadNetwork(id, Optimize(*b.net, {"CpuRef"}, b.runtime->GetDeviceSpec()));
    std::vector<float> x(5), y(4);
    const TensorInfo wrong({5}, DataType::Float32);
    try {
        b.runtime->EnqueueWorkload(id, {{0, ConstTensor(wrong, x.data())}},
                                   {{0, Tensor(b.runtime->GetOutputTensorInfo(id, 0), y.data())}});
        FAIL();
    } catch (const InvalidArgumentException& e) {
        EXPECT_NE(std::string(e.what()).find("input 0 must be Float32 4, got Float32 5"), std::string::npos) << e.what();
    }
    EXPECT_THROW(b.runtime->EnqueueWorkload(id, {}, {{0, Tensor(b.runtime->GetOutputTensorInfo(id, 0), y.data())}}),
                 InvalidArgumentException);
    EXPECT_THROW(b.runtime->GetInputTensorInfo(id, 7), InvalidArgumentException);
    EXPECT_THROW(b.runtime->GetInputTensorInfo(id + 100, 0), InvalidArgumentException);
}

TEST(Runtime, InputWiredStraightToOutputIsCopied) {
    Built b;
    auto* in = b.net->AddInputLayer(0, "x");
    in->GetOutputSlot(0).SetTensorInfo(TensorInfo({3}, DataType::Float32));
    auto* id = b.net->AddLayer(LayerType::Identity, EmptyDescriptor{}, "identity");
    in->GetOutputSlot(0).Connect(id->GetInputSlot(0));
    id->GetOutputSlot(0).Connect(b.net->AddOutputLayer(0)->GetInputSlot(0));
    EXPECT_EQ(RunSingle(*b.runtime, Optimize(*b.net, {"CpuRef"}, b.runtime->GetDeviceSpec()), {1, 2, 3}),
              (std::vector<float>{1, 2, 3}));
}

TEST(MemoryPlanner, ReusesMemoryOfDeadTensors) {
    using trellis::core::MemoryBlock;
    // A chain: each tensor is read only by the next step, so two buffers suffice.
    std::vector<MemoryBlock> blocks;
    for (unsigned int s = 0; s < 6; ++s) blocks.push_back({1000, s, s + 1, 0});
    const std::size_t arena = trellis::core::PlanMemory(blocks);
    EXPECT_EQ(arena, 2 * 1024u);
    for (std::size_t i = 0; i < blocks.size(); ++i) {
        for (std::size_t j = i + 1; j < blocks.size(); ++j) {
            const bool overlapInTime = blocks[i].m_FirstStep <= blocks[j].m_LastStep && blocks[j].m_FirstStep <= blocks[i].m_LastStep;
            const bool overlapInSpace = blocks[i].m_Offset < blocks[j].m_Offset + 1000 && blocks[j].m_Offset < blocks[i].m_Offset + 1000;
            EXPECT_FALSE(overlapInTime && overlapInSpace) << i << " " << j;
        }
    }
}

TEST(MemoryPlanner, LoadedNetworkPeakIsBelowUnplanned) {
    Built b;
    auto* in = b.net->AddInputLayer(0, "x");
    in->GetOutputSlot(0).SetTensorInfo(TensorInfo({1000}, DataType::Float32));
    IConnectableLayer* prev = in;
    for (int i = 0; i < 8; ++i) {
        auto* l = b.net->AddElementwiseUnaryLayer({i % 2 ? UnaryOperation::Neg : UnaryOperation::Abs}, nullptr);
        prev->GetOutputSlot(0).Connect(l->GetInputSlot(0));
        prev = l;
    }
    prev->GetOutputSlot(0).Connect(b.net->AddOutputLayer(0)->GetInputSlot(0));
    NetworkId id;
    b.runtime->LoadNetwork(id, Optimize(*b.net, {"CpuRef"}, b.runtime->GetDeviceSpec()));
    // 7 intermediate tensors of 4000 bytes; the last layer writes into the user's buffer.
    EXPECT_EQ(b.runtime->GetUnplannedWorkingMemoryBytes(id), 7u * 4032u);
    EXPECT_EQ(b.runtime->GetPeakWorkingMemoryBytes(id), 2u * 4032u);
}

// Graph::UniqueName reads an index of names that AddLayer, EraseLayer and RenameLayer keep: a name
// freed by an erase or a rename can be taken again, a taken one gets the next free suffix.
TEST(Graph, UniqueNameFollowsAddsErasesAndRenames) {
    core::Graph g;
    core::Layer* a = g.AddLayer(LayerType::Identity, EmptyDescriptor{}, "a", 1, 1);
    EXPECT_EQ(g.UniqueName("a"), "a_1");
    EXPECT_EQ(g.UniqueName("b"), "b");
    core::Layer* a1 = g.AddLayer(LayerType::Identity, EmptyDescriptor{}, g.UniqueName("a"), 1, 1);
    EXPECT_EQ(a1->Name(), "a_1");
    EXPECT_EQ(g.UniqueName("a"), "a_2");
    g.RenameLayer(a, "c");
    EXPECT_EQ(g.UniqueName("a"), "a");
    EXPECT_EQ(g.UniqueName("c"), "c_1");
    g.AddLayer(LayerType::Identity, EmptyDescriptor{}, "c", 1, 1);  // two layers named c
    g.EraseLayer(a);
    EXPECT_EQ(g.UniqueName("c"), "c_1") << "one layer named c remains";
    g.EraseLayer(a1);
    EXPECT_EQ(g.UniqueName("a_1"), "a_1");
    std::unique_ptr<core::Graph> copy = g.Clone();
    EXPECT_EQ(copy->UniqueName("c"), "c_1");
    EXPECT_EQ(copy->UniqueName("a"), "a");
}
