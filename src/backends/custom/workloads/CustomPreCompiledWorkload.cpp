// Custom: PreCompiled workload.
#include "CustomPreCompiledWorkload.hpp"

#include "CustomDevice.hpp"

#include <trellis/Exceptions.hpp>

namespace trellis::custom {

CustomPreCompiledWorkload::CustomPreCompiledWorkload(const QueueDescriptor& descriptor, const WorkloadInfo&)
    : m_LayerName(descriptor.m_LayerName) {
    const auto* d = descriptor.m_Descriptor ? std::get_if<PreCompiledDescriptor>(descriptor.m_Descriptor) : nullptr;
    if (!d || !CustomPreCompiledObject::IsCustomObject(d->m_PreCompiledObject.get())) {
        throw LayerValidationException("Custom: PreCompiled layer '" + m_LayerName +
                                       "' does not carry a CustomPreCompiledObject");
    }
    m_Object = std::static_pointer_cast<const CustomPreCompiledObject>(d->m_PreCompiledObject);
}

void CustomPreCompiledWorkload::Execute(const WorkloadIo& io) const {
    const CustomDevice& device = CustomDevice::Instance();
    auto check = [&](const ITensorHandle* h, const std::string& what) {
        const std::size_t bytes = h->GetTensorInfo().GetNumBytes();
        if (bytes != 0 && !device.IsDeviceMemory(h->Map(), bytes)) {
            throw RuntimeException("Custom: PreCompiled '" + m_LayerName + "': " + what +
                                   " is not in Custom device memory (a MemCopy layer must move it there)");
        }
    };
    check(io.m_Inputs[0], "input 0");
    check(io.m_Inputs[1], "input 1");
    check(io.m_Outputs[0], "the output");
    m_Object->Run(static_cast<const float*>(io.m_Inputs[0]->Map()), static_cast<const float*>(io.m_Inputs[1]->Map()),
                  static_cast<float*>(io.m_Outputs[0]->Map()));
    CustomDevice::Instance().Count(CustomCounter::WorkloadsExecuted);
}

}  // namespace trellis::custom
