// docs/backend-guide.md quotes the out-of-tree example backend: every C++ excerpt in its section
// "4. The minimal backend" must appear verbatim (up to indentation) in
// examples/out-of-tree-backend/ExampleAccBackend.cpp, so the guide cannot drift from the code
// the install test builds and runs.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::string ReadFile(const std::string& path) {
    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

/// Each line with its leading and trailing blanks removed, joined by '\n'.
std::string Normalize(const std::string& text) {
    std::istringstream in(text);
    std::string line, out;
    while (std::getline(in, line)) {
        const auto first = line.find_first_not_of(" \t");
        const auto last = line.find_last_not_of(" \t\r");
        out += (first == std::string::npos ? std::string() : line.substr(first, last - first + 1)) + "\n";
    }
    return out;
}

/// The ```cpp blocks between the heading `section` and the next "## " heading.
std::vector<std::string> CppBlocks(const std::string& doc, const std::string& section) {
    std::vector<std::string> blocks;
    std::size_t pos = doc.find("\n" + section + "\n");
    if (pos == std::string::npos) return blocks;
    const std::size_t end = doc.find("\n## ", pos + 1);
    while (true) {
        const std::size_t open = doc.find("```cpp\n", pos);
        if (open == std::string::npos || open > end) break;
        const std::size_t body = open + 7;
        const std::size_t close = doc.find("```", body);
        if (close == std::string::npos) break;
        blocks.push_back(doc.substr(body, close - body));
        pos = close + 3;
    }
    return blocks;
}

}  // namespace

TEST(BackendGuideDoc, MinimalBackendExcerptsAreTheExampleCode) {
    const std::string doc = ReadFile(std::string(TRELLIS_SOURCE_DIR) + "/docs/backend-guide.md");
    const std::string code = ReadFile(std::string(TRELLIS_SOURCE_DIR) + "/examples/out-of-tree-backend/ExampleAccBackend.cpp");
    ASSERT_FALSE(doc.empty()) << "docs/backend-guide.md missing";
    ASSERT_FALSE(code.empty()) << "examples/out-of-tree-backend/ExampleAccBackend.cpp missing";
    const std::vector<std::string> blocks = CppBlocks(doc, "## 4. The minimal backend");
    ASSERT_GE(blocks.size(), 6u) << "expected the backend, id, layer support, factory, workload and macro excerpts";
    const std::string normalizedCode = Normalize(code);
    for (const std::string& block : blocks) {
        EXPECT_NE(normalizedCode.find(Normalize(block)), std::string::npos)
            << "docs/backend-guide.md section 4 quotes code that is not in ExampleAccBackend.cpp:\n" << block;
    }
}
