// CpuAcc int8: QDQ and QOperator models on oneDNN's int8 primitives, against CpuRef.
//
// How close: CpuRef dequantizes, computes the convolution / matmul in float32 and quantizes the
// result (x / scale, rounded half to even); CpuAcc's int8 primitive sums the 8-bit products
// exactly in int32 and scales that sum once. Both are the same real number up to float32
// rounding, so a quantized output can differ only where that number lies within a rounding
// error of a .5 boundary: by one quantization step, in a few elements. The tests below assert
// exactly that for single layers; whole models may carry such a one-step difference into later
// layers, so for them the bound is stated on the dequantized outputs (see QuantizedModels).
#ifndef ONNX_ML
#define ONNX_ML 1  // the onnx_proto target defines it; the fallback keeps the file checkable alone
#endif
#include <onnx/onnx_pb.h>

#include "unit/TestHelpers.hpp"
#include "backends/cpuacc/CpuAccKernels.hpp"
#include "backends/cpuacc/CpuAccRegion.hpp"

#include <trellis/Trellis.hpp>
#include <trellis/backends/BackendRegistry.hpp>

#include <gtest/gtest.h>
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>

using namespace trellis;
using namespace trellis::test;

namespace {

/// A Quantize/DequantizeLinear descriptor with only the axis set (the other fields' defaults).
QuantizeLinearDescriptor AxisDescriptor(int64_t axis) {
    QuantizeLinearDescriptor d;
    d.m_Axis = axis;
    return d;
}

bool CpuAccAvailable() { return BackendRegistryInstance().IsBackendRegistered("CpuAcc"); }

#define SKIP_WITHOUT_CPUACC() \
    if (!CpuAccAvailable()) GTEST_SKIP() << "CpuAcc is not built (no oneDNN)"

/// Whether oneDNN computes int8 exactly here (VNNI); the int8 fusions happen only then.
bool Int8Exact(std::string* why = nullptr) { return cpuacc::OneDnnInt8IsExact(why); }

/// A QDQ network built through the public API: float input -> QuantizeLinear -> DequantizeLinear
/// -> Conv or Gemm with weights DequantizeLinear(int8 constant) -> [Relu] -> QuantizeLinear ->
/// DequantizeLinear -> output. The 8-bit tensor before the last DequantizeLinear is a second output,
/// so the comparison counts quantization steps exactly.
class QdqNet {
public:
    QdqNet() : m_Net(INetwork::Create()) {}

    IOutputSlot* Const(const TensorInfo& info, const void* data) {
        return &m_Net->AddConstantLayer(ConstTensor(info, data))->GetOutputSlot(0);
    }
    IOutputSlot* Scale(float s) { return Keep(TensorInfo(TensorShape(), DataType::Float32, 0.0f, 0, true), &s, sizeof s); }
    IOutputSlot* ZeroPoint(DataType t, int32_t zp) {
        if (t == DataType::UInt8) {
            const uint8_t v = static_cast<uint8_t>(zp);
            return Keep(TensorInfo(TensorShape(), t, 0.0f, 0, true), &v, 1);
        }
        const int8_t v = static_cast<int8_t>(zp);
        return Keep(TensorInfo(TensorShape(), t, 0.0f, 0, true), &v, 1);
    }
    IOutputSlot* Keep(const TensorInfo& info, const void* data, std::size_t bytes) {
        m_Storage.emplace_back(static_cast<const uint8_t*>(data), static_cast<const uint8_t*>(data) + bytes);
        return Const(info, m_Storage.back().data());
    }
    IOutputSlot* Layer(LayerType type, const LayerDescriptor& d, const std::vector<IOutputSlot*>& inputs) {
        const std::string name = std::string(GetLayerTypeName(type)) + "_" + std::to_string(m_Count++);
        auto* l = m_Net->AddLayer(type, d, name.c_str(), static_cast<int>(inputs.size()), 1);
        for (std::size_t i = 0; i < inputs.size(); ++i) inputs[i]->Connect(l->GetInputSlot(static_cast<unsigned int>(i)));
        return &l->GetOutputSlot(0);
    }
    IOutputSlot* Quantize(IOutputSlot* x, float s, DataType t, int32_t zp) {
        return Layer(LayerType::QuantizeLinear, QuantizeLinearDescriptor{}, {x, Scale(s), ZeroPoint(t, zp)});
    }
    IOutputSlot* Dequantize(IOutputSlot* x, float s, DataType t, int32_t zp) {
        return Layer(LayerType::DequantizeLinear, QuantizeLinearDescriptor{}, {x, Scale(s), ZeroPoint(t, zp)});
    }
    /// Int8 weights of `shape` with one scale per index of `axis` (or one scale), dequantized.
    IOutputSlot* Weights(const TensorShape& shape, std::size_t scales, int64_t axis) {
        std::vector<int8_t> q(shape.GetNumElements());
        std::uniform_int_distribution<int> d(-127, 127);
        for (int8_t& v : q) v = static_cast<int8_t>(d(m_Rng));
        std::vector<float> s(scales);
        for (std::size_t i = 0; i < scales; ++i) s[i] = 0.002f + 0.001f * static_cast<float>(i % 7);
        IOutputSlot* w = Keep(TensorInfo(shape, DataType::Signed8, 0.0f, 0, true), q.data(), q.size());
        IOutputSlot* sc = Keep(TensorInfo(scales == 1 ? TensorShape() : TensorShape({static_cast<unsigned int>(scales)}),
                                          DataType::Float32, 0.0f, 0, true),
                               s.data(), s.size() * sizeof(float));
        return Layer(LayerType::DequantizeLinear, AxisDescriptor(axis), {w, sc});
    }
    IOutputSlot* FloatConst(const TensorShape& shape, float scale) {
        std::vector<float> v(shape.GetNumElements());
        std::uniform_real_distribution<float> d(-1.0f, 1.0f);
        for (float& x : v) x = scale * d(m_Rng);
        return Keep(TensorInfo(shape, DataType::Float32, 0.0f, 0, true), v.data(), v.size() * sizeof(float));
    }
    void Output(IOutputSlot* s) {
        auto* l = m_Net->AddOutputLayer(m_NumOutputs++);
        s->Connect(l->GetInputSlot(0));
    }
    IOutputSlot* Input(const TensorShape& shape) {
        auto* l = m_Net->AddInputLayer(0);
        l->GetOutputSlot(0).SetTensorInfo(TensorInfo(shape, DataType::Float32));
        m_InputShape = shape;
        return &l->GetOutputSlot(0);
    }

    struct Result {
        std::vector<std::vector<uint8_t>> m_Outputs;  ///< raw bytes
        std::map<BackendId, unsigned int> m_Counts;
        std::string m_Text;  ///< the optimized network and every declined layer's reasons
    };
    Result Run(const std::vector<BackendId>& backends) {
        Result r;
        IRuntimePtr runtime = IRuntime::Create({});
        IOptimizedNetworkPtr opt = Optimize(*m_Net, backends, runtime->GetDeviceSpec());
        r.m_Counts = opt->GetBackendLayerCounts();
        r.m_Text = opt->ToString();
        for (const LayerPlacement& p : opt->GetLayerPlacements()) {
            r.m_Text += "\n" + p.m_LayerName + " on " + p.m_Backend.Get();
            for (const std::string& sub : p.m_SubstitutedLayers) r.m_Text += "\n" + sub + " on " + p.m_Backend.Get();
            for (const auto& [backend, reason] : p.m_Declined) r.m_Text += "\n  declined by " + backend.Get() + ": " + reason;
        }
        NetworkId id = 0;
        std::string error;
        if (runtime->LoadNetwork(id, std::move(opt), error) != Status::Success) throw RuntimeException(error);
        std::vector<float> x(m_InputShape.GetNumElements());
        std::mt19937 rng(5);
        std::normal_distribution<float> d(0.0f, 1.0f);
        for (float& v : x) v = d(rng);
        InputTensors in{{0, ConstTensor(TensorInfo(m_InputShape, DataType::Float32, 0.0f, 0, true), x.data())}};
        OutputTensors out;
        r.m_Outputs.resize(static_cast<std::size_t>(m_NumOutputs));
        for (int o = 0; o < m_NumOutputs; ++o) {
            const TensorInfo info = runtime->GetOutputTensorInfo(id, o);
            r.m_Outputs[static_cast<std::size_t>(o)].assign(info.GetNumBytes(), 0xAB);
            out.emplace_back(o, Tensor(info, r.m_Outputs[static_cast<std::size_t>(o)].data()));
        }
        if (runtime->EnqueueWorkload(id, in, out) != Status::Success) throw RuntimeException("EnqueueWorkload failed");
        return r;
    }

private:
    INetworkPtr m_Net;
    std::vector<std::vector<uint8_t>> m_Storage;
    TensorShape m_InputShape;
    int m_NumOutputs = 0;
    int m_Count = 0;
    std::mt19937 m_Rng{11};
};

/// Steps between two 8-bit outputs: the largest and the number of elements that differ.
template <typename Q>
std::pair<int, std::size_t> StepDiff(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
    const Q* pa = reinterpret_cast<const Q*>(a.data());
    const Q* pb = reinterpret_cast<const Q*>(b.data());
    int worst = 0;
    std::size_t differing = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const int d = std::abs(static_cast<int>(pa[i]) - static_cast<int>(pb[i]));
        worst = std::max(worst, d);
        differing += d != 0;
    }
    return {worst, differing};
}

struct Int8LayerCase {
    const char* m_Name;
    bool m_Conv;
    bool m_PerChannel;
    DataType m_Activations;  ///< UInt8 or Signed8
    bool m_Relu;
};

class CpuAccInt8Layer : public ::testing::TestWithParam<Int8LayerCase> {};

// One quantized convolution or Gemm: CpuAcc's int8 primitive against CpuRef's float path, within
// one quantization step (see the top of this file), and the layer must be the int8 node.
TEST_P(CpuAccInt8Layer, WithinOneQuantizationStepOfCpuRef) {
    SKIP_WITHOUT_CPUACC();
    const Int8LayerCase& c = GetParam();
    const DataType t = c.m_Activations;
    const int32_t zx = t == DataType::UInt8 ? 128 : 3, zy = t == DataType::UInt8 ? 120 : -5;
    QdqNet net;
    IOutputSlot* y = nullptr;
    if (c.m_Conv) {
        IOutputSlot* x = net.Dequantize(net.Quantize(net.Input({1, 19, 13, 11}), 0.03f, t, zx), 0.03f, t, zx);
        ConvolutionDescriptor d;
        d.m_Strides = {1, 1};
        d.m_PadsBegin = {1, 1};
        d.m_PadsEnd = {1, 1};
        y = net.Layer(LayerType::Convolution, d,
                      {x, net.Weights({24, 19, 3, 3}, c.m_PerChannel ? 24 : 1, 0), net.FloatConst({24}, 0.2f)});
    } else {
        IOutputSlot* x = net.Dequantize(net.Quantize(net.Input({7, 37}), 0.03f, t, zx), 0.03f, t, zx);
        GemmDescriptor d;
        d.m_TransB = true;
        y = net.Layer(LayerType::Gemm, d, {x, net.Weights({29, 37}, c.m_PerChannel ? 29 : 1, 0), net.FloatConst({29}, 0.2f)});
    }
    if (c.m_Relu) y = net.Layer(LayerType::ElementwiseUnary, ElementwiseUnaryDescriptor{UnaryOperation::Relu}, {y});
    IOutputSlot* q = net.Quantize(y, 0.02f, t, zy);
    net.Output(q);
    net.Output(net.Dequantize(q, 0.02f, t, zy));
    const QdqNet::Result acc = net.Run({"CpuAcc", "CpuRef"});
    const QdqNet::Result ref = net.Run({"CpuRef"});
    EXPECT_EQ(acc.m_Counts.count("CpuRef") ? acc.m_Counts.at("CpuRef") : 0u, 0u) << acc.m_Text;
    const auto [worst, differing] = t == DataType::UInt8 ? StepDiff<uint8_t>(acc.m_Outputs[0], ref.m_Outputs[0])
                                                         : StepDiff<int8_t>(acc.m_Outputs[0], ref.m_Outputs[0]);
    std::printf("[ int8 ] %s: %zu of %zu quantized outputs differ from CpuRef's, by at most %d step(s)\n", c.m_Name, differing,
                acc.m_Outputs[0].size(), worst);
    EXPECT_LE(worst, 1) << c.m_Name << ": " << differing << " of " << acc.m_Outputs[0].size() << " differ\n" << acc.m_Text;
    EXPECT_LE(differing * 100, acc.m_Outputs[0].size()) << c.m_Name << ": more than 1% of the outputs differ by a step";
    // An int8 node where oneDNN's int8 is exact, else on the own integer GEMM (AVX2).
    std::string why;
    const bool ownGemm = cpuacc::BestKernelIsa() != cpuacc::KernelIsa::Scalar;
    if (Int8Exact(&why) || ownGemm) {
        EXPECT_NE(acc.m_Text.find("(int8)"), std::string::npos) << "no int8 node\n" << acc.m_Text;
    } else {
        EXPECT_EQ(acc.m_Text.find("(int8)"), std::string::npos) << acc.m_Text;
        std::printf("[ oneDNN int8 off ] %s\n", why.c_str());
    }
}

INSTANTIATE_TEST_SUITE_P(CpuAccInt8, CpuAccInt8Layer,
                         ::testing::Values(Int8LayerCase{"ConvU8PerTensor", true, false, DataType::UInt8, false},
                                           Int8LayerCase{"ConvU8PerChannelRelu", true, true, DataType::UInt8, true},
                                           Int8LayerCase{"ConvS8PerChannel", true, true, DataType::Signed8, false},
                                           Int8LayerCase{"GemmU8PerTensor", false, false, DataType::UInt8, false},
                                           Int8LayerCase{"GemmU8PerChannelRelu", false, true, DataType::UInt8, true},
                                           Int8LayerCase{"GemmS8PerChannel", false, true, DataType::Signed8, false}),
                         [](const ::testing::TestParamInfo<Int8LayerCase>& i) { return std::string(i.param.m_Name); });

// The quantize kernels (QuantizeLinear, the fused QuantizeLinear -> DequantizeLinear pass, the
// quantized residual addition) on every ISA this CPU runs equal ONNX's float32 division bit for
// bit: inputs at and one to three ulps around every tie k + 0.5 of the scale, values that
// saturate, NaN and infinities, scales from 2^-20 to 2^20 (powers of two and not), subnormal
// scales and scales whose reciprocal is subnormal; the addition over every pair of 8-bit values.
// DynamicQuantizeLinear's range on every kernel version this CPU runs: min(0, min x) and
// max(0, max x) with NaN ignored, whatever the length and wherever the extremes and NaNs are.
TEST(CpuAccInt8, ZeroBasedRangeOnEveryIsaIgnoresNaN) {
    SKIP_WITHOUT_CPUACC();
    using namespace trellis::cpuacc;
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> d(-50.0f, 50.0f);
    std::size_t checked = 0;
    for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{16}, std::size_t{31}, std::size_t{1000}}) {
        for (int trial = 0; trial < 20; ++trial) {
            std::vector<float> x(n);
            for (float& v : x) v = d(rng);
            if (n > 0 && trial % 2 == 0) x[static_cast<std::size_t>(trial) % n] = nan;
            if (n > 2 && trial % 3 == 0) x[n - 1] = trial % 2 ? inf : -inf;
            if (trial == 5) std::fill(x.begin(), x.end(), -0.0f);
            if (trial == 7) for (float& v : x) v = std::fabs(v) + 1.0f;  // all positive: lo stays 0
            float wantLo = 0.0f, wantHi = 0.0f;
            for (float v : x) {
                wantLo = std::min(wantLo, v);
                wantHi = std::max(wantHi, v);
            }
            for (const KernelIsa isa : CpuKernelIsas()) {
                float lo = 1.0f, hi = -1.0f;
                ZeroBasedRange(x.data(), n, lo, hi, isa);
                EXPECT_EQ(std::memcmp(&lo, &wantLo, 4), 0) << KernelIsaName(isa) << " n=" << n << " trial " << trial << ": " << lo;
                EXPECT_EQ(std::memcmp(&hi, &wantHi, 4), 0) << KernelIsaName(isa) << " n=" << n << " trial " << trial << ": " << hi;
                ++checked;
            }
        }
    }
    EXPECT_GT(checked, 0u);
}

