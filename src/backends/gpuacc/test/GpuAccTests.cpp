// GpuAcc against CpuRef: every op GpuAcc claims, over shapes that break kernels (13, 127, size-1
// and broadcast dims, strided views from transposes and NHWC convolutions), the fusions (each
// checked to have happened, and to compute the same), the precision modes, CUDA graph capture and
// replay, working memory (no device allocation once warm), concurrency, bad options, fallback to
// the CPU with the bytes copied, and the PyTorch-exported models.
//
// These tests need a GPU: on a machine without one (CI, the build machine) each is skipped with
// the driver's reason, except the first, which checks that the reason is there and that the
// optimizer places everything on the CPU backends because of it.
#include "support/BackendComparisonNetwork.hpp"
#include "unit/TestHelpers.hpp"

#include <trellis/Trellis.hpp>
#include <trellis/backends/BackendRegistry.hpp>

#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <atomic>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <thread>

using namespace trellis;
using namespace trellis::test;

namespace {

std::string UnavailableReason() {
    std::string reason;
    if (BackendRegistryInstance().IsBackendAvailable("GpuAcc", &reason)) return "";
    return reason;
}

#define SKIP_WITHOUT_GPU()                                                                   \
    do {                                                                                     \
        const std::string why = UnavailableReason();                                         \
        if (!why.empty()) GTEST_SKIP() << "GpuAcc is not available here: " << why;          \
    } while (false)

/// A small network built through the public API, run on GpuAcc and on CpuRef and compared. Its
/// reports list the optimizer's log, and its float outputs start as bytes 0xAB.
class Net : public BackendComparisonNetwork {
public:
    Net() {
        m_ReportOptimizationLog = true;
        m_FloatOutputPoison = std::bit_cast<float>(0xABABABABu);
    }

