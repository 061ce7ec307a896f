// The sampling and cache ops of opsets 18-24 (AffineGrid, Col2Im, DeformConvolution,
// TensorScatter, the volumetric GridSample, Resize's antialias, half_pixel_symmetric and
// axes / keep_aspect_ratio_policy), and the float types CpuRef widens (Float16, BFloat16, Float64
// through MatMul, Softmax, Reduce, ElementwiseUnary; Mod on floats): a bad layer makes Optimize()
// throw naming the layer and the rule, a bad value that only arrives with the inputs makes the run
// throw naming the layer, and small cases check the numbers against hand-computed values. The ONNX
// node cases (onnx-1.23.1/node) check them against the ONNX reference.
#include "TestHelpers.hpp"

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

std::vector<float> Floats(const OwnedTensor& t) {
    std::vector<float> v(t.m_Info.GetNumElements());
    std::memcpy(v.data(), t.m_Data.data(), v.size() * sizeof(float));
    return v;
}

void ExpectNear(const std::vector<float>& got, const std::vector<float>& want, float tolerance = 1e-5f) {
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tolerance) << "element " << i;
}

// IEEE half bits of a few exact values.
uint16_t Half(float v) {
    if (v == 0.0f) return 0;
    if (v == 1.0f) return 0x3c00;
    if (v == 2.0f) return 0x4000;
    if (v == 3.0f) return 0x4200;
    if (v == 0.5f) return 0x3800;
    if (v == -1.0f) return 0xbc00;
    ADD_FAILURE() << "no half constant for " << v;
    return 0;
}

}  // namespace

// --- AffineGrid ----------------------------------------------------------------------------------

TEST(OpsSamplingCache, AffineGridIdentityGivesPixelCentres) {
    LayerTestNetwork n;
    AffineGridDescriptor d;
    n.Layer(LayerType::AffineGrid, d, "affine_identity", {&n.Input({1, 2, 3}), &n.ConstInts({1, 1, 2, 2}, {4})});
    const auto out = RunLayerTestNetwork(n, {MakeTensor<float>({1, 2, 3}, DataType::Float32, {1, 0, 0, 0, 1, 0})});
    EXPECT_EQ(out[0].m_Info.GetShape(), TensorShape({1, 2, 2, 2}));
    // align_corners=0: the centres of 2 pixels over [-1, 1] are -0.5 and 0.5; (x, y) with x fastest.
    ExpectNear(Floats(out[0]), {-0.5f, -0.5f, 0.5f, -0.5f, -0.5f, 0.5f, 0.5f, 0.5f});
}

TEST(OpsSamplingCache, AffineGridThreeDimensionalAlignCorners) {
    LayerTestNetwork n;
    AffineGridDescriptor d;
    d.m_AlignCorners = true;
    n.Layer(LayerType::AffineGrid, d, "affine_3d", {&n.Input({1, 3, 4}), &n.ConstInts({1, 1, 1, 1, 2}, {5})});
    // x' = 2x + 1 (a translation in the last column); y' = y; z' = z.
    const auto out = RunLayerTestNetwork(
        n, {MakeTensor<float>({1, 3, 4}, DataType::Float32, {2, 0, 0, 1, 0, 1, 0, 0, 0, 0, 1, 0})});
    EXPECT_EQ(out[0].m_Info.GetShape(), TensorShape({1, 1, 1, 2, 3}));
    // D = H = 1: y = z = -1; W = 2: x = -1, 1.
    ExpectNear(Floats(out[0]), {-1.0f, -1.0f, -1.0f, 3.0f, -1.0f, -1.0f});
}

TEST(OpsSamplingCache, AffineGridThetaMustFitTheSize) {
    LayerTestNetwork n;
    n.Layer(LayerType::AffineGrid, AffineGridDescriptor{}, "affine_mismatch",
            {&n.Input({1, 2, 3}), &n.ConstInts({1, 1, 2, 2, 2}, {5})});
    ExpectRejected(n, "affine_mismatch", "must be (N, 3, 4) for a size of 5 entries");
}

TEST(OpsSamplingCache, AffineGridBatchMustMatch) {
    LayerTestNetwork n;
    n.Layer(LayerType::AffineGrid, AffineGridDescriptor{}, "affine_batch", {&n.Input({2, 2, 3}), &n.ConstInts({1, 1, 2, 2}, {4})});
    ExpectRejected(n, "affine_batch", "they must match");
}

// --- Col2Im --------------------------------------------------------------------------------------

