// Tests of the Arm NN compatibility layer (include/armnn, include/armnnOnnxParser): Arm NN
// programs' idioms, built with Arm NN's API only, run on CpuRef and CpuAcc (where it is built)
// and, for the layers with a data layout, in NCHW and NHWC; results are checked against plain
// loops written here.
#include <armnn/ArmNN.hpp>
#include <armnnOnnxParser/IOnnxParser.hpp>
#include <trellis/IRuntime.hpp>
#include <trellis/OnnxParser.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using namespace armnn;

// ---- data and reference loops ----

std::vector<float> Ramp(size_t n, float scale = 0.37f, float offset = -1.0f) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = offset + scale * static_cast<float>((i * 7919u) % 23u) / 4.0f;
    return v;
}

/// [N, C, H, W] -> [N, H, W, C]
std::vector<float> NchwToNhwc(const std::vector<float>& x, unsigned n, unsigned c, unsigned h, unsigned w) {
    std::vector<float> y(x.size());
    for (unsigned in = 0; in < n; ++in)
        for (unsigned ic = 0; ic < c; ++ic)
            for (unsigned ih = 0; ih < h; ++ih)
                for (unsigned iw = 0; iw < w; ++iw)
                    y[((in * h + ih) * w + iw) * c + ic] = x[((in * c + ic) * h + ih) * w + iw];
    return y;
}

struct Conv2dParams {
    unsigned n = 1, c = 4, h = 6, w = 5, o = 6, kh = 3, kw = 3;
    unsigned strideY = 2, strideX = 1, padTop = 1, padBottom = 1, padLeft = 1, padRight = 0;
    unsigned groups = 1;
    unsigned OutH() const { return (h + padTop + padBottom - kh) / strideY + 1; }
    unsigned OutW() const { return (w + padLeft + padRight - kw) / strideX + 1; }
};

/// A (depthwise) convolution descriptor with `p`'s strides and padding.
template <typename Descriptor>
Descriptor ConvDescriptorOf(const Conv2dParams& p, DataLayout layout, bool bias) {
    Descriptor d;
    d.m_StrideX = p.strideX;
    d.m_StrideY = p.strideY;
    d.m_PadTop = p.padTop;
    d.m_PadBottom = p.padBottom;
    d.m_PadLeft = p.padLeft;
    d.m_PadRight = p.padRight;
    d.m_BiasEnabled = bias;
    d.m_DataLayout = layout;
    return d;
}

/// NCHW convolution; weights [O, C / groups, KH, KW].
std::vector<float> ReferenceConv(const Conv2dParams& p, const std::vector<float>& x, const std::vector<float>& wt,
                                 const std::vector<float>& bias) {
    const unsigned oh = p.OutH(), ow = p.OutW(), cg = p.c / p.groups, og = p.o / p.groups;
    std::vector<float> y(p.n * p.o * oh * ow, 0.0f);
    for (unsigned n = 0; n < p.n; ++n)
        for (unsigned o = 0; o < p.o; ++o)
            for (unsigned yy = 0; yy < oh; ++yy)
                for (unsigned xx = 0; xx < ow; ++xx) {
                    float acc = bias.empty() ? 0.0f : bias[o];
                    const unsigned g = o / og;
                    for (unsigned ci = 0; ci < cg; ++ci)
                        for (unsigned ky = 0; ky < p.kh; ++ky)
                            for (unsigned kx = 0; kx < p.kw; ++kx) {
                                const int iy = static_cast<int>(yy * p.strideY + ky) - static_cast<int>(p.padTop);
                                const int ix = static_cast<int>(xx * p.strideX + kx) - static_cast<int>(p.padLeft);
                                if (iy < 0 || ix < 0 || iy >= static_cast<int>(p.h) || ix >= static_cast<int>(p.w)) continue;
                                const unsigned c = g * cg + ci;
                                acc += x[((n * p.c + c) * p.h + iy) * p.w + ix] *
                                       wt[((o * cg + ci) * p.kh + ky) * p.kw + kx];
                            }
                    y[((n * p.o + o) * oh + yy) * ow + xx] = acc;
                }
    return y;
}

void ExpectNear(const std::vector<float>& actual, const std::vector<float>& expected, float tolerance = 1e-4f) {
    ASSERT_EQ(actual.size(), expected.size());
    for (size_t i = 0; i < actual.size(); ++i)
        EXPECT_NEAR(actual[i], expected[i], tolerance * std::max(1.0f, std::fabs(expected[i]))) << "element " << i;
}

// ---- running a network ----

bool HasBackend(const IRuntime& runtime, const std::string& backend) {
    for (const auto& b : runtime.GetDeviceSpec().GetSupportedBackends())
        if (b.Get() == backend) return true;
    return false;
}

/// Builds, optimizes for {backend, CpuRef}, checks that `mainLayer` ran on `backend`, runs once.
class Harness {
public:
    explicit Harness(std::string backend) : m_Backend(std::move(backend)) {}

    bool Available() const { return HasBackend(*m_Runtime, m_Backend); }

    TensorInfo Info(const TensorShape& dims, bool constant = false) {
        return TensorInfo(dims, DataType::Float32, 0.0f, 0, constant);
    }
    IConnectableLayer* Constant(const TensorShape& dims, std::vector<float> data, const char* name) {
        m_Keep.push_back(std::move(data));
        return m_Network->AddConstantLayer(ConstTensor(Info(dims, true), m_Keep.back().data()), name);
    }
    IConnectableLayer* Input(LayerBindingId id, const TensorShape& dims) {
        IConnectableLayer* l = m_Network->AddInputLayer(id);
        l->GetOutputSlot(0).SetTensorInfo(Info(dims));
        return l;
    }
    void Output(IConnectableLayer* from, LayerBindingId id = 0) {
        from->GetOutputSlot(0).Connect(m_Network->AddOutputLayer(id)->GetInputSlot(0));
    }

    /// Runs with the inputs by binding id; returns output 0. `mainLayer`: the layer whose backend
    /// is checked.
    std::vector<float> Run(const std::map<LayerBindingId, std::vector<float>>& inputs, const std::string& mainLayer) {
        IOptimizedNetworkPtr opt = Optimize(*m_Network, {BackendId(m_Backend), Compute::CpuRef}, m_Runtime->GetDeviceSpec());
        EXPECT_TRUE(opt);
        bool found = false;
        for (const auto& p : opt->GetTrellisNetwork().GetLayerPlacements()) {
            const bool isMain = p.m_LayerName == mainLayer ||
                                std::find(p.m_SubstitutedLayers.begin(), p.m_SubstitutedLayers.end(), mainLayer) !=
                                    p.m_SubstitutedLayers.end();
            if (isMain) {
                found = true;
                EXPECT_EQ(p.m_Backend.Get(), m_Backend) << mainLayer << " ran on " << p.m_Backend.Get();
            }
        }
        EXPECT_TRUE(found) << "no layer '" << mainLayer << "' in the optimized network";
        NetworkId id = 0;
        std::string error;
        EXPECT_EQ(m_Runtime->LoadNetwork(id, std::move(opt), error), Status::Success) << error;
        InputTensors in;
        for (const auto& [binding, data] : inputs) {
            TensorInfo info = m_Runtime->GetInputTensorInfo(id, binding);
            info.SetConstant(true);
            in.push_back({binding, ConstTensor(info, data.data())});
        }
        const TensorInfo outInfo = m_Runtime->GetOutputTensorInfo(id, 0);
        std::vector<float> out(outInfo.GetNumElements());
        OutputTensors outs{{0, Tensor(outInfo, out.data())}};
        EXPECT_EQ(m_Runtime->EnqueueWorkload(id, in, outs), Status::Success);
        m_LastOutputInfo = outInfo;
        m_Runtime->UnloadNetwork(id);
        return out;
    }

