// Gelu is ONNX opset 20, newer than Debian's onnx 1.12 can write as a test case, so it is
// checked here through the API against the formulas.
#include "TestHelpers.hpp"

#include <cmath>

using namespace trellis;

namespace {
std::vector<float> RunUnary(UnaryOperation op, const std::vector<float>& x) {
    INetworkPtr net = INetwork::Create();
    IRuntimePtr runtime = IRuntime::Create(IRuntime::CreationOptions());
    auto* in = net->AddInputLayer(0, "x");
    const TensorInfo info({static_cast<unsigned int>(x.size())}, DataType::Float32);
    in->GetOutputSlot(0).SetTensorInfo(info);
    auto* l = net->AddElementwiseUnaryLayer({op}, "gelu");
    in->GetOutputSlot(0).Connect(l->GetInputSlot(0));
    l->GetOutputSlot(0).Connect(net->AddOutputLayer(0)->GetInputSlot(0));
    NetworkId id;
    runtime->LoadNetwork(id, Optimize(*net, {"CpuRef"}, runtime->GetDeviceSpec()));
    std::vector<float> y(x.size());
    runtime->EnqueueWorkload(id, {{0, ConstTensor(info, x.data())}}, {{0, Tensor(info, y.data())}});
    return y;
}
}  // namespace

TEST(Gelu, ExactAndTanhForms) {
    std::vector<float> x;
    for (int i = -40; i <= 40; i += 3) x.push_back(0.1f * static_cast<float>(i));
    const auto exact = RunUnary(UnaryOperation::Gelu, x);
    const auto approx = RunUnary(UnaryOperation::GeluTanh, x);
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double v = x[i];
        const double e = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
        const double a = 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
        EXPECT_NEAR(exact[i], e, 1e-6) << v;
        EXPECT_NEAR(approx[i], a, 1e-6) << v;
    }
}
