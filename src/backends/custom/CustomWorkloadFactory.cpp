// Custom: workload factory.
#include "CustomWorkloadFactory.hpp"

#include "CustomBackend.hpp"
#include "CustomLayerSupport.hpp"
#include "workloads/CustomAdditionWorkload.hpp"
#include "workloads/CustomMemCopyWorkload.hpp"
#include "workloads/CustomPreCompiledWorkload.hpp"

#include <trellis/Exceptions.hpp>

namespace trellis::custom {

const BackendId& CustomWorkloadFactory::GetBackendId() const { return CustomBackend::GetIdStatic(); }

IWorkloadPtr CustomWorkloadFactory::CreateWorkload(const QueueDescriptor& descriptor, const WorkloadInfo& info) const {
    std::string reason;
    if (!CustomLayerSupport().IsLayerSupported(descriptor, info, &reason)) {
        throw LayerValidationException("Custom cannot create a workload for " +
                                       std::string(GetLayerTypeName(descriptor.m_Type)) + " '" + descriptor.m_LayerName +
                                       "': " + reason);
    }
    switch (descriptor.m_Type) {
        case LayerType::PreCompiled: return std::make_unique<CustomPreCompiledWorkload>(descriptor, info);
        case LayerType::ElementwiseBinary: return std::make_unique<CustomAdditionWorkload>(descriptor, info);
        case LayerType::MemCopy: return std::make_unique<CustomMemCopyWorkload>(descriptor, info);
        default: break;
    }
    throw LayerValidationException("Custom cannot create a workload for " + std::string(GetLayerTypeName(descriptor.m_Type)) +
                                   " '" + descriptor.m_LayerName + "': no workload for this layer type");
}

}  // namespace trellis::custom
