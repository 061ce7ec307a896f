// The seed's AdditionToPreCompiled flow (custom-backend plugin guide, section 5) as a program of
// its own, built against an installed Trellis: the runtime finds the Custom sample backend in
// the installed default folder (<prefix>/lib/trellis/backends; no path is given), Optimize()
// turns the addition into one PreCompiled layer on Custom with copies into and out of its memory,
// and the result is checked. Exit status 0 when every step holds; otherwise 1, saying which.
#include <trellis/Trellis.hpp>
#include <trellis/backends/BackendRegistry.hpp>

#include <iostream>
#include <string>
#include <vector>

namespace {

int Fail(const std::string& what) {
    std::cerr << "seed flow: " << what << std::endl;
    return 1;
}

}  // namespace

int main() {
    using namespace trellis;
    IRuntimePtr runtime = IRuntime::Create(IRuntime::CreationOptions());
    if (!BackendRegistryInstance().IsBackendRegistered("Custom")) {
        std::string why = "the Custom backend is not registered; default paths:";
        for (const std::string& p : IRuntime::GetDefaultDynamicBackendPaths()) why += " " + p;
        for (const DynamicBackendStatus& s : runtime->GetDynamicBackendStatus())
            if (!s.m_Loaded) why += "\n  skipped " + s.m_Path + ": " + s.m_Reason;
        return Fail(why);
    }

    INetworkPtr net = INetwork::Create();
    IConnectableLayer* input0 = net->AddInputLayer(0);
    IConnectableLayer* input1 = net->AddInputLayer(1);
    IConnectableLayer* add = net->AddAdditionLayer("add");
    IConnectableLayer* output = net->AddOutputLayer(0);
    input0->GetOutputSlot(0).Connect(add->GetInputSlot(0));
    input1->GetOutputSlot(0).Connect(add->GetInputSlot(1));
    add->GetOutputSlot(0).Connect(output->GetInputSlot(0));
    const TensorInfo info(TensorShape({3, 4}), DataType::Float32);
    input0->GetOutputSlot(0).SetTensorInfo(info);
    input1->GetOutputSlot(0).SetTensorInfo(info);

    IOptimizedNetworkPtr optimized = Optimize(*net, {"Custom"}, runtime->GetDeviceSpec());
    unsigned int preCompiled = 0, copies = 0;
    for (const LayerPlacement& p : optimized->GetLayerPlacements()) {
        if (p.m_Type == LayerType::ElementwiseBinary) return Fail("the addition was not substituted:\n" + optimized->ToString());
        if (p.m_Type == LayerType::PreCompiled) {
            ++preCompiled;
            if (p.m_Backend != BackendId("Custom") || p.m_OpDetail != "CustomPreCompiled(Add)")
                return Fail("unexpected PreCompiled layer " + p.m_LayerName + " on " + p.m_Backend.Get() + ": " + p.m_OpDetail);
        }
        if (p.m_Type == LayerType::MemCopy) ++copies;
    }
    if (preCompiled != 1 || copies != 3)
        return Fail("expected 1 PreCompiled layer and 3 MemCopy layers:\n" + optimized->ToString());

    NetworkId id = 0;
    std::string error;
    if (runtime->LoadNetwork(id, std::move(optimized), error) != Status::Success) return Fail("LoadNetwork: " + error);
    std::vector<float> a(12), b(12), out(12);
    for (int i = 0; i < 12; ++i) {
        a[i] = static_cast<float>(i + 1);
        b[i] = 100.0f * static_cast<float>(i + 1);
    }
    const InputTensors inputs{{0, ConstTensor(runtime->GetInputTensorInfo(id, 0), a.data())},
                              {1, ConstTensor(runtime->GetInputTensorInfo(id, 1), b.data())}};
    const OutputTensors outputs{{0, Tensor(runtime->GetOutputTensorInfo(id, 0), out.data())}};
    if (runtime->EnqueueWorkload(id, inputs, outputs) != Status::Success) return Fail("EnqueueWorkload failed");
    for (int i = 0; i < 12; ++i)
        if (out[i] != 101.0f * static_cast<float>(i + 1))
            return Fail("element " + std::to_string(i) + " is " + std::to_string(out[i]) + ", expected " +
                        std::to_string(101 * (i + 1)));
    std::cout << "seed flow: add ran as CustomPreCompiled(Add) on Custom, 12 sums correct" << std::endl;
    return 0;
}
