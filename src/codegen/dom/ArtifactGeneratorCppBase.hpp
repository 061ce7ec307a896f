// Code generator: what the two C++ printers share - indentation, expressions (with the
// parentheses C++'s precedence needs), variable declarations, comments. Both printers only walk the
// DOM; nothing here knows a target.
#pragma once

#include "ArtifactModel.hpp"

#include <ostream>
#include <string>

namespace trellis::codegen {

class ArtifactGeneratorCppBase : public IArtifactGenerator {
public:
    explicit ArtifactGeneratorCppBase(std::ostream& out) : m_Out(out) {}

    void Visit(const ArtifactId& node) override;
    void Visit(const ArtifactLiteral& node) override;
    void Visit(const ArtifactRef& node) override;
    void Visit(const ArtifactDeref& node) override;
    void Visit(const ArtifactFunctionCall& node) override;
    void Visit(const ArtifactUnaryExpr& node) override;
    void Visit(const ArtifactBinaryExpr& node) override;
    void Visit(const ArtifactIndex& node) override;
    void Visit(const ArtifactBraceList& node) override;
    void Visit(const ArtifactComment& node) override;

protected:
    /// Prints `expr` where the surrounding expression binds with `context` (0: a full expression).
    void PrintExpr(const ArtifactExpr& expr, int context = 0);
    /// `Type name[dims]` plus the initializers (`withInit`), without a trailing `;`.
    void PrintDeclaration(const ArtifactVariable& var, bool withInit);
    /// Function parameters: `(Type a, Type b = default)`; defaults only where `withDefaults`.
    void PrintParams(const ArtifactFunction& func, bool withDefaults);
    /// A documentation comment (`/// ` lines) at the current indentation.
    void PrintDoc(const std::string& doc);
    void PrintIndent();
    /// `#include` lines; consecutive includes under the same condition share one `#if`.
    void PrintIncludes(const std::vector<ArtifactInclude>& includes);
    void Indent() { m_Indent += 4; }
    void Outdent() { m_Indent -= 4; }

    std::ostream& m_Out;
    int m_Indent = 0;
    int m_Context = 0;  ///< precedence of the expression being printed into
};

}  // namespace trellis::codegen