    IOutputSlot* Conv(IOutputSlot* x, unsigned int k, unsigned int c, unsigned int kernel, unsigned int stride = 1,
                      unsigned int pad = 0, unsigned int groups = 1, bool bias = true, unsigned int dilation = 1,
                      float scale = 0.3f) {
        ConvolutionDescriptor d;
        d.m_KernelShape = {kernel, kernel};
        d.m_Strides = {stride, stride};
        d.m_Dilations = {dilation, dilation};
        d.m_PadsBegin = {pad, pad};
        d.m_PadsEnd = {pad, pad};
        d.m_Groups = groups;
        std::vector<IOutputSlot*> ins{x, Const({k, c / groups, kernel, kernel}, scale)};
        if (bias) ins.push_back(Const({k}));
        return Op(LayerType::Convolution, d, ins);
    }
    /// Runs on GpuAcc (CpuRef behind it) and on CpuRef alone; every output must agree within
    /// `tolerance` relative L2 (and no element may be left unwritten).
    Result Check(double tolerance, const std::string& what, const IRuntime::CreationOptions& options = {},
                 bool allOnGpu = true) {
        Result gpu = Run({"GpuAcc", "CpuRef"}, options);
        Result ref = Run({"CpuRef"});
        EXPECT_TRUE(gpu.m_Counts.count("GpuAcc")) << what << ": nothing ran on GpuAcc\n" << gpu.m_Optimized;
        if (allOnGpu) {
            EXPECT_FALSE(gpu.m_Counts.count("CpuRef")) << what << ": something fell back to CpuRef\n" << gpu.m_Optimized;
        }
        for (std::size_t o = 0; o < ref.m_Outputs.size(); ++o) {
            const auto& a = gpu.m_Outputs[o];
            const auto& r = ref.m_Outputs[o];
            EXPECT_EQ(a.size(), r.size()) << what << ": output " << o;
            if (a.size() != r.size()) continue;
            double worst = 0;
            for (std::size_t i = 0; i < r.size(); ++i) {
                if (std::isnan(r[i])) continue;
                worst = std::max(worst, static_cast<double>(std::fabs(a[i] - r[i])));
            }
            const double rel = RelativeL2(a, r);
            EXPECT_LT(rel, tolerance) << what << ": output " << o << " relative L2 " << rel << ", worst element diff "
                                      << worst << "\n" << gpu.m_Optimized;
        }
        return gpu;
    }
};

IRuntime::CreationOptions WithOption(const char* name, const char* value) {
    IRuntime::CreationOptions o;
    o.m_BackendOptions["GpuAcc"][name] = value;
    return o;
}

// ---- availability (runs everywhere) ---------------------------------------------------------------

TEST(GpuAccAvailability, WithoutAGpuEverythingRunsOnTheCpuWithTheDriversReason) {
    ASSERT_TRUE(BackendRegistryInstance().IsBackendRegistered("GpuAcc"));
    const std::string why = UnavailableReason();
    Net net;
    IOutputSlot* x = net.Input({2, 5});
    net.Output(net.Unary(UnaryOperation::Relu, net.Binary(BinaryOperation::Add, x, net.Const({5}))));
    const Net::Result r = net.Run({"GpuAcc", "CpuRef"});
    if (why.empty()) {
        std::cout << "GpuAcc is available here\n";
        EXPECT_EQ(r.m_Counts.count("CpuRef"), 0u) << r.m_Optimized;
        return;
    }
    std::cout << "GpuAcc is not available here: " << why << "\n";
    EXPECT_EQ(r.m_Counts.count("GpuAcc"), 0u) << r.m_Optimized;
    EXPECT_EQ(r.m_Counts.at("CpuRef"), 2u) << r.m_Optimized;
    EXPECT_NE(r.m_Optimized.find("declined by GpuAcc: GpuAcc is not available: " + why), std::string::npos)
        << r.m_Optimized;
}

// ---- convolutions -----------------------------------------------------------------------------------

struct ConvCase {
    const char* m_Name;
    unsigned int n, c, h, w, k, kernel, stride, dilation, pad, groups;
    bool bias;
};

class GpuAccConv : public ::testing::TestWithParam<ConvCase> {};

TEST_P(GpuAccConv, MatchesCpuRef) {
    SKIP_WITHOUT_GPU();
    const ConvCase& p = GetParam();
    Net net;
    net.Output(net.Conv(net.Input({p.n, p.c, p.h, p.w}), p.k, p.c, p.kernel, p.stride, p.pad, p.groups, p.bias,
                        p.dilation));
    net.Check(1e-5, p.m_Name);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, GpuAccConv,
    ::testing::Values(ConvCase{"odd_channels_3x3", 1, 3, 17, 13, 5, 3, 1, 1, 1, 1, true},
                      ConvCase{"1x1_127", 1, 127, 9, 9, 13, 1, 1, 1, 0, 1, true},
                      ConvCase{"7x7_stride2", 2, 3, 31, 29, 16, 7, 2, 1, 3, 1, true},
                      ConvCase{"dilated", 1, 8, 15, 15, 8, 3, 1, 2, 2, 1, false},
                      ConvCase{"groups", 1, 12, 10, 10, 18, 3, 1, 1, 1, 3, true},
                      ConvCase{"depthwise_stride2", 1, 32, 14, 14, 32, 3, 2, 1, 1, 32, true},
                      ConvCase{"depthwise_odd", 1, 7, 9, 11, 7, 5, 1, 1, 2, 7, false},
                      ConvCase{"one_pixel", 3, 16, 1, 1, 24, 1, 1, 1, 0, 1, true},
                      ConvCase{"stride3_nopad", 2, 5, 13, 13, 6, 2, 3, 1, 0, 1, true}),
    [](const ::testing::TestParamInfo<ConvCase>& info) { return std::string(info.param.m_Name); });

TEST(GpuAccFusion, ResNetBlockIsOneRegionWithFusedEpilogues) {
    SKIP_WITHOUT_GPU();
    Net net;
    IOutputSlot* x = net.Input({2, 16, 12, 12});
    IOutputSlot* r1 = net.Unary(UnaryOperation::Relu, net.Conv(x, 16, 16, 3, 1, 1));
    IOutputSlot* c2 = net.Conv(r1, 16, 16, 3, 1, 1);
    IOutputSlot* r2 = net.Unary(UnaryOperation::Relu, net.Binary(BinaryOperation::Add, c2, r1));
    PoolingDescriptor pool;
    pool.m_KernelShape = {3, 3};
    pool.m_Strides = {2, 2};
    pool.m_CeilMode = true;
    IOutputSlot* p = net.Op(LayerType::Pooling, pool, {r2});
    PoolingDescriptor gap;
    gap.m_Algorithm = PoolingAlgorithm::Average;
    gap.m_Global = true;
    ReshapeDescriptor flat;
    flat.m_TargetShape = {2, 16};
    GemmDescriptor gd;
    gd.m_TransB = true;
    net.Output(net.Op(LayerType::Gemm, gd,
                      {net.Op(LayerType::Reshape, flat, {net.Op(LayerType::Pooling, gap, {p})}), net.Const({10, 16}),
                       net.Const({10})}));
    const Net::Result r = net.Check(1e-5, "resnet block");
    EXPECT_NE(r.m_Optimized.find("Conv+bias+relu x1"), std::string::npos) << r.m_Optimized;
    EXPECT_NE(r.m_Optimized.find("Conv+bias+residual+relu x1"), std::string::npos) << r.m_Optimized;
    EXPECT_NE(r.m_Optimized.find("MatMul+bias x1"), std::string::npos) << r.m_Optimized;
}

// A ResNet at batch 32 in every precision, tf32 with and without TF32 convolutions: resnet50 in
// tf32 at batch 32 gave a relative error of 0.16 against PyTorch with TF32 convolutions run
// without a barrier before them (StepBarrier=off; 0.002 at batch 1, fine in fp32 and fp16). This net has resnet50's kinds of layers (7x7 stride-2 stem on
// 3 channels, max pool, bottlenecks with 1x1 and 3x3 convolutions, a strided one, projection and
// identity shortcuts, folded BatchNorm, global pool, classifier) and is checked image by image
// against CpuRef. On an H100 it passed with TF32 convolutions too (4.6e-4): it does not reproduce
// resnet50's error - Resnet50AtBatch32InTf32MatchesPyTorchImageByImage below does.
TEST(GpuAccPrecision, ResNetAtBatch32MatchesCpuRefImageByImage) {
    SKIP_WITHOUT_GPU();
    constexpr unsigned int batch = 32, classes = 10;
    Net net;
    // He-scaled uniform weights (a = sqrt(6 / fan_in)), so activations keep their magnitude.
    auto conv = [&](IOutputSlot* x, unsigned int k, unsigned int c, unsigned int kernel, unsigned int stride,
                    unsigned int pad) {
        IOutputSlot* y = net.Conv(x, k, c, kernel, stride, pad, 1, false, 1,
                                  std::sqrt(6.0f / static_cast<float>(c * kernel * kernel)));
        return net.Op(LayerType::BatchNormalization, BatchNormalizationDescriptor{},
                      {y, net.Const({k}, 0.2f, 1.0f), net.Const({k}, 0.1f), net.Const({k}, 0.1f),
                       net.Const({k}, 0.3f, 1.0f)});
    };
    auto relu = [&](IOutputSlot* x) { return net.Unary(UnaryOperation::Relu, x); };
    auto bottleneck = [&](IOutputSlot* x, unsigned int c, unsigned int mid, unsigned int k, unsigned int stride) {
        IOutputSlot* a = relu(conv(x, mid, c, 1, 1, 0));
        IOutputSlot* b = relu(conv(a, mid, mid, 3, stride, 1));
        IOutputSlot* e = conv(b, k, mid, 1, 1, 0);
        IOutputSlot* shortcut = c == k && stride == 1 ? x : conv(x, k, c, 1, stride, 0);
        return relu(net.Binary(BinaryOperation::Add, e, shortcut));
    };
    IOutputSlot* x = net.Input({batch, 3, 64, 64});
    IOutputSlot* stem = relu(conv(x, 64, 3, 7, 2, 3));
    PoolingDescriptor pool;
    pool.m_KernelShape = {3, 3};
    pool.m_Strides = {2, 2};
    pool.m_PadsBegin = {1, 1};
    pool.m_PadsEnd = {1, 1};
    IOutputSlot* h = net.Op(LayerType::Pooling, pool, {stem});
    h = bottleneck(h, 64, 64, 256, 1);
    h = bottleneck(h, 256, 128, 512, 2);
    h = bottleneck(h, 512, 128, 512, 1);
    PoolingDescriptor gap;
    gap.m_Algorithm = PoolingAlgorithm::Average;
    gap.m_Global = true;
    ReshapeDescriptor flat;
    flat.m_TargetShape = {batch, 512};
    GemmDescriptor gd;
    gd.m_TransB = true;
    net.Output(net.Op(LayerType::Gemm, gd,
                      {net.Op(LayerType::Reshape, flat, {net.Op(LayerType::Pooling, gap, {h})}),
                       net.Const({classes, 512}, 0.1f), net.Const({classes})}));
    const Net::Result ref = net.Run({"CpuRef"});
    const std::vector<float>& want = ref.m_Outputs[0];
    ASSERT_EQ(want.size(), static_cast<std::size_t>(batch * classes));
    struct Variant {
        const char* m_Precision;
        bool m_ConvTf32Off;
        double m_Tolerance;
    };
    for (const Variant& v : {Variant{"fp32", false, 1e-4}, Variant{"tf32", false, 1e-2}, Variant{"tf32", true, 1e-2},
                             Variant{"fp16", false, 1e-2}}) {
        IRuntime::CreationOptions o = WithOption("Precision", v.m_Precision);
        if (v.m_ConvTf32Off) o.m_BackendOptions["GpuAcc"]["ConvTf32"] = "off";
        const std::string precision = std::string(v.m_Precision) + (v.m_ConvTf32Off ? " (ConvTf32=off)" : "");
        const double tolerance = v.m_Tolerance;
        const Net::Result gpu = net.Run({"GpuAcc", "CpuRef"}, o);
        EXPECT_FALSE(gpu.m_Counts.count("CpuRef")) << precision << ": something fell back to CpuRef\n" << gpu.m_Optimized;
        const std::vector<float>& got = gpu.m_Outputs[0];
        ASSERT_EQ(got.size(), want.size()) << precision;
        const double all = RelativeL2(got, want);
        double worst = 0.0;
        unsigned int worstImage = 0;
        for (unsigned int n = 0; n < batch; ++n) {
            const std::vector<float> g(got.begin() + n * classes, got.begin() + (n + 1) * classes);
            const std::vector<float> w(want.begin() + n * classes, want.begin() + (n + 1) * classes);
            const double e = RelativeL2(g, w);
            if (!(e <= worst)) {
                worst = e;
                worstImage = n;
            }
        }
        std::cout << "resnet at batch " << batch << " in " << precision << ": relative L2 " << all << ", worst image "
                  << worstImage << " " << worst << "\n";
        EXPECT_LT(all, tolerance) << precision;
        EXPECT_LT(worst, 2 * tolerance) << precision << ": image " << worstImage;
    }
}

// GpuAcc's own depthwise kernel (DepthwiseConv=own) against CpuRef: NCHW (fp32) and NHWC (tf32,
// fp16: vectors of 4 and 8 channels, narrower where C is odd or 2 mod 4), strides 1 and 2, 3x3
// and 5x5, odd sizes, with and without bias, each fused activation; and the automatic choice
// between it and cuDNN (DepthwiseConv=auto), which must agree just the same.
struct DepthwiseCase {
    const char* m_Name;
    unsigned int n, c, h, w, kernel, stride, pad;
    bool bias;
    const char* m_Activation;  // none, relu, clip, sigmoid, swish
};

class GpuAccDepthwise : public ::testing::TestWithParam<DepthwiseCase> {};

TEST_P(GpuAccDepthwise, OwnKernelMatchesCpuRef) {
    SKIP_WITHOUT_GPU();
    const DepthwiseCase& p = GetParam();
    Net net;
    IOutputSlot* y = net.Conv(net.Input({p.n, p.c, p.h, p.w}), p.c, p.c, p.kernel, p.stride, p.pad, p.c, p.bias);
    const std::string act = p.m_Activation;
    if (act == "relu") y = net.Unary(UnaryOperation::Relu, y);
    if (act == "clip") y = net.Unary(UnaryOperation::Clip, y, 0.0f, 0.5f);
    if (act == "sigmoid") y = net.Unary(UnaryOperation::Sigmoid, y);
    if (act == "swish") y = net.Binary(BinaryOperation::Mul, y, net.Unary(UnaryOperation::Sigmoid, y));
    net.Output(y);
    const std::string steps = (std::filesystem::temp_directory_path() /
                               ("gpuacc_dw_steps_" + std::string(p.m_Name) + ".tsv")).string();
    for (const char* precision : {"fp32", "tf32", "fp16"}) {
        for (const char* mode : {"own", "auto"}) {
            std::filesystem::remove(steps);
            IRuntime::CreationOptions o = WithOption("Precision", precision);
            o.m_BackendOptions["GpuAcc"]["DepthwiseConv"] = mode;
            o.m_BackendOptions["GpuAcc"]["ConvTf32"] = "on";  // tf32: the NHWC float kernel
            o.m_BackendOptions["GpuAcc"]["StepTimesFile"] = steps;
            const bool exact = std::string(precision) != "fp16" && std::string(mode) == "own";
            net.Check(exact ? 1e-5 : 1e-2, std::string(p.m_Name) + " " + precision + " " + mode, o);
            std::ifstream f(steps);
            const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
            if (std::string(mode) == "own") {
                EXPECT_NE(text.find("depthwise kernel"), std::string::npos) << p.m_Name << " " << precision << "\n" << text;
            }
            EXPECT_EQ(text.find("failed its check"), std::string::npos) << p.m_Name << " " << precision << "\n" << text;
        }
    }
    std::filesystem::remove(steps);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, GpuAccDepthwise,
    ::testing::Values(DepthwiseCase{"mobilenet_3x3_clip", 2, 32, 14, 14, 3, 1, 1, true, "clip"},
                      DepthwiseCase{"stride2_odd_size_relu", 3, 24, 15, 13, 3, 2, 1, true, "relu"},
                      DepthwiseCase{"odd_channels_5x5", 1, 7, 9, 11, 5, 1, 2, false, "none"},
                      DepthwiseCase{"c6_sigmoid_nopad", 1, 6, 5, 5, 3, 1, 0, true, "sigmoid"},
                      DepthwiseCase{"c144_5x5_stride2_swish", 2, 144, 7, 7, 5, 2, 2, true, "swish"},
                      DepthwiseCase{"one_pixel", 4, 16, 1, 1, 3, 1, 1, true, "relu"}),
    [](const ::testing::TestParamInfo<DepthwiseCase>& info) { return std::string(info.param.m_Name); });

TEST(GpuAccFusion, ClipSigmoidSwishAndBiasAddAfterConvolutions) {
    SKIP_WITHOUT_GPU();
    Net net;
    IOutputSlot* x = net.Input({1, 24, 10, 10});
    IOutputSlot* a = net.Unary(UnaryOperation::Clip, net.Conv(x, 24, 24, 1), 0.0f, 6.0f);
    IOutputSlot* c = net.Conv(a, 24, 24, 3, 1, 1, 24, false);
    IOutputSlot* b = net.Binary(BinaryOperation::Add, c, net.Const({1, 24, 1, 1}));  // a bias as an Add
    IOutputSlot* s = net.Binary(BinaryOperation::Mul, b, net.Unary(UnaryOperation::Sigmoid, b));
    IOutputSlot* g = net.Unary(UnaryOperation::Sigmoid, net.Conv(s, 24, 24, 1));
    net.Output(net.Binary(BinaryOperation::Mul, s, g));
    const Net::Result r = net.Check(1e-5, "clip, swish, sigmoid");
    EXPECT_NE(r.m_Optimized.find("Conv+bias+swish x1"), std::string::npos) << r.m_Optimized;
    EXPECT_NE(r.m_Optimized.find("Conv+bias+clip x1"), std::string::npos) << r.m_Optimized;
    EXPECT_NE(r.m_Optimized.find("Conv+bias+sigmoid x1"), std::string::npos) << r.m_Optimized;
}

// ---- matrix products and transformers -----------------------------------------------------------------

TEST(GpuAccOps, MatMulShapesBatchesAndGemmVariants) {
    SKIP_WITHOUT_GPU();
    Net net;
    IOutputSlot* a = net.Input({3, 13, 127});
    net.Output(net.Op(LayerType::MatMul, EmptyDescriptor{}, {a, net.Const({127, 19}, 0.1f)}));          // weights
    net.Output(net.Op(LayerType::MatMul, EmptyDescriptor{}, {a, net.Input({3, 127, 5})}));              // batched
    net.Output(net.Op(LayerType::MatMul, EmptyDescriptor{}, {net.Input({2, 1, 7, 9}), net.Input({1, 4, 9, 1})}));  // broadcast both
    net.Output(net.Op(LayerType::MatMul, EmptyDescriptor{}, {net.Input({1, 1}), net.Input({1, 1})}));
    GemmDescriptor g;
    g.m_TransA = true;
    g.m_TransB = true;
    g.m_Alpha = 0.7f;
    g.m_Beta = 0.3f;
    IOutputSlot* x = net.Input({9, 6});
    net.Output(net.Op(LayerType::Gemm, g, {x, net.Const({11, 9}), net.Const({6, 11})}));               // C full: residual * beta
    GemmDescriptor h;
    h.m_Beta = 2.0f;
    net.Output(net.Unary(UnaryOperation::Relu, net.Op(LayerType::Gemm, h, {net.Input({5, 9}), net.Const({9, 11}), net.Const({1, 11})})));
    net.Check(1e-5, "matmul");
}

TEST(GpuAccFusion, TransformerEncoderLayer) {
    SKIP_WITHOUT_GPU();
    // BERT's layer as PyTorch exports it: projections, heads by Reshape/Transpose, scaled scores
    // with an additive mask, softmax, context, output projection + residual, LayerNorm, GELU MLP.
    Net net;
    const unsigned int b = 2, s = 13, e = 32, heads = 4, d = 8;
    IOutputSlot* x = net.Input({b, s, e});
    IOutputSlot* mask = net.Input({b, 1, 1, s});
    auto dense = [&](IOutputSlot* in, unsigned int n_in, unsigned int n_out) {
        return net.Binary(BinaryOperation::Add, net.Op(LayerType::MatMul, EmptyDescriptor{}, {in, net.Const({n_in, n_out}, 0.2f)}),
                          net.Const({n_out}));
    };
    auto split = [&](IOutputSlot* in, std::vector<unsigned int> perm) {
        ReshapeDescriptor r;
        r.m_TargetShape = {b, s, heads, d};
        return net.Op(LayerType::Transpose, TransposeDescriptor{perm}, {net.Op(LayerType::Reshape, r, {in})});
    };
    IOutputSlot* q = split(dense(x, e, e), {0, 2, 1, 3});
    IOutputSlot* k = split(dense(x, e, e), {0, 2, 3, 1});
    IOutputSlot* v = split(dense(x, e, e), {0, 2, 1, 3});
    IOutputSlot* scores = net.Binary(BinaryOperation::Div, net.Op(LayerType::MatMul, EmptyDescriptor{}, {q, k}), net.Scalar(2.828427f));
    IOutputSlot* masked = net.Binary(BinaryOperation::Add, scores, mask);
    IOutputSlot* p = net.Op(LayerType::Softmax, SoftmaxDescriptor{-1, false, false}, {masked});
    IOutputSlot* ctx = net.Op(LayerType::Transpose, TransposeDescriptor{{0, 2, 1, 3}}, {net.Op(LayerType::MatMul, EmptyDescriptor{}, {p, v})});
    ReshapeDescriptor back;
    back.m_TargetShape = {b, s, e};
    IOutputSlot* attn = net.Binary(BinaryOperation::Add, dense(net.Op(LayerType::Reshape, back, {ctx}), e, e), x);
    LayerNormalizationDescriptor ln;
    IOutputSlot* h = net.Op(LayerType::LayerNormalization, ln, {attn, net.Const({e}, 0.5f, 1.0f), net.Const({e})});
    IOutputSlot* f = dense(h, e, 4 * e);
    IOutputSlot* gelu = net.Binary(BinaryOperation::Mul,
                                   net.Binary(BinaryOperation::Mul, f,
                                              net.Binary(BinaryOperation::Add,
                                                         net.Unary(UnaryOperation::Erf, net.Binary(BinaryOperation::Div, f, net.Scalar(1.4142135f))),
                                                         net.Scalar(1.0f))),
                                   net.Scalar(0.5f));
    IOutputSlot* out = net.Binary(BinaryOperation::Add, dense(gelu, 4 * e, e), h);
    net.Output(net.Op(LayerType::LayerNormalization, ln, {out, net.Const({e}, 0.5f, 1.0f), net.Const({e})}));
    const Net::Result r = net.Check(1e-5, "encoder layer");
    EXPECT_EQ(r.m_Counts.size(), 1u) << r.m_Optimized;
    // Scores, scale, mask, softmax and context: one attention node (fused on cuDNN in fp16/bf16).
    EXPECT_NE(r.m_Optimized.find("Attention+mask x1"), std::string::npos) << r.m_Optimized;
    // Both residual adds went into cuBLASLt's C (the matmul before them), GELU after the bias.
    EXPECT_NE(r.m_Optimized.find("MatMul+bias+residual x2"), std::string::npos) << r.m_Optimized;
    EXPECT_NE(r.m_Optimized.find("MatMul+bias+gelu x1"), std::string::npos) << r.m_Optimized;
    EXPECT_NE(r.m_Optimized.find("GELU x1"), std::string::npos) << r.m_Optimized;
    // In fp16 and bf16 the same layer is close, not exact.
    for (const char* precision : {"tf32", "fp16", "bf16"}) {
        net.Check(std::string(precision) == "bf16" ? 3e-2 : 1e-2, std::string("encoder layer ") + precision,
                  WithOption("Precision", precision));
    }
}

// Scaled dot-product attention as exporters write it (MatMul, scale, optional mask, Softmax,
// MatMul) is one Attention node; in fp16 and bf16 it runs as cuDNN's fused attention, checked at
// load against the reference kernel, reading the head-split views in place. Against CpuRef: heads
// split from projections by Reshape/Transpose (views), a key-padding mask, a full mask, one head
// of rank 3 with fewer keys than queries and a narrower V; in fp32 the unfused steps (exact).
struct AttentionCase {
    const char* m_Name;
    unsigned int b, heads, sq, skv, d, dv;
    const char* m_Mask;  // none, keys ([b, 1, 1, skv]), full ([sq, skv])
    bool m_Rank3;        // [b * heads, s, d] tensors instead of head-split views
};

class GpuAccAttention : public ::testing::TestWithParam<AttentionCase> {};

TEST_P(GpuAccAttention, FusedMatchesCpuRef) {
    SKIP_WITHOUT_GPU();
    const AttentionCase& c = GetParam();
    Net net;
    IOutputSlot *q, *kT, *v;
    if (c.m_Rank3) {
        q = net.Input({c.b * c.heads, c.sq, c.d});
        kT = net.Op(LayerType::Transpose, TransposeDescriptor{{0, 2, 1}}, {net.Input({c.b * c.heads, c.skv, c.d})});
        v = net.Input({c.b * c.heads, c.skv, c.dv});
    } else {
        // Projections of one input, split into heads: [b, s, heads * d] -> [b, heads, s, d] views.
        IOutputSlot* x = net.Input({c.b, c.sq, 48});
        IOutputSlot* mem = c.skv == c.sq ? x : net.Input({c.b, c.skv, 48});
        auto split = [&](IOutputSlot* in, unsigned int s, unsigned int d, std::vector<unsigned int> perm) {
            ReshapeDescriptor r;
            r.m_TargetShape = {c.b, s, c.heads, d};
            IOutputSlot* proj = net.Op(LayerType::MatMul, EmptyDescriptor{}, {in, net.Const({48, c.heads * d}, 0.3f)});
            return net.Op(LayerType::Transpose, TransposeDescriptor{perm}, {net.Op(LayerType::Reshape, r, {proj})});
        };
        q = split(x, c.sq, c.d, {0, 2, 1, 3});
        kT = split(mem, c.skv, c.d, {0, 2, 3, 1});
        v = split(mem, c.skv, c.dv, {0, 2, 1, 3});
    }
    IOutputSlot* scores = net.Binary(BinaryOperation::Mul, net.Op(LayerType::MatMul, EmptyDescriptor{}, {q, kT}),
                                     net.Scalar(1.0f / std::sqrt(static_cast<float>(c.d))));
    const std::string mask = c.m_Mask;
    if (mask == "keys") scores = net.Binary(BinaryOperation::Add, scores, net.Input({c.b, 1, 1, c.skv}));
    if (mask == "full") scores = net.Binary(BinaryOperation::Add, scores, net.Const({c.sq, c.skv}, 2.0f));
    IOutputSlot* p = net.Op(LayerType::Softmax, SoftmaxDescriptor{-1, false, false}, {scores});
    net.Output(net.Op(LayerType::MatMul, EmptyDescriptor{}, {p, v}));
    const Net::Result r = net.Check(1e-5, std::string(c.m_Name) + " fp32");
    EXPECT_NE(r.m_Optimized.find(mask == "none" ? "Attention x1" : "Attention+mask x1"), std::string::npos) << r.m_Optimized;
    const std::string steps = (std::filesystem::temp_directory_path() /
                               ("gpuacc_attention_steps_" + std::string(c.m_Name) + ".tsv")).string();
    for (const char* precision : {"fp16", "bf16"}) {
        std::filesystem::remove(steps);
        IRuntime::CreationOptions o = WithOption("Precision", precision);
        o.m_BackendOptions["GpuAcc"]["StepTimesFile"] = steps;
        net.Check(std::string(precision) == "bf16" ? 3e-2 : 1e-2, std::string(c.m_Name) + " " + precision, o);
        std::ifstream f(steps);
        const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
        // Whether cuDNN fused it (printed), never a plan that failed its check.
        const bool fused = text.find("cuDNN fused attention") != std::string::npos;
        std::cout << c.m_Name << " " << precision << ": " << (fused ? "fused" : "not fused") << "\n";
        if (!fused) std::cout << text;
        EXPECT_EQ(text.find("failed its check"), std::string::npos) << c.m_Name << " " << precision << "\n" << text;
        // The encoder shape (heads of 64 as views, no mask) must fuse: it is what BERT runs.
        if (std::string(c.m_Name) == "encoder_heads_as_views") {
            EXPECT_TRUE(fused) << precision << "\n" << text;
        }
    }
    std::filesystem::remove(steps);
}

// nn.MultiheadAttention as PyTorch exports it (batch_first): the input transposed to [S, B, E], one
// packed projection to [S, B, 3E] (a view of [B, S, 3E]), q, k and v picked from [S, B, 3, E],
// each reshaped to [S, B*H, D] (which no strides express: B and H do not merge) and transposed
// to [B*H, S, D], K^T to [B*H, D, S]; the context transposed back and merged to [S*B, E]. The
// reshape-transpose chains compose to strided views again once B*H is split: in fp16 the fused
// attention reads the projection in place - the only copies left are the input's conversion and
// the merged context.
TEST(GpuAccAttentionLayout, PyTorchHeadsAreReadInPlace) {
    SKIP_WITHOUT_GPU();
    const unsigned int b = 4, s = 64, heads = 2, d = 32, e = heads * d;
    Net net;
    IOutputSlot* x = net.Op(LayerType::Transpose, TransposeDescriptor{{1, 0, 2}}, {net.Input({b, s, e})});
    IOutputSlot* proj = net.Op(LayerType::MatMul, EmptyDescriptor{}, {x, net.Const({e, 3 * e}, 0.3f)});
    ReshapeDescriptor packed;
    packed.m_TargetShape = {s, b, 3, e};
    IOutputSlot* qkv = net.Op(LayerType::Reshape, packed, {proj});
    auto head = [&](int64_t which, std::vector<unsigned int> perm) {
        IOutputSlot* index = net.Index(which);
        ReshapeDescriptor split;
        split.m_TargetShape = {s, b * heads, d};
        IOutputSlot* picked = net.Op(LayerType::Gather, GatherDescriptor{2}, {qkv, index});
        return net.Op(LayerType::Transpose, TransposeDescriptor{perm}, {net.Op(LayerType::Reshape, split, {picked})});
    };
    IOutputSlot* q = head(0, {1, 0, 2});
    IOutputSlot* kT = head(1, {1, 2, 0});
    IOutputSlot* v = head(2, {1, 0, 2});
    IOutputSlot* scores = net.Binary(BinaryOperation::Mul, net.Op(LayerType::MatMul, EmptyDescriptor{}, {q, kT}),
                                     net.Scalar(1.0f / std::sqrt(static_cast<float>(d))));
    IOutputSlot* p = net.Op(LayerType::Softmax, SoftmaxDescriptor{-1, false, false}, {scores});
    IOutputSlot* ctx = net.Op(LayerType::Transpose, TransposeDescriptor{{1, 0, 2}}, {net.Op(LayerType::MatMul, EmptyDescriptor{}, {p, v})});
    ReshapeDescriptor merged;
    merged.m_TargetShape = {s * b, e};
    net.Output(net.Op(LayerType::MatMul, EmptyDescriptor{}, {net.Op(LayerType::Reshape, merged, {ctx}), net.Const({e, e}, 0.3f)}));
    net.Check(1e-5, "pytorch attention fp32");
    const std::string steps = (std::filesystem::temp_directory_path() / "gpuacc_attention_layout_steps.tsv").string();
    std::filesystem::remove(steps);
    IRuntime::CreationOptions o = WithOption("Precision", "fp16");
    o.m_BackendOptions["GpuAcc"]["StepTimesFile"] = steps;
    net.Check(1e-2, "pytorch attention fp16", o);
    std::ifstream f(steps);
    const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("cuDNN fused attention"), std::string::npos) << text;
    std::size_t copies = 0;
    for (std::size_t at = text.find("\tconvert"); at != std::string::npos; at = text.find("\tconvert", at + 1)) ++copies;
    for (std::size_t at = text.find("\tcopy"); at != std::string::npos; at = text.find("\tcopy", at + 1)) ++copies;
    EXPECT_LE(copies, 2u) << text;
    std::filesystem::remove(steps);
}

