// The application flow of section 5 of the custom-backend plugin guide (the seed), compiled with
// `namespace armnn = trellis;` as its only change. Runs on CpuRef here.
#include <trellis/Trellis.hpp>

#include <gtest/gtest.h>

namespace armnn = trellis;

namespace {

std::vector<float> RunSeedAdditionFlow(const std::vector<armnn::BackendId>& defaultBackends) {
    using namespace armnn;

    // 6. Create and configure the runtime object (created first: Optimize needs its device spec).
    IRuntime::CreationOptions options;
    IRuntimePtr runtime(IRuntime::Create(options));

    // 1. Create an empty model object.
    INetworkPtr net(INetwork::Create());

    // 2. Add layers to the model.
    IConnectableLayer* input1 = net->AddInputLayer(0);
    IConnectableLayer* input2 = net->AddInputLayer(1);
    IConnectableLayer* add    = net->AddAdditionLayer();
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

    // 7. Load the optimized network.
    NetworkId networkId;
    runtime->LoadNetwork(networkId, std::move(optimizedNet));

    // 8. Create sample input and output data structures.
    std::vector<float> input1Data
    {
        1.f, 2.f, 3.f, 4.f, 5.f, 6.f, 7.f, 8.f, 9.f, 10.f, 11.f, 12.f
    };
    std::vector<float> input2Data
    {
        100.f, 200.f, 300.f, 400.f, 500.f, 600.f, 700.f, 800.f, 900.f, 1000.f, 1100.f, 1200.f
    };
    std::vector<float> outputData(12);

    InputTensors inputTensors
    {
        { 0, ConstTensor(runtime->GetInputTensorInfo(networkId, 0), input1Data.data()) },
        { 1, ConstTensor(runtime->GetInputTensorInfo(networkId, 0), input2Data.data()) }
    };
    OutputTensors outputTensors
    {
        { 0, Tensor(runtime->GetOutputTensorInfo(networkId, 0), outputData.data()) }
    };

    // 9. Run the inference.
    runtime->EnqueueWorkload(networkId, inputTensors, outputTensors);
    return outputData;
}

}  // namespace

TEST(SeedFlow, AdditionOnCpuRef) {
    const std::vector<float> out = RunSeedAdditionFlow({"CpuRef"});
    const std::vector<float> expected{101, 202, 303, 404, 505, 606, 707, 808, 909, 1010, 1111, 1212};
    EXPECT_EQ(out, expected);
}

TEST(SeedFlow, UnregisteredBackendFirstFallsBackToCpuRef) {
    const std::vector<float> out = RunSeedAdditionFlow({"NoSuchBackend", "CpuRef"});
    EXPECT_FLOAT_EQ(out[11], 1212.f);
}

TEST(SeedFlow, NoUsableBackendIsAClearError) {
    try {
        RunSeedAdditionFlow({"NoSuchBackend"});
        FAIL() << "expected an exception";
    } catch (const trellis::BackendUnavailableException& e) {
        EXPECT_NE(std::string(e.what()).find("CpuRef"), std::string::npos) << e.what();
    }
}
