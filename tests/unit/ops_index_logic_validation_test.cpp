// Validation and run-time errors of the index, logic and activation ops (ArgMinMax, Trilu,
// GatherElements, ScatterElements, Tile, CumSum, DepthToSpace/SpaceToDepth, OneHot, EyeLike,
// Hardmax, the Boolean and classifying ElementwiseUnary/Binary operations, Mod): a bad layer makes
// Optimize() throw naming the layer and the rule; a bad index or axis that only arrives with the
// inputs makes EnqueueWorkload() throw naming the layer, and nothing crashes.
#include "TestHelpers.hpp"

#include <trellis/Trellis.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

using namespace trellis;

namespace {

using test::LayerTestNetwork;
using test::ExpectRejected;
using test::ExpectRunFails;

}  // namespace

TEST(IndexLogicOpsValidation, ArgMaxAxisOutOfRange) {
    LayerTestNetwork n;
    ArgMinMaxDescriptor d;
    d.m_Axis = 3;
    n.Layer(LayerType::ArgMinMax, d, "argmax_bad", {&n.Input({2, 3})});
    ExpectRejected(n, "argmax_bad", "axis");
}

TEST(IndexLogicOpsValidation, ArgMinOverEmptyDim) {
    LayerTestNetwork n;
    ArgMinMaxDescriptor d;
    d.m_Function = ArgMinMaxFunction::Min;
    d.m_Axis = 1;
    n.Layer(LayerType::ArgMinMax, d, "argmin_empty", {&n.Input({2, 0})});
    ExpectRejected(n, "argmin_empty", "has no index to return");
}

TEST(IndexLogicOpsValidation, LogicalOpsTakeBoolean) {
    LayerTestNetwork n;
    n.Layer(LayerType::ElementwiseBinary, ElementwiseBinaryDescriptor{BinaryOperation::And}, "and_float",
            {&n.Input({3}), &n.Input({3})});
    ExpectRejected(n, "and_float", "And takes Boolean");
}

TEST(IndexLogicOpsValidation, NotTakesBoolean) {
    LayerTestNetwork n;
    n.Layer(LayerType::ElementwiseUnary, ElementwiseUnaryDescriptor{UnaryOperation::Not}, "not_int",
            {&n.Input({3}, DataType::Signed64)});
    ExpectRejected(n, "not_int", "Not takes Boolean");
}

TEST(IndexLogicOpsValidation, IsNaNNeedsFloat) {
    LayerTestNetwork n;
    n.Layer(LayerType::ElementwiseUnary, ElementwiseUnaryDescriptor{UnaryOperation::IsNaN}, "isnan_int",
            {&n.Input({3}, DataType::Signed32)});
    ExpectRejected(n, "isnan_int", "must be a floating-point type");
}

TEST(IndexLogicOpsValidation, ModOnBooleanIsRefused) {
    LayerTestNetwork n;
    n.Layer(LayerType::ElementwiseBinary, ElementwiseBinaryDescriptor{BinaryOperation::Mod}, "mod_bool",
            {&n.Input({3}, DataType::Boolean), &n.Input({3}, DataType::Boolean)});
    ExpectRejected(n, "mod_bool", "data type Boolean is not supported");
}

TEST(IndexLogicOpsValidation, TriluNeedsRankTwo) {
    LayerTestNetwork n;
    n.Layer(LayerType::Trilu, TriluDescriptor{}, "trilu_1d", {&n.Input({5})});
    ExpectRejected(n, "trilu_1d", "Trilu needs rank 2 or more");
}

TEST(IndexLogicOpsValidation, GatherElementsRankMismatch) {
    LayerTestNetwork n;
    n.Layer(LayerType::GatherElements, GatherDescriptor{0}, "ge_rank", {&n.Input({3, 4}), &n.Input({3}, DataType::Signed64)});
    ExpectRejected(n, "ge_rank", "must have the same rank");
}

TEST(IndexLogicOpsValidation, GatherElementsConstantIndexOutOfRange) {
    LayerTestNetwork n;
    n.Layer(LayerType::GatherElements, GatherDescriptor{1}, "ge_const",
            {&n.Input({2, 3}), &n.ConstInts({0, 3}, TensorShape({2, 1}))});
    ExpectRejected(n, "ge_const", "index 3 is out of range [-3, 3)");
}

TEST(IndexLogicOpsValidation, ScatterElementsUpdatesShape) {
    LayerTestNetwork n;
    n.Layer(LayerType::ScatterElements, ScatterElementsDescriptor{}, "scatter_bad",
            {&n.Input({3, 4}), &n.Input({2, 4}, DataType::Signed64), &n.Input({2, 3})});
    ExpectRejected(n, "scatter_bad", "must have the same shape");
}

TEST(IndexLogicOpsValidation, ScatterReductionOnBooleanRefused) {
    LayerTestNetwork n;
    ScatterElementsDescriptor d;
    d.m_Reduction = ScatterReduction::Mul;
    n.Layer(LayerType::ScatterElements, d, "scatter_bool",
            {&n.Input({3}, DataType::Boolean), &n.Input({2}, DataType::Signed64), &n.Input({2}, DataType::Boolean)});
    ExpectRejected(n, "scatter_bool", "reduction 'mul' on data type Boolean is not supported");
}

TEST(IndexLogicOpsValidation, TileRepeatsCountAndSign) {
    {
        LayerTestNetwork n;
        n.Layer(LayerType::Tile, TileDescriptor{{2}}, "tile_count", {&n.Input({2, 3})});
        ExpectRejected(n, "tile_count", "needs one per dim");
    }
    {
        LayerTestNetwork n;
        n.Layer(LayerType::Tile, TileDescriptor{{2, -1}}, "tile_negative", {&n.Input({2, 3})});
        ExpectRejected(n, "tile_negative", "entry 1 is negative");
    }
}

