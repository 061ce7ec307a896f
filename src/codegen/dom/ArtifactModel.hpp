// Code generator: the DOM (document object model) of a generated program, after the seed's design
// (Samsung NNC's soft backend): an abstract description of a C++ program as a small set of
// entities - module, class, functions, blocks, variables, expressions - that an op generator builds
// from the network graph and two printers turn into text (ArtifactGeneratorCppDecl prints the
// header, ArtifactGeneratorCppCode the implementation). A new target builds different DOMs and
// never touches the printers.
//
// Ownership: entities are shared (std::shared_ptr), composed into a tree rooted at an
// ArtifactModule; nothing refers upwards except a class member's owner (a plain pointer, valid
// while the class lives). Build DOMs through ArtifactFactory and the Add*/Make* helpers of
// ArtifactBlock, ArtifactClass and ArtifactModule. Not thread-safe; a finished DOM is only read.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace trellis::codegen {

class IArtifactGenerator;

/// The base of every DOM entity.
class ArtifactEntity {
public:
    virtual ~ArtifactEntity() = default;
    /// Calls the visit method of `generator` for this entity's kind.
    virtual void Accept(IArtifactGenerator& generator) const = 0;
};
using ArtifactEntityPtr = std::shared_ptr<ArtifactEntity>;

/// An entity with a name: variables, functions, classes, namespaces, modules.
class ArtifactNamed : public ArtifactEntity {
public:
    explicit ArtifactNamed(std::string name) : m_Name(std::move(name)) {}
    const std::string& GetName() const { return m_Name; }
private:
    std::string m_Name;
};

// ---- expressions ----------------------------------------------------------------------------------

enum class ArtifactExprKind { Id, Literal, Ref, Deref, FunctionCall, UnaryExpr, BinaryExpr, Index, BraceList };

/// The base of expressions. An expression used as a statement of a block prints as `expr;`.
class ArtifactExpr : public ArtifactEntity {
public:
    virtual ArtifactExprKind GetExprKind() const = 0;
};
using ArtifactExprPtr = std::shared_ptr<ArtifactExpr>;

/// A reference to a named entity by its name (possibly qualified: "dnnl::memory", "tensor.data").
class ArtifactId final : public ArtifactExpr {
public:
    explicit ArtifactId(std::string id) : m_Id(std::move(id)) {}
    ArtifactExprKind GetExprKind() const override { return ArtifactExprKind::Id; }
    void Accept(IArtifactGenerator& g) const override;
    const std::string& GetId() const { return m_Id; }
private:
    std::string m_Id;
};

/// A literal, as C++ source text: "42", "0.5f", "\"Net.params\"", "nullptr", "true".
class ArtifactLiteral final : public ArtifactExpr {
public:
    explicit ArtifactLiteral(std::string text) : m_Text(std::move(text)) {}
    ArtifactExprKind GetExprKind() const override { return ArtifactExprKind::Literal; }
    void Accept(IArtifactGenerator& g) const override;
    const std::string& GetText() const { return m_Text; }
    /// For values known only once the DOM is built (a memory plan's offsets): set before printing.
    void SetText(std::string text) { m_Text = std::move(text); }
private:
    std::string m_Text;
};

/// `&obj`: the address of an expression.
class ArtifactRef final : public ArtifactExpr {
public:
    explicit ArtifactRef(ArtifactExprPtr obj) : m_Obj(std::move(obj)) {}
    ArtifactExprKind GetExprKind() const override { return ArtifactExprKind::Ref; }
    void Accept(IArtifactGenerator& g) const override;
    const ArtifactExprPtr& GetObj() const { return m_Obj; }
private:
    ArtifactExprPtr m_Obj;
};

/// `*obj`: a dereference.
class ArtifactDeref final : public ArtifactExpr {
public:
    explicit ArtifactDeref(ArtifactExprPtr obj) : m_Obj(std::move(obj)) {}
    ArtifactExprKind GetExprKind() const override { return ArtifactExprKind::Deref; }
    void Accept(IArtifactGenerator& g) const override;
    const ArtifactExprPtr& GetObj() const { return m_Obj; }
private:
    ArtifactExprPtr m_Obj;
};

/// How a function is reached: `f()`, `obj.f()`, `ptr->f()` or `Scope::f()`.
enum class ArtifactCallType { Plain, Object, Pointer, Scope };