// The own integer GEMMs (AVX2: vpmaddwd on 16-bit operands, and vpmaddubsw on 8-bit ones with
// the weight pairs kept within 128) against the definition in 64-bit
// integers: exact sums (plus an int32 bias), then float(sum) * scale, on every tile edge (rows not
// a multiple of 6, columns not a multiple of 16, odd depths), u8 and s8 A with zero points at the
// ends of their range, one scale or one per column, on one thread and on two; and at the largest depth it takes
// with the largest products (255 x -128, nothing may wrap).
TEST(CpuAccInt8, IntegerGemmIsExactOnEdgeShapesAndTheLargestSums) {
    SKIP_WITHOUT_CPUACC();
    using namespace trellis::cpuacc;
    if (CpuKernelIsa() < KernelIsa::Avx2) GTEST_SKIP() << "the own integer GEMM needs AVX2";
    std::mt19937 rng(5);
    struct Shape { std::size_t m, k, n; };
    // bytes: IntegerGemmBytesAvx2 (8-bit, constant weights as B^T); else IntegerGemmAvx2 (16-bit,
    // the computed operands' GEMM, here with B packed as an s8 operand without zero point).
    const auto check = [&](const Shape& s, bool aSigned, int32_t zp, bool perColumn, int threads, const std::vector<uint8_t>& a,
                           const std::vector<int8_t>& b, const std::vector<float>& scales, const std::vector<int32_t>& bias,
                           bool bytes) {
        std::vector<float> c(s.m * s.n, 1e30f);
        const int saved = omp_get_max_threads();
        omp_set_num_threads(threads);
        if (bytes) {
            std::vector<int8_t> bT(s.k * s.n);
            for (std::size_t q = 0; q < s.k; ++q) {
                for (std::size_t j = 0; j < s.n; ++j) bT[j * s.k + q] = b[q * s.n + j];
            }
            const std::vector<uint8_t> packed = PackIntegerConvWeights(bT.data(), s.n, s.k);
            std::vector<uint8_t> workspace(IntegerGemmBytesWorkspaceSize(s.m, s.k, s.n));
            IntegerConvOutput to;
            to.m_Float = c.data();
            IntegerGemmBytesAvx2(a.data(), aSigned, zp, s.m, s.k, packed.data(), s.n, bias.empty() ? nullptr : bias.data(),
                                 scales.data(), perColumn, to, workspace.empty() ? nullptr : workspace.data());
        } else {
            std::vector<int16_t> packed(PackedIntegerWeightsSize(s.k, s.n)), workspace(IntegerGemmWorkspaceSize(s.m, s.k));
            PackIntegerOperand(b.data(), true, 0, s.k, s.n, packed.data());
            IntegerGemmAvx2(a.data(), aSigned, zp, s.m, s.k, packed.data(), s.n, bias.empty() ? nullptr : bias.data(),
                            scales.data(), perColumn, c.data(), workspace.data());
        }
        omp_set_num_threads(saved);
        std::size_t wrong = 0;
        for (std::size_t i = 0; i < s.m; ++i) {
            for (std::size_t j = 0; j < s.n; ++j) {
                int64_t sum = bias.empty() ? 0 : bias[j];
                for (std::size_t q = 0; q < s.k; ++q) {
                    const int64_t x = aSigned ? static_cast<int8_t>(a[i * s.k + q]) : a[i * s.k + q];
                    sum += (x - zp) * b[q * s.n + j];
                }
                const float want = static_cast<float>(static_cast<int32_t>(sum)) * scales[perColumn ? j : 0];
                if (std::memcmp(&want, &c[i * s.n + j], sizeof(float)) != 0) {
                    if (++wrong <= 3) ADD_FAILURE() << s.m << "x" << s.k << "x" << s.n << " (" << i << ", " << j << "): " << c[i * s.n + j] << ", want " << want;
                }
            }
        }
        return wrong;
    };
    // (Up to 4 rows the 8-bit GEMM runs one row at a time: depths of whole 16-byte groups and not.)
    for (const Shape s : {Shape{1, 1, 1}, Shape{5, 3, 17}, Shape{6, 2, 16}, Shape{7, 47, 15}, Shape{13, 300, 40}, Shape{37, 129, 33},
                          Shape{1, 77, 21}, Shape{4, 300, 12}, Shape{2, 16, 5}, Shape{3, 64, 11}}) {
        for (const bool aSigned : {false, true}) {
            for (const int32_t zp : aSigned ? std::vector<int32_t>{-128, 0, 127} : std::vector<int32_t>{0, 131, 255}) {
                std::vector<uint8_t> a(s.m * s.k);
                for (uint8_t& v : a) v = static_cast<uint8_t>(rng());
                std::vector<int8_t> b(s.k * s.n);
                for (int8_t& v : b) v = static_cast<int8_t>(rng());
                std::vector<float> scales(s.n);
                for (float& v : scales) v = std::ldexp(1.0f + static_cast<float>(rng() % 1000) / 997.0f, -12);
                std::vector<int32_t> bias(s.n);
                for (int32_t& v : bias) v = static_cast<int32_t>(rng() % 200001) - 100000;
                for (const bool perColumn : {false, true}) {
                    for (const int threads : {1, 2}) {
                        for (const bool bytes : {false, true}) {
                            EXPECT_EQ(check(s, aSigned, zp, perColumn, threads, a, b, scales,
                                            perColumn ? bias : std::vector<int32_t>{}, bytes),
                                      0u)
                                << (bytes ? "8-bit" : "16-bit");
                        }
                    }
                }
            }
        }
    }
    // The largest sums: k at the bound, every product (255 - 0) x -128, and x 127 for the other sign.
    const Shape big{2, kMaxIntegerGemmDepth, 17};
    std::vector<uint8_t> a(big.m * big.k, 255);
    std::vector<int8_t> b(big.k * big.n);
    for (std::size_t q = 0; q < big.k; ++q) {
        for (std::size_t j = 0; j < big.n; ++j) b[q * big.n + j] = j % 2 ? int8_t{-128} : int8_t{127};
    }
    EXPECT_EQ(check(big, false, 0, false, 2, a, b, {1.0f}, {}, false), 0u);
    EXPECT_EQ(check(big, false, 0, false, 2, a, b, {1.0f}, {}, true), 0u);
    // And the 8-bit GEMM with every weight pair needing its correction at the largest depth.
    std::fill(b.begin(), b.end(), int8_t{-128});
    EXPECT_EQ(check(big, false, 0, false, 1, a, b, {1.0f}, {}, true), 0u);
    // The row-at-a-time loop with few corrections (weights mostly small, a pair of 120s now and then:
    // the corrections gathered one by one) - the cases above correct so many quad-rows that their
    // weights carry the corrections as dense blocks, run like the weights.
    for (const Shape s : {Shape{1, 300, 21}, Shape{3, 77, 12}}) {
        std::vector<int8_t> b(s.k * s.n);
        for (std::size_t q = 0; q < s.k; ++q) {
            for (std::size_t j = 0; j < s.n; ++j) b[q * s.n + j] = static_cast<int8_t>(static_cast<int>(rng() % 41) - 20);
        }
        for (std::size_t q = 0; q + 1 < s.k; q += 36) {
            for (std::size_t j = 0; j < s.n; ++j) b[q * s.n + j] = b[(q + 1) * s.n + j] = 120;
        }
        std::vector<uint8_t> a(s.m * s.k);
        for (uint8_t& v : a) v = static_cast<uint8_t>(rng());
        EXPECT_EQ(check(s, false, 17, false, 1, a, b, {1.0f}, {}, true), 0u) << "few corrections";
    }
    // Weight pairs at the edge of what vpmaddubsw adds exactly (opposite signs at the ends of the
    // range, same signs summing to +-128, kept whole) and just past it (halved and corrected), each
    // column one pattern along k, against taps of 255 in both places of a pair and in one of them.
    const int kPairs[][2] = {{127, -128}, {-128, 127}, {64, 64}, {-64, -64}, {-128, 0}, {0, 127}, {1, 127},
                             {65, 64}, {-65, -64}, {127, 127}, {-128, -128}, {-1, -128}};
    const Shape edge{3, 64, std::size(kPairs)};
    std::vector<int8_t> pairs(edge.k * edge.n);
    for (std::size_t q = 0; q < edge.k; ++q) {
        for (std::size_t j = 0; j < edge.n; ++j) pairs[q * edge.n + j] = static_cast<int8_t>(kPairs[j][q % 2]);
    }
    for (const bool aSigned : {false, true}) {
        // Rows: every tap the largest, only the first of each pair, only the second (as u8: s8 + 128).
        const uint8_t high = aSigned ? 127 : 255, low = aSigned ? 0x80 : 0;
        std::vector<uint8_t> taps(edge.m * edge.k);
        for (std::size_t q = 0; q < edge.k; ++q) {
            taps[q] = high;
            taps[edge.k + q] = q % 2 ? low : high;
            taps[2 * edge.k + q] = q % 2 ? high : low;
        }
        EXPECT_EQ(check(edge, aSigned, aSigned ? -128 : 0, false, 1, taps, pairs, {1.0f}, {}, true), 0u) << "edge pairs";
    }
}

// The 8-bit GEMM's quantized rows of C (a QDQ matmul's: the float bias, Relu and QuantizeLinear in
// the tiles) against the definition: the exact sum, float(sum) * scale, plus the float bias, Relu,
// divided by the output scale where it is not 1, clamped to the type's range less the zero point,
// rounded half to even, the zero point added - byte for byte, u8 and s8, on whole tiles (16 rows of
// A, 5 columns: transposed in registers) and the edges (fewer rows, the last columns), with every
// panel of A packed first or not, a few rows one at a time; one thread and two.
TEST(CpuAccInt8, IntegerGemmBytesQuantizesItsRowsAsQuantizeLinear) {
    SKIP_WITHOUT_CPUACC();
    using namespace trellis::cpuacc;
    if (CpuKernelIsa() < KernelIsa::Avx2) GTEST_SKIP() << "the own integer GEMM needs AVX2";
    std::mt19937 rng(11);
    struct Shape { std::size_t m, k, n; };
    for (const Shape s : {Shape{16, 40, 5}, Shape{32, 77, 23}, Shape{37, 129, 33}, Shape{128, 768, 17}, Shape{5, 64, 10},
                         Shape{32, 77, 200}, Shape{3, 64, 12}}) {
        std::vector<uint8_t> a(s.m * s.k);
        for (uint8_t& v : a) v = static_cast<uint8_t>(rng());
        std::vector<int8_t> bT(s.n * s.k);  // B^T [n][k]
        for (int8_t& v : bT) v = static_cast<int8_t>(rng());
        const std::vector<uint8_t> packed = PackIntegerConvWeights(bT.data(), s.n, s.k);
        std::vector<uint8_t> workspace(IntegerGemmBytesWorkspaceSize(s.m, s.k, s.n));
        std::vector<float> scales(s.n), floatBias(s.n);
        for (float& v : scales) v = std::ldexp(1.0f + static_cast<float>(rng() % 1000) / 997.0f, -14);
        for (float& v : floatBias) v = static_cast<float>(static_cast<int>(rng() % 2001) - 1000) / 256.0f;
        for (const bool outSigned : {false, true}) {
            for (const float outScale : {1.0f, 0.0371f}) {
                for (const bool withBias : {false, true}) {
                    for (const bool relu : {false, true}) {
                        for (const int threads : {1, 2}) {
                        // The zero point inside the range, and at the type's smallest (a Relu's usual
                        // output: the packs' saturation is the Relu there).
                        for (const bool lowest : {false, true}) {
                            const int32_t zp = 3, outZp = lowest ? (outSigned ? -128 : 0) : outSigned ? -7 : 134;
                            IntegerConvOutput to;
                            std::vector<uint8_t> c(s.m * s.n, 0xAB);
                            to.m_Quantized = c.data();
                            to.m_Signed = outSigned;
                            to.m_ZeroPoint = outZp;
                            to.m_OutScale = outScale;
                            to.m_FloatBias = withBias ? floatBias.data() : nullptr;
                            to.m_Relu = relu;
                            const int saved = omp_get_max_threads();
                            omp_set_num_threads(threads);
                            IntegerGemmBytesAvx2(a.data(), false, zp, s.m, s.k, packed.data(), s.n, nullptr, scales.data(), true, to,
                                                 workspace.empty() ? nullptr : workspace.data());
                            omp_set_num_threads(saved);
                            const float lo = outSigned ? -128.0f : 0.0f, hi = outSigned ? 127.0f : 255.0f;
                            std::size_t wrong = 0;
                            for (std::size_t i = 0; i < s.m; ++i) {
                                for (std::size_t j = 0; j < s.n; ++j) {
                                    int64_t sum = 0;
                                    for (std::size_t q = 0; q < s.k; ++q) sum += (int64_t{a[i * s.k + q]} - zp) * bT[j * s.k + q];
                                    float v = static_cast<float>(static_cast<int32_t>(sum)) * scales[j];
                                    if (withBias) v = v + floatBias[j];
                                    if (relu) v = std::max(v, 0.0f);
                                    if (outScale != 1.0f) v = v / outScale;
                                    v = std::min(std::max(v, lo - static_cast<float>(outZp)), hi - static_cast<float>(outZp));
                                    const int32_t q = static_cast<int32_t>(std::nearbyint(v)) + outZp;
                                    const uint8_t want = outSigned ? static_cast<uint8_t>(static_cast<int8_t>(q)) : static_cast<uint8_t>(q);
                                    if (c[i * s.n + j] != want && ++wrong <= 3) {
                                        ADD_FAILURE() << s.m << "x" << s.k << "x" << s.n << " (" << i << ", " << j << "): " << int{c[i * s.n + j]}
                                                      << ", want " << int{want} << (outSigned ? " s8" : " u8") << " out scale " << outScale
                                                      << (withBias ? " bias" : "") << (relu ? " relu" : "") << ", " << threads
                                                      << " thread(s), zero point " << outZp;
                                    }
                                }
                            }
                            EXPECT_EQ(wrong, 0u);
                        }
                        }
                    }
                }
            }
        }
    }
}

// The own integer convolution (weights stationary, taps read from the planes or a padded copy)
// against the definition in 64-bit integers, for the layouts its packing treats apart: unpadded
// 1x1, padded 3x3 (panels of 16 consecutive output pixels over the padded copy: 16 adjacent bytes
// per tap within a row, shuffled from two 16-byte reads where a panel spans rows - wide outputs
// and narrow ones alike - or a byte per lane where it spans more, as a 1-wide output, or gathered
// from the input where the lanes lie 256 bytes apart or more, as at dilation 20 - the last one a half panel of 8
// pixels; a last panel of at most 2 pixels runs the GEMV loop per pixel instead - 7x7 outputs with
// every panel packed first, 9x9 and 5x10 ones panel by panel), stride 2 (the
// padded input split by row and column parity: kernels of 1, 2, 3, 4, 5 and 7, rows of several 32-byte
// chunks, padding below only - rows of the split planes nobody writes; dilated, gathered taps) and dilation, outputs narrower and wider than a 16-pixel panel, odd depths,
// channel counts not a multiple of the 5-row tile; u8 and s8 input, Float32 and 8-bit outputs (with
// and without a float bias and Relu; requantized - DequantizeLinear, Relu, QuantizeLinear - by the
// division and by the reciprocal where IntegerRequantizeReciprocal allows it), with and without the
// workspace that packs every panel first.
// Weights whose every pair has the same signs and a sum past 128 (100, 100 or -100, -100): no
// pairing makes one exact, the complemented variants (255 - x under a negated weight) make them all
// exact - no correction left where the layer takes six variants (depth <= 128, 20 blocks or more),
// except in a block with a -128 to negate (kept as corrections there). Exact against the definition
// either way, on u8 and s8 input.
TEST(CpuAccInt8, IntegerConvComplementedVariantsLeaveNoCorrection) {
    SKIP_WITHOUT_CPUACC();
    using namespace trellis::cpuacc;
    if (CpuKernelIsa() < KernelIsa::Avx2) GTEST_SKIP() << "the own integer convolution needs AVX2";
    std::mt19937 rng(29);
    for (const std::size_t o : {std::size_t{10}, std::size_t{100}}) {
        for (const bool minus128 : {false, true}) {
            Im2ColShape s{};
            s.m_Channels = 62, s.m_InH = s.m_InW = s.m_OutH = s.m_OutW = 16, s.m_KernelH = s.m_KernelW = 1;
            s.m_StrideH = s.m_StrideW = s.m_DilationH = s.m_DilationW = 1;
            const std::size_t depth = s.m_Channels, pixels = 256;
            std::vector<int8_t> w(o * depth);
            for (std::size_t r = 0; r < o; ++r) {
                for (std::size_t k = 0; k < depth; ++k) w[r * depth + k] = static_cast<int8_t>(r % 3 == 1 ? -100 : 100);
            }
            if (minus128) w[2 * depth + 5] = w[2 * depth + 7] = -128;  // block 0, quad 1: two -128s a complement would negate
            const std::shared_ptr<const IntegerConvPlan> plan = PlanIntegerConv(s, o);
            ASSERT_TRUE(IntegerConvTakesPairings(*plan));
            const std::vector<uint8_t> packed = PackIntegerConvWeights(w.data(), o, depth, true);
            ASSERT_TRUE(IntegerConvWeightsArePaired(packed.data()));
            const std::size_t corrections = IntegerConvCorrections(packed.data());
            if (o < 20) {
                EXPECT_GT(corrections, o * depth / 8) << "three pairings cannot make these pairs exact";
            } else if (minus128) {
                EXPECT_GT(corrections, 0u) << "a -128 cannot be negated";
                EXPECT_LT(corrections, 5 * depth / 4) << "only block 0 keeps corrections";
            } else {
                EXPECT_EQ(corrections, 0u);
            }
            std::vector<int32_t> bias(o);
            for (int32_t& v : bias) v = static_cast<int32_t>(rng() % 2001) - 1000;
            const std::vector<float> scales(o, 0x1p-10f);
            std::vector<uint8_t> workspace(IntegerConvWorkspaceSize(*plan));
            for (const bool xSigned : {false, true}) {
                std::vector<uint8_t> x(depth * pixels);
                for (uint8_t& v : x) v = static_cast<uint8_t>(rng());
                const int32_t zp = xSigned ? -5 : 131;
                std::vector<float> f(o * pixels, 1e30f);
                IntegerConvOutput out;
                out.m_Float = f.data();
                IntegerConvAvx2(x.data(), xSigned, zp, *plan, packed.data(), bias.data(), scales.data(), true, out,
                                workspace.empty() ? nullptr : workspace.data());
                std::size_t wrong = 0;
                for (std::size_t r = 0; r < o; ++r) {
                    for (std::size_t p = 0; p < pixels; ++p) {
                        int64_t sum = bias[r];
                        for (std::size_t c = 0; c < depth; ++c) {
                            const int64_t v = xSigned ? static_cast<int8_t>(x[c * pixels + p]) : x[c * pixels + p];
                            sum += (v - zp) * w[r * depth + c];
                        }
                        const float want = static_cast<float>(static_cast<int32_t>(sum)) * scales[r];
                        wrong += std::memcmp(&want, &f[r * pixels + p], sizeof(float)) != 0 ? 1 : 0;
                    }
                }
                EXPECT_EQ(wrong, 0u) << o << " channels" << (minus128 ? ", a -128 pair" : "") << (xSigned ? ", s8" : ", u8");
            }
        }
    }
}

