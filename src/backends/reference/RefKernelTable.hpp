// CpuRef: the kernel table. One row per op CpuRef runs; a missing row means "unsupported".
//
// Every op file ops/<Name>.cpp defines, side by side:
//   bool        <Name>RefSupport(const QueueDescriptor&, const WorkloadInfo&, std::string* reason);
//   IWorkloadPtr <Name>RefCreate(const QueueDescriptor&, const WorkloadInfo&);
// The support check says no (with a reason naming the op, the property and the rule) for any
// data type or descriptor value the kernel does not implement.
#pragma once

#include <trellis/backends/IWorkload.hpp>

#include <string>

namespace trellis::ref {

using RefSupportFunction = bool (*)(const QueueDescriptor&, const WorkloadInfo&, std::string*);
using RefCreateFunction = IWorkloadPtr (*)(const QueueDescriptor&, const WorkloadInfo&);

struct RefKernelRow {
    LayerType m_Type;
    RefSupportFunction m_Support;
    RefCreateFunction m_Create;
};

/// The row for `type`, or nullptr.
const RefKernelRow* FindRefKernel(LayerType type);

#define TRELLIS_REF_KERNEL(Name)                                                                     \
    bool Name##RefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason); \
    IWorkloadPtr Name##RefCreate(const QueueDescriptor& layer, const WorkloadInfo& info);
#include "RefKernels.def"
#undef TRELLIS_REF_KERNEL

}  // namespace trellis::ref