/// A function call. The function name may carry template arguments ("Run<float>").
class ArtifactFunctionCall final : public ArtifactExpr {
public:
    ArtifactFunctionCall(std::string funcName, std::vector<ArtifactExprPtr> params, ArtifactExprPtr callee = nullptr,
                         ArtifactCallType callType = ArtifactCallType::Plain)
        : m_FuncName(std::move(funcName)), m_Params(std::move(params)), m_Callee(std::move(callee)),
          m_CallType(callType) {}
    ArtifactExprKind GetExprKind() const override { return ArtifactExprKind::FunctionCall; }
    void Accept(IArtifactGenerator& g) const override;
    const std::string& GetFuncName() const { return m_FuncName; }
    const std::vector<ArtifactExprPtr>& GetParams() const { return m_Params; }
    const ArtifactExprPtr& GetCallee() const { return m_Callee; }
    ArtifactCallType GetCallType() const { return m_CallType; }
private:
    std::string m_FuncName;
    std::vector<ArtifactExprPtr> m_Params;
    ArtifactExprPtr m_Callee;
    ArtifactCallType m_CallType;
};

enum class ArtifactUnOp { PreIncr, PreDecr, PostIncr, PostDecr, UnaryMinus, UnaryPlus, LogicalNot, BitwiseNot };

/// A unary operation.
class ArtifactUnaryExpr final : public ArtifactExpr {
public:
    ArtifactUnaryExpr(ArtifactUnOp op, ArtifactExprPtr expr) : m_Op(op), m_Expr(std::move(expr)) {}
    ArtifactExprKind GetExprKind() const override { return ArtifactExprKind::UnaryExpr; }
    void Accept(IArtifactGenerator& g) const override;
    ArtifactUnOp GetOp() const { return m_Op; }
    const ArtifactExprPtr& GetExpr() const { return m_Expr; }
private:
    ArtifactUnOp m_Op;
    ArtifactExprPtr m_Expr;
};

enum class ArtifactBinOp {
    Mult, Div, Mod, Plus, Minus, Less, LessOrEq, Greater, GreaterOrEq, Eq, NotEq, LogicalAnd, LogicalOr,
    Assign, PlusAssign, MinusAssign, MultAssign, DivAssign,
};

/// A binary operation. The printers add the parentheses C++'s precedence needs.
class ArtifactBinaryExpr final : public ArtifactExpr {
public:
    ArtifactBinaryExpr(ArtifactBinOp op, ArtifactExprPtr left, ArtifactExprPtr right)
        : m_Op(op), m_Left(std::move(left)), m_Right(std::move(right)) {}
    ArtifactExprKind GetExprKind() const override { return ArtifactExprKind::BinaryExpr; }
    void Accept(IArtifactGenerator& g) const override;
    ArtifactBinOp GetOp() const { return m_Op; }
    const ArtifactExprPtr& GetLeft() const { return m_Left; }
    const ArtifactExprPtr& GetRight() const { return m_Right; }
private:
    ArtifactBinOp m_Op;
    ArtifactExprPtr m_Left, m_Right;
};

/// `expr[index]`.
class ArtifactIndex final : public ArtifactExpr {
public:
    ArtifactIndex(ArtifactExprPtr expr, ArtifactExprPtr index) : m_Expr(std::move(expr)), m_Index(std::move(index)) {}
    ArtifactExprKind GetExprKind() const override { return ArtifactExprKind::Index; }
    void Accept(IArtifactGenerator& g) const override;
    const ArtifactExprPtr& GetExpr() const { return m_Expr; }
    const ArtifactExprPtr& GetIndex() const { return m_Index; }
private:
    ArtifactExprPtr m_Expr, m_Index;
};

/// A braced list `{a, b, c}` (aggregate and list initialization). With a type name,
/// `Type{a, b, c}`.
class ArtifactBraceList final : public ArtifactExpr {
public:
    ArtifactBraceList(std::string typeName, std::vector<ArtifactExprPtr> elements)
        : m_TypeName(std::move(typeName)), m_Elements(std::move(elements)) {}
    ArtifactExprKind GetExprKind() const override { return ArtifactExprKind::BraceList; }
    void Accept(IArtifactGenerator& g) const override;
    const std::string& GetTypeName() const { return m_TypeName; }
    const std::vector<ArtifactExprPtr>& GetElements() const { return m_Elements; }
private:
    std::string m_TypeName;
    std::vector<ArtifactExprPtr> m_Elements;
};

