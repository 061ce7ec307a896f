// CpuRef Gather: every data type for the data (elements are moved, not computed on), Signed32 or
// Signed64 indices. Negative indices count from the back of the axis; an index outside
// [-dim, dim) throws RuntimeException naming the layer and the index before anything is read.
#include "RefDataMovement.hpp"
#include "RefKernelTable.hpp"

#include <trellis/Exceptions.hpp>

#include <cstring>

namespace trellis::ref {

namespace {

class GatherWorkload final : public IWorkload {
public:
    GatherWorkload(const QueueDescriptor& layer, const WorkloadInfo& info)
        : m_Layer(layer.m_LayerName), m_Axis(static_cast<unsigned int>(layer.Get<GatherDescriptor>().m_Axis)) {
        const TensorInfo& data = info.m_InputTensorInfos[0];
        const TensorShape& shape = data.GetShape();
        m_Indices64 = info.m_InputTensorInfos[1].GetDataType() == DataType::Signed64;
        m_NumIndices = info.m_InputTensorInfos[1].GetNumElements();
        m_AxisDim = shape[m_Axis];
        for (unsigned int k = 0; k < m_Axis; ++k) m_Outer *= shape[k];
        m_SliceBytes = GetDataTypeSize(data.GetDataType());
        for (unsigned int k = m_Axis + 1; k < shape.GetNumDimensions(); ++k) m_SliceBytes *= shape[k];
    }
    void Execute(const WorkloadIo& io) const override {
        const void* indices = io.m_Inputs[1]->Map();
        auto index = [&](std::size_t j) -> int64_t {
            return m_Indices64 ? static_cast<const int64_t*>(indices)[j] : static_cast<const int32_t*>(indices)[j];
        };
        // Check every index first so a bad one never leaves a half-written output behind.
        for (std::size_t j = 0; j < m_NumIndices; ++j) {
            const int64_t v = index(j);
            if (v < -m_AxisDim || v >= m_AxisDim) {
                throw RuntimeException("Gather '" + m_Layer + "': index " + std::to_string(v) + " (at position " +
                                       std::to_string(j) + ") is out of range [" + std::to_string(-m_AxisDim) + ", " +
                                       std::to_string(m_AxisDim) + ") along axis " + std::to_string(m_Axis));
            }
        }
        const auto* data = static_cast<const std::byte*>(io.m_Inputs[0]->Map());
        auto* out = static_cast<std::byte*>(io.m_Outputs[0]->Map());
        for (std::size_t o = 0; o < m_Outer; ++o) {
            const std::byte* block = data + o * static_cast<std::size_t>(m_AxisDim) * m_SliceBytes;
            for (std::size_t j = 0; j < m_NumIndices; ++j) {
                int64_t v = index(j);
                if (v < 0) v += m_AxisDim;
                std::memcpy(out, block + static_cast<std::size_t>(v) * m_SliceBytes, m_SliceBytes);
                out += m_SliceBytes;
            }
        }
    }
private:
    std::string m_Layer;
    unsigned int m_Axis;
    bool m_Indices64 = false;
    std::size_t m_NumIndices = 0;
    int64_t m_AxisDim = 0;
    std::size_t m_Outer = 1;       // product of the dims before the axis
    std::size_t m_SliceBytes = 0;  // bytes of the dims after the axis
};

}  // namespace

bool GatherRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    if (!CheckArity("Gather", info, 2, 1, reason)) return false;
    const TensorInfo& data = info.m_InputTensorInfos[0];
    const DataType it = info.m_InputTensorInfos[1].GetDataType();
    if (it != DataType::Signed32 && it != DataType::Signed64) {
        return Refuse(reason, std::string("Gather: indices are ") + GetDataTypeName(it) + "; CpuRef takes Signed32 or Signed64");
    }
    const int axis = layer.Get<GatherDescriptor>().m_Axis;
    if (axis < 0 || static_cast<unsigned int>(axis) >= data.GetNumDimensions()) {
        return Refuse(reason, "Gather: axis " + std::to_string(axis) + " is not normalized to [0, rank " +
                                  std::to_string(data.GetNumDimensions()) + ") as Optimize() leaves it");
    }
    return CheckSameEncoding("Gather", "output", info.m_OutputTensorInfos[0], "data", data, reason);
}

IWorkloadPtr GatherRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<GatherWorkload>(layer, info);
}

}  // namespace trellis::ref
