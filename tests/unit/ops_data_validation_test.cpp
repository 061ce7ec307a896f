// Validation + shape inference of the elementwise and data-movement ops (ElementwiseBinary,
// ElementwiseUnary, PRelu, Where, Concat, Split, Slice, Reshape, Transpose, Gather, Shape,
// ConstantOfShape, Expand, Pad, Identity, Cast, Range, MemCopy): a bad layer makes Optimize() throw
// a message naming the layer and the broken rule; a good one resolves its descriptor (parameter
// inputs, negative axes, -1 dims, clamped slices) into the inferred shape.
#include "TestHelpers.hpp"

#include <trellis/Trellis.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

using namespace trellis;

namespace {

using test::ExpectRejected;
using test::LayerTestNetwork;

ReshapeDescriptor ReshapeTo(std::vector<int64_t> target) {
    ReshapeDescriptor d;
    d.m_TargetShape = std::move(target);
    return d;
}

}  // namespace

// ---- bad layers: one or more per op ------------------------------------------------------------

TEST(OpsDataValidation, AddShapesThatDoNotBroadcast) {
    LayerTestNetwork n;
    n.Layer(LayerType::ElementwiseBinary, ElementwiseBinaryDescriptor{BinaryOperation::Add}, "add_bad",
            {&n.Input({2, 3}), &n.Input({4})});
    ExpectRejected(n, "add_bad", "cannot be broadcast");
}

TEST(OpsDataValidation, BinaryInputsOfDifferentTypes) {
    LayerTestNetwork n;
    n.Layer(LayerType::ElementwiseBinary, ElementwiseBinaryDescriptor{BinaryOperation::Mul}, "mul_mixed",
            {&n.Input({3}), &n.Input({3}, DataType::Signed64)});
    ExpectRejected(n, "mul_mixed", "must have the same type");
}

TEST(OpsDataValidation, ClipWithNaNBound) {
    LayerTestNetwork n;
    n.Layer(LayerType::ElementwiseUnary,
            ElementwiseUnaryDescriptor{UnaryOperation::Clip, 0.0f, std::numeric_limits<float>::quiet_NaN()}, "clip_nan",
            {&n.Input({3})});
    ExpectRejected(n, "clip_nan", "contain NaN");
}

TEST(OpsDataValidation, UnaryTypeCpuRefDoesNotRun) {
    // Exp on Signed32 has no CpuRef kernel: Optimize() says so, naming the layer and the reason.
    LayerTestNetwork n;
    n.Layer(LayerType::ElementwiseUnary, ElementwiseUnaryDescriptor{UnaryOperation::Exp}, "exp_int",
            {&n.Input({3}, DataType::Signed32)});
    ExpectRejected(n, "exp_int", "Signed32 is not supported");
}

TEST(OpsDataValidation, PReluSlopeThatWouldGrowX) {
    LayerTestNetwork n;
    n.Layer(LayerType::PRelu, EmptyDescriptor{}, "prelu_bad", {&n.Input({1, 3}), &n.Input({5, 1, 1})});
    ExpectRejected(n, "prelu_bad", "does not broadcast onto X");
}

TEST(OpsDataValidation, WhereConditionNotBoolean) {
    LayerTestNetwork n;
    n.Layer(LayerType::Where, EmptyDescriptor{}, "where_bad", {&n.Input({3}), &n.Input({3}), &n.Input({3})});
    ExpectRejected(n, "where_bad", "it must be Boolean");
}

TEST(OpsDataValidation, ConcatMismatchedDims) {
    LayerTestNetwork n;
    n.Layer(LayerType::Concat, ConcatDescriptor{0}, "concat_bad", {&n.Input({2, 3}), &n.Input({2, 4})});
    ExpectRejected(n, "concat_bad", "dims other than axis 0 must match");
}

TEST(OpsDataValidation, ConcatAxisOutOfRange) {
    LayerTestNetwork n;
    n.Layer(LayerType::Concat, ConcatDescriptor{-3}, "concat_axis", {&n.Input({2, 3}), &n.Input({2, 3})});
    ExpectRejected(n, "concat_axis", "out of range");
}

