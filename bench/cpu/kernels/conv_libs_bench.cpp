// Convolution and fully connected kernels of oneDNN 2.6 (what CpuAcc runs) against XNNPACK (Debian's libxnnpack,
// 2022-02), on the convolution shapes of the five benchmark models, batch 1, float32, with a
// fused ReLU. A benchmark, not a test: it decides where CpuAcc would use XNNPACK ("where it
// measures faster", issue 5) and docs/performance.md records its output.
//
//   build/bin/trellis_conv_libs_bench [--threads N] [--rounds R] [--fc-only]
//
// Each shape is timed per library with cold weights (8 copies of the operator, each with its own
// weights, run in turn, so weights come from memory as they do in a whole network) and the two
// libraries alternate; the best time per call over the rounds is reported. oneDNN runs the layout
// CpuAcc uses (channel-blocked nChw16c, direct or Winograd as CpuAcc would choose); XNNPACK runs
// its only layout, NHWC. Layout conversions are not counted for either.
#include <dnnl.hpp>
#include <omp.h>
#include <pthreadpool.h>
#include <xnnpack.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

struct Shape {
    const char* model;
    int ic, oc, hw, k, stride, groups;
};

// The distinct convolution kinds of resnet50, mobilenet_v2, squeezenet1_1 and efficientnet_b0.
const Shape kShapes[] = {
    {"resnet50", 3, 64, 224, 7, 2, 1},       {"resnet50", 64, 64, 56, 3, 1, 1},
    {"resnet50", 128, 128, 28, 3, 1, 1},     {"resnet50", 256, 256, 14, 3, 1, 1},
    {"resnet50", 512, 512, 7, 3, 1, 1},      {"resnet50", 128, 128, 56, 3, 2, 1},
    {"resnet50", 64, 256, 56, 1, 1, 1},      {"resnet50", 256, 64, 56, 1, 1, 1},
    {"resnet50", 1024, 256, 14, 1, 1, 1},    {"resnet50", 256, 1024, 14, 1, 1, 1},
    {"resnet50", 2048, 512, 7, 1, 1, 1},     {"resnet50", 512, 2048, 7, 1, 1, 1},
    {"squeezenet1_1", 128, 16, 55, 1, 1, 1}, {"squeezenet1_1", 16, 64, 55, 3, 1, 1},
    {"squeezenet1_1", 64, 256, 13, 3, 1, 1}, {"mobilenet_v2", 3, 32, 224, 3, 2, 1},
    {"mobilenet_v2", 24, 144, 56, 1, 1, 1},  {"mobilenet_v2", 144, 24, 56, 1, 1, 1},
    {"mobilenet_v2", 144, 144, 56, 3, 1, 144}, {"mobilenet_v2", 96, 96, 112, 3, 2, 96},
    {"mobilenet_v2", 384, 384, 14, 3, 1, 384}, {"mobilenet_v2", 960, 960, 7, 3, 1, 960},
    {"mobilenet_v2", 320, 1280, 7, 1, 1, 1}, {"efficientnet_b0", 240, 240, 28, 5, 1, 240},
    {"efficientnet_b0", 672, 672, 14, 5, 1, 672}, {"efficientnet_b0", 1152, 1152, 7, 5, 1, 1152},
    {"efficientnet_b0", 480, 480, 14, 3, 1, 480}, {"efficientnet_b0", 1152, 48, 7, 1, 1, 1},
};

constexpr int kCopies = 8;

int OutSize(const Shape& s) { return (s.hw + 2 * (s.k / 2) - s.k) / s.stride + 1; }

std::vector<float> Filled(std::size_t n, float scale) {
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>(static_cast<int>(i % 17) - 8);
    return v;
}

using Clock = std::chrono::steady_clock;

struct FcShape {
    const char* model;
    int m, k, n;
};

// The fully connected layers (MatMul/Gemm with constant weights) of the BERT-like encoder
// (sequence 128, d_model 768, FFN 3072), the classifier heads, and the input projections of the
// recurrent models (every step's x W^T at once: 64 steps, LSTM 4 x 256 gates, bidirectional GRU
// 2 x 3 x 256 gates on inputs of 256 and 512).
const FcShape kFcShapes[] = {
    {"bert_base_encoder", 128, 768, 768}, {"bert_base_encoder", 128, 768, 3072},
    {"bert_base_encoder", 128, 3072, 768}, {"resnet50", 1, 2048, 1000}, {"mobilenet_v2", 1, 1280, 1000},
    {"lstm2x256", 64, 256, 1024}, {"bigru2x256", 64, 256, 1536}, {"bigru2x256", 64, 512, 1536},
};