// ---- statements -----------------------------------------------------------------------------------

/// `return expr;` (or `return;` without an expression).
class ArtifactRet final : public ArtifactEntity {
public:
    explicit ArtifactRet(ArtifactExprPtr expr) : m_Expr(std::move(expr)) {}
    void Accept(IArtifactGenerator& g) const override;
    const ArtifactExprPtr& GetExpr() const { return m_Expr; }
private:
    ArtifactExprPtr m_Expr;
};

/// A comment; each line of the text becomes one `// ` line.
class ArtifactComment final : public ArtifactEntity {
public:
    explicit ArtifactComment(std::string text) : m_Text(std::move(text)) {}
    void Accept(IArtifactGenerator& g) const override;
    const std::string& GetText() const { return m_Text; }
private:
    std::string m_Text;
};

/// How a variable's initializers are written.
enum class ArtifactInitStyle {
    Assign,  ///< `T x = init;` (one initializer)
    Paren,   ///< `T x(a, b);`
    Brace,   ///< `T x{a, b};` (also `T x[N] = {a, b}` for arrays)
};

/// A variable: its type, name, array dimensions and initializers. As a statement of a block, a
/// declaration; as a class member, a data member; as a function parameter, a parameter.
class ArtifactVariable final : public ArtifactNamed {
public:
    ArtifactVariable(std::string typeName, std::string name, std::vector<ArtifactExprPtr> dimensions = {},
                     std::vector<ArtifactExprPtr> initializers = {}, ArtifactInitStyle style = ArtifactInitStyle::Assign)
        : ArtifactNamed(std::move(name)), m_TypeName(std::move(typeName)), m_Dimensions(std::move(dimensions)),
          m_Initializers(std::move(initializers)), m_InitStyle(style) {}
    void Accept(IArtifactGenerator& g) const override;
    const std::string& GetTypeName() const { return m_TypeName; }
    const std::vector<ArtifactExprPtr>& GetDimensions() const { return m_Dimensions; }
    const std::vector<ArtifactExprPtr>& GetInitializers() const { return m_Initializers; }
    ArtifactInitStyle GetInitStyle() const { return m_InitStyle; }
    /// An expression naming this variable.
    std::shared_ptr<ArtifactId> Use() const { return std::make_shared<ArtifactId>(GetName()); }
private:
    std::string m_TypeName;
    std::vector<ArtifactExprPtr> m_Dimensions;
    std::vector<ArtifactExprPtr> m_Initializers;
    ArtifactInitStyle m_InitStyle;
};
using ArtifactVariablePtr = std::shared_ptr<ArtifactVariable>;

class ArtifactForLoop;
class ArtifactIf;
class ArtifactTryCatch;

/// A block of statements. Printed with braces where it is a function body, a loop or branch body,
/// or a nested block.
class ArtifactBlock final : public ArtifactEntity {
public:
    void Accept(IArtifactGenerator& g) const override;
    const std::vector<ArtifactEntityPtr>& GetStatements() const { return m_Statements; }
    bool IsEmpty() const { return m_Statements.empty(); }

