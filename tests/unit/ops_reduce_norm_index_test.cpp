// Validation and run-time errors of the reductions, normalizations and indexing ops:
// Reduce's new operations, LayerNormalization/BatchNormalization/Pooling output
// counts, Einsum, TopK, GatherND, ScatterND, ReverseSequence, MaxUnpool, InstanceNormalization,
// Lrn, MeanVarianceNormalization. A bad layer makes Optimize() throw naming the layer and the
// rule; a bad index or length that only arrives with the inputs makes EnqueueWorkload() throw
// naming the layer; nothing crashes. Values are checked by the numpy cases (tests/ops).
#include "TestHelpers.hpp"

#include <cstdint>
#include <string>
#include <vector>

using namespace trellis;
using trellis::test::ExpectRejected;
using trellis::test::ExpectRunFails;
using trellis::test::LayerTestNetwork;

TEST(OpsReduceNormIndex, ReduceNewOperationsOnIntegersAreRefusedWhereTheyNeedFloats) {
    LayerTestNetwork n;
    ReduceDescriptor d;
    d.m_Operation = ReduceOperation::LogSumExp;
    n.Layer(LayerType::Reduce, d, "lse_int", {&n.Input({2, 3}, DataType::Signed64)});
    ExpectRejected(n, "lse_int", "ReduceLogSumExp on Signed64 not supported by CpuRef");
}

TEST(OpsReduceNormIndex, OutputCountsAreChecked) {
    {
        LayerTestNetwork n;
        EXPECT_THROW(n.m_Net->AddLayer(LayerType::LayerNormalization, LayerNormalizationDescriptor{}, "ln4", 2, 4),
                     InvalidArgumentException);
        EXPECT_THROW(n.m_Net->AddLayer(LayerType::Pooling, PoolingDescriptor{}, "pool0", 1, 0), InvalidArgumentException);
        EXPECT_EQ(n.m_Net->AddLayer(LayerType::Pooling, PoolingDescriptor{}, "pool_default", 1)->GetNumOutputSlots(), 1u);
    }
    {
        LayerTestNetwork n;  // average pooling has no Indices output
        PoolingDescriptor d;
        d.m_Algorithm = PoolingAlgorithm::Average;
        d.m_KernelShape = {2, 2};
        n.Layer(LayerType::Pooling, d, "avg_indices", {&n.Input({1, 1, 4, 4})}, 2);
        ExpectRejected(n, "avg_indices", "only non-global max pooling has output 1 (Indices)");
    }
    {
        LayerTestNetwork n;  // inference batch normalization has only Y
        n.Layer(LayerType::BatchNormalization, BatchNormalizationDescriptor{}, "bn_stats",
                {&n.Input({2, 3, 4}), &n.ConstFloats({1, 1, 1}, {3}), &n.ConstFloats({0, 0, 0}, {3}),
                 &n.ConstFloats({0, 0, 0}, {3}), &n.ConstFloats({1, 1, 1}, {3})},
                3);
        ExpectRejected(n, "bn_stats", "inference mode has 1 (Y)");
    }
}

TEST(OpsReduceNormIndex, LayerNormalizationStatisticsHaveTheReducedShape) {
    LayerTestNetwork n;
    LayerNormalizationDescriptor d;
    d.m_Axis = 1;
    n.Layer(LayerType::LayerNormalization, d, "ln", {&n.Input({2, 3, 5}), &n.ConstFloats(std::vector<float>(15, 1.0f), {3, 5})}, 3);
    NetworkId id = 0;
    ASSERT_EQ(n.m_Runtime->LoadNetwork(id, n.Optimize()), Status::Success);
    EXPECT_EQ(n.m_Runtime->GetOutputTensorInfo(id, 1).GetShape(), TensorShape({2, 1, 1}));
    EXPECT_EQ(n.m_Runtime->GetOutputTensorInfo(id, 2).GetShape(), TensorShape({2, 1, 1}));
}

TEST(OpsReduceNormIndex, EinsumEquationErrors) {
    struct Bad {
        const char* equation;
        std::vector<TensorShape> shapes;
        const char* rule;
    };
    const std::vector<Bad> bad = {
        {"ij,jk->ik", {{2, 3}, {4, 5}}, "label 'j' is 3 in one place and 4 in input 1"},
        {"ij,jk->ik", {{2, 3}}, "has 2 input terms, the layer 1 inputs"},
        {"ijk->i", {{2, 3}}, "has rank 2, its term names 3 dims"},
        {"ij->iz", {{2, 3}}, "output label 'z' names no input dim"},
        {"ij->ii", {{2, 3}}, "output label 'i' appears twice"},
        {"i$->i", {{2, 3}}, "character '$' is not a letter"},
        {"...i,...i->...i", {{2, 3}, {4, 3}}, "an ellipsis dim is 2 in one place and 4"},
    };
    for (const Bad& b : bad) {
        LayerTestNetwork n;
        std::vector<IOutputSlot*> inputs;
        for (const TensorShape& s : b.shapes) inputs.push_back(&n.Input(s));
        EinsumDescriptor d;
        d.m_Equation = b.equation;
        n.Layer(LayerType::Einsum, d, "einsum", inputs);
        SCOPED_TRACE(b.equation);
        ExpectRejected(n, "einsum", b.rule);
    }
}