    INetwork& Net() { return *m_Network; }
    IRuntime& Runtime() { return *m_Runtime; }
    const TensorInfo& LastOutputInfo() const { return m_LastOutputInfo; }

private:
    std::string m_Backend;
    IRuntimePtr m_Runtime = IRuntime::Create(IRuntime::CreationOptions());
    INetworkPtr m_Network = INetwork::Create();
    std::vector<std::vector<float>> m_Keep;
    TensorInfo m_LastOutputInfo;
};

// ---- parameterized over backend (and layout) ----

class ArmnnCompatBackend : public ::testing::TestWithParam<std::string> {
protected:
    void SetUp() override {
        Harness probe(GetParam());
        if (!probe.Available()) GTEST_SKIP() << GetParam() << " is not built into this Trellis";
    }
};

struct LayoutCase {
    std::string m_Backend;
    DataLayout m_Layout;
};
void PrintTo(const LayoutCase& c, std::ostream* os) { *os << c.m_Backend << " " << GetDataLayoutName(c.m_Layout); }
std::string LayoutCaseName(const ::testing::TestParamInfo<LayoutCase>& info) {
    return info.param.m_Backend + "_" + GetDataLayoutName(info.param.m_Layout);
}

class ArmnnCompatLayout : public ::testing::TestWithParam<LayoutCase> {
protected:
    void SetUp() override {
        Harness probe(GetParam().m_Backend);
        if (!probe.Available()) GTEST_SKIP() << GetParam().m_Backend << " is not built into this Trellis";
    }
    bool Nhwc() const { return GetParam().m_Layout == DataLayout::NHWC; }
};

// ---- the types Arm NN programs rely on ----

TEST(ArmnnCompatTypes, BindingPointInfoIsAPairOfBindingIdAndTensorInfo) {
    static_assert(std::is_same_v<BindingPointInfo, std::pair<LayerBindingId, TensorInfo>>);
    static_assert(std::is_same_v<armnnOnnxParser::BindingPointInfo, BindingPointInfo>);
    BindingPointInfo b{3, TensorInfo(TensorShape({1, 2}), DataType::Float32)};
    EXPECT_EQ(b.first, 3);
    EXPECT_EQ(b.second.GetNumElements(), 2u);
}

TEST(ArmnnCompatTypes, ComputeConvertsToBackendId) {
    std::vector<BackendId> prefs{Compute::CpuAcc, Compute::CpuRef, "Custom"};
    EXPECT_EQ(prefs[0].Get(), "CpuAcc");
    EXPECT_EQ(prefs[1].Get(), "CpuRef");
    EXPECT_TRUE(prefs[1].IsCpuRef());
    EXPECT_EQ(prefs[2].Get(), "Custom");
    EXPECT_STREQ(GetComputeDeviceAsCString(Compute::GpuAcc), "GpuAcc");
}

// Arm NN 22.05 and later want the info marked constant (SetConstant()); older Arm NN programs
// do not mark it. Both are accepted, and the tensor's info is constant either way.
TEST(ArmnnCompatTypes, ConstTensorInfoIsConstantWhetherMarkedOrNot) {
    float data[2] = {1, 2};
    TensorInfo info(TensorShape({2}), DataType::Float32);
    const ConstTensor unmarked(info, data);
    EXPECT_TRUE(unmarked.GetInfo().IsConstant());
    EXPECT_EQ(unmarked.GetMemoryArea(), data);
    info.SetConstant(true);
    const ConstTensor marked(info, data);
    EXPECT_TRUE(marked.GetInfo().IsConstant());
    EXPECT_EQ(marked.GetNumElements(), 2u);
}

TEST(ArmnnCompatTypes, TensorInfoFromADimensionArray) {
    const unsigned int dims[] = {2, 3, 4};
    TensorInfo info(3, dims, DataType::Float32);
    EXPECT_EQ(info.GetShape(), TensorShape({2, 3, 4}));
    EXPECT_EQ(info.GetNumBytes(), 2u * 3u * 4u * 4u);
}

TEST(ArmnnCompatTypes, OptionalValuesAndReferences) {
    Optional<int> none = EmptyOptional();
    EXPECT_FALSE(none.has_value());
    EXPECT_THROW(none.value(), BadOptionalAccessException);
    Optional<int> some(4);
    EXPECT_EQ(some.value(), 4);
    std::string reason;
    Optional<std::string&> ref(reason);
    ref.value() = "no";
    EXPECT_EQ(reason, "no");
    Optional<std::string&> noRef = EmptyOptional();
    EXPECT_FALSE(noRef);
}

TEST(ArmnnCompatTypes, BackendOptionsHoldTypedValues) {
    BackendOptions o("CpuAcc", {{"NumberOfThreads", 4u}, {"FastMathEnabled", true}, {"Name", "x"}, {"Scale", 0.5f}});
    ASSERT_EQ(o.GetOptionCount(), 4u);
    EXPECT_TRUE(o.GetOption(0).GetValue().IsUnsignedInt());
    EXPECT_EQ(o.GetOption(0).GetValue().ToString(), "4");
    EXPECT_TRUE(o.GetOption(1).GetValue().AsBool());
    EXPECT_EQ(o.GetOption(2).GetValue().AsString(), "x");
    EXPECT_EQ(o.GetOption(3).GetValue().ToString(), "0.5");
    EXPECT_THROW(o.GetOption(2).GetValue().AsInt(), InvalidArgumentException);
}

TEST(ArmnnCompatTypes, LayerTypeOfAddedLayers) {
    INetworkPtr net = INetwork::Create();
    EXPECT_EQ(net->AddAdditionLayer("a")->GetType(), LayerType::Addition);
    EXPECT_EQ(net->AddSubtractionLayer()->GetType(), LayerType::Subtraction);
    EXPECT_EQ(net->AddFullyConnectedLayer(FullyConnectedDescriptor(), "fc")->GetType(), LayerType::FullyConnected);
    EXPECT_STREQ(GetLayerTypeAsCString(LayerType::Addition), "Addition");
    IConnectableLayer* act = net->AddActivationLayer(ActivationDescriptor(ActivationFunction::ReLu), "relu");
    EXPECT_EQ(static_cast<const ActivationDescriptor&>(act->GetParameters()).m_Function, ActivationFunction::ReLu);
    EXPECT_STREQ(act->GetName(), "relu");
}

// ---- the SimpleSample flow ----

TEST_P(ArmnnCompatBackend, SimpleSampleFullyConnectedIdentity) {
    Harness h(GetParam());
    IConnectableLayer* weights = h.Constant({1, 1}, {1.0f}, "const weights");
    IConnectableLayer* fc = h.Net().AddFullyConnectedLayer(FullyConnectedDescriptor(), "fully connected");
    IConnectableLayer* in = h.Input(0, {1, 1});
    in->GetOutputSlot(0).Connect(fc->GetInputSlot(0));
    weights->GetOutputSlot(0).Connect(fc->GetInputSlot(1));
    fc->GetOutputSlot(0).SetTensorInfo(h.Info({1, 1}));
    h.Output(fc);
    EXPECT_EQ(h.Run({{0, {3.25f}}}, "fully connected"), std::vector<float>{3.25f});
}

