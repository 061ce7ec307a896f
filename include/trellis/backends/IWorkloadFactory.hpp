// Backend SDK: the factory that turns layers into workloads.
//
// Created per loaded network by IBackendInternal::CreateWorkloadFactory(); it may outlive the
// backend object that created it and must not refer back to it. Workloads it creates may outlive
// it too. Thread-safety: used by one LoadNetwork() at a time.
#pragma once

#include <trellis/backends/IWorkload.hpp>

#include <memory>

namespace trellis {

class IWorkloadFactory {
public:
    virtual ~IWorkloadFactory() = default;
    virtual const BackendId& GetBackendId() const = 0;
    /// Creates the workload for a layer this backend declared supported. Throws
    /// LayerValidationException (naming the layer) if it cannot.
    virtual IWorkloadPtr CreateWorkload(const QueueDescriptor& descriptor, const WorkloadInfo& info) const = 0;
};
using IWorkloadFactoryPtr = std::unique_ptr<IWorkloadFactory>;

}  // namespace trellis
