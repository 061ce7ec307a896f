// Validation and run-time errors of the resampling, signal and detection operators (Resize's
// cubic mode and tf_crop_and_resize, GridSample, RoiAlign, Det, Window, Dft, Stft,
// MelWeightMatrix, TfIdfVectorizer): a bad layer makes Optimize() throw naming the layer and the
// rule; a parameter input fed by the graph makes the network dynamic; a bad value that only
// arrives with the inputs makes the run throw naming the layer. Numerical results are checked by
// the op cases (tests/ops/cases_signal.py) and the ONNX test data.
#include "TestHelpers.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

using namespace trellis;
using trellis::test::ExpectRejected;
using trellis::test::ExpectRunFails;
using trellis::test::LayerTestNetwork;

// --- Resize ------------------------------------------------------------------------------------

TEST(OpsSignalValidation, ResizeCropNeedsTwoRoiValuesPerDim) {
    LayerTestNetwork n;
    ResizeDescriptor d;
    d.m_Mode = ResizeMode::Linear;
    d.m_CoordinateTransform = CoordinateTransform::TfCropAndResize;
    IOutputSlot& x = n.Input({1, 1, 4, 4});
    n.Layer(LayerType::Resize, d, "resize_crop_roi",
            {&x, &n.ConstFloats({0, 0, 1, 1}, {4}), &n.ConstFloats({1, 1, 2, 2}, {4})});
    ExpectRejected(n, "resize_crop_roi", "roi has 4 values but X 1x1x4x4 has rank 4");
}

TEST(OpsSignalValidation, ResizeCropRoiFromTheGraphMakesTheNetworkDynamic) {
    LayerTestNetwork n;
    ResizeDescriptor d;
    d.m_CoordinateTransform = CoordinateTransform::TfCropAndResize;
    d.m_Sizes = {1, 1, 2, 2};
    IOutputSlot& x = n.Input({1, 1, 4, 4});
    n.Layer(LayerType::Resize, d, "resize_crop_input_roi", {&x, &n.Input({8})});
    trellis::test::ExpectOptimizeDefers(n, "resize_crop_input_roi", "input 1 (roi)");
}

TEST(OpsSignalValidation, ResizeCubicNeedsFiniteCoefficient) {
    LayerTestNetwork n;
    ResizeDescriptor d;
    d.m_Mode = ResizeMode::Cubic;
    d.m_CubicCoeffA = std::nanf("");
    d.m_Scales = {1, 1, 2, 2};
    n.Layer(LayerType::Resize, d, "resize_cubic_nan", {&n.Input({1, 1, 4, 4})});
    ExpectRejected(n, "resize_cubic_nan", "cubic_coeff_a=nan must be finite");
}

TEST(OpsSignalValidation, ResizeCubicOnIntegersIsUnsupportedWithReason) {
    LayerTestNetwork n;
    ResizeDescriptor d;
    d.m_Mode = ResizeMode::Cubic;
    d.m_Scales = {1, 1, 2, 2};
    n.Layer(LayerType::Resize, d, "resize_cubic_int", {&n.Input({1, 1, 4, 4}, DataType::Signed32)});
    ExpectRejected(n, "resize_cubic_int", "cubic mode on data type Signed32 not supported by CpuRef");
}

// --- GridSample, RoiAlign, Det --------------------------------------------------------------------

TEST(OpsSignalValidation, GridSampleGridNeedsXYPairs) {
    LayerTestNetwork n;
    n.Layer(LayerType::GridSample, GridSampleDescriptor{}, "grid_xyz", {&n.Input({1, 2, 4, 4}), &n.Input({1, 3, 3, 3})});
    ExpectRejected(n, "grid_xyz", "must have 2 entries (x, y) in its last dim");
}

TEST(OpsSignalValidation, GridSampleBatchesMustMatch) {
    LayerTestNetwork n;
    n.Layer(LayerType::GridSample, GridSampleDescriptor{}, "grid_batch", {&n.Input({2, 1, 4, 4}), &n.Input({3, 2, 2, 2})});
    ExpectRejected(n, "grid_batch", "has batch 3 but X 2x1x4x4 has batch 2");
}

TEST(OpsSignalValidation, GridSampleGridRankMatchesX) {
    LayerTestNetwork n;
    n.Layer(LayerType::GridSample, GridSampleDescriptor{}, "grid_5d", {&n.Input({1, 1, 2, 4, 4}), &n.Input({1, 2, 2, 2})});
    ExpectRejected(n, "grid_5d", "rank");
}