TEST(OpsSamplingCache, Col2ImSumsOverlappingBlocks) {
    LayerTestNetwork n;
    // A 1x3 image from blocks of 1x2 at stride 1: the blocks at positions 0 and 1 overlap at pixel 1.
    n.Layer(LayerType::Col2Im, Col2ImDescriptor{}, "col2im_overlap",
            {&n.Input({1, 2, 2}), &n.ConstInts({1, 3}, {2}), &n.ConstInts({1, 2}, {2})});
    // Row k (block element k) holds that element at each of the 2 positions.
    const auto out = RunLayerTestNetwork(n, {MakeTensor<float>({1, 2, 2}, DataType::Float32, {1, 2, 10, 20})});
    EXPECT_EQ(out[0].m_Info.GetShape(), TensorShape({1, 1, 1, 3}));
    ExpectNear(Floats(out[0]), {1.0f, 12.0f, 20.0f});
}

TEST(OpsSamplingCache, Col2ImNeedsTheBlockCount) {
    LayerTestNetwork n;
    n.Layer(LayerType::Col2Im, Col2ImDescriptor{}, "col2im_count",
            {&n.Input({1, 4, 5}), &n.ConstInts({3, 3}, {2}), &n.ConstInts({2, 2}, {2})});
    ExpectRejected(n, "col2im_count", "dim 2 must be the number of block positions, 4");
}

TEST(OpsSamplingCache, Col2ImChannelsMustBeBlockMultiples) {
    LayerTestNetwork n;
    n.Layer(LayerType::Col2Im, Col2ImDescriptor{}, "col2im_channels",
            {&n.Input({1, 3, 4}), &n.ConstInts({3, 3}, {2}), &n.ConstInts({2, 2}, {2})});
    ExpectRejected(n, "col2im_channels", "dim 1 must be a multiple of the block volume 4");
}

// --- DeformConvolution ---------------------------------------------------------------------------

TEST(OpsSamplingCache, DeformConvolutionZeroOffsetsIsConvolution) {
    LayerTestNetwork n;
    DeformConvolutionDescriptor d;
    n.Layer(LayerType::DeformConvolution, d, "deform_plain",
            {&n.Input({1, 1, 2, 2}), &n.Input({1, 1, 1, 1}), &n.Input({1, 2, 2, 2})});
    const auto out = RunLayerTestNetwork(n, {MakeTensor<float>({1, 1, 2, 2}, DataType::Float32, {1, 2, 3, 4}),
                                             MakeTensor<float>({1, 1, 1, 1}, DataType::Float32, {2}),
                                             MakeTensor<float>({1, 2, 2, 2}, DataType::Float32, {0, 0, 0, 0, 0, 0, 0, 0})});
    ExpectNear(Floats(out[0]), {2, 4, 6, 8});
}

TEST(OpsSamplingCache, DeformConvolutionSamplesBilinearlyAtTheOffset) {
    LayerTestNetwork n;
    DeformConvolutionDescriptor d;
    n.Layer(LayerType::DeformConvolution, d, "deform_half",
            {&n.Input({1, 1, 2, 2}), &n.Input({1, 1, 1, 1}), &n.Input({1, 2, 2, 2}), &n.ConstFloats({0.5f}, {1})});
    // Offsets (dy, dx) = (0, 0.5) everywhere: pixel (i, j) reads between (i, j) and (i, j + 1);
    // the right column reads half of a pixel outside (0), plus the bias 0.5.
    const auto out = RunLayerTestNetwork(n, {MakeTensor<float>({1, 1, 2, 2}, DataType::Float32, {1, 2, 3, 4}),
                                             MakeTensor<float>({1, 1, 1, 1}, DataType::Float32, {1}),
                                             MakeTensor<float>({1, 2, 2, 2}, DataType::Float32,
                                                               {0, 0, 0, 0, 0.5f, 0.5f, 0.5f, 0.5f})});
    ExpectNear(Floats(out[0]), {2.0f, 1.5f, 4.0f, 2.5f});
}

TEST(OpsSamplingCache, DeformConvolutionOffsetShapeNamesTheRule) {
    LayerTestNetwork n;
    n.Layer(LayerType::DeformConvolution, DeformConvolutionDescriptor{}, "deform_offset",
            {&n.Input({1, 1, 4, 4}), &n.Input({1, 1, 3, 3}), &n.Input({1, 9, 2, 2})});
    ExpectRejected(n, "deform_offset", "(N, offset_group * kH * kW * 2, oH, oW)");
}

