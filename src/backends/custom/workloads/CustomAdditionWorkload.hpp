// Custom: the workload of a plain Add layer.
//
// At run time Custom's additions are PreCompiled layers (CustomBackend::OptimizeSubgraph replaces
// every Add); this workload runs an Add the optimizer evaluates before that, when it folds an
// addition of constants on the first preferred backend that supports it. It therefore works on
// whatever memory it is handed (host memory during folding). Immutable; Execute() is reentrant.
#pragma once

#include "CustomPreCompiledObject.hpp"

#include <trellis/backends/IWorkload.hpp>

#include <memory>

namespace trellis::custom {

class CustomAdditionWorkload final : public IWorkload {
public:
    CustomAdditionWorkload(const QueueDescriptor& descriptor, const WorkloadInfo& info);
    void Execute(const WorkloadIo& io) const override;
private:
    std::unique_ptr<CustomPreCompiledObject> m_Kernel;
};

}  // namespace trellis::custom
