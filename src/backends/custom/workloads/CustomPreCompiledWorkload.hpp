// Custom: the workload of a PreCompiled layer - runs the layer's CustomPreCompiledObject.
//
// The simulated device can only touch its own memory: Execute() checks that both inputs and the
// output lie in Custom device memory (the optimizer's MemCopy layers put them there) and throws a
// RuntimeException naming the layer and the tensor otherwise. Holds a share of the object, so it
// stays valid whatever happens to the optimized network. Immutable; Execute() is reentrant.
#pragma once

#include "CustomPreCompiledObject.hpp"

#include <trellis/backends/IWorkload.hpp>

#include <memory>
#include <string>

namespace trellis::custom {

class CustomPreCompiledWorkload final : public IWorkload {
public:
    /// Throws LayerValidationException when the layer does not carry a CustomPreCompiledObject.
    CustomPreCompiledWorkload(const QueueDescriptor& descriptor, const WorkloadInfo& info);
    void Execute(const WorkloadIo& io) const override;
private:
    std::shared_ptr<const CustomPreCompiledObject> m_Object;
    std::string m_LayerName;
};

}  // namespace trellis::custom