// The GEMV rows of the 8-bit GEMM (at most kIntegerGemvRows rows of A) on whole weights
// (PackIntegerGemvWeights: no pair halved, A split in 4-bit halves) give the exact sums, as the
// weights packed for the tiles do, byte for byte quantized: full-range and extreme weights (every
// pair saturating vpmaddubsw whole), A up to 255, u8 and s8 A, depths off 16 and 4, columns off 5;
// more rows, or a convolution, refuse them.
TEST(CpuAccInt8, IntegerGemvOfWholeWeightsIsExact) {
    SKIP_WITHOUT_CPUACC();
    using namespace trellis::cpuacc;
    if (CpuKernelIsa() < KernelIsa::Avx2) GTEST_SKIP() << "the own integer GEMM needs AVX2";
    std::mt19937 rng(23);
    struct Shape { std::size_t m, k, n; };
    std::size_t checked = 0;
    for (const Shape s : {Shape{1, 2048, 1000}, Shape{1, 64, 5}, Shape{2, 77, 13}, Shape{3, 130, 7}, Shape{4, 16, 21}, Shape{1, 3, 4}}) {
        for (int weights = 0; weights < 3; ++weights) {
            std::vector<int8_t> bT(s.n * s.k);  // B^T [n][k]: random, all -128, all 127
            for (int8_t& v : bT) v = static_cast<int8_t>(weights == 0 ? static_cast<int>(rng() % 256) - 128 : weights == 1 ? -128 : 127);
            const std::vector<uint8_t> whole = PackIntegerGemvWeights(bT.data(), s.n, s.k);
            const std::vector<uint8_t> tiles = PackIntegerConvWeights(bT.data(), s.n, s.k);
            for (const bool aSigned : {false, true}) {
                std::vector<uint8_t> a(s.m * s.k);
                for (uint8_t& v : a) v = rng() % 4 == 0 ? (aSigned ? 0x7F : 255) : static_cast<uint8_t>(rng());
                const int32_t zp = aSigned ? -9 : 17;
                std::vector<float> scales(s.n);
                for (float& v : scales) v = std::ldexp(1.0f + static_cast<float>(rng() % 1000) / 997.0f, -20);
                std::vector<float> got(s.m * s.n, 1e30f);
                IntegerConvOutput f;
                f.m_Float = got.data();
                IntegerGemmBytesAvx2(a.data(), aSigned, zp, s.m, s.k, whole.data(), s.n, nullptr, scales.data(), true, f, nullptr);
                std::size_t wrong = 0;
                for (std::size_t i = 0; i < s.m; ++i) {
                    for (std::size_t j = 0; j < s.n; ++j) {
                        int64_t sum = 0;
                        for (std::size_t q = 0; q < s.k; ++q) {
                            const int64_t x = aSigned ? static_cast<int8_t>(a[i * s.k + q]) : a[i * s.k + q];
                            sum += (x - zp) * bT[j * s.k + q];
                        }
                        const float want = static_cast<float>(static_cast<int32_t>(sum)) * scales[j];
                        wrong += std::memcmp(&want, &got[i * s.n + j], sizeof(float)) != 0 ? 1 : 0;
                        ++checked;
                    }
                }
                EXPECT_EQ(wrong, 0u) << s.m << "x" << s.k << "x" << s.n << " weights " << weights << (aSigned ? " s8" : " u8");
                // Quantized, as the weights packed for the tiles give it.
                std::vector<uint8_t> q1(s.m * s.n), q2(s.m * s.n);
                IntegerConvOutput q;
                q.m_Quantized = q1.data();
                q.m_ZeroPoint = 120;
                q.m_OutScale = 0.07f;
                IntegerGemmBytesAvx2(a.data(), aSigned, zp, s.m, s.k, whole.data(), s.n, nullptr, scales.data(), true, q, nullptr);
                q.m_Quantized = q2.data();
                std::vector<uint8_t> workspace(IntegerGemmBytesWorkspaceSize(s.m, s.k, s.n) + 1);
                IntegerGemmBytesAvx2(a.data(), aSigned, zp, s.m, s.k, tiles.data(), s.n, nullptr, scales.data(), true, q, workspace.data());
                EXPECT_EQ(q1, q2) << s.m << "x" << s.k << "x" << s.n << " weights " << weights;
            }
        }
    }
    EXPECT_GT(checked, 5000u);
    std::vector<int8_t> bT(10 * 64, 100);
    const std::vector<uint8_t> whole = PackIntegerGemvWeights(bT.data(), 10, 64);
    std::vector<uint8_t> a(kIntegerGemvRows * 4 * 64, 1), c(kIntegerGemvRows * 4 * 10);
    std::vector<uint8_t> workspace(IntegerGemmBytesWorkspaceSize(kIntegerGemvRows + 1, 64, 10) + 1);
    const std::vector<float> scales(10, 1.0f);
    IntegerConvOutput to;
    to.m_Quantized = c.data();
    EXPECT_THROW(IntegerGemmBytesAvx2(a.data(), false, 0, kIntegerGemvRows + 1, 64, whole.data(), 10, nullptr, scales.data(), true, to,
                                      workspace.data()),
                 std::invalid_argument);
}

// A convolution's weights packed with a variant per quad are refused by the matmul kernel, which
// reads its rows of A unreordered: an error naming the reason, not a wrong product.
TEST(CpuAccInt8, IntegerGemmBytesRefusesWeightsWithQuadVariants) {
    SKIP_WITHOUT_CPUACC();
    using namespace trellis::cpuacc;
    if (CpuKernelIsa() < KernelIsa::Avx2) GTEST_SKIP() << "the own integer GEMM needs AVX2";
    const std::size_t m = 32, k = 64, n = 10;
    std::vector<int8_t> bT(n * k);
    for (std::size_t i = 0; i < bT.size(); ++i) bT[i] = static_cast<int8_t>(i % 4 == 0 || i % 4 == 1 ? 100 : -3);
    const std::vector<uint8_t> packed = PackIntegerConvWeights(bT.data(), n, k, false, false, true);
    ASSERT_TRUE(IntegerConvWeightsHaveQuadVariants(packed.data())) << "every quad's first pair (100, 100) needs another variant";
    ASSERT_FALSE(IntegerConvWeightsHaveQuadVariants(PackIntegerConvWeights(bT.data(), n, k).data()));
    std::vector<uint8_t> a(m * k, 7), c(m * n);
    std::vector<uint8_t> workspace(IntegerGemmBytesWorkspaceSize(m, k, n) + 1);
    const std::vector<float> scales(n, 1.0f);
    IntegerConvOutput to;
    to.m_Quantized = c.data();
    try {
        IntegerGemmBytesAvx2(a.data(), false, 0, m, k, packed.data(), n, nullptr, scales.data(), true, to, workspace.data());
        ADD_FAILURE() << "weights with variants per quad ran";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("variant per quad"), std::string::npos) << e.what();
    }
    // Likewise a convolution's weights with twin quads (each block's quads in an order of its own).
    std::vector<int8_t> small(12 * k);
    for (std::size_t i = 0; i < small.size(); ++i) small[i] = static_cast<int8_t>(static_cast<int>(i % 7) - 3);
    const std::vector<uint8_t> twin = PackIntegerConvWeights(small.data(), 12, k, false, true, false, true);
    ASSERT_GT(IntegerConvTwinPairs(twin.data()), 0u) << "weights within 3 pair every quad";
    std::vector<uint8_t> c12(m * 12), workspace12(IntegerGemmBytesWorkspaceSize(m, k, 12) + 1);
    const std::vector<float> scales12(12, 1.0f);
    to.m_Quantized = c12.data();
    try {
        IntegerGemmBytesAvx2(a.data(), false, 0, m, k, twin.data(), 12, nullptr, scales12.data(), true, to, workspace12.data());
        ADD_FAILURE() << "weights with twin quads ran";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("twin quads"), std::string::npos) << e.what();
    }
}

TEST(CpuAccInt8, IntegerConvIsExactOnEveryPackingPath) {
    SKIP_WITHOUT_CPUACC();
    using namespace trellis::cpuacc;
    if (CpuKernelIsa() < KernelIsa::Avx2) GTEST_SKIP() << "the own integer convolution needs AVX2";
    std::mt19937 rng(17);
    struct Case {
        std::size_t c, h, w, o, k, stride, dilation, pad;
        std::size_t padBelow = 0;  ///< padding below beyond `pad` (ONNX pads [p, p, p + e, p])
    };
    std::size_t checked = 0, pairedCases = 0, pairedPanelsFirst = 0, quadVariantCases = 0, layoutsRun[4] = {};
    std::size_t twinCases = 0, twinPairs = 0, twinPairedCases = 0, twinCorrectedCases = 0;
    for (const Case& t : {Case{5, 9, 9, 7, 1, 1, 1, 0}, Case{3, 7, 20, 13, 3, 1, 1, 1}, Case{4, 14, 14, 6, 3, 1, 1, 1},
                         Case{3, 11, 17, 8, 3, 2, 1, 1}, Case{2, 12, 12, 5, 3, 1, 2, 2}, Case{3, 15, 15, 9, 7, 2, 1, 3},
                         Case{6, 5, 5, 20, 3, 1, 1, 0}, Case{64, 4, 4, 70, 3, 1, 1, 1}, Case{3, 9, 40, 5, 3, 2, 1, 1},
                         Case{4, 8, 36, 6, 1, 2, 1, 0}, Case{9, 7, 7, 11, 3, 1, 1, 1}, Case{5, 16, 16, 7, 2, 2, 1, 0},
                         Case{2, 30, 70, 6, 5, 2, 1, 2}, Case{3, 6, 7, 4, 3, 2, 1, 1}, Case{3, 13, 13, 4, 3, 2, 2, 2},
                         Case{3, 20, 1, 5, 3, 1, 1, 1}, Case{3, 9, 9, 4, 2, 2, 1, 0, 1}, Case{2, 11, 13, 3, 4, 2, 1, 0, 3},
                         Case{64, 7, 7, 70, 3, 1, 1, 1}, Case{64, 7, 7, 80, 1, 1, 1, 0}, Case{6, 5, 10, 9, 1, 1, 1, 0},
                         Case{2, 24, 2, 5, 3, 1, 20, 20},
                         // Channel quads in and out (multiples of 4): a 1x1 layer's panels across rows, 3x3 panels over a
                         // padded copy split by rows, stride 2 with and without a copy, dilation, stride 3 (dword by
                         // dword), padding below only, GEMV pixels (7x7), rows of 40 at a height of 3.
                         Case{32, 9, 21, 12, 1, 1, 1, 0}, Case{8, 10, 19, 8, 3, 1, 1, 1}, Case{12, 11, 17, 8, 3, 2, 1, 1},
                         Case{8, 14, 15, 4, 1, 2, 1, 0}, Case{4, 12, 12, 8, 3, 1, 2, 2}, Case{4, 10, 11, 8, 3, 3, 1, 1},
                         Case{8, 9, 9, 8, 2, 2, 1, 0, 1}, Case{64, 7, 7, 64, 3, 1, 1, 1}, Case{16, 3, 40, 8, 3, 1, 1, 1},
                         // Every panel packed first (more weights than taps) with pairings: six variants (depth
                         // 8) and three (depth 144), a last panel of 4 and of 9 pixels.
                         Case{8, 10, 10, 240, 1, 1, 1, 0}, Case{36, 6, 6, 160, 2, 1, 1, 0}}) {
        Im2ColShape s{};
        s.m_Channels = t.c, s.m_InH = t.h, s.m_InW = t.w, s.m_KernelH = s.m_KernelW = t.k;
        s.m_StrideH = s.m_StrideW = t.stride, s.m_DilationH = s.m_DilationW = t.dilation, s.m_PadTop = s.m_PadLeft = t.pad;
        s.m_OutH = (t.h + 2 * t.pad + t.padBelow - (t.k - 1) * t.dilation - 1) / t.stride + 1;
        s.m_OutW = (t.w + 2 * t.pad - (t.k - 1) * t.dilation - 1) / t.stride + 1;
        const std::size_t depth = t.c * t.k * t.k, pixels = s.m_OutH * s.m_OutW;
        std::vector<uint8_t> x(t.c * t.h * t.w);
        for (uint8_t& v : x) v = static_cast<uint8_t>(rng());
        std::vector<int8_t> w(t.o * depth);
        for (int8_t& v : w) v = static_cast<int8_t>(rng());
        // For twin quads: weights mostly within 40 (pairs of quads that add in 16 bits), one in eight
        // anywhere in the int8 range (quads left one by one, some corrected).
        std::vector<int8_t> wTwin(t.o * depth);
        for (int8_t& v : wTwin) {
            v = static_cast<int8_t>(rng() % 8 == 0 ? static_cast<int>(rng() % 256) - 128 : static_cast<int>(rng() % 81) - 40);
        }
        std::vector<int32_t> bias(t.o);
        for (int32_t& v : bias) v = static_cast<int32_t>(rng() % 20001) - 10000;
        std::vector<float> scales(t.o);
        for (float& v : scales) v = std::ldexp(1.0f + static_cast<float>(rng() % 1000) / 997.0f, -14);
        // Loud: 2^16 larger (past 16 bits) and, every other channel, 2^30 (past 32 bits).
        std::vector<float> loudScales(scales);
        for (std::size_t o = 0; o < t.o; ++o) loudScales[o] = std::ldexp(scales[o], o % 2 ? 30 : 16);
        std::vector<float> floatBias(t.o);
        for (float& v : floatBias) v = static_cast<float>(static_cast<int>(rng() % 201) - 100) / 8.0f;
        // The input in channel quads ([c / 4][h][w][4]) and the weights in that plan's depth order.
        const bool quadsIn = IntegerConvTakesChannelQuads(s), quadsOut = t.o % 4 == 0;
        std::vector<uint8_t> xQuads(quadsIn ? x.size() : 0);
        for (std::size_t i = 0; i < xQuads.size(); ++i) {
            const std::size_t c = i / (t.h * t.w), at = i % (t.h * t.w);
            xQuads[(c / 4 * t.h * t.w + at) * 4 + c % 4] = x[i];
        }
        const std::vector<int8_t> wQuads = quadsIn ? ChannelQuadWeights(w.data(), t.o, s) : std::vector<int8_t>{};
        const std::vector<int8_t> wTwinQuads = quadsIn ? ChannelQuadWeights(wTwin.data(), t.o, s) : std::vector<int8_t>{};
        // Planes in and out; channel quads in, out (quantized only) and both, where the channels allow.
        for (int layout = 0; layout < 4; ++layout) {
        const bool inQuads = layout % 2 == 1, outQuads = layout >= 2;
        if ((inQuads && !quadsIn) || (outQuads && !quadsOut)) continue;
        const std::shared_ptr<const IntegerConvPlan> plan = PlanIntegerConv(s, t.o, inQuads);
        std::vector<uint8_t> workspace(IntegerConvWorkspaceSize(*plan));
        // Each case with the weights as packed, (where the plan takes them) with pairings, and with a
        // variant per quad for all channels (the panels reordered by every packer): these uniform
        // weights need a correction in most quad-rows under any pairing, fewer under the best. Then
        // (variants 6-11, channel quads out: blocks of 4 rows) twin quads alone, with pairings and
        // with a variant per quad, on the weights that pair.
        for (int variant = 0; variant < 12; ++variant) {
            const bool twin = variant >= 6;
            const bool paired = variant == 2 || variant == 3 || variant == 8 || variant == 9;
            const bool quadVariants = variant == 4 || variant == 5 || variant >= 10, xSigned = variant % 2 == 1;
            if (paired && !IntegerConvTakesPairings(*plan)) continue;
            if (twin && (!outQuads || !IntegerConvTakesTwinQuads(*plan))) continue;
            const std::vector<int8_t>& wv = twin ? wTwin : w;
            const std::vector<uint8_t> packed = PackIntegerConvWeights(twin ? (inQuads ? wTwinQuads.data() : wTwin.data())
                                                                            : (inQuads ? wQuads.data() : w.data()),
                                                                       t.o, depth, paired, outQuads, quadVariants, twin);
            if (twin) {
                twinPairs += IntegerConvTwinPairs(packed.data());
                ++twinCases;
                if (IntegerConvWeightsArePaired(packed.data()) && IntegerConvTwinPairs(packed.data()) > 0) ++twinPairedCases;
                if (IntegerConvCorrections(packed.data()) > 0 && IntegerConvTwinPairs(packed.data()) > 0) ++twinCorrectedCases;
            } else {
                EXPECT_EQ(IntegerConvTwinPairs(packed.data()), 0u) << "twin quads unasked";
            }
            if (!quadVariants) {
                EXPECT_FALSE(IntegerConvWeightsHaveQuadVariants(packed.data())) << "variants per quad unasked";
            }
            if (quadVariants) {
                if (!IntegerConvWeightsHaveQuadVariants(packed.data())) continue;  // saving too few: as variant 0 / 1
                ++quadVariantCases;
            }
            if (paired && twin) {
                // (Pairings kept only where they save corrections: these weights have few.)
            } else if (paired) {
                ASSERT_TRUE(IntegerConvWeightsArePaired(packed.data()))
                    << "c" << t.c << " " << t.h << "x" << t.w << " o" << t.o << " layout " << layout;
                ++pairedCases;
                pairedPanelsFirst += IntegerConvPacksPanelsFirst(*plan) ? 1 : 0;
            } else {
                EXPECT_FALSE(IntegerConvWeightsArePaired(packed.data()));
            }
            const int32_t zp = xSigned ? -7 : 140;
            // Float32; quantized; quantized after a float bias and Relu; requantized (division); requantized
            // (the reciprocal where it is allowed); each on 1, 2 and 3 threads (the threads share the
            // (panel, block) pairs: a panel may be split between two).
            // Then (combos 15-18) quantized with and without the bias and Relu, on 1 and 2 threads, with
            // loud scales: most values beyond the 8-bit range on both sides. Then (combos 19-22) the same
            // with the usual scales and the output's zero point at the type's smallest (a Relu's usual
            // output: the packs' saturation is the Relu there), and (23-24) at 0 (none added).
            for (int combo = 0; combo < 25; ++combo) {
                const bool loud = combo >= 15 && combo < 19, lowest = combo >= 19 && combo < 23, zeroZp = combo >= 23;
                const int mode = combo >= 15 ? 1 + (combo - 15) % 2 : combo % 5;
                const int threads = combo >= 15 ? 1 + (combo - 15) % 4 / 2 : 1 + combo / 5;
                const std::vector<float>& sc = loud ? loudScales : scales;
                std::size_t saturated = 0;
                const bool quantized = mode > 0, reluBias = mode == 2, requant = mode >= 3;
                if (outQuads && !quantized) continue;
                // A guard of 5 planes after the output: no tile may store past the last channel.
                const std::size_t guard = 5 * pixels;
                std::vector<float> f(t.o * pixels + guard, 1e30f);
                std::vector<uint8_t> q(t.o * pixels + guard, 0xAB);
                IntegerConvOutput out;
                if (quantized) out.m_Quantized = q.data();
                else out.m_Float = f.data();
                out.m_ChannelQuads = outQuads;
                out.m_Signed = xSigned;
                out.m_ZeroPoint = xSigned ? (loud ? -3 : 3) : 100;  // loud s8: a negative zero point at the saturated low end
                if (lowest) out.m_ZeroPoint = xSigned ? -128 : 0;
                if (zeroZp) out.m_ZeroPoint = 0;
                out.m_Relu = reluBias;
                out.m_FloatBias = reluBias ? floatBias.data() : nullptr;
                if (requant) {
                    out.m_Requantize = true;
                    out.m_RequantScale = 0.0371f;
                    out.m_RequantRelu = true;
                    out.m_RequantOutScale = 0.0213f;
                    out.m_RequantOutZeroPoint = xSigned ? -9 : 7;
                    out.m_RequantOutSigned = xSigned;
                    if (mode == 4) {
                        out.m_RequantReciprocal = IntegerRequantizeReciprocal(out);
                        EXPECT_NE(out.m_RequantReciprocal, 0.0f) << "these scales multiply by the reciprocal";
                    }
                }
                const int saved = omp_get_max_threads();
                omp_set_num_threads(threads);
                IntegerConvAvx2(inQuads ? xQuads.data() : x.data(), xSigned, zp, *plan, packed.data(), bias.data(), sc.data(), true, out,
                                workspace.empty() ? nullptr : workspace.data());
                omp_set_num_threads(saved);
                std::size_t wrong = 0;
                for (std::size_t i = t.o * pixels; i < t.o * pixels + guard; ++i) wrong += q[i] != 0xAB || f[i] != 1e30f ? 1 : 0;
                for (std::size_t o = 0; o < t.o; ++o) {
                    for (std::size_t oh = 0; oh < s.m_OutH; ++oh) {
                        for (std::size_t ow = 0; ow < s.m_OutW; ++ow) {
                            int64_t sum = bias[o];
                            for (std::size_t c = 0; c < t.c; ++c) {
                                for (std::size_t kh = 0; kh < t.k; ++kh) {
                                    for (std::size_t kw = 0; kw < t.k; ++kw) {
                                        const long ih = static_cast<long>(oh * t.stride + kh * t.dilation) - static_cast<long>(t.pad);
                                        const long iw = static_cast<long>(ow * t.stride + kw * t.dilation) - static_cast<long>(t.pad);
                                        if (ih < 0 || iw < 0 || ih >= static_cast<long>(t.h) || iw >= static_cast<long>(t.w)) continue;
                                        const uint8_t raw = x[(c * t.h + static_cast<std::size_t>(ih)) * t.w + static_cast<std::size_t>(iw)];
                                        const int64_t v = xSigned ? static_cast<int8_t>(raw) : raw;
                                        sum += (v - zp) * wv[o * depth + (c * t.k + kh) * t.k + kw];
                                    }
                                }
                            }
                            float real = static_cast<float>(static_cast<int32_t>(sum)) * sc[o];
                            if (reluBias) real = std::max(real + floatBias[o], 0.0f);
                            const std::size_t at = outQuads ? (o / 4 * pixels + oh * s.m_OutW + ow) * 4 + o % 4
                                                            : o * pixels + oh * s.m_OutW + ow;
                            if (quantized) {
                                const float lo = xSigned ? -128.0f : 0.0f, hi = xSigned ? 127.0f : 255.0f;
                                long want = std::lrint(std::clamp(real, lo - out.m_ZeroPoint, hi - out.m_ZeroPoint)) + out.m_ZeroPoint;
                                if (requant) {
                                    const float d = std::max(static_cast<float>(want - out.m_ZeroPoint) * out.m_RequantScale, 0.0f);
                                    const float zp2 = static_cast<float>(out.m_RequantOutZeroPoint);
                                    want = std::lrint(std::clamp(d / out.m_RequantOutScale, lo - zp2, hi - zp2)) + out.m_RequantOutZeroPoint;
                                }
                                const long got = xSigned ? static_cast<int8_t>(q[at]) : q[at];
                                wrong += got != want ? 1 : 0;
                                saturated += want == static_cast<long>(lo) || want == static_cast<long>(hi) ? 1 : 0;
                            } else {
                                wrong += std::memcmp(&real, &f[at], sizeof(float)) != 0 ? 1 : 0;
                            }
                            ++checked;
                        }
                    }
                }
                EXPECT_EQ(wrong, 0u) << "c" << t.c << " " << t.h << "x" << t.w << " o" << t.o << " k" << t.k << " stride " << t.stride
                                     << " dilation " << t.dilation << " pad " << t.pad << (xSigned ? " s8" : " u8")
                                     << (quantized ? " quantized" : " float") << (reluBias ? " bias relu" : "")
                                     << (requant ? (mode == 4 ? " requantized by the reciprocal" : " requantized") : "")
                                     << ", " << threads << " thread(s)" << (loud ? ", loud" : "") << (paired ? ", pairings" : "")
                                     << (inQuads ? ", channel quads in" : "") << (outQuads ? ", channel quads out" : "")
                                     << (quadVariants ? ", a variant per quad" : "") << (twin ? ", twin quads" : "");
                if (loud) {
                    EXPECT_GT(saturated * 4, t.o * pixels) << "the loud scales should take most values past the range";
                }
                layoutsRun[layout] += 1;
            }
        }
        }
    }
    for (int layout = 1; layout < 4; ++layout) EXPECT_GT(layoutsRun[layout], 50u) << "layout " << layout << " barely run";
    EXPECT_GT(checked, 0u);
    EXPECT_GT(pairedCases, 8u) << "most cases run panel by panel without GEMV pixels: they take pairings";
    EXPECT_GT(pairedPanelsFirst, 4u) << "the layers that pack every panel first take pairings too";
    EXPECT_GT(twinCases, 30u) << "most channel-quad outputs take twin quads";
    EXPECT_GT(twinPairs, 1000u) << "the small weights should pair most of their quads";
    EXPECT_GT(twinPairedCases, 4u) << "twin quads with pairings (variants chosen per block) barely run";
    EXPECT_GT(twinCorrectedCases, 10u) << "twin quads beside corrected quads barely run";
    std::printf("[ twin ] %zu cases, %zu pairs, %zu with pairings, %zu with corrections\n", twinCases, twinPairs, twinPairedCases,
                twinCorrectedCases);
    EXPECT_GT(quadVariantCases, 40u) << "the variants per quad should pay on most of these uniform weights";
}

