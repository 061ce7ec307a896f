// Differential model tests: every exported model (torchvision CNNs and ViT, a PyTorch transformer
// encoder, an LSTM, and transformer architectures from Hugging Face `transformers`: T5 encoder,
// BERT, GPT-2, LLaMA) on every backend variant (BackendVariants(): each registered backend, CpuAcc
// also with each kernel-choosing option), CpuRef behind it, against PyTorch's own output. When a
// variant misses, CompareBackends() runs to name the first tensor where it left CpuRef, so the
// failure says where the wrong answer starts.
#include "TestHelpers.hpp"

#include <trellis/Compare.hpp>

#include <filesystem>
#include <iostream>
#include <tuple>

using namespace trellis;
using namespace trellis::test;

namespace {

/// Variants other than CpuRef alone (model_test.cpp runs every model on CpuRef).
std::vector<BackendVariant> Variants() {
    std::vector<BackendVariant> out;
    for (BackendVariant& v : BackendVariants()) {
        if (v.m_Backend != BackendId("CpuRef")) out.push_back(std::move(v));
    }
    return out;
}

/// The first divergence from CpuRef of `variant` on model `base`, as text (for a failure message).
std::string FirstDivergence(const std::string& base, const BackendVariant& variant) {
    try {
        IOnnxParserPtr parser = IOnnxParser::Create();
        INetworkPtr net = parser->CreateNetworkFromBinaryFile(base + ".onnx");
        const std::vector<OwnedTensor> inputs = LoadModelInputs(base);
        InputTensors bound;
        for (std::size_t i = 0; i < inputs.size(); ++i) bound.emplace_back(parser->GetInputs().at(i).m_BindingId, inputs[i].AsConstTensor());
        CompareOptions options;
        options.m_Backends = {variant.m_Backend, "CpuRef"};
        options.m_BackendOptions = VariantOptions(variant).m_BackendOptions;
        const CompareResult r = CompareBackends(*net, bound, options);
        if (r.m_FirstDivergence < 0) return "trellis compare finds no tensor beyond its tolerance";
        return "first divergence from CpuRef:\n" +
               DescribeTensorComparison(r.m_Tensors[static_cast<std::size_t>(r.m_FirstDivergence)], "  ");
    } catch (const std::exception& e) {
        return std::string("compare failed: ") + e.what();
    }
}

using Param = std::tuple<std::string, BackendVariant>;

class DifferentialModel : public ::testing::TestWithParam<Param> {};
// Without any backend but CpuRef there are no variants, hence no instances.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(DifferentialModel);

TEST_P(DifferentialModel, MatchesPyTorch) {
    const auto& [model, variant] = GetParam();
    if (std::string why; !BackendRegistryInstance().IsBackendAvailable(variant.m_Backend, &why)) {
        GTEST_SKIP() << variant.m_Backend << " is not available here: " << why;
    }
    const std::string base = std::string(TRELLIS_TEST_MODELS_DIR) + "/" + model;
    double err = -1;
    std::map<BackendId, unsigned int> counts;
    ModelErrorVsPyTorch(base, {variant.m_Backend, "CpuRef"}, &err, &counts, VariantOptions(variant));
    if (HasFatalFailure()) return;
    std::cout << model << " on " << variant.m_Label << ": relative L2 error vs PyTorch " << err << "; layers:";
    for (const auto& [b, c] : counts) std::cout << " " << b << "=" << c;
    std::cout << "\n";
    EXPECT_LT(err, 1e-4) << model << " on " << variant.m_Label << ": relative L2 error vs PyTorch\n"
                         << FirstDivergence(base, variant);
    EXPECT_GT(counts[variant.m_Backend], 0u) << variant.m_Label << " ran no layer of " << model;
}

INSTANTIATE_TEST_SUITE_P(Models, DifferentialModel, ::testing::Combine(::testing::ValuesIn(ExportedModels()), ::testing::ValuesIn(Variants())),
                         [](const ::testing::TestParamInfo<Param>& info) {
                             return std::get<0>(info.param) + "_on_" + std::get<1>(info.param).m_Label;
                         });

}  // namespace