TEST(OpsSamplingCache, DeformConvolutionIsTwoDimensional) {
    LayerTestNetwork n;
    n.Layer(LayerType::DeformConvolution, DeformConvolutionDescriptor{}, "deform_3d",
            {&n.Input({1, 1, 4, 4, 4}), &n.Input({1, 1, 3, 3, 3}), &n.Input({1, 54, 2, 2, 2})});
    ExpectRejected(n, "deform_3d", "only the 2-D form is supported");
}

// --- TensorScatter -------------------------------------------------------------------------------

TEST(OpsSamplingCache, TensorScatterWritesAtTheIndices) {
    LayerTestNetwork n;
    TensorScatterDescriptor d;
    d.m_Axis = 1;
    n.Layer(LayerType::TensorScatter, d, "scatter_linear",
            {&n.Input({2, 3}), &n.Input({2, 1}), &n.Input({2}, DataType::Signed64)});
    const auto out = RunLayerTestNetwork(n, {MakeTensor<float>({2, 3}, DataType::Float32, {0, 0, 0, 0, 0, 0}),
                                             MakeTensor<float>({2, 1}, DataType::Float32, {7, 8}),
                                             MakeTensor<int64_t>({2}, DataType::Signed64, {2, 0})});
    ExpectNear(Floats(out[0]), {0, 0, 7, 8, 0, 0});
}

TEST(OpsSamplingCache, TensorScatterCircularWraps) {
    LayerTestNetwork n;
    TensorScatterDescriptor d;
    d.m_Axis = 1;
    d.m_Circular = true;
    n.Layer(LayerType::TensorScatter, d, "scatter_circular",
            {&n.Input({1, 3}), &n.Input({1, 2}), &n.Input({1}, DataType::Signed64)});
    const auto out = RunLayerTestNetwork(n, {MakeTensor<float>({1, 3}, DataType::Float32, {1, 1, 1}),
                                             MakeTensor<float>({1, 2}, DataType::Float32, {5, 6}),
                                             MakeTensor<int64_t>({1}, DataType::Signed64, {2})});
    ExpectNear(Floats(out[0]), {6, 1, 5});
}

TEST(OpsSamplingCache, TensorScatterLinearPastTheCacheFailsTheRun) {
    LayerTestNetwork n;
    TensorScatterDescriptor d;
    d.m_Axis = 1;
    n.Layer(LayerType::TensorScatter, d, "scatter_past_end",
            {&n.Input({1, 3}), &n.Input({1, 2}), &n.Input({1}, DataType::Signed64)});
    ExpectRunThrows(n,
                    {MakeTensor<float>({1, 3}, DataType::Float32, {1, 1, 1}),
                     MakeTensor<float>({1, 2}, DataType::Float32, {5, 6}),
                     MakeTensor<int64_t>({1}, DataType::Signed64, {2})},
                    "scatter_past_end", "passes the cache's 3");
}

TEST(OpsSamplingCache, TensorScatterAxisIsNotTheBatch) {
    LayerTestNetwork n;
    TensorScatterDescriptor d;
    d.m_Axis = 0;
    n.Layer(LayerType::TensorScatter, d, "scatter_batch_axis", {&n.Input({2, 3}), &n.Input({1, 3})});
    ExpectRejected(n, "scatter_batch_axis", "names the batch dim 0");
}

TEST(OpsSamplingCache, TensorScatterUpdateMustFitTheCache) {
    LayerTestNetwork n;
    TensorScatterDescriptor d;
    d.m_Axis = 1;
    n.Layer(LayerType::TensorScatter, d, "scatter_long_update", {&n.Input({1, 2}), &n.Input({1, 3})});
    ExpectRejected(n, "scatter_long_update", "and be no longer there");
}

// --- GridSample (volumetric) ---------------------------------------------------------------------

TEST(OpsSamplingCache, GridSampleVolumetricTrilinearAtTheCentre) {
    LayerTestNetwork n;
    GridSampleDescriptor d;
    d.m_AlignCorners = true;
    n.Layer(LayerType::GridSample, d, "grid_3d", {&n.Input({1, 1, 2, 2, 2}), &n.Input({1, 1, 1, 2, 3})});
    const auto out = RunLayerTestNetwork(
        n, {MakeTensor<float>({1, 1, 2, 2, 2}, DataType::Float32, {0, 1, 2, 3, 4, 5, 6, 7}),
            MakeTensor<float>({1, 1, 1, 2, 3}, DataType::Float32, {0, 0, 0, 1, 1, 1})});
    EXPECT_EQ(out[0].m_Info.GetShape(), TensorShape({1, 1, 1, 1, 2}));
    // The centre averages all 8 voxels; (1, 1, 1) is the far corner.
    ExpectNear(Floats(out[0]), {3.5f, 7.0f});
}