/// A oneDNN primitive and kCopies packed copies of its weights, sharing src/bias/dst.
class OneDnnRunner {
public:
    /// `prim` is made from `pd`; it runs on each copy's weights in turn.
    template <typename PrimitiveDesc>
    OneDnnRunner(dnnl::engine& eng, const PrimitiveDesc& pd, dnnl::primitive prim, const dnnl::memory::desc& userWeights,
                 const std::vector<float>& weights)
        : m_Eng(eng), m_Impl(pd.impl_info_str()), m_Src(pd.src_desc(), eng), m_Dst(pd.dst_desc(), eng),
          m_Bias(pd.bias_desc(), eng), m_Prim(std::move(prim)) {
        const std::vector<float> x = Filled(pd.src_desc().get_size() / sizeof(float), 0.01f);
        std::memcpy(m_Src.get_data_handle(), x.data(), pd.src_desc().get_size());
        std::memset(m_Bias.get_data_handle(), 0, pd.bias_desc().get_size());
        dnnl::stream strm(eng);
        for (int i = 0; i < kCopies; ++i) {
            dnnl::memory user(userWeights, eng, const_cast<float*>(weights.data()));
            dnnl::memory packed(pd.weights_desc(), eng);
            dnnl::reorder(user, packed).execute(strm, user, packed);
            m_Weights.push_back(packed);
        }
        strm.wait();
    }
    /// Each copy once; the fastest call.
    double RunAll() {
        dnnl::stream strm(m_Eng);
        double best = 1e30;
        for (const dnnl::memory& weights : m_Weights) {
            const auto t0 = Clock::now();
            m_Prim.execute(strm, {{DNNL_ARG_SRC, m_Src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_BIAS, m_Bias},
                                  {DNNL_ARG_DST, m_Dst}});
            strm.wait();
            best = std::min(best, std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        }
        return best;
    }
    const std::string& Impl() const { return m_Impl; }

private:
    dnnl::engine& m_Eng;
    std::string m_Impl;
    dnnl::memory m_Src, m_Dst, m_Bias;
    dnnl::primitive m_Prim;
    std::vector<dnnl::memory> m_Weights;
};

/// kCopies XNNPACK operators of one kind (each packed its own weights), set up on shared buffers.
class XnnRunner {
public:
    /// `create(op*)` makes one operator; `setup(op, src, dst)` binds it.
    template <typename Create, typename Setup>
    XnnRunner(pthreadpool_t pool, std::size_t srcCount, std::size_t dstCount, Create create, Setup setup)
        : m_Pool(pool), m_Src(Filled(srcCount, 0.01f)), m_Dst(dstCount) {
        for (int i = 0; i < kCopies; ++i) {
            xnn_operator_t op = nullptr;
            if (create(&op) != xnn_status_success) throw std::runtime_error("creating an XNNPACK operator failed");
            m_Ops.push_back(op);
            if (setup(op, m_Src.data(), m_Dst.data()) != xnn_status_success) {
                throw std::runtime_error("setting up an XNNPACK operator failed");
            }
        }
    }
    ~XnnRunner() {
        for (xnn_operator_t op : m_Ops) xnn_delete_operator(op);
    }
    XnnRunner(const XnnRunner&) = delete;
    XnnRunner& operator=(const XnnRunner&) = delete;
    double RunAll() {
        double best = 1e30;
        for (xnn_operator_t op : m_Ops) {
            const auto t0 = Clock::now();
            if (xnn_run_operator(op, m_Pool) != xnn_status_success) throw std::runtime_error("xnn_run_operator failed");
            best = std::min(best, std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        }
        return best;
    }

private:
    pthreadpool_t m_Pool;
    std::vector<float> m_Src, m_Dst;
    std::vector<xnn_operator_t> m_Ops;
};

/// A convolution as CpuAcc runs it: channel-blocked (a first layer reads plain data), Winograd
/// for 3x3 stride 1 with >= 32 input channels and >= 13x13 outputs, else direct; fused ReLU.
OneDnnRunner OneDnnConv(const Shape& s, dnnl::engine& eng) {
    using tag = dnnl::memory::format_tag;
    using dt = dnnl::memory::data_type;
    const int oh = OutSize(s), pad = s.k / 2;
    const bool dw = s.groups > 1;
    const dnnl::memory::desc src({1, s.ic, s.hw, s.hw}, dt::f32, s.ic < 16 ? tag::nchw : tag::nChw16c);
    const dnnl::memory::desc dst({1, s.oc, oh, oh}, dt::f32, tag::nChw16c);
    const dnnl::memory::dims wdims = dw ? dnnl::memory::dims{s.groups, 1, 1, s.k, s.k}
                                        : dnnl::memory::dims{s.oc, s.ic, s.k, s.k};
    const dnnl::memory::desc wei(wdims, dt::f32, tag::any), bias({s.oc}, dt::f32, tag::x);
    dnnl::post_ops po;
    po.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    dnnl::primitive_attr attr;
    attr.set_post_ops(po);
    const bool wino = !dw && s.k == 3 && s.stride == 1 && s.ic >= 32 && oh >= 13;
    auto make = [&](dnnl::algorithm alg) {
        dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, alg, src, wei, bias, dst,
                                          {s.stride, s.stride}, {pad, pad}, {pad, pad});
        return dnnl::convolution_forward::primitive_desc(d, attr, eng);
    };
    dnnl::convolution_forward::primitive_desc pd;
    try {
        pd = make(wino ? dnnl::algorithm::convolution_winograd : dnnl::algorithm::convolution_direct);
    } catch (const dnnl::error&) {
        pd = make(dnnl::algorithm::convolution_direct);
    }
    const std::vector<float> w = Filled(static_cast<std::size_t>(s.oc) * (s.ic / s.groups) * s.k * s.k, 0.001f);
    return OneDnnRunner(eng, pd, dnnl::convolution_forward(pd), {wdims, dt::f32, dw ? tag::goihw : tag::oihw}, w);
}

/// The same convolution on XNNPACK (NHWC; weights [groups][group oc][kh][kw][group ic]).
std::unique_ptr<XnnRunner> XnnConv(const Shape& s, pthreadpool_t pool) {
    const int oh = OutSize(s);
    const uint32_t pad = static_cast<uint32_t>(s.k / 2), k = static_cast<uint32_t>(s.k);
    const uint32_t stride = static_cast<uint32_t>(s.stride), groups = static_cast<uint32_t>(s.groups);
    const std::size_t gic = static_cast<std::size_t>(s.ic / s.groups), goc = static_cast<std::size_t>(s.oc / s.groups);
    const std::size_t ic = static_cast<std::size_t>(s.ic), oc = static_cast<std::size_t>(s.oc);
    const std::size_t hw = static_cast<std::size_t>(s.hw);
    const std::vector<float> w = Filled(oc * gic * k * k, 0.001f);
    const std::vector<float> bias(oc, 0.0f);
    const uint32_t flags = s.groups > 1 ? XNN_FLAG_DEPTHWISE_CONVOLUTION : 0u;
    return std::make_unique<XnnRunner>(
        pool, ic * hw * hw, oc * static_cast<std::size_t>(oh) * static_cast<std::size_t>(oh),
        [&](xnn_operator_t* op) {
            return xnn_create_convolution2d_nhwc_f32(pad, pad, pad, pad, k, k, stride, stride, 1, 1, groups, gic, goc, ic,
                                                     oc, w.data(), bias.data(), 0.0f,
                                                     std::numeric_limits<float>::infinity(), flags, op);
        },
        [&](xnn_operator_t op, const float* x, float* y) {
            return xnn_setup_convolution2d_nhwc_f32(op, 1, hw, hw, x, y, pool);
        });
}

/// A fully connected layer on oneDNN's matmul (weights packed in the layout it chooses).
OneDnnRunner OneDnnFc(const FcShape& s, dnnl::engine& eng) {
    using tag = dnnl::memory::format_tag;
    using dt = dnnl::memory::data_type;
    const dnnl::memory::desc src({s.m, s.k}, dt::f32, tag::ab), dst({s.m, s.n}, dt::f32, tag::ab);
    const dnnl::memory::desc wei({s.k, s.n}, dt::f32, tag::any), bias({1, s.n}, dt::f32, tag::ab);
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src, wei, bias, dst), eng);
    return OneDnnRunner(eng, pd, dnnl::matmul(pd), {{s.k, s.n}, dt::f32, tag::ab},
                        Filled(static_cast<std::size_t>(s.k) * s.n, 0.001f));
}

