// example_acc_check: loads Example_ExampleAcc_backend.so the way an application would (through
// IRuntime::CreationOptions::m_DynamicBackendsPath) and runs networks on it.
//
// Usage: example_acc_check DIR    (DIR: the absolute directory holding the backend file)
//
// Checks, printing one line per failed check and exiting with 1 if any failed:
//   - the file was loaded: registered as "ExampleAcc", Backend API version of the headers it was
//     built against, origin = the file;
//   - Input -> Sigmoid -> Output with preferences {ExampleAcc}: the layer is placed on ExampleAcc
//     and the outputs match a double-precision sigmoid;
//   - Input -> Relu -> Sigmoid -> Output with preferences {ExampleAcc, CpuRef}: Relu falls back
//     to CpuRef with ExampleAcc's reason recorded, Sigmoid runs on ExampleAcc, values match;
//   - a Tanh layer with preferences {ExampleAcc} is refused by Optimize() with ExampleAcc's reason;
//   - destroying the runtime deregisters the backend.
#include <trellis/Trellis.hpp>
#include <trellis/backends/BackendRegistry.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#ifndef EXAMPLE_ACC_EXPECTED_API
#error "EXAMPLE_ACC_EXPECTED_API (the package's Trellis_BACKEND_API_VERSION) must be defined"
#endif

namespace {

using namespace trellis;

int g_Failures = 0;

void Check(bool ok, const std::string& what) {
    if (!ok) {
        std::printf("FAILED: %s\n", what.c_str());
        ++g_Failures;
    }
}

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

/// Values that exercise both branches of the kernel, zero, and saturation at both ends.
std::vector<float> TestInput() {
    std::vector<float> x;
    for (int i = 0; i < 12; ++i) x.push_back(-6.0f + 1.09f * static_cast<float>(i));
    x.push_back(0.0f);
    x.push_back(-100.0f);
    return x;  // 14 values, a 2x7 tensor
}

/// Input(0) -> the given unary layers in a chain -> Output(0), every tensor Float32 2x7.
INetworkPtr MakeChain(const std::vector<UnaryOperation>& ops) {
    INetworkPtr net = INetwork::Create();
    IConnectableLayer* input = net->AddInputLayer(0, "x");
    input->GetOutputSlot(0).SetTensorInfo(TensorInfo(TensorShape({2, 7}), DataType::Float32));
    IConnectableLayer* previous = input;
    for (UnaryOperation op : ops) {
        ElementwiseUnaryDescriptor d;
        d.m_Operation = op;
        const std::string name = op == UnaryOperation::Sigmoid ? "sigmoid" : op == UnaryOperation::Relu ? "relu" : "tanh";
        IConnectableLayer* layer = net->AddElementwiseUnaryLayer(d, name.c_str());
        previous->GetOutputSlot(0).Connect(layer->GetInputSlot(0));
        previous = layer;
    }
    IConnectableLayer* output = net->AddOutputLayer(0, "y");
    previous->GetOutputSlot(0).Connect(output->GetInputSlot(0));
    return net;
}

const LayerPlacement* FindPlacement(const std::vector<LayerPlacement>& placements, const std::string& name) {
    for (const LayerPlacement& p : placements) {
        if (p.m_LayerName == name) return &p;
    }
    return nullptr;
}

/// Loads `optimized`, runs it on TestInput() and compares with `expected(x)`.
void RunAndCompare(IRuntime& runtime, IOptimizedNetworkPtr optimized, double (*expected)(double), const char* what) {
    NetworkId id = 0;
    std::string error;
    if (runtime.LoadNetwork(id, std::move(optimized), error) != Status::Success) {
        Check(false, std::string(what) + ": LoadNetwork failed: " + error);
        return;
    }
    const std::vector<float> x = TestInput();
    std::vector<float> y(x.size(), -1.0f);
    const InputTensors inputs{{0, ConstTensor(runtime.GetInputTensorInfo(id, 0), x.data())}};
    const OutputTensors outputs{{0, Tensor(runtime.GetOutputTensorInfo(id, 0), y.data())}};
    Check(runtime.EnqueueWorkload(id, inputs, outputs) == Status::Success, std::string(what) + ": EnqueueWorkload");
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double want = expected(static_cast<double>(x[i]));
        const double got = static_cast<double>(y[i]);
        if (!(std::fabs(got - want) <= 1e-6 + 1e-6 * std::fabs(want))) {
            char line[200];
            std::snprintf(line, sizeof(line), "%s: output %zu for x = %.9g is %.9g, expected %.9g", what, i,
                          static_cast<double>(x[i]), got, want);
            Check(false, line);
        }
    }
    runtime.UnloadNetwork(id);
}