    /// Appends any statement (an expression, a declaration, a nested block, ...).
    void Add(ArtifactEntityPtr statement) { m_Statements.push_back(std::move(statement)); }
    /// Appends the statements of `other`.
    void Append(const ArtifactBlock& other) {
        m_Statements.insert(m_Statements.end(), other.m_Statements.begin(), other.m_Statements.end());
    }
    /// Appends a declaration and returns the variable.
    ArtifactVariablePtr AddVariable(const std::string& typeName, const std::string& name,
                                    std::vector<ArtifactExprPtr> dimensions = {},
                                    std::vector<ArtifactExprPtr> initializers = {},
                                    ArtifactInitStyle style = ArtifactInitStyle::Assign);
    /// Appends a call statement `name(params);` (or `callee.name(params);`) and returns it.
    std::shared_ptr<ArtifactFunctionCall> AddCall(const std::string& funcName, std::vector<ArtifactExprPtr> params,
                                                  ArtifactExprPtr callee = nullptr,
                                                  ArtifactCallType callType = ArtifactCallType::Plain);
    /// Appends `left = right;`.
    void AddAssign(ArtifactExprPtr left, ArtifactExprPtr right);
    void AddComment(const std::string& text);
    void AddReturn(ArtifactExprPtr expr);
    /// Appends `for (init; cond; iter) { ... }` and returns the loop (fill its body).
    std::shared_ptr<ArtifactForLoop> AddForLoop(ArtifactVariablePtr init, ArtifactExprPtr cond, ArtifactExprPtr iter);
    /// Appends `if (cond) { ... }` and returns it (fill its blocks).
    std::shared_ptr<ArtifactIf> AddIf(ArtifactExprPtr cond);
    /// Appends a nested `{ ... }` block and returns it.
    std::shared_ptr<ArtifactBlock> AddBlock();
    /// Appends `try { ... } catch (const type& name) { ... }` and returns it (fill its blocks).
    std::shared_ptr<ArtifactTryCatch> AddTryCatch(const std::string& exceptionType, const std::string& name);
private:
    std::vector<ArtifactEntityPtr> m_Statements;
};
using ArtifactBlockPtr = std::shared_ptr<ArtifactBlock>;

/// `for (init; cond; iter) body`.
class ArtifactForLoop final : public ArtifactEntity {
public:
    ArtifactForLoop(ArtifactVariablePtr init, ArtifactExprPtr cond, ArtifactExprPtr iter)
        : m_Init(std::move(init)), m_Cond(std::move(cond)), m_Iter(std::move(iter)),
          m_Body(std::make_shared<ArtifactBlock>()) {}
    void Accept(IArtifactGenerator& g) const override;
    const ArtifactVariablePtr& GetInit() const { return m_Init; }
    const ArtifactExprPtr& GetCond() const { return m_Cond; }
    const ArtifactExprPtr& GetIter() const { return m_Iter; }
    ArtifactBlock& GetBody() const { return *m_Body; }
private:
    ArtifactVariablePtr m_Init;
    ArtifactExprPtr m_Cond, m_Iter;
    ArtifactBlockPtr m_Body;
};

/// `if (cond) { ... } else { ... }` (the else part only when its block is not empty).
class ArtifactIf final : public ArtifactEntity {
public:
    explicit ArtifactIf(ArtifactExprPtr cond)
        : m_Cond(std::move(cond)), m_Block(std::make_shared<ArtifactBlock>()),
          m_ElseBlock(std::make_shared<ArtifactBlock>()) {}
    void Accept(IArtifactGenerator& g) const override;
    const ArtifactExprPtr& GetCond() const { return m_Cond; }
    ArtifactBlock& GetBlock() const { return *m_Block; }
    ArtifactBlock& GetElseBlock() const { return *m_ElseBlock; }
private:
    ArtifactExprPtr m_Cond;
    ArtifactBlockPtr m_Block, m_ElseBlock;
};

/// `try { ... } catch (const Type& name) { ... }`.
class ArtifactTryCatch final : public ArtifactEntity {
public:
    ArtifactTryCatch(std::string exceptionType, std::string name)
        : m_ExceptionType(std::move(exceptionType)), m_Name(std::move(name)), m_Try(std::make_shared<ArtifactBlock>()),
          m_Catch(std::make_shared<ArtifactBlock>()) {}
    void Accept(IArtifactGenerator& g) const override;
    /// The caught type ("dnnl::error"), taken by const reference, and the variable's name.
    const std::string& GetExceptionType() const { return m_ExceptionType; }
    const std::string& GetName() const { return m_Name; }
    ArtifactBlock& GetTryBlock() const { return *m_Try; }
    ArtifactBlock& GetCatchBlock() const { return *m_Catch; }
private:
    std::string m_ExceptionType, m_Name;
    ArtifactBlockPtr m_Try, m_Catch;
};

/// Source text copied verbatim into the implementation file (the kernel snippets a target emits,
/// support code). Printed as it is, at the scope it is placed in.
class ArtifactSnippet final : public ArtifactEntity {
public:
    ArtifactSnippet(std::string title, std::string text) : m_Title(std::move(title)), m_Text(std::move(text)) {}
    void Accept(IArtifactGenerator& g) const override;
    /// What the snippet is (printed as a comment before it).
    const std::string& GetTitle() const { return m_Title; }
    const std::string& GetText() const { return m_Text; }
private:
    std::string m_Title;
    std::string m_Text;
};

