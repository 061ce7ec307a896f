// libFuzzer target: ONNX model bytes -> IOnnxParser -> Optimize on CpuRef (shape inference,
// folding, placement) -> LoadNetwork -> one EnqueueWorkload with zero-filled inputs.
//
// Caps, so that the fuzzer explores malformed graphs instead of large honest ones: inputs over
// kMaxModelBytes are rejected; the resource limits are set low (kMaxTensorBytes per tensor,
// kMaxWorkingMemoryBytes per run), so a model asking for more must be refused by the engine with
// ResourceLimitException -- an allocation beyond them shows up as an out-of-memory report. The
// tensor cap also bounds the time of one run: a layer's work is at most about its output's
// elements times its largest input's, 16K x 16K = 2.7e8 steps here (seconds under ASan); with a
// 1 MiB cap a fuzzed MaxPool of 220000 inputs and a kernel of 5940 took 19 s, and worse ones would
// have hit the time limit without being bugs. Input dims left open by the model are taken as 1.
// External data is resolved in an empty scratch directory holding one 1 KiB file ("data.bin"),
// so it can neither find nor read anything else.
#include "FuzzCommon.hpp"

#include <trellis/OnnxParser.hpp>
#include <trellis/Trellis.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace {

constexpr std::size_t kMaxModelBytes = 64 * 1024;
constexpr std::size_t kMaxTensorBytes = 64 << 10;
constexpr std::size_t kMaxWorkingMemoryBytes = 4 << 20;

trellis::IRuntime& Runtime() {
    static trellis::IRuntimePtr runtime = trellis::IRuntime::Create({});
    return *runtime;
}

const std::string& BaseDir() {
    static const std::string dir = [] {
        const std::filesystem::path base = trellis::fuzz::ScratchDir() / "model";
        std::filesystem::create_directories(base);
        std::vector<unsigned char> data(1024);
        for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<unsigned char>(i * 7);
        trellis::fuzz::WriteBytes(base / "data.bin", data.data(), data.size());
        return base.string();
    }();
    return dir;
}

/// Unloads the network when the run is over, however it ends.
struct Unload {
    trellis::NetworkId m_Id = 0;
    bool m_Loaded = false;
    ~Unload() {
        if (m_Loaded) Runtime().UnloadNetwork(m_Id);
    }
};

void Run(const std::string& bytes) {
    using namespace trellis;
    IOnnxParserPtr parser = IOnnxParser::Create();
    INetworkPtr network = parser->CreateNetworkFromBinary(bytes, BaseDir());
    OptimizerOptions options;
    options.m_MaxTensorBytes = kMaxTensorBytes;
    options.m_MaxWorkingMemoryBytes = kMaxWorkingMemoryBytes;
    IOptimizedNetworkPtr optimized = Optimize(*network, {"CpuRef"}, Runtime().GetDeviceSpec(), options);
    Unload loaded;
    std::string error;
    if (Runtime().LoadNetwork(loaded.m_Id, std::move(optimized), error) != Status::Success) return;
    loaded.m_Loaded = true;

    std::vector<std::vector<unsigned char>> buffers;
    buffers.reserve(parser->GetInputs().size() + parser->GetOutputs().size());
    InputTensors inputs;
    for (const BindingPointInfo& input : parser->GetInputs()) {
        TensorInfo info = input.m_TensorInfo;
        for (unsigned int d = 0; d < info.GetNumDimensions(); ++d) {
            if (info.GetShape()[d] == kUnknownDim) info.GetShape()[d] = 1;
        }
        // Within the limit once the open dims are 1; larger ones are the engine's to refuse.
        const std::optional<std::size_t> size = info.GetNumBytesChecked();
        if (!size || *size > kMaxTensorBytes) return;
        buffers.emplace_back(*size);
        inputs.emplace_back(input.m_BindingId, ConstTensor(info, buffers.back().data()));
    }
    OutputTensors outputs;
    for (const BindingPointInfo& output : parser->GetOutputs()) {
        const TensorInfo info = Runtime().GetOutputTensorInfo(loaded.m_Id, output.m_BindingId, inputs);
        // The engine checked every tensor against the limit: a larger output is a bug.
        const std::optional<std::size_t> size = info.GetNumBytesChecked();
        if (!size || *size > kMaxTensorBytes) std::abort();
        buffers.emplace_back(*size);
        outputs.emplace_back(output.m_BindingId, Tensor(info, buffers.back().data()));
    }
    Runtime().EnqueueWorkload(loaded.m_Id, inputs, outputs);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    Runtime();
    BaseDir();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
    if (size > kMaxModelBytes) return -1;  // not added to the corpus
    try {
        Run(std::string(reinterpret_cast<const char*>(data), size));
    } catch (const trellis::Exception&) {
        // A clean refusal naming what is wrong: the expected outcome for most inputs.
    }
    return 0;
}
