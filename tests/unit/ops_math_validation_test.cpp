// Validation + shape inference of the compute-heavy ops (Convolution, ConvolutionTranspose, Gemm,
// MatMul, Softmax, Pooling, BatchNormalization, LayerNormalization, Reduce, Resize): a bad layer
// makes Optimize() throw a message naming the layer and the broken rule; a good one resolves its
// descriptor (auto_pad, output_shape, global pooling, parameter inputs) into the inferred shape.
#include "TestHelpers.hpp"

#include <trellis/Trellis.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace trellis;

namespace {

using test::ExpectRejected;
using test::LayerTestNetwork;

ConvolutionDescriptor Conv(std::vector<unsigned int> pads = {}, unsigned int groups = 1) {
    ConvolutionDescriptor d;
    d.m_PadsBegin = pads;
    d.m_PadsEnd = pads;
    d.m_Groups = groups;
    return d;
}

}  // namespace

// --- Convolution ---------------------------------------------------------------------------

TEST(OpsMathValidation, ConvWeightChannelsTimesGroupMustEqualInputChannels) {
    LayerTestNetwork n;
    n.Layer(LayerType::Convolution, Conv(), "conv_bad_channels",
            {&n.Input({1, 4, 5, 5}), &n.ConstFilled({2, 3, 3, 3})});
    ExpectRejected(n, "conv_bad_channels", "W[1]=3 x group=1 must equal input channels X[1]=4");
}

TEST(OpsMathValidation, ConvOutputChannelsMustDivideByGroup) {
    LayerTestNetwork n;
    n.Layer(LayerType::Convolution, Conv({}, 2), "conv_bad_group",
            {&n.Input({1, 4, 5, 5}), &n.ConstFilled({3, 2, 3, 3})});
    ExpectRejected(n, "conv_bad_group", "output channels W[0]=3 must be divisible by group=2");
}

TEST(OpsMathValidation, ConvKernelLargerThanPaddedInput) {
    LayerTestNetwork n;
    n.Layer(LayerType::Convolution, Conv(), "conv_big_kernel", {&n.Input({1, 1, 2, 2}), &n.ConstFilled({1, 1, 3, 3})});
    ExpectRejected(n, "conv_big_kernel", "more than the padded input");
}

TEST(OpsMathValidation, ConvBiasMustHaveOneValuePerOutputChannel) {
    LayerTestNetwork n;
    n.Layer(LayerType::Convolution, Conv(), "conv_bad_bias",
            {&n.Input({1, 2, 5, 5}), &n.ConstFilled({4, 2, 3, 3}), &n.ConstFilled({3})});
    ExpectRejected(n, "conv_bad_bias", "one value per output channel");
}

TEST(OpsMathValidation, ConvSameUpperResolvesToExplicitPads) {
    LayerTestNetwork n;
    ConvolutionDescriptor d;
    d.m_Strides = {2, 2};
    d.m_AutoPad = PaddingMode::SameUpper;
    n.Layer(LayerType::Convolution, d, "conv_same", {&n.Input({1, 3, 7, 8}), &n.ConstFilled({4, 3, 3, 3})});
    auto opt = n.Optimize();
    EXPECT_EQ(n.OutputOf(*opt, "conv_same").GetShape(), TensorShape({1, 4, 4, 4}));
}