// ---- functions, classes, modules -----------------------------------------------------------------

/// A function: return type, parameters, body. A free function is printed (declaration and
/// definition) in the implementation file; a class's member function is declared in the header and
/// defined in the implementation file.
class ArtifactFunction : public ArtifactNamed {
public:
    ArtifactFunction(std::string retTypeName, std::string name, std::vector<ArtifactVariablePtr> params = {})
        : ArtifactNamed(std::move(name)), m_RetTypeName(std::move(retTypeName)), m_Params(std::move(params)),
          m_Block(std::make_shared<ArtifactBlock>()) {}
    void Accept(IArtifactGenerator& g) const override;
    const std::string& GetRetTypeName() const { return m_RetTypeName; }
    const std::vector<ArtifactVariablePtr>& GetParams() const { return m_Params; }
    ArtifactBlock& GetBlock() const { return *m_Block; }
    /// `const` member function.
    bool IsConst() const { return m_Const; }
    void SetConst(bool c) { m_Const = c; }
    /// A documentation comment printed above the declaration.
    const std::string& GetDoc() const { return m_Doc; }
    void SetDoc(std::string doc) { m_Doc = std::move(doc); }
    /// `static` (a free function with internal linkage, or a static member function).
    bool IsStatic() const { return m_Static; }
    void SetStatic(bool s) { m_Static = s; }
    /// An `explicit` constructor.
    bool IsExplicit() const { return m_Explicit; }
    void SetExplicit(bool e) { m_Explicit = e; }
    /// `extern "C"` linkage (a free function callable through dlsym).
    bool IsExternC() const { return m_ExternC; }
    void SetExternC(bool e) { m_ExternC = e; }
private:
    std::string m_RetTypeName;
    std::vector<ArtifactVariablePtr> m_Params;
    ArtifactBlockPtr m_Block;
    bool m_Const = false;
    bool m_Static = false;
    bool m_Explicit = false;
    bool m_ExternC = false;
    std::string m_Doc;
};
using ArtifactFunctionPtr = std::shared_ptr<ArtifactFunction>;

enum class ArtifactVisibility { Public, Private };

class ArtifactClass;

/// A member of a class, with its visibility. `GetOwner()` is the class it belongs to.
class ArtifactClassMember {
public:
    ArtifactClassMember(const ArtifactClass* owner, ArtifactVisibility visibility)
        : m_Owner(owner), m_Visibility(visibility) {}
    virtual ~ArtifactClassMember() = default;
    const ArtifactClass* GetOwner() const { return m_Owner; }
    ArtifactVisibility GetVisibility() const { return m_Visibility; }
private:
    const ArtifactClass* m_Owner;
    ArtifactVisibility m_Visibility;
};

/// A data member: its variable (type, name, default initializers) and a documentation comment.
class ArtifactClassVariable final : public ArtifactEntity, public ArtifactClassMember {
public:
    ArtifactClassVariable(const ArtifactClass* owner, ArtifactVisibility visibility, ArtifactVariablePtr variable)
        : ArtifactClassMember(owner, visibility), m_Variable(std::move(variable)) {}
    void Accept(IArtifactGenerator& g) const override;
    const ArtifactVariable& GetVariable() const { return *m_Variable; }
    const std::string& GetDoc() const { return m_Doc; }
    void SetDoc(std::string doc) { m_Doc = std::move(doc); }
private:
    ArtifactVariablePtr m_Variable;
    std::string m_Doc;
};

/// A member function (or, with an empty return type and the class's name, a constructor; with
/// "~Name", a destructor). A constructor may have member initializers: (member, arguments).
class ArtifactClassFunction final : public ArtifactEntity, public ArtifactClassMember {
public:
    ArtifactClassFunction(const ArtifactClass* owner, ArtifactVisibility visibility, ArtifactFunctionPtr function)
        : ArtifactClassMember(owner, visibility), m_Function(std::move(function)) {}
    void Accept(IArtifactGenerator& g) const override;
    ArtifactFunction& GetFunction() const { return *m_Function; }
    const std::vector<std::pair<std::string, std::vector<ArtifactExprPtr>>>& GetInitializers() const {
        return m_Initializers;
    }
    void AddInitializer(std::string member, std::vector<ArtifactExprPtr> args) {
        m_Initializers.emplace_back(std::move(member), std::move(args));
    }
    /// `= delete` (copy constructors and assignments of classes that own memory).
    bool IsDeleted() const { return m_Deleted; }
    void SetDeleted(bool d) { m_Deleted = d; }
private:
    ArtifactFunctionPtr m_Function;
    std::vector<std::pair<std::string, std::vector<ArtifactExprPtr>>> m_Initializers;
    bool m_Deleted = false;
};

