// CpuRef: the general QuantizeLinear / DequantizeLinear kernels (ops/QuantizeLinearGeneral.cpp),
// which QuantizeLinear.cpp's support check and factory hand a layer to when its 8-bit kernels do
// not cover it (16-bit, 4-bit, 2-bit, float8 or float4 types, 16-bit floats, blocked scales).
#pragma once

#include <trellis/backends/IWorkload.hpp>

#include <string>

namespace trellis::ref {

/// True when the layer (QuantizeLinear or DequantizeLinear) needs the general kernels.
bool QuantizeLinearNeedsGeneralKernel(const QueueDescriptor& layer, const WorkloadInfo& info);
bool QuantizeLinearGeneralSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason);
IWorkloadPtr QuantizeLinearGeneralCreate(const QueueDescriptor& layer, const WorkloadInfo& info);

}  // namespace trellis::ref