TEST_P(ArmnnCompatBackend, FullyConnectedWithBiasTransposeAndFlatten) {
    for (bool transpose : {false, true}) {
        Harness h(GetParam());
        // input [2, 1, 3] is flattened to [2, 3]; weights [3, 4] or [4, 3]
        const std::vector<float> x = Ramp(6), w = Ramp(12, 0.21f), b = {0.5f, -0.25f, 1.0f, 0.0f};
        std::vector<float> wLaid(12);
        for (unsigned k = 0; k < 3; ++k)
            for (unsigned o = 0; o < 4; ++o) wLaid[transpose ? o * 3 + k : k * 4 + o] = w[k * 4 + o];
        FullyConnectedDescriptor d;
        d.m_BiasEnabled = true;
        d.m_TransposeWeightMatrix = transpose;
        IConnectableLayer* fc = h.Net().AddFullyConnectedLayer(d, "fc");
        h.Input(0, {2, 1, 3})->GetOutputSlot(0).Connect(fc->GetInputSlot(0));
        if (transpose)
            h.Constant({4, 3}, wLaid, "w")->GetOutputSlot(0).Connect(fc->GetInputSlot(1));
        else
            h.Constant({3, 4}, wLaid, "w")->GetOutputSlot(0).Connect(fc->GetInputSlot(1));
        h.Constant({4}, b, "b")->GetOutputSlot(0).Connect(fc->GetInputSlot(2));
        h.Output(fc);
        std::vector<float> expected(8);
        for (unsigned n = 0; n < 2; ++n)
            for (unsigned o = 0; o < 4; ++o) {
                expected[n * 4 + o] = b[o];
                for (unsigned k = 0; k < 3; ++k) expected[n * 4 + o] += x[n * 3 + k] * w[k * 4 + o];
            }
        ExpectNear(h.Run({{0, x}}, "fc"), expected);
        EXPECT_EQ(h.LastOutputInfo().GetShape(), TensorShape({2, 4}));
    }
}

TEST_P(ArmnnCompatBackend, FullyConnectedWeightsAndBiasesAsTensorsArmnn20Form) {
    // Arm NN 20.x's AddFullyConnectedLayer(descriptor, weights, biases, name), as its
    // samples/SimpleSample.cpp calls it; the tensors' infos are not marked constant.
    for (bool bias : {false, true}) {
        Harness h(GetParam());
        const std::vector<float> x = Ramp(6), w = Ramp(12, 0.21f), b = {0.5f, -0.25f, 1.0f, 0.0f};
        FullyConnectedDescriptor d;
        d.m_BiasEnabled = bias;
        Optional<ConstTensor> biases;
        if (bias) biases = ConstTensor(TensorInfo(TensorShape({4}), DataType::Float32), b.data());
        IConnectableLayer* fc = h.Net().AddFullyConnectedLayer(
            d, ConstTensor(TensorInfo(TensorShape({3, 4}), DataType::Float32), w.data()), biases, "fc");
        EXPECT_EQ(fc->GetNumInputSlots(), bias ? 3u : 2u);
        ASSERT_NE(fc->GetInputSlot(1).GetConnection(), nullptr);
        EXPECT_EQ(fc->GetInputSlot(1).GetConnection()->GetOwningIConnectableLayer().GetType(), LayerType::Constant);
        h.Input(0, {2, 3})->GetOutputSlot(0).Connect(fc->GetInputSlot(0));
        fc->GetOutputSlot(0).SetTensorInfo(h.Info({2, 4}));
        h.Output(fc);
        std::vector<float> expected(8);
        for (unsigned n = 0; n < 2; ++n)
            for (unsigned o = 0; o < 4; ++o) {
                expected[n * 4 + o] = bias ? b[o] : 0.0f;
                for (unsigned k = 0; k < 3; ++k) expected[n * 4 + o] += x[n * 3 + k] * w[k * 4 + o];
            }
        ExpectNear(h.Run({{0, x}}, "fc"), expected);
    }
}

// ---- layers with a data layout ----

TEST_P(ArmnnCompatLayout, Convolution2dWithBiasStridesAndPadding) {
    Harness h(GetParam().m_Backend);
    Conv2dParams p;
    const std::vector<float> x = Ramp(p.n * p.c * p.h * p.w), w = Ramp(p.o * p.c * p.kh * p.kw, 0.13f), b = Ramp(p.o);
    const auto d = ConvDescriptorOf<Convolution2dDescriptor>(p, GetParam().m_Layout, true);
    IConnectableLayer* conv = h.Net().AddConvolution2dLayer(d, "conv");
    if (Nhwc()) {
        h.Input(0, {p.n, p.h, p.w, p.c})->GetOutputSlot(0).Connect(conv->GetInputSlot(0));
        h.Constant({p.o, p.kh, p.kw, p.c}, NchwToNhwc(w, p.o, p.c, p.kh, p.kw), "w")
            ->GetOutputSlot(0).Connect(conv->GetInputSlot(1));
    } else {
        h.Input(0, {p.n, p.c, p.h, p.w})->GetOutputSlot(0).Connect(conv->GetInputSlot(0));
        h.Constant({p.o, p.c, p.kh, p.kw}, w, "w")->GetOutputSlot(0).Connect(conv->GetInputSlot(1));
    }
    h.Constant({p.o}, b, "b")->GetOutputSlot(0).Connect(conv->GetInputSlot(2));
    h.Output(conv);
    const std::vector<float> expected = ReferenceConv(p, x, w, b);
    const auto out = h.Run({{0, Nhwc() ? NchwToNhwc(x, p.n, p.c, p.h, p.w) : x}}, "conv");
    ExpectNear(out, Nhwc() ? NchwToNhwc(expected, p.n, p.o, p.OutH(), p.OutW()) : expected);
    EXPECT_EQ(h.LastOutputInfo().GetShape(), Nhwc() ? TensorShape({p.n, p.OutH(), p.OutW(), p.o})
                                                    : TensorShape({p.n, p.o, p.OutH(), p.OutW()}));
}

TEST_P(ArmnnCompatLayout, DepthwiseConvolution2dWithDepthMultiplier) {
    Harness h(GetParam().m_Backend);
    Conv2dParams p;
    p.c = 3;
    p.o = 6;  // depth multiplier 2
    p.groups = 3;
    p.strideY = 1;
    const std::vector<float> x = Ramp(p.n * p.c * p.h * p.w), w = Ramp(p.o * p.kh * p.kw, 0.17f), b = Ramp(p.o, 0.1f);
    // Arm NN's depthwise weights are [1, H, W, I * M]; Trellis's reference takes [I * M, 1, H, W].
    std::vector<float> wArmnn(w.size());
    for (unsigned o = 0; o < p.o; ++o)
        for (unsigned k = 0; k < p.kh * p.kw; ++k) wArmnn[k * p.o + o] = w[o * p.kh * p.kw + k];
    const auto d = ConvDescriptorOf<DepthwiseConvolution2dDescriptor>(p, GetParam().m_Layout, true);
    IConnectableLayer* conv = h.Net().AddDepthwiseConvolution2dLayer(d, "depthwise");
    h.Input(0, Nhwc() ? TensorShape{p.n, p.h, p.w, p.c}
                      : TensorShape{p.n, p.c, p.h, p.w})
        ->GetOutputSlot(0).Connect(conv->GetInputSlot(0));
    h.Constant({1, p.kh, p.kw, p.o}, wArmnn, "w")->GetOutputSlot(0).Connect(conv->GetInputSlot(1));
    h.Constant({p.o}, b, "b")->GetOutputSlot(0).Connect(conv->GetInputSlot(2));
    h.Output(conv);
    const std::vector<float> expected = ReferenceConv(p, x, w, b);
    const auto out = h.Run({{0, Nhwc() ? NchwToNhwc(x, p.n, p.c, p.h, p.w) : x}}, "depthwise");
    ExpectNear(out, Nhwc() ? NchwToNhwc(expected, p.n, p.o, p.OutH(), p.OutW()) : expected);
}

