// Validation, run-time errors and edge cases of the integer types, BitShift, the quantization ops
// (QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear and the importer's integer products) and
// NegativeLogLikelihoodLoss: a bad layer makes Optimize() throw naming the layer and the rule; a
// bad value that only arrives with the inputs makes EnqueueWorkload() throw naming the layer; the
// numeric cases compare with values worked out by hand from the ONNX definitions.
#include "TestHelpers.hpp"

#include <trellis/Trellis.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

using namespace trellis;
using trellis::test::ExpectRejected;
using trellis::test::ExpectRunThrows;
using trellis::test::LayerTestNetwork;
using trellis::test::MakeTensor;
using trellis::test::RunLayerTestNetwork;

namespace {

template <typename T>
std::vector<T> Values(const OwnedTensor& t) {
    std::vector<T> v(t.m_Info.GetNumElements());
    std::memcpy(v.data(), t.m_Data.data(), v.size() * sizeof(T));
    return v;
}

NegativeLogLikelihoodLossDescriptor Loss(LossReduction r, std::optional<int64_t> ignore = std::nullopt) {
    NegativeLogLikelihoodLossDescriptor d;
    d.m_Reduction = r;
    d.m_IgnoreIndex = ignore;
    return d;
}

// ---- NegativeLogLikelihoodLoss ----

TEST(NegativeLogLikelihoodLoss, TargetShapeMustBeXWithoutDimOne) {
    LayerTestNetwork n;
    n.Layer(LayerType::NegativeLogLikelihoodLoss, Loss(LossReduction::Mean), "nll",
            {&n.Input({2, 3, 4}), &n.Input({2, 3}, DataType::Signed64)});
    ExpectRejected(n, "nll", "must have x's shape 2x3x4 without dim 1 (C), i.e. 2x4");
}

TEST(NegativeLogLikelihoodLoss, WeightNeedsOneValuePerClass) {
    LayerTestNetwork n;
    n.Layer(LayerType::NegativeLogLikelihoodLoss, Loss(LossReduction::Sum), "nll",
            {&n.Input({2, 3}), &n.Input({2}, DataType::Signed64), &n.Input({4})});
    ExpectRejected(n, "nll", "input 2 (weight) 4 must be 1-D with C=3 values");
}

TEST(NegativeLogLikelihoodLoss, TargetMustBeAnIntegerIndex) {
    LayerTestNetwork n;
    n.Layer(LayerType::NegativeLogLikelihoodLoss, Loss(LossReduction::Sum), "nll", {&n.Input({2, 3}), &n.Input({2})});
    ExpectRejected(n, "nll", "input 1 has type Float32");
}

TEST(NegativeLogLikelihoodLoss, TargetOutOfRangeThrowsAtRunTime) {
    LayerTestNetwork n;
    n.Layer(LayerType::NegativeLogLikelihoodLoss, Loss(LossReduction::None, -1), "nll",
            {&n.Input({2, 3}), &n.Input({2}, DataType::Signed64)});
    const OwnedTensor x = MakeTensor<float>({2, 3}, DataType::Float32, {-1, -2, -3, -4, -5, -6});
    ExpectRunThrows(n, {x, MakeTensor<int64_t>({2}, DataType::Signed64, {0, 3})}, "nll",
                    "target 3 (at position 1) is out of range [0, 3)");
    LayerTestNetwork negative;
    negative.Layer(LayerType::NegativeLogLikelihoodLoss, Loss(LossReduction::None, -1), "nll2",
                   {&negative.Input({2, 3}), &negative.Input({2}, DataType::Signed64)});
    ExpectRunThrows(negative, {x, MakeTensor<int64_t>({2}, DataType::Signed64, {-2, 1})}, "nll2",
                    "target -2 (at position 0) is out of range");
}

TEST(NegativeLogLikelihoodLoss, IgnoredTargetsAndWeightedMean) {
    // x [2, 3, 2]: loss(n, d) = -x[n, t, d] * w[t]; the ignored target (2) contributes nothing.
    LayerTestNetwork n;
    n.Layer(LayerType::NegativeLogLikelihoodLoss, Loss(LossReduction::Mean, 2), "nll",
            {&n.Input({2, 3, 2}), &n.Input({2, 2}, DataType::Signed32), &n.Input({3})});
    const OwnedTensor x = MakeTensor<float>({2, 3, 2}, DataType::Float32, {-1, -2, -3, -4, -5, -6, -7, -8, -9, -10, -11, -12});
    const OwnedTensor t = MakeTensor<int32_t>({2, 2}, DataType::Signed32, {0, 2, 1, 0});
    const OwnedTensor w = MakeTensor<float>({3}, DataType::Float32, {0.5f, 2.0f, 4.0f});
    const auto out = RunLayerTestNetwork(n, {x, t, w});
    ASSERT_EQ(out.size(), 1u);
    ASSERT_EQ(out[0].m_Info.GetNumDimensions(), 0u);
    // Picked: (0,0): -x[0,0,0]=1 * 0.5; (1,0): -x[1,1,0]=9 * 2; (1,1): -x[1,0,1]=8 * 0.5.
    const double want = (1 * 0.5 + 9 * 2.0 + 8 * 0.5) / (0.5 + 2.0 + 0.5);
    EXPECT_NEAR(Values<float>(out[0])[0], want, 1e-6);
}

// ---- Quantization ----

TEST(QuantizeLinear, PerAxisScaleMustMatchTheAxis) {
    LayerTestNetwork n;
    QuantizeLinearDescriptor d;
    d.m_Axis = 1;
    n.Layer(LayerType::QuantizeLinear, d, "q", {&n.Input({2, 3, 4}), &n.Input({4}), &n.Input({4}, DataType::UInt8)});
    ExpectRejected(n, "q", "per-axis quantization along axis 1 of x 2x3x4 needs 3");
}

TEST(QuantizeLinear, ZeroPointMustHaveTheScaleShapeAndAQuantizedType) {
    LayerTestNetwork shape;
    shape.Layer(LayerType::QuantizeLinear, QuantizeLinearDescriptor{}, "q",
                {&shape.Input({2, 3}), &shape.Input({}), &shape.Input({3}, DataType::UInt8)});
    ExpectRejected(shape, "q", "input 2 (zero point) 3 must have the scale's shape scalar");
    LayerTestNetwork type;
    type.Layer(LayerType::QuantizeLinear, QuantizeLinearDescriptor{}, "q2",
               {&type.Input({2, 3}), &type.Input({}), &type.Input({}, DataType::Signed32)});
    ExpectRejected(type, "q2", "input 2 (zero point) has type Signed32; expected UInt8, Signed8");
}

TEST(QuantizeLinear, RoundsHalfToEvenAndSaturates) {
    LayerTestNetwork n;
    n.Layer(LayerType::QuantizeLinear, QuantizeLinearDescriptor{}, "q",
            {&n.Input({6}), &n.Input({}), &n.Input({}, DataType::Signed8)});
    const auto out = RunLayerTestNetwork(n, {MakeTensor<float>({6}, DataType::Float32, {0.5f, 1.5f, -2.5f, 1000, -1000, NAN}),
                                             MakeTensor<float>({}, DataType::Float32, {1.0f}),
                                             MakeTensor<int8_t>({}, DataType::Signed8, {int8_t(-1)})});
    ASSERT_EQ(out[0].m_Info.GetDataType(), DataType::Signed8);
    // round(0.5)=0, round(1.5)=2, round(-2.5)=-2; +(-1); saturated; NaN gives the zero point.
    EXPECT_EQ(Values<int8_t>(out[0]), (std::vector<int8_t>{-1, 1, -3, 127, -128, -1}));
}

TEST(DequantizeLinear, Signed32NeedsZeroPointZero) {
    LayerTestNetwork n;
    n.Layer(LayerType::DequantizeLinear, QuantizeLinearDescriptor{}, "dq",
            {&n.Input({3}, DataType::Signed32), &n.Input({}), &n.Input({}, DataType::Signed32)});
    ExpectRunThrows(n, {MakeTensor<int32_t>({3}, DataType::Signed32, {1, 2, 3}), MakeTensor<float>({}, DataType::Float32, {2.0f}),
                        MakeTensor<int32_t>({}, DataType::Signed32, {5})},
                    "dq", "a Signed32 input needs zero point 0, got 5");
}

TEST(DequantizeLinear, ZeroPointTypeMustBeTheInputType) {
    LayerTestNetwork n;
    n.Layer(LayerType::DequantizeLinear, QuantizeLinearDescriptor{}, "dq",
            {&n.Input({3}, DataType::UInt8), &n.Input({}), &n.Input({}, DataType::Signed8)});
    ExpectRejected(n, "dq", "input 2 must be UInt8, got Signed8");
}

TEST(DynamicQuantizeLinear, AllZeroInputGivesScaleZero) {
    LayerTestNetwork n;
    n.Layer(LayerType::DynamicQuantizeLinear, EmptyDescriptor{}, "dql", {&n.Input({4})});
    const auto out = RunLayerTestNetwork(n, {MakeTensor<float>({4}, DataType::Float32, {0, 0, 0, 0})});
    ASSERT_EQ(out.size(), 3u);
    EXPECT_EQ(Values<uint8_t>(out[0]), (std::vector<uint8_t>{0, 0, 0, 0}));
    EXPECT_EQ(Values<float>(out[1])[0], 0.0f);
    EXPECT_EQ(Values<uint8_t>(out[2])[0], 0);
}

TEST(DynamicQuantizeLinear, InputMustBeFloat32) {
    LayerTestNetwork n;
    n.Layer(LayerType::DynamicQuantizeLinear, EmptyDescriptor{}, "dql", {&n.Input({4}, DataType::Float64)});
    ExpectRejected(n, "dql", "input 0 must be Float32, got Float64");
}

// ---- Integer element types, BitShift ----

TEST(BitShift, TakesIntegersOnly) {
    LayerTestNetwork n;
    n.Layer(LayerType::ElementwiseBinary, ElementwiseBinaryDescriptor{BinaryOperation::BitShiftLeft}, "shl",
            {&n.Input({3}, DataType::Float32), &n.Input({3}, DataType::Float32)});
    ExpectRejected(n, "shl", "bit shifts take integer types");
}

TEST(IntegerTypes, DivisionAndModuloByZeroThrow) {
    for (BinaryOperation op : {BinaryOperation::Div, BinaryOperation::Mod, BinaryOperation::FMod}) {
        LayerTestNetwork n;
        n.Layer(LayerType::ElementwiseBinary, ElementwiseBinaryDescriptor{op}, "div",
                {&n.Input({2}, DataType::UInt16), &n.Input({2}, DataType::UInt16)});
        ExpectRunThrows(n, {MakeTensor<uint16_t>({2}, DataType::UInt16, {7, 8}), MakeTensor<uint16_t>({2}, DataType::UInt16, {2, 0})},
                        "div", "by zero");
    }
}

TEST(IntegerTypes, Int8WrapsAndDividesTowardZero) {
    LayerTestNetwork n;
    n.Layer(LayerType::ElementwiseBinary, ElementwiseBinaryDescriptor{BinaryOperation::Add}, "add",
            {&n.Input({3}, DataType::Signed8), &n.Input({3}, DataType::Signed8)});
    n.Layer(LayerType::ElementwiseBinary, ElementwiseBinaryDescriptor{BinaryOperation::Div}, "div",
            {&n.Input({3}, DataType::Signed8), &n.Input({3}, DataType::Signed8)});
    const OwnedTensor a = MakeTensor<int8_t>({3}, DataType::Signed8, {127, -128, -7});
    const OwnedTensor b = MakeTensor<int8_t>({3}, DataType::Signed8, {1, -1, 2});
    const auto out = RunLayerTestNetwork(n, {a, b, a, b});
    EXPECT_EQ(Values<int8_t>(out[0]), (std::vector<int8_t>{-128, 127, -5}));
    EXPECT_EQ(Values<int8_t>(out[1]), (std::vector<int8_t>{127, -128, -3}));  // -128 / -1 wraps like numpy
}

TEST(IntegerTypes, CpuRefNamesTheTypesItRuns) {
    // Boolean has no arithmetic: the refusal lists what CpuRef does run.
    LayerTestNetwork n;
    n.Layer(LayerType::ElementwiseBinary, ElementwiseBinaryDescriptor{BinaryOperation::Add}, "add_bool",
            {&n.Input({2}, DataType::Boolean), &n.Input({2}, DataType::Boolean)});
    ExpectRejected(n, "add_bool", "Float32, Float64, Float16, BFloat16 and the integer types");
}

TEST(IntegerTypes, UInt64CastToFloatKeepsLargeValues) {
    LayerTestNetwork n;
    n.Layer(LayerType::Cast, CastDescriptor{DataType::Float32}, "cast", {&n.Input({2}, DataType::UInt64)});
    const auto out = RunLayerTestNetwork(
        n, {MakeTensor<uint64_t>({2}, DataType::UInt64, {std::numeric_limits<uint64_t>::max(), uint64_t(1) << 63})});
    EXPECT_EQ(Values<float>(out[0]), (std::vector<float>{18446744073709551616.0f, 9223372036854775808.0f}));
}

}  // namespace
