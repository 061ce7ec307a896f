// Dynamic networks: inputs whose dims are decided by each run (kUnknownDim) and parameter inputs
// fed at run time. One loaded network runs with several shapes (each a specialization with its
// own memory plan, kept in a bounded LRU cache), from several threads at once; bad shapes are
// refused naming the binding and both shapes.
#include "TestHelpers.hpp"

#include <atomic>
#include <functional>
#include <cmath>
#include <thread>

using namespace trellis;
using namespace trellis::test;

namespace {

/// x [?, 3] -> Relu -> Softmax(axis -1) -> y: the Relu output lives in the working memory, so
/// the memory plan grows with the batch.
struct SoftmaxNet {
    IRuntimePtr runtime{nullptr, &IRuntime::Destroy};
    NetworkId id = 0;

    explicit SoftmaxNet(std::size_t maxSpecializations = 8) {
        IRuntime::CreationOptions options;
        options.m_MaxSpecializations = maxSpecializations;
        runtime = IRuntime::Create(options);
        INetworkPtr net = INetwork::Create();
        IConnectableLayer* in = net->AddInputLayer(0, "x");
        in->GetOutputSlot(0).SetTensorInfo(TensorInfo(TensorShape({kUnknownDim, 3}), DataType::Float32));
        ElementwiseUnaryDescriptor relu;
        relu.m_Operation = UnaryOperation::Relu;
        IConnectableLayer* r = net->AddElementwiseUnaryLayer(relu, "relu");
        IConnectableLayer* s = net->AddSoftmaxLayer(SoftmaxDescriptor{}, "softmax");
        IConnectableLayer* out = net->AddOutputLayer(0, "y");
        in->GetOutputSlot(0).Connect(r->GetInputSlot(0));
        r->GetOutputSlot(0).Connect(s->GetInputSlot(0));
        s->GetOutputSlot(0).Connect(out->GetInputSlot(0));
        runtime->LoadNetwork(id, Optimize(*net, {"CpuRef"}, runtime->GetDeviceSpec()));
    }

    static std::vector<float> Input(unsigned int rows, float seed) {
        std::vector<float> x(rows * 3);
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(seed + 0.7f * static_cast<float>(i)) * 2.0f;
        return x;
    }
    // Softmax(Relu(x)) by rows, in double.
    static std::vector<float> Expected(const std::vector<float>& x) {
        std::vector<float> y(x.size());
        for (std::size_t r = 0; r < x.size() / 3; ++r) {
            double e[3], sum = 0;
            for (int c = 0; c < 3; ++c) sum += e[c] = std::exp(std::max(0.0, static_cast<double>(x[r * 3 + c])));
            for (int c = 0; c < 3; ++c) y[r * 3 + c] = static_cast<float>(e[c] / sum);
        }
        return y;
    }
    std::vector<float> Run(const std::vector<float>& x) {
        const auto rows = static_cast<unsigned int>(x.size() / 3);
        InputTensors in{{0, ConstTensor(TensorInfo({rows, 3}, DataType::Float32), x.data())}};
        const TensorInfo outInfo = runtime->GetOutputTensorInfo(id, 0, in);
        EXPECT_EQ(outInfo.GetShape(), TensorShape({rows, 3}));
        std::vector<float> y(outInfo.GetNumElements());
        runtime->EnqueueWorkload(id, in, {{0, Tensor(outInfo, y.data())}});
        return y;
    }
};

void ExpectNear(const std::vector<float>& got, const std::vector<float>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6) << "element " << i;
}

std::string ErrorOf(const std::function<void()>& f) {
    try {
        f();
    } catch (const Exception& e) {
        return e.what();
    }
    return "(no exception)";
}

}  // namespace

TEST(DynamicShapes, OneLoadedNetworkRunsWithTwoShapesAndReplans) {
    SoftmaxNet n;
    EXPECT_TRUE(n.runtime->IsDynamic(n.id));
    EXPECT_EQ(n.runtime->GetInputTensorInfo(n.id, 0).GetShape(), TensorShape({kUnknownDim, 3}));
    EXPECT_EQ(n.runtime->GetPeakWorkingMemoryBytes(n.id), 0u);  // nothing planned before a run

    const auto small = SoftmaxNet::Input(2, 0.1f);
    ExpectNear(n.Run(small), SoftmaxNet::Expected(small));
    const std::size_t smallPeak = n.runtime->GetPeakWorkingMemoryBytes(n.id);
    EXPECT_GE(smallPeak, 2u * 3u * sizeof(float));

    const auto large = SoftmaxNet::Input(100, 0.5f);
    ExpectNear(n.Run(large), SoftmaxNet::Expected(large));
    const std::size_t largePeak = n.runtime->GetPeakWorkingMemoryBytes(n.id);
    EXPECT_GE(largePeak, 100u * 3u * sizeof(float));  // the larger plan
    EXPECT_GT(largePeak, smallPeak);

    // Back to the small shape: its cached specialization is reused, results still right.
    ExpectNear(n.Run(small), SoftmaxNet::Expected(small));
    const auto stats = n.runtime->GetSpecializationStats(n.id);
    EXPECT_EQ(stats.m_Built, 2u);
    EXPECT_EQ(stats.m_Cached, 2u);
    EXPECT_EQ(stats.m_Evicted, 0u);
}