void CheckLoadedFile(const IRuntime& runtime, const std::string& dir) {
    const std::vector<DynamicBackendStatus> status = runtime.GetDynamicBackendStatus();
    const DynamicBackendStatus* mine = nullptr;
    for (const DynamicBackendStatus& s : status) {
        std::printf("dynamic backend file %s: id '%s', API %s, %s%s\n", s.m_Path.c_str(), s.m_Id.Get().c_str(),
                    s.m_Version.ToString().c_str(), s.m_Loaded ? "loaded" : "skipped: ", s.m_Reason.c_str());
        if (std::filesystem::path(s.m_Path).filename() == "Example_ExampleAcc_backend.so") mine = &s;
    }
    for (const std::string& w : runtime.GetDynamicBackendWarnings()) Check(false, "dynamic backend warning: " + w);
    Check(mine != nullptr, "no Example_ExampleAcc_backend.so was found in " + dir);
    if (!mine) return;
    Check(mine->m_Loaded, "Example_ExampleAcc_backend.so was not loaded: " + mine->m_Reason);
    Check(mine->m_Id == BackendId("ExampleAcc"), "the file's GetBackendId() is '" + mine->m_Id.Get() + "', not 'ExampleAcc'");
    Check(mine->m_Version == kBackendApiVersion,
          "the file reports Backend API " + mine->m_Version.ToString() + ", the headers say " + kBackendApiVersion.ToString());
    Check(mine->m_Version.ToString() == EXAMPLE_ACC_EXPECTED_API,
          "the file reports Backend API " + mine->m_Version.ToString() + ", the CMake package's " +
              "Trellis_BACKEND_API_VERSION is " + EXAMPLE_ACC_EXPECTED_API);
    Check(BackendRegistryInstance().IsBackendRegistered("ExampleAcc"), "ExampleAcc is not registered");
    Check(BackendRegistryInstance().GetOrigin("ExampleAcc") == mine->m_CanonicalPath,
          "ExampleAcc's origin is '" + BackendRegistryInstance().GetOrigin("ExampleAcc") + "', expected '" +
              mine->m_CanonicalPath + "'");
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s DIR   (absolute directory holding Example_ExampleAcc_backend.so)\n", argv[0]);
        return 2;
    }
    const std::string dir = argv[1];
    try {
        IRuntime::CreationOptions options;
        options.m_DynamicBackendsPath = dir;
        IRuntimePtr runtime = IRuntime::Create(options);
        CheckLoadedFile(*runtime, dir);
        if (g_Failures != 0) return 1;

        // 1. Sigmoid alone, ExampleAcc only.
        {
            INetworkPtr net = MakeChain({UnaryOperation::Sigmoid});
            IOptimizedNetworkPtr opt = Optimize(*net, {"ExampleAcc"}, runtime->GetDeviceSpec());
            const auto placements = opt->GetLayerPlacements();
            const LayerPlacement* sigmoid = FindPlacement(placements, "sigmoid");
            Check(sigmoid && sigmoid->m_Backend == BackendId("ExampleAcc"), "sigmoid: not placed on ExampleAcc");
            const auto counts = opt->GetBackendLayerCounts();
            Check(counts.size() == 1 && counts.count("ExampleAcc") && counts.at("ExampleAcc") == 1,
                  "sigmoid network: expected exactly 1 layer, on ExampleAcc");
            RunAndCompare(*runtime, std::move(opt), Sigmoid, "sigmoid on ExampleAcc");
        }

        // 2. Relu (ExampleAcc declines, CpuRef runs it) then Sigmoid on ExampleAcc.
        {
            INetworkPtr net = MakeChain({UnaryOperation::Relu, UnaryOperation::Sigmoid});
            IOptimizedNetworkPtr opt = Optimize(*net, {"ExampleAcc", "CpuRef"}, runtime->GetDeviceSpec());
            const auto placements = opt->GetLayerPlacements();
            const LayerPlacement* relu = FindPlacement(placements, "relu");
            const LayerPlacement* sigmoid = FindPlacement(placements, "sigmoid");
            Check(relu && relu->m_Backend == BackendId("CpuRef"), "relu: not placed on CpuRef");
            Check(relu && relu->m_Declined.size() == 1 && relu->m_Declined[0].first == BackendId("ExampleAcc") &&
                      Contains(relu->m_Declined[0].second, "ExampleAcc runs Sigmoid only"),
                  "relu: ExampleAcc's reason for declining it was not recorded");
            Check(sigmoid && sigmoid->m_Backend == BackendId("ExampleAcc"), "relu->sigmoid: sigmoid not placed on ExampleAcc");
            RunAndCompare(*runtime, std::move(opt), [](double x) { return Sigmoid(x > 0.0 ? x : 0.0); },
                          "relu on CpuRef -> sigmoid on ExampleAcc");
        }

        // 3. A layer ExampleAcc does not run, and no fallback: Optimize() says why.
        {
            INetworkPtr net = MakeChain({UnaryOperation::Tanh});
            std::string message;
            try {
                Optimize(*net, {"ExampleAcc"}, runtime->GetDeviceSpec());
            } catch (const BackendUnavailableException& e) {
                message = e.what();
            }
            Check(Contains(message, "tanh") && Contains(message, "ExampleAcc: ElementwiseUnary Tanh: ExampleAcc runs Sigmoid only"),
                  "tanh with preferences {ExampleAcc}: expected Optimize() to refuse it with ExampleAcc's reason, got '" +
                      message + "'");
        }
    } catch (const std::exception& e) {
        Check(false, std::string("unexpected exception: ") + e.what());
    }
    // The runtime that loaded the file is gone: the backend is deregistered and the file closed.
    Check(!BackendRegistryInstance().IsBackendRegistered("ExampleAcc"),
          "ExampleAcc is still registered after the runtime was destroyed");

    if (g_Failures != 0) {
        std::printf("example_acc_check: %d check(s) failed\n", g_Failures);
        return 1;
    }
    std::printf("example_acc_check: all checks passed\n");
    return 0;
}