INSTANTIATE_TEST_SUITE_P(Shapes, GpuAccAttention,
                         ::testing::Values(AttentionCase{"encoder_heads_as_views", 2, 4, 128, 128, 64, 64, "none", false},
                                           AttentionCase{"key_padding_mask", 2, 3, 40, 40, 64, 64, "keys", false},
                                           AttentionCase{"cross_attention_full_mask", 2, 2, 24, 56, 32, 32, "full", false},
                                           AttentionCase{"rank3_fewer_keys_narrow_v", 6, 1, 77, 50, 64, 32, "none", true}),
                         [](const ::testing::TestParamInfo<AttentionCase>& i) { return std::string(i.param.m_Name); });

// ONNX Attention (opset 23) as one layer: 4-D heads, 3-D packed heads with grouped-query K/V and
// a causal mask, an additive mask with fewer queries than keys. fp32 runs the reference kernel
// (exact to 1e-5 against CpuRef); fp16 and bf16 cuDNN's fused attention where it plans.
TEST(GpuAccOps, OnnxAttentionLayer) {
    SKIP_WITHOUT_GPU();
    struct Case {
        const char* m_Name;
        bool m_ThreeD, m_Causal, m_Mask;
        unsigned int b, hq, hkv, sq, skv, d;
    };
    for (const Case& c : {Case{"4d", false, false, false, 2, 4, 4, 64, 64, 64},
                          Case{"3d_gqa_causal", true, true, false, 2, 8, 2, 50, 50, 32},
                          Case{"4d_mask_cross", false, false, true, 2, 2, 2, 24, 40, 64}}) {
        Net net;
        AttentionDescriptor d;
        d.m_IsCausal = c.m_Causal;
        d.m_HasMask = c.m_Mask;
        std::vector<IOutputSlot*> in;
        if (c.m_ThreeD) {
            d.m_QNumHeads = c.hq;
            d.m_KvNumHeads = c.hkv;
            in = {net.Input({c.b, c.sq, c.hq * c.d}), net.Input({c.b, c.skv, c.hkv * c.d}), net.Input({c.b, c.skv, c.hkv * c.d})};
        } else {
            in = {net.Input({c.b, c.hq, c.sq, c.d}), net.Input({c.b, c.hkv, c.skv, c.d}), net.Input({c.b, c.hkv, c.skv, c.d})};
        }
        if (c.m_Mask) in.push_back(net.Const({1, 1, c.sq, c.skv}, 2.0f));
        net.Output(net.Op(LayerType::Attention, d, in));
        net.Check(1e-5, std::string(c.m_Name) + " fp32");
        const std::string steps = (std::filesystem::temp_directory_path() / "gpuacc_onnx_attention_steps.tsv").string();
        for (const char* precision : {"fp16", "bf16"}) {
            std::filesystem::remove(steps);
            IRuntime::CreationOptions o = WithOption("Precision", precision);
            o.m_BackendOptions["GpuAcc"]["StepTimesFile"] = steps;
            net.Check(std::string(precision) == "bf16" ? 3e-2 : 1e-2, std::string(c.m_Name) + " " + precision, o);
            std::ifstream f(steps);
            const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
            std::cout << c.m_Name << " " << precision << ": "
                      << (text.find("cuDNN fused attention") != std::string::npos ? "fused" : "reference kernel") << "\n";
            EXPECT_EQ(text.find("failed its check"), std::string::npos) << text;
            if (std::string(c.m_Name) == "4d") {
                EXPECT_NE(text.find("cuDNN fused attention"), std::string::npos) << precision << "\n" << text;
            }
        }
        std::filesystem::remove(steps);
    }
}