TEST(OpsSignalValidation, GridSampleIsFourOrFiveDimensional) {
    LayerTestNetwork n;
    n.Layer(LayerType::GridSample, GridSampleDescriptor{}, "grid_3d", {&n.Input({1, 2, 4}), &n.Input({1, 2, 1})});
    ExpectRejected(n, "grid_3d", "must have rank 4 (N, C, H, W) or 5 (N, C, D, H, W)");
}

TEST(OpsSignalValidation, RoiAlignRoisHaveFourCorners) {
    LayerTestNetwork n;
    n.Layer(LayerType::RoiAlign, RoiAlignDescriptor{}, "roi_five",
            {&n.Input({1, 1, 8, 8}), &n.Input({2, 5}), &n.Input({2}, DataType::Signed64)});
    ExpectRejected(n, "roi_five", "must have 4 values (x1, y1, x2, y2) per row");
}

TEST(OpsSignalValidation, RoiAlignNeedsOneBatchIndexPerRoi) {
    LayerTestNetwork n;
    n.Layer(LayerType::RoiAlign, RoiAlignDescriptor{}, "roi_indices",
            {&n.Input({1, 1, 8, 8}), &n.Input({2, 4}), &n.Input({3}, DataType::Signed64)});
    ExpectRejected(n, "roi_indices", "batch_indices 3 must have one entry per roi");
}

TEST(OpsSignalValidation, RoiAlignBatchIndexOutOfRangeFailsTheRun) {
    LayerTestNetwork n;
    RoiAlignDescriptor d;
    d.m_OutputHeight = 2;
    d.m_OutputWidth = 2;
    n.Layer(LayerType::RoiAlign, d, "roi_bad_batch",
            {&n.Input({1, 1, 4, 4}), &n.Input({1, 4}), &n.Input({1}, DataType::Signed64)});
    const std::vector<float> x(16, 1.0f), rois{0, 0, 3, 3};
    const std::vector<int64_t> batch{1};
    ExpectRunFails(n,
                   {{TensorInfo({1, 1, 4, 4}, DataType::Float32), x.data()},
                    {TensorInfo({1, 4}, DataType::Float32), rois.data()},
                    {TensorInfo({1}, DataType::Signed64), batch.data()}},
                   "roi_bad_batch", "batch_indices[0]=1 is outside [0, 1)");
}

TEST(OpsSignalValidation, DetNeedsSquareMatrices) {
    LayerTestNetwork n;
    n.Layer(LayerType::Det, EmptyDescriptor{}, "det_rect", {&n.Input({2, 3, 4})});
    ExpectRejected(n, "det_rect", "must be (..., M, M)");
}

TEST(OpsSignalValidation, DetOfIntegersIsRefused) {
    LayerTestNetwork n;
    n.Layer(LayerType::Det, EmptyDescriptor{}, "det_int", {&n.Input({3, 3}, DataType::Signed32)});
    ExpectRejected(n, "det_int", "Signed32");
}

// --- Window, Dft, Stft, MelWeightMatrix -----------------------------------------------------------

TEST(OpsSignalValidation, WindowSizeFromTheGraphIsReadPerRun) {
    LayerTestNetwork n;
    n.Layer(LayerType::Window, WindowDescriptor{}, "hann_input_size", {&n.Input({}, DataType::Signed32)});
    trellis::test::ExpectOptimizeDefers(n, "hann_input_size", "input 0 (size)");
    // Run with size 4 and then 6: periodic Hann, 0.5 - 0.5 cos(2 pi k / size).
    for (int32_t size : {4, 6}) {
        const auto outs = trellis::test::RunLayerTestNetwork(
            n, {trellis::test::MakeTensor<int32_t>(TensorShape{}, DataType::Signed32, {size})});
        ASSERT_EQ(outs.size(), 1u);
        ASSERT_EQ(outs[0].m_Info.GetShape(), TensorShape({static_cast<unsigned int>(size)}));
        for (int32_t k = 0; k < size; ++k) {
            EXPECT_NEAR(trellis::test::ToDouble(outs[0], static_cast<std::size_t>(k)),
                        0.5 - 0.5 * std::cos(2.0 * std::numbers::pi * k / size), 1e-6) << "size " << size << ", k " << k;
        }
    }
}

