// Code generator: the op generator (the seed's AclCppOpGenerator), which visits the graph and
// builds the artifact's DOM, writing the weights as a side effect. This base builds what every
// target's artifact has - the class, its Tensor type, constructor, destructor, Inference(), the
// accessors of the inputs and outputs, getInput()/getOutput() where there is one, the weights file
// reader - and hands each layer, in execution order, to the target (VisitLayer). The constructor
// has three parts in the seed's order: configure every layer, allocate (one arena, sized by a
// static memory plan), read the weights.
//
// Generated names: the class `<Name>`; its accessors `get_<tensor>()` (the tensor's name made an
// identifier, unique); members end in `_`; the implementation's private state is the
// source-placed struct `<Name>::Layers` (`l` inside member functions).
#pragma once

#include "ArtifactGraph.hpp"
#include "ArtifactMemoryPlan.hpp"
#include "ArtifactParams.hpp"
#include "dom/ArtifactFactory.hpp"

#include <trellis/Codegen.hpp>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace trellis::codegen {

class ArtifactOpGenerator {
public:
    ArtifactOpGenerator(const ArtifactGraph& graph, const ArtifactOptions& options, std::string target);
    virtual ~ArtifactOpGenerator() = default;

    /// Builds the DOM; afterwards GetParams() holds the weights written.
    ArtifactModulePtr Generate();
    /// The weights file (valid after Generate()).
    const std::vector<std::uint8_t>& GetParams() const { return m_ParamsFile; }
    std::uint64_t GetModelHash() const { return m_Params.GetHash(); }
    /// The artifact's interface (valid after Generate()).
    const std::vector<ArtifactBinding>& GetInputBindings() const { return m_InputBindings; }
    const std::vector<ArtifactBinding>& GetOutputBindings() const { return m_OutputBindings; }
    /// Files the target writes besides <Name>.h and <Name>.cpp (the cuda target's kernels file), by
    /// file name (valid after Generate()).
    const std::map<std::string, std::string>& GetExtraSources() const { return m_ExtraSources; }

    /// "float", "std::int64_t", ... for a data type; throws for one the artifact cannot hold.
    static std::string CppType(DataType type);
    /// "float32", "int64", ... as Tensor::type says.
    static std::string TypeName(DataType type);

protected:
    /// Called before the first layer: includes, members.
    virtual void Begin() {}
    /// Called for every compute layer, in execution order (`index` into the graph's layers).
    virtual void VisitLayer(const GraphLayer& layer, int index) = 0;
    /// Called after the last layer: the allocation and weight-reading parts of the constructor.
    virtual void Finish() = 0;

    using F = ArtifactFactory;

    const ArtifactGraph& m_Graph;
    const ArtifactOptions m_Options;
    const std::string m_TargetName;

    ArtifactModule& Module() { return *m_Module; }
    ArtifactClass& Class() { return *m_Class; }
    /// The source-placed `<Name>::Layers` struct: the configured layers, the arena, the weights.
    ArtifactClass& Layers() { return *m_Layers; }
    /// The anonymous namespace of the implementation file: snippets, constants, helpers.
    ArtifactNamespace& Detail() { return *m_Detail; }
    /// The constructor's three parts and Inference()'s body (each starts with `l`, the Layers).
    ArtifactBlock& Configure() { return *m_Configure; }
    ArtifactBlock& Allocate() { return *m_Allocate; }
    ArtifactBlock& ReadWeights() { return *m_ReadWeights; }
    ArtifactBlock& Inference() { return *m_Inference; }

