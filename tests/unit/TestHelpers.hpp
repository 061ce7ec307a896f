// Shared test helpers: run an ONNX model through the public API and compare tensors (the
// layer-by-layer network builder is in tests/support/NetworkBuilders.hpp, included here).
#pragma once

#include "support/NetworkBuilders.hpp"
#include "support/TensorValues.hpp"

#include <trellis/OnnxParser.hpp>
#include <trellis/TensorIO.hpp>
#include <trellis/Trellis.hpp>
#include <trellis/backends/BackendRegistry.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace trellis::test {

/// A model parsed, optimized and loaded into its own runtime.
struct LoadedModel {
    IRuntimePtr m_Runtime{nullptr, &IRuntime::Destroy};
    NetworkId m_Id = 0;
    std::vector<BindingPointInfo> m_Inputs;
    std::vector<BindingPointInfo> m_Outputs;
    std::map<BackendId, unsigned int> m_LayerCounts;
    std::string m_Optimized;  ///< the optimized network as text (each layer, region and its backend)

    static LoadedModel Load(const std::string& path, const std::vector<BackendId>& backends,
                            const IOnnxParser::Options& options = {},
                            const IRuntime::CreationOptions& runtimeOptions = {}) {
        LoadedModel m;
        IOnnxParserPtr parser = IOnnxParser::Create();
        INetworkPtr net = parser->CreateNetworkFromBinaryFile(path, options);
        m.m_Inputs = parser->GetInputs();
        m.m_Outputs = parser->GetOutputs();
        m.m_Runtime = IRuntime::Create(runtimeOptions);
        IOptimizedNetworkPtr opt = Optimize(*net, backends, m.m_Runtime->GetDeviceSpec());
        m.m_LayerCounts = opt->GetBackendLayerCounts();
        m.m_Optimized = opt->ToString();
        m.m_Runtime->LoadNetwork(m.m_Id, std::move(opt));
        return m;
    }

    std::vector<OwnedTensor> Run(const std::vector<OwnedTensor>& inputs) const {
        InputTensors in;
        for (std::size_t i = 0; i < inputs.size(); ++i) {
            in.emplace_back(m_Inputs.at(i).m_BindingId, inputs[i].AsConstTensor());
        }
        std::vector<OwnedTensor> outs(m_Outputs.size());
        OutputTensors out;
        for (std::size_t i = 0; i < m_Outputs.size(); ++i) {
            outs[i].m_Name = m_Outputs[i].m_Name;
            // With the inputs: a dynamic network is specialized for them.
            outs[i].m_Info = m_Runtime->GetOutputTensorInfo(m_Id, m_Outputs[i].m_BindingId, in);
            outs[i].m_Data.assign(outs[i].m_Info.GetNumBytes(), 0);
            out.emplace_back(m_Outputs[i].m_BindingId, outs[i].AsTensor());
        }
        m_Runtime->EnqueueWorkload(m_Id, in, out);
        return outs;
    }
};

/// Relative L2 error ||got - want|| / ||want|| over n elements read by got(i) and want(i) (the
/// plain norm of the difference when want is all zeros).
template <typename Got, typename Want>
double RelativeL2Of(std::size_t n, Got got, Want want) {
    double num = 0, den = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const double w = want(i), d = got(i) - w;
        num += d * d;
        den += w * w;
    }
    return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

inline double RelativeL2(const OwnedTensor& got, const OwnedTensor& want) {
    return RelativeL2Of(want.m_Info.GetNumElements(), [&](std::size_t i) { return ToDouble(got, i); },
                        [&](std::size_t i) { return ToDouble(want, i); });
}

/// The same over float vectors (up to the shorter length).
inline double RelativeL2(const std::vector<float>& got, const std::vector<float>& want) {
    return RelativeL2Of(std::min(got.size(), want.size()), [&](std::size_t i) { return static_cast<double>(got[i]); },
                        [&](std::size_t i) { return static_cast<double>(want[i]); });
}

/// The saved inputs of exported test model `base`: base.input_0.pb, base.input_1.pb, ...
inline std::vector<OwnedTensor> LoadModelInputs(const std::string& base) {
    std::vector<OwnedTensor> inputs;
    for (int k = 0; std::filesystem::exists(base + ".input_" + std::to_string(k) + ".pb"); ++k) {
        inputs.push_back(LoadTensorFile(base + ".input_" + std::to_string(k) + ".pb"));
    }
    return inputs;
}

/// Exported test model `base` (its path without ".onnx") run on `backends` (with `options` for
/// the runtime) with its saved inputs, against its saved PyTorch outputs (base.output_K.pb, one
/// per model output: the decoders' present key/value too): sets *err to the largest relative L2
/// error over the outputs and *layerCounts to the layers per backend. Fails the test fatally when
/// a file is missing or an output's shape differs (check HasFatalFailure() after the call).
inline void ModelErrorVsPyTorch(const std::string& base, const std::vector<BackendId>& backends, double* err,
                                std::map<BackendId, unsigned int>* layerCounts,
                                const IRuntime::CreationOptions& options = {}) {
    ASSERT_TRUE(std::filesystem::exists(base + ".onnx")) << base << ".onnx missing: the model export tests make it";
    LoadedModel m = LoadedModel::Load(base + ".onnx", backends, {}, options);
    std::vector<OwnedTensor> want;
    for (int k = 0; std::filesystem::exists(base + ".output_" + std::to_string(k) + ".pb"); ++k) {
        want.push_back(LoadTensorFile(base + ".output_" + std::to_string(k) + ".pb"));
    }
    ASSERT_FALSE(want.empty()) << base << ".output_0.pb missing";
    // An all-zero reference (a zero-initialized head) would let any output of zeros pass.
    bool nonZero = false;
    for (std::size_t i = 0; i < want[0].m_Info.GetNumElements() && !nonZero; ++i) nonZero = ToDouble(want[0], i) != 0.0;
    ASSERT_TRUE(nonZero) << base << ".output_0.pb is all zeros: the comparison could not fail";
    const auto outs = m.Run(LoadModelInputs(base));
    ASSERT_EQ(outs.size(), want.size());
    *err = 0.0;
    for (std::size_t k = 0; k < want.size(); ++k) {
        ASSERT_EQ(outs[k].m_Info.GetShape(), want[k].m_Info.GetShape()) << "output " << k;
        *err = std::max(*err, RelativeL2(outs[k], want[k]));
    }
    *layerCounts = m.m_LayerCounts;
}