/// Where a class's definition is printed.
enum class ArtifactClassPlacement {
    Header,  ///< defined in the header (the artifact class, public helper types)
    Source,  ///< declared in the header (a nested class) or not at all (a top-level one), defined in
             ///< the implementation file (implementation detail)
};

/// A class (printed as `class`, or `struct` when every member is public). Members keep the order
/// they were added in, within each visibility. Nested classes are printed before the members.
class ArtifactClass final : public ArtifactNamed {
public:
    explicit ArtifactClass(std::string name, ArtifactClassPlacement placement = ArtifactClassPlacement::Header)
        : ArtifactNamed(std::move(name)), m_Placement(placement) {}
    void Accept(IArtifactGenerator& g) const override;

    ArtifactClassPlacement GetPlacement() const { return m_Placement; }
    const std::string& GetDoc() const { return m_Doc; }
    void SetDoc(std::string doc) { m_Doc = std::move(doc); }
    /// The enclosing class of a nested class (nullptr at namespace scope).
    const ArtifactClass* GetOuter() const { return m_Outer; }
    /// "Outer::Name" for a nested class, else the name.
    std::string GetQualifiedName() const;
    bool IsStruct() const;

    std::shared_ptr<ArtifactClassVariable> AddVariable(ArtifactVisibility visibility, const std::string& typeName,
                                                       const std::string& name,
                                                       std::vector<ArtifactExprPtr> initializers = {},
                                                       std::vector<ArtifactExprPtr> dimensions = {},
                                                       ArtifactInitStyle style = ArtifactInitStyle::Brace);
    std::shared_ptr<ArtifactClassFunction> AddFunction(ArtifactVisibility visibility, const std::string& retTypeName,
                                                       const std::string& name,
                                                       std::vector<ArtifactVariablePtr> params = {});
    /// The constructor (a member function named after the class, no return type).
    std::shared_ptr<ArtifactClassFunction> AddConstructor(ArtifactVisibility visibility,
                                                          std::vector<ArtifactVariablePtr> params = {});
    std::shared_ptr<ArtifactClassFunction> AddDestructor();
    /// A nested class.
    std::shared_ptr<ArtifactClass> AddClass(ArtifactVisibility visibility, const std::string& name,
                                            ArtifactClassPlacement placement);

    const std::vector<std::shared_ptr<ArtifactClassVariable>>& GetVariables() const { return m_Variables; }
    const std::vector<std::shared_ptr<ArtifactClassFunction>>& GetFunctions() const { return m_Functions; }
    const std::vector<std::pair<ArtifactVisibility, std::shared_ptr<ArtifactClass>>>& GetClasses() const {
        return m_Classes;
    }
private:
    ArtifactClassPlacement m_Placement;
    std::string m_Doc;
    const ArtifactClass* m_Outer = nullptr;
    std::vector<std::shared_ptr<ArtifactClassVariable>> m_Variables;
    std::vector<std::shared_ptr<ArtifactClassFunction>> m_Functions;
    std::vector<std::pair<ArtifactVisibility, std::shared_ptr<ArtifactClass>>> m_Classes;
};
using ArtifactClassPtr = std::shared_ptr<ArtifactClass>;

/// A namespace of the implementation file holding entities (snippets, classes, functions,
/// variables); an empty name is the anonymous namespace.
class ArtifactNamespace final : public ArtifactNamed {
public:
    explicit ArtifactNamespace(std::string name) : ArtifactNamed(std::move(name)) {}
    void Accept(IArtifactGenerator& g) const override;
    void Add(ArtifactEntityPtr entity) { m_Entities.push_back(std::move(entity)); }
    const std::vector<ArtifactEntityPtr>& GetEntities() const { return m_Entities; }
private:
    std::vector<ArtifactEntityPtr> m_Entities;
};