TEST(OpsReduceNormIndex, TopKRejectsKOutOfRangeAndDefersRuntimeK) {
    {
        LayerTestNetwork n;
        TopKDescriptor d;
        d.m_Axis = 1;
        n.Layer(LayerType::TopK, d, "topk_big", {&n.Input({2, 4}), &n.ConstInts({5}, {1})});
        ExpectRejected(n, "topk_big", "K=5 must lie in [0, 4]");
    }
    {
        LayerTestNetwork n;
        // K fed by a graph input: the network is optimized for each run's K.
        n.Layer(LayerType::TopK, TopKDescriptor{}, "topk_runtime_k", {&n.Input({2, 4}), &n.Input({1}, DataType::Signed64)});
        trellis::test::ExpectOptimizeDefers(n, "topk_runtime_k", "input 1");
    }
}

TEST(OpsReduceNormIndex, GatherNDShapeRulesAndRuntimeIndices) {
    {
        LayerTestNetwork n;
        n.Layer(LayerType::GatherND, GatherNDDescriptor{}, "gnd_k", {&n.Input({2, 3}), &n.Input({4, 3}, DataType::Signed64)});
        ExpectRejected(n, "gnd_k", "it must lie in [1, 2]");
    }
    {
        LayerTestNetwork n;
        GatherNDDescriptor d;
        d.m_BatchDims = 1;
        n.Layer(LayerType::GatherND, d, "gnd_batch", {&n.Input({2, 3}), &n.Input({3, 1}, DataType::Signed64)});
        ExpectRejected(n, "gnd_batch", "batch dim 0 differs");
    }
    {
        LayerTestNetwork n;
        n.Layer(LayerType::GatherND, GatherNDDescriptor{}, "gnd_run", {&n.Input({2, 3}), &n.Input({1, 2}, DataType::Signed64)});
        const std::vector<float> data(6, 1.0f);
        const std::vector<int64_t> idx = {1, 3};
        ExpectRunFails(n, {{TensorInfo({2, 3}, DataType::Float32), data.data()}, {TensorInfo({1, 2}, DataType::Signed64), idx.data()}},
                       "gnd_run", "index 3 (tuple 0, entry 1) is out of range [-3, 3)");
    }
}

TEST(OpsReduceNormIndex, ScatterNDUpdatesShapeAndRuntimeIndices) {
    {
        LayerTestNetwork n;
        n.Layer(LayerType::ScatterND, ScatterNDDescriptor{}, "snd_shape",
                {&n.Input({4, 5}), &n.Input({2, 1}, DataType::Signed64), &n.Input({2, 4})});
        ExpectRejected(n, "snd_shape", "updates 2x4 must have the shape 2x5");
    }
    {
        LayerTestNetwork n;
        ScatterNDDescriptor d;
        d.m_Reduction = ScatterReduction::Max;
        // max and min (opset 18) are valid; CpuRef reduces Float32, Signed32 and Signed64 only.
        n.Layer(LayerType::ScatterND, d, "snd_max", {&n.Input({4}, DataType::UInt8), &n.Input({1, 1}, DataType::Signed64),
                                                      &n.Input({1}, DataType::UInt8)});
        ExpectRejected(n, "snd_max", "reduction max on UInt8 not supported by CpuRef");
    }
    {
        LayerTestNetwork n;
        n.Layer(LayerType::ScatterND, ScatterNDDescriptor{}, "snd_run",
                {&n.Input({4}), &n.Input({1, 1}, DataType::Signed64), &n.Input({1})});
        const std::vector<float> data(4, 0.0f), upd = {1.0f};
        const std::vector<int64_t> idx = {-5};
        ExpectRunFails(n,
                       {{TensorInfo({4}, DataType::Float32), data.data()},
                        {TensorInfo({1, 1}, DataType::Signed64), idx.data()},
                        {TensorInfo({1}, DataType::Float32), upd.data()}},
                       "snd_run", "index -5 (tuple 0, entry 0) is out of range [-4, 4)");
    }
}