TEST(OpsSignalValidation, WindowSizeMustNotBeNegative) {
    LayerTestNetwork n;
    n.Layer(LayerType::Window, WindowDescriptor{}, "hann_negative", {&n.ConstInts({-3}, TensorShape{})});
    ExpectRejected(n, "hann_negative", "size=-3 must lie in [0, 2^32)");
}

TEST(OpsSignalValidation, DftAxisMustBeASignalDim) {
    for (int64_t axis : {0, 3, -1}) {
        LayerTestNetwork n;
        DftDescriptor d;
        d.m_Axis = axis;
        n.Layer(LayerType::Dft, d, "dft_axis", {&n.Input({1, 4, 5, 1})});
        ExpectRejected(n, "dft_axis", "axis=" + std::to_string(axis) + " must name a signal dim");
    }
}

TEST(OpsSignalValidation, DftAxisInputIsOneValueNamingASignalDim) {
    {
        // DFT-20's axis as input 2 (input 1, dft_length, omitted): two values are refused.
        LayerTestNetwork n;
        n.Layer(LayerType::Dft, DftDescriptor{}, "dft_axis_pair",
                {&n.Input({1, 4, 5, 1}), &n.ConstInts({}, TensorShape{0}), &n.ConstInts({1, 2}, TensorShape{2})});
        ExpectRejected(n, "dft_axis_pair", "axis 2 must be a scalar");
    }
    {
        LayerTestNetwork n;  // the batch dim is no signal dim, whichever input names it
        n.Layer(LayerType::Dft, DftDescriptor{}, "dft_axis_batch",
                {&n.Input({1, 4, 5, 1}), &n.ConstInts({}, TensorShape{0}), &n.ConstInts({0}, TensorShape{})});
        ExpectRejected(n, "dft_axis_batch", "axis=0 must name a signal dim");
    }
}

TEST(OpsSignalValidation, DftInputEndsInRealOrComplex) {
    LayerTestNetwork n;
    n.Layer(LayerType::Dft, DftDescriptor{}, "dft_last3", {&n.Input({1, 4, 3})});
    ExpectRejected(n, "dft_last3", "must end in a dim of 1 (real) or 2 (complex), not 3");
}

TEST(OpsSignalValidation, DftOnesidedNeedsRealInput) {
    LayerTestNetwork n;
    DftDescriptor d;
    d.m_Onesided = true;
    n.Layer(LayerType::Dft, d, "dft_onesided_complex", {&n.Input({1, 8, 2})});
    ExpectRejected(n, "dft_onesided_complex", "onesided=1 needs a real input");
}

TEST(OpsSignalValidation, DftLengthFromTheGraphMakesTheNetworkDynamic) {
    LayerTestNetwork n;
    n.Layer(LayerType::Dft, DftDescriptor{}, "dft_input_length", {&n.Input({1, 8, 1}), &n.Input({}, DataType::Signed64)});
    trellis::test::ExpectOptimizeDefers(n, "dft_input_length", "input 1 (dft_length)");
}

TEST(OpsSignalValidation, StftFrameStepFromTheGraphMakesTheNetworkDynamic) {
    LayerTestNetwork n;
    n.Layer(LayerType::Stft, StftDescriptor{}, "stft_input_step",
            {&n.Input({1, 32, 1}), &n.Input({}, DataType::Signed64), &n.Input({8})});
    trellis::test::ExpectOptimizeDefers(n, "stft_input_step", "input 1 (frame_step)");
}

TEST(OpsSignalValidation, StftFrameMustFitTheSignal) {
    LayerTestNetwork n;
    n.Layer(LayerType::Stft, StftDescriptor{}, "stft_long_frame",
            {&n.Input({1, 10, 1}), &n.ConstInts({2}, TensorShape{}), &n.Input({12})});
    ExpectRejected(n, "stft_long_frame", "frame_length=12 must lie in [1, signal length 10]");
}

TEST(OpsSignalValidation, StftWindowAndFrameLengthMustAgree) {
    LayerTestNetwork n;
    n.Layer(LayerType::Stft, StftDescriptor{}, "stft_disagree",
            {&n.Input({1, 30, 1}), &n.ConstInts({2}, TensorShape{}), &n.Input({8}), &n.ConstInts({6}, TensorShape{})});
    ExpectRejected(n, "stft_disagree", "window has 8 values but frame_length=6");
}

TEST(OpsSignalValidation, StftNeedsAFrameLength) {
    LayerTestNetwork n;
    n.Layer(LayerType::Stft, StftDescriptor{}, "stft_no_length", {&n.Input({1, 30, 1}), &n.ConstInts({2}, TensorShape{})});
    ExpectRejected(n, "stft_no_length", "needs a window (input 2) or frame_length (input 3)");
}