TEST(OpsDataValidation, SplitSizesNotSummingToTheDim) {
    LayerTestNetwork n;
    n.Layer(LayerType::Split, SplitDescriptor{1, {2, 2}}, "split_bad", {&n.Input({3, 5})}, 2);
    ExpectRejected(n, "split_bad", "sum to 4");
}

TEST(OpsDataValidation, SplitIntoUnequalParts) {
    {
        // Split-18's num_outputs: parts of ceil(7 / 2) = 4, the last one smaller.
        LayerTestNetwork n;
        n.Layer(LayerType::Split, SplitDescriptor{0, {}}, "split_uneven", {&n.Input({7})}, 2);
        NetworkId id = 0;
        ASSERT_EQ(n.m_Runtime->LoadNetwork(id, n.Optimize()), Status::Success);
        EXPECT_EQ(n.m_Runtime->GetOutputTensorInfo(id, 0).GetShape(), TensorShape({4}));
        EXPECT_EQ(n.m_Runtime->GetOutputTensorInfo(id, 1).GetShape(), TensorShape({3}));
    }
    {
        LayerTestNetwork n;  // 2 into 4 parts of 1 would need 3 before the last
        n.Layer(LayerType::Split, SplitDescriptor{0, {}}, "split_short", {&n.Input({2})}, 4);
        ExpectRejected(n, "split_short", "is too small for 4 parts");
    }
}

TEST(OpsDataValidation, SliceStepZero) {
    LayerTestNetwork n;
    SliceDescriptor d;
    d.m_Starts = {0};
    d.m_Ends = {2};
    d.m_Axes = {0};
    d.m_Steps = {0};
    n.Layer(LayerType::Slice, d, "slice_bad", {&n.Input({5, 3})});
    ExpectRejected(n, "slice_bad", "steps must be non-zero");
}

TEST(OpsDataValidation, SliceStepZeroFromParameterInput) {
    LayerTestNetwork n;
    n.Layer(LayerType::Slice, SliceDescriptor{}, "slice_input_bad",
            {&n.Input({5, 3}), &n.ConstInts({0}), &n.ConstInts({2}), &n.ConstInts({1}), &n.ConstInts({0})});
    ExpectRejected(n, "slice_input_bad", "steps must be non-zero");
}

TEST(OpsDataValidation, ReshapeElementCountMismatch) {
    LayerTestNetwork n;
    n.Layer(LayerType::Reshape, ReshapeTo({4, 2}), "reshape_count", {&n.Input({2, 3})});
    ExpectRejected(n, "reshape_count", "the element count must not change");
}

TEST(OpsDataValidation, ReshapeWithTwoInferredDims) {
    LayerTestNetwork n;
    n.Layer(LayerType::Reshape, ReshapeTo({-1, -1}), "reshape_two", {&n.Input({2, 3})});
    ExpectRejected(n, "reshape_two", "at most one dim can be inferred");
}

TEST(OpsDataValidation, ReshapeShapeFromNetworkInputMakesTheNetworkDynamic) {
    // The shape is only known when the network runs: Optimize() defers (dynamic_shapes_test.cpp
    // runs such networks), and a bad value is then refused by the run naming the layer.
    LayerTestNetwork n;
    n.Layer(LayerType::Reshape, ReshapeDescriptor{}, "reshape_dynamic",
            {&n.Input({2, 3}), &n.Input({2}, DataType::Signed64)});
    IOptimizedNetworkPtr opt = n.Optimize();
    const auto& log = opt->GetOptimizationLog();
    ASSERT_FALSE(log.empty());
    EXPECT_NE(log.back().find("dynamic network"), std::string::npos) << log.back();
    EXPECT_NE(log.back().find("reshape_dynamic"), std::string::npos) << log.back();
    NetworkId id = 0;
    n.m_Runtime->LoadNetwork(id, std::move(opt));
    EXPECT_TRUE(n.m_Runtime->IsDynamic(id));
    std::vector<float> x(6, 1.0f), y(6);
    const std::vector<int64_t> badShape = {4, 2};
    try {
        n.m_Runtime->EnqueueWorkload(
            id, {{0, ConstTensor(TensorInfo({2, 3}, DataType::Float32), x.data())},
                 {1, ConstTensor(TensorInfo({2}, DataType::Signed64), badShape.data())}},
            {{0, Tensor(TensorInfo({4, 2}, DataType::Float32), y.data())}});
        ADD_FAILURE() << "a target shape of 8 elements for 6 was accepted";
    } catch (const LayerValidationException& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("reshape_dynamic"), std::string::npos) << msg;
        EXPECT_NE(msg.find("the element count must not change"), std::string::npos) << msg;
    }
}

