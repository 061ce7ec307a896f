#include "ArtifactTarget.hpp"

#include <trellis/Exceptions.hpp>

namespace trellis::codegen {

std::vector<const ArtifactTarget*> GetAllArtifactTargets() {
    return {
        &GetSoftTarget(),
#if TRELLIS_CODEGEN_ONEDNN
        &GetOneDnnTarget(),
#endif
        &GetCudaTarget(),
    };
}

const ArtifactTarget& GetArtifactTarget(const std::string& name) {
    std::string names;
    for (const ArtifactTarget* t : GetAllArtifactTargets()) {
        if (name == t->GetName()) return *t;
        names += (names.empty() ? "" : ", ") + std::string(t->GetName());
    }
    throw InvalidArgumentException("code generator: no target '" + name + "' (targets: " + names + ")");
}

}  // namespace trellis::codegen