TEST(OpsSignalValidation, MelWeightMatrixEdgesMustBeOrdered) {
    LayerTestNetwork n;
    MelWeightMatrixDescriptor d;
    d.m_NumMelBins = 4;
    d.m_DftLength = 16;
    d.m_SampleRate = 8000;
    d.m_LowerEdgeHertz = 3000.0f;
    d.m_UpperEdgeHertz = 1000.0f;
    n.Layer(LayerType::MelWeightMatrix, d, "mel_edges", {});
    ExpectRejected(n, "mel_edges", "need 0 <= lower < upper");
}

TEST(OpsSignalValidation, MelWeightMatrixFiltersMustFitTheSpectrogram) {
    // Odd dft_length with upper_edge_hertz at the sample rate: the last filter lands past the
    // last of the dft_length / 2 + 1 bins. All inputs are constant, so the layer is folded, and
    // refused, when the network is optimized.
    LayerTestNetwork n;
    MelWeightMatrixDescriptor d;
    d.m_NumMelBins = 2;
    d.m_DftLength = 15;
    d.m_SampleRate = 100;
    d.m_LowerEdgeHertz = 0.0f;
    d.m_UpperEdgeHertz = 100.0f;
    n.Layer(LayerType::MelWeightMatrix, d, "mel_too_high", {});
    ExpectRejected(n, "mel_too_high", "upper_edge_hertz must not exceed sample_rate / 2");
}

TEST(OpsSignalValidation, MelWeightMatrixInputFromTheGraphMakesTheNetworkDynamic) {
    LayerTestNetwork n;
    n.Layer(LayerType::MelWeightMatrix, MelWeightMatrixDescriptor{}, "mel_input",
            {&n.ConstInts({8}, TensorShape{}), &n.Input({}, DataType::Signed64), &n.ConstInts({8000}, TensorShape{}),
             &n.ConstFloats({0.0f}, TensorShape{}), &n.ConstFloats({4000.0f}, TensorShape{})});
    trellis::test::ExpectOptimizeDefers(n, "mel_input", "input 1 (dft_length)");
}

// --- TfIdfVectorizer ------------------------------------------------------------------------------

TEST(OpsSignalValidation, TfIdfNeedsOneOutputIndexPerNgram) {
    LayerTestNetwork n;
    TfIdfVectorizerDescriptor d;
    d.m_MinGramLength = 1;
    d.m_MaxGramLength = 2;
    d.m_NgramCounts = {0, 2};
    d.m_Pool = {1, 2, 3, 4, 5, 6};  // 2 unigrams, 2 bigrams
    d.m_NgramIndexes = {0, 1, 2};
    n.Layer(LayerType::TfIdfVectorizer, d, "tfidf_indexes", {&n.Input({8}, DataType::Signed64)});
    ExpectRejected(n, "tfidf_indexes", "ngram_indexes has 3 entries but the pool holds 4 n-grams");
}

TEST(OpsSignalValidation, TfIdfPoolBlocksHoldWholeNgrams) {
    LayerTestNetwork n;
    TfIdfVectorizerDescriptor d;
    d.m_MinGramLength = 2;
    d.m_MaxGramLength = 2;
    d.m_NgramCounts = {0, 1};
    d.m_Pool = {1, 2, 3, 4};  // one unigram, then 3 values: not whole bigrams
    d.m_NgramIndexes = {0, 1};
    n.Layer(LayerType::TfIdfVectorizer, d, "tfidf_pool", {&n.Input({8}, DataType::Signed64)});
    ExpectRejected(n, "tfidf_pool", "does not hold whole 2-grams");
}

TEST(OpsSignalValidation, TfIdfTakesIntegerTokens) {
    LayerTestNetwork n;
    TfIdfVectorizerDescriptor d;
    d.m_NgramCounts = {0};
    d.m_Pool = {1};
    d.m_NgramIndexes = {0};
    n.Layer(LayerType::TfIdfVectorizer, d, "tfidf_float", {&n.Input({8})});
    ExpectRejected(n, "tfidf_float", "Float32");
}

// --- Inputs no sampling rule can place: a clean error or NaN, never a wild read ---------------------

