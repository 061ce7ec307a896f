// Backend SDK: which layers a backend can run.
//
// One generic query instead of one virtual per layer type. Answer false with a reason that names
// the op, the property and the rule ("Convolution: 3 spatial dims, only 1 or 2 supported").
// Thread-safety: must be callable concurrently (it is queried during Optimize()).
#pragma once

#include <trellis/backends/IWorkload.hpp>

#include <memory>
#include <string>

namespace trellis {

class ILayerSupport {
public:
    virtual ~ILayerSupport() = default;
    virtual bool IsLayerSupported(const QueueDescriptor& layer, const WorkloadInfo& info,
                                  std::string* reasonIfUnsupported) const = 0;
};
using ILayerSupportSharedPtr = std::shared_ptr<ILayerSupport>;

}  // namespace trellis