TEST(OpsDataValidation, SqueezeOfADimThatIsNotOne) {
    LayerTestNetwork n;
    ReshapeDescriptor d;
    d.m_Mode = ReshapeMode::Squeeze;
    d.m_Axes = {1};
    n.Layer(LayerType::Reshape, d, "squeeze_bad", {&n.Input({1, 3})});
    ExpectRejected(n, "squeeze_bad", "only size-1 dims can be removed");
}

TEST(OpsDataValidation, UnsqueezeNamingADimTwice) {
    LayerTestNetwork n;
    ReshapeDescriptor d;
    d.m_Mode = ReshapeMode::Unsqueeze;
    n.Layer(LayerType::Reshape, d, "unsqueeze_bad", {&n.Input({3}), &n.ConstInts({0, -3})});
    ExpectRejected(n, "unsqueeze_bad", "twice");
}

TEST(OpsDataValidation, TransposeBadPerm) {
    LayerTestNetwork n;
    n.Layer(LayerType::Transpose, TransposeDescriptor{{0, 0, 1}}, "transpose_bad", {&n.Input({2, 3, 5})});
    ExpectRejected(n, "transpose_bad", "is not a permutation");
}

TEST(OpsDataValidation, GatherAxisOutOfRange) {
    LayerTestNetwork n;
    n.Layer(LayerType::Gather, GatherDescriptor{2}, "gather_axis", {&n.Input({2, 3}), &n.Input({4}, DataType::Signed64)});
    ExpectRejected(n, "gather_axis", "axis 2 is out of range");
}

TEST(OpsDataValidation, GatherConstantIndexOutOfRange) {
    LayerTestNetwork n;
    n.Layer(LayerType::Gather, GatherDescriptor{1}, "gather_index", {&n.Input({2, 3}), &n.ConstInts({0, -4})});
    ExpectRejected(n, "gather_index", "index -4 is out of range [-3, 3)");
}

TEST(OpsDataValidation, ShapeOutputSetToTheWrongType) {
    LayerTestNetwork n;
    auto* l = n.Layer(LayerType::Shape, ShapeDescriptor{}, "shape_bad", {&n.Input({2, 3})});
    l->GetOutputSlot(0).SetTensorInfo(TensorInfo({2}, DataType::Float32));
    ExpectRejected(n, "shape_bad", "produces");
}

TEST(OpsDataValidation, ConstantOfShapeNegativeDim) {
    LayerTestNetwork n;
    n.Layer(LayerType::ConstantOfShape, ConstantOfShapeDescriptor{}, "cos_bad", {&n.ConstInts({2, -1})});
    ExpectRejected(n, "cos_bad", "dims must lie in [0, 2^32)");
}

TEST(OpsDataValidation, ExpandToAnIncompatibleShape) {
    LayerTestNetwork n;
    n.Layer(LayerType::Expand, ExpandDescriptor{}, "expand_bad", {&n.Input({3, 1}), &n.ConstInts({2, 4, 5})});
    ExpectRejected(n, "expand_bad", "cannot be broadcast");
}