TEST(OpsReduceNormIndex, ReverseSequenceRules) {
    {
        LayerTestNetwork n;
        ReverseSequenceDescriptor d;
        d.m_BatchAxis = 0;
        d.m_TimeAxis = 0;
        n.Layer(LayerType::ReverseSequence, d, "rs_axes", {&n.Input({3, 4}), &n.Input({3}, DataType::Signed64)});
        ExpectRejected(n, "rs_axes", "must be 0 and 1 (in either order)");
    }
    {
        LayerTestNetwork n;
        n.Layer(LayerType::ReverseSequence, ReverseSequenceDescriptor{}, "rs_const",
                {&n.Input({3, 2}), &n.ConstInts({1, 4}, {2})});
        ExpectRejected(n, "rs_const", "sequence length 4 is outside [0, 3]");
    }
    {
        LayerTestNetwork n;
        n.Layer(LayerType::ReverseSequence, ReverseSequenceDescriptor{}, "rs_run",
                {&n.Input({3, 2}), &n.Input({2}, DataType::Signed64)});
        const std::vector<float> x(6, 0.0f);
        const std::vector<int64_t> lens = {2, -1};
        ExpectRunFails(n, {{TensorInfo({3, 2}, DataType::Float32), x.data()}, {TensorInfo({2}, DataType::Signed64), lens.data()}},
                       "rs_run", "sequence length -1 of batch entry 1 is outside [0, 3]");
    }
}

TEST(OpsReduceNormIndex, MaxUnpoolRules) {
    MaxUnpoolDescriptor d;
    d.m_KernelShape = {2, 2};
    d.m_Strides = {2, 2};
    {
        LayerTestNetwork n;
        n.Layer(LayerType::MaxUnpool, d, "unpool_shape",
                {&n.Input({1, 1, 2, 2}), &n.Input({1, 1, 2, 2}, DataType::Signed64), &n.ConstInts({1, 2, 4, 4}, {4})});
        ExpectRejected(n, "unpool_shape", "must have rank 4 and X's N and C");
    }
    {
        LayerTestNetwork n;
        n.Layer(LayerType::MaxUnpool, d, "unpool_run", {&n.Input({1, 1, 2, 2}), &n.Input({1, 1, 2, 2}, DataType::Signed64)});
        const std::vector<float> x(4, 1.0f);
        const std::vector<int64_t> idx = {0, 5, 16, 3};
        ExpectRunFails(n, {{TensorInfo({1, 1, 2, 2}, DataType::Float32), x.data()},
                           {TensorInfo({1, 1, 2, 2}, DataType::Signed64), idx.data()}},
                       "unpool_run", "index 16 (at position 2) is outside the unpooled tensor's [0, 16) elements");
    }
    {
        // A larger output_shape adds zeros after the unpooled [1, 1, 4, 4]; indices still address
        // the unpooled tensor, so 16 is out of range although the output has 25 elements.
        LayerTestNetwork n;
        n.Layer(LayerType::MaxUnpool, d, "unpool_larger",
                {&n.Input({1, 1, 2, 2}), &n.Input({1, 1, 2, 2}, DataType::Signed64), &n.ConstInts({1, 1, 5, 5}, {4})});
        const std::vector<float> x(4, 1.0f);
        const std::vector<int64_t> idx = {0, 5, 16, 3};
        ExpectRunFails(n, {{TensorInfo({1, 1, 2, 2}, DataType::Float32), x.data()},
                           {TensorInfo({1, 1, 2, 2}, DataType::Signed64), idx.data()}},
                       "unpool_larger", "index 16 (at position 2) is outside the unpooled tensor's [0, 16) elements");
    }
    {
        LayerTestNetwork n;
        n.Layer(LayerType::MaxUnpool, d, "unpool_smaller",
                {&n.Input({1, 1, 2, 2}), &n.Input({1, 1, 2, 2}, DataType::Signed64), &n.ConstInts({1, 1, 3, 4}, {4})});
        ExpectRejected(n, "unpool_smaller",
                              "output_shape [1, 1, 3, 4] is smaller than the unpooled shape [1, 1, 4, 4] in dim 2");
    }
}

TEST(OpsReduceNormIndex, NormalizationRules) {
    {
        LayerTestNetwork n;
        n.Layer(LayerType::InstanceNormalization, InstanceNormalizationDescriptor{}, "in_scale",
                {&n.Input({1, 3, 4}), &n.ConstFloats({1, 1}, {2}), &n.ConstFloats({0, 0, 0}, {3})});
        ExpectRejected(n, "in_scale", "scale 2 must be 1-D with one value per channel");
    }
    {
        LayerTestNetwork n;
        LrnDescriptor d;
        d.m_Size = 0;
        n.Layer(LayerType::Lrn, d, "lrn_size", {&n.Input({1, 3, 4})});
        ExpectRejected(n, "lrn_size", "size=0 must be at least 1");
    }
    {
        LayerTestNetwork n;
        MeanVarianceNormalizationDescriptor d;
        d.m_Axes = {1, -2};
        n.Layer(LayerType::MeanVarianceNormalization, d, "mvn_axes", {&n.Input({2, 3, 4})});
        ExpectRejected(n, "mvn_axes", "name a dim more than once");
    }
    {
        LayerTestNetwork n;  // the default axes [0, 2, 3] need rank 4
        n.Layer(LayerType::MeanVarianceNormalization, MeanVarianceNormalizationDescriptor{}, "mvn_rank",
                {&n.Input({2, 3, 4})});
        ExpectRejected(n, "mvn_rank", "axes entry");
    }
}
