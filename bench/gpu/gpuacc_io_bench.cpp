// GpuAcc latency with the inputs and outputs where the application keeps them: on the host
// (EnqueueWorkload copies them through pinned staging, as `trellis bench` measures) or already
// on the GPU (Tensor::SetMemoryBackend("GpuAcc"): the input is read in place, the output written
// device to device), which is how the PyTorch numbers it is compared with are taken.
//
//   trellis_gpuacc_io_bench MODEL.onnx PRECISION ITERATIONS   -> one JSON line
//
// Median wall-clock ms of EnqueueWorkload over ITERATIONS runs after 20 warm-up runs, for both,
// with the time Optimize() + LoadNetwork() took and the layers per backend.
// Built only with GpuAcc (a benchmark, not a test).
#include <trellis/OnnxParser.hpp>
#include <trellis/Trellis.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

using namespace trellis;

namespace {

double MedianMs(IRuntime& runtime, NetworkId id, const InputTensors& in, const OutputTensors& out, int iterations) {
    for (int i = 0; i < 20; ++i) runtime.EnqueueWorkload(id, in, out);
    std::vector<double> ms;
    for (int i = 0; i < iterations; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        runtime.EnqueueWorkload(id, in, out);
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: %s MODEL.onnx fp32|tf32|fp16|bf16 ITERATIONS\n", argv[0]);
        return 2;
    }
    try {
        IRuntime::CreationOptions options;
        options.m_BackendOptions["GpuAcc"]["Precision"] = argv[2];
        IRuntimePtr runtime = IRuntime::Create(options);
        IOnnxParserPtr parser = IOnnxParser::Create();
        INetworkPtr net = parser->CreateNetworkFromBinaryFile(argv[1]);
        NetworkId id = 0;
        const auto t0 = std::chrono::steady_clock::now();
        IOptimizedNetworkPtr optimized = Optimize(*net, {"GpuAcc", "CpuRef"}, runtime->GetDeviceSpec());
        std::string layers;
        for (const auto& [backend, count] : optimized->GetBackendLayerCounts()) {
            layers += (layers.empty() ? "" : ", ") + std::string("\"") + backend.Get() + "\": " + std::to_string(count);
        }
        runtime->LoadNetwork(id, std::move(optimized));
        const double loadMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        const auto inputs = parser->GetInputs();
        const auto outputs = parser->GetOutputs();
        std::mt19937 rng(0);
        std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
        std::vector<std::vector<unsigned char>> hostIn, hostOut;
        std::vector<void*> devIn, devOut;
        InputTensors hin, din;
        OutputTensors hout, dout;
        for (const BindingPointInfo& b : inputs) {
            const TensorInfo info = runtime->GetInputTensorInfo(id, b.m_BindingId);
            hostIn.emplace_back(info.GetNumBytes());
            if (info.GetDataType() == DataType::Float32) {
                auto* f = reinterpret_cast<float*>(hostIn.back().data());
                for (std::size_t i = 0; i < info.GetNumElements(); ++i) f[i] = dist(rng);
            }
            void* d = nullptr;
            if (cudaMalloc(&d, std::max<std::size_t>(info.GetNumBytes(), 1)) != cudaSuccess) throw RuntimeException("cudaMalloc");
            cudaMemcpy(d, hostIn.back().data(), info.GetNumBytes(), cudaMemcpyHostToDevice);
            devIn.push_back(d);
            hin.emplace_back(b.m_BindingId, ConstTensor(info, hostIn.back().data()));
            ConstTensor t(info, d);
            t.SetMemoryBackend("GpuAcc");
            din.emplace_back(b.m_BindingId, t);
        }
        for (const BindingPointInfo& b : outputs) {
            const TensorInfo info = runtime->GetOutputTensorInfo(id, b.m_BindingId);
            hostOut.emplace_back(info.GetNumBytes());
            void* d = nullptr;
            if (cudaMalloc(&d, std::max<std::size_t>(info.GetNumBytes(), 1)) != cudaSuccess) throw RuntimeException("cudaMalloc");
            devOut.push_back(d);
            hout.emplace_back(b.m_BindingId, Tensor(info, hostOut.back().data()));
            Tensor t(info, d);
            t.SetMemoryBackend("GpuAcc");
            dout.emplace_back(b.m_BindingId, t);
        }
        const int iterations = std::max(1, std::atoi(argv[3]));
        const double host = MedianMs(*runtime, id, hin, hout, iterations);
        const double device = MedianMs(*runtime, id, din, dout, iterations);
        std::printf("{\"model\": \"%s\", \"precision\": \"%s\", \"host_io_ms\": %.4f, \"device_io_ms\": %.4f, "
                    "\"load_ms\": %.1f, \"layers\": {%s}}\n",
                    argv[1], argv[2], host, device, loadMs, layers.c_str());
        for (void* p : devIn) cudaFree(p);
        for (void* p : devOut) cudaFree(p);
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
}
