// Code generator: the declaration printer (the seed's ArtifactGeneratorCppDecl). Walks a DOM and
// prints the artifact's header: an include guard, the header includes, and every header-placed
// class with its member declarations (nested source-placed classes are forward-declared). Knows
// nothing of targets.
#pragma once

#include "ArtifactGeneratorCppBase.hpp"

namespace trellis::codegen {

class ArtifactGeneratorCppDecl final : public ArtifactGeneratorCppBase {
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
};

}  // namespace trellis::codegen