TEST(CpuAccInt8, QuantizeKernelsOnEveryIsaEqualTheDivisionAroundEveryTie) {
    SKIP_WITHOUT_CPUACC();
    using namespace trellis::cpuacc;
    const std::vector<KernelIsa> isas = CpuKernelIsas();
    std::mt19937 rng(7);
    std::vector<float> scales = {1.0f, 0.5f, 0.1f, 0.013f, 0.0078125f, 3.0f, 1e-6f, 0x1p-20f, 0x1p20f, 7.3e5f,
                                 1e-39f /* subnormal */, 3e38f /* reciprocal subnormal */, 1e-45f};
    std::uniform_real_distribution<float> expo(-20.0f, 20.0f);
    for (int i = 0; i < 40; ++i) scales.push_back(std::exp2(expo(rng)));
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    std::size_t checked = 0;
    for (const float scale : scales) {
        std::vector<float> in = {0.0f, -0.0f, nan, inf, -inf, 1e-45f, -1e-38f, 3e38f, -3e38f};
        for (int k = -300; k <= 300; ++k) {
            float x = (static_cast<float>(k) + 0.5f) * scale;  // at (or one rounding from) a tie
            for (int u = 0; u < 3; ++u) x = std::nextafter(x, -inf);
            for (int u = 0; u < 7; ++u, x = std::nextafter(x, inf)) in.push_back(x);
            in.push_back(static_cast<float>(k) * scale * 1.37f);
        }
        const std::size_t n = in.size();
        for (const bool s8 : {false, true}) {
            const int32_t zp = s8 ? -3 : 128;
            std::vector<uint8_t> want(n);
            std::vector<float> wantFake(n);
            for (std::size_t i = 0; i < n; ++i) {  // ONNX: saturate(round_half_even(x / scale) + zp)
                float v = in[i] / scale;
                const float lo = s8 ? -128.0f : 0.0f, hi = s8 ? 127.0f : 255.0f;
                long q = std::isnan(v) ? static_cast<long>(lo) : std::lrint(std::clamp(v, -1e9f, 1e9f)) + zp;
                q = std::clamp<long>(q, static_cast<long>(lo), static_cast<long>(hi));
                want[i] = static_cast<uint8_t>(static_cast<int8_t>(q));
                if (!s8) want[i] = static_cast<uint8_t>(q);
                wantFake[i] = static_cast<float>(q - zp) * 0.25f;
            }
            for (const KernelIsa isa : isas) {
                std::vector<uint8_t> got(n);
                Quantize(in.data(), got.data(), s8, n, scale, zp, isa);
                std::vector<float> fake(n);
                QuantizeDequantize(in.data(), fake.data(), s8, n, scale, zp, 0.25f, zp, isa);
                for (std::size_t i = 0; i < n; ++i) {
                    ASSERT_EQ(got[i], want[i]) << KernelIsaName(isa) << (s8 ? " s8" : " u8") << " scale " << scale << " x "
                                               << in[i] << " (x / scale = " << in[i] / scale << ")";
                    ASSERT_EQ(fake[i], wantFake[i]) << KernelIsaName(isa) << " quantize-dequantize, scale " << scale << " x "
                                                    << in[i];
                }
                checked += n;
            }
        }
    }
    // The quantized residual addition ends in the same quantization: a, b over all 8-bit values.
    for (const float scale : {0.05f, 0.0123f, 0.5f, 3e38f}) {
        QuantizedAddParams p;
        p.m_ScaleA = 0.02f;
        p.m_ScaleB = 0.031f;
        p.m_Scale = scale;
        p.m_ZpA = 128;
        p.m_ZpB = 120;
        p.m_Zp = 128;
        std::vector<uint8_t> a, b;
        for (int i = 0; i < 256; ++i) {
            for (int j = 0; j < 256; ++j) a.push_back(static_cast<uint8_t>(i)), b.push_back(static_cast<uint8_t>(j));
        }
        std::vector<uint8_t> want(a.size());
        for (std::size_t i = 0; i < a.size(); ++i) {
            const float x = static_cast<float>(a[i] - p.m_ZpA) * p.m_ScaleA, y = static_cast<float>(b[i] - p.m_ZpB) * p.m_ScaleB;
            const long q = std::lrint(std::clamp((x + y) / scale, -1e9f, 1e9f)) + p.m_Zp;
            want[i] = static_cast<uint8_t>(std::clamp<long>(q, 0, 255));
        }
        for (const KernelIsa isa : isas) {
            std::vector<uint8_t> got(a.size());
            QuantizedAdd(a.data(), b.data(), got.data(), false, a.size(), p, isa);
            for (std::size_t i = 0; i < a.size(); ++i) {
                ASSERT_EQ(got[i], want[i]) << KernelIsaName(isa) << " quantized add, scale " << scale << " a " << int(a[i])
                                           << " b " << int(b[i]);
            }
        }
    }
    std::printf("[ quantize ] %zu values checked on %zu ISA(s)\n", checked, isas.size());
}

// A convolution's requantization multiplies by the output scale's reciprocal exactly where that
// gives the division's bytes for every value the first quantization can give (checked here in
// scalar float arithmetic, the same steps); random scales until both cases occurred (about one in
// two thousand needs the division).
TEST(CpuAccInt8, RequantizationTakesTheReciprocalExactlyWhereEveryValueMatchesTheDivision) {
    SKIP_WITHOUT_CPUACC();
    using namespace trellis::cpuacc;
    if (CpuKernelIsa() < KernelIsa::Avx2) GTEST_SKIP() << "the own integer convolution needs AVX2";
    std::mt19937 rng(29);
    const auto uniform = [&](float lo, float hi) { return lo + (hi - lo) * static_cast<float>(rng() % 100000) / 100000.0f; };
    std::size_t taken = 0, refused = 0;
    for (int trial = 0; trial < 50000 && (refused < 2 || taken < 100); ++trial) {
        IntegerConvOutput out;
        out.m_Signed = trial % 3 == 0;
        out.m_ZeroPoint = static_cast<int32_t>(rng() % 256) - (out.m_Signed ? 128 : 0);
        out.m_Requantize = true;
        out.m_RequantScale = uniform(0.005f, 0.1f);
        out.m_RequantRelu = trial % 2 == 0;
        out.m_RequantOutScale = uniform(0.005f, 0.1f);
        out.m_RequantOutSigned = trial % 5 == 0;
        out.m_RequantOutZeroPoint = static_cast<int32_t>(rng() % 256) - (out.m_RequantOutSigned ? 128 : 0);
        const float reciprocal = 1.0f / out.m_RequantOutScale, zp2 = static_cast<float>(out.m_RequantOutZeroPoint);
        const float lo = (out.m_RequantOutSigned ? -128.0f : 0.0f) - zp2, hi = (out.m_RequantOutSigned ? 127.0f : 255.0f) - zp2;
        bool same = true;
        const int32_t first = (out.m_Signed ? -128 : 0) - out.m_ZeroPoint;
        for (int32_t t = first; t < first + 256; ++t) {
            float d = static_cast<float>(t) * out.m_RequantScale;
            if (out.m_RequantRelu) d = std::max(d, 0.0f);
            same = same && std::lrint(std::clamp(d / out.m_RequantOutScale, lo, hi)) == std::lrint(std::clamp(d * reciprocal, lo, hi));
        }
        const float got = IntegerRequantizeReciprocal(out);
        EXPECT_EQ(got != 0.0f, same) << "scales " << out.m_RequantScale << " -> " << out.m_RequantOutScale;
        if (got != 0.0f) {
            EXPECT_EQ(got, reciprocal);
        }
        (same ? taken : refused) += 1;
    }
    EXPECT_GT(taken, 0u);
    EXPECT_GT(refused, 0u) << "no trial needed the division: the check was not exercised";
}

// The quantized residual addition multiplies by the output scale's reciprocal only where that gives
// the division's bytes for every pair of inputs: over random scales, where the reciprocal is taken
// every pair equals the division computed here, and where it is refused a plain multiplication
// does differ somewhere (so the check is what keeps the result); both cases occur. UInt8 and Signed8,
// with and without a Relu, zero points at the type's smallest (where the AVX2 kernel leaves the
// clamp and the Relu to its saturating packs) and elsewhere.
TEST(CpuAccInt8, QuantizedAddTakesTheReciprocalOnlyWhereEveryPairMatchesTheDivision) {
    SKIP_WITHOUT_CPUACC();
    using namespace trellis::cpuacc;
    std::mt19937 rng(23);
    std::vector<uint8_t> a, b;
    for (int i = 0; i < 256; ++i) {
        for (int j = 0; j < 256; ++j) a.push_back(static_cast<uint8_t>(i)), b.push_back(static_cast<uint8_t>(j));
    }
    std::size_t taken = 0, refused = 0;
    for (int trial = 0; trial < 60; ++trial) {
        const auto uniform = [&](float lo, float hi) { return lo + (hi - lo) * static_cast<float>(rng() % 100000) / 100000.0f; };
        QuantizedAddParams p;
        p.m_ScaleA = uniform(0.005f, 0.1f), p.m_ScaleB = uniform(0.005f, 0.1f), p.m_Scale = uniform(0.005f, 0.1f);
        // Every fourth trial Signed8 (the same bytes read as int8); every third with the type's
        // smallest as the zero point (a Relu the saturating packs of the AVX2 kernel give).
        const bool s8 = trial % 4 == 1;
        const int32_t low = s8 ? -128 : 0, high = s8 ? 127 : 255;
        p.m_ZpA = static_cast<int32_t>(rng() % 256) + low, p.m_ZpB = static_cast<int32_t>(rng() % 256) + low;
        p.m_Zp = trial % 3 == 0 ? low : static_cast<int32_t>(rng() % 256) + low;
        p.m_Relu = trial % 2 == 0;
        const auto value = [&](uint8_t byte) { return s8 ? static_cast<int32_t>(static_cast<int8_t>(byte)) : static_cast<int32_t>(byte); };
        std::vector<uint8_t> want(a.size()), multiplied(a.size());
        const float reciprocal = 1.0f / p.m_Scale;
        for (std::size_t i = 0; i < a.size(); ++i) {
            const float x = static_cast<float>(value(a[i]) - p.m_ZpA) * p.m_ScaleA, y = static_cast<float>(value(b[i]) - p.m_ZpB) * p.m_ScaleB;
            const float sum = p.m_Relu ? std::max(x + y, 0.0f) : x + y;
            const auto quantize = [&](float v) {
                return static_cast<uint8_t>(std::clamp<long>(std::lrint(std::clamp(v, -1e9f, 1e9f)) + p.m_Zp, low, high));
            };
            want[i] = quantize(sum / p.m_Scale);
            multiplied[i] = quantize(sum * reciprocal);
        }
        for (const KernelIsa isa : CpuKernelIsas()) {
            QuantizedAddParams q = p;
            q.m_Reciprocal = QuantizedAddReciprocal(s8, p, isa);
            if (q.m_Reciprocal == 0.0f) {
                EXPECT_NE(multiplied, want) << KernelIsaName(isa) << ": refused a reciprocal that gives every pair's bytes, scale "
                                            << p.m_Scale;
                ++refused;
                continue;
            }
            EXPECT_EQ(q.m_Reciprocal, reciprocal);
            std::vector<uint8_t> got(a.size());
            QuantizedAdd(a.data(), b.data(), got.data(), s8, a.size(), q, isa);
            ASSERT_EQ(got, want) << KernelIsaName(isa) << (s8 ? " s8" : " u8") << " zero point " << p.m_Zp << (p.m_Relu ? " relu" : "")
                                 << " scale " << p.m_Scale;
            ++taken;
        }
    }
    EXPECT_GT(taken, 0u);
    EXPECT_GT(refused, 0u) << "no scale of the trials needed the division: the check was not exercised";
}

