// Custom: plain Add workload (used when the optimizer folds constant additions).
#include "CustomAdditionWorkload.hpp"

#include "CustomDevice.hpp"

namespace trellis::custom {

CustomAdditionWorkload::CustomAdditionWorkload(const QueueDescriptor& descriptor, const WorkloadInfo& info)
    : m_Kernel(std::make_unique<CustomPreCompiledObject>(descriptor.m_LayerName, info.m_InputTensorInfos.at(0),
                                                         info.m_InputTensorInfos.at(1), info.m_OutputTensorInfos.at(0))) {}

void CustomAdditionWorkload::Execute(const WorkloadIo& io) const {
    m_Kernel->Run(static_cast<const float*>(io.m_Inputs[0]->Map()), static_cast<const float*>(io.m_Inputs[1]->Map()),
                  static_cast<float*>(io.m_Outputs[0]->Map()));
    CustomDevice::Instance().Count(CustomCounter::WorkloadsExecuted);
}

}  // namespace trellis::custom
