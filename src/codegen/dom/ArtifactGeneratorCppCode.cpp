#include "ArtifactGeneratorCppCode.hpp"

#include <cctype>

namespace trellis::codegen {

std::string ArtifactGeneratorCppCode::QualifyType(const std::string& type, const ArtifactClass& owner) {
    // A return type written before `Owner::name` is looked up outside the class: a nested class
    // it starts with ("Tensor&", "const Tensor&") needs the owner's qualification.
    const std::string prefix = type.rfind("const ", 0) == 0 ? "const " : "";
    const std::string rest = type.substr(prefix.size());
    for (const auto& [vis, c] : owner.GetClasses()) {
        (void)vis;
        const std::string& n = c->GetName();
        if (rest.rfind(n, 0) == 0 && (rest.size() == n.size() || !(std::isalnum(static_cast<unsigned char>(rest[n.size()])) || rest[n.size()] == '_'))) {
            return prefix + owner.GetQualifiedName() + "::" + rest;
        }
    }
    return type;
}

void ArtifactGeneratorCppCode::PrintStatements(const ArtifactBlock& block) {
    for (const auto& s : block.GetStatements()) {
        if (const auto* expr = dynamic_cast<const ArtifactExpr*>(s.get())) {
            PrintIndent();
            PrintExpr(*expr, 0);
            m_Out << ";\n";
        } else {
            s->Accept(*this);
        }
    }
}

void ArtifactGeneratorCppCode::PrintBody(const ArtifactBlock& block) {
    if (block.IsEmpty()) {
        m_Out << "{}";
        return;
    }
    m_Out << "{\n";
    Indent();
    PrintStatements(block);
    Outdent();
    PrintIndent();
    m_Out << '}';
}

void ArtifactGeneratorCppCode::Visit(const ArtifactRet& node) {
    PrintIndent();
    m_Out << "return";
    if (node.GetExpr()) {
        m_Out << ' ';
        PrintExpr(*node.GetExpr(), 0);
    }
    m_Out << ";\n";
}

void ArtifactGeneratorCppCode::Visit(const ArtifactVariable& node) {
    PrintIndent();
    PrintDeclaration(node, true);
    m_Out << ";\n";
}

void ArtifactGeneratorCppCode::Visit(const ArtifactBlock& node) {
    PrintIndent();
    PrintBody(node);
    m_Out << '\n';
}

void ArtifactGeneratorCppCode::Visit(const ArtifactForLoop& node) {
    PrintIndent();
    m_Out << "for (";
    if (node.GetInit()) PrintDeclaration(*node.GetInit(), true);
    m_Out << "; ";
    if (node.GetCond()) PrintExpr(*node.GetCond(), 0);
    m_Out << "; ";
    if (node.GetIter()) PrintExpr(*node.GetIter(), 0);
    m_Out << ") ";
    PrintBody(node.GetBody());
    m_Out << '\n';
}

void ArtifactGeneratorCppCode::Visit(const ArtifactIf& node) {
    PrintIndent();
    m_Out << "if (";
    PrintExpr(*node.GetCond(), 0);
    m_Out << ") ";
    PrintBody(node.GetBlock());
    if (!node.GetElseBlock().IsEmpty()) {
        m_Out << " else ";
        PrintBody(node.GetElseBlock());
    }
    m_Out << '\n';
}

void ArtifactGeneratorCppCode::Visit(const ArtifactTryCatch& node) {
    PrintIndent();
    m_Out << "try ";
    PrintBody(node.GetTryBlock());
    m_Out << " catch (const " << node.GetExceptionType() << '&' << (node.GetName().empty() ? "" : " ") << node.GetName() << ") ";
    PrintBody(node.GetCatchBlock());
    m_Out << '\n';
}

void ArtifactGeneratorCppCode::Visit(const ArtifactSnippet& node) {
    if (!node.GetTitle().empty()) {
        PrintIndent();
        m_Out << "// ---- " << node.GetTitle() << " ----\n";
    }
    m_Out << node.GetText();
    if (!node.GetText().empty() && node.GetText().back() != '\n') m_Out << '\n';
}

void ArtifactGeneratorCppCode::Visit(const ArtifactFunction& node) {
    // A free function: its definition.
    PrintDoc(node.GetDoc());
    PrintIndent();
    if (node.IsExternC()) m_Out << "extern \"C\" ";
    if (node.IsStatic()) m_Out << "static ";
    m_Out << node.GetRetTypeName() << ' ' << node.GetName();
    PrintParams(node, true);
    m_Out << ' ';
    PrintBody(node.GetBlock());
    m_Out << '\n';
}

void ArtifactGeneratorCppCode::Visit(const ArtifactClassVariable& node) {
    PrintDoc(node.GetDoc());
    PrintIndent();
    PrintDeclaration(node.GetVariable(), true);
    m_Out << ";\n";
}

void ArtifactGeneratorCppCode::Visit(const ArtifactClassFunction& node) {
    const ArtifactFunction& f = node.GetFunction();
    const bool special = f.GetRetTypeName().empty();
    if (m_InClassBody) {
        // Inside a source-placed class: declaration and body together.
        PrintDoc(f.GetDoc());
        PrintIndent();
        if (f.IsStatic()) m_Out << "static ";
        if (f.IsExplicit()) m_Out << "explicit ";
        if (!special) m_Out << f.GetRetTypeName() << ' ';
        m_Out << f.GetName();
        PrintParams(f, true);
        if (f.IsConst()) m_Out << " const";
        if (node.IsDeleted()) {
            m_Out << " = delete;\n";
            return;
        }
    } else {
        if (node.IsDeleted()) return;  // declared `= delete` in the header: no definition
        PrintIndent();
        if (!special) m_Out << QualifyType(f.GetRetTypeName(), *node.GetOwner()) << ' ';
        m_Out << node.GetOwner()->GetQualifiedName() << "::" << f.GetName();
        PrintParams(f, false);
        if (f.IsConst()) m_Out << " const";
    }
    const auto& inits = node.GetInitializers();
    for (std::size_t i = 0; i < inits.size(); ++i) {
        m_Out << (i == 0 ? "\n" : ",\n");
        PrintIndent();
        m_Out << (i == 0 ? "    : " : "      ") << inits[i].first << '(';
        for (std::size_t a = 0; a < inits[i].second.size(); ++a) {
            if (a > 0) m_Out << ", ";
            PrintExpr(*inits[i].second[a], 2);
        }
        m_Out << ')';
    }
    m_Out << ' ';
    PrintBody(f.GetBlock());
    m_Out << '\n';
}

void ArtifactGeneratorCppCode::PrintClassDefinition(const ArtifactClass& node, const std::string& name) {
    PrintDoc(node.GetDoc());
    PrintIndent();
    const bool isStruct = node.IsStruct();
    m_Out << (isStruct ? "struct " : "class ") << name << " {\n";
    const bool saved = m_InClassBody;
    m_InClassBody = true;
    for (ArtifactVisibility vis : {ArtifactVisibility::Public, ArtifactVisibility::Private}) {
        bool any = false;
        const auto section = [&] {
            if (any) return;
            any = true;
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
            PrintClassDefinition(*c, c->GetName());
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
    m_InClassBody = saved;
    PrintIndent();
    m_Out << "};\n";
}

void ArtifactGeneratorCppCode::Visit(const ArtifactClass& node) {
    // A class among the source entities (at namespace scope): its full definition.
    PrintClassDefinition(node, node.GetName());
}

void ArtifactGeneratorCppCode::PrintMemberDefinitions(const ArtifactClass& node) {
    for (const auto& [vis, c] : node.GetClasses()) {
        (void)vis;
        if (c->GetPlacement() == ArtifactClassPlacement::Source) {
            m_Out << '\n';
            PrintClassDefinition(*c, c->GetQualifiedName());
        }
    }
    for (const auto& [vis, c] : node.GetClasses()) {
        (void)vis;
        if (c->GetPlacement() == ArtifactClassPlacement::Header) PrintMemberDefinitions(*c);
    }
    for (const auto& f : node.GetFunctions()) {
        if (f->IsDeleted()) continue;
        m_Out << '\n';
        f->Accept(*this);
    }
}

void ArtifactGeneratorCppCode::Visit(const ArtifactNamespace& node) {
    PrintIndent();
    m_Out << "namespace " << (node.GetName().empty() ? "" : node.GetName() + " ") << "{\n";
    for (const auto& e : node.GetEntities()) {
        m_Out << '\n';
        e->Accept(*this);
    }
    m_Out << "\n";
    PrintIndent();
    m_Out << "}  // namespace" << (node.GetName().empty() ? "" : " " + node.GetName()) << '\n';
}

void ArtifactGeneratorCppCode::Visit(const ArtifactModule& node) {
    if (!node.GetDoc().empty()) ArtifactComment(node.GetDoc()).Accept(*this);
    m_Out << "#include \"" << node.GetHeaderName() << "\"\n";
    if (!node.GetSourceIncludes().empty()) m_Out << '\n';
    PrintIncludes(node.GetSourceIncludes());
    for (const auto& e : node.GetSourceEntities()) {
        m_Out << '\n';
        e->Accept(*this);
    }
    for (const auto& c : node.GetClasses()) {
        if (c->GetPlacement() == ArtifactClassPlacement::Source) {
            m_Out << '\n';
            PrintClassDefinition(*c, c->GetName());
        } else {
            PrintMemberDefinitions(*c);
        }
    }
}

}  // namespace trellis::codegen
