// CpuRef MaxUnpool: every data type (raw element copies). The output is zero-filled, then each
// element of X is written where its index points. Indices are flat offsets into the unpooled
// shape (each spatial dim (in - 1) * stride + kernel - pads: the MaxPool input the indices came
// from); when output_shape makes the output larger, the unpooled tensor sits in the output's
// leading corner (ONNX's reading, see src/core/ops/MaxUnpool.cpp), so an offset is split into
// coordinates of the unpooled shape and written at the same coordinates of the output. A repeated
// offset keeps the last. An index outside [0, unpooled elements) throws RuntimeException naming
// the layer before anything is written.
#include "RefDataMovement.hpp"
#include "RefKernelTable.hpp"

#include <trellis/Exceptions.hpp>

#include <cstring>

namespace trellis::ref {

namespace {

class MaxUnpoolWorkload final : public IWorkload {
public:
    MaxUnpoolWorkload(std::string layer, const MaxUnpoolDescriptor& d, const TensorInfo& x, const TensorInfo& y)
        : m_Layer(std::move(layer)), m_Elem(GetDataTypeSize(x.GetDataType())), m_InCount(x.GetNumElements()),
          m_OutCount(y.GetNumElements()), m_OutShape(y.GetShape()) {
        const TensorShape& xs = x.GetShape();
        std::vector<unsigned int> unpooled{xs[0], xs[1]};
        for (unsigned int i = 0; i + 2 < xs.GetNumDimensions(); ++i) {
            unpooled.push_back((xs[i + 2] - 1) * d.m_Strides[i] + d.m_KernelShape[i] - d.m_PadsBegin[i] -
                               d.m_PadsEnd[i]);
        }
        m_Unpooled = TensorShape(std::move(unpooled));
        m_UnpooledCount = m_Unpooled.GetNumElements();
        m_SameShape = m_Unpooled == m_OutShape;
    }

    void Execute(const WorkloadIo& io) const override {
        const auto* x = static_cast<const std::byte*>(io.m_Inputs[0]->Map());
        const auto* indices = static_cast<const int64_t*>(io.m_Inputs[1]->Map());
        auto* y = static_cast<std::byte*>(io.m_Outputs[0]->Map());
        for (std::size_t i = 0; i < m_InCount; ++i) {
            if (indices[i] < 0 || static_cast<std::size_t>(indices[i]) >= m_UnpooledCount) {
                throw RuntimeException("MaxUnpool '" + m_Layer + "': index " + std::to_string(indices[i]) +
                                       " (at position " + std::to_string(i) + ") is outside the unpooled tensor's [0, " +
                                       std::to_string(m_UnpooledCount) + ") elements (shape " +
                                       m_Unpooled.ToString() + ")");
            }
        }
        std::memset(y, 0, m_OutCount * m_Elem);
        for (std::size_t i = 0; i < m_InCount; ++i) {
            std::memcpy(y + OutputOffset(static_cast<std::size_t>(indices[i])) * m_Elem, x + i * m_Elem, m_Elem);
        }
    }

private:
    // The output offset of the element at flat offset `index` of the unpooled shape.
    std::size_t OutputOffset(std::size_t index) const {
        if (m_SameShape) return index;
        std::size_t offset = 0, outStride = 1;
        for (unsigned int d = m_Unpooled.GetNumDimensions(); d-- > 0;) {
            offset += (index % m_Unpooled[d]) * outStride;
            index /= m_Unpooled[d];
            outStride *= m_OutShape[d];
        }
        return offset;
    }

    const std::string m_Layer;
    const std::size_t m_Elem, m_InCount, m_OutCount;
    const TensorShape m_OutShape;
    TensorShape m_Unpooled;
    std::size_t m_UnpooledCount = 0;
    bool m_SameShape = true;
};

}  // namespace

bool MaxUnpoolRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    if (!CheckArity("MaxUnpool", info, 2, 1, reason)) return false;
    if (!CheckType("MaxUnpool", "indices", info.m_InputTensorInfos[1], DataType::Signed64, reason)) return false;
    return CheckSameEncoding("MaxUnpool", "output", info.m_OutputTensorInfos[0], "input", info.m_InputTensorInfos[0],
                             reason);
}

IWorkloadPtr MaxUnpoolRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<MaxUnpoolWorkload>(layer.m_LayerName, layer.Get<MaxUnpoolDescriptor>(),
                                               info.m_InputTensorInfos[0], info.m_OutputTensorInfos[0]);
}

}  // namespace trellis::ref
