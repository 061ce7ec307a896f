// Custom: the workload of a MemCopy layer the optimizer asks Custom to run - a copy between host
// memory and Custom device memory, in the direction the layer's destination says (into Custom
// when MemCopyDescriptor::m_Destination is "Custom", out of it otherwise). The device side of the
// copy is checked to be Custom memory; bytes moved are counted (bytes_copied_to_device /
// bytes_copied_to_host). Immutable; Execute() is reentrant.
#pragma once

#include <trellis/backends/IWorkload.hpp>

#include <cstddef>
#include <string>

namespace trellis::custom {

class CustomMemCopyWorkload final : public IWorkload {
public:
    CustomMemCopyWorkload(const QueueDescriptor& descriptor, const WorkloadInfo& info);
    void Execute(const WorkloadIo& io) const override;
private:
    std::string m_LayerName;
    bool m_ToDevice = false;
    std::size_t m_Bytes = 0;
};

}  // namespace trellis::custom
