// Trellis application API: the code generator behind `trellis codegen` and the Codegen backend.
//
// The generator writes a program instead of running a network: it walks a shape-inferred,
// optimized graph, builds a DOM of one C++ class (the "artifact"), serializes the weights as it
// goes, and prints the DOM as a header and an implementation file. The artifact's constructor
// configures every layer, allocates one arena and reads the weights file; Inference() runs the
// network; get_<tensor>() (and getInput()/getOutput() where there is exactly one) expose the
// network's inputs and outputs. See docs/codegen.md.
//
// Targets: "soft" (the C++ standard library alone: CpuRef's kernels emitted into the artifact)
// and, where Trellis was built with oneDNN, "onednn" (oneDNN primitives configured in the
// constructor). GetArtifactTargets() lists those built in.
//
// Errors: InvalidArgumentException for a bad option, a dynamic network, or a layer the target
// cannot generate (naming the layer, its op and the rule); RuntimeException when files cannot be
// written. Thread-safety: the functions are reentrant; an Artifact is a plain value.
#pragma once

#include <trellis/INetwork.hpp>
#include <trellis/backends/IWorkload.hpp>
#include <trellis/backends/SubgraphView.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace trellis {

struct ArtifactOptions {
    /// The class name and the files' stem: a C++ identifier.
    std::string m_Name = "Net";
    /// "soft" or "onednn" (GetArtifactTargets()).
    std::string m_Target = "soft";
    /// Also generate <Name>_main.cpp, a program that runs one inference from .npy files.
    bool m_WithMain = false;
    /// Also generate C entry points (for dlopen): <Name>_create, <Name>_run, <Name>_destroy,
    /// <Name>_error (what the Codegen backend loads; see docs/codegen.md).
    bool m_CEntryPoints = false;
};

/// A network input or output of an artifact.
struct ArtifactBinding {
    std::string m_Name;      ///< the tensor's name in the model
    std::string m_Accessor;  ///< the artifact's accessor: "get_<identifier>"
    TensorInfo m_Info;
};

/// A generated artifact, in memory.
struct Artifact {
    std::string m_Name;
    std::string m_Target;
    /// File name -> text: <Name>.h, <Name>.cpp, CMakeLists.txt and, with m_WithMain, <Name>_main.cpp.
    std::map<std::string, std::string> m_Sources;
    /// The contents of <Name>.params (weights, see docs/codegen.md for the format).
    std::vector<uint8_t> m_Params;
    /// The hash of the model the params file carries and the artifact checks.
    uint64_t m_ModelHash = 0;
    std::vector<ArtifactBinding> m_Inputs;
    std::vector<ArtifactBinding> m_Outputs;
    /// For an artifact of a sub-graph: per input slot of the sub-graph, the artifact input it feeds,
    /// or -1 for a constant (baked into the params file).
    std::vector<int> m_SubgraphInputs;
};

/// The targets built into this Trellis ("soft", "onednn").
std::vector<std::string> GetArtifactTargets();

/// Whether `target` can generate the layer (as a backend's layer support sees it); otherwise false
/// with the reason naming the op and the rule. Throws InvalidArgumentException for an unknown target.
bool IsLayerGeneratable(const std::string& target, const QueueDescriptor& layer, const WorkloadInfo& info,
                        std::string* reason);

/// The artifact of a whole optimized network (static shapes). Its inputs and outputs are the
/// network's, in binding-id order, named after them.
Artifact GenerateArtifact(const IOptimizedNetwork& network, const ArtifactOptions& options);

/// The artifact of a sub-graph (a backend's OptimizeSubgraph()): its inputs are the tensors fed to
/// the sub-graph's input slots from outside it (constants excluded), its outputs the sub-graph's
/// output slots, in order.
Artifact GenerateArtifact(const SubgraphView& subgraph, const ArtifactOptions& options);

/// Writes every file of `artifact` into `directory` (created if missing).
void WriteArtifact(const Artifact& artifact, const std::string& directory);

}  // namespace trellis
