// CpuAcc's own exact int8 convolution (IntegerConvAvx2: the kernel int8 QDQ / QOperator models
// run on CPUs without VNNI) on the convolution shapes of resnet50, batch 1, one layer at a time,
// and its matmul form (IntegerGemmBytesAvx2) on the products of constant weights in BERT-base: a
// benchmark, not a test. It separates what a layer costs in the kernel from what it costs in a
// whole model (docs/performance.md, int8 section):
//
//   build/bin/trellis_int8_conv_bench [--threads N] [--rounds R] [--only TEXT] [--no-pairings]
//                                     [--no-quad-variants] [--no-twin-quads] [--channel-quads]
//
// --only TEXT times only the shapes whose name contains TEXT (to profile one layer; "bert" the
// four products);
// --no-pairings packs the weights with one pairing everywhere (as before pairings; the model packs
// them with pairings where IntegerConvTakesPairings, as this benchmark does by default);
// --no-quad-variants packs the weights of a convolution without pairings with each quad as it is
// (the model lets them choose one variant per quad for all output channels, as this benchmark does
// by default: v after the shape);
// --no-twin-quads packs no twin quads (the model pairs the quads whose products add in 16 bits where
// IntegerConvTakesTwinQuads and the output is in channel quads, as this benchmark does by default:
// t after the shape);
// --channel-quads: input and output in channel quads where the channels allow (as in a model).
//
// Weights are drawn as quantize_static writes them (per output channel symmetric int8: Gaussian
// values scaled so that the channel's largest is 127), so the share of weight pairs the packing
// must split (corrections) is a real network's, not a uniform draw's (which needs several times
// more). The output is 8-bit after a float bias and Relu, as a QDQ model's convolution. Each shape
// is timed four ways, the best per call over the rounds: "hot" (the same input, weights, output and
// workspace every call: all in cache), "cold out" (the output rotates over buffers of 64 MB in all,
// so its lines come from memory, as in a model where each layer writes a buffer last used layers
// ago), "cold w" (the packed weights rotate likewise: from memory, as a model's 25 MB of weights
// are) and "all cold" (input, output, weights and workspace all rotating).
#include "CpuAccKernels.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace trellis::cpuacc;

struct Shape {
    const char* name;
    std::size_t ic, oc, hw, k, stride;
};

// The distinct convolutions of torchvision's resnet50 (input size of each, 224x224 image).
const Shape kShapes[] = {
    {"conv1 7x7/2", 3, 64, 224, 7, 2},          {"1x1 64->64 @56", 64, 64, 56, 1, 1},       {"3x3 64 @56", 64, 64, 56, 3, 1},
    {"1x1 64->256 @56", 64, 256, 56, 1, 1},     {"1x1 256->64 @56", 256, 64, 56, 1, 1},     {"1x1 256->128 @56", 256, 128, 56, 1, 1},
    {"3x3/2 128 @56", 128, 128, 56, 3, 2},      {"1x1/2 256->512 @56", 256, 512, 56, 1, 2}, {"1x1 128->512 @28", 128, 512, 28, 1, 1},
    {"1x1 512->128 @28", 512, 128, 28, 1, 1},   {"3x3 128 @28", 128, 128, 28, 3, 1},        {"1x1 512->256 @28", 512, 256, 28, 1, 1},
    {"3x3/2 256 @28", 256, 256, 28, 3, 2},      {"1x1/2 512->1024 @28", 512, 1024, 28, 1, 2}, {"1x1 256->1024 @14", 256, 1024, 14, 1, 1},
    {"1x1 1024->256 @14", 1024, 256, 14, 1, 1}, {"3x3 256 @14", 256, 256, 14, 3, 1},        {"1x1 1024->512 @14", 1024, 512, 14, 1, 1},
    {"3x3/2 512 @14", 512, 512, 14, 3, 2},      {"1x1/2 1024->2048 @14", 1024, 2048, 14, 1, 2}, {"1x1 512->2048 @7", 512, 2048, 7, 1, 1},
    {"1x1 2048->512 @7", 2048, 512, 7, 1, 1},   {"3x3 512 @7", 512, 512, 7, 3, 1},
};
// The products of constant weights in the QDQ BERT-base encoder (bench/cpu/make_models.py, sequence
// 128): m x k times k x n, through IntegerGemmBytesAvx2.
struct GemmShape {
    const char* name;
    std::size_t m, k, n;
};
const GemmShape kGemms[] = {
    {"bert qkv 128x768x2304", 128, 768, 2304},
    {"bert out 128x768x768", 128, 768, 768},
    {"bert ffn1 128x768x3072", 128, 768, 3072},
    {"bert ffn2 128x3072x768", 128, 3072, 768},
    {"resnet50 fc 1x2048x1000", 1, 2048, 1000},
};
constexpr std::size_t kColdBytes = std::size_t{64} << 20;  ///< what the rotating copies add up to