    /// Emits embedded source `name` (a kernel snippet "kernels/Softmax.hpp" or a resource) into the
    /// anonymous namespace once, after the ones it includes; its system includes go to the top.
    void UseSnippet(const std::string& name);
    /// Adds a member of Layers and returns the expression `l.<name>`.
    ArtifactExprPtr AddLayerMember(const std::string& typeName, const std::string& name);
    /// A unique identifier made from `base` (letters, digits, underscores).
    std::string UniqueId(const std::string& base);
    /// Writes constant tensor `tensor` into the weights file once; returns its offset there.
    std::uint64_t WeightOffset(int tensor);
    /// `reinterpret_cast<TYPE>(l.params.Data() + OFFSET)`: a constant's data.
    ArtifactExprPtr WeightPointer(int tensor, const std::string& pointerType);
    /// `static_cast<TYPE>(<member>.data)`: the data of input or output `index`.
    ArtifactExprPtr InputPointer(int index, const std::string& pointerType);
    ArtifactExprPtr OutputPointer(int index, const std::string& pointerType);
    /// The Tensor member of input/output `index` (`in_<id>_`, `out_<id>_`).
    const std::string& InputMember(int index) const { return m_InputMembers[static_cast<std::size_t>(index)]; }
    const std::string& OutputMember(int index) const { return m_OutputMembers[static_cast<std::size_t>(index)]; }

    /// The static memory plan of the arena; buffers are added while visiting.
    ArtifactMemoryPlan& Plan() { return m_Plan; }
    /// `reinterpret_cast<TYPE>(l.arena + OFFSET)` for arena buffer `buffer` (+ `byteOffset`); the
    /// offset is filled in once the plan is made (Finish() of this base, after the target's).
    ArtifactExprPtr ArenaPointer(int buffer, const std::string& pointerType, std::size_t byteOffset = 0);
    /// The arena's size literal (the static plan's), filled in once planned.
    ArtifactExprPtr ArenaSize();
    /// Bytes the arena holds beyond the static plan, known only when the artifact runs (what
    /// configured layers ask for); placed after the planned tensors.
    void SetExtraArenaBytes(ArtifactExprPtr bytes) { m_ExtraArenaBytes = std::move(bytes); }
    /// Adds a file of the artifact besides the DOM's two (written as is).
    void AddExtraSource(const std::string& file, std::string text) { m_ExtraSources[file] = std::move(text); }


private:
    void BuildSkeleton();
    void FinishSkeleton();
    /// <Name>_create/_run/_destroy/_error (ArtifactOptions::m_CEntryPoints).
    void AddCEntryPoints();

    ArtifactModulePtr m_Module;
    ArtifactClassPtr m_Class;
    std::shared_ptr<ArtifactClass> m_Layers;
    std::shared_ptr<ArtifactNamespace> m_Detail;
    std::vector<ArtifactBlockPtr> m_ConfigureBlock;  ///< owns the four blocks below
    std::shared_ptr<ArtifactClassFunction> m_Ctor;
    ArtifactBlock* m_Configure = nullptr;
    ArtifactBlock* m_Allocate = nullptr;
    ArtifactBlock* m_ReadWeights = nullptr;
    ArtifactBlock* m_Inference = nullptr;
    std::shared_ptr<ArtifactLiteral> m_ParamsSize;
    std::shared_ptr<ArtifactLiteral> m_ParamsHash;

    ArtifactParamsWriter m_Params;
    std::vector<std::uint8_t> m_ParamsFile;
    std::map<int, std::uint64_t> m_WeightOffsets;
    std::set<std::string> m_Snippets;
    std::set<std::string> m_Ids;
    std::vector<std::string> m_InputMembers, m_OutputMembers;
    std::vector<ArtifactBinding> m_InputBindings, m_OutputBindings;

    ArtifactMemoryPlan m_Plan;
    std::vector<std::pair<std::shared_ptr<ArtifactLiteral>, std::pair<int, std::size_t>>> m_ArenaOffsets;
    std::shared_ptr<ArtifactLiteral> m_ArenaSize;
    ArtifactExprPtr m_ExtraArenaBytes;
    std::map<std::string, std::string> m_ExtraSources;
};

}  // namespace trellis::codegen
