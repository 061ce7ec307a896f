// Models exported by a current PyTorch (tests/models/export_torch211.py: a BERT-like encoder with
// scaled_dot_product_attention, a llama-style block with nn.RMSNorm, a small CNN, each at opset
// 20 and 23) on every backend variant, CpuRef behind it, against PyTorch's own output (relative
// L2 error below 1e-4). The files are made on a machine with PyTorch 2.11 (CI has Debian's 1.13)
// and kept in TRELLIS_TORCH_EXPORTS_DIR (default tests/models/torch211; the environment variable
// of that name overrides it). Without them the test skips, saying where it looked.
#include "TestHelpers.hpp"

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <set>

using namespace trellis;
using namespace trellis::test;

namespace {

std::string ExportsDir() {
    if (const char* env = std::getenv("TRELLIS_TORCH_EXPORTS_DIR")) return env;
    return std::string(TRELLIS_SOURCE_DIR) + "/tests/models/torch211";
}

/// "<dir>/<name>_op<N>" for every exported model file with its saved output.
std::vector<std::string> ExportedBases() {
    std::set<std::string> bases;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(ExportsDir(), ec)) {
        const std::filesystem::path p = e.path();
        if (p.extension() != ".onnx") continue;
        const std::string base = (p.parent_path() / p.stem()).string();
        if (std::filesystem::exists(base + ".output_0.pb")) bases.insert(base);
    }
    return {bases.begin(), bases.end()};
}

}  // namespace

TEST(TorchExportModels, EveryExportOnEveryBackendMatchesPyTorch) {
    const std::vector<std::string> bases = ExportedBases();
    if (bases.empty()) {
        GTEST_SKIP() << "no PyTorch 2.11 exports in " << ExportsDir()
                     << " (make them with tests/models/export_torch211.py where PyTorch 2.11 is installed, or set "
                        "TRELLIS_TORCH_EXPORTS_DIR)";
    }
    for (const std::string& base : bases) {
        for (const BackendVariant& variant : BackendVariants()) {
            SCOPED_TRACE(base + " on " + variant.m_Label);
            std::vector<BackendId> backends = {variant.m_Backend};
            if (variant.m_Backend != BackendId("CpuRef")) backends.push_back("CpuRef");
            double err = -1;
            std::map<BackendId, unsigned int> counts;
            ModelErrorVsPyTorch(base, backends, &err, &counts, VariantOptions(variant));
            if (HasFatalFailure()) return;
            std::cout << base << " on " << variant.m_Label << ": relative L2 error vs PyTorch " << err << "\n";
            EXPECT_LT(err, 1e-4);
        }
    }
}