// RMSNormalization (opset 23) on the layer-norm kernel without the mean: over the last axis and over
// the last two, after a residual add (fused into the kernel), against CpuRef in fp32 and fp16.
TEST(GpuAccOps, RmsNormalizationOverOneAndTwoAxes) {
    SKIP_WITHOUT_GPU();
    Net net;
    IOutputSlot* x = net.Input({2, 5, 96});
    IOutputSlot* r = net.Input({2, 5, 96});
    RmsNormalizationDescriptor last;
    last.m_Axis = -1;
    last.m_Eps = 1e-5f;
    net.Output(net.Op(LayerType::RmsNormalization, last, {net.Binary(BinaryOperation::Add, x, r), net.Const({96}, 0.5f, 1.0f)}));
    RmsNormalizationDescriptor two;
    two.m_Axis = 1;
    two.m_Eps = 1e-3f;
    net.Output(net.Op(LayerType::RmsNormalization, two, {x, net.Const({5, 96}, 0.5f, 1.0f)}));
    const Net::Result res = net.Check(1e-5, "rmsnorm fp32");
    EXPECT_NE(res.m_Optimized.find("LayerNorm+residual x1"), std::string::npos) << res.m_Optimized;
    net.Check(1e-2, "rmsnorm fp16", WithOption("Precision", "fp16"));
}