TEST_P(ArmnnCompatLayout, ConvolutionWeightsAndBiasesAsTensorsArmnn20Form) {
    // AddConvolution2dLayer / AddDepthwiseConvolution2dLayer(descriptor, weights, biases, name).
    Conv2dParams p;
    const std::vector<float> x = Ramp(p.n * p.c * p.h * p.w), w = Ramp(p.o * p.c * p.kh * p.kw, 0.13f), b = Ramp(p.o);
    {
        Harness h(GetParam().m_Backend);
        const auto d = ConvDescriptorOf<Convolution2dDescriptor>(p, GetParam().m_Layout, true);
        const std::vector<float> wLaid = Nhwc() ? NchwToNhwc(w, p.o, p.c, p.kh, p.kw) : w;
        const TensorShape wShape = Nhwc() ? TensorShape{p.o, p.kh, p.kw, p.c} : TensorShape{p.o, p.c, p.kh, p.kw};
        IConnectableLayer* conv = h.Net().AddConvolution2dLayer(
            d, ConstTensor(h.Info(wShape, true), wLaid.data()), ConstTensor(h.Info({p.o}, true), b.data()), "conv");
        h.Input(0, Nhwc() ? TensorShape{p.n, p.h, p.w, p.c} : TensorShape{p.n, p.c, p.h, p.w})
            ->GetOutputSlot(0).Connect(conv->GetInputSlot(0));
        h.Output(conv);
        const std::vector<float> expected = ReferenceConv(p, x, w, b);
        const auto out = h.Run({{0, Nhwc() ? NchwToNhwc(x, p.n, p.c, p.h, p.w) : x}}, "conv");
        ExpectNear(out, Nhwc() ? NchwToNhwc(expected, p.n, p.o, p.OutH(), p.OutW()) : expected);
    }
    {
        Harness h(GetParam().m_Backend);
        Conv2dParams q;
        q.c = 3;
        q.o = 3;
        q.groups = 3;
        const std::vector<float> xd = Ramp(q.n * q.c * q.h * q.w), wd = Ramp(q.o * q.kh * q.kw, 0.17f);
        std::vector<float> wArmnn(wd.size());
        for (unsigned o = 0; o < q.o; ++o)
            for (unsigned k = 0; k < q.kh * q.kw; ++k) wArmnn[k * q.o + o] = wd[o * q.kh * q.kw + k];
        const auto d = ConvDescriptorOf<DepthwiseConvolution2dDescriptor>(q, GetParam().m_Layout, false);
        IConnectableLayer* conv = h.Net().AddDepthwiseConvolution2dLayer(
            d, ConstTensor(h.Info({1, q.kh, q.kw, q.o}, true), wArmnn.data()), EmptyOptional(), "depthwise");
        EXPECT_EQ(conv->GetNumInputSlots(), 2u);
        h.Input(0, Nhwc() ? TensorShape{q.n, q.h, q.w, q.c} : TensorShape{q.n, q.c, q.h, q.w})
            ->GetOutputSlot(0).Connect(conv->GetInputSlot(0));
        h.Output(conv);
        const std::vector<float> expected = ReferenceConv(q, xd, wd, std::vector<float>(q.o, 0.0f));
        const auto out = h.Run({{0, Nhwc() ? NchwToNhwc(xd, q.n, q.c, q.h, q.w) : xd}}, "depthwise");
        ExpectNear(out, Nhwc() ? NchwToNhwc(expected, q.n, q.o, q.OutH(), q.OutW()) : expected);
    }
}

TEST_P(ArmnnCompatLayout, Pooling2dMaxAndAverageWithPaddingMethods) {
    struct Case {
        PoolingAlgorithm m_Type;
        PaddingMethod m_Padding;
    };
    for (Case c : {Case{PoolingAlgorithm::Max, PaddingMethod::Exclude},
                   Case{PoolingAlgorithm::Average, PaddingMethod::Exclude},
                   Case{PoolingAlgorithm::Average, PaddingMethod::IgnoreValue}}) {
        Harness h(GetParam().m_Backend);
        const unsigned n = 1, ch = 2, hh = 5, ww = 5, k = 3, s = 2, pad = 1;
        const unsigned oh = (hh + 2 * pad - k) / s + 1, ow = (ww + 2 * pad - k) / s + 1;
        const std::vector<float> x = Ramp(n * ch * hh * ww);
        Pooling2dDescriptor d;
        d.m_PoolType = c.m_Type;
        d.m_PaddingMethod = c.m_Padding;
        d.m_PoolWidth = d.m_PoolHeight = k;
        d.m_StrideX = d.m_StrideY = s;
        d.m_PadLeft = d.m_PadRight = d.m_PadTop = d.m_PadBottom = pad;
        d.m_DataLayout = GetParam().m_Layout;
        IConnectableLayer* pool = h.Net().AddPooling2dLayer(d, "pool");
        h.Input(0, Nhwc() ? TensorShape{n, hh, ww, ch} : TensorShape{n, ch, hh, ww})
            ->GetOutputSlot(0).Connect(pool->GetInputSlot(0));
        h.Output(pool);
        std::vector<float> expected(n * ch * oh * ow);
        for (unsigned cc = 0; cc < ch; ++cc)
            for (unsigned y = 0; y < oh; ++y)
                for (unsigned xx = 0; xx < ow; ++xx) {
                    float acc = c.m_Type == PoolingAlgorithm::Max ? -1e30f : 0.0f;
                    unsigned count = 0;
                    for (unsigned ky = 0; ky < k; ++ky)
                        for (unsigned kx = 0; kx < k; ++kx) {
                            const int iy = static_cast<int>(y * s + ky) - static_cast<int>(pad);
                            const int ix = static_cast<int>(xx * s + kx) - static_cast<int>(pad);
                            if (iy < 0 || ix < 0 || iy >= static_cast<int>(hh) || ix >= static_cast<int>(ww)) {
                                if (c.m_Padding == PaddingMethod::IgnoreValue) ++count;  // counted as zeros
                                continue;
                            }
                            const float v = x[(cc * hh + iy) * ww + ix];
                            acc = c.m_Type == PoolingAlgorithm::Max ? std::max(acc, v) : acc + v;
                            ++count;
                        }
                    expected[(cc * oh + y) * ow + xx] = c.m_Type == PoolingAlgorithm::Max ? acc : acc / count;
                }
        const auto out = h.Run({{0, Nhwc() ? NchwToNhwc(x, n, ch, hh, ww) : x}}, "pool");
        ExpectNear(out, Nhwc() ? NchwToNhwc(expected, n, ch, oh, ow) : expected);
    }
}

TEST_P(ArmnnCompatLayout, BatchNormalizationPerChannel) {
    Harness h(GetParam().m_Backend);
    const unsigned n = 2, ch = 3, hh = 2, ww = 2;
    const std::vector<float> x = Ramp(n * ch * hh * ww);
    std::vector<float> mean{0.1f, -0.2f, 0.3f}, var{1.0f, 0.5f, 2.0f}, beta{0.0f, 1.0f, -1.0f}, gamma{1.0f, 2.0f, 0.5f};
    TensorInfo info(TensorShape({ch}), DataType::Float32, 0.0f, 0, true);
    BatchNormalizationDescriptor d;
    d.m_Eps = 0.001f;
    d.m_DataLayout = GetParam().m_Layout;
    IConnectableLayer* bn = h.Net().AddBatchNormalizationLayer(d, ConstTensor(info, mean.data()), ConstTensor(info, var.data()),
                                                               ConstTensor(info, beta.data()),
                                                               ConstTensor(info, gamma.data()), "bn");
    h.Input(0, Nhwc() ? TensorShape{n, hh, ww, ch} : TensorShape{n, ch, hh, ww})
        ->GetOutputSlot(0).Connect(bn->GetInputSlot(0));
    h.Output(bn);
    std::vector<float> expected(x.size());
    for (unsigned i = 0; i < x.size(); ++i) {
        const unsigned c = (i / (hh * ww)) % ch;
        expected[i] = gamma[c] * (x[i] - mean[c]) / std::sqrt(var[c] + d.m_Eps) + beta[c];
    }
    const auto out = h.Run({{0, Nhwc() ? NchwToNhwc(x, n, ch, hh, ww) : x}}, "bn");
    ExpectNear(out, Nhwc() ? NchwToNhwc(expected, n, ch, hh, ww) : expected);
}

