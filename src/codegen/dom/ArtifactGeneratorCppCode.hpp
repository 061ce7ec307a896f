// Code generator: the code printer (the seed's ArtifactGeneratorCppCode). Walks a DOM and prints
// the artifact's implementation file: the header's include, the source includes, the source
// entities (namespaces with their snippets, classes and functions) in order, the definitions of
// source-placed nested classes, then the definitions of every member function of the header's
// classes. Knows nothing of targets.
#pragma once

#include "ArtifactGeneratorCppBase.hpp"

namespace trellis::codegen {

class ArtifactGeneratorCppCode final : public ArtifactGeneratorCppBase {
public:
    using ArtifactGeneratorCppBase::ArtifactGeneratorCppBase;
    using ArtifactGeneratorCppBase::Visit;

    void Visit(const ArtifactRet& node) override;
    void Visit(const ArtifactVariable& node) override;
    void Visit(const ArtifactBlock& node) override;
    void Visit(const ArtifactForLoop& node) override;
    void Visit(const ArtifactIf& node) override;
    void Visit(const ArtifactTryCatch& node) override;
    void Visit(const ArtifactSnippet& node) override;
    void Visit(const ArtifactFunction& node) override;
    void Visit(const ArtifactClassVariable& node) override;
    void Visit(const ArtifactClassFunction& node) override;
    void Visit(const ArtifactClass& node) override;
    void Visit(const ArtifactNamespace& node) override;
    void Visit(const ArtifactModule& node) override;

private:
    /// The statements of `block` at the current indentation (without braces).
    void PrintStatements(const ArtifactBlock& block);
    /// `{`, the statements one level deeper, `}` (no newline after the brace); `{}` when empty.
    void PrintBody(const ArtifactBlock& block);
    /// A class's full definition, member functions defined inside it (source-placed classes).
    void PrintClassDefinition(const ArtifactClass& node, const std::string& name);
    /// Out-of-line definitions of the member functions of a header-placed class (and its nested
    /// header-placed classes); source-placed nested classes are defined first.
    void PrintMemberDefinitions(const ArtifactClass& node);

    /// `type` as written before `Owner::function` outside the class (nested class names qualified).
    static std::string QualifyType(const std::string& type, const ArtifactClass& owner);

    bool m_InClassBody = false;  ///< member functions are being printed inside their class
};

}  // namespace trellis::codegen