TEST(DynamicShapes, CacheEvictsTheLeastRecentlyUsed) {
    SoftmaxNet n(2);
    const auto a = SoftmaxNet::Input(1, 0.0f), b = SoftmaxNet::Input(2, 1.0f), c = SoftmaxNet::Input(3, 2.0f);
    n.Run(a);
    n.Run(b);
    n.Run(a);  // a is now the most recently used
    n.Run(c);  // evicts b
    auto stats = n.runtime->GetSpecializationStats(n.id);
    EXPECT_EQ(stats.m_Built, 3u);
    EXPECT_EQ(stats.m_Cached, 2u);
    EXPECT_EQ(stats.m_Evicted, 1u);
    ExpectNear(n.Run(a), SoftmaxNet::Expected(a));  // still cached
    EXPECT_EQ(n.runtime->GetSpecializationStats(n.id).m_Built, 3u);
    ExpectNear(n.Run(b), SoftmaxNet::Expected(b));  // rebuilt
    stats = n.runtime->GetSpecializationStats(n.id);
    EXPECT_EQ(stats.m_Built, 4u);
    EXPECT_EQ(stats.m_Evicted, 2u);
    EXPECT_EQ(stats.m_Cached, 2u);
}

TEST(DynamicShapes, ConcurrentRunsWithDifferentShapes) {
    SoftmaxNet n(3);  // fewer entries than shapes in flight: eviction races with running calls
    constexpr unsigned int kThreads = 6, kIterations = 25;
    std::vector<std::string> errors(kThreads);
    std::vector<std::thread> pool;
    for (unsigned int t = 0; t < kThreads; ++t) {
        pool.emplace_back([&, t] {
            for (unsigned int i = 0; i < kIterations && errors[t].empty(); ++i) {
                const unsigned int rows = 1 + (t + i) % 5;
                const auto x = SoftmaxNet::Input(rows, static_cast<float>(t * 100 + i));
                try {
                    InputTensors in{{0, ConstTensor(TensorInfo({rows, 3}, DataType::Float32), x.data())}};
                    std::vector<float> y(rows * 3);
                    n.runtime->EnqueueWorkload(n.id, in, {{0, Tensor(TensorInfo({rows, 3}, DataType::Float32), y.data())}});
                    const auto want = SoftmaxNet::Expected(x);
                    for (std::size_t k = 0; k < y.size(); ++k) {
                        if (std::fabs(y[k] - want[k]) > 1e-6f) {
                            errors[t] = "thread " + std::to_string(t) + " rows " + std::to_string(rows) + ": element " +
                                        std::to_string(k) + " is " + std::to_string(y[k]) + ", want " +
                                        std::to_string(want[k]);
                            break;
                        }
                    }
                } catch (const std::exception& e) {
                    errors[t] = e.what();
                }
            }
        });
    }
    for (auto& th : pool) th.join();
    for (const auto& e : errors) EXPECT_EQ(e, "");
    const auto stats = n.runtime->GetSpecializationStats(n.id);
    EXPECT_LE(stats.m_Cached, 3u);
    EXPECT_GE(stats.m_Built, 5u);
}

TEST(DynamicShapes, BadShapesAreRefusedNamingTheBindingAndBothShapes) {
    SoftmaxNet n;
    std::vector<float> x(8), y(8);
    // Wrong fixed dim.
    std::string msg = ErrorOf([&] {
        n.runtime->EnqueueWorkload(n.id, {{0, ConstTensor(TensorInfo({2, 4}, DataType::Float32), x.data())}},
                                   {{0, Tensor(TensorInfo({2, 4}, DataType::Float32), y.data())}});
    });
    EXPECT_NE(msg.find("input 0 ('x') must be Float32 ?x3"), std::string::npos) << msg;
    EXPECT_NE(msg.find("got Float32 2x4"), std::string::npos) << msg;
    // Wrong rank and wrong type.
    msg = ErrorOf([&] {
        n.runtime->EnqueueWorkload(n.id, {{0, ConstTensor(TensorInfo({6}, DataType::Float32), x.data())}}, {});
    });
    EXPECT_NE(msg.find("got Float32 6"), std::string::npos) << msg;
    msg = ErrorOf([&] {
        n.runtime->EnqueueWorkload(n.id, {{0, ConstTensor(TensorInfo({2, 3}, DataType::Signed32), x.data())}}, {});
    });
    EXPECT_NE(msg.find("got Signed32 2x3"), std::string::npos) << msg;
    // An output buffer of the wrong size for this run's shapes.
    msg = ErrorOf([&] {
        n.runtime->EnqueueWorkload(n.id, {{0, ConstTensor(TensorInfo({2, 3}, DataType::Float32), x.data())}},
                                   {{0, Tensor(TensorInfo({1, 3}, DataType::Float32), y.data())}});
    });
    EXPECT_NE(msg.find("output 0 must be Float32 2x3"), std::string::npos) << msg;
    EXPECT_NE(msg.find("x 2x3"), std::string::npos) << msg;  // the run's input shapes
    EXPECT_NE(msg.find("got Float32 1x3"), std::string::npos) << msg;
    // A missing input, and the two-argument output query.
    msg = ErrorOf([&] { n.runtime->EnqueueWorkload(n.id, {}, {}); });
    EXPECT_NE(msg.find("input 0 ('x', Float32 ?x3) was not given"), std::string::npos) << msg;
    msg = ErrorOf([&] { n.runtime->GetOutputTensorInfo(n.id, 0); });
    EXPECT_NE(msg.find("is dynamic"), std::string::npos) << msg;
    EXPECT_NE(msg.find("GetOutputTensorInfo(networkId, 0, inputTensors)"), std::string::npos) << msg;
}

