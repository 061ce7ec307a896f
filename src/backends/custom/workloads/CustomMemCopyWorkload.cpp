// Custom: MemCopy workload (host <-> Custom device memory).
#include "CustomMemCopyWorkload.hpp"

#include "CustomBackend.hpp"
#include "CustomDevice.hpp"

#include <trellis/Exceptions.hpp>

#include <cstring>

namespace trellis::custom {

CustomMemCopyWorkload::CustomMemCopyWorkload(const QueueDescriptor& descriptor, const WorkloadInfo& info)
    : m_LayerName(descriptor.m_LayerName),
      m_ToDevice(descriptor.Get<MemCopyDescriptor>().m_Destination == CustomBackend::GetIdStatic()),
      m_Bytes(info.m_InputTensorInfos.at(0).GetNumBytes()) {}

void CustomMemCopyWorkload::Execute(const WorkloadIo& io) const {
    if (m_Bytes == 0) return;
    const void* src = io.m_Inputs[0]->Map();
    void* dst = io.m_Outputs[0]->Map();
    const void* deviceSide = m_ToDevice ? dst : src;
    CustomDevice& device = CustomDevice::Instance();
    if (!device.IsDeviceMemory(deviceSide, m_Bytes)) {
        throw RuntimeException("Custom: MemCopy '" + m_LayerName + "': the " + (m_ToDevice ? "destination" : "source") +
                               " is not in Custom device memory");
    }
    std::memcpy(dst, src, m_Bytes);
    device.Count(m_ToDevice ? CustomCounter::BytesCopiedToDevice : CustomCounter::BytesCopiedToHost, m_Bytes);
    device.Count(CustomCounter::WorkloadsExecuted);
}

}  // namespace trellis::custom