// Weights and bias need not be constants: CpuRef reads them at execute time.
TEST(OpsMathValidation, ConvRunsWithRuntimeWeightsAndBias) {
    LayerTestNetwork n;
    IOutputSlot& x = n.Input({1, 1, 3, 3});
    IOutputSlot& w = n.Input({1, 1, 2, 2});
    IOutputSlot& b = n.Input({1});
    n.Layer(LayerType::Convolution, Conv(), "conv_runtime_w", {&x, &w, &b});
    NetworkId id = 0;
    ASSERT_EQ(n.m_Runtime->LoadNetwork(id, n.Optimize()), Status::Success);
    const std::vector<float> xv = {1, 2, 3, 4, 5, 6, 7, 8, 9}, wv = {1, 0, 0, -1}, bv = {10};
    std::vector<float> y(4, 0.0f);
    n.m_Runtime->EnqueueWorkload(id,
                               {{0, ConstTensor(n.m_Runtime->GetInputTensorInfo(id, 0), xv.data())},
                                {1, ConstTensor(n.m_Runtime->GetInputTensorInfo(id, 1), wv.data())},
                                {2, ConstTensor(n.m_Runtime->GetInputTensorInfo(id, 2), bv.data())}},
                               {{0, Tensor(n.m_Runtime->GetOutputTensorInfo(id, 0), y.data())}});
    // Each output is x[i][j] - x[i+1][j+1] + 10 = -4 + 10.
    EXPECT_EQ(y, (std::vector<float>{6, 6, 6, 6}));
}

// --- ConvolutionTranspose ------------------------------------------------------------------

TEST(OpsMathValidation, ConvTransposeWeightsMustMatchInputChannels) {
    LayerTestNetwork n;
    n.Layer(LayerType::ConvolutionTranspose, Conv(), "deconv_bad_channels",
            {&n.Input({1, 4, 3, 3}), &n.ConstFilled({3, 2, 3, 3})});
    ExpectRejected(n, "deconv_bad_channels", "W[0]=3 must equal input channels X[1]=4");
}

TEST(OpsMathValidation, ConvTransposeOutputShapeResolvesToPads) {
    LayerTestNetwork n;
    ConvolutionDescriptor d;
    d.m_Strides = {2, 2};
    d.m_OutputShape = {10, 9};
    n.Layer(LayerType::ConvolutionTranspose, d, "deconv_output_shape",
            {&n.Input({1, 2, 5, 4}), &n.ConstFilled({2, 3, 3, 3})});
    auto opt = n.Optimize();
    EXPECT_EQ(n.OutputOf(*opt, "deconv_output_shape").GetShape(), TensorShape({1, 3, 10, 9}));
}

// --- Gemm / MatMul --------------------------------------------------------------------------

TEST(OpsMathValidation, GemmInnerDimsMustMatch) {
    LayerTestNetwork n;
    GemmDescriptor d;
    d.m_TransB = true;
    n.Layer(LayerType::Gemm, d, "gemm_bad_k", {&n.Input({2, 3}), &n.ConstFilled({5, 4})});
    ExpectRejected(n, "gemm_bad_k", "inner dims differ");
}

TEST(OpsMathValidation, GemmCMustBroadcastToOutput) {
    LayerTestNetwork n;
    n.Layer(LayerType::Gemm, GemmDescriptor{}, "gemm_bad_c",
            {&n.Input({2, 3}), &n.ConstFilled({3, 5}), &n.ConstFilled({3})});
    ExpectRejected(n, "gemm_bad_c", "must broadcast unidirectionally to the output 2x5");
}

TEST(OpsMathValidation, MatMulInnerDimsMustMatch) {
    LayerTestNetwork n;
    n.Layer(LayerType::MatMul, EmptyDescriptor{}, "matmul_bad_k", {&n.Input({2, 3}), &n.Input({4, 5})});
    ExpectRejected(n, "matmul_bad_k", "inner dims differ");
}

TEST(OpsMathValidation, MatMulBatchDimsMustBroadcast) {
    LayerTestNetwork n;
    n.Layer(LayerType::MatMul, EmptyDescriptor{}, "matmul_bad_batch", {&n.Input({2, 3, 4}), &n.Input({3, 4, 5})});
    ExpectRejected(n, "matmul_bad_batch", "cannot be broadcast together");
}