TEST(OpsSamplingCache, GridSampleVolumetricRejectsCubic) {
    LayerTestNetwork n;
    GridSampleDescriptor d;
    d.m_Mode = GridSampleMode::Bicubic;
    n.Layer(LayerType::GridSample, d, "grid_3d_cubic", {&n.Input({1, 1, 2, 2, 2}), &n.Input({1, 1, 1, 2, 3})});
    ExpectRejected(n, "grid_3d_cubic", "cubic mode is defined for 4-D input only");
}

// --- Resize --------------------------------------------------------------------------------------

TEST(OpsSamplingCache, ResizeAxesAndPolicyFromAGraphInput) {
    LayerTestNetwork n;
    ResizeDescriptor d;
    d.m_Axes = {3, 2};
    d.m_KeepAspectRatioPolicy = KeepAspectRatioPolicy::NotLarger;
    // Slots X, roi, scales, sizes; sizes (for axes 3, 2) is a graph input read per run.
    n.Layer(LayerType::Resize, d, "resize_policy",
            {&n.Input({1, 1, 2, 4}), &n.Constant({0}, DataType::Float32, nullptr), &n.Constant({0}, DataType::Float32, nullptr),
             &n.Input({2}, DataType::Signed64)});
    std::vector<float> x(8);
    for (int i = 0; i < 8; ++i) x[static_cast<std::size_t>(i)] = static_cast<float>(i);
    // not_larger: the smallest of 2/4 (W) and 4/2 (H) is 0.5, so the output is 1x2.
    const auto out = RunLayerTestNetwork(n, {MakeTensor<float>({1, 1, 2, 4}, DataType::Float32, x),
                                             MakeTensor<int64_t>({2}, DataType::Signed64, {2, 4})});
    EXPECT_EQ(out[0].m_Info.GetShape(), TensorShape({1, 1, 1, 2}));
}

TEST(OpsSamplingCache, ResizeAxesCountMustMatchTheSizes) {
    LayerTestNetwork n;
    ResizeDescriptor d;
    d.m_Axes = {2, 3};
    d.m_Sizes = {4};
    n.Layer(LayerType::Resize, d, "resize_axes_count", {&n.Input({1, 1, 2, 2})});
    ExpectRejected(n, "resize_axes_count", "sizes has 1 entries for axes [2, 3]");
}

TEST(OpsSamplingCache, ResizeAntialiasAveragesWhenDownsampling) {
    LayerTestNetwork n;
    ResizeDescriptor d;
    d.m_Mode = ResizeMode::Linear;
    d.m_Antialias = true;
    d.m_Scales = {1, 1, 1, 0.5f};
    n.Layer(LayerType::Resize, d, "resize_antialias", {&n.Input({1, 1, 1, 4})});
    const auto out = RunLayerTestNetwork(n, {MakeTensor<float>({1, 1, 1, 4}, DataType::Float32, {0, 4, 8, 12})});
    // Output 0 sits at source 0.5: the triangle of half-width 2 weighs pixels -1 (the edge, 0), 0,
    // 1, 2 by 0.25, 0.75, 0.75, 0.25, normalized by their sum 2: (0 + 0 + 3 + 2) / 2 = 2.5. Output 1
    // (source 2.5) weighs pixels 1, 2, 3, 4 (the edge, 12) alike: (1 + 6 + 9 + 3) / 2 = 9.5.
    ExpectNear(Floats(out[0]), {2.5f, 9.5f});
}

TEST(OpsSamplingCache, ResizeHalfPixelSymmetricCentresTheContent) {
    LayerTestNetwork n;
    ResizeDescriptor d;
    d.m_Mode = ResizeMode::Linear;
    d.m_CoordinateTransform = CoordinateTransform::HalfPixelSymmetric;
    d.m_Scales = {1, 1, 1, 0.6f};  // 4 * 0.6 = 2.4: the output holds 2, the offset is 2 * (1 - 2 / 2.4)
    n.Layer(LayerType::Resize, d, "resize_symmetric", {&n.Input({1, 1, 1, 4})});
    const auto out = RunLayerTestNetwork(n, {MakeTensor<float>({1, 1, 1, 4}, DataType::Float32, {0, 1, 2, 3})});
    const double offset = 2.0 * (1.0 - 2.0 / (0.6 * 4.0));
    const double x0 = offset + 0.5 / 0.6 - 0.5, x1 = offset + 1.5 / 0.6 - 0.5;
    ExpectNear(Floats(out[0]), {static_cast<float>(x0), static_cast<float>(x1)});
}

// --- Widened float types and Mod on floats -------------------------------------------------------