// ---- element-wise, normalization, data movement ---------------------------------------------------------

TEST(GpuAccOps, ElementwiseBroadcastingAndStridedInputs) {
    SKIP_WITHOUT_GPU();
    Net net;
    IOutputSlot* a = net.Input({2, 3, 4, 5});
    IOutputSlot* b = net.Input({3, 1, 5});
    IOutputSlot* sum = net.Binary(BinaryOperation::Add, b, a);
    IOutputSlot* q = net.Binary(BinaryOperation::Div, net.Binary(BinaryOperation::Sub, sum, b), net.Const({1, 4, 1}, 0.2f, 2.0f));
    net.Output(net.Binary(BinaryOperation::Minimum, net.Binary(BinaryOperation::Maximum, q, a), net.Scalar(0.7f)));
    // A transposed operand (a strided read) and a Pow with a tensor exponent.
    IOutputSlot* t = net.Op(LayerType::Transpose, TransposeDescriptor{{0, 1, 3, 2}}, {net.Input({2, 3, 5, 4})});
    net.Output(net.Binary(BinaryOperation::Pow, net.Unary(UnaryOperation::Abs, a), net.Binary(BinaryOperation::Mul, t, t)));
    for (UnaryOperation op : {UnaryOperation::Tanh, UnaryOperation::Elu, UnaryOperation::HardSwish, UnaryOperation::Neg,
                              UnaryOperation::Exp, UnaryOperation::Softplus, UnaryOperation::Mish, UnaryOperation::Gelu,
                              UnaryOperation::GeluTanh, UnaryOperation::Erf, UnaryOperation::Sigmoid, UnaryOperation::Sin,
                              UnaryOperation::Atan, UnaryOperation::Floor, UnaryOperation::Sign, UnaryOperation::Softsign,
                              UnaryOperation::Selu, UnaryOperation::Celu}) {
        net.Output(net.Unary(op, a, 0.3f, 1.2f));
    }
    net.Output(net.Unary(UnaryOperation::Clip, a, -0.25f, 0.5f));
    net.Output(net.Unary(UnaryOperation::HardSigmoid, a, 0.2f, 0.5f));
    net.Output(net.Unary(UnaryOperation::LeakyRelu, a, 0.1f));
    net.Output(net.Unary(UnaryOperation::Log, net.Unary(UnaryOperation::Exp, a)));
    IOutputSlot* cond = net.Binary(BinaryOperation::Greater, a, net.Scalar(0.1f));
    net.Output(net.Op(LayerType::Where, EmptyDescriptor{}, {cond, a, b}));
    net.Output(net.Op(LayerType::PRelu, EmptyDescriptor{}, {a, net.Const({5}, 0.2f)}));
    net.Output(net.Op(LayerType::Cast, CastDescriptor{DataType::Float32},
                      {net.Op(LayerType::Cast, CastDescriptor{DataType::Boolean}, {net.Unary(UnaryOperation::Relu, a)})}));
    const Net::Result r = net.Check(1e-5, "elementwise");
    EXPECT_NE(r.m_Optimized.find("element-wise chain x"), std::string::npos) << r.m_Optimized;
}