// QuantizeLinear alone: CpuAcc's own kernel must equal CpuRef bit for bit (ONNX: x / scale in
// float32, half to even, saturated), ties and saturation included.
TEST(CpuAccInt8, QuantizeLinearRoundsHalfToEvenAndSaturatesLikeCpuRef) {
    SKIP_WITHOUT_CPUACC();
    for (DataType t : {DataType::UInt8, DataType::Signed8}) {
        QdqNet net;
        IOutputSlot* x = net.Input({3, 1000});
        // Scale 0.5: x = k * 0.25 gives exact ties k / 2 (x is N(0,1) * 40 below, so saturation too).
        IOutputSlot* scaled = net.Layer(LayerType::ElementwiseBinary, ElementwiseBinaryDescriptor{BinaryOperation::Mul},
                                        {x, net.Scale(40.0f)});
        IOutputSlot* floor = net.Layer(LayerType::ElementwiseUnary, ElementwiseUnaryDescriptor{UnaryOperation::Floor}, {scaled});
        IOutputSlot* ties = net.Layer(LayerType::ElementwiseBinary, ElementwiseBinaryDescriptor{BinaryOperation::Mul},
                                      {floor, net.Scale(0.25f)});
        net.Output(net.Quantize(ties, 0.5f, t, t == DataType::UInt8 ? 7 : -3));
        net.Output(net.Quantize(x, 0.013f, t, t == DataType::UInt8 ? 128 : 0));
        const QdqNet::Result acc = net.Run({"CpuAcc", "CpuRef"});
        const QdqNet::Result ref = net.Run({"CpuRef"});
        EXPECT_NE(acc.m_Text.find("QuantizeLinear_3 on CpuAcc"), std::string::npos) << acc.m_Text;
        EXPECT_NE(acc.m_Text.find("QuantizeLinear_4 on CpuAcc"), std::string::npos) << acc.m_Text;
        EXPECT_EQ(acc.m_Outputs[0], ref.m_Outputs[0]) << GetDataTypeName(t);
        EXPECT_EQ(acc.m_Outputs[1], ref.m_Outputs[1]) << GetDataTypeName(t);
    }
}

// DequantizeLinear a, b -> Add -> [Relu] -> QuantizeLinear (a residual addition) runs as one
// CpuAcc pass and gives CpuRef's 8-bit values exactly (the same float32 steps, in one loop).
TEST(CpuAccInt8, QuantizedResidualAddIsOnePassAndExact) {
    SKIP_WITHOUT_CPUACC();
    for (bool relu : {false, true}) {
        for (DataType t : {DataType::UInt8, DataType::Signed8}) {
            QdqNet net;
            IOutputSlot* x = net.Input({2, 24, 9, 7});
            IOutputSlot* a = net.Dequantize(net.Quantize(x, 0.03f, t, 5), 0.03f, t, 5);
            IOutputSlot* half = net.Layer(LayerType::ElementwiseBinary, ElementwiseBinaryDescriptor{BinaryOperation::Mul}, {x, net.Scale(-0.7f)});
            IOutputSlot* b = net.Dequantize(net.Quantize(half, 0.011f, t, -3), 0.011f, t, -3);
            IOutputSlot* y = net.Layer(LayerType::ElementwiseBinary, ElementwiseBinaryDescriptor{BinaryOperation::Add}, {a, b});
            if (relu) y = net.Layer(LayerType::ElementwiseUnary, ElementwiseUnaryDescriptor{UnaryOperation::Relu}, {y});
            net.Output(net.Quantize(y, 0.02f, t, t == DataType::UInt8 ? 100 : 7));
            const QdqNet::Result acc = net.Run({"CpuAcc", "CpuRef"});
            const QdqNet::Result ref = net.Run({"CpuRef"});
            EXPECT_NE(acc.m_Text.find("QuantizedAdd x1"), std::string::npos) << acc.m_Text;
            const auto [worst, differing] = t == DataType::UInt8 ? StepDiff<uint8_t>(acc.m_Outputs[0], ref.m_Outputs[0])
                                                                 : StepDiff<int8_t>(acc.m_Outputs[0], ref.m_Outputs[0]);
            EXPECT_EQ(differing, 0u) << GetDataTypeName(t) << (relu ? " with Relu" : "") << ": worst " << worst;
        }
    }
}

// DequantizeLinear -> MaxPool -> QuantizeLinear on one grid (ResNet's first pool in a QDQ model)
// pools the 8-bit values themselves and gives CpuRef's bytes; windows clipped by the padding on
// every side, odd sizes, stride 2 and 1. With another output grid the pool stays in float32.
TEST(CpuAccInt8, QuantizedMaxPoolPoolsTheBytesExactly) {
    SKIP_WITHOUT_CPUACC();
    for (DataType t : {DataType::UInt8, DataType::Signed8}) {
        const int32_t zp = t == DataType::UInt8 ? 9 : -5;
        // (input width, kernel, padding): narrow rows; rows of 38 outputs at stride 2 (a whole
        // vector of 32 and a tail) with a 3x3 kernel padded and a 2x2 one unpadded.
        struct Case { unsigned int width, kernel, pad; };
        for (const Case c : {Case{12, 3, 1}, Case{75, 3, 1}, Case{76, 2, 0}}) {
            for (const unsigned int stride : {2u, 1u}) {
                for (const bool sameGrid : {true, false}) {
                    QdqNet net;
                    IOutputSlot* x = net.Input({2, 5, 13, c.width});
                    PoolingDescriptor pool;
                    pool.m_KernelShape = {c.kernel, c.kernel};
                    pool.m_Strides = {stride, stride};
                    pool.m_PadsBegin = {c.pad, c.pad};
                    pool.m_PadsEnd = {c.pad, c.pad};
                    IOutputSlot* p = net.Layer(LayerType::Pooling, pool, {net.Dequantize(net.Quantize(x, 0.03f, t, zp), 0.03f, t, zp)});
                    net.Output(net.Quantize(p, sameGrid ? 0.03f : 0.05f, t, zp));
                    const QdqNet::Result acc = net.Run({"CpuAcc", "CpuRef"});
                    const QdqNet::Result ref = net.Run({"CpuRef"});
                    EXPECT_EQ(acc.m_Text.find("quantized-max-pool x1") != std::string::npos, sameGrid) << acc.m_Text;
                    EXPECT_EQ(acc.m_Outputs[0], ref.m_Outputs[0])
                        << GetDataTypeName(t) << " stride " << stride << " width " << c.width << " kernel " << c.kernel;
                }
            }
        }
    }
}

// A QDQ model's GELU (BERT's feed-forward): Dequantize -> Add(bias) -> fake-quant -> Div -> Erf ->
// fake-quant -> Add 1 -> fake-quant -> Mul(x) -> fake-quant -> Mul 0.5 -> Quantize, eleven passes
// over the tensor, runs as one ElementwiseChain node over blocks that stay in L1: rows of 40
// columns several to a block, rows of 1500 in runs of columns. Its steps compute as the nodes did
// (the division by a scalar as oneDNN's linear x * (1/c), as before): within one step of CpuRef's.
// A chain whose intermediate value is also read elsewhere stops before that reader; one that
// starts from a Float32 value (no Dequantize) fuses too.
// A QDQ bottleneck (1x1 -> 3x3 -> 1x1 convolutions, a 1x1 stride-2 shortcut on the same input,
// the residual Add, a max pool) gives the same bytes whether its int8 convolutions pass each other
// channel quads (their outputs read only by convolutions and the Add) or planes (every
// intermediate also a network output, which keeps it in planes): the layout changes where the
// kernels read and write, never a value. On CPUs without VNNI (and under ONEDNN_MAX_CPU_ISA=AVX2)
// the own integer kernels run these, with quads; elsewhere oneDNN's int8, planes both times.
TEST(CpuAccInt8, ConvolutionsPassingChannelQuadsGiveThePlanesBytes) {
    SKIP_WITHOUT_CPUACC();
    for (DataType t : {DataType::UInt8, DataType::Signed8}) {
        const int32_t zp = t == DataType::UInt8 ? 0 : -20;
        const auto run = [&](bool exposed) {
            QdqNet net;
            const auto qdq = [&](IOutputSlot* v, float scale, bool expose) {
                IOutputSlot* q = net.Quantize(v, scale, t, zp);
                if (expose) net.Output(q);
                return net.Dequantize(q, scale, t, zp);
            };
            const auto conv = [&](IOutputSlot* x, unsigned int in, unsigned int out, unsigned int k, unsigned int stride, bool relu) {
                ConvolutionDescriptor d;
                d.m_Strides = {stride, stride};
                d.m_PadsBegin = {k / 2, k / 2};
                d.m_PadsEnd = {k / 2, k / 2};
                IOutputSlot* y = net.Layer(LayerType::Convolution, d, {x, net.Weights({out, in, k, k}, out, 0), net.FloatConst({out}, 0.2f)});
                return relu ? net.Layer(LayerType::ElementwiseUnary, ElementwiseUnaryDescriptor{UnaryOperation::Relu}, {y}) : y;
            };
            // 21x23 input: panels of 16 output pixels span rows at stride 1 and 2.
            IOutputSlot* x = qdq(net.Input({1, 16, 21, 23}), 0.03f, false);
            IOutputSlot* a = qdq(conv(x, 16, 16, 1, 1, true), 0.02f, exposed);
            IOutputSlot* b = qdq(conv(a, 16, 16, 3, 2, true), 0.02f, exposed);
            IOutputSlot* c = qdq(conv(b, 16, 32, 1, 1, false), 0.03f, exposed);
            IOutputSlot* shortcut = qdq(conv(x, 16, 32, 1, 2, false), 0.03f, exposed);
            IOutputSlot* sum = net.Layer(LayerType::ElementwiseBinary, ElementwiseBinaryDescriptor{BinaryOperation::Add}, {c, shortcut});
            sum = net.Layer(LayerType::ElementwiseUnary, ElementwiseUnaryDescriptor{UnaryOperation::Relu}, {sum});
            IOutputSlot* r = qdq(sum, 0.03f, exposed);
            IOutputSlot* d = qdq(conv(r, 32, 16, 3, 1, true), 0.02f, false);
            PoolingDescriptor pool;
            pool.m_KernelShape = {3, 3};
            pool.m_Strides = {2, 2};
            pool.m_PadsBegin = {1, 1};
            pool.m_PadsEnd = {1, 1};
            net.Output(net.Quantize(net.Layer(LayerType::Pooling, pool, {d}), 0.02f, t, zp));
            return net.Run({"CpuAcc", "CpuRef"});
        };
        const QdqNet::Result quads = run(false);
        const QdqNet::Result planes = run(true);
        EXPECT_EQ(quads.m_Counts.count("CpuRef") ? quads.m_Counts.at("CpuRef") : 0u, 0u) << quads.m_Text;
        ASSERT_EQ(planes.m_Outputs.size(), 6u);
        ASSERT_EQ(quads.m_Outputs.size(), 1u);
        EXPECT_EQ(quads.m_Outputs[0], planes.m_Outputs[5]) << GetDataTypeName(t);
    }
}

TEST(CpuAccInt8, QdqElementwiseChainRunsAsOnePass) {
    SKIP_WITHOUT_CPUACC();
    for (const unsigned int columns : {40u, 1500u}) {
        for (DataType t : {DataType::UInt8, DataType::Signed8}) {
            const int32_t zp = t == DataType::UInt8 ? 120 : -3;
            QdqNet net;
            const auto bin = [&](BinaryOperation op, IOutputSlot* a, IOutputSlot* b) {
                return net.Layer(LayerType::ElementwiseBinary, ElementwiseBinaryDescriptor{op}, {a, b});
            };
            const auto fq = [&](IOutputSlot* v, float scale, int32_t z) { return net.Dequantize(net.Quantize(v, scale, t, z), scale, t, z); };
            IOutputSlot* x = net.Input({2, 7, columns});
            IOutputSlot* a = net.Dequantize(net.Quantize(x, 0.05f, t, zp), 0.05f, t, zp);
            IOutputSlot* b = fq(bin(BinaryOperation::Add, a, net.FloatConst({columns}, 0.5f)), 0.04f, zp);
            IOutputSlot* e = net.Layer(LayerType::ElementwiseUnary, ElementwiseUnaryDescriptor{UnaryOperation::Erf},
                                       {bin(BinaryOperation::Div, b, net.Scale(1.4142135f))});
            IOutputSlot* g = fq(bin(BinaryOperation::Add, fq(e, 1.0f / 127.0f, 0), net.Scale(1.0f)), 0.016f, 0);
            IOutputSlot* y = bin(BinaryOperation::Mul, fq(bin(BinaryOperation::Mul, b, g), 0.03f, zp), net.Scale(0.5f));
            net.Output(net.Quantize(y, 0.02f, t, zp));
            // From a Float32 value: Mul by a vector -> fake-quant -> Erf -> Quantize.
            IOutputSlot* f = fq(bin(BinaryOperation::Mul, x, net.FloatConst({1, columns}, 1.0f)), 0.03f, zp);
            net.Output(net.Quantize(net.Layer(LayerType::ElementwiseUnary, ElementwiseUnaryDescriptor{UnaryOperation::Erf}, {f}),
                                    0.01f, t, 0));
            const QdqNet::Result acc = net.Run({"CpuAcc", "CpuRef"});
            const QdqNet::Result ref = net.Run({"CpuRef"});
            EXPECT_NE(acc.m_Text.find("ElementwiseChain x2"), std::string::npos) << acc.m_Text;
            EXPECT_EQ(acc.m_Counts.count("CpuRef"), 0u) << acc.m_Text;
            ASSERT_EQ(acc.m_Outputs.size(), 2u);
            for (std::size_t o = 0; o < 2; ++o) {
                const auto [worst, differing] = t == DataType::UInt8 ? StepDiff<uint8_t>(acc.m_Outputs[o], ref.m_Outputs[o])
                                                                     : StepDiff<int8_t>(acc.m_Outputs[o], ref.m_Outputs[o]);
                EXPECT_LE(worst, 1) << GetDataTypeName(t) << " " << columns << " columns, output " << o << ": " << differing
                                    << " differ";
                EXPECT_LE(differing, acc.m_Outputs[o].size() / 50) << GetDataTypeName(t) << " " << columns << " columns, output " << o;
            }
        }
    }
    // One chain in `net`, its two outputs CpuRef's byte for byte.
    const auto expectOneChainLikeCpuRef = [](QdqNet& net, const char* what) {
        const QdqNet::Result acc = net.Run({"CpuAcc", "CpuRef"});
        const QdqNet::Result ref = net.Run({"CpuRef"});
        EXPECT_NE(acc.m_Text.find("ElementwiseChain x1"), std::string::npos) << what << "\n" << acc.m_Text;
        ASSERT_EQ(acc.m_Outputs.size(), 2u) << what;
        EXPECT_EQ(acc.m_Outputs[0], ref.m_Outputs[0]) << what;
        EXPECT_EQ(acc.m_Outputs[1], ref.m_Outputs[1]) << what;
    };
    // A QOperator resnet's residual: Dequantize -> Add(a branch computed after the Dequantize) ->
    // Relu, read by a Quantize and by the next residual Add: the chain ends at the Relu and runs
    // where the branch is ready.
    {
        QdqNet net;
        IOutputSlot* x = net.Input({2, 8, 5, 5});
        IOutputSlot* a = net.Dequantize(net.Quantize(x, 0.05f, DataType::UInt8, 0), 0.05f, DataType::UInt8, 0);
        IOutputSlot* branch = net.Layer(LayerType::ElementwiseUnary, ElementwiseUnaryDescriptor{UnaryOperation::Abs}, {x});
        IOutputSlot* sum = net.Layer(LayerType::ElementwiseBinary, ElementwiseBinaryDescriptor{BinaryOperation::Add}, {a, branch});
        IOutputSlot* r = net.Layer(LayerType::ElementwiseUnary, ElementwiseUnaryDescriptor{UnaryOperation::Relu}, {sum});
        net.Output(net.Quantize(r, 0.05f, DataType::UInt8, 0));
        net.Output(net.Layer(LayerType::ElementwiseBinary, ElementwiseBinaryDescriptor{BinaryOperation::Add}, {r, x}));
        expectOneChainLikeCpuRef(net, "residual");
    }
    // The first block of a QOperator resnet stage: the residual branch is itself a dequantized 8-bit
    // tensor (the downsample's output; here a QuantizeLinear's output that the network also returns,
    // so that it stays 8-bit), which the chain's Add reads as bytes, dequantized block by block - no
    // Dequantize pass of its own is left.
    for (DataType t : {DataType::UInt8, DataType::Signed8}) {
        QdqNet net;
        IOutputSlot* x = net.Input({2, 8, 5, 5});
        IOutputSlot* a = net.Dequantize(net.Quantize(x, 0.05f, t, 3), 0.05f, t, 3);
        IOutputSlot* half = net.Layer(LayerType::ElementwiseBinary, ElementwiseBinaryDescriptor{BinaryOperation::Mul}, {x, net.Scale(0.5f)});
        IOutputSlot* bytes = net.Quantize(half, 0.03f, t, -2);
        IOutputSlot* sum = net.Layer(LayerType::ElementwiseBinary, ElementwiseBinaryDescriptor{BinaryOperation::Add},
                                     {a, net.Dequantize(bytes, 0.03f, t, -2)});
        IOutputSlot* r = net.Layer(LayerType::ElementwiseUnary, ElementwiseUnaryDescriptor{UnaryOperation::Relu}, {sum});
        net.Output(net.Quantize(r, 0.05f, t, 0));
        net.Output(net.Layer(LayerType::ElementwiseBinary, ElementwiseBinaryDescriptor{BinaryOperation::Add}, {r, x}));
        net.Output(bytes);
        const QdqNet::Result acc = net.Run({"CpuAcc", "CpuRef"});
        const QdqNet::Result ref = net.Run({"CpuRef"});
        const char* what = t == DataType::UInt8 ? "8-bit residual branch, u8" : "8-bit residual branch, s8";
        EXPECT_NE(acc.m_Text.find("ElementwiseChain x1"), std::string::npos) << what << "\n" << acc.m_Text;
        EXPECT_EQ(acc.m_Text.find("Dequantize x"), std::string::npos) << what << "\n" << acc.m_Text;
        ASSERT_EQ(acc.m_Outputs.size(), 3u) << what;
        for (std::size_t o = 0; o < 3; ++o) EXPECT_EQ(acc.m_Outputs[o], ref.m_Outputs[o]) << what << ", output " << o;
    }
    // An intermediate value read outside the chain: the chain ends at it (and computes the same).
    QdqNet net;
    IOutputSlot* x = net.Input({3, 64});
    IOutputSlot* a = net.Dequantize(net.Quantize(x, 0.05f, DataType::UInt8, 128), 0.05f, DataType::UInt8, 128);
    IOutputSlot* e = net.Layer(LayerType::ElementwiseUnary, ElementwiseUnaryDescriptor{UnaryOperation::Erf}, {a});
    IOutputSlot* q = net.Dequantize(net.Quantize(e, 0.01f, DataType::UInt8, 128), 0.01f, DataType::UInt8, 128);
    net.Output(q);  // read outside: the chain is Dequantize -> Erf -> fake-quant
    net.Output(net.Quantize(net.Layer(LayerType::ElementwiseBinary, ElementwiseBinaryDescriptor{BinaryOperation::Mul}, {q, q}),
                            0.01f, DataType::UInt8, 0));
    expectOneChainLikeCpuRef(net, "cut chain");
}