// ---- layers without a layout ----

TEST_P(ArmnnCompatBackend, ActivationFunctions) {
    struct Case {
        ActivationDescriptor m_Descriptor;
        float (*m_Reference)(float, float, float);
    };
    const std::vector<Case> cases{
        {{ActivationFunction::Sigmoid}, [](float x, float, float) { return 1.0f / (1.0f + std::exp(-x)); }},
        {{ActivationFunction::TanH, 1.5f, 0.5f}, [](float x, float a, float b) { return a * std::tanh(b * x); }},
        {{ActivationFunction::Linear, 2.0f, -1.0f}, [](float x, float a, float b) { return a * x + b; }},
        {{ActivationFunction::ReLu}, [](float x, float, float) { return std::max(0.0f, x); }},
        {{ActivationFunction::BoundedReLu, 0.5f, -0.25f},
         [](float x, float a, float b) { return std::min(a, std::max(b, x)); }},
        {{ActivationFunction::SoftReLu}, [](float x, float, float) { return std::log1p(std::exp(x)); }},
        {{ActivationFunction::LeakyReLu, 0.1f}, [](float x, float a, float) { return x > 0 ? x : a * x; }},
        {{ActivationFunction::Abs}, [](float x, float, float) { return std::fabs(x); }},
        {{ActivationFunction::Square}, [](float x, float, float) { return x * x; }},
        {{ActivationFunction::Elu, 0.7f}, [](float x, float a, float) { return x > 0 ? x : a * (std::exp(x) - 1.0f); }},
        {{ActivationFunction::HardSwish},
         [](float x, float, float) { return x * std::min(1.0f, std::max(0.0f, x / 6.0f + 0.5f)); }},
        {{ActivationFunction::Gelu},
         [](float x, float, float) { return 0.5f * x * (1.0f + std::erf(x / std::sqrt(2.0f))); }},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(GetActivationFunctionAsCString(c.m_Descriptor.m_Function));
        Harness h(GetParam());
        const std::vector<float> x = Ramp(16);
        IConnectableLayer* act = h.Net().AddActivationLayer(c.m_Descriptor, "act");
        h.Input(0, {2, 8})->GetOutputSlot(0).Connect(act->GetInputSlot(0));
        h.Output(act);
        std::vector<float> expected;
        for (float v : x) expected.push_back(c.m_Reference(v, c.m_Descriptor.m_A, c.m_Descriptor.m_B));
        ExpectNear(h.Run({{0, x}}, "act"), expected, 1e-3f);
    }
    {
        Harness h(GetParam());
        const std::vector<float> x{0.0f, 1.0f, 4.0f, 9.0f};
        IConnectableLayer* act = h.Net().AddActivationLayer(ActivationDescriptor(ActivationFunction::Sqrt), "act");
        h.Input(0, {4})->GetOutputSlot(0).Connect(act->GetInputSlot(0));
        h.Output(act);
        ExpectNear(h.Run({{0, x}}, "act"), {0.0f, 1.0f, 2.0f, 3.0f});
    }
}

TEST_P(ArmnnCompatBackend, AdditionSubtractionMultiplicationBroadcast) {
    using Add = IConnectableLayer* (INetwork::*)(const char*);
    struct Case {
        Add m_Add;
        float (*m_Op)(float, float);
    };
    for (Case c : {Case{&INetwork::AddAdditionLayer, [](float a, float b) { return a + b; }},
                   Case{&INetwork::AddSubtractionLayer, [](float a, float b) { return a - b; }},
                   Case{&INetwork::AddMultiplicationLayer, [](float a, float b) { return a * b; }},
                   Case{&INetwork::AddDivisionLayer, [](float a, float b) { return a / b; }},
                   Case{&INetwork::AddMaximumLayer, [](float a, float b) { return std::max(a, b); }},
                   Case{&INetwork::AddMinimumLayer, [](float a, float b) { return std::min(a, b); }}}) {
        Harness h(GetParam());
        const std::vector<float> a = Ramp(12), b = {0.5f, -2.0f, 3.0f};
        IConnectableLayer* op = (h.Net().*c.m_Add)("op");
        h.Input(0, {4, 3})->GetOutputSlot(0).Connect(op->GetInputSlot(0));
        h.Input(1, {3})->GetOutputSlot(0).Connect(op->GetInputSlot(1));
        h.Output(op);
        std::vector<float> expected;
        for (size_t i = 0; i < a.size(); ++i) expected.push_back(c.m_Op(a[i], b[i % 3]));
        ExpectNear(h.Run({{0, a}, {1, b}}, "op"), expected);
    }
}

TEST_P(ArmnnCompatBackend, ElementwiseBinaryAndUnaryDescriptors) {
    {
        Harness h(GetParam());
        const std::vector<float> a = Ramp(6), b = Ramp(6, 0.2f, 0.5f);
        IConnectableLayer* op = h.Net().AddElementwiseBinaryLayer(ElementwiseBinaryDescriptor(BinaryOperation::SqDiff), "sqdiff");
        h.Input(0, {6})->GetOutputSlot(0).Connect(op->GetInputSlot(0));
        h.Input(1, {6})->GetOutputSlot(0).Connect(op->GetInputSlot(1));
        h.Output(op);
        std::vector<float> expected;
        for (size_t i = 0; i < a.size(); ++i) expected.push_back((a[i] - b[i]) * (a[i] - b[i]));
        ExpectNear(h.Run({{0, a}, {1, b}}, "sqdiff"), expected);
    }
    {
        Harness h(GetParam());
        const std::vector<float> x{0.25f, 1.0f, 4.0f, 16.0f};
        IConnectableLayer* op = h.Net().AddElementwiseUnaryLayer(ElementwiseUnaryDescriptor(UnaryOperation::Rsqrt), "rsqrt");
        h.Input(0, {4})->GetOutputSlot(0).Connect(op->GetInputSlot(0));
        h.Output(op);
        ExpectNear(h.Run({{0, x}}, "rsqrt"), {2.0f, 1.0f, 0.5f, 0.25f});
    }
}

TEST_P(ArmnnCompatBackend, SoftmaxWithBeta) {
    Harness h(GetParam());
    const std::vector<float> x = Ramp(8);
    SoftmaxDescriptor d;
    d.m_Beta = 2.0f;
    IConnectableLayer* sm = h.Net().AddSoftmaxLayer(d, "softmax");
    h.Input(0, {2, 4})->GetOutputSlot(0).Connect(sm->GetInputSlot(0));
    h.Output(sm);
    std::vector<float> expected(8);
    for (unsigned r = 0; r < 2; ++r) {
        float sum = 0;
        for (unsigned i = 0; i < 4; ++i) sum += std::exp(2.0f * x[r * 4 + i]);
        for (unsigned i = 0; i < 4; ++i) expected[r * 4 + i] = std::exp(2.0f * x[r * 4 + i]) / sum;
    }
    ExpectNear(h.Run({{0, x}}, "softmax"), expected);
}