TEST(GpuAccOps, SoftmaxLayerNormReductionsAndPooling) {
    SKIP_WITHOUT_GPU();
    Net net;
    IOutputSlot* x = net.Input({2, 6, 5, 127});
    net.Output(net.Op(LayerType::Softmax, SoftmaxDescriptor{1, false, false}, {x}));
    net.Output(net.Op(LayerType::Softmax, SoftmaxDescriptor{-1, true, false}, {x}));
    net.Output(net.Op(LayerType::Softmax, SoftmaxDescriptor{2, false, true}, {x}));
    LayerNormalizationDescriptor ln;
    ln.m_Axis = 2;
    net.Output(net.Op(LayerType::LayerNormalization, ln, {x, net.Const({5, 127}), net.Const({5, 127})}));
    for (ReduceOperation op : {ReduceOperation::Mean, ReduceOperation::Sum, ReduceOperation::Max, ReduceOperation::Min,
                               ReduceOperation::L1, ReduceOperation::L2, ReduceOperation::SumSquare,
                               ReduceOperation::LogSumExp}) {
        ReduceDescriptor r;
        r.m_Operation = op;
        r.m_Axes = {1, 2};
        r.m_KeepDims = op == ReduceOperation::Sum;
        net.Output(net.Op(LayerType::Reduce, r, {x}));
        ReduceDescriptor last = r;
        last.m_Axes = {3};
        net.Output(net.Op(LayerType::Reduce, last, {x}));
    }
    IOutputSlot* img = net.Input({2, 5, 11, 10});
    for (bool ceil : {false, true}) {
        for (PoolingAlgorithm alg : {PoolingAlgorithm::Max, PoolingAlgorithm::Average}) {
            for (bool includePad : {false, true}) {
                PoolingDescriptor d;
                d.m_Algorithm = alg;
                d.m_KernelShape = {3, 2};
                d.m_Strides = {2, 2};
                d.m_PadsBegin = {1, 0};
                d.m_PadsEnd = {1, 1};
                d.m_CeilMode = ceil;
                d.m_CountIncludePad = includePad;
                net.Output(net.Op(LayerType::Pooling, d, {img}));
            }
        }
    }
    net.Check(1e-5, "softmax, layernorm, reductions, pooling");
}