TEST(OpsDataValidation, PadReflectWiderThanTheDim) {
    LayerTestNetwork n;
    PadDescriptor d;
    d.m_Mode = PadMode::Reflect;
    n.Layer(LayerType::Pad, d, "pad_bad", {&n.Input({2, 3}), &n.ConstInts({0, 3, 0, 0})});
    ExpectRejected(n, "pad_bad", "reflect pads must be smaller than the dim");
}

TEST(OpsDataValidation, PadsOfTheWrongLength) {
    LayerTestNetwork n;
    n.Layer(LayerType::Pad, PadDescriptor{}, "pad_len", {&n.Input({2, 3}), &n.ConstInts({1, 1, 1})});
    ExpectRejected(n, "pad_len", "two per dim");
}

TEST(OpsDataValidation, IdentityOutputSetToAnotherShape) {
    LayerTestNetwork n;
    auto* l = n.Layer(LayerType::Identity, EmptyDescriptor{}, "identity_bad", {&n.Input({2, 3})});
    l->GetOutputSlot(0).SetTensorInfo(TensorInfo({3, 2}, DataType::Float32));
    ExpectRejected(n, "identity_bad", "produces");
}

TEST(OpsDataValidation, MemCopyOutputSetToAnotherType) {
    LayerTestNetwork n;
    auto* l = n.Layer(LayerType::MemCopy, MemCopyDescriptor{}, "memcopy_bad", {&n.Input({2, 3})});
    l->GetOutputSlot(0).SetTensorInfo(TensorInfo({2, 3}, DataType::Signed32));
    ExpectRejected(n, "memcopy_bad", "produces");
}

TEST(OpsDataValidation, CastToAQuantizedType) {
    LayerTestNetwork n;
    n.Layer(LayerType::Cast, CastDescriptor{DataType::QAsymmU8}, "cast_bad", {&n.Input({3})});
    ExpectRejected(n, "cast_bad", "Float32 to QAsymmU8 is not supported");
}

TEST(OpsDataValidation, RangeWithZeroDelta) {
    LayerTestNetwork n;
    n.Layer(LayerType::Range, RangeDescriptor{}, "range_bad",
            {&n.ScalarFloat(0.0f), &n.ScalarFloat(5.0f), &n.ScalarFloat(0.0f)});
    ExpectRejected(n, "range_bad", "delta must be non-zero");
}

// ---- good layers: the descriptor resolves into the right shape ---------------------------------