TEST_P(ArmnnCompatBackend, ReshapeConcatTransposePermute) {
    Harness h(GetParam());
    // a [2, 3] -> Reshape [3, 2]; concat with b [3, 2] on axis 1 -> [3, 4]; Transpose {1, 0} -> [4, 3];
    // Permute {1, 0} (its own inverse) -> [3, 4].
    const std::vector<float> a = Ramp(6), b = Ramp(6, 0.5f, 2.0f);
    IConnectableLayer* reshape = h.Net().AddReshapeLayer(ReshapeDescriptor(TensorShape({3, 2})), "reshape");
    h.Input(0, {2, 3})->GetOutputSlot(0).Connect(reshape->GetInputSlot(0));
    reshape->GetOutputSlot(0).SetTensorInfo(h.Info({3, 2}));
    const std::vector<TensorShape> shapes{TensorShape({3, 2}), TensorShape({3, 2})};
    ConcatDescriptor cd = CreateDescriptorForConcatenation(shapes.begin(), shapes.end(), 1);
    EXPECT_EQ(cd.GetViewOrigin(1)[1], 2u);
    IConnectableLayer* concat = h.Net().AddConcatLayer(cd, "concat");
    reshape->GetOutputSlot(0).Connect(concat->GetInputSlot(0));
    h.Input(1, {3, 2})->GetOutputSlot(0).Connect(concat->GetInputSlot(1));
    IConnectableLayer* transpose = h.Net().AddTransposeLayer(TransposeDescriptor(PermutationVector({1, 0})), "transpose");
    concat->GetOutputSlot(0).Connect(transpose->GetInputSlot(0));
    IConnectableLayer* permute = h.Net().AddPermuteLayer(PermuteDescriptor(PermutationVector({1, 0})), "permute");
    transpose->GetOutputSlot(0).Connect(permute->GetInputSlot(0));
    h.Output(permute);
    std::vector<float> expected;
    for (unsigned r = 0; r < 3; ++r) {
        expected.push_back(a[r * 2]);
        expected.push_back(a[r * 2 + 1]);
        expected.push_back(b[r * 2]);
        expected.push_back(b[r * 2 + 1]);
    }
    ExpectNear(h.Run({{0, a}, {1, b}}, "concat"), expected);
    EXPECT_EQ(h.LastOutputInfo().GetShape(), TensorShape({3, 4}));
}

TEST_P(ArmnnCompatBackend, OptimizerOptionsOpaqueReduceFp32ToFp16AndModelOptions) {
    Harness h(GetParam());
    IConnectableLayer* add = h.Net().AddAdditionLayer("add");
    h.Input(0, {4})->GetOutputSlot(0).Connect(add->GetInputSlot(0));
    h.Input(1, {4})->GetOutputSlot(0).Connect(add->GetInputSlot(1));
    h.Output(add);
    OptimizerOptionsOpaque options;
    options.SetReduceFp32ToFp16(true);
    options.AddModelOption(BackendOptions("CpuAcc", {{"FastMathEnabled", true}}));
    EXPECT_TRUE(options.GetReduceFp32ToFp16());
    EXPECT_NE(options.ToString().find("FastMathEnabled"), std::string::npos);
    std::vector<std::string> messages;
    IOptimizedNetworkPtr opt = Optimize(h.Net(), {BackendId(GetParam()), Compute::CpuRef}, h.Runtime().GetDeviceSpec(),
                                        options, Optional<std::vector<std::string>&>(messages));
    ASSERT_TRUE(opt);
    const bool mentioned = std::any_of(messages.begin(), messages.end(), [](const std::string& m) {
        return m.find("FastMathEnabled") != std::string::npos && m.find("not applied") != std::string::npos;
    });
    EXPECT_TRUE(mentioned) << "the unapplied model option is not reported in the messages";
    // The reduced network still computes the sum (to Float16 precision).
    NetworkId id = 0;
    ASSERT_EQ(h.Runtime().LoadNetwork(id, std::move(opt)), Status::Success);
    std::vector<float> a{1.5f, 2.0f, -3.0f, 0.25f}, b{0.5f, 1.0f, 1.0f, 0.25f}, out(4);
    TensorInfo info = h.Runtime().GetInputTensorInfo(id, 0);
    info.SetConstant(true);
    InputTensors in{{0, ConstTensor(info, a.data())}, {1, ConstTensor(info, b.data())}};
    OutputTensors outs{{0, Tensor(h.Runtime().GetOutputTensorInfo(id, 0), out.data())}};
    ASSERT_EQ(h.Runtime().EnqueueWorkload(id, in, outs), Status::Success);
    ExpectNear(out, {2.0f, 3.0f, -2.0f, 0.5f}, 1e-3f);

    OptimizerOptionsOpaque bf16;
    bf16.SetReduceFp32ToBf16(true);
    EXPECT_THROW(Optimize(h.Net(), {BackendId(GetParam())}, h.Runtime().GetDeviceSpec(), bf16), UnimplementedException);
}

TEST_P(ArmnnCompatBackend, ProfilerAndNetworkPropertiesAndDot) {
    Harness h(GetParam());
    IConnectableLayer* relu = h.Net().AddActivationLayer(ActivationDescriptor(ActivationFunction::ReLu), "relu");
    h.Input(0, {8})->GetOutputSlot(0).Connect(relu->GetInputSlot(0));
    h.Output(relu);
    IOptimizedNetworkPtr opt = Optimize(h.Net(), {BackendId(GetParam()), Compute::CpuRef}, h.Runtime().GetDeviceSpec());
    ASSERT_TRUE(opt);
    std::ostringstream dot;
    ASSERT_EQ(opt->SerializeToDot(dot), Status::Success);
    EXPECT_NE(dot.str().find("digraph Optimized"), std::string::npos) << dot.str();
    EXPECT_NE(dot.str().find("relu"), std::string::npos) << dot.str();
    EXPECT_NE(dot.str().find("->"), std::string::npos) << dot.str();

    INetworkProperties properties(false, MemorySource::Undefined, MemorySource::Undefined, true,
                                  ProfilingDetailsMethod::DetailsWithEvents);
    NetworkId id = 0;
    std::string error;
    ASSERT_EQ(h.Runtime().LoadNetwork(id, std::move(opt), error, properties), Status::Success) << error;
    std::shared_ptr<IProfiler> profiler = h.Runtime().GetProfiler(id);
    ASSERT_TRUE(profiler);
    EXPECT_TRUE(profiler->IsProfilingEnabled());
    std::vector<float> x = Ramp(8), y(8);
    TensorInfo info = h.Runtime().GetInputTensorInfo(id, 0);
    info.SetConstant(true);
    for (int run = 0; run < 2; ++run)
        ASSERT_EQ(h.Runtime().EnqueueWorkload(id, {{0, ConstTensor(info, x.data())}},
                                              {{0, Tensor(h.Runtime().GetOutputTensorInfo(id, 0), y.data())}}),
                  Status::Success);
    std::ostringstream json, table;
    profiler->Print(json);
    profiler->AnalyzeEventsAndWriteResults(table);
    EXPECT_NE(json.str().find("\"inferences\""), std::string::npos) << json.str();
    EXPECT_NE(json.str().find("\"layers\""), std::string::npos) << json.str();
    EXPECT_NE(table.str().find("Inferences profiled: 2"), std::string::npos) << table.str();
    profiler->EnableProfiling(false);
    ASSERT_EQ(h.Runtime().EnqueueWorkload(id, {{0, ConstTensor(info, x.data())}},
                                          {{0, Tensor(h.Runtime().GetOutputTensorInfo(id, 0), y.data())}}),
              Status::Success);
    std::ostringstream after;
    profiler->AnalyzeEventsAndWriteResults(after);
    EXPECT_NE(after.str().find("Inferences profiled: 2"), std::string::npos) << "a run was recorded while disabled";
    EXPECT_FALSE(h.Runtime().GetProfiler(id + 1000));
}