TEST(OpsSignalValidation, RoiAlignNonFiniteRoiFailsTheRun) {
    LayerTestNetwork n;
    n.Layer(LayerType::RoiAlign, RoiAlignDescriptor{}, "roi_nan",
            {&n.Input({1, 1, 4, 4}), &n.Input({1, 4}), &n.Input({1}, DataType::Signed64)});
    const std::vector<float> x(16, 1.0f), rois{0, std::nanf(""), 3, 3};
    const std::vector<int64_t> batch{0};
    ExpectRunFails(n,
                   {{TensorInfo({1, 1, 4, 4}, DataType::Float32), x.data()},
                    {TensorInfo({1, 4}, DataType::Float32), rois.data()},
                    {TensorInfo({1}, DataType::Signed64), batch.data()}},
                   "roi_nan", "roi 0 has a non-finite coordinate");
}

TEST(OpsSignalValidation, RoiAlignHugeAdaptiveRoiFailsTheRun) {
    LayerTestNetwork n;
    n.Layer(LayerType::RoiAlign, RoiAlignDescriptor{}, "roi_huge",
            {&n.Input({1, 1, 4, 4}), &n.Input({1, 4}), &n.Input({1}, DataType::Signed64)});
    const std::vector<float> x(16, 1.0f), rois{0, 0, 1e20f, 1e20f};
    const std::vector<int64_t> batch{0};
    ExpectRunFails(n,
                   {{TensorInfo({1, 1, 4, 4}, DataType::Float32), x.data()},
                    {TensorInfo({1, 4}, DataType::Float32), rois.data()},
                    {TensorInfo({1}, DataType::Signed64), batch.data()}},
                   "roi_huge", "more than 2^26 samples in all are refused");
}

TEST(OpsSignalValidation, GridSampleNonFiniteAndFarGridValuesAreSafe) {
    const float inf = std::numeric_limits<float>::infinity();
    const std::vector<float> x{1, 2, 3, 4};
    const std::vector<float> grid{std::nanf(""), 0.0f, inf, 0.0f, -1e30f, 1e30f, 0.0f, 0.0f};
    for (GridSamplePadding padding : {GridSamplePadding::Zeros, GridSamplePadding::Border, GridSamplePadding::Reflection}) {
        for (GridSampleMode mode : {GridSampleMode::Bilinear, GridSampleMode::Nearest, GridSampleMode::Bicubic}) {
            LayerTestNetwork n;
            GridSampleDescriptor d;
            d.m_Mode = mode;
            d.m_Padding = padding;
            n.Layer(LayerType::GridSample, d, "grid_far", {&n.Input({1, 1, 2, 2}), &n.Input({1, 1, 4, 2})});
            NetworkId id;
            ASSERT_EQ(n.m_Runtime->LoadNetwork(id, n.Optimize()), Status::Success);
            TensorInfo xi({1, 1, 2, 2}, DataType::Float32), gi({1, 1, 4, 2}, DataType::Float32);
            xi.SetConstant(true);
            gi.SetConstant(true);
            std::vector<float> y(4, -7.0f);
            n.m_Runtime->EnqueueWorkload(id, {{0, ConstTensor(xi, x.data())}, {1, ConstTensor(gi, grid.data())}},
                                         {{0, Tensor(n.m_Runtime->GetOutputTensorInfo(id, 0), y.data())}});
            EXPECT_TRUE(std::isnan(y[0]));  // NaN coordinate
            if (padding == GridSamplePadding::Zeros) {
                EXPECT_EQ(y[1], 0.0f);
                EXPECT_EQ(y[2], 0.0f);
            } else if (padding == GridSamplePadding::Border) {
                EXPECT_TRUE(std::isfinite(y[1]) && std::isfinite(y[2])) << y[1] << " " << y[2];
            } else {
                EXPECT_TRUE(std::isnan(y[1]));  // infinity cannot be reflected
                EXPECT_TRUE(std::isfinite(y[2])) << y[2];
            }
            EXPECT_TRUE(std::isfinite(y[3]));
        }
    }
}

TEST(OpsSignalValidation, ResizeCropRoiMustBeFinite) {
    LayerTestNetwork n;
    ResizeDescriptor d;
    d.m_CoordinateTransform = CoordinateTransform::TfCropAndResize;
    d.m_Sizes = {1, 1, 2, 2};
    IOutputSlot& x = n.Input({1, 1, 4, 4});
    n.Layer(LayerType::Resize, d, "resize_crop_nan",
            {&x, &n.ConstFloats({0, 0, std::nanf(""), 0, 1, 1, 1, 1}, {8})});
    ExpectRejected(n, "resize_crop_nan", "every roi value must be finite");
}
