// Code generator: the factory of DOM building blocks (the seed's ArtifactFactory). Stateless;
// every method returns a new entity.
#pragma once

#include "ArtifactModel.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace trellis::codegen {

class ArtifactFactory {
public:
    static std::shared_ptr<ArtifactId> Id(const std::string& name) { return std::make_shared<ArtifactId>(name); }
    /// A literal from its source text.
    static std::shared_ptr<ArtifactLiteral> Lit(const std::string& text) {
        return std::make_shared<ArtifactLiteral>(text);
    }
    /// Integer, size, float, bool and string literals, as C++ source text ("1.5f", "\"x\"").
    static std::shared_ptr<ArtifactLiteral> Int(int64_t value);
    static std::shared_ptr<ArtifactLiteral> Size(uint64_t value);
    static std::shared_ptr<ArtifactLiteral> Float(float value);
    static std::shared_ptr<ArtifactLiteral> Double(double value);
    static std::shared_ptr<ArtifactLiteral> Bool(bool value) { return Lit(value ? "true" : "false"); }
    static std::shared_ptr<ArtifactLiteral> String(const std::string& value);

    static std::shared_ptr<ArtifactRef> Ref(ArtifactExprPtr obj) { return std::make_shared<ArtifactRef>(std::move(obj)); }
    static std::shared_ptr<ArtifactDeref> Deref(ArtifactExprPtr obj) {
        return std::make_shared<ArtifactDeref>(std::move(obj));
    }
    static std::shared_ptr<ArtifactFunctionCall> Call(const std::string& funcName, std::vector<ArtifactExprPtr> params,
                                                      ArtifactExprPtr callee = nullptr,
                                                      ArtifactCallType callType = ArtifactCallType::Plain) {
        return std::make_shared<ArtifactFunctionCall>(funcName, std::move(params), std::move(callee), callType);
    }
    static std::shared_ptr<ArtifactUnaryExpr> Un(ArtifactUnOp op, ArtifactExprPtr expr) {
        return std::make_shared<ArtifactUnaryExpr>(op, std::move(expr));
    }
    static std::shared_ptr<ArtifactBinaryExpr> Bin(ArtifactBinOp op, ArtifactExprPtr left, ArtifactExprPtr right) {
        return std::make_shared<ArtifactBinaryExpr>(op, std::move(left), std::move(right));
    }
    static std::shared_ptr<ArtifactIndex> Index(ArtifactExprPtr expr, ArtifactExprPtr index) {
        return std::make_shared<ArtifactIndex>(std::move(expr), std::move(index));
    }
    static std::shared_ptr<ArtifactBraceList> Braces(std::vector<ArtifactExprPtr> elements,
                                                     const std::string& typeName = "") {
        return std::make_shared<ArtifactBraceList>(typeName, std::move(elements));
    }
    /// A braced list of integer literals.
    static std::shared_ptr<ArtifactBraceList> IntList(const std::vector<int64_t>& values, const std::string& typeName = "");
    static std::shared_ptr<ArtifactRet> Ret(ArtifactExprPtr expr) { return std::make_shared<ArtifactRet>(std::move(expr)); }
    static ArtifactVariablePtr Var(const std::string& typeName, const std::string& name,
                                   std::vector<ArtifactExprPtr> dimensions = {},
                                   std::vector<ArtifactExprPtr> initializers = {},
                                   ArtifactInitStyle style = ArtifactInitStyle::Assign) {
        return std::make_shared<ArtifactVariable>(typeName, name, std::move(dimensions), std::move(initializers), style);
    }
    static ArtifactBlockPtr Block() { return std::make_shared<ArtifactBlock>(); }
    static ArtifactFunctionPtr Func(const std::string& retTypeName, const std::string& name,
                                    std::vector<ArtifactVariablePtr> params = {}) {
        return std::make_shared<ArtifactFunction>(retTypeName, name, std::move(params));
    }
    static std::shared_ptr<ArtifactSnippet> Snippet(const std::string& title, const std::string& text) {
        return std::make_shared<ArtifactSnippet>(title, text);
    }
    static std::shared_ptr<ArtifactComment> Comment(const std::string& text) {
        return std::make_shared<ArtifactComment>(text);
    }
    static std::shared_ptr<ArtifactNamespace> Namespace(const std::string& name) {
        return std::make_shared<ArtifactNamespace>(name);
    }
    static ArtifactModulePtr Module(const std::string& name) { return std::make_shared<ArtifactModule>(name); }
};

}  // namespace trellis::codegen
