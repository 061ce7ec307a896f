// Code generator, onednn target (the seed's library-calling artifact, on oneDNN): C++ that calls
// oneDNN directly - no Trellis header or library - and computes what CpuAcc computes.
//
// The graph is CpuAcc's region graph (CpuAccGraph.hpp: the same nodes after the same fusions:
// conv/matmul post-ops and residual sums, GELU, LayerNorm, SiLU patterns). Each node is compiled
// at generation time the way CpuAcc's region compiler compiles it (CpuAccRegion*.cpp), with real
// oneDNN primitive descriptors, to decide the activations' layouts (channel-blocked between
// convolutions), the reorders, the in-place sums and concatenations; the artifact then recreates
// each primitive with those layouts written out. What depends on the CPU the artifact runs on is
// left to oneDNN there: the weights' packed layouts and the scratchpads are queried from the
// primitive descriptors in the constructor, and a Winograd convolution falls back to the direct
// algorithm where oneDNN has no Winograd kernel.
//
// The artifact's constructor: 1. configures every primitive (descriptors, attributes, post-ops);
// 2. allocates the one arena - the activations at the offsets of the static memory plan, then the
// largest scratchpad, then the packed weights - and creates the memory objects and each
// primitive's argument list; 3. reads the weights file and reorders the weights into their packed
// layouts. Inference() re-points the memory objects bound to the input and output tensors and runs
// the primitives through oneDNN's C API on the prepared argument lists.
#pragma once

#include "../../ArtifactOpGenerator.hpp"

#include <memory>

namespace trellis::codegen::onednn {

class OneDnnCompiler;

class OneDnnOpGenerator final : public ArtifactOpGenerator {
public:
    OneDnnOpGenerator(const ArtifactGraph& graph, const ArtifactOptions& options);
    ~OneDnnOpGenerator() override;

private:
    friend class OneDnnCompiler;
    void Begin() override;
    void VisitLayer(const GraphLayer& layer, int index) override;
    void Finish() override;

    std::unique_ptr<OneDnnCompiler> m_Compiler;
};

}  // namespace trellis::codegen::onednn