TEST(OpsMathValidation, MatMulBroadcastsBatchDims) {
    LayerTestNetwork n;
    n.Layer(LayerType::MatMul, EmptyDescriptor{}, "matmul_bcast", {&n.Input({2, 1, 3, 4}), &n.Input({5, 4, 6})});
    auto opt = n.Optimize();
    EXPECT_EQ(n.OutputOf(*opt, "matmul_bcast").GetShape(), TensorShape({2, 5, 3, 6}));
}

// --- Softmax ----------------------------------------------------------------------------------

TEST(OpsMathValidation, SoftmaxAxisOutOfRange) {
    LayerTestNetwork n;
    SoftmaxDescriptor d;
    d.m_Axis = 2;
    n.Layer(LayerType::Softmax, d, "softmax_bad_axis", {&n.Input({3, 4})});
    ExpectRejected(n, "softmax_bad_axis", "axis 2 is out of range for rank 2");
}

// --- Pooling ----------------------------------------------------------------------------------

TEST(OpsMathValidation, PoolKernelLargerThanPaddedInput) {
    LayerTestNetwork n;
    PoolingDescriptor d;
    d.m_KernelShape = {5, 5};
    n.Layer(LayerType::Pooling, d, "pool_big_kernel", {&n.Input({1, 2, 3, 3})});
    ExpectRejected(n, "pool_big_kernel", "more than the padded input");
}

TEST(OpsMathValidation, PoolWindowWhollyInPadding) {
    LayerTestNetwork n;
    PoolingDescriptor d;
    d.m_KernelShape = {2, 2};
    d.m_PadsBegin = {2, 0};
    d.m_PadsEnd = {0, 0};
    n.Layer(LayerType::Pooling, d, "pool_pad_window", {&n.Input({1, 2, 4, 4})});
    ExpectRejected(n, "pool_pad_window", "lies wholly in padding");
}

TEST(OpsMathValidation, PoolNeedsKernelShape) {
    LayerTestNetwork n;
    n.Layer(LayerType::Pooling, PoolingDescriptor{}, "pool_no_kernel", {&n.Input({1, 2, 4, 4})});
    ExpectRejected(n, "pool_no_kernel", "kernel_shape is required");
}

TEST(OpsMathValidation, GlobalPoolAndCeilModeShapes) {
    LayerTestNetwork n;
    PoolingDescriptor g;
    g.m_Global = true;
    g.m_Algorithm = PoolingAlgorithm::Average;
    PoolingDescriptor c;
    c.m_KernelShape = {2, 2};
    c.m_Strides = {2, 2};
    c.m_PadsBegin = {0, 0};
    c.m_PadsEnd = {1, 1};
    c.m_CeilMode = true;
    IOutputSlot& x = n.Input({1, 3, 6, 6});
    n.Layer(LayerType::Pooling, g, "pool_global", {&x});
    auto* l = n.m_Net->AddLayer(LayerType::Pooling, c, "pool_ceil", 1);
    x.Connect(l->GetInputSlot(0));
    l->GetOutputSlot(0).Connect(n.m_Net->AddOutputLayer(1)->GetInputSlot(0));
    auto opt = n.Optimize();
    EXPECT_EQ(n.OutputOf(*opt, "pool_global").GetShape(), TensorShape({1, 3, 1, 1}));
    // ceil((6 + 1 - 2) / 2) + 1 = 4, but the 4th window would start at 6, past the input: 3.
    EXPECT_EQ(n.OutputOf(*opt, "pool_ceil").GetShape(), TensorShape({1, 3, 3, 3}));
}

// --- BatchNormalization / LayerNormalization --------------------------------------------------

TEST(OpsMathValidation, BatchNormParamsNeedOneValuePerChannel) {
    LayerTestNetwork n;
    n.Layer(LayerType::BatchNormalization, BatchNormalizationDescriptor{}, "bn_bad_scale",
            {&n.Input({1, 4, 3, 3}), &n.ConstFilled({3}), &n.ConstFilled({4}), &n.ConstFilled({4}),
             &n.ConstFilled({4}, 1.0f)});
    ExpectRejected(n, "bn_bad_scale", "scale 3 must be 1-D with one value per channel (X[1]=4");
}

