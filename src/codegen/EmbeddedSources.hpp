// Code generator: the source files it emits into artifacts (CpuRef's kernel snippets and the
// artifact support code in resources/), embedded into libtrellis at build time
// (cmake/EmbedSources.cmake), and the rules that turn one into DOM entities.
#pragma once

#include <string>
#include <vector>

namespace trellis::codegen {

struct EmbeddedSource {
    const char* m_Name;  ///< "kernels/Softmax.hpp", "resources/ParamsFile.hpp"
    const char* m_Text;
};

/// Every embedded file.
const std::vector<EmbeddedSource>& GetEmbeddedSources();

/// An embedded file split for emission: its system includes (each with the preprocessor condition
/// it sits under, "" for none), the embedded files it includes ("kernels/Broadcast.hpp", resolved
/// against its own folder), and its body (everything else, `#pragma once` dropped).
struct SnippetParts {
    std::vector<std::pair<std::string, std::string>> m_SystemIncludes;
    std::vector<std::string> m_Dependencies;
    std::string m_Body;
};

/// Splits embedded file `name`; throws InvalidArgumentException if there is none of that name.
SnippetParts SplitSnippet(const std::string& name);

}  // namespace trellis::codegen