TEST(OpsSamplingCache, MatMulRunsFloat16) {
    LayerTestNetwork n;
    n.Layer(LayerType::MatMul, EmptyDescriptor{}, "matmul_half", {&n.Input({1, 2}, DataType::Float16), &n.Input({2, 1}, DataType::Float16)});
    const auto out = RunLayerTestNetwork(n, {MakeTensor<uint16_t>({1, 2}, DataType::Float16, {Half(1), Half(2)}),
                                             MakeTensor<uint16_t>({2, 1}, DataType::Float16, {Half(3), Half(-1)})});
    uint16_t y = 0;
    std::memcpy(&y, out[0].m_Data.data(), sizeof y);
    EXPECT_EQ(y, Half(1));  // 1 * 3 + 2 * -1
}

TEST(OpsSamplingCache, SoftmaxRunsFloat64) {
    LayerTestNetwork n;
    SoftmaxDescriptor d;
    d.m_Axis = 1;
    n.Layer(LayerType::Softmax, d, "softmax_double", {&n.Input({1, 2}, DataType::Float64)});
    const auto out = RunLayerTestNetwork(n, {MakeTensor<double>({1, 2}, DataType::Float64, {0.0, std::log(3.0)})});
    double y[2];
    std::memcpy(y, out[0].m_Data.data(), sizeof y);
    EXPECT_DOUBLE_EQ(y[0], 0.25);
    EXPECT_DOUBLE_EQ(y[1], 0.75);
}

TEST(OpsSamplingCache, ElementwiseUnaryRunsFloat16) {
    LayerTestNetwork n;
    ElementwiseUnaryDescriptor d;
    d.m_Operation = UnaryOperation::Relu;
    n.Layer(LayerType::ElementwiseUnary, d, "relu_half", {&n.Input({2}, DataType::Float16)});
    const auto out = RunLayerTestNetwork(n, {MakeTensor<uint16_t>({2}, DataType::Float16, {Half(-1), Half(2)})});
    uint16_t y[2];
    std::memcpy(y, out[0].m_Data.data(), sizeof y);
    EXPECT_EQ(y[0], Half(0));
    EXPECT_EQ(y[1], Half(2));
}

TEST(OpsSamplingCache, ModOnFloatsTakesTheDivisorsSign) {
    LayerTestNetwork n;
    ElementwiseBinaryDescriptor d;
    d.m_Operation = BinaryOperation::Mod;
    n.Layer(LayerType::ElementwiseBinary, d, "mod_float", {&n.Input({4}), &n.Input({4})});
    const float inf = std::numeric_limits<float>::infinity();
    const auto out = RunLayerTestNetwork(n, {MakeTensor<float>({4}, DataType::Float32, {-4.0f, 7.0f, -3.0f, 1.0f}),
                                             MakeTensor<float>({4}, DataType::Float32, {3.0f, -3.0f, inf, 0.0f})});
    const std::vector<float> y = Floats(out[0]);
    EXPECT_EQ(y[0], 2.0f);   // numpy.mod(-4, 3)
    EXPECT_EQ(y[1], -2.0f);  // numpy.mod(7, -3)
    EXPECT_EQ(y[2], inf);    // numpy.mod(-3, inf)
    EXPECT_TRUE(std::isnan(y[3]));
}

// --- Dft: onesided with inverse (numpy.fft.irfft) ------------------------------------------------

TEST(OpsSamplingCache, DftOnesidedInverseRebuildsTheRealSignal) {
    LayerTestNetwork n;
    DftDescriptor d;
    d.m_Inverse = true;
    d.m_Onesided = true;
    n.Layer(LayerType::Dft, d, "dft_irfft", {&n.Input({1, 3, 2})});
    // numpy.fft.rfft([1, 2, 3, 4]) = [10, -2 + 2i, -2]; the length defaults to 2 * (3 - 1) = 4.
    const auto out = RunLayerTestNetwork(n, {MakeTensor<float>({1, 3, 2}, DataType::Float32, {10, 0, -2, 2, -2, 0})});
    EXPECT_EQ(out[0].m_Info.GetShape(), TensorShape({1, 4, 1}));
    ExpectNear(Floats(out[0]), {1, 2, 3, 4});
}

TEST(OpsSamplingCache, DftOnesidedInverseNeedsAComplexInput) {
    LayerTestNetwork n;
    DftDescriptor d;
    d.m_Inverse = true;
    d.m_Onesided = true;
    n.Layer(LayerType::Dft, d, "dft_irfft_real", {&n.Input({1, 3, 1})});
    ExpectRejected(n, "dft_irfft_real", "needs a complex input (last dim 2)");
}