// A QDQ model re-quantizes after every Transpose, Reshape and Slice of a quantized tensor; where
// the QuantizeLinear -> DequantizeLinear has the grid its input already lies on (the same scale,
// zero point and type), it is the identity and CpuAcc drops it - the results stay CpuRef's bit
// for bit. A re-quantization to another scale stays.
TEST(CpuAccInt8, RequantizingValuesAlreadyOnTheGridIsDropped) {
    SKIP_WITHOUT_CPUACC();
    for (DataType t : {DataType::UInt8, DataType::Signed8}) {
        const int32_t zp = t == DataType::UInt8 ? 131 : -5;
        QdqNet net;
        IOutputSlot* x = net.Input({2, 6, 10});
        IOutputSlot* a = net.Dequantize(net.Quantize(x, 0.03f, t, zp), 0.03f, t, zp);
        IOutputSlot* moved = net.Layer(LayerType::Transpose, TransposeDescriptor{{0, 2, 1}}, {a});
        ReshapeDescriptor r;
        r.m_TargetShape = {2, 5, 12};
        moved = net.Layer(LayerType::Reshape, r, {moved});
        IOutputSlot* same = net.Dequantize(net.Quantize(moved, 0.03f, t, zp), 0.03f, t, zp);  // dropped
        SliceDescriptor sl;
        sl.m_Starts = {1};
        sl.m_Ends = {11};
        sl.m_Axes = {2};
        IOutputSlot* sliced = net.Layer(LayerType::Slice, sl, {same});
        IOutputSlot* again = net.Dequantize(net.Quantize(sliced, 0.03f, t, zp), 0.03f, t, zp);  // dropped
        IOutputSlot* other = net.Dequantize(net.Quantize(sliced, 0.05f, t, zp), 0.05f, t, zp);  // another grid: stays
        const auto relu = [&](IOutputSlot* v) {
            return net.Layer(LayerType::ElementwiseUnary, ElementwiseUnaryDescriptor{UnaryOperation::Relu}, {v});
        };
        net.Output(net.Quantize(relu(again), 0.03f, t, zp));
        net.Output(net.Quantize(relu(other), 0.05f, t, zp));
        const QdqNet::Result acc = net.Run({"CpuAcc", "CpuRef"});
        const QdqNet::Result ref = net.Run({"CpuRef"});
        EXPECT_NE(acc.m_Text.find("dropped-requantize x2"), std::string::npos) << acc.m_Text;
        ASSERT_EQ(acc.m_Outputs.size(), 2u);
        for (std::size_t o = 0; o < 2; ++o) {
            const auto [worst, differing] = t == DataType::UInt8 ? StepDiff<uint8_t>(acc.m_Outputs[o], ref.m_Outputs[o])
                                                                 : StepDiff<int8_t>(acc.m_Outputs[o], ref.m_Outputs[o]);
            EXPECT_EQ(differing, 0u) << GetDataTypeName(t) << " output " << o << ": worst " << worst;
        }
    }
}

// A QDQ chain with more constant scales and zero points than one PreCompiled layer takes (1024
// inputs; the BERT encoder's QDQ model has 1776) is cut into several regions, and a region cut
// never separates a DequantizeLinear from the int8 layer it feeds.
TEST(CpuAccInt8, LongQdqChainsAreCutIntoRegionsThatKeepTheirInt8Layers) {
    SKIP_WITHOUT_CPUACC();
    QdqNet net;
    IOutputSlot* x = net.Input({4, 16});
    for (int i = 0; i < 200; ++i) {
        IOutputSlot* dq = net.Dequantize(net.Quantize(x, 0.05f, DataType::UInt8, 128), 0.05f, DataType::UInt8, 128);
        GemmDescriptor d;
        d.m_TransB = true;
        x = net.Layer(LayerType::Gemm, d, {dq, net.Weights({16, 16}, 16, 0), net.FloatConst({16}, 0.1f)});
    }
    IOutputSlot* q = net.Quantize(x, 0.05f, DataType::UInt8, 128);
    net.Output(q);
    const QdqNet::Result acc = net.Run({"CpuAcc", "CpuRef"});
    const QdqNet::Result ref = net.Run({"CpuRef"});
    EXPECT_EQ(acc.m_Counts.count("CpuRef") ? acc.m_Counts.at("CpuRef") : 0u, 0u) << acc.m_Text;
    EXPECT_GT(acc.m_Counts.at("CpuAcc"), 1u) << "one region for 1200 inputs?\n" << acc.m_Text;
    const auto [worst, differing] = StepDiff<uint8_t>(acc.m_Outputs[0], ref.m_Outputs[0]);
    EXPECT_LE(worst, 1) << differing << " differ";
    if (Int8Exact()) {
        std::size_t int8 = 0;
        for (std::size_t at = 0; (at = acc.m_Text.find("MatMul(int8) x", at)) != std::string::npos; ++at) {
            int8 += std::stoul(acc.m_Text.substr(at + std::strlen("MatMul(int8) x")));
        }
        EXPECT_EQ(int8, 200u) << acc.m_Text;
    }
}

// What CpuAcc cannot run as ONNX defines it is declined by name, with the rule.
TEST(CpuAccInt8, UnsupportedQuantizationIsDeclinedWithReasons) {
    SKIP_WITHOUT_CPUACC();
    INetworkPtr net = INetwork::Create();
    auto input = [&](int id, const TensorShape& shape, DataType t) {
        auto* l = net->AddInputLayer(id);
        l->GetOutputSlot(0).SetTensorInfo(TensorInfo(shape, t));
        return &l->GetOutputSlot(0);
    };
    std::vector<std::vector<uint8_t>> storage;
    auto constant = [&](const TensorShape& shape, DataType t, std::vector<uint8_t> bytes) {
        storage.push_back(std::move(bytes));
        return &net->AddConstantLayer(ConstTensor(TensorInfo(shape, t, 0.0f, 0, true), storage.back().data()))->GetOutputSlot(0);
    };
    auto layer = [&](LayerType type, const char* name, std::vector<IOutputSlot*> in, int64_t axis = 1) {
        auto* l = net->AddLayer(type, AxisDescriptor(axis), name, static_cast<int>(in.size()), 1);
        for (std::size_t i = 0; i < in.size(); ++i) in[i]->Connect(l->GetInputSlot(static_cast<unsigned int>(i)));
        return &l->GetOutputSlot(0);
    };
    auto output = [&](int id, IOutputSlot* s) { s->Connect(net->AddOutputLayer(id)->GetInputSlot(0)); };
    const float one = 1.0f;
    std::vector<uint8_t> oneBytes(sizeof one);
    std::memcpy(oneBytes.data(), &one, sizeof one);
    IOutputSlot* x = input(0, {2, 4}, DataType::Float32);
    // A scale computed at run time (a graph input).
    output(0, layer(LayerType::QuantizeLinear, "q_runtime_scale", {x, input(1, {}, DataType::Float32), constant({}, DataType::UInt8, {0})}));
    // Per-axis scales on activations.
    std::vector<uint8_t> scales(4 * sizeof(float));
    for (int i = 0; i < 4; ++i) std::memcpy(scales.data() + i * sizeof(float), &one, sizeof one);
    output(1, layer(LayerType::QuantizeLinear, "q_per_axis", {x, constant({4}, DataType::Float32, scales),
                                                             constant({4}, DataType::UInt8, {0, 0, 0, 0})}));
    // A Signed32 tensor to dequantize (its zero point is Signed32 too).
    output(2, layer(LayerType::DequantizeLinear, "dq_int32", {input(2, {2, 4}, DataType::Signed32),
                                                              constant({}, DataType::Float32, oneBytes)}));
    // A zero point computed at run time.
    output(3, layer(LayerType::DequantizeLinear, "dq_runtime_zero_point", {input(3, {2, 4}, DataType::UInt8),
                                                                           constant({}, DataType::Float32, oneBytes),
                                                                           input(4, {}, DataType::UInt8)}));
    IRuntimePtr runtime = IRuntime::Create({});
    IOptimizedNetworkPtr opt = Optimize(*net, {"CpuAcc", "CpuRef"}, runtime->GetDeviceSpec());
    std::map<std::string, std::string> reasons;
    for (const LayerPlacement& p : opt->GetLayerPlacements()) {
        for (const auto& [backend, reason] : p.m_Declined) {
            if (backend == BackendId("CpuAcc")) reasons[p.m_LayerName] = reason;
        }
    }
    EXPECT_NE(reasons["q_runtime_scale"].find("QuantizeLinear: the scale must be constant"), std::string::npos)
        << reasons["q_runtime_scale"];
    EXPECT_NE(reasons["q_per_axis"].find("per-axis scales"), std::string::npos) << reasons["q_per_axis"];
    EXPECT_NE(reasons["dq_int32"].find("DequantizeLinear: x is Signed32"), std::string::npos) << reasons["dq_int32"];
    EXPECT_NE(reasons["dq_runtime_zero_point"].find("the zero point must be constant"), std::string::npos)
        << reasons["dq_runtime_zero_point"];
}

// ---- models made by onnxruntime's quantization tool in the test set-up ---------------------------

