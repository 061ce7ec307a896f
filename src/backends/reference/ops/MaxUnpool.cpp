// CpuRef MaxUnpool: every data type (raw element copies). The output is zero-filled, then each
// element of X is written at the flat output offset its index names (as MaxPool's Indices: the
// offset in the whole output tensor); a repeated offset keeps the last. An index outside
// [0, output elements) throws RuntimeException naming the layer before anything is written.
#include "RefDataMovement.hpp"
#include "RefKernelTable.hpp"

#include <trellis/Exceptions.hpp>

#include <cstring>

namespace trellis::ref {

namespace {

class MaxUnpoolWorkload final : public IWorkload {
public:
    MaxUnpoolWorkload(std::string layer, const TensorInfo& x, const TensorInfo& y)
        : m_Layer(std::move(layer)), m_Elem(GetDataTypeSize(x.GetDataType())), m_InCount(x.GetNumElements()),
          m_OutCount(y.GetNumElements()) {}

    void Execute(const WorkloadIo& io) const override {
        const auto* x = static_cast<const std::byte*>(io.m_Inputs[0]->Map());
        const auto* indices = static_cast<const int64_t*>(io.m_Inputs[1]->Map());
        auto* y = static_cast<std::byte*>(io.m_Outputs[0]->Map());
        for (std::size_t i = 0; i < m_InCount; ++i) {
            if (indices[i] < 0 || static_cast<std::size_t>(indices[i]) >= m_OutCount) {
                throw RuntimeException("MaxUnpool '" + m_Layer + "': index " + std::to_string(indices[i]) +
                                       " (at position " + std::to_string(i) + ") is outside the output's [0, " +
                                       std::to_string(m_OutCount) + ") elements");
            }
        }
        std::memset(y, 0, m_OutCount * m_Elem);
        for (std::size_t i = 0; i < m_InCount; ++i) {
            std::memcpy(y + static_cast<std::size_t>(indices[i]) * m_Elem, x + i * m_Elem, m_Elem);
        }
    }

private:
    const std::string m_Layer;
    const std::size_t m_Elem, m_InCount, m_OutCount;
};

}  // namespace

bool MaxUnpoolRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    if (!CheckArity("MaxUnpool", info, 2, 1, reason)) return false;
    if (!CheckType("MaxUnpool", "indices", info.m_InputTensorInfos[1], DataType::Signed64, reason)) return false;
    return CheckSameEncoding("MaxUnpool", "output", info.m_OutputTensorInfos[0], "input", info.m_InputTensorInfos[0],
                             reason);
}

IWorkloadPtr MaxUnpoolRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<MaxUnpoolWorkload>(layer.m_LayerName, info.m_InputTensorInfos[0], info.m_OutputTensorInfos[0]);
}

}  // namespace trellis::ref