TEST(DynamicShapes, ParameterInputFedAtRunTime) {
    // y = Reshape(x, shape) with `shape` a graph input: specialized on its values.
    IRuntimePtr runtime = IRuntime::Create(IRuntime::CreationOptions());
    INetworkPtr net = INetwork::Create();
    IConnectableLayer* x = net->AddInputLayer(0, "x");
    x->GetOutputSlot(0).SetTensorInfo(TensorInfo({2, 6}, DataType::Float32));
    IConnectableLayer* shape = net->AddInputLayer(1, "shape");
    shape->GetOutputSlot(0).SetTensorInfo(TensorInfo({2}, DataType::Signed64));
    IConnectableLayer* r = net->AddLayer(LayerType::Reshape, ReshapeDescriptor{}, "reshape", 2);
    x->GetOutputSlot(0).Connect(r->GetInputSlot(0));
    shape->GetOutputSlot(0).Connect(r->GetInputSlot(1));
    r->GetOutputSlot(0).Connect(net->AddOutputLayer(0, "y")->GetInputSlot(0));
    NetworkId id = 0;
    runtime->LoadNetwork(id, Optimize(*net, {"CpuRef"}, runtime->GetDeviceSpec()));
    ASSERT_TRUE(runtime->IsDynamic(id));
    EXPECT_EQ(runtime->GetInputTensorInfo(id, 1).GetShape(), TensorShape({2}));  // fully known; values vary

    std::vector<float> data(12);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i) * 0.5f - 2.0f;
    for (const std::vector<int64_t>& target : {std::vector<int64_t>{3, 4}, {4, -1}, {12, 1}, {3, 4}}) {
        InputTensors in{{0, ConstTensor(TensorInfo({2, 6}, DataType::Float32), data.data())},
                        {1, ConstTensor(TensorInfo({2}, DataType::Signed64), target.data())}};
        const TensorInfo outInfo = runtime->GetOutputTensorInfo(id, 0, in);
        const unsigned int rows = static_cast<unsigned int>(target[0]);
        EXPECT_EQ(outInfo.GetShape(), TensorShape({rows, 12 / rows}));
        std::vector<float> y(12, -99.0f);
        runtime->EnqueueWorkload(id, in, {{0, Tensor(outInfo, y.data())}});
        EXPECT_EQ(y, data);  // a reshape keeps the row-major values
    }
    EXPECT_EQ(runtime->GetSpecializationStats(id).m_Built, 3u);  // {3, 4} was reused
}

TEST(DynamicShapes, StaticNetworksStayStatic) {
    IRuntimePtr runtime = IRuntime::Create(IRuntime::CreationOptions());
    INetworkPtr net = INetwork::Create();
    IConnectableLayer* x = net->AddInputLayer(0, "x");
    x->GetOutputSlot(0).SetTensorInfo(TensorInfo({2, 3}, DataType::Float32));
    x->GetOutputSlot(0).Connect(net->AddOutputLayer(0, "y")->GetInputSlot(0));
    NetworkId id = 0;
    runtime->LoadNetwork(id, Optimize(*net, {"CpuRef"}, runtime->GetDeviceSpec()));
    EXPECT_FALSE(runtime->IsDynamic(id));
    EXPECT_EQ(runtime->GetSpecializationStats(id).m_Built, 0u);
    EXPECT_EQ(runtime->GetOutputTensorInfo(id, 0).GetShape(), TensorShape({2, 3}));
}

TEST(DynamicShapes, UnknownDimsPrintAsQuestionMarks) {
    EXPECT_EQ(TensorShape({kUnknownDim, 3, 224}).ToString(), "?x3x224");
    EXPECT_FALSE(TensorShape({kUnknownDim, 3}).AreAllDimensionsSpecified());
    EXPECT_EQ(TensorShape({kUnknownDim, 3}).GetNumElements(), 0u);
    EXPECT_TRUE(TensorShape({0, 3}).AreAllDimensionsSpecified());
}