/// The same layer on XNNPACK (weights [n][k]).
std::unique_ptr<XnnRunner> XnnFc(const FcShape& s, pthreadpool_t pool) {
    const std::size_t m = static_cast<std::size_t>(s.m), k = static_cast<std::size_t>(s.k), n = static_cast<std::size_t>(s.n);
    const std::vector<float> w = Filled(k * n, 0.001f);
    const std::vector<float> bias(n, 0.0f);
    return std::make_unique<XnnRunner>(
        pool, m * k, m * n,
        [&](xnn_operator_t* op) {
            return xnn_create_fully_connected_nc_f32(k, n, k, n, w.data(), bias.data(),
                                                     -std::numeric_limits<float>::infinity(),
                                                     std::numeric_limits<float>::infinity(), 0, op);
        },
        [&](xnn_operator_t op, const float* x, float* y) { return xnn_setup_fully_connected_nc_f32(op, m, x, y, pool); });
}

// Times a and b alternately, `rounds` times; the best call of each.
template <typename A, typename B>
std::pair<double, double> Alternate(A& a, B& b, int rounds) {
    double ta = 1e30, tb = 1e30;
    for (int r = 0; r < rounds; ++r) {
        if (r % 2 == 0) {
            ta = std::min(ta, a.RunAll());
            tb = std::min(tb, b.RunAll());
        } else {
            tb = std::min(tb, b.RunAll());
            ta = std::min(ta, a.RunAll());
        }
    }
    return {ta, tb};
}

}  // namespace