double Seconds(std::chrono::steady_clock::time_point from) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - from).count();
}

/// rows x depth weights as per-channel symmetric quantization writes them: Gaussian values scaled
/// so that each row's largest is 127.
std::vector<int8_t> DrawWeights(std::mt19937& rng, std::normal_distribution<float>& gauss, std::size_t rows, std::size_t depth) {
    std::vector<int8_t> w(rows * depth);
    for (std::size_t o = 0; o < rows; ++o) {
        std::vector<float> v(depth);
        float largest = 0.0f;
        for (float& x : v) x = gauss(rng), largest = std::max(largest, std::fabs(x));
        for (std::size_t k = 0; k < depth; ++k) w[o * depth + k] = static_cast<int8_t>(std::lrint(v[k] / largest * 127.0f));
    }
    return w;
}

/// The best seconds per call over the rounds in each of the four modes (hot, cold out, cold w, all
/// cold): run(mode, c) makes call c of a mode, `calls` calls per mode and round.
template <typename Run>
void TimeModes(int rounds, int calls, Run run, double (&best)[4]) {
    for (double& b : best) b = 1e30;
    for (int round = 0; round < rounds; ++round) {
        for (int mode = 0; mode < 4; ++mode) {
            const auto start = std::chrono::steady_clock::now();
            for (int c = 0; c < calls; ++c) run(mode, c);
            best[mode] = std::min(best[mode], Seconds(start) / calls);
        }
    }
}

/// Call c's copy of a buffer kept in `copies`: the first, or the c-th in turn where the mode rotates it.
std::size_t Turn(int c, std::size_t copies, bool rotates) { return rotates ? static_cast<std::size_t>(c) % copies : 0; }