TEST(GpuAccOps, DataMovementOnNhwcAndPlainTensors) {
    SKIP_WITHOUT_GPU();
    Net net;
    IOutputSlot* x = net.Input({2, 6, 5, 3});
    IOutputSlot* conv = net.Conv(net.Input({2, 4, 5, 3}), 2, 4, 1);  // an NHWC tensor on the device
    net.Output(net.Op(LayerType::Concat, ConcatDescriptor{1}, {x, conv, x}));
    net.Output(net.Op(LayerType::Transpose, TransposeDescriptor{{3, 0, 2, 1}}, {x}));
    net.Output(net.Op(LayerType::Transpose, TransposeDescriptor{{0, 2, 3, 1}}, {conv}));
    IConnectableLayer* split = net.Layer(LayerType::Split, SplitDescriptor{1, {1, 2, 3}}, {x}, 3);
    for (unsigned int i = 0; i < 3; ++i) net.Output(&split->GetOutputSlot(i));
    SliceDescriptor sl;
    sl.m_Starts = {1, -3, 2};
    sl.m_Ends = {5, 5, -100};
    sl.m_Axes = {1, 2, 3};
    sl.m_Steps = {2, 1, -1};
    net.Output(net.Op(LayerType::Slice, sl, {x}));
    ExpandDescriptor ex;
    ex.m_Shape = {3, 2, 6, 5, 3};
    net.Output(net.Op(LayerType::Expand, ex, {net.Unary(UnaryOperation::Relu, x)}));
    ReshapeDescriptor flat;
    flat.m_TargetShape = {2, 2 * 5 * 3};
    net.Output(net.Op(LayerType::Reshape, flat, {conv}));
    net.Check(1e-6, "data movement");
}

TEST(GpuAccOps, GatherEmbeddingsWithRuntimeAndConstantIndices) {
    SKIP_WITHOUT_GPU();
    Net net;
    net.m_IndexRange = 11;
    IOutputSlot* ids = net.Input({2, 13}, DataType::Signed64);
    IOutputSlot* table = net.Const({11, 24});
    IOutputSlot* emb = net.Op(LayerType::Gather, GatherDescriptor{0}, {table, ids});
    net.Output(net.Binary(BinaryOperation::Add, emb, net.Const({13, 24})));
    net.Output(net.Op(LayerType::Gather, GatherDescriptor{1}, {net.Input({3, 8, 2}), net.Ints({4}, {0, -1, 3, 7})}));
    net.Check(1e-6, "gather");
}

TEST(GpuAccOps, UnfoldedBatchNormalization) {
    SKIP_WITHOUT_GPU();
    // A BatchNormalization the core cannot fold into a convolution (it follows an addition).
    Net net;
    IOutputSlot* x = net.Input({2, 7, 5, 5});
    IOutputSlot* s = net.Binary(BinaryOperation::Add, x, net.Input({2, 7, 5, 5}));
    BatchNormalizationDescriptor d;
    d.m_Eps = 1e-3f;
    net.Output(net.Op(LayerType::BatchNormalization, d,
                      {s, net.Const({7}, 0.5f, 1.0f), net.Const({7}), net.Const({7}), net.Const({7}, 0.2f, 1.0f)}));
    net.Check(1e-5, "batchnorm");
}

// ---- boundaries, options, graphs, memory, threads ------------------------------------------------------

TEST(GpuAccBoundaries, DeclinedLayersRunOnTheCpuBetweenCopiesThatInspectCounts) {
    SKIP_WITHOUT_GPU();
    Net net;
    IOutputSlot* x = net.Input({4, 13});
    // CumSum has no GpuAcc kernel: conv-free chain GPU -> CPU -> GPU.
    IOutputSlot* h = net.Unary(UnaryOperation::Relu, net.Op(LayerType::MatMul, EmptyDescriptor{}, {x, net.Const({13, 13})}));
    CumSumDescriptor cs;
    cs.m_Axis = 1;
    net.Output(net.Binary(BinaryOperation::Add, h, net.Op(LayerType::CumSum, cs, {h})));
    Net::Loaded l = net.Load({"GpuAcc", "CpuRef"});
    std::size_t copies = 0, bytes = 0;
    bool declined = false;
    for (const LayerPlacement& p : l.m_Placements) {
        if (p.m_Type == LayerType::MemCopy) {
            ++copies;
            bytes += p.m_CopyBytes;
            // Between GPU memory and the memory of the host side (the network's, or CpuRef's).
            EXPECT_NE(p.m_CopySource == "GpuAcc", p.m_CopyDestination == "GpuAcc")
                << p.m_CopySource << " -> " << p.m_CopyDestination;
        }
        for (const auto& [backend, reason] : p.m_Declined) {
            declined |= backend == BackendId("GpuAcc") && reason.find("GpuAcc has no kernel for CumSum") != std::string::npos;
        }
    }
    EXPECT_TRUE(declined) << l.m_Optimized;
    // x in, h out to the CPU, the running sums back in, the sum out.
    EXPECT_EQ(copies, 4u) << l.m_Optimized;
    EXPECT_EQ(bytes, 4u * (4u * 13 * 4)) << l.m_Optimized;
    net.Check(1e-5, "fallback", {}, false);
}

TEST(GpuAccOptions, BadOptionValuesAreRefusedByName) {
    SKIP_WITHOUT_GPU();
    Net net;
    net.Output(net.Unary(UnaryOperation::Relu, net.Input({3})));
    for (const auto& [name, value] : std::vector<std::pair<const char*, const char*>>{{"Precision", "fp8"}, {"CudaGraph", "yes"}}) {
        try {
            net.Load({"GpuAcc"}, WithOption(name, value));
            ADD_FAILURE() << name << "=" << value << " was accepted";
        } catch (const RuntimeException& e) {
            const std::string msg = e.what();
            EXPECT_NE(msg.find(std::string("GpuAcc: option ") + name + "='" + value + "'"), std::string::npos) << msg;
        }
    }
}

Net ConvNet() {
    Net net;
    IOutputSlot* x = net.Input({1, 8, 20, 20});
    IOutputSlot* c = net.Unary(UnaryOperation::Relu, net.Conv(x, 32, 8, 3, 1, 1));
    net.Output(net.Conv(c, 16, 32, 3, 1, 1, 1, false));
    return net;
}

TEST(GpuAccGraphs, CapturedOnceReplayedAfterwardsAndNoDeviceAllocationOnceWarm) {
    SKIP_WITHOUT_GPU();
    Net net = ConvNet();
    net.MakeInputs();
    IRuntime::CreationOptions o;
    o.m_ProfilingOptions.m_EnableProfiling = true;
    const Net::Loaded l = net.Load({"GpuAcc"}, o);
    const auto first = net.Execute(l);   // eager (warm-up)
    const auto second = net.Execute(l);  // captured, then launched
    const auto counters = l.m_Runtime->GetProfilingCounters();
    for (int i = 0; i < 5; ++i) EXPECT_EQ(net.Execute(l), first) << "replay " << i;
    EXPECT_EQ(first, second);
    const auto after = l.m_Runtime->GetProfilingCounters();
    EXPECT_EQ(counters.at("GpuAcc/graph_captures"), 1u);
    EXPECT_EQ(after.at("GpuAcc/graph_captures"), 1u);
    EXPECT_EQ(after.at("GpuAcc/graph_launches"), counters.at("GpuAcc/graph_launches") + 5);
    EXPECT_EQ(after.at("GpuAcc/device_allocations"), counters.at("GpuAcc/device_allocations"))
        << "a steady-state inference allocated device memory";
    EXPECT_EQ(after.at("GpuAcc/pinned_allocations"), counters.at("GpuAcc/pinned_allocations"));
    EXPECT_EQ(after.at("GpuAcc/bytes_to_device") - counters.at("GpuAcc/bytes_to_device"), 5u * 8 * 20 * 20 * 4);
    // Without graphs: the same numbers, every run eager.
    const Net::Result eager = net.Run({"GpuAcc"}, WithOption("CudaGraph", "off"));
    EXPECT_EQ(eager.m_Outputs, first);
}

