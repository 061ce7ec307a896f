// Code generator: what a target is. A target decides which layers it can generate and builds the
// artifact's DOM through its op generator (ArtifactOpGenerator); the printers, the weights file,
// the generated CMakeLists.txt and the self-test program are shared. Adding a target: a subclass
// here, its op generator, a row in ArtifactTarget.cpp (docs/codegen.md walks through it).
#pragma once

#include "ArtifactGraph.hpp"

#include <trellis/Codegen.hpp>

#include <memory>
#include <string>
#include <vector>

namespace trellis::codegen {

class ArtifactOpGenerator;

class ArtifactTarget {
public:
    virtual ~ArtifactTarget() = default;
    /// "soft", "onednn", "cuda".
    virtual const char* GetName() const = 0;
    /// Whether the target can generate this layer; otherwise false with the reason (op and rule).
    virtual bool IsLayerSupported(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) const = 0;
    virtual std::unique_ptr<ArtifactOpGenerator> CreateOpGenerator(const ArtifactGraph& graph,
                                                                   const ArtifactOptions& options) const = 0;
    /// Lines of the generated CMakeLists.txt that find the target's libraries and link them to the
    /// library target `library` (empty for a target needing only the standard library).
    virtual std::string GetCMakeDependencies(const std::string& library) const = 0;
    /// Compiler arguments that build and link the artifact directly (libraries, include paths), for
    /// a caller compiling without the generated CMakeLists.txt. (The Codegen backend compiles soft
    /// artifacts, which need none; the test scripts keep the same lists in TARGET_LIBRARIES.)
    virtual std::vector<std::string> GetCompilerArguments() const = 0;
};

/// The target named `name`; throws InvalidArgumentException naming the targets built in.
const ArtifactTarget& GetArtifactTarget(const std::string& name);
/// Every target built in.
std::vector<const ArtifactTarget*> GetAllArtifactTargets();

// The targets (targets/<name>/).
const ArtifactTarget& GetSoftTarget();
/// Built everywhere: generating CUDA source needs no CUDA; building the artifact does.
const ArtifactTarget& GetCudaTarget();
#if TRELLIS_CODEGEN_ONEDNN
const ArtifactTarget& GetOneDnnTarget();
#endif

}  // namespace trellis::codegen