TEST(OpsDataValidation, ResolvedShapes) {
    LayerTestNetwork n;
    IOutputSlot& x = n.Input({2, 3, 5});
    n.Layer(LayerType::Reshape, ReshapeDescriptor{}, "reshape", {&x, &n.ConstInts({0, -1})});
    ReshapeDescriptor flatten;
    flatten.m_Mode = ReshapeMode::Flatten;
    flatten.m_Axis = -1;
    n.Layer(LayerType::Reshape, flatten, "flatten", {&x});
    ReshapeDescriptor unsqueeze;
    unsqueeze.m_Mode = ReshapeMode::Unsqueeze;
    n.Layer(LayerType::Reshape, unsqueeze, "unsqueeze", {&x, &n.ConstInts({0, -1})});
    n.Layer(LayerType::Slice, SliceDescriptor{}, "slice",
            {&x, &n.ConstInts({-1, 100}), &n.ConstInts({std::numeric_limits<int64_t>::min(), -100}),
             &n.ConstInts({-2, 0}), &n.ConstInts({-1, 1})});
    n.Layer(LayerType::Transpose, TransposeDescriptor{}, "transpose", {&x});
    n.Layer(LayerType::Gather, GatherDescriptor{-1}, "gather", {&x, &n.Input({7, 2}, DataType::Signed32)});
    n.Layer(LayerType::Split, SplitDescriptor{-1, {}}, "split", {&x, &n.ConstInts({1, 4})}, 2);
    n.Layer(LayerType::Pad, PadDescriptor{}, "pad", {&x, &n.ConstInts({1, -1, 2, 0}), &n.ScalarFloat(2.0f),
                                                     &n.ConstInts({0, 2})});
    n.Layer(LayerType::Expand, ExpandDescriptor{}, "expand", {&n.Input({3, 1}), &n.ConstInts({2, 1, 5})});
    n.Layer(LayerType::Shape, ShapeDescriptor{-2, {}}, "shape", {&x});
    n.Layer(LayerType::ConstantOfShape, ConstantOfShapeDescriptor{{}, DataType::Signed32, 1.0}, "cos", {&n.ConstInts({4, 1})});
    n.Layer(LayerType::ElementwiseBinary, ElementwiseBinaryDescriptor{BinaryOperation::Less}, "less",
            {&x, &n.Input({3, 1})});
    IOptimizedNetworkPtr opt = n.Optimize();
    EXPECT_EQ(n.OutputOf(*opt, "reshape"), TensorInfo({2, 15}, DataType::Float32));
    EXPECT_EQ(n.OutputOf(*opt, "flatten"), TensorInfo({6, 5}, DataType::Float32));
    EXPECT_EQ(n.OutputOf(*opt, "unsqueeze"), TensorInfo({1, 2, 3, 5, 1}, DataType::Float32));
    // dim 1 (axis -2): start -1 -> 2, end -inf -> before 0, step -1: indices 2,1,0; dim 0 from 100: empty.
    EXPECT_EQ(n.OutputOf(*opt, "slice"), TensorInfo({0, 3, 5}, DataType::Float32));
    EXPECT_EQ(n.OutputOf(*opt, "transpose"), TensorInfo({5, 3, 2}, DataType::Float32));
    EXPECT_EQ(n.OutputOf(*opt, "gather"), TensorInfo({2, 3, 7, 2}, DataType::Float32));
    const std::vector<TensorInfo> split = n.OutputsOf(*opt, "split");
    ASSERT_EQ(split.size(), 2u);
    EXPECT_EQ(split[0], TensorInfo({2, 3, 1}, DataType::Float32));
    EXPECT_EQ(split[1], TensorInfo({2, 3, 4}, DataType::Float32));
    // axes 0 and 2: dim 0 grows by 1 + 2, dim 2 loses one at the front.
    EXPECT_EQ(n.OutputOf(*opt, "pad"), TensorInfo({5, 3, 4}, DataType::Float32));
    EXPECT_EQ(n.OutputOf(*opt, "expand"), TensorInfo({2, 3, 5}, DataType::Float32));
    EXPECT_EQ(n.OutputOf(*opt, "shape"), TensorInfo({2}, DataType::Signed64));
    EXPECT_EQ(n.OutputOf(*opt, "cos"), TensorInfo({4, 1}, DataType::Signed32));
    EXPECT_EQ(n.OutputOf(*opt, "less"), TensorInfo({2, 3, 5}, DataType::Boolean));
}

TEST(OpsDataValidation, RangeCountsLikeOnnx) {
    LayerTestNetwork n;
    n.Layer(LayerType::Range, RangeDescriptor{}, "range_f",
            {&n.ScalarFloat(1.0f), &n.ScalarFloat(-2.0f), &n.ScalarFloat(-0.75f)});
    n.Layer(LayerType::Range, RangeDescriptor{10.0, 3.0, -3.0, DataType::Signed64}, "range_i", {});
    IOptimizedNetworkPtr opt = n.Optimize();
    EXPECT_EQ(n.OutputOf(*opt, "range_f"), TensorInfo({4}, DataType::Float32));   // 1, .25, -.5, -1.25
    EXPECT_EQ(n.OutputOf(*opt, "range_i"), TensorInfo({3}, DataType::Signed64));  // 10, 7, 4
}

// ---- errors only the data can show: CpuRef throws at execution, naming the layer -------------

