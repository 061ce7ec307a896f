// CpuRef ReverseSequence: every data type (raw element copies). For batch entry b, time steps
// t < len[b] take step len[b] - 1 - t of the input; later steps are copied unchanged. A length
// outside [0, time dim] throws RuntimeException naming the layer before anything is written.
#include "RefDataMovement.hpp"
#include "RefKernelTable.hpp"

#include <trellis/Exceptions.hpp>

#include <cstring>

namespace trellis::ref {

namespace {

class ReverseSequenceWorkload final : public IWorkload {
public:
    ReverseSequenceWorkload(const QueueDescriptor& layer, const TensorInfo& x)
        : m_Layer(layer.m_LayerName), m_Elem(GetDataTypeSize(x.GetDataType())) {
        const auto& d = layer.Get<ReverseSequenceDescriptor>();
        const TensorShape& s = x.GetShape();
        m_Batch = s[static_cast<unsigned int>(d.m_BatchAxis)];
        m_Time = s[static_cast<unsigned int>(d.m_TimeAxis)];
        m_Inner = 1;
        for (unsigned int i = 2; i < s.GetNumDimensions(); ++i) m_Inner *= s[i];
        // Element offset of (batch b, time t) is b * m_BatchStride + t * m_TimeStride.
        const std::size_t dim1 = s[1];
        m_BatchStride = d.m_BatchAxis == 0 ? dim1 * m_Inner : m_Inner;
        m_TimeStride = d.m_TimeAxis == 0 ? dim1 * m_Inner : m_Inner;
    }

    void Execute(const WorkloadIo& io) const override {
        const auto* x = static_cast<const std::byte*>(io.m_Inputs[0]->Map());
        const auto* lens = static_cast<const int64_t*>(io.m_Inputs[1]->Map());
        auto* y = static_cast<std::byte*>(io.m_Outputs[0]->Map());
        for (std::size_t b = 0; b < m_Batch; ++b) {
            if (lens[b] < 0 || static_cast<std::size_t>(lens[b]) > m_Time) {
                throw RuntimeException("ReverseSequence '" + m_Layer + "': sequence length " + std::to_string(lens[b]) +
                                       " of batch entry " + std::to_string(b) + " is outside [0, " +
                                       std::to_string(m_Time) + "]");
            }
        }
        const std::size_t bytes = m_Inner * m_Elem;
        for (std::size_t b = 0; b < m_Batch; ++b) {
            const std::size_t len = static_cast<std::size_t>(lens[b]);
            for (std::size_t t = 0; t < m_Time; ++t) {
                const std::size_t src = t < len ? len - 1 - t : t;
                std::memcpy(y + (b * m_BatchStride + t * m_TimeStride) * m_Elem,
                            x + (b * m_BatchStride + src * m_TimeStride) * m_Elem, bytes);
            }
        }
    }

private:
    const std::string m_Layer;
    const std::size_t m_Elem;
    std::size_t m_Batch = 0, m_Time = 0, m_Inner = 1, m_BatchStride = 0, m_TimeStride = 0;
};

}  // namespace

bool ReverseSequenceRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    if (!CheckArity("ReverseSequence", info, 2, 1, reason)) return false;
    if (!CheckType("ReverseSequence", "sequence_lens", info.m_InputTensorInfos[1], DataType::Signed64, reason)) {
        return false;
    }
    return CheckSameEncoding("ReverseSequence", "output", info.m_OutputTensorInfos[0], "input",
                             info.m_InputTensorInfos[0], reason);
}

IWorkloadPtr ReverseSequenceRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<ReverseSequenceWorkload>(layer, info.m_InputTensorInfos[0]);
}

}  // namespace trellis::ref