/// The exported test models with a float32 PyTorch reference (tests/models/export_models.py at
/// opset 13 and 17, export_transformers.py at opset 14, its decoders with a KV cache too), as
/// "<name>_op<N>" bases in TRELLIS_TEST_MODELS_DIR.
inline const std::vector<std::string>& ExportedModels() {
    static const std::vector<std::string> models = {
        "tiny_cnn_op13", "squeezenet1_1_op13", "mobilenet_v2_op13", "resnet50_op13", "efficientnet_b0_op13",
        "shufflenet_v2_x1_0_op13", "mobilenet_v3_small_op13", "vit_b_16_op13", "transformer_op13", "transformer_op17",
        "lstm_op13", "t5_encoder_op14", "bert_op14", "gpt2_op14", "llama_op14", "gpt2_decoder_op14",
        "llama_decoder_op14"};
    return models;
}

/// A backend and options that make it choose other kernels than its defaults.
struct BackendVariant {
    BackendId m_Backend;
    std::map<std::string, std::string> m_Options;
    std::string m_Label;  ///< "CpuAcc", "CpuAcc_Winograd_off" (usable in test names)
};

/// Every registered backend with its default options, and for backends with options that choose
/// other kernels one variant per such option (each set to its non-default value). The one place
/// that knows those options; a backend's own tests check the options themselves. CpuAcc's
/// FastMath=bf16 is left out: it is not within the float32 tolerances (its own test covers it).
inline std::vector<BackendVariant> BackendVariants() {
    const std::map<BackendId, std::vector<std::pair<std::string, std::string>>> kernelOptions = {
        {"CpuAcc", {{"ConvLayout", "auto"}, {"Winograd", "off"}, {"Xnnpack", "off"}, {"Swish", "onednn"}, {"NumThreads", "1"}}},
    };
    std::vector<BackendVariant> out;
    for (const BackendId& id : BackendRegistryInstance().GetBackendIds()) {
        out.push_back({id, {}, id.Get()});
        const auto it = kernelOptions.find(id);
        if (it == kernelOptions.end()) continue;
        for (const auto& [name, value] : it->second) out.push_back({id, {{name, value}}, id.Get() + "_" + name + "_" + value});
    }
    return out;
}

/// Test names and failure messages show a variant by its label.
inline void PrintTo(const BackendVariant& variant, std::ostream* os) { *os << variant.m_Label; }

/// Runtime options that apply `variant`'s backend options.
inline IRuntime::CreationOptions VariantOptions(const BackendVariant& variant) {
    IRuntime::CreationOptions o;
    if (!variant.m_Options.empty()) o.m_BackendOptions[variant.m_Backend] = variant.m_Options;
    return o;
}

/// Empty string when equal within tolerance (exact for integer and bool types), else why not.
inline std::string Compare(const OwnedTensor& got, const OwnedTensor& want, double rtol, double atol) {
    if (got.m_Info.GetShape() != want.m_Info.GetShape() || got.m_Info.GetDataType() != want.m_Info.GetDataType()) {
        return "expected " + want.m_Info.ToString() + ", got " + got.m_Info.ToString();
    }
    const DataType t = want.m_Info.GetDataType();
    const bool exact = t != DataType::Float32 && t != DataType::Float64 && t != DataType::Float16;
    if (t == DataType::Float16 || t == DataType::BFloat16) {
        return got.m_Data == want.m_Data ? "" : "16-bit float data differs";
    }
    std::size_t bad = 0, firstBad = 0;
    double worst = 0;
    for (std::size_t i = 0; i < want.m_Info.GetNumElements(); ++i) {
        const double g = ToDouble(got, i), w = ToDouble(want, i);
        const bool ok = exact ? g == w
                              : ((std::isnan(g) && std::isnan(w)) || (std::isinf(w) && g == w) ||
                                 std::fabs(g - w) <= atol + rtol * std::fabs(w));
        if (!ok) {
            if (!bad) firstBad = i;
            ++bad;
            worst = std::max(worst, std::fabs(g - w));
        }
    }
    if (!bad) return "";
    return std::to_string(bad) + " of " + std::to_string(want.m_Info.GetNumElements()) +
           " elements differ; first at " + std::to_string(firstBad) + ": got " + std::to_string(ToDouble(got, firstBad)) +
           ", want " + std::to_string(ToDouble(want, firstBad)) + "; worst abs diff " + std::to_string(worst);
}

}  // namespace trellis::test