TEST(GpuAccConcurrency, FourThreadsOneNetwork) {
    SKIP_WITHOUT_GPU();
    Net net = ConvNet();
    const Net::Result want = net.Run({"CpuRef"});
    const Net::Loaded loaded = net.Load({"GpuAcc"});
    std::vector<std::thread> threads;
    std::atomic<int> failures{0}, runs{0};
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&]() {
            for (int i = 0; i < 25; ++i) {
                const auto got = net.Execute(loaded);
                ++runs;
                if (RelativeL2(got[0], want.m_Outputs[0]) > 1e-5) ++failures;
            }
        });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(runs.load(), 100);
    EXPECT_EQ(failures.load(), 0);
    EXPECT_GE(loaded.m_Runtime->GetPeakWorkingMemoryBytes(loaded.m_Id), 1u);
}

TEST(GpuAccDeviceMemory, InputsAndOutputsGivenOnTheGpuSkipTheHost) {
    SKIP_WITHOUT_GPU();
    Net net = ConvNet();
    const Net::Result want = net.Run({"CpuRef"});
    IRuntime::CreationOptions o;
    o.m_ProfilingOptions.m_EnableProfiling = true;
    Net::Loaded l = net.Load({"GpuAcc"}, o);
    const TensorInfo in = l.m_Runtime->GetInputTensorInfo(l.m_Id, 0);
    const TensorInfo out = l.m_Runtime->GetOutputTensorInfo(l.m_Id, 0);
    std::vector<float> x(in.GetNumElements());
    std::mt19937 rng(1234);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (float& v : x) v = dist(rng);  // Net's inputs: the same seed and order
    void* dx = nullptr;
    void* dy = nullptr;
    ASSERT_EQ(cudaMalloc(&dx, in.GetNumBytes()), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&dy, out.GetNumBytes()), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(dx, x.data(), in.GetNumBytes(), cudaMemcpyHostToDevice), cudaSuccess);
    ConstTensor xt(in, dx);
    xt.SetMemoryBackend("GpuAcc");
    Tensor yt(out, dy);
    yt.SetMemoryBackend("GpuAcc");
    const auto before = l.m_Runtime->GetProfilingCounters();
    for (int i = 0; i < 3; ++i) l.m_Runtime->EnqueueWorkload(l.m_Id, {{0, xt}}, {{0, yt}});
    const auto after = l.m_Runtime->GetProfilingCounters();
    std::vector<float> y(out.GetNumElements());
    ASSERT_EQ(cudaMemcpy(y.data(), dy, out.GetNumBytes(), cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_LT(RelativeL2(y, want.m_Outputs[0]), 1e-5);
    EXPECT_EQ(after.at("GpuAcc/bytes_to_device"), before.at("GpuAcc/bytes_to_device")) << "the input went through the host";
    EXPECT_EQ(after.at("GpuAcc/bytes_to_host"), before.at("GpuAcc/bytes_to_host")) << "the output went through the host";
    cudaFree(dx);
    cudaFree(dy);
}

// ---- models -----------------------------------------------------------------------------------------------

/// resnet50 at batch 32 in tf32 against PyTorch's fp32 output, image by image, as configured by
/// default (TF32 convolutions, StepBarrier=auto) and with convolutions in fp32 (ConvTf32=off).
/// Without the barrier before each TF32 convolution (StepBarrier=off) this model and input gave
/// 0.12-0.17 (worst image 0: 0.48-0.66) in three H100 runs, while every convolution passed its
/// load-time check and, re-checked on its real inputs (CheckConvs=on), was right; with an empty
/// kernel or a host synchronization between steps 2.2e-3, with ConvTf32=off 3.1e-4.
/// bench/gpu/run_gpu_bench.py exports the model
/// (resnet50_b32.onnx, its input and PyTorch's output beside it as .input.npy and .output.npy) into
/// its --work folder; set TRELLIS_GPU_BENCH_DIR to that folder (device_run.sh's tf32 stage does).
TEST(GpuAccPrecision, Resnet50AtBatch32InTf32MatchesPyTorchImageByImage) {
    SKIP_WITHOUT_GPU();
    const char* dir = std::getenv("TRELLIS_GPU_BENCH_DIR");
    const std::string base = std::string(dir ? dir : "") + "/resnet50_b32.onnx";
    if (!dir || !std::filesystem::exists(base)) GTEST_SKIP() << "TRELLIS_GPU_BENCH_DIR has no resnet50_b32.onnx";
    const OwnedTensor want = LoadTensorFile(base + ".output.npy");
    for (const char* convTf32 : {"on", "off"}) {
        IRuntime::CreationOptions o = WithOption("Precision", "tf32");
        o.m_BackendOptions["GpuAcc"]["ConvTf32"] = convTf32;
        LoadedModel m = LoadedModel::Load(base, {"GpuAcc", "CpuRef"}, {}, o);
        const auto outs = m.Run({LoadTensorFile(base + ".input.npy")});
        ASSERT_EQ(outs.size(), 1u);
        ASSERT_EQ(outs[0].m_Info.GetShape(), want.m_Info.GetShape());
        const std::size_t images = want.m_Info.GetShape()[0], per = want.m_Info.GetNumElements() / images;
        double worst = 0.0;
        std::size_t worstImage = 0;
        for (std::size_t n = 0; n < images; ++n) {
            const double e = RelativeL2Of(per, [&](std::size_t i) { return ToDouble(outs[0], n * per + i); },
                                          [&](std::size_t i) { return ToDouble(want, n * per + i); });
            if (!(e <= worst)) {
                worst = e;
                worstImage = n;
            }
        }
        const double all = RelativeL2(outs[0], want);
        std::cout << "resnet50 b32 tf32, ConvTf32=" << convTf32 << ": relative L2 " << all << ", worst image " << worstImage
                  << " " << worst << "\n";
        EXPECT_LT(all, 1e-2) << "ConvTf32=" << convTf32;
        EXPECT_LT(worst, 2e-2) << "ConvTf32=" << convTf32 << ": image " << worstImage;
    }
}

std::string ModelsDir() {
    const char* env = std::getenv("TRELLIS_GPU_TEST_MODELS_DIR");
    return env && *env ? env : TRELLIS_TEST_MODELS_DIR;
}

class GpuAccModel : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuAccModel, MatchesPyTorchInFp32) {
    SKIP_WITHOUT_GPU();
    const std::string base = ModelsDir() + "/" + GetParam();
    if (!std::filesystem::exists(base + ".onnx")) GTEST_SKIP() << base << ".onnx not exported here";
    double err = -1;
    std::map<BackendId, unsigned int> counts;
    ModelErrorVsPyTorch(base, {"GpuAcc", "CpuRef"}, &err, &counts);
    if (HasFatalFailure()) return;
    std::cout << GetParam() << ": GpuAcc relative L2 error vs PyTorch " << err << "; layers per backend:";
    for (const auto& [b, c] : counts) std::cout << " " << b << "=" << c;
    std::cout << "\n";
    EXPECT_LT(err, 1e-4) << GetParam();
    EXPECT_GT(counts["GpuAcc"], 0u);
}

INSTANTIATE_TEST_SUITE_P(Models, GpuAccModel,
                         ::testing::Values("tiny_cnn_op13", "squeezenet1_1_op13", "mobilenet_v2_op13", "resnet50_op13",
                                           "transformer_op13", "transformer_op17", "efficientnet_b0_op13",
                                           "shufflenet_v2_x1_0_op13", "mobilenet_v3_small_op13", "vit_b_16_op17"));

}  // namespace