// A profiler handed out may outlive its network and its runtime; switching it then is harmless.
TEST(ArmnnCompatProfiler, OutlivesItsNetworkAndRuntime) {
    std::shared_ptr<IProfiler> unloaded, orphan;
    {
        IRuntimePtr runtime = IRuntime::Create(IRuntime::CreationOptions());
        for (std::shared_ptr<IProfiler>* keep : {&unloaded, &orphan}) {
            INetworkPtr net = INetwork::Create();
            IConnectableLayer* in = net->AddInputLayer(0);
            in->GetOutputSlot(0).SetTensorInfo(TensorInfo(TensorShape({2}), DataType::Float32));
            in->GetOutputSlot(0).Connect(net->AddOutputLayer(0)->GetInputSlot(0));
            NetworkId id = 0;
            ASSERT_EQ(runtime->LoadNetwork(id, Optimize(*net, {Compute::CpuRef}, runtime->GetDeviceSpec())),
                      Status::Success);
            *keep = runtime->GetProfiler(id);
            ASSERT_TRUE(*keep);
            if (keep == &unloaded) {
                ASSERT_EQ(runtime->UnloadNetwork(id), Status::Success);
            }
        }
    }
    for (const auto& profiler : {unloaded, orphan}) {
        profiler->EnableProfiling(true);
        EXPECT_TRUE(profiler->IsProfilingEnabled());
        std::ostringstream table;
        profiler->AnalyzeEventsAndWriteResults(table);
        EXPECT_NE(table.str().find("Inferences profiled: 0"), std::string::npos) << table.str();
    }
}

INSTANTIATE_TEST_SUITE_P(Backends, ArmnnCompatBackend, ::testing::Values("CpuRef", "CpuAcc"),
                         [](const auto& info) { return info.param; });
INSTANTIATE_TEST_SUITE_P(Backends, ArmnnCompatLayout,
                         ::testing::Values(LayoutCase{"CpuRef", DataLayout::NCHW}, LayoutCase{"CpuRef", DataLayout::NHWC},
                                           LayoutCase{"CpuAcc", DataLayout::NCHW}, LayoutCase{"CpuAcc", DataLayout::NHWC}),
                         LayoutCaseName);

// ---- errors name the layer and the rule ----

TEST(ArmnnCompatErrors, SecondConnectionIntoAnInputSlotIsRefused) {
    INetworkPtr net = INetwork::Create();
    IConnectableLayer* a = net->AddInputLayer(0, "a");
    IConnectableLayer* b = net->AddInputLayer(1, "b");
    IConnectableLayer* add = net->AddAdditionLayer("sum");
    a->GetOutputSlot(0).Connect(add->GetInputSlot(0));
    try {
        b->GetOutputSlot(0).Connect(add->GetInputSlot(0));
        FAIL() << "a second connection was accepted";
    } catch (const InvalidArgumentException& e) {
        EXPECT_NE(std::string(e.what()).find("'sum'"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("already connected"), std::string::npos) << e.what();
    }
}

TEST(ArmnnCompatErrors, BiasEnabledWithoutBiasesIsRefusedNamingTheLayer) {
    INetworkPtr net = INetwork::Create();
    const float w[] = {1.0f};
    FullyConnectedDescriptor d;
    d.m_BiasEnabled = true;
    try {
        net->AddFullyConnectedLayer(d, ConstTensor(TensorInfo(TensorShape({1, 1}), DataType::Float32), w),
                                    EmptyOptional(), "fc1");
        FAIL() << "expected an InvalidArgumentException";
    } catch (const InvalidArgumentException& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find("'fc1'"), std::string::npos) << message;
        EXPECT_NE(message.find("m_BiasEnabled"), std::string::npos) << message;
    }
}

TEST(ArmnnCompatErrors, UnconnectedInputAndMissingInputInfoNameTheLayer) {
    IRuntimePtr runtime = IRuntime::Create(IRuntime::CreationOptions());
    {
        INetworkPtr net = INetwork::Create();
        IConnectableLayer* in = net->AddInputLayer(0, "x");
        in->GetOutputSlot(0).SetTensorInfo(TensorInfo(TensorShape({2}), DataType::Float32));
        IConnectableLayer* add = net->AddAdditionLayer("sum");
        in->GetOutputSlot(0).Connect(add->GetInputSlot(0));
        add->GetOutputSlot(0).Connect(net->AddOutputLayer(0)->GetInputSlot(0));
        std::vector<std::string> messages;
        try {
            Optimize(*net, {Compute::CpuRef}, runtime->GetDeviceSpec(), OptimizerOptionsOpaque(), messages);
            FAIL() << "an unconnected input was accepted";
        } catch (const LayerValidationException& e) {
            EXPECT_NE(std::string(e.what()).find("'sum'"), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find("input slot 1 is not connected"), std::string::npos) << e.what();
        }
        ASSERT_EQ(messages.size(), 1u);
        EXPECT_NE(messages[0].find("'sum'"), std::string::npos);
    }
    {
        INetworkPtr net = INetwork::Create();
        IConnectableLayer* in = net->AddInputLayer(0, "x");
        in->GetOutputSlot(0).Connect(net->AddOutputLayer(0)->GetInputSlot(0));
        try {
            Optimize(*net, {Compute::CpuRef}, runtime->GetDeviceSpec());
            FAIL() << "an input without a TensorInfo was accepted";
        } catch (const LayerValidationException& e) {
            EXPECT_NE(std::string(e.what()).find("'x'"), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find("SetTensorInfo"), std::string::npos) << e.what();
        }
    }
}

TEST(ArmnnCompatErrors, WrongOutputTensorInfoFailsOptimizeNamingTheLayer) {
    IRuntimePtr runtime = IRuntime::Create(IRuntime::CreationOptions());
    INetworkPtr net = INetwork::Create();
    IConnectableLayer* in = net->AddInputLayer(0, "x");
    in->GetOutputSlot(0).SetTensorInfo(TensorInfo(TensorShape({2, 3}), DataType::Float32));
    IConnectableLayer* relu = net->AddActivationLayer(ActivationDescriptor(ActivationFunction::ReLu), "relu");
    in->GetOutputSlot(0).Connect(relu->GetInputSlot(0));
    relu->GetOutputSlot(0).SetTensorInfo(TensorInfo(TensorShape({3, 2}), DataType::Float32));
    relu->GetOutputSlot(0).Connect(net->AddOutputLayer(0)->GetInputSlot(0));
    try {
        Optimize(*net, {Compute::CpuRef}, runtime->GetDeviceSpec());
        FAIL() << "a wrong TensorInfo was accepted";
    } catch (const Exception& e) {
        EXPECT_NE(std::string(e.what()).find("relu"), std::string::npos) << e.what();
    }
}

