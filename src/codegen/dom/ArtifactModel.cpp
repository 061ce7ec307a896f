#include "ArtifactModel.hpp"

#include "ArtifactFactory.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

namespace trellis::codegen {

void ArtifactId::Accept(IArtifactGenerator& g) const { g.Visit(*this); }
void ArtifactLiteral::Accept(IArtifactGenerator& g) const { g.Visit(*this); }
void ArtifactRef::Accept(IArtifactGenerator& g) const { g.Visit(*this); }
void ArtifactDeref::Accept(IArtifactGenerator& g) const { g.Visit(*this); }
void ArtifactFunctionCall::Accept(IArtifactGenerator& g) const { g.Visit(*this); }
void ArtifactUnaryExpr::Accept(IArtifactGenerator& g) const { g.Visit(*this); }
void ArtifactBinaryExpr::Accept(IArtifactGenerator& g) const { g.Visit(*this); }
void ArtifactIndex::Accept(IArtifactGenerator& g) const { g.Visit(*this); }
void ArtifactBraceList::Accept(IArtifactGenerator& g) const { g.Visit(*this); }
void ArtifactRet::Accept(IArtifactGenerator& g) const { g.Visit(*this); }
void ArtifactComment::Accept(IArtifactGenerator& g) const { g.Visit(*this); }
void ArtifactVariable::Accept(IArtifactGenerator& g) const { g.Visit(*this); }
void ArtifactBlock::Accept(IArtifactGenerator& g) const { g.Visit(*this); }
void ArtifactForLoop::Accept(IArtifactGenerator& g) const { g.Visit(*this); }
void ArtifactIf::Accept(IArtifactGenerator& g) const { g.Visit(*this); }
void ArtifactTryCatch::Accept(IArtifactGenerator& g) const { g.Visit(*this); }
void ArtifactSnippet::Accept(IArtifactGenerator& g) const { g.Visit(*this); }
void ArtifactFunction::Accept(IArtifactGenerator& g) const { g.Visit(*this); }
void ArtifactClassVariable::Accept(IArtifactGenerator& g) const { g.Visit(*this); }
void ArtifactClassFunction::Accept(IArtifactGenerator& g) const { g.Visit(*this); }
void ArtifactClass::Accept(IArtifactGenerator& g) const { g.Visit(*this); }
void ArtifactNamespace::Accept(IArtifactGenerator& g) const { g.Visit(*this); }
void ArtifactModule::Accept(IArtifactGenerator& g) const { g.Visit(*this); }

// ---- blocks ---------------------------------------------------------------------------------------

ArtifactVariablePtr ArtifactBlock::AddVariable(const std::string& typeName, const std::string& name,
                                               std::vector<ArtifactExprPtr> dimensions,
                                               std::vector<ArtifactExprPtr> initializers, ArtifactInitStyle style) {
    auto v = ArtifactFactory::Var(typeName, name, std::move(dimensions), std::move(initializers), style);
    m_Statements.push_back(v);
    return v;
}

std::shared_ptr<ArtifactFunctionCall> ArtifactBlock::AddCall(const std::string& funcName,
                                                             std::vector<ArtifactExprPtr> params,
                                                             ArtifactExprPtr callee, ArtifactCallType callType) {
    auto c = ArtifactFactory::Call(funcName, std::move(params), std::move(callee), callType);
    m_Statements.push_back(c);
    return c;
}

void ArtifactBlock::AddAssign(ArtifactExprPtr left, ArtifactExprPtr right) {
    m_Statements.push_back(ArtifactFactory::Bin(ArtifactBinOp::Assign, std::move(left), std::move(right)));
}

void ArtifactBlock::AddComment(const std::string& text) { m_Statements.push_back(ArtifactFactory::Comment(text)); }

void ArtifactBlock::AddReturn(ArtifactExprPtr expr) { m_Statements.push_back(ArtifactFactory::Ret(std::move(expr))); }

std::shared_ptr<ArtifactForLoop> ArtifactBlock::AddForLoop(ArtifactVariablePtr init, ArtifactExprPtr cond,
                                                           ArtifactExprPtr iter) {
    auto loop = std::make_shared<ArtifactForLoop>(std::move(init), std::move(cond), std::move(iter));
    m_Statements.push_back(loop);
    return loop;
}

std::shared_ptr<ArtifactIf> ArtifactBlock::AddIf(ArtifactExprPtr cond) {
    auto branch = std::make_shared<ArtifactIf>(std::move(cond));
    m_Statements.push_back(branch);
    return branch;
}

std::shared_ptr<ArtifactTryCatch> ArtifactBlock::AddTryCatch(const std::string& exceptionType, const std::string& name) {
    auto t = std::make_shared<ArtifactTryCatch>(exceptionType, name);
    m_Statements.push_back(t);
    return t;
}

std::shared_ptr<ArtifactBlock> ArtifactBlock::AddBlock() {
    auto block = std::make_shared<ArtifactBlock>();
    m_Statements.push_back(block);
    return block;
}

// ---- classes and modules --------------------------------------------------------------------------

std::string ArtifactClass::GetQualifiedName() const {
    return m_Outer ? m_Outer->GetQualifiedName() + "::" + GetName() : GetName();
}

bool ArtifactClass::IsStruct() const {
    const auto isPublic = [](const auto& m) { return m->GetVisibility() == ArtifactVisibility::Public; };
    return std::all_of(m_Variables.begin(), m_Variables.end(), isPublic) &&
           std::all_of(m_Functions.begin(), m_Functions.end(), isPublic) &&
           std::all_of(m_Classes.begin(), m_Classes.end(),
                       [](const auto& c) { return c.first == ArtifactVisibility::Public; });
}

std::shared_ptr<ArtifactClassVariable> ArtifactClass::AddVariable(ArtifactVisibility visibility,
                                                                  const std::string& typeName, const std::string& name,
                                                                  std::vector<ArtifactExprPtr> initializers,
                                                                  std::vector<ArtifactExprPtr> dimensions,
                                                                  ArtifactInitStyle style) {
    auto v = std::make_shared<ArtifactClassVariable>(
        this, visibility, ArtifactFactory::Var(typeName, name, std::move(dimensions), std::move(initializers), style));
    m_Variables.push_back(v);
    return v;
}

std::shared_ptr<ArtifactClassFunction> ArtifactClass::AddFunction(ArtifactVisibility visibility,
                                                                  const std::string& retTypeName,
                                                                  const std::string& name,
                                                                  std::vector<ArtifactVariablePtr> params) {
    auto f = std::make_shared<ArtifactClassFunction>(this, visibility,
                                                     ArtifactFactory::Func(retTypeName, name, std::move(params)));
    m_Functions.push_back(f);
    return f;
}

std::shared_ptr<ArtifactClassFunction> ArtifactClass::AddConstructor(ArtifactVisibility visibility,
                                                                     std::vector<ArtifactVariablePtr> params) {
    return AddFunction(visibility, "", GetName(), std::move(params));
}

std::shared_ptr<ArtifactClassFunction> ArtifactClass::AddDestructor() {
    return AddFunction(ArtifactVisibility::Public, "", "~" + GetName());
}

std::shared_ptr<ArtifactClass> ArtifactClass::AddClass(ArtifactVisibility visibility, const std::string& name,
                                                       ArtifactClassPlacement placement) {
    auto c = std::make_shared<ArtifactClass>(name, placement);
    c->m_Outer = this;
    m_Classes.emplace_back(visibility, c);
    return c;
}

namespace {
void AddUnique(std::vector<ArtifactInclude>& list, const std::string& name, bool system, const std::string& condition) {
    for (const ArtifactInclude& i : list) {
        if (i.m_Name == name && i.m_System == system && i.m_Condition == condition) return;
    }
    list.push_back({name, system, condition});
}
}  // namespace

void ArtifactModule::AddHeaderInclude(const std::string& name, bool system) { AddUnique(m_HeaderIncludes, name, system, ""); }
void ArtifactModule::AddSourceInclude(const std::string& name, bool system, const std::string& condition) {
    AddUnique(m_SourceIncludes, name, system, condition);
}

ArtifactClassPtr ArtifactModule::AddClass(const std::string& name, ArtifactClassPlacement placement) {
    auto c = std::make_shared<ArtifactClass>(name, placement);
    m_Classes.push_back(c);
    return c;
}

// ---- factory literals -----------------------------------------------------------------------------

std::shared_ptr<ArtifactLiteral> ArtifactFactory::Int(int64_t value) {
    // The most negative value has no positive literal: write it as an expression.
    if (value == std::numeric_limits<int64_t>::min()) return Lit("(-9223372036854775807LL - 1)");
    std::string text = std::to_string(value);
    if (value > std::numeric_limits<int32_t>::max() || value < std::numeric_limits<int32_t>::min()) text += "LL";
    return Lit(text);
}

std::shared_ptr<ArtifactLiteral> ArtifactFactory::Size(uint64_t value) { return Lit(std::to_string(value) + "u"); }

namespace {
/// The shortest text that reads back as exactly `value` (std::to_chars round trip), with a
/// decimal point or exponent so that it is a floating literal.
template <typename T>
std::string ExactFloatText(T value) {
    char buffer[64];
    const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
    std::string text(buffer, result.ptr);
    if (text.find_first_of(".e") == std::string::npos) text += ".0";
    return text;
}
}  // namespace

std::shared_ptr<ArtifactLiteral> ArtifactFactory::Float(float value) {
    if (std::isnan(value)) return Lit("std::numeric_limits<float>::quiet_NaN()");
    if (std::isinf(value)) return Lit(value > 0 ? "std::numeric_limits<float>::infinity()"
                                                : "-std::numeric_limits<float>::infinity()");
    return Lit(ExactFloatText(value) + "f");
}

std::shared_ptr<ArtifactLiteral> ArtifactFactory::Double(double value) {
    if (std::isnan(value)) return Lit("std::numeric_limits<double>::quiet_NaN()");
    if (std::isinf(value)) return Lit(value > 0 ? "std::numeric_limits<double>::infinity()"
                                                : "-std::numeric_limits<double>::infinity()");
    return Lit(ExactFloatText(value));
}

std::shared_ptr<ArtifactLiteral> ArtifactFactory::String(const std::string& value) {
    std::string text = "\"";
    for (unsigned char c : value) {
        switch (c) {
            case '"': text += "\\\""; break;
            case '\\': text += "\\\\"; break;
            case '\n': text += "\\n"; break;
            case '\t': text += "\\t"; break;
            default:
                if (c < 0x20 || c >= 0x7f) {
                    char esc[8];
                    std::snprintf(esc, sizeof(esc), "\\%03o", c);
                    text += esc;
                } else {
                    text += static_cast<char>(c);
                }
        }
    }
    return Lit(text + "\"");
}

std::shared_ptr<ArtifactBraceList> ArtifactFactory::IntList(const std::vector<int64_t>& values,
                                                            const std::string& typeName) {
    std::vector<ArtifactExprPtr> elements;
    for (int64_t v : values) elements.push_back(Int(v));
    return Braces(std::move(elements), typeName);
}

}  // namespace trellis::codegen