namespace {

// Loads `n` and runs it once with the given input buffers; returns the exception text ("" if none).
std::string RunExpectingError(LayerTestNetwork& n, const std::vector<std::pair<TensorInfo, const void*>>& inputs,
                              const TensorInfo& outInfo) {
    NetworkId id = 0;
    std::string error;
    if (n.m_Runtime->LoadNetwork(id, n.Optimize(), error) != Status::Success) return "LoadNetwork failed: " + error;
    InputTensors in;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        TensorInfo info = inputs[i].first;
        info.SetConstant(true);
        in.emplace_back(static_cast<LayerBindingId>(i), ConstTensor(info, inputs[i].second));
    }
    std::vector<uint8_t> out(outInfo.GetNumBytes());
    try {
        n.m_Runtime->EnqueueWorkload(id, in, {{0, Tensor(outInfo, out.data())}});
    } catch (const trellis::Exception& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST(OpsDataValidation, GatherIndexOutOfRangeAtExecution) {
    LayerTestNetwork n;
    n.Layer(LayerType::Gather, GatherDescriptor{0}, "gather_run", {&n.Input({3, 4}), &n.Input({2}, DataType::Signed64)});
    const std::vector<float> data(12, 1.0f);
    const std::vector<int64_t> indices = {-3, 3};
    const std::string msg = RunExpectingError(n, {{TensorInfo({3, 4}, DataType::Float32), data.data()},
                                                  {TensorInfo({2}, DataType::Signed64), indices.data()}},
                                              TensorInfo({2, 4}, DataType::Float32));
    EXPECT_NE(msg.find("gather_run"), std::string::npos) << msg;
    EXPECT_NE(msg.find("index 3 (at position 1) is out of range [-3, 3)"), std::string::npos) << msg;
}

TEST(OpsDataValidation, IntegerDivisionByZeroAtExecution) {
    LayerTestNetwork n;
    n.Layer(LayerType::ElementwiseBinary, ElementwiseBinaryDescriptor{BinaryOperation::Div}, "div_run",
            {&n.Input({3}, DataType::Signed32), &n.Input({3}, DataType::Signed32)});
    const std::vector<int32_t> a = {7, -7, 1}, b = {2, -2, 0};
    const std::string msg = RunExpectingError(n, {{TensorInfo({3}, DataType::Signed32), a.data()},
                                                  {TensorInfo({3}, DataType::Signed32), b.data()}},
                                              TensorInfo({3}, DataType::Signed32));
    EXPECT_NE(msg.find("div_run"), std::string::npos) << msg;
    EXPECT_NE(msg.find("integer division by zero"), std::string::npos) << msg;
}

// ---- ops whose output shapes depend on values (NonZero, Compress, Unique, NonMaxSuppression) ----

namespace {
IOutputSlot& ConstBools(LayerTestNetwork& n, const std::vector<uint8_t>& values, TensorShape shape) {
    return n.Constant(shape, DataType::Boolean, values.data());
}
}  // namespace

TEST(OpsDataValidation, CompressConditionMustBeA1dBooleanNoLongerThanTheAxis) {
    {
        LayerTestNetwork n;
        n.Layer(LayerType::Compress, CompressDescriptor{0}, "compress_int_cond", {&n.Input({3, 2}), &n.ConstInts({1, 0})});
        ExpectRejected(n, "compress_int_cond", "input 1 has type Signed64; expected one of Boolean");
    }
    {
        LayerTestNetwork n;
        n.Layer(LayerType::Compress, CompressDescriptor{0}, "compress_2d_cond",
                {&n.Input({3, 2}), &ConstBools(n, {1, 0, 1, 1}, {2, 2})});
        ExpectRejected(n, "compress_2d_cond", "input 1 (condition) must be 1-D, got shape 2x2");
    }
    {
        LayerTestNetwork n;
        n.Layer(LayerType::Compress, CompressDescriptor{-2}, "compress_long_cond",
                {&n.Input({3, 2}), &ConstBools(n, {1, 0, 1, 1, 0}, {5})});
        ExpectRejected(n, "compress_long_cond", "has 5 entries, more than the 3 slices along axis 0");
    }
    {
        LayerTestNetwork n;
        n.Layer(LayerType::Compress, CompressDescriptor{2}, "compress_axis", {&n.Input({3, 2}), &ConstBools(n, {1}, {1})});
        ExpectRejected(n, "compress_axis", "axis 2 is out of range for rank 2");
    }
}

TEST(OpsDataValidation, UniqueTypeAndAxis) {
    {
        LayerTestNetwork n;
        n.Layer(LayerType::Unique, UniqueDescriptor{}, "unique_s8", {&n.Input({4}, DataType::Signed8)}, 4);
        ExpectRejected(n, "unique_s8", "input 0 has type Signed8");
    }
    {
        LayerTestNetwork n;
        UniqueDescriptor d;
        d.m_Axis = -3;
        n.Layer(LayerType::Unique, d, "unique_axis", {&n.Input({2, 2})}, 4);
        ExpectRejected(n, "unique_axis", "axis -3 is out of range for rank 2");
    }
}

TEST(OpsDataValidation, NonMaxSuppressionShapesAndThreshold) {
    {
        LayerTestNetwork n;
        n.Layer(LayerType::NonMaxSuppression, NonMaxSuppressionDescriptor{}, "nms_boxes",
                {&n.Input({1, 2, 3}), &n.Input({1, 1, 2})});
        ExpectRejected(n, "nms_boxes", "input 0 (boxes) must be [batches, boxes, 4], got 1x2x3");
    }
    {
        LayerTestNetwork n;
        n.Layer(LayerType::NonMaxSuppression, NonMaxSuppressionDescriptor{}, "nms_scores",
                {&n.Input({1, 2, 4}), &n.Input({1, 1, 3})});
        ExpectRejected(n, "nms_scores", "to match boxes 1x2x4, got 1x1x3");
    }
    {
        LayerTestNetwork n;
        n.Layer(LayerType::NonMaxSuppression, NonMaxSuppressionDescriptor{}, "nms_iou",
                {&n.Input({1, 2, 4}), &n.Input({1, 1, 2}), &n.ConstInts({3}), &n.ScalarFloat(1.5f)});
        ExpectRejected(n, "nms_iou", "iou_threshold 1.500000 must be in [0, 1]");
    }
}

TEST(OpsDataValidation, NonZeroOfAGraphInputMakesTheNetworkDynamic) {
    LayerTestNetwork n;
    n.Layer(LayerType::NonZero, EmptyDescriptor{}, "nonzero_input", {&n.Input({2, 3})});
    IOptimizedNetworkPtr opt = n.Optimize();
    ASSERT_FALSE(opt->GetOptimizationLog().empty());
    const std::string last = opt->GetOptimizationLog().back();
    EXPECT_NE(last.find("dynamic network"), std::string::npos) << last;
    EXPECT_NE(last.find("NonZero 'nonzero_input': input 0 (data) decides the output shape"), std::string::npos) << last;
    // Run it: the output shape follows each run's values.
    NetworkId id = 0;
    n.m_Runtime->LoadNetwork(id, std::move(opt));
    for (const std::vector<float>& x : {std::vector<float>{0, 1, 0, 2, 0, 3}, std::vector<float>{0, 0, 0, 0, 5, 0}}) {
        InputTensors in{{0, ConstTensor(TensorInfo({2, 3}, DataType::Float32), x.data())}};
        const TensorInfo info = n.m_Runtime->GetOutputTensorInfo(id, 0, in);
        std::vector<int64_t> y(info.GetNumElements());
        n.m_Runtime->EnqueueWorkload(id, in, {{0, Tensor(info, y.data())}});
        std::vector<int64_t> rows, cols;
        for (int64_t i = 0; i < 6; ++i) {
            if (x[static_cast<std::size_t>(i)] != 0) {
                rows.push_back(i / 3);
                cols.push_back(i % 3);
            }
        }
        ASSERT_EQ(info.GetShape(), TensorShape({2, static_cast<unsigned int>(rows.size())}));
        rows.insert(rows.end(), cols.begin(), cols.end());
        EXPECT_EQ(y, rows);
    }
}