std::string SkipReason() {
    std::ifstream f(std::string(TRELLIS_TEST_MODELS_DIR) + "/int8_models.skip");
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

struct ModelCase {
    const char* m_Model;
    /// Largest |CpuAcc - CpuRef| over the dequantized output, in the output's quantization steps
    /// where the model ends quantized (0: exact).
    double m_MaxSteps;
};

class CpuAccInt8Model : public ::testing::TestWithParam<std::string> {};

// The int8 models on CpuAcc (CpuRef behind it) against CpuRef alone, and against the float model's
// PyTorch output (the accuracy of int8, printed). Every Conv, Gemm and MatMul with constant
// weights must be on CpuAcc, and with VNNI the quantized ones int8 nodes.
TEST_P(CpuAccInt8Model, MatchesCpuRefAndRunsTheQuantizedLayersOnCpuAcc) {
    SKIP_WITHOUT_CPUACC();
    const std::string reason = SkipReason();
    if (!reason.empty()) GTEST_SKIP() << "int8 models were not made: " << reason;
    const std::string base = std::string(TRELLIS_TEST_MODELS_DIR) + "/" + GetParam();
    ASSERT_TRUE(std::filesystem::exists(base + ".onnx")) << base << ".onnx missing: quantize_test_models makes it";
    const std::vector<OwnedTensor> inputs = LoadModelInputs(base);
    LoadedModel acc = LoadedModel::Load(base + ".onnx", {"CpuAcc", "CpuRef"});
    LoadedModel ref = LoadedModel::Load(base + ".onnx", {"CpuRef"});
    const std::vector<OwnedTensor> a = acc.Run(inputs), r = ref.Run(inputs);
    ASSERT_EQ(a.size(), 1u);
    const OwnedTensor want = LoadTensorFile(base + ".output_0.pb");
    double worst = 0, range = 0;
    std::vector<double> levels;
    for (std::size_t i = 0; i < r[0].m_Info.GetNumElements(); ++i) {
        worst = std::max(worst, std::fabs(ToDouble(a[0], i) - ToDouble(r[0], i)));
        levels.push_back(ToDouble(r[0], i));
    }
    // The output's quantization step: the smallest gap between distinct output values of CpuRef
    // (every output is a multiple of it after the last DequantizeLinear).
    std::sort(levels.begin(), levels.end());
    double step = 0;
    for (std::size_t i = 1; i < levels.size(); ++i) {
        const double gap = levels[i] - levels[i - 1];
        if (gap > 1e-7 && (step == 0 || gap < step)) step = gap;
    }
    range = levels.empty() ? 0 : levels.back() - levels.front();
    const double vsFloat = RelativeL2(r[0], want), accVsFloat = RelativeL2(a[0], want);
    std::printf("[ int8 ] %s: CpuAcc vs CpuRef max |diff| %.4g (%.2f output steps of %.4g); relative L2 vs float32 "
                "PyTorch: CpuRef %.4f, CpuAcc %.4f (output range %.3g)\n",
                GetParam().c_str(), worst, step > 0 ? worst / step : 0.0, step, vsFloat, accVsFloat, range);
    // Within 2 output steps: one-step differences in intermediate tensors (see the top of the file)
    // move the output by at most about one step more on these small models.
    EXPECT_LE(worst, 2.0 * step + 1e-6) << GetParam();
    EXPECT_LT(accVsFloat, vsFloat + 0.02) << GetParam() << ": CpuAcc's int8 is less accurate than CpuRef's";
    EXPECT_GT(acc.m_LayerCounts["CpuAcc"], 0u);
}

std::vector<std::string> Int8Models() {
    std::vector<std::string> out;
    for (const char* m : {"tiny_cnn", "transformer"}) {
        for (const char* v : {"qdq", "qdq_pc", "qop", "dyn"}) out.push_back(std::string(m) + "_int8_" + v);
    }
    return out;
}

INSTANTIATE_TEST_SUITE_P(CpuAccInt8, CpuAccInt8Model, ::testing::ValuesIn(Int8Models()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

// Placement: in the QDQ models every quantized Conv, Gemm and MatMul with constant weights is in a
// CpuAcc region, as an int8 node where oneDNN computes int8 exactly; in the QOperator models every
// QLinearConv / QLinearMatMul with constant weights is such an int8 node there too, and the
// dynamically quantized models run on CpuAcc alone there. No oneDNN
// reference implementation runs (checked from oneDNN's verbose log, as for the float models).
TEST(CpuAccInt8, QuantizedModelsRunInt8NodesOnCpuAccAndNoReferenceKernel) {
    SKIP_WITHOUT_CPUACC();
    const std::string reason = SkipReason();
    if (!reason.empty()) GTEST_SKIP() << "int8 models were not made: " << reason;
    std::string why;
    const bool exact = Int8Exact(&why);
    for (const char* model : {"tiny_cnn_int8_qdq", "tiny_cnn_int8_qdq_pc", "transformer_int8_qdq", "transformer_int8_qdq_pc",
                              "tiny_cnn_int8_qop", "transformer_int8_qop", "tiny_cnn_int8_dyn", "transformer_int8_dyn"}) {
        const std::string base = std::string(TRELLIS_TEST_MODELS_DIR) + "/" + model;
        IOnnxParserPtr parser = IOnnxParser::Create();
        INetworkPtr net = parser->CreateNetworkFromBinaryFile(base + ".onnx");
        IRuntimePtr runtime = IRuntime::Create({});
        IOptimizedNetworkPtr opt = Optimize(*net, {"CpuAcc", "CpuRef"}, runtime->GetDeviceSpec());
        const std::string text = opt->ToString();
        std::size_t quantizedOnRef = 0, unfusedProducts = 0;
        std::string offenders;
        for (const LayerPlacement& p : opt->GetLayerPlacements()) {
            // A QOperator product that CpuAcc claimed and could not fuse (with constant weights, or
            // of two activations: the own integer GEMM takes those).
            if (p.m_LayerName.find("int32_product") != std::string::npos && p.m_Backend == BackendId("CpuRef")) {
                for (const auto& [b, r] : p.m_Declined) {
                    if (b == BackendId("CpuAcc") && r.find("OptimizeSubgraph") != std::string::npos) {
                        ++unfusedProducts;
                        offenders += "\n  unfused " + p.m_LayerName;
                    }
                }
            }
            const bool product = p.m_LayerName.find("Conv") != std::string::npos ||
                                 p.m_LayerName.find("Gemm") != std::string::npos ||
                                 p.m_LayerName.find("MatMul") != std::string::npos;
            if (product && p.m_Backend == BackendId("CpuRef") && p.m_LayerName.find("int32") == std::string::npos) {
                ++quantizedOnRef;
                offenders += "\n  " + p.m_LayerName;
                for (const auto& [b, r] : p.m_Declined) offenders += " (" + b.Get() + ": " + r + ")";
            }
        }
        const bool qdq = std::string(model).find("qdq") != std::string::npos;
        if (qdq) {
            EXPECT_EQ(quantizedOnRef, 0u) << model << ": products on CpuRef:" << offenders;
        }
        // Products fuse where oneDNN's int8 is exact, else on the own integer GEMM wherever there is AVX2.
        const bool fuses = exact || cpuacc::BestKernelIsa() != cpuacc::KernelIsa::Scalar;
        if (fuses) {
            EXPECT_EQ(unfusedProducts, 0u) << model << ":" << offenders;
            EXPECT_NE(text.find("(int8)"), std::string::npos) << model << ": no int8 node\n" << text;
        }
        // Dynamic quantization (DynamicQuantizeLinear, MatMulInteger, ConvInteger): the whole model on
        // CpuAcc then.
        if (fuses && std::string(model).find("_dyn") != std::string::npos) {
            const auto counts = opt->GetBackendLayerCounts();
            EXPECT_EQ(counts.count("CpuRef") ? counts.at("CpuRef") : 0u, 0u) << model << "\n" << text;
        }
        LoadedModel m = LoadedModel::Load(base + ".onnx", {"CpuAcc", "CpuRef"});
        const std::vector<OwnedTensor> inputs = LoadModelInputs(base);
        dnnl_set_verbose(1);
        ::testing::internal::CaptureStdout();
        (void)m.Run(inputs);
        std::fflush(stdout);
        const std::string log = ::testing::internal::GetCapturedStdout();
        dnnl_set_verbose(0);
        std::size_t at = 0, executed = 0, int8Primitives = 0;
        while ((at = log.find("onednn_verbose,exec,cpu,", at)) != std::string::npos) {
            const std::size_t primitive = at + std::strlen("onednn_verbose,exec,cpu,");
            const std::size_t impl = log.find(',', primitive) + 1;
            const std::size_t end = log.find('\n', impl);
            const std::string line = log.substr(at, end - at);
            ++executed;
            if (line.find("src_u8") != std::string::npos || line.find("src_s8") != std::string::npos) ++int8Primitives;
            EXPECT_NE(log.compare(impl, 3, "ref"), 0) << model << " runs a reference implementation: " << line;
            at = end;
        }
        EXPECT_GT(executed, 0u) << model;
        if (exact) {
            EXPECT_GT(int8Primitives, 0u) << model << ": no int8 primitive ran\n" << log;
        }
    }
    if (!exact) std::printf("[ oneDNN int8 off ] %s\n", why.c_str());
}


// ---- QOperator: QLinearConv / QLinearMatMul as imported (integer products) ----------------------

/// Loads ONNX model bytes on `backends` (as LoadedModel::Load does for a file).
LoadedModel LoadBytes(const std::string& bytes, const std::vector<BackendId>& backends) {
    LoadedModel m;
    IOnnxParserPtr parser = IOnnxParser::Create();
    INetworkPtr net = parser->CreateNetworkFromBinary(bytes, "");
    m.m_Inputs = parser->GetInputs();
    m.m_Outputs = parser->GetOutputs();
    m.m_Runtime = IRuntime::Create({});
    IOptimizedNetworkPtr opt = Optimize(*net, backends, m.m_Runtime->GetDeviceSpec());
    m.m_LayerCounts = opt->GetBackendLayerCounts();
    m.m_Optimized = opt->ToString();
    m.m_Runtime->LoadNetwork(m.m_Id, std::move(opt));
    return m;
}

void ValueInfo(onnx::ValueInfoProto* v, const std::string& name, int type, const std::vector<int64_t>& dims) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(type);
    for (int64_t d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
}

OwnedTensor FloatInput(const std::string& name, const std::vector<unsigned int>& dims, const std::vector<float>& values) {
    OwnedTensor x;
    x.m_Name = name;
    x.m_Info = TensorInfo(TensorShape(dims), DataType::Float32);
    x.m_Data.resize(values.size() * sizeof(float));
    std::memcpy(x.m_Data.data(), values.data(), x.m_Data.size());
    return x;
}


/// One QLinearConv or QLinearMatMul with constant weights, as an ONNX model built here: x (8-bit,
/// a graph input) and its scale and zero point, the weights and theirs (per tensor or per output
/// channel), the output's, and for a convolution a Signed32 bias.
struct IntegerProductCase {
    const char* m_Name;
    bool m_Conv;
    int m_XType;          ///< onnx::TensorProto_DataType UINT8 or INT8
    int32_t m_XZeroPoint;
    int m_WType;
    int32_t m_WZeroPoint;
    bool m_PerChannel;
    int m_YType;
    int32_t m_YZeroPoint;
    int m_Groups = 1;
    int m_Stride = 1;
    bool m_Bias = true;
    /// Whether the weights minus their zero point fit a signed byte (else the product stays on
    /// CpuRef: oneDNN's int8 weights are signed 8-bit).
    bool m_Fuses = true;
    /// A MatMul whose second operand is a graph input too (attention's products), batched [3, ...].
    bool m_ComputedB = false;
    /// A convolution's output taken on as a QOperator model does after a QLinearConv: 1:
    /// DequantizeLinear -> Relu -> QuantizeLinear (UInt8, zero point 20), 2: DequantizeLinear ->
    /// QuantizeLinear (Signed8, zero point 3); 0: none.
    int m_Requantize = 0;
};

void PrintTo(const IntegerProductCase& c, std::ostream* os) { *os << c.m_Name; }

onnx::TensorProto RawTensor(const std::string& name, int type, const std::vector<int64_t>& dims, const void* data,
                            std::size_t bytes) {
    onnx::TensorProto t;
    t.set_name(name);
    t.set_data_type(type);
    for (int64_t d : dims) t.add_dims(d);
    t.set_raw_data(data, bytes);
    return t;
}

/// `count` random values of an 8-bit type within [lo, hi], as bytes.
std::vector<uint8_t> Random8(std::mt19937& rng, std::size_t count, int lo, int hi) {
    std::uniform_int_distribution<int> d(lo, hi);
    std::vector<uint8_t> out(count);
    for (uint8_t& b : out) b = static_cast<uint8_t>(d(rng));
    return out;
}

std::pair<int, int> RangeOf(int type) {
    return type == onnx::TensorProto_DataType_UINT8 ? std::pair<int, int>{0, 255} : std::pair<int, int>{-128, 127};
}

/// The model's bytes and random inputs for it.
std::pair<std::string, std::vector<OwnedTensor>> MakeIntegerProductModel(const IntegerProductCase& c) {
    std::mt19937 rng(1234);
    onnx::ModelProto model;
    model.set_ir_version(8);
    model.add_opset_import()->set_version(13);
    onnx::GraphProto& g = *model.mutable_graph();
    g.set_name("integer_product");
    const int64_t channelsIn = 8, channelsOut = 12, k = 24, n = 20;
    const std::vector<int64_t> xDims = c.m_Conv ? std::vector<int64_t>{1, channelsIn, 9, 9}
                                                : (c.m_ComputedB ? std::vector<int64_t>{3, 5, k} : std::vector<int64_t>{2, 5, k});
    const std::vector<int64_t> wDims = c.m_Conv ? std::vector<int64_t>{channelsOut, channelsIn / c.m_Groups, 3, 3}
                                                : (c.m_ComputedB ? std::vector<int64_t>{3, k, n} : std::vector<int64_t>{k, n});
    const int64_t outChannels = c.m_Conv ? channelsOut : n;
    const auto add = [&](const onnx::TensorProto& t) { *g.add_initializer() = t; };
    const auto scalar8 = [&](const std::string& name, int type, int32_t v) {
        const uint8_t b = static_cast<uint8_t>(v);
        add(RawTensor(name, type, {}, &b, 1));
    };
    const auto floats = [&](const std::string& name, const std::vector<float>& v, const std::vector<int64_t>& dims) {
        add(RawTensor(name, onnx::TensorProto_DataType_FLOAT, dims, v.data(), v.size() * sizeof(float)));
    };
    std::size_t wCount = 1;
    for (int64_t d : wDims) wCount *= static_cast<std::size_t>(d);
    const auto [wLo, wHi] = RangeOf(c.m_WType);
    const std::vector<uint8_t> w = Random8(rng, wCount, wLo, wHi);
    if (!c.m_ComputedB) add(RawTensor("w", c.m_WType, wDims, w.data(), w.size()));
    std::uniform_real_distribution<float> wScale(0.004f, 0.02f);
    std::vector<float> wScales(c.m_PerChannel ? static_cast<std::size_t>(outChannels) : 1u);
    for (float& v : wScales) v = wScale(rng);
    floats("w_scale", wScales, c.m_PerChannel ? std::vector<int64_t>{outChannels} : std::vector<int64_t>{});
    scalar8("w_zero_point", c.m_WType, c.m_WZeroPoint);
    floats("x_scale", {0.02f}, {});
    scalar8("x_zero_point", c.m_XType, c.m_XZeroPoint);
    // Outputs over most of the 8-bit range, some saturated.
    floats("y_scale", {c.m_Conv ? 0.15f : 0.1f}, {});
    scalar8("y_zero_point", c.m_YType, c.m_YZeroPoint);
    onnx::NodeProto& node = *g.add_node();
    node.set_op_type(c.m_Conv ? "QLinearConv" : "QLinearMatMul");
    node.set_name(c.m_Conv ? "qconv" : "qmatmul");
    for (const char* in : {"x", "x_scale", "x_zero_point", "w", "w_scale", "w_zero_point", "y_scale", "y_zero_point"}) {
        node.add_input(in);
    }
    if (c.m_Conv) {
        if (c.m_Bias) {
            std::uniform_int_distribution<int32_t> b(-4000, 4000);
            std::vector<int32_t> bias(static_cast<std::size_t>(channelsOut));
            for (int32_t& v : bias) v = b(rng);
            add(RawTensor("bias", onnx::TensorProto_DataType_INT32, {channelsOut}, bias.data(), bias.size() * 4));
            node.add_input("bias");
        }
        const auto ints = [&](const char* name, std::vector<int64_t> v) {
            auto* a = node.add_attribute();
            a->set_name(name);
            a->set_type(onnx::AttributeProto_AttributeType_INTS);
            for (int64_t x : v) a->add_ints(x);
        };
        ints("pads", {1, 1, 1, 1});
        ints("strides", {c.m_Stride, c.m_Stride});
        auto* group = node.add_attribute();
        group->set_name("group");
        group->set_type(onnx::AttributeProto_AttributeType_INT);
        group->set_i(c.m_Groups);
    }
    node.add_output("y");
    ValueInfo(g.add_input(), "x", c.m_XType, xDims);
    if (c.m_ComputedB) ValueInfo(g.add_input(), "w", c.m_WType, wDims);
    const int64_t side = (9 + 2 - 3) / c.m_Stride + 1;
    const std::vector<int64_t> yDims =
        c.m_Conv ? std::vector<int64_t>{1, channelsOut, side, side} : std::vector<int64_t>{xDims[0], 5, n};
    if (c.m_Requantize == 0) {
        ValueInfo(g.add_output(), "y", c.m_YType, yDims);
    } else {
        const bool relu = c.m_Requantize == 1;
        const int outType = relu ? onnx::TensorProto_DataType_UINT8 : onnx::TensorProto_DataType_INT8;
        floats("y2_scale", {relu ? 0.07f : 0.11f}, {});
        scalar8("y2_zero_point", outType, relu ? 20 : 3);  // 20: room below zero, which only the Relu empties
        const auto op = [&](const char* type, std::vector<std::string> in, const char* outName) {
            onnx::NodeProto& m = *g.add_node();
            m.set_op_type(type);
            m.set_name(std::string(type) + "_after");
            for (const std::string& v : in) m.add_input(v);
            m.add_output(outName);
        };
        op("DequantizeLinear", {"y", "y_scale", "y_zero_point"}, "yf");
        if (relu) op("Relu", {"yf"}, "yr");
        op("QuantizeLinear", {relu ? "yr" : "yf", "y2_scale", "y2_zero_point"}, "y2");
        ValueInfo(g.add_output(), "y2", outType, yDims);
    }
    OwnedTensor x;
    x.m_Name = "x";
    std::vector<unsigned int> dims(xDims.begin(), xDims.end());
    x.m_Info = TensorInfo(TensorShape(dims), c.m_XType == onnx::TensorProto_DataType_UINT8 ? DataType::UInt8 : DataType::Signed8);
    // Around the zero point (as calibrated activations are), within the type's range.
    const auto [xLo, xHi] = RangeOf(c.m_XType);
    x.m_Data = Random8(rng, x.m_Info.GetNumElements(), std::max(xLo, c.m_XZeroPoint - 60), std::min(xHi, c.m_XZeroPoint + 60));
    std::vector<OwnedTensor> inputs = {x};
    if (c.m_ComputedB) {
        OwnedTensor b;
        b.m_Name = "w";
        b.m_Info = TensorInfo(TensorShape(std::vector<unsigned int>(wDims.begin(), wDims.end())),
                              c.m_WType == onnx::TensorProto_DataType_UINT8 ? DataType::UInt8 : DataType::Signed8);
        b.m_Data = w;
        inputs.push_back(b);
    }
    return {model.SerializeAsString(), inputs};
}

class CpuAccIntegerProduct : public ::testing::TestWithParam<IntegerProductCase> {};

/// Whether oneDNN has an int8 kernel other than its reference one for case `c`'s grouped
/// convolution on this CPU (with AVX2-VNNI alone, oneDNN 2.6 has none: CpuAcc then declines it).
bool OneDnnRunsGroupedInt8Conv(const IntegerProductCase& c) {
    using dnnl::memory;
    const memory::data_type src = c.m_XType == onnx::TensorProto_DataType_UINT8 ? memory::data_type::u8 : memory::data_type::s8;
    const memory::data_type dst = c.m_YType == onnx::TensorProto_DataType_UINT8 ? memory::data_type::u8 : memory::data_type::s8;
    const memory::dim g = c.m_Groups, side = (9 + 2 - 3) / c.m_Stride + 1;
    const memory::desc x({1, 8, 9, 9}, src, memory::format_tag::any);
    const memory::desc w({g, 12 / g, 8 / g, 3, 3}, memory::data_type::s8, memory::format_tag::any);
    const memory::desc y({1, 12, side, side}, dst, memory::format_tag::any);
    dnnl::primitive_attr attr;
    attr.set_output_scales(c.m_PerChannel ? 2 : 0, std::vector<float>(c.m_PerChannel ? 12 : 1, 0.5f));
    try {
        const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
        const dnnl::convolution_forward::primitive_desc pd(
            dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, x, w, y,
                                            {c.m_Stride, c.m_Stride}, {1, 1}, {1, 1}),
            attr, engine);
        return std::string(pd.impl_info_str()).rfind("ref", 0) != 0;
    } catch (const dnnl::error&) {
        return false;
    }
}

// An imported QLinearConv / QLinearMatMul on CpuAcc (CpuRef behind it) equals CpuRef's exact
// integer computation byte for byte: the fused int8 primitive sums the same integers, adds the
// same bias and scales by the same float32 multiplier (the output is rounded half to even in both;
// they could differ only where the scaled sum is a tie and y_zero_point is odd, and the random sums
// here hit none). It is one int8 node where oneDNN's int8 is exact, or else on CpuAcc's own exact
// integer GEMM (AVX2), and the weights that do not fit a signed byte leave the product's layers
// to CpuRef.
TEST_P(CpuAccIntegerProduct, EqualsCpuRefAndFusesIntoOneInt8Node) {
    SKIP_WITHOUT_CPUACC();
    const IntegerProductCase& c = GetParam();
    const auto [bytes, inputs] = MakeIntegerProductModel(c);
    const LoadedModel acc = LoadBytes(bytes, {"CpuAcc", "CpuRef"});
    const LoadedModel ref = LoadBytes(bytes, {"CpuRef"});
    const std::vector<OwnedTensor> a = acc.Run(inputs), r = ref.Run(inputs);
    ASSERT_EQ(a.size(), 1u);
    ASSERT_EQ(a[0].m_Data.size(), r[0].m_Data.size());
    std::size_t differ = 0, saturated = 0;
    const int lo = c.m_YType == onnx::TensorProto_DataType_UINT8 ? 0 : -128;
    for (std::size_t i = 0; i < r[0].m_Data.size(); ++i) {
        differ += a[0].m_Data[i] != r[0].m_Data[i] ? 1 : 0;
        const int v = lo == 0 ? r[0].m_Data[i] : static_cast<int8_t>(r[0].m_Data[i]);
        saturated += v == lo || v == lo + 255 ? 1 : 0;
    }
    EXPECT_EQ(differ, 0u) << c.m_Name << ": " << differ << " of " << r[0].m_Data.size() << " outputs differ";
    // (An output zero point at the bottom of its range saturates the negative half, as after a Relu.)
    if (c.m_Requantize == 0) {
        EXPECT_LT(saturated, r[0].m_Data.size() * 2 / 3) << c.m_Name << ": the case saturates too much to test anything";
    }
    // On the own kernel the requantization runs in the convolution's epilogue.
    if (c.m_Requantize != 0 && !Int8Exact() && cpuacc::BestKernelIsa() != cpuacc::KernelIsa::Scalar) {
        EXPECT_NE(acc.m_Optimized.find("requantize x1"), std::string::npos) << acc.m_Optimized;
    }
    const bool int8Node = acc.m_Optimized.find("(int8)") != std::string::npos;
    // oneDNN's int8 where it is exact and has a real kernel; otherwise CpuAcc's own integer GEMM (AVX2).
    const bool ownGemm = cpuacc::BestKernelIsa() != cpuacc::KernelIsa::Scalar;
    if (c.m_Fuses && (ownGemm || (!c.m_ComputedB && Int8Exact() && (c.m_Groups == 1 || OneDnnRunsGroupedInt8Conv(c))))) {
        EXPECT_TRUE(int8Node) << acc.m_Optimized;
        EXPECT_EQ(acc.m_LayerCounts.count("CpuRef") ? acc.m_LayerCounts.at("CpuRef") : 0u, 0u) << acc.m_Optimized;
    } else {
        // Not fusable here: the integer pieces went back to CpuRef as failed sub-graphs.
        EXPECT_FALSE(int8Node) << acc.m_Optimized;
        EXPECT_GT(acc.m_LayerCounts.count("CpuRef") ? acc.m_LayerCounts.at("CpuRef") : 0u, 0u) << acc.m_Optimized;
    }
}

constexpr int kU8 = onnx::TensorProto_DataType_UINT8;
constexpr int kS8 = onnx::TensorProto_DataType_INT8;

INSTANTIATE_TEST_SUITE_P(
    CpuAccInt8, CpuAccIntegerProduct,
    ::testing::Values(
        IntegerProductCase{"ConvU8S8PerTensor", true, kU8, 128, kS8, 0, false, kU8, 131},
        IntegerProductCase{"ConvU8S8PerChannelStride2", true, kU8, 3, kS8, 0, true, kU8, 0, 1, 2},
        IntegerProductCase{"ConvS8S8PerChannelGroupedNoBias", true, kS8, -5, kS8, 0, true, kS8, 7, 2, 1, false},
        IntegerProductCase{"ConvU8WeightsU8CenteredFit", true, kU8, 100, kU8, 128, false, kU8, 128},
        IntegerProductCase{"ConvU8WeightsTooWideStayOnCpuRef", true, kU8, 100, kU8, 0, false, kU8, 128, 1, 1, true, false},
        IntegerProductCase{"MatMulU8S8PerTensor", false, kU8, 128, kS8, 0, false, kU8, 127},
        IntegerProductCase{"MatMulS8S8PerColumn", false, kS8, 1, kS8, 0, true, kS8, -3},
        IntegerProductCase{"MatMulU8WeightsU8CenteredFit", false, kU8, 0, kU8, 128, true, kU8, 9},
        // Both operands computed (attention): any zero points, u8 x u8 included; one multiplier.
        IntegerProductCase{"MatMulComputedU8xU8", false, kU8, 131, kU8, 120, false, kU8, 128, 1, 1, true, true, true},
        IntegerProductCase{"MatMulComputedS8xU8", false, kS8, -2, kU8, 255, false, kS8, 0, 1, 1, true, true, true},
        // A QOperator model's QLinearConv -> DequantizeLinear -> [Relu] -> QuantizeLinear.
        IntegerProductCase{"ConvU8S8ThenReluRequantized", true, kU8, 128, kS8, 0, true, kU8, 131, 1, 1, true, true, false, 1},
        IntegerProductCase{"ConvS8S8GroupedThenRequantizedToS8", true, kS8, -5, kS8, 0, true, kS8, 7, 2, 2, true, true, false, 2}),
    [](const ::testing::TestParamInfo<IntegerProductCase>& i) { return std::string(i.param.m_Name); });

// ---- dynamic quantization: DynamicQuantizeLinear, MatMulInteger / ConvInteger --------------------

std::size_t CpuRefLayers(const LoadedModel& m) { return m.m_LayerCounts.count("CpuRef") ? m.m_LayerCounts.at("CpuRef") : 0u; }

// DynamicQuantizeLinear on CpuAcc (range over blocks, then the quantize kernel) gives CpuRef's y,
// y_scale and y_zero_point byte for byte: data around zero, all positive (zero point 0), all
// negative (zero point 255), all zeros (scale 0), one infinity (scale infinity), and lengths that
// are not a multiple of a vector or span several of the kernel's blocks.
TEST(CpuAccInt8, DynamicQuantizeLinearEqualsCpuRefByteForByte) {
    SKIP_WITHOUT_CPUACC();
    struct Case {
        const char* m_Name;
        unsigned int m_Count;
        float m_Lo, m_Hi;
        bool m_Infinity = false;
    };
    std::mt19937 rng(99);
    for (const Case& c : {Case{"around_zero", 37, -3.0f, 5.0f}, Case{"around_zero_blocks", 40001, -7.5f, 2.25f},
                          Case{"positive", 1000, 0.5f, 4.0f}, Case{"negative", 999, -9.0f, -0.25f},
                          Case{"zeros", 64, 0.0f, 0.0f}, Case{"infinity", 100, -1.0f, 1.0f, true}}) {
        onnx::ModelProto model;
        model.set_ir_version(8);
        model.add_opset_import()->set_version(13);
        onnx::GraphProto& g = *model.mutable_graph();
        g.set_name("dynamic_quantize");
        onnx::NodeProto& node = *g.add_node();
        node.set_op_type("DynamicQuantizeLinear");
        node.set_name("dql");
        node.add_input("x");
        for (const char* o : {"y", "y_scale", "y_zero_point"}) node.add_output(o);
        ValueInfo(g.add_input(), "x", onnx::TensorProto_DataType_FLOAT, {c.m_Count});
        ValueInfo(g.add_output(), "y", kU8, {c.m_Count});
        ValueInfo(g.add_output(), "y_scale", onnx::TensorProto_DataType_FLOAT, {});
        ValueInfo(g.add_output(), "y_zero_point", kU8, {});
        std::uniform_real_distribution<float> d(c.m_Lo, c.m_Hi);
        std::vector<float> x(c.m_Count);
        for (float& v : x) v = c.m_Lo == c.m_Hi ? c.m_Lo : d(rng);
        if (c.m_Infinity) x[17] = std::numeric_limits<float>::infinity();
        const std::string bytes = model.SerializeAsString();
        const LoadedModel acc = LoadBytes(bytes, {"CpuAcc", "CpuRef"});
        const LoadedModel ref = LoadBytes(bytes, {"CpuRef"});
        EXPECT_EQ(CpuRefLayers(acc), 0u) << c.m_Name << "\n" << acc.m_Optimized;
        const OwnedTensor in = FloatInput("x", {c.m_Count}, x);
        const std::vector<OwnedTensor> a = acc.Run({in}), r = ref.Run({in});
        ASSERT_EQ(a.size(), 3u);
        for (std::size_t o = 0; o < 3; ++o) {
            EXPECT_EQ(a[o].m_Data, r[o].m_Data) << c.m_Name << ": output " << o << " differs";
        }
    }
}

/// One MatMulInteger or ConvInteger after DynamicQuantizeLinear, as onnxruntime's quantize_dynamic
/// writes them: x (Float32) -> DynamicQuantizeLinear -> MatMulInteger(x_q, w, x_zero_point,
/// w_zero_point) -> Cast Float32 -> Mul (x_scale * w_scale) -> Add bias.
struct DynamicProductCase {
    const char* m_Name;
    bool m_Conv;
    int m_WType;
    int32_t m_WZeroPoint;
    bool m_PerChannel;     ///< w_scale and w_zero_point per output column / channel
    float m_XLo, m_XHi;    ///< x's range (its zero point follows from it)
    bool m_Fuses = true;   ///< w - w_zero_point fits a signed byte (else the pieces stay on CpuRef)
    int64_t m_Batch = 1;   ///< a convolution's images
    /// A MatMulInteger of two computed operands: B [2, k, n] = DynamicQuantizeLinear of a constant
    /// plus x's mean (so that it is computed), its zero point and scale known at run time only.
    bool m_ComputedB = false;
};

void PrintTo(const DynamicProductCase& c, std::ostream* os) { *os << c.m_Name; }

std::pair<std::string, OwnedTensor> MakeDynamicProductModel(const DynamicProductCase& c) {
    std::mt19937 rng(4321);
    onnx::ModelProto model;
    model.set_ir_version(8);
    model.add_opset_import()->set_version(13);
    onnx::GraphProto& g = *model.mutable_graph();
    g.set_name("dynamic_product");
    const int64_t channelsIn = 8, channelsOut = 12, k = 48, n = 40;
    const std::vector<int64_t> xDims = c.m_Conv ? std::vector<int64_t>{c.m_Batch, channelsIn, 9, 9} : std::vector<int64_t>{2, 7, k};
    const std::vector<int64_t> wDims = c.m_Conv ? std::vector<int64_t>{channelsOut, channelsIn, 3, 3} : std::vector<int64_t>{k, n};
    const int64_t outChannels = c.m_Conv ? channelsOut : n;
    const auto add = [&](const onnx::TensorProto& t) { *g.add_initializer() = t; };
    std::size_t wCount = 1;
    for (int64_t d : wDims) wCount *= static_cast<std::size_t>(d);
    const auto [wLo, wHi] = RangeOf(c.m_WType);
    const std::vector<uint8_t> w = Random8(rng, wCount, wLo, wHi);
    if (!c.m_ComputedB) add(RawTensor("w", c.m_WType, wDims, w.data(), w.size()));
    const std::size_t params = c.m_PerChannel ? static_cast<std::size_t>(outChannels) : 1u;
    const std::vector<int64_t> paramDims = c.m_PerChannel ? std::vector<int64_t>{outChannels} : std::vector<int64_t>{};
    std::uniform_real_distribution<float> wScale(0.004f, 0.02f);
    std::vector<float> wScales(params);
    for (float& v : wScales) v = wScale(rng);
    const std::vector<uint8_t> wZeroPoints(params, static_cast<uint8_t>(c.m_WZeroPoint));
    if (!c.m_ComputedB) {
        add(RawTensor("w_scale", onnx::TensorProto_DataType_FLOAT, paramDims, wScales.data(), wScales.size() * 4));
        add(RawTensor("w_zero_point", c.m_WType, paramDims, wZeroPoints.data(), wZeroPoints.size()));
    }
    std::uniform_real_distribution<float> b(-1.0f, 1.0f);
    std::vector<float> bias(static_cast<std::size_t>(outChannels));
    for (float& v : bias) v = b(rng);
    add(RawTensor("bias", onnx::TensorProto_DataType_FLOAT,
                  c.m_Conv ? std::vector<int64_t>{outChannels, 1, 1} : std::vector<int64_t>{outChannels}, bias.data(),
                  bias.size() * 4));
    const auto node = [&](const char* op, std::vector<std::string> in, std::vector<std::string> out) -> onnx::NodeProto& {
        onnx::NodeProto& nd = *g.add_node();
        nd.set_op_type(op);
        nd.set_name(out[0] + "_node");
        for (const std::string& i : in) nd.add_input(i);
        for (const std::string& o : out) nd.add_output(o);
        return nd;
    };
    node("DynamicQuantizeLinear", {"x"}, {"x_q", "x_scale", "x_zero_point"});
    if (c.m_ComputedB) {
        // B = DynamicQuantizeLinear(constant [2, k, n] + mean(x)): "w" (u8), "w_scale", "w_zero_point".
        std::uniform_real_distribution<float> bd(-2.0f, 3.0f);
        std::vector<float> bf(static_cast<std::size_t>(2 * k * n));
        for (float& v : bf) v = bd(rng);
        add(RawTensor("b_const", onnx::TensorProto_DataType_FLOAT, {2, k, n}, bf.data(), bf.size() * 4));
        node("ReduceMean", {"x"}, {"x_mean"});
        node("Add", {"b_const", "x_mean"}, {"b_float"});
        node("DynamicQuantizeLinear", {"b_float"}, {"w", "w_scale", "w_zero_point"});
    }
    onnx::NodeProto& product =
        node(c.m_Conv ? "ConvInteger" : "MatMulInteger", {"x_q", "w", "x_zero_point", "w_zero_point"}, {"acc"});
    if (c.m_Conv) {
        auto* pads = product.add_attribute();
        pads->set_name("pads");
        pads->set_type(onnx::AttributeProto_AttributeType_INTS);
        for (int i = 0; i < 4; ++i) pads->add_ints(1);
    }
    node("Mul", {"x_scale", "w_scale"}, {"scales"});
    onnx::NodeProto& cast = node("Cast", {"acc"}, {"acc_float"});
    auto* to = cast.add_attribute();
    to->set_name("to");
    to->set_type(onnx::AttributeProto_AttributeType_INT);
    to->set_i(onnx::TensorProto_DataType_FLOAT);
    node("Mul", {"acc_float", "scales"}, {"scaled"});
    node("Add", {"scaled", "bias"}, {"y"});
    ValueInfo(g.add_input(), "x", onnx::TensorProto_DataType_FLOAT, xDims);
    ValueInfo(g.add_output(), "y", onnx::TensorProto_DataType_FLOAT,
              c.m_Conv ? std::vector<int64_t>{c.m_Batch, channelsOut, 9, 9} : std::vector<int64_t>{2, 7, n});
    std::uniform_real_distribution<float> xd(c.m_XLo, c.m_XHi);
    std::vector<float> x(1);
    std::size_t xCount = 1;
    for (int64_t d : xDims) xCount *= static_cast<std::size_t>(d);
    x.resize(xCount);
    for (float& v : x) v = xd(rng);
    return {model.SerializeAsString(), FloatInput("x", std::vector<unsigned int>(xDims.begin(), xDims.end()), x)};
}

class CpuAccDynamicProduct : public ::testing::TestWithParam<DynamicProductCase> {};

// A MatMulInteger / ConvInteger after DynamicQuantizeLinear on CpuAcc equals CpuRef bit for bit:
// the int8 primitive sums the same integers with the run-time zero point taken off, and its
// post-ops multiply by the run-time scales and add the bias, each rounded once as CpuRef's Cast,
// Mul and Add are. Where oneDNN's int8 is exact it is one int8 node and nothing runs on CpuRef;
// elsewhere it is one int8 node on CpuAcc's own integer GEMM (AVX2; im2col for a convolution),
// equally exact; weights that do not fit a signed byte leave the integer pieces to CpuRef.
TEST_P(CpuAccDynamicProduct, EqualsCpuRefAndFusesIntoOneInt8Node) {
    SKIP_WITHOUT_CPUACC();
    const DynamicProductCase& c = GetParam();
    const auto [bytes, x] = MakeDynamicProductModel(c);
    const LoadedModel acc = LoadBytes(bytes, {"CpuAcc", "CpuRef"});
    const LoadedModel ref = LoadBytes(bytes, {"CpuRef"});
    const std::vector<OwnedTensor> a = acc.Run({x}), r = ref.Run({x});
    ASSERT_EQ(a.size(), 1u);
    ASSERT_EQ(a[0].m_Data.size(), r[0].m_Data.size());
    std::size_t differ = 0;
    double worst = 0;
    for (std::size_t i = 0; i < r[0].m_Info.GetNumElements(); ++i) {
        const double d = std::fabs(ToDouble(a[0], i) - ToDouble(r[0], i));
        differ += d != 0.0 ? 1 : 0;
        worst = std::max(worst, d);
    }
    EXPECT_EQ(differ, 0u) << c.m_Name << ": " << differ << " outputs differ, by up to " << worst;
    const bool int8Node = acc.m_Optimized.find("(int8)") != std::string::npos;
    // Without VNNI the product runs on CpuAcc's own exact integer GEMM (AVX2).
    const bool ownGemm = cpuacc::BestKernelIsa() != cpuacc::KernelIsa::Scalar;
    // (A product of two computed operands runs on the own GEMM only: oneDNN's int8 weights are s8.)
    if (c.m_Fuses && ((Int8Exact() && !c.m_ComputedB) || ownGemm)) {
        EXPECT_TRUE(int8Node) << acc.m_Optimized;
        EXPECT_EQ(CpuRefLayers(acc), 0u) << acc.m_Optimized;
    } else {
        EXPECT_FALSE(int8Node) << acc.m_Optimized;
        EXPECT_GT(CpuRefLayers(acc), 0u) << acc.m_Optimized;
    }
}

INSTANTIATE_TEST_SUITE_P(
    CpuAccInt8, CpuAccDynamicProduct,
    ::testing::Values(DynamicProductCase{"MatMulS8PerTensor", false, kS8, 0, false, -2.0f, 3.0f},
                      DynamicProductCase{"MatMulS8PerColumnPositiveInput", false, kS8, 0, true, 0.1f, 4.0f},
                      DynamicProductCase{"MatMulU8CenteredFitNegativeInput", false, kU8, 128, false, -5.0f, -0.5f},
                      DynamicProductCase{"MatMulU8WeightsTooWideStayOnCpuRef", false, kU8, 0, false, -1.0f, 1.0f, false},
                      DynamicProductCase{"ConvS8PerTensor", true, kS8, 0, false, -1.5f, 2.5f},
                      DynamicProductCase{"ConvS8ThreeImages", true, kS8, 0, false, -1.0f, 3.0f, true, 3},
                      DynamicProductCase{"MatMulOfTwoComputedOperands", false, kU8, 0, false, -1.0f, 2.5f, true, 1, true}),
    [](const ::testing::TestParamInfo<DynamicProductCase>& i) { return std::string(i.param.m_Name); });

}  // namespace