TEST(OpsMathValidation, LayerNormScaleMustBroadcastToInput) {
    LayerTestNetwork n;
    n.Layer(LayerType::LayerNormalization, LayerNormalizationDescriptor{}, "ln_bad_scale",
            {&n.Input({2, 3, 4}), &n.ConstFilled({5})});
    ExpectRejected(n, "ln_bad_scale", "scale 5 must broadcast unidirectionally to X 2x3x4");
}

TEST(OpsMathValidation, LayerNormAxisOutOfRange) {
    LayerTestNetwork n;
    LayerNormalizationDescriptor d;
    d.m_Axis = -4;
    n.Layer(LayerType::LayerNormalization, d, "ln_bad_axis", {&n.Input({2, 3, 4}), &n.ConstFilled({4})});
    ExpectRejected(n, "ln_bad_axis", "axis -4 is out of range for rank 3");
}

// --- Reduce -----------------------------------------------------------------------------------

TEST(OpsMathValidation, ReduceAxisOutOfRange) {
    LayerTestNetwork n;
    ReduceDescriptor d;
    d.m_Axes = {3};
    n.Layer(LayerType::Reduce, d, "reduce_bad_axis", {&n.Input({2, 3})});
    ExpectRejected(n, "reduce_bad_axis", "axes entry 3 is out of range for rank 2");
}

TEST(OpsMathValidation, ReduceAxisGivenTwice) {
    LayerTestNetwork n;
    ReduceDescriptor d;
    d.m_Operation = ReduceOperation::Sum;
    n.Layer(LayerType::Reduce, d, "reduce_dup_axes", {&n.Input({2, 3, 4}), &n.ConstInts({1, -2})});
    ExpectRejected(n, "reduce_dup_axes", "name a dim more than once");
}

TEST(OpsMathValidation, ReduceAxesInputIsFolded) {
    LayerTestNetwork n;
    ReduceDescriptor d;
    d.m_Operation = ReduceOperation::Sum;
    d.m_KeepDims = false;
    n.Layer(LayerType::Reduce, d, "reduce_axes_input", {&n.Input({2, 3, 4}), &n.ConstInts({-1, 0})});
    auto opt = n.Optimize();
    EXPECT_EQ(n.OutputOf(*opt, "reduce_axes_input").GetShape(), TensorShape({3}));
}

// --- Resize -----------------------------------------------------------------------------------

TEST(OpsMathValidation, ResizeScalesNeedOneEntryPerDim) {
    LayerTestNetwork n;
    ResizeDescriptor d;
    d.m_Scales = {2.0f, 2.0f};
    n.Layer(LayerType::Resize, d, "resize_bad_scales", {&n.Input({1, 1, 2, 2})});
    ExpectRejected(n, "resize_bad_scales", "scales has 2 entries but X 1x1x2x2 has rank 4");
}

TEST(OpsMathValidation, ResizeNeedsScalesOrSizes) {
    LayerTestNetwork n;
    n.Layer(LayerType::Resize, ResizeDescriptor{}, "resize_no_scales", {&n.Input({1, 1, 2, 2})});
    ExpectRejected(n, "resize_no_scales", "needs scales (input 2) or sizes (input 3)");
}

TEST(OpsMathValidation, ResizeSizesInputIsFolded) {
    LayerTestNetwork n;
    IOutputSlot& x = n.Input({1, 2, 4, 5});
    IOutputSlot& roi = n.ConstFilled({0});
    IOutputSlot& scales = n.ConstFilled({0});
    n.Layer(LayerType::Resize, ResizeDescriptor{}, "resize_sizes", {&x, &roi, &scales, &n.ConstInts({1, 2, 7, 3})});
    auto opt = n.Optimize();
    EXPECT_EQ(n.OutputOf(*opt, "resize_sizes").GetShape(), TensorShape({1, 2, 7, 3}));
}
