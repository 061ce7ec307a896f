// An Arm NN application, unchanged but for its build file: it uses only Arm NN's API names
// (<armnn/...> headers, namespace armnn), the same calls as Arm NN's samples/SimpleSample.cpp,
// and runs on Trellis through the compatibility layer (docs/armnn-compat.md).
//
// It reads a number from standard input, passes it through a one-neuron fully connected layer
// whose weight is 1 (a Constant layer feeding the weights input) and prints it back.
#include <armnn/Descriptors.hpp>
#include <armnn/INetwork.hpp>
#include <armnn/IRuntime.hpp>
#include <armnn/Utils.hpp>

#include <iostream>
#include <vector>

int main() {
    using namespace armnn;

    std::cout << "Please enter a number: " << std::endl;
    float value = 0.0f;
    if (!(std::cin >> value)) {
        std::cerr << "Error: expected a number on standard input." << std::endl;
        return 1;
    }

    ConfigureLogging(true, false, LogSeverity::Warning);

    INetworkPtr network = INetwork::Create();

    // The weight of the single neuron, held by a Constant layer.
    float weight[] = {1.0f};
    TensorInfo weightInfo(TensorShape({1, 1}), DataType::Float32, 0.0f, 0, true);
    weightInfo.SetConstant();
    IConnectableLayer* const weights = network->AddConstantLayer(ConstTensor(weightInfo, weight), "weights");

    FullyConnectedDescriptor fcDescriptor;
    IConnectableLayer* const fc = network->AddFullyConnectedLayer(fcDescriptor, "fully connected");
    IConnectableLayer* input = network->AddInputLayer(0);
    IConnectableLayer* output = network->AddOutputLayer(0);

    input->GetOutputSlot(0).Connect(fc->GetInputSlot(0));
    weights->GetOutputSlot(0).Connect(fc->GetInputSlot(1));
    fc->GetOutputSlot(0).Connect(output->GetInputSlot(0));

    IRuntime::CreationOptions runtimeOptions;
    IRuntimePtr runtime = IRuntime::Create(runtimeOptions);

    TensorInfo inputInfo(TensorShape({1, 1}), DataType::Float32);
    input->GetOutputSlot(0).SetTensorInfo(inputInfo);
    fc->GetOutputSlot(0).SetTensorInfo(TensorInfo(TensorShape({1, 1}), DataType::Float32));
    weights->GetOutputSlot(0).SetTensorInfo(weightInfo);

    IOptimizedNetworkPtr optimized = Optimize(*network, {Compute::CpuRef}, runtime->GetDeviceSpec());
    if (!optimized) {
        std::cerr << "Error: the network could not be optimized." << std::endl;
        return 1;
    }

    NetworkId networkId;
    runtime->LoadNetwork(networkId, std::move(optimized));

    std::vector<float> inputData{value};
    std::vector<float> outputData(1);
    TensorInfo boundInputInfo = runtime->GetInputTensorInfo(networkId, 0);
    boundInputInfo.SetConstant(true);
    InputTensors inputs{{0, armnn::ConstTensor(boundInputInfo, inputData.data())}};
    OutputTensors outputs{{0, armnn::Tensor(runtime->GetOutputTensorInfo(networkId, 0), outputData.data())}};

    runtime->EnqueueWorkload(networkId, inputs, outputs);

    std::cout << "Your number was " << outputData[0] << std::endl;
    return 0;
}