TEST(IndexLogicOpsValidation, DepthToSpaceChannelsMustDivide) {
    LayerTestNetwork n;
    SpaceDepthDescriptor d;
    d.m_BlockSize = 2;
    n.Layer(LayerType::DepthToSpace, d, "d2s_bad", {&n.Input({1, 6, 2, 2})});
    ExpectRejected(n, "d2s_bad", "do not divide by blocksize^2 = 4");
}

TEST(IndexLogicOpsValidation, SpaceToDepthSpatialMustDivide) {
    LayerTestNetwork n;
    SpaceDepthDescriptor d;
    d.m_BlockSize = 2;
    n.Layer(LayerType::SpaceToDepth, d, "s2d_bad", {&n.Input({1, 1, 3, 4})});
    ExpectRejected(n, "s2d_bad", "must divide by blocksize 2");
}

TEST(IndexLogicOpsValidation, OneHotValuesAndDepth) {
    {
        LayerTestNetwork n;
        OneHotDescriptor d;
        d.m_Depth = 4;
        n.Layer(LayerType::OneHot, d, "onehot_values", {&n.Input({3}, DataType::Signed64), &n.Input({3})});
        ExpectRejected(n, "onehot_values", "must hold 2 elements");
    }
    {
        LayerTestNetwork n;
        n.Layer(LayerType::OneHot, OneHotDescriptor{}, "onehot_depth", {&n.Input({3}, DataType::Signed64), &n.Input({2})});
        ExpectRejected(n, "onehot_depth", "must be at least 1");
    }
}

TEST(IndexLogicOpsValidation, EyeLikeNeeds2d) {
    LayerTestNetwork n;
    n.Layer(LayerType::EyeLike, EyeLikeDescriptor{}, "eye_3d", {&n.Input({2, 2, 2})});
    ExpectRejected(n, "eye_3d", "rank");
}

TEST(IndexLogicOpsValidation, HardmaxHasNoLogForm) {
    LayerTestNetwork n;
    SoftmaxDescriptor d;
    d.m_Log = true;
    n.Layer(LayerType::Hardmax, d, "hardmax_log", {&n.Input({2, 3})});
    ExpectRejected(n, "hardmax_log", "Hardmax has no log form");
}

TEST(IndexLogicOpsRun, GatherElementsIndexOutOfRangeAtRunTime) {
    LayerTestNetwork n;
    n.Layer(LayerType::GatherElements, GatherDescriptor{1}, "ge_run", {&n.Input({2, 3}), &n.Input({2, 2}, DataType::Signed64)});
    const std::vector<float> data(6, 1.0f);
    const std::vector<int64_t> indices = {0, 1, -4, 2};
    ExpectRunFails(n, {{TensorInfo({2, 3}, DataType::Float32), data.data()}, {TensorInfo({2, 2}, DataType::Signed64), indices.data()}},
                   "ge_run", "index -4 (at position 2) is out of range [-3, 3)");
}

TEST(IndexLogicOpsRun, CumSumRuntimeAxisOutOfRange) {
    LayerTestNetwork n;
    n.Layer(LayerType::CumSum, CumSumDescriptor{}, "cumsum_run", {&n.Input({2, 3}), &n.Input({}, DataType::Signed64)});
    const std::vector<float> data(6, 1.0f);
    const int64_t axis = 2;
    ExpectRunFails(n, {{TensorInfo({2, 3}, DataType::Float32), data.data()}, {TensorInfo(TensorShape(), DataType::Signed64), &axis}},
                   "cumsum_run", "axis 2 is out of range [-2, 2)");
}

TEST(IndexLogicOpsRun, IntegerModByZero) {
    LayerTestNetwork n;
    n.Layer(LayerType::ElementwiseBinary, ElementwiseBinaryDescriptor{BinaryOperation::Mod}, "mod_zero",
            {&n.Input({2}, DataType::Signed32), &n.Input({2}, DataType::Signed32)});
    const std::vector<int32_t> a = {5, 7}, b = {2, 0};
    ExpectRunFails(n, {{TensorInfo({2}, DataType::Signed32), a.data()}, {TensorInfo({2}, DataType::Signed32), b.data()}},
                   "mod_zero", "Mod: integer modulo by zero");
}

TEST(IndexLogicOpsRun, TriluWithRuntimeK) {
    // k arrives with the inputs (not constant): the kernel reads it; values are checked exactly.
    LayerTestNetwork n;
    n.Layer(LayerType::Trilu, TriluDescriptor{false, 0}, "tril_k", {&n.Input({3, 3}), &n.Input({}, DataType::Signed64)});
    NetworkId id;
    ASSERT_EQ(n.m_Runtime->LoadNetwork(id, n.Optimize()), Status::Success);
    const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    const int64_t k = -1;
    TensorInfo xi({3, 3}, DataType::Float32), ki(TensorShape(), DataType::Signed64);
    xi.SetConstant(true);
    ki.SetConstant(true);
    std::vector<float> y(9, -1.0f);
    n.m_Runtime->EnqueueWorkload(id, {{0, ConstTensor(xi, x.data())}, {1, ConstTensor(ki, &k)}},
                               {{0, Tensor(n.m_Runtime->GetOutputTensorInfo(id, 0), y.data())}});
    EXPECT_EQ(y, (std::vector<float>{0, 0, 0, 4, 0, 0, 7, 8, 0}));
}
