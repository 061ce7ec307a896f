// GpuAcc: which layers it runs. Every rule here matches what GpuAccRegion.cpp can plan; a layer it
// declines falls back to the next backend in the user's list (CpuAcc, CpuRef) with the reason, and
// the boundary pass puts copies between host and device memory around it.
#pragma once

#include "kernels/GpuAccKernels.hpp"

#include <trellis/backends/ILayerSupport.hpp>

#include <optional>
#include <string>
#include <vector>

namespace trellis::gpuacc {

/// The GpuAcc type of a network type, or nullopt (Float64, Signed16, unsigned wider than 8 bits
/// and quantized types stay on the CPU).
std::optional<DType> DTypeOf(DataType type);

/// Whether GpuAcc runs a layer of `type` with these tensors; `constants[i]` is true where input i
/// is a constant (weights). On false, `reason` names the op, the property and the rule.
bool IsSupportedLayer(LayerType type, const LayerDescriptor& descriptor, const std::vector<TensorInfo>& inputs,
                      const std::vector<TensorInfo>& outputs, const std::vector<bool>& constants, std::string* reason);

class GpuAccLayerSupport final : public ILayerSupport {
public:
    bool IsLayerSupported(const QueueDescriptor& layer, const WorkloadInfo& info,
                          std::string* reasonIfUnsupported) const override;
};

}  // namespace trellis::gpuacc
