// CpuAcc: which layers it runs (declared per op, data type and shape).
#pragma once

#include "CpuAccGraph.hpp"

#include <trellis/backends/ILayerSupport.hpp>

#include <optional>
#include <string>
#include <vector>

namespace trellis::cpuacc {

/// Whether CpuAcc runs a layer of `type` with these tensors; `constants[i]` is non-null where
/// input i is a constant (weights). On false, `reason` says which rule the layer breaks.
bool IsSupportedLayer(LayerType type, const LayerDescriptor& descriptor, const std::vector<TensorInfo>& inputs,
                      const std::vector<TensorInfo>& outputs, const std::vector<bool>& constants,
                      std::string* reason);

/// The node kind a supported layer becomes.
NodeKind NodeKindOf(LayerType type, const LayerDescriptor& descriptor);

/// The oneDNN eltwise algorithms computing a unary op, or nullopt when oneDNN has none.
std::optional<std::vector<EltwiseOp>> EltwiseOf(const ElementwiseUnaryDescriptor& descriptor);

/// The CPU has what CpuAcc needs (x86-64 with AVX2 at least); `why` says what is missing.
bool IsCpuSupported(std::string* why);

class CpuAccLayerSupport final : public ILayerSupport {
public:
    bool IsLayerSupported(const QueueDescriptor& layer, const WorkloadInfo& info,
                          std::string* reasonIfUnsupported) const override;
};

}  // namespace trellis::cpuacc
