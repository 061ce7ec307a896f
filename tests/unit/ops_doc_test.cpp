// docs/ops.md must list exactly the ONNX operators the importer converts.
#include <trellis/OnnxParser.hpp>

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>

TEST(OpsDoc, ListsExactlyTheImportedOperators) {
    std::ifstream f(std::string(TRELLIS_SOURCE_DIR) + "/docs/ops.md");
    ASSERT_TRUE(f) << "docs/ops.md missing";
    std::set<std::string> documented;
    const std::regex row(R"(^\| ([A-Za-z][A-Za-z0-9]*) \|)");
    std::string line;
    while (std::getline(f, line)) {
        std::smatch m;
        if (std::regex_search(line, m, row) && m[1] != "ONNX") documented.insert(m[1]);
    }
    const auto supported = trellis::IOnnxParser::GetSupportedOperators();
    const std::set<std::string> imported(supported.begin(), supported.end());
    for (const auto& op : imported) EXPECT_TRUE(documented.count(op)) << op << " is imported but not in docs/ops.md";
    for (const auto& op : documented) EXPECT_TRUE(imported.count(op)) << op << " is in docs/ops.md but not imported";
}
