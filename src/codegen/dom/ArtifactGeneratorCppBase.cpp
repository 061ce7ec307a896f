#include "ArtifactGeneratorCppBase.hpp"

#include <sstream>

namespace trellis::codegen {

namespace {

// C++ precedence, higher binds tighter.
constexpr int kAssignPrecedence = 2;
constexpr int kPrefixPrecedence = 15;
constexpr int kPostfixPrecedence = 16;

int Precedence(ArtifactBinOp op) {
    switch (op) {
        case ArtifactBinOp::Mult:
        case ArtifactBinOp::Div:
        case ArtifactBinOp::Mod: return 13;
        case ArtifactBinOp::Plus:
        case ArtifactBinOp::Minus: return 12;
        case ArtifactBinOp::Less:
        case ArtifactBinOp::LessOrEq:
        case ArtifactBinOp::Greater:
        case ArtifactBinOp::GreaterOrEq: return 10;
        case ArtifactBinOp::Eq:
        case ArtifactBinOp::NotEq: return 9;
        case ArtifactBinOp::LogicalAnd: return 5;
        case ArtifactBinOp::LogicalOr: return 4;
        case ArtifactBinOp::Assign:
        case ArtifactBinOp::PlusAssign:
        case ArtifactBinOp::MinusAssign:
        case ArtifactBinOp::MultAssign:
        case ArtifactBinOp::DivAssign: return kAssignPrecedence;
    }
    return 0;
}

const char* Spelling(ArtifactBinOp op) {
    switch (op) {
        case ArtifactBinOp::Mult: return "*";
        case ArtifactBinOp::Div: return "/";
        case ArtifactBinOp::Mod: return "%";
        case ArtifactBinOp::Plus: return "+";
        case ArtifactBinOp::Minus: return "-";
        case ArtifactBinOp::Less: return "<";
        case ArtifactBinOp::LessOrEq: return "<=";
        case ArtifactBinOp::Greater: return ">";
        case ArtifactBinOp::GreaterOrEq: return ">=";
        case ArtifactBinOp::Eq: return "==";
        case ArtifactBinOp::NotEq: return "!=";
        case ArtifactBinOp::LogicalAnd: return "&&";
        case ArtifactBinOp::LogicalOr: return "||";
        case ArtifactBinOp::Assign: return "=";
        case ArtifactBinOp::PlusAssign: return "+=";
        case ArtifactBinOp::MinusAssign: return "-=";
        case ArtifactBinOp::MultAssign: return "*=";
        case ArtifactBinOp::DivAssign: return "/=";
    }
    return "?";
}

}  // namespace

void ArtifactGeneratorCppBase::PrintIndent() {
    for (int i = 0; i < m_Indent; ++i) m_Out << ' ';
}

void ArtifactGeneratorCppBase::PrintIncludes(const std::vector<ArtifactInclude>& includes) {
    std::string open;
    for (const ArtifactInclude& i : includes) {
        if (i.m_Condition != open) {
            if (!open.empty()) m_Out << "#endif\n";
            if (!i.m_Condition.empty()) m_Out << "#if " << i.m_Condition << '\n';
            open = i.m_Condition;
        }
        m_Out << "#include " << (i.m_System ? "<" : "\"") << i.m_Name << (i.m_System ? ">" : "\"") << '\n';
    }
    if (!open.empty()) m_Out << "#endif\n";
}

void ArtifactGeneratorCppBase::PrintExpr(const ArtifactExpr& expr, int context) {
    const int saved = m_Context;
    m_Context = context;
    expr.Accept(*this);
    m_Context = saved;
}

void ArtifactGeneratorCppBase::Visit(const ArtifactId& node) { m_Out << node.GetId(); }

void ArtifactGeneratorCppBase::Visit(const ArtifactLiteral& node) {
    // A negative number is a unary minus: bracket it where a tighter operator applies to it.
    const bool negative = !node.GetText().empty() && node.GetText()[0] == '-';
    if (negative && m_Context >= kPrefixPrecedence) {
        m_Out << '(' << node.GetText() << ')';
    } else {
        m_Out << node.GetText();
    }
}

void ArtifactGeneratorCppBase::Visit(const ArtifactRef& node) {
    const bool parens = m_Context > kPrefixPrecedence;
    if (parens) m_Out << '(';
    m_Out << '&';
    PrintExpr(*node.GetObj(), kPrefixPrecedence);
    if (parens) m_Out << ')';
}

void ArtifactGeneratorCppBase::Visit(const ArtifactDeref& node) {
    const bool parens = m_Context > kPrefixPrecedence;
    if (parens) m_Out << '(';
    m_Out << '*';
    PrintExpr(*node.GetObj(), kPrefixPrecedence);
    if (parens) m_Out << ')';
}

void ArtifactGeneratorCppBase::Visit(const ArtifactFunctionCall& node) {
    if (node.GetCallee()) {
        PrintExpr(*node.GetCallee(), kPostfixPrecedence);
        switch (node.GetCallType()) {
            case ArtifactCallType::Object: m_Out << '.'; break;
            case ArtifactCallType::Pointer: m_Out << "->"; break;
            case ArtifactCallType::Scope: m_Out << "::"; break;
            case ArtifactCallType::Plain: break;
        }
    }
    m_Out << node.GetFuncName() << '(';
    bool first = true;
    for (const auto& p : node.GetParams()) {
        if (!first) m_Out << ", ";
        first = false;
        PrintExpr(*p, kAssignPrecedence);
    }
    m_Out << ')';
}

void ArtifactGeneratorCppBase::Visit(const ArtifactUnaryExpr& node) {
    const bool postfix = node.GetOp() == ArtifactUnOp::PostIncr || node.GetOp() == ArtifactUnOp::PostDecr;
    const int own = postfix ? kPostfixPrecedence : kPrefixPrecedence;
    const bool parens = m_Context > own;
    if (parens) m_Out << '(';
    switch (node.GetOp()) {
        case ArtifactUnOp::PreIncr: m_Out << "++"; break;
        case ArtifactUnOp::PreDecr: m_Out << "--"; break;
        case ArtifactUnOp::UnaryMinus: m_Out << '-'; break;
        case ArtifactUnOp::UnaryPlus: m_Out << '+'; break;
        case ArtifactUnOp::LogicalNot: m_Out << '!'; break;
        case ArtifactUnOp::BitwiseNot: m_Out << '~'; break;
        case ArtifactUnOp::PostIncr:
        case ArtifactUnOp::PostDecr: break;
    }
    PrintExpr(*node.GetExpr(), own);
    if (node.GetOp() == ArtifactUnOp::PostIncr) m_Out << "++";
    if (node.GetOp() == ArtifactUnOp::PostDecr) m_Out << "--";
    if (parens) m_Out << ')';
}

void ArtifactGeneratorCppBase::Visit(const ArtifactBinaryExpr& node) {
    const int own = Precedence(node.GetOp());
    const bool rightAssoc = own == kAssignPrecedence;
    const bool parens = m_Context > own;
    if (parens) m_Out << '(';
    PrintExpr(*node.GetLeft(), rightAssoc ? own + 1 : own);
    m_Out << ' ' << Spelling(node.GetOp()) << ' ';
    PrintExpr(*node.GetRight(), rightAssoc ? own : own + 1);
    if (parens) m_Out << ')';
}

void ArtifactGeneratorCppBase::Visit(const ArtifactIndex& node) {
    PrintExpr(*node.GetExpr(), kPostfixPrecedence);
    m_Out << '[';
    PrintExpr(*node.GetIndex(), 0);
    m_Out << ']';
}

void ArtifactGeneratorCppBase::Visit(const ArtifactBraceList& node) {
    m_Out << node.GetTypeName() << '{';
    bool first = true;
    for (const auto& e : node.GetElements()) {
        if (!first) m_Out << ", ";
        first = false;
        PrintExpr(*e, kAssignPrecedence);
    }
    m_Out << '}';
}

void ArtifactGeneratorCppBase::Visit(const ArtifactComment& node) {
    std::istringstream lines(node.GetText());
    std::string line;
    while (std::getline(lines, line)) {
        PrintIndent();
        m_Out << (line.empty() ? "//" : "// " + line) << '\n';
    }
}

void ArtifactGeneratorCppBase::PrintDoc(const std::string& doc) {
    if (doc.empty()) return;
    std::istringstream lines(doc);
    std::string line;
    while (std::getline(lines, line)) {
        PrintIndent();
        m_Out << (line.empty() ? "///" : "/// " + line) << '\n';
    }
}

void ArtifactGeneratorCppBase::PrintDeclaration(const ArtifactVariable& var, bool withInit) {
    m_Out << var.GetTypeName() << ' ' << var.GetName();
    for (const auto& d : var.GetDimensions()) {
        m_Out << '[';
        PrintExpr(*d, 0);
        m_Out << ']';
    }
    if (!withInit || var.GetInitializers().empty()) return;
    const auto& inits = var.GetInitializers();
    auto list = [&](char open, char close) {
        m_Out << open;
        for (std::size_t i = 0; i < inits.size(); ++i) {
            if (i > 0) m_Out << ", ";
            PrintExpr(*inits[i], kAssignPrecedence);
        }
        m_Out << close;
    };
    switch (var.GetInitStyle()) {
        case ArtifactInitStyle::Assign:
            m_Out << " = ";
            PrintExpr(*inits.front(), kAssignPrecedence);
            break;
        case ArtifactInitStyle::Paren: list('(', ')'); break;
        case ArtifactInitStyle::Brace:
            if (!var.GetDimensions().empty()) m_Out << " = ";
            list('{', '}');
            break;
    }
}

void ArtifactGeneratorCppBase::PrintParams(const ArtifactFunction& func, bool withDefaults) {
    m_Out << '(';
    bool first = true;
    for (const auto& p : func.GetParams()) {
        if (!first) m_Out << ", ";
        first = false;
        m_Out << p->GetTypeName() << ' ' << p->GetName();
        if (withDefaults && !p->GetInitializers().empty()) {
            m_Out << " = ";
            PrintExpr(*p->GetInitializers().front(), kAssignPrecedence);
        }
    }
    m_Out << ')';
}

}  // namespace trellis::codegen
