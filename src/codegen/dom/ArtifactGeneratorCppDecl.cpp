#include "ArtifactGeneratorCppDecl.hpp"

#include <cctype>

namespace trellis::codegen {

// Statements and implementation-file entities have no part in a header.
void ArtifactGeneratorCppDecl::Visit(const ArtifactRet&) {}
void ArtifactGeneratorCppDecl::Visit(const ArtifactBlock&) {}
void ArtifactGeneratorCppDecl::Visit(const ArtifactForLoop&) {}
void ArtifactGeneratorCppDecl::Visit(const ArtifactIf&) {}
void ArtifactGeneratorCppDecl::Visit(const ArtifactTryCatch&) {}
void ArtifactGeneratorCppDecl::Visit(const ArtifactSnippet&) {}
void ArtifactGeneratorCppDecl::Visit(const ArtifactNamespace&) {}
void ArtifactGeneratorCppDecl::Visit(const ArtifactFunction&) {}

void ArtifactGeneratorCppDecl::Visit(const ArtifactVariable& node) {
    PrintIndent();
    PrintDeclaration(node, true);
    m_Out << ";\n";
}

void ArtifactGeneratorCppDecl::Visit(const ArtifactClassVariable& node) {
    PrintDoc(node.GetDoc());
    node.GetVariable().Accept(*this);
}

void ArtifactGeneratorCppDecl::Visit(const ArtifactClassFunction& node) {
    const ArtifactFunction& f = node.GetFunction();
    PrintDoc(f.GetDoc());
    PrintIndent();
    if (f.IsStatic()) m_Out << "static ";
    const bool special = f.GetRetTypeName().empty();  // constructor or destructor
    if (f.IsExplicit()) m_Out << "explicit ";
    if (!special) m_Out << f.GetRetTypeName() << ' ';
    m_Out << f.GetName();
    PrintParams(f, true);
    if (f.IsConst()) m_Out << " const";
    if (node.IsDeleted()) m_Out << " = delete";
    m_Out << ";\n";
}

void ArtifactGeneratorCppDecl::Visit(const ArtifactClass& node) {
    if (node.GetPlacement() == ArtifactClassPlacement::Source) {
        // Defined in the implementation file: only named here.
        PrintIndent();
        m_Out << (node.IsStruct() ? "struct " : "class ") << node.GetName() << ";\n";
        return;
    }
    PrintDoc(node.GetDoc());
    PrintIndent();
    const bool isStruct = node.IsStruct();
    m_Out << (isStruct ? "struct " : "class ") << node.GetName() << " {\n";
    for (ArtifactVisibility vis : {ArtifactVisibility::Public, ArtifactVisibility::Private}) {
        bool any = false;
        const auto section = [&] {
            if (any) return;
            any = true;
            if (vis == ArtifactVisibility::Private && !isStruct) m_Out << '\n';
            if (!isStruct) {
                Outdent();  // labels at the class's own indentation
                PrintIndent();
                m_Out << (vis == ArtifactVisibility::Public ? "public:\n" : "private:\n");
                Indent();
            }
        };
        Indent();
        for (const auto& [v, c] : node.GetClasses()) {
            if (v != vis) continue;
            section();
            c->Accept(*this);
        }
        for (const auto& f : node.GetFunctions()) {
            if (f->GetVisibility() != vis) continue;
            section();
            f->Accept(*this);
        }
        for (const auto& v : node.GetVariables()) {
            if (v->GetVisibility() != vis) continue;
            section();
            v->Accept(*this);
        }
        Outdent();
    }
    PrintIndent();
    m_Out << "};\n";
}

void ArtifactGeneratorCppDecl::Visit(const ArtifactModule& node) {
    std::string guard = "TRELLIS_ARTIFACT_";
    for (char c : node.GetName()) guard += static_cast<char>(std::isalnum(static_cast<unsigned char>(c)) ? std::toupper(static_cast<unsigned char>(c)) : '_');
    guard += "_H";
    std::string doc = node.GetDoc();
    if (!doc.empty()) {
        ArtifactComment(doc).Accept(*this);
    }
    m_Out << "#ifndef " << guard << "\n#define " << guard << "\n";
    if (!node.GetHeaderIncludes().empty()) m_Out << '\n';
    PrintIncludes(node.GetHeaderIncludes());
    for (const auto& c : node.GetClasses()) {
        if (c->GetPlacement() != ArtifactClassPlacement::Header) continue;
        m_Out << '\n';
        c->Accept(*this);
    }
    m_Out << "\n#endif  // " << guard << '\n';
}

}  // namespace trellis::codegen