void PrintRow(const char* name, const char* mark, const double (&best)[4], double macs) {
    std::printf("%-20s%-2s %10.3f %10.3f %10.3f %10.3f %10.1f\n", name, mark, best[0] * 1e3, best[1] * 1e3, best[2] * 1e3,
                best[3] * 1e3, macs / best[0] / 1e9);
    std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
    int threads = 1, rounds = 5;
    std::string only;
    bool pairings = true, quadVariants = true, quads = false, twin = true;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--threads" && i + 1 < argc) threads = std::atoi(argv[++i]);
        else if (a == "--rounds" && i + 1 < argc) rounds = std::atoi(argv[++i]);
        else if (a == "--only" && i + 1 < argc) only = argv[++i];
        else if (a == "--no-pairings") pairings = false;
        else if (a == "--no-quad-variants") quadVariants = false;
        else if (a == "--no-twin-quads") twin = false;
        else if (a == "--channel-quads") quads = true;
        else {
            std::fprintf(stderr, "usage: %s [--threads N] [--rounds R] [--only TEXT] [--no-pairings] [--no-quad-variants] [--no-twin-quads] [--channel-quads]\n",
                         argv[0]);
            return 2;
        }
    }
    if (threads < 1 || rounds < 1) {
        std::fprintf(stderr, "--threads and --rounds take a positive count\n");
        return 2;
    }
    if (CpuKernelIsa() < KernelIsa::Avx2) {
        std::fprintf(stderr, "the own int8 convolution needs AVX2; this CPU (or TRELLIS_MAX_CPU_ISA) has %s\n",
                     KernelIsaName(CpuKernelIsa()));
        return 1;
    }
    omp_set_num_threads(threads);
    std::mt19937 rng(5);
    std::normal_distribution<float> gauss(0.0f, 1.0f);
    std::printf("IntegerConvAvx2, %d thread(s), best of %d rounds per call (ms); GMAC/s when hot%s\n", threads, rounds,
                quads ? "; channel quads in and out" : "");
    std::printf("%-22s %10s %10s %10s %10s %10s\n", "shape (p/v: variants, t: twin)", "hot", "cold out", "cold w", "all cold", "GMAC/s");
    bool any = false;
    for (const Shape& sh : kShapes) {
        if (std::string(sh.name).find(only) == std::string::npos) continue;
        any = true;
        Im2ColShape s{};
        const std::size_t pad = sh.k / 2;  // resnet50's: 3 for 7x7, 1 for 3x3, none for 1x1
        s.m_Channels = sh.ic, s.m_InH = s.m_InW = sh.hw, s.m_KernelH = s.m_KernelW = sh.k;
        s.m_StrideH = s.m_StrideW = sh.stride, s.m_DilationH = s.m_DilationW = 1, s.m_PadTop = s.m_PadLeft = pad;
        s.m_OutH = s.m_OutW = (sh.hw + 2 * pad - sh.k) / sh.stride + 1;
        const std::size_t depth = sh.ic * sh.k * sh.k, pixels = s.m_OutH * s.m_OutW;
        // Weights as per-channel symmetric quantization writes them; a Relu's u8 activations.
        std::vector<int8_t> w = DrawWeights(rng, gauss, sh.oc, depth);
        std::vector<uint8_t> x(sh.ic * sh.hw * sh.hw);
        for (uint8_t& v : x) v = static_cast<uint8_t>(std::min(255.0f, std::max(0.0f, gauss(rng) * 40.0f)));
        // --channel-quads: input and output in channel quads where the channels allow (the bytes of x
        // are random either way), the weights in that plan's order.
        const bool quadsIn = quads && IntegerConvTakesChannelQuads(s), quadsOut = quads && sh.oc % 4 == 0;
        if (quadsIn) w = ChannelQuadWeights(w.data(), sh.oc, s);
        const std::shared_ptr<const IntegerConvPlan> plan = PlanIntegerConv(s, sh.oc, quadsIn);
        const std::vector<uint8_t> blob =
            PackIntegerConvWeights(w.data(), sh.oc, depth, pairings && IntegerConvTakesPairings(*plan), quadsOut, quadVariants,
                                   twin && IntegerConvTakesTwinQuads(*plan));
        std::vector<std::vector<uint8_t>> weights(std::max<std::size_t>(8, kColdBytes / blob.size()), blob);
        const std::size_t workspaceBytes = IntegerConvWorkspaceSize(*plan) + 1;
        std::vector<std::vector<uint8_t>> workspaces(std::max<std::size_t>(8, kColdBytes / workspaceBytes),
                                                     std::vector<uint8_t>(workspaceBytes));
        std::vector<std::vector<uint8_t>> inputs(std::max<std::size_t>(8, kColdBytes / x.size()), x);
        std::vector<float> scales(sh.oc), floatBias(sh.oc);
        for (std::size_t o = 0; o < sh.oc; ++o) scales[o] = 1e-4f * (1.0f + 0.01f * static_cast<float>(o % 7)), floatBias[o] = 0.5f;
        std::vector<std::vector<uint8_t>> outputs(std::max<std::size_t>(8, kColdBytes / (sh.oc * pixels)),
                                                 std::vector<uint8_t>(sh.oc * pixels));
        const double macs = static_cast<double>(sh.oc) * static_cast<double>(depth) * static_cast<double>(pixels);
        const int calls = std::max(8, static_cast<int>(2e9 / macs));
        double best[4];
        TimeModes(rounds, calls, [&](int mode, int c) {
            IntegerConvOutput out;
            out.m_Quantized = outputs[Turn(c, outputs.size(), mode == 1 || mode == 3)].data();
            out.m_FloatBias = floatBias.data();
            out.m_Relu = true;
            out.m_ChannelQuads = quadsOut;
            IntegerConvAvx2(inputs[Turn(c, inputs.size(), mode == 3)].data(), false, 0, *plan, weights[Turn(c, weights.size(), mode >= 2)].data(),
                            nullptr, scales.data(), true, out, workspaces[Turn(c, workspaces.size(), mode == 3)].data());
        }, best);
        const bool twinned = IntegerConvTwinPairs(blob.data()) > 0;
        const char* mark = IntegerConvWeightsArePaired(blob.data())          ? (twinned ? "pt" : "p")
                           : IntegerConvWeightsHaveQuadVariants(blob.data()) ? (twinned ? "vt" : "v")
                                                                              : (twinned ? "t" : " ");
        PrintRow(sh.name, mark, best, macs);
    }
    for (const GemmShape& sh : kGemms) {
        if (std::string(sh.name).find(only) == std::string::npos) continue;
        any = true;
        // Weights as for the convolutions (B^T: [n][k]); A u8 around a zero point, as a QDQ
        // encoder's activations; C 8-bit after the float bias, divided by its output scale.
        const std::vector<int8_t> w = DrawWeights(rng, gauss, sh.n, sh.k);
        std::vector<uint8_t> a(sh.m * sh.k);
        for (uint8_t& v : a) v = static_cast<uint8_t>(std::min(255.0f, std::max(0.0f, 128.0f + gauss(rng) * 30.0f)));
        // As CpuAcc packs them: whole for the GEMV rows of a few rows of A.
        const std::vector<uint8_t> blob =
            sh.m <= kIntegerGemvRows ? PackIntegerGemvWeights(w.data(), sh.n, sh.k) : PackIntegerConvWeights(w.data(), sh.n, sh.k);
        std::vector<std::vector<uint8_t>> weights(std::max<std::size_t>(8, kColdBytes / blob.size()), blob);
        std::vector<uint8_t> workspace(IntegerGemmBytesWorkspaceSize(sh.m, sh.k, sh.n) + 1);
        std::vector<float> scales(sh.n), floatBias(sh.n);
        for (std::size_t o = 0; o < sh.n; ++o) scales[o] = 1e-4f * (1.0f + 0.01f * static_cast<float>(o % 7)), floatBias[o] = 0.5f;
        std::vector<std::vector<uint8_t>> outputs(std::max<std::size_t>(8, kColdBytes / (sh.m * sh.n)), std::vector<uint8_t>(sh.m * sh.n));
        const double macs = static_cast<double>(sh.m) * static_cast<double>(sh.k) * static_cast<double>(sh.n);
        const int calls = std::max(8, static_cast<int>(2e9 / macs));
        double best[4];  // cold out and cold w as for the convolutions; A and the workspace stay in cache
        TimeModes(rounds, calls, [&](int mode, int c) {
            IntegerConvOutput out;
            out.m_Quantized = outputs[Turn(c, outputs.size(), mode == 1 || mode == 3)].data();
            out.m_FloatBias = floatBias.data();
            out.m_ZeroPoint = 134;
            out.m_OutScale = 0.04f;
            IntegerGemmBytesAvx2(a.data(), false, 128, sh.m, sh.k, weights[Turn(c, weights.size(), mode >= 2)].data(), sh.n, nullptr,
                                 scales.data(), true, out, workspace.data());
        }, best);
        PrintRow(sh.name, IntegerConvWeightsArePaired(blob.data()) ? "p" : " ", best, macs);
    }
    if (!any) {
        std::fprintf(stderr, "no shape's name contains '%s'\n", only.c_str());
        return 2;
    }
    return 0;
}
