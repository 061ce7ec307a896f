// Every per-op case (tests/ops/cases_*.py: one-node ONNX models with numpy-computed expectations)
// on every registered backend, and on each variant of a backend's kernel-choosing options
// (BackendVariants(): CpuAcc with ConvLayout=auto, Winograd=off, ...). CpuRef must support and
// pass every case; another backend that declines a case's layer is skipped for it, with the
// reason printed.
#include "TestHelpers.hpp"

#include <trellis/backends/BackendRegistry.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>

namespace fs = std::filesystem;
using namespace trellis;
using namespace trellis::test;

namespace {

/// The generated cases: TRELLIS_OP_CASES_DIR from the environment where set (a GPU machine runs a
/// build made elsewhere, with the cases generated there), else the build's own.
fs::path CasesRoot() {
    const char* env = std::getenv("TRELLIS_OP_CASES_DIR");
    return env && *env ? fs::path(env) : fs::path(TRELLIS_OP_CASES_DIR);
}

std::vector<fs::path> CaseDirs() {
    std::vector<fs::path> dirs;
    for (const auto& e : fs::directory_iterator(CasesRoot())) {
        if (fs::exists(e.path() / "model.onnx")) dirs.push_back(e.path());
    }
    std::sort(dirs.begin(), dirs.end());
    return dirs;
}

std::vector<OwnedTensor> LoadSet(const fs::path& dir, const char* prefix) {
    std::vector<OwnedTensor> v;
    for (int i = 0;; ++i) {
        const fs::path p = dir / ("test_data_set_0/" + std::string(prefix) + "_" + std::to_string(i) + ".pb");
        if (!fs::exists(p)) break;
        v.push_back(LoadTensorFile(p.string()));
    }
    return v;
}

}  // namespace

TEST(OpCases, EveryCaseOnEveryBackend) {
    ASSERT_TRUE(fs::is_directory(CasesRoot())) << "run the generate_op_cases test first";
    const auto dirs = CaseDirs();
    ASSERT_GT(dirs.size(), 50u) << "too few op cases generated in " << CasesRoot();
    unsigned int passed = 0, skipped = 0;
    std::map<std::string, std::pair<unsigned int, unsigned int>> perVariant;  // (ran, skipped)
    for (const BackendVariant& variant : BackendVariants()) {
        const BackendId& backend = variant.m_Backend;
        for (const fs::path& dir : dirs) {
            const std::string name = dir.filename().string();
            try {
                LoadedModel m = LoadedModel::Load((dir / "model.onnx").string(), {backend}, {}, VariantOptions(variant));
                const auto outs = m.Run(LoadSet(dir, "input"));
                const auto want = LoadSet(dir, "output");
                ASSERT_EQ(outs.size(), want.size()) << name;
                for (std::size_t i = 0; i < want.size(); ++i) {
                    const std::string diff = Compare(outs[i], want[i], 1e-4, 1e-5);
                    EXPECT_EQ(diff, "") << name << " on " << variant.m_Label << ", output " << i;
                }
                ++passed;
                ++perVariant[variant.m_Label].first;
            } catch (const BackendUnavailableException& e) {
                if (backend == BackendId("CpuRef")) {
                    ADD_FAILURE() << name << ": CpuRef must support every op case: " << e.what();
                } else {
                    ++skipped;
                    ++perVariant[variant.m_Label].second;
                    if (variant.m_Options.empty()) std::cout << "[ skip ] " << name << " on " << backend << ": " << e.what() << "\n";
                }
            } catch (const std::exception& e) {
                ADD_FAILURE() << name << " on " << variant.m_Label << ": " << e.what();
            }
        }
    }
    std::cout << dirs.size() << " op cases; " << passed << " runs passed or compared, " << skipped << " skipped\n";
    for (const auto& [label, counts] : perVariant) {
        std::cout << "  " << label << ": " << counts.first << " ran (failures reported above), " << counts.second
                  << " declined\n";
    }
}
