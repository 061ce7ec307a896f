// Code generator, soft target (Samsung NNC's soft backend): an artifact that depends on the C++
// standard library alone. Its layers are CpuRef's kernels: the kernel snippets
// (src/backends/reference/kernels/) are emitted into the artifact, each layer's parameters are
// computed by the same CpuRef function CpuRef's workload uses (RefKernelParams.hpp) and printed
// into the constructor, and Inference() calls the kernels in execution order on the arena.
//
// Memory: inputs and outputs are the artifact's Tensor members (their own arena buffers unless the
// caller rebinds `data`); weights are read in place from the mapped weights file; every other
// tensor and each layer's workspace is an arena buffer placed by the static memory plan. Layers
// that only relabel their input (Reshape, Identity) are views of it.
#pragma once

#include "../../ArtifactOpGenerator.hpp"

#include <functional>

namespace trellis::codegen::soft {

class SoftOpGenerator;

/// What an op's emitter is handed: one layer, and the means to configure and call its kernel.
class SoftLayer {
public:
    SoftLayer(SoftOpGenerator& generator, const GraphLayer& layer, int index)
        : m_Gen(generator), m_Layer(layer), m_Index(index) {}
    const GraphLayer& Layer() const { return m_Layer; }
    const QueueDescriptor& Queue() const { return m_Layer.m_Queue; }
    const WorkloadInfo& Info() const { return m_Layer.m_Info; }
    /// Input `i`'s data as `const T*` / output `i`'s as `T*`, T the tensor's element type.
    ArtifactExprPtr In(unsigned int i) const;
    ArtifactExprPtr Out(unsigned int i) const;
    /// As a `const void*` / `void*` (kernels that move raw elements).
    ArtifactExprPtr InRaw(unsigned int i) const;
    ArtifactExprPtr OutRaw(unsigned int i) const;
    /// A workspace of `bytes` bytes, alive during this layer only (nullptr for 0 bytes).
    ArtifactExprPtr Workspace(std::size_t bytes) const;
    /// Emits kernel snippet `name` (e.g. "Softmax": kernels/Softmax.hpp) into the artifact.
    void Use(const std::string& name) const;
    /// A configured parameter object: a Layers member of `typeName` set to `value` in the
    /// constructor's configure part; returns the expression naming it.
    ArtifactExprPtr Configure(const std::string& typeName, ArtifactExprPtr value) const;
    /// Appends `function(args)` to Inference().
    void Call(const std::string& function, std::vector<ArtifactExprPtr> args) const;
private:
    SoftOpGenerator& m_Gen;
    const GraphLayer& m_Layer;
    int m_Index;
};

/// An op's emitter, and the soft target's rule for it beyond CpuRef's support check (nullptr: none).
struct SoftOpRow {
    LayerType m_Type;
    void (*m_Emit)(const SoftLayer& layer);
    bool (*m_Support)(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason);
};
/// The row for `type`, or nullptr (SoftOps.cpp).
const SoftOpRow* FindSoftOp(LayerType type);

class SoftOpGenerator final : public ArtifactOpGenerator {
public:
    SoftOpGenerator(const ArtifactGraph& graph, const ArtifactOptions& options);

private:
    friend class SoftLayer;
    void Begin() override;
    void VisitLayer(const GraphLayer& layer, int index) override;
    void Finish() override;

    /// Where a tensor's elements are.
    struct Storage {
        enum class Kind { None, Input, Output, Weight, Arena, Alias };
        Kind m_Kind = Kind::None;
        int m_Index = -1;  ///< input/output index, arena buffer, or aliased tensor
    };
    int Root(int tensor) const;
    ArtifactExprPtr Pointer(int tensor, bool writable, bool raw);

    std::vector<Storage> m_Storage;
    std::vector<std::string> m_LayerNames;
    int m_NumConfigured = 0;
};

/// The soft target's parameters printer: a kernel parameter object (a struct with Fields(f), see
/// kernels/KernelSnippets.md) as an aggregate initializer of type `typeName`.
template <typename P> ArtifactExprPtr ParamsInitializer(const P& params, const std::string& typeName);

}  // namespace trellis::codegen::soft