int main(int argc, char** argv) {
    int threads = 1, rounds = 10;
    bool fcOnly = false;  // the fully connected table alone (the convolutions take minutes)
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--threads" && i + 1 < argc) {
            threads = std::atoi(argv[++i]);
        } else if (a == "--rounds" && i + 1 < argc) {
            rounds = std::atoi(argv[++i]);
        } else if (a == "--fc-only") {
            fcOnly = true;
        } else {
            std::fprintf(stderr, "usage: %s [--threads N] [--rounds R] [--fc-only]\n", argv[0]);
            return a == "--help" || a == "-h" ? 0 : 2;
        }
    }
    if (threads < 1 || rounds < 1) {
        std::fprintf(stderr, "--threads and --rounds must be at least 1\n");
        return 2;
    }
    if (xnn_initialize(nullptr) != xnn_status_success) {
        std::fprintf(stderr, "xnn_initialize failed: XNNPACK does not support this CPU\n");
        return 1;
    }
    omp_set_num_threads(threads);
    pthreadpool_t pool = threads > 1 ? pthreadpool_create(static_cast<std::size_t>(threads)) : nullptr;
    dnnl::engine eng(dnnl::engine::kind::cpu, 0);
    std::printf("batch 1, float32, fused ReLU, %d thread(s), best of %d rounds x %d weight copies; "
                "time per call in ms\n\n",
                threads, rounds, kCopies);
    double sumDnnl = 0, sumXnn = 0;
    if (!fcOnly)
        std::printf("| model | conv (ic->oc, input, kernel/stride, groups) | oneDNN 2.6 (kernel) | XNNPACK | "
                    "XNNPACK/oneDNN |\n|---|---|---:|---:|---:|\n");
    for (const Shape& s : kShapes) {
        if (fcOnly) break;
        OneDnnRunner a = OneDnnConv(s, eng);
        std::unique_ptr<XnnRunner> b = XnnConv(s, pool);
        const auto [ta, tb] = Alternate(a, *b, rounds);
        sumDnnl += ta;
        sumXnn += tb;
        std::printf("| %s | %d->%d, %dx%d, %dx%d/s%d, g%d | %.3f (%s) | %.3f | %.2f |\n", s.model, s.ic, s.oc, s.hw,
                    s.hw, s.k, s.k, s.stride, s.groups, ta, a.Impl().c_str(), tb, tb / ta);
    }
    if (!fcOnly)
        std::printf("\nsum over the convolutions: oneDNN %.2f ms, XNNPACK %.2f ms (XNNPACK/oneDNN %.2f)\n\n", sumDnnl,
                    sumXnn, sumXnn / sumDnnl);
    std::printf("| model | fully connected (M x K -> N) | oneDNN 2.6 matmul (kernel) | XNNPACK | XNNPACK/oneDNN |\n"
                "|---|---|---:|---:|---:|\n");
    for (const FcShape& s : kFcShapes) {
        OneDnnRunner a = OneDnnFc(s, eng);
        std::unique_ptr<XnnRunner> b = XnnFc(s, pool);
        const auto [ta, tb] = Alternate(a, *b, rounds);
        std::printf("| %s | %d x %d -> %d | %.3f (%s) | %.3f | %.2f |\n", s.model, s.m, s.k, s.n, ta, a.Impl().c_str(),
                    tb, tb / ta);
    }
    if (pool) pthreadpool_destroy(pool);
    xnn_deinitialize();
    return 0;
}
