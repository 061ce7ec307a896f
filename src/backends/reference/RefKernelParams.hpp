// CpuRef: the parameters of each kernel snippet (kernels/), computed from a layer's descriptor and
// tensor infos. CpuRef's workloads build them once at creation; the code generator's soft target
// calls the same functions at generation time and prints the result into the artifact, so both run
// the same kernel with the same parameters. Each function expects a layer its op's
// <Op>RefSupport() accepted.
#pragma once

#include "kernels/Softmax.hpp"

#include <trellis/backends/IWorkload.hpp>

namespace trellis::ref {

kernels::SoftmaxParams SoftmaxRefParams(const QueueDescriptor& layer, const WorkloadInfo& info);

}  // namespace trellis::ref
