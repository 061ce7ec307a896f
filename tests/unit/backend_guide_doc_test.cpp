// docs/backend-guide.md quotes the out-of-tree example backend: every C++ excerpt in its section
// "4. The minimal backend" must appear verbatim (up to indentation) in
// examples/out-of-tree-backend/ExampleAccBackend.cpp, so the guide cannot drift from the code
// the install test builds and runs. Each excerpt opens with the includes and namespace it needs
// and closes its namespace: those lines must each be lines of the file, and every excerpt must
// show them.
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

/// An excerpt split into its frame (the #include, namespace and using lines before the code and
/// the namespace-closing lines after it, normalized; comment-only lines dropped) and the code.
struct Excerpt {
    std::vector<std::string> m_Frame;
    std::string m_Body;
    bool m_HasInclude = false;
};

Excerpt SplitExcerpt(const std::string& block) {
    std::vector<std::string> lines;
    std::istringstream in(Normalize(block));
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    const auto isFrame = [](const std::string& l) {
        return l.rfind("#include ", 0) == 0 || l.rfind("namespace ", 0) == 0 || l.rfind("using namespace ", 0) == 0;
    };
    Excerpt e;
    std::size_t first = 0, last = lines.size();
    for (; first < last; ++first) {
        const std::string& l = lines[first];
        if (l.empty() || l.rfind("//", 0) == 0) continue;
        if (!isFrame(l)) break;
        e.m_Frame.push_back(l);
        e.m_HasInclude |= l.rfind("#include ", 0) == 0;
    }
    for (; last > first; --last) {
        const std::string& l = lines[last - 1];
        if (l.empty()) continue;
        if (l.rfind("}  // namespace", 0) != 0) break;
        e.m_Frame.push_back(l);
    }
    for (std::size_t i = first; i < last; ++i) e.m_Body += lines[i] + "\n";
    return e;
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
        const Excerpt excerpt = SplitExcerpt(block);
        EXPECT_TRUE(excerpt.m_HasInclude) << "docs/backend-guide.md section 4: an excerpt without its #include:\n" << block;
        for (const std::string& line : excerpt.m_Frame) {
            EXPECT_NE(("\n" + normalizedCode).find("\n" + line + "\n"), std::string::npos)
                << "docs/backend-guide.md section 4: '" << line << "' is not a line of ExampleAccBackend.cpp";
        }
        EXPECT_NE(normalizedCode.find(Normalize(excerpt.m_Body)), std::string::npos)
            << "docs/backend-guide.md section 4 quotes code that is not in ExampleAccBackend.cpp:\n" << excerpt.m_Body;
    }
}
