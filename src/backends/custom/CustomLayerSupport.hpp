// Custom: which layers the sample backend runs.
//
//  - ElementwiseBinary Add, Float32, numpy broadcasting (IsAdditionSupported),
//  - PreCompiled layers carrying one of Custom's own CustomPreCompiledObjects, with the tensor
//    infos the object was compiled for,
//  - MemCopy layers (the copies the optimizer puts at the boundary of Custom's memory), any data
//    type, input and output of the same byte size.
// Everything else is declined with a reason naming the op. Stateless; thread-safe.
#pragma once

#include <trellis/backends/ILayerSupport.hpp>

namespace trellis::custom {

class CustomLayerSupport final : public ILayerSupport {
public:
    bool IsLayerSupported(const QueueDescriptor& layer, const WorkloadInfo& info,
                          std::string* reasonIfUnsupported) const override;
};

}  // namespace trellis::custom
