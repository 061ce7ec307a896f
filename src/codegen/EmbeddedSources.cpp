#include "EmbeddedSources.hpp"

#include <trellis/Exceptions.hpp>

#include <sstream>

namespace trellis::codegen {

namespace {

std::string Trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\r");
    if (b == std::string::npos) return "";
    const auto e = s.find_last_not_of(" \t\r");
    return s.substr(b, e - b + 1);
}

}  // namespace

SnippetParts SplitSnippet(const std::string& name) {
    const EmbeddedSource* source = nullptr;
    for (const EmbeddedSource& s : GetEmbeddedSources()) {
        if (name == s.m_Name) source = &s;
    }
    if (!source) throw InvalidArgumentException("code generator: no embedded source '" + name + "'");
    const std::string folder = name.find('/') == std::string::npos ? "" : name.substr(0, name.rfind('/') + 1);
    SnippetParts parts;
    std::istringstream in(source->m_Text);
    std::string line;
    // Includes sit before the first declaration, possibly under one `#if` (platform headers); the
    // condition goes with them to the top of the generated file.
    std::string condition;
    bool inBody = false;
    while (std::getline(in, line)) {
        const std::string t = Trim(line);
        if (!inBody) {
            if (t == "#pragma once") continue;
            if (t.rfind("#include <", 0) == 0) {
                parts.m_SystemIncludes.emplace_back(t.substr(10, t.find('>') - 10), condition);
                continue;
            }
            if (t.rfind("#include \"", 0) == 0) {
                const auto close = t.find('"', 10);
                parts.m_Dependencies.push_back(folder + t.substr(10, close - 10));
                continue;
            }
            if (t.rfind("#if ", 0) == 0 && condition.empty()) {
                condition = Trim(t.substr(4));
                continue;
            }
            if (t == "#endif" && !condition.empty()) {
                condition.clear();
                continue;
            }
            // Leading comment lines (the file's header comment) and blank lines stay out: the
            // generated file names the snippet instead.
            if (t.empty() || t.rfind("//", 0) == 0) continue;
            inBody = true;
        }
        parts.m_Body += line + "\n";
    }
    return parts;
}

}  // namespace trellis::codegen
