// The application flow of section 5 of the custom-backend plugin guide (the seed), written for
// Arm NN and compiled against the Arm NN compatibility layer (<armnn/...>, namespace armnn) as
// it stands: on CpuRef, with fallback past an unknown backend, and on the Custom sample backend
// loaded as a dynamic backend, whose OptimizeSubgraph turns the addition into a PreCompiled layer.
#include <armnn/ArmNN.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

std::vector<float> RunSeedAdditionFlow(const std::vector<armnn::BackendId>& defaultBackends,
                                       const std::string& dynamicBackendsPath = "",
                                       std::vector<trellis::LayerPlacement>* placements = nullptr) {
    using namespace armnn;

    // 6. Create and configure the runtime object (created first: Optimize needs its device spec).
    IRuntime::CreationOptions options;
    options.m_DynamicBackendsPath = dynamicBackendsPath;
    IRuntimePtr runtime(IRuntime::Create(options));

    // 1. Create an empty model object.
    INetworkPtr net(INetwork::Create());

    // 2. Add layers to the model.
    IConnectableLayer* input1 = net->AddInputLayer(0);
    IConnectableLayer* input2 = net->AddInputLayer(1);
    IConnectableLayer* add = net->AddAdditionLayer("add");
    IConnectableLayer* output = net->AddOutputLayer(0);

    // 3. Create the required connections between the layers.
    input1->GetOutputSlot(0).Connect(add->GetInputSlot(0));
    input2->GetOutputSlot(0).Connect(add->GetInputSlot(1));
    add->GetOutputSlot(0).Connect(output->GetInputSlot(0));

    // 4. Set the tensor information for each of the outputs.
    TensorInfo tensorInfo(TensorShape({3, 4}), DataType::Float32);
    input1->GetOutputSlot(0).SetTensorInfo(tensorInfo);
    input2->GetOutputSlot(0).SetTensorInfo(tensorInfo);
    add->GetOutputSlot(0).SetTensorInfo(tensorInfo);

    // 5. Optimize the completed network.
    IOptimizedNetworkPtr optimizedNet = Optimize(*net, defaultBackends, runtime->GetDeviceSpec());
    if (placements) *placements = optimizedNet->GetTrellisNetwork().GetLayerPlacements();

    // 7. Load the optimized network.
    NetworkId networkId;
    std::string error;
    EXPECT_EQ(runtime->LoadNetwork(networkId, std::move(optimizedNet), error), Status::Success) << error;

    // 8. Create sample input and output data structures (the guide's form: the infos are not
    // marked constant, as Arm NN before 22.05 allowed).
    std::vector<float> input1Data{1.f, 2.f, 3.f, 4.f, 5.f, 6.f, 7.f, 8.f, 9.f, 10.f, 11.f, 12.f};
    std::vector<float> input2Data{100.f, 200.f, 300.f, 400.f, 500.f, 600.f, 700.f, 800.f, 900.f, 1000.f, 1100.f, 1200.f};
    std::vector<float> outputData(12);
    InputTensors inputTensors{{0, ConstTensor(runtime->GetInputTensorInfo(networkId, 0), input1Data.data())},
                              {1, ConstTensor(runtime->GetInputTensorInfo(networkId, 0), input2Data.data())}};
    OutputTensors outputTensors{{0, Tensor(runtime->GetOutputTensorInfo(networkId, 0), outputData.data())}};

    // 9. Run the inference.
    EXPECT_EQ(runtime->EnqueueWorkload(networkId, inputTensors, outputTensors), Status::Success);
    return outputData;
}

const std::vector<float> kExpected{101, 202, 303, 404, 505, 606, 707, 808, 909, 1010, 1111, 1212};

TEST(ArmnnSeedFlow, AdditionOnCpuRef) {
    EXPECT_EQ(RunSeedAdditionFlow({armnn::Compute::CpuRef}), kExpected);
}

TEST(ArmnnSeedFlow, UnregisteredBackendFirstFallsBackToCpuRef) {
    EXPECT_EQ(RunSeedAdditionFlow({"NoSuchBackend", armnn::Compute::CpuRef}), kExpected);
}

TEST(ArmnnSeedFlow, NoUsableBackendIsAClearError) {
    try {
        RunSeedAdditionFlow({"NoSuchBackend"});
        FAIL() << "expected an exception";
    } catch (const armnn::Exception& e) {
        EXPECT_NE(std::string(e.what()).find("none of the preferred backends (NoSuchBackend) is registered"),
                  std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("CpuRef"), std::string::npos) << e.what();
    }
}

TEST(ArmnnSeedFlow, AdditionToPreCompiledOnTheCustomDynamicBackend) {
    std::vector<trellis::LayerPlacement> placements;
    EXPECT_EQ(RunSeedAdditionFlow({"Custom"}, TRELLIS_CUSTOM_BACKEND_DIR, &placements), kExpected);
    unsigned int preCompiled = 0;
    for (const trellis::LayerPlacement& p : placements) {
        EXPECT_NE(p.m_Type, trellis::LayerType::ElementwiseBinary) << "the addition was not substituted";
        if (p.m_Type != trellis::LayerType::PreCompiled) continue;
        ++preCompiled;
        EXPECT_EQ(p.m_LayerName, "add");
        EXPECT_EQ(p.m_Backend.Get(), "Custom");
        EXPECT_EQ(p.m_OpDetail, "CustomPreCompiled(Add)");
    }
    EXPECT_EQ(preCompiled, 1u);
}

}  // namespace
