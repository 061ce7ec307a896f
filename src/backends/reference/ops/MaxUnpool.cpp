// CpuRef MaxUnpool: every data type (raw element copies). The output is zero-filled, then each
// element of X is written at the flat output offset its index names (as MaxPool's Indices: the
// offset in the whole output tensor); a repeated offset keeps the last. An index outside
// [0, output elements) throws RuntimeException naming the layer before anything is written.
#include "RefDataMovement.hpp"
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/Selection.hpp"

#include <trellis/Exceptions.hpp>

#include <cstring>

namespace trellis::ref {

namespace {

class MaxUnpoolWorkload final : public IWorkload {
public:
    MaxUnpoolWorkload(kernels::MaxUnpoolParams p, std::string layer) : m_P(p), m_Layer(std::move(layer)) {}
    void Execute(const WorkloadIo& io) const override {
        try {
            kernels::MaxUnpool(m_P, io.m_Inputs[0]->Map(), static_cast<const int64_t*>(io.m_Inputs[1]->Map()),
                               io.m_Outputs[0]->Map());
        } catch (const std::out_of_range& e) {
            throw RuntimeException("MaxUnpool '" + m_Layer + "': " + e.what());
        }
    }
private:
    const kernels::MaxUnpoolParams m_P;
    const std::string m_Layer;
};

}  // namespace

bool MaxUnpoolRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    if (!CheckArity("MaxUnpool", info, 2, 1, reason)) return false;
    if (!CheckType("MaxUnpool", "indices", info.m_InputTensorInfos[1], DataType::Signed64, reason)) return false;
    return CheckSameEncoding("MaxUnpool", "output", info.m_OutputTensorInfos[0], "input", info.m_InputTensorInfos[0],
                             reason);
}

kernels::MaxUnpoolParams MaxUnpoolRefParams(const QueueDescriptor&, const WorkloadInfo& info) {
    const TensorInfo& x = info.m_InputTensorInfos[0];
    return {GetDataTypeSize(x.GetDataType()), x.GetNumElements(), info.m_OutputTensorInfos[0].GetNumElements()};
}

IWorkloadPtr MaxUnpoolRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<MaxUnpoolWorkload>(MaxUnpoolRefParams(layer, info), layer.m_LayerName);
}

}  // namespace trellis::ref