/// An `#include` line: `<name>` (system) or `"name"`, under a preprocessor condition when
/// `m_Condition` is not empty (`#if m_Condition` ... `#endif`).
struct ArtifactInclude {
    std::string m_Name;
    bool m_System = true;
    std::string m_Condition;
};

/// A whole program module: the root of a DOM. The header holds its header-placed classes and their
/// includes; the implementation file includes the header, its own includes, then its source
/// entities (namespaces, snippets, source-placed classes, free functions, variables) in order, then
/// the definitions of the classes' member functions.
class ArtifactModule final : public ArtifactNamed {
public:
    explicit ArtifactModule(std::string name) : ArtifactNamed(std::move(name)) {}
    void Accept(IArtifactGenerator& g) const override;

    /// A comment printed at the top of both files.
    const std::string& GetDoc() const { return m_Doc; }
    void SetDoc(std::string doc) { m_Doc = std::move(doc); }
    /// `#include <name>` in the header (`system`) or `#include "name"`; duplicates are dropped.
    void AddHeaderInclude(const std::string& name, bool system = true);
    void AddSourceInclude(const std::string& name, bool system = true, const std::string& condition = "");
    const std::vector<ArtifactInclude>& GetHeaderIncludes() const { return m_HeaderIncludes; }
    const std::vector<ArtifactInclude>& GetSourceIncludes() const { return m_SourceIncludes; }
    /// The header the implementation file includes first: "<name>.h" unless set (a program's
    /// module includes the artifact's header).
    std::string GetHeaderName() const { return m_HeaderName.empty() ? GetName() + ".h" : m_HeaderName; }
    void SetHeaderName(std::string name) { m_HeaderName = std::move(name); }

    /// A class at namespace scope (placed in the header or the implementation file).
    ArtifactClassPtr AddClass(const std::string& name, ArtifactClassPlacement placement = ArtifactClassPlacement::Header);
    const std::vector<ArtifactClassPtr>& GetClasses() const { return m_Classes; }
    /// An entity of the implementation file, printed in the order added, before member functions.
    void AddSourceEntity(ArtifactEntityPtr entity) { m_SourceEntities.push_back(std::move(entity)); }
    const std::vector<ArtifactEntityPtr>& GetSourceEntities() const { return m_SourceEntities; }
private:
    std::string m_Doc;
    std::string m_HeaderName;
    std::vector<ArtifactInclude> m_HeaderIncludes, m_SourceIncludes;
    std::vector<ArtifactClassPtr> m_Classes;
    std::vector<ArtifactEntityPtr> m_SourceEntities;
};
using ArtifactModulePtr = std::shared_ptr<ArtifactModule>;

/// The visitor the printers implement: one method per entity kind.
class IArtifactGenerator {
public:
    virtual ~IArtifactGenerator() = default;
    virtual void Visit(const ArtifactId& node) = 0;
    virtual void Visit(const ArtifactLiteral& node) = 0;
    virtual void Visit(const ArtifactRef& node) = 0;
    virtual void Visit(const ArtifactDeref& node) = 0;
    virtual void Visit(const ArtifactFunctionCall& node) = 0;
    virtual void Visit(const ArtifactUnaryExpr& node) = 0;
    virtual void Visit(const ArtifactBinaryExpr& node) = 0;
    virtual void Visit(const ArtifactIndex& node) = 0;
    virtual void Visit(const ArtifactBraceList& node) = 0;
    virtual void Visit(const ArtifactRet& node) = 0;
    virtual void Visit(const ArtifactComment& node) = 0;
    virtual void Visit(const ArtifactVariable& node) = 0;
    virtual void Visit(const ArtifactBlock& node) = 0;
    virtual void Visit(const ArtifactForLoop& node) = 0;
    virtual void Visit(const ArtifactIf& node) = 0;
    virtual void Visit(const ArtifactTryCatch& node) = 0;
    virtual void Visit(const ArtifactSnippet& node) = 0;
    virtual void Visit(const ArtifactFunction& node) = 0;
    virtual void Visit(const ArtifactClassVariable& node) = 0;
    virtual void Visit(const ArtifactClassFunction& node) = 0;
    virtual void Visit(const ArtifactClass& node) = 0;
    virtual void Visit(const ArtifactNamespace& node) = 0;
    virtual void Visit(const ArtifactModule& node) = 0;
};

}  // namespace trellis::codegen