TEST(ArmnnCompatErrors, UncoveredFeaturesAreRefusedByName) {
    IRuntimePtr runtime = IRuntime::Create(IRuntime::CreationOptions());
    INetworkPtr net = INetwork::Create();
    IConnectableLayer* in = net->AddInputLayer(0, "x");
    in->GetOutputSlot(0).SetTensorInfo(TensorInfo(TensorShape({1, 1, 4, 4}), DataType::Float32));
    Pooling2dDescriptor d;
    d.m_PoolType = PoolingAlgorithm::L2;
    d.m_PoolWidth = d.m_PoolHeight = d.m_StrideX = d.m_StrideY = 2;
    IConnectableLayer* pool = net->AddPooling2dLayer(d, "l2pool");
    in->GetOutputSlot(0).Connect(pool->GetInputSlot(0));
    pool->GetOutputSlot(0).Connect(net->AddOutputLayer(0)->GetInputSlot(0));
    try {
        Optimize(*net, {Compute::CpuRef}, runtime->GetDeviceSpec());
        FAIL() << "L2 pooling was accepted";
    } catch (const UnimplementedException& e) {
        EXPECT_NE(std::string(e.what()).find("'l2pool'"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("L2"), std::string::npos) << e.what();
    }
    IRuntime::CreationOptions protectedMode;
    protectedMode.m_ProtectedMode = true;
    EXPECT_THROW(IRuntime::Create(protectedMode), InvalidArgumentException);
}

TEST(ArmnnCompatLogging, ConfigureLoggingSendsOptimizeErrorsToStandardOutput) {
    IRuntimePtr runtime = IRuntime::Create(IRuntime::CreationOptions());
    INetworkPtr net = INetwork::Create();
    IConnectableLayer* in = net->AddInputLayer(0, "unset");
    in->GetOutputSlot(0).Connect(net->AddOutputLayer(0)->GetInputSlot(0));
    ConfigureLogging(true, false, LogSeverity::Warning);
    testing::internal::CaptureStdout();
    EXPECT_THROW(Optimize(*net, {Compute::CpuRef}, runtime->GetDeviceSpec()), LayerValidationException);
    const std::string out = testing::internal::GetCapturedStdout();
    EXPECT_NE(out.find("Error: "), std::string::npos) << out;
    EXPECT_NE(out.find("'unset'"), std::string::npos) << out;
    ConfigureLogging(false, false, LogSeverity::Fatal);
    testing::internal::CaptureStdout();
    EXPECT_THROW(Optimize(*net, {Compute::CpuRef}, runtime->GetDeviceSpec()), LayerValidationException);
    EXPECT_EQ(testing::internal::GetCapturedStdout(), "");
}

TEST(ArmnnCompatLogging, ArmnnLogStatementsFollowTheConfiguredSeverity) {
    ConfigureLogging(true, false, LogSeverity::Info);
    testing::internal::CaptureStdout();
    ARMNN_LOG(info) << "loaded " << 3 << " networks";
    ARMNN_LOG(debug) << "below the severity";
    ARMNN_LOG(warning) << "slow path";
    EXPECT_EQ(testing::internal::GetCapturedStdout(), "Info: loaded 3 networks\nWarning: slow path\n");
    ConfigureLogging(false, false, LogSeverity::Fatal);
}

// ---- the ONNX parser ----

TEST(ArmnnCompatOnnxParser, ParsesAndRunsTheExampleModelLikeTrellis) {
    const std::string model = std::string(TRELLIS_SOURCE_DIR) + "/examples/models/mlp.onnx";
    armnnOnnxParser::IOnnxParserPtr parser = armnnOnnxParser::IOnnxParser::Create();
    INetworkPtr net = parser->CreateNetworkFromBinaryFile(model.c_str());
    ASSERT_TRUE(net);
    EXPECT_EQ(net->GetNumInputs(), 1u);
    EXPECT_THROW(net->AddAdditionLayer("extra"), InvalidArgumentException);
    EXPECT_THROW(parser->GetNetworkInputBindingInfo("no such input"), InvalidArgumentException);

    IRuntimePtr runtime = IRuntime::Create(IRuntime::CreationOptions());
    IOptimizedNetworkPtr opt = Optimize(*net, {Compute::CpuRef}, runtime->GetDeviceSpec());
    NetworkId id = 0;
    ASSERT_EQ(runtime->LoadNetwork(id, std::move(opt)), Status::Success);
    // The model's input and output names, from the Trellis parser (the reference here).
    trellis::IOnnxParserPtr reference = trellis::IOnnxParser::Create();
    trellis::INetworkPtr refNet = reference->CreateNetworkFromBinaryFile(model);
    const std::string inputName = reference->GetInputs().at(0).m_Name;
    const std::string outputName = reference->GetOutputs().at(0).m_Name;
    BindingPointInfo inBinding = parser->GetNetworkInputBindingInfo(inputName);
    BindingPointInfo outBinding = parser->GetNetworkOutputBindingInfo(outputName);
    EXPECT_EQ(inBinding.first, reference->GetInputs()[0].m_BindingId);

    std::vector<float> x = Ramp(inBinding.second.GetNumElements());
    std::vector<float> y(runtime->GetOutputTensorInfo(id, outBinding.first).GetNumElements());
    inBinding.second.SetConstant(true);
    ASSERT_EQ(runtime->EnqueueWorkload(id, {{inBinding.first, ConstTensor(inBinding.second, x.data())}},
                                       {{outBinding.first, Tensor(runtime->GetOutputTensorInfo(id, outBinding.first), y.data())}}),
              Status::Success);

    trellis::IRuntimePtr refRuntime = trellis::IRuntime::Create({});
    trellis::NetworkId refId = 0;
    refRuntime->LoadNetwork(refId, trellis::Optimize(*refNet, {"CpuRef"}, refRuntime->GetDeviceSpec()));
    std::vector<float> expected(y.size());
    refRuntime->EnqueueWorkload(refId, {{inBinding.first, trellis::ConstTensor(inBinding.second, x.data())}},
                                {{outBinding.first, trellis::Tensor(refRuntime->GetOutputTensorInfo(refId, outBinding.first),
                                                                    expected.data())}});
    ExpectNear(y, expected);
}

TEST(ArmnnCompatOnnxParser, TextFormatModelAndBadTextAreHandled) {
    const std::string text = R"(
ir_version: 8
opset_import { domain: "" version: 17 }
graph {
  name: "relu"
  node { input: "x" output: "y" op_type: "Relu" }
  input { name: "x" type { tensor_type { elem_type: 1 shape { dim { dim_value: 4 } } } } }
  output { name: "y" type { tensor_type { elem_type: 1 shape { dim { dim_value: 4 } } } } }
}
)";
    armnnOnnxParser::IOnnxParserPtr parser = armnnOnnxParser::IOnnxParser::Create();
    INetworkPtr net = parser->CreateNetworkFromString(text);
    IRuntimePtr runtime = IRuntime::Create(IRuntime::CreationOptions());
    NetworkId id = 0;
    ASSERT_EQ(runtime->LoadNetwork(id, Optimize(*net, {Compute::CpuRef}, runtime->GetDeviceSpec())), Status::Success);
    BindingPointInfo in = parser->GetNetworkInputBindingInfo("x");
    BindingPointInfo out = parser->GetNetworkOutputBindingInfo("y");
    in.second.SetConstant(true);
    std::vector<float> x{-1.0f, 2.0f, -3.0f, 4.0f}, y(4);
    ASSERT_EQ(runtime->EnqueueWorkload(id, {{in.first, ConstTensor(in.second, x.data())}},
                                       {{out.first, Tensor(out.second, y.data())}}),
              Status::Success);
    EXPECT_EQ(y, (std::vector<float>{0.0f, 2.0f, 0.0f, 4.0f}));
    try {
        parser->CreateNetworkFromString("graph { node { ");
        FAIL() << "a truncated text model was accepted";
    } catch (const ParseException& e) {
        EXPECT_NE(std::string(e.what()).find("protobuf text format (line 1, column "), std::string::npos) << e.what();
    }
    EXPECT_THROW(parser->CreateNetworkFromTextFile("/nonexistent/model.onnxtxt"), FileNotFoundException);
}

}  // namespace
