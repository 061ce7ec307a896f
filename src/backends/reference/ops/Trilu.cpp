// CpuRef Trilu: every data type (elements are copied or zeroed as raw bytes; all-zero bytes are
// zero in every type Trellis has). Upper keeps (i, j) with j - i >= k, lower with j - i <= k, over
// the last two dims; every other element becomes zero. k is m_K, or read from input 1 (one
// Signed32/Signed64 value) when the core left that input in place.
#include "RefDataMovement.hpp"
#include "RefKernelTable.hpp"

#include <cstring>
#include <optional>

namespace trellis::ref {

namespace {

class TriluWorkload final : public IWorkload {
public:
    TriluWorkload(const TriluDescriptor& d, const WorkloadInfo& info) : m_Upper(d.m_Upper), m_K(d.m_K) {
        const TensorInfo& x = info.m_InputTensorInfos[0];
        if (info.m_InputTensorInfos.size() > 1) m_KInput = info.m_InputTensorInfos[1].GetDataType();
        const TensorShape& s = x.GetShape();
        const unsigned int r = s.GetNumDimensions();
        m_Rows = s[r - 2];
        m_Cols = s[r - 1];
        m_Batch = m_Rows * m_Cols == 0 ? 0 : x.GetNumElements() / (m_Rows * m_Cols);
        m_Elem = GetDataTypeSize(x.GetDataType());
    }
    void Execute(const WorkloadIo& io) const override {
        const auto* x = static_cast<const std::byte*>(io.m_Inputs[0]->Map());
        auto* y = static_cast<std::byte*>(io.m_Outputs[0]->Map());
        int64_t k = m_K;
        if (m_KInput == DataType::Signed64) k = *static_cast<const int64_t*>(io.m_Inputs[1]->Map());
        if (m_KInput == DataType::Signed32) k = *static_cast<const int32_t*>(io.m_Inputs[1]->Map());
        for (std::size_t b = 0; b < m_Batch; ++b) {
            for (int64_t i = 0; i < m_Rows; ++i) {
                for (int64_t j = 0; j < m_Cols; ++j) {
                    const std::size_t off = ((b * m_Rows + i) * m_Cols + j) * m_Elem;
                    const bool keep = m_Upper ? (j - i >= k) : (j - i <= k);
                    if (keep) std::memcpy(y + off, x + off, m_Elem);
                    else std::memset(y + off, 0, m_Elem);
                }
            }
        }
    }
private:
    bool m_Upper;
    int64_t m_K;
    std::optional<DataType> m_KInput;  // set when k is a runtime input
    int64_t m_Rows = 0, m_Cols = 0;
    std::size_t m_Batch = 0, m_Elem = 0;
};

}  // namespace

bool TriluRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    if (info.m_InputTensorInfos.size() == 2) {
        const TensorInfo& k = info.m_InputTensorInfos[1];
        if ((k.GetDataType() != DataType::Signed32 && k.GetDataType() != DataType::Signed64) || k.GetNumElements() != 1) {
            return Refuse(reason, "Trilu: input 1 (k) must be one Signed32/Signed64 value, is " + k.ToString());
        }
    } else if (!CheckArity("Trilu", info, 1, 1, reason)) {
        return false;
    }
    if (info.m_InputTensorInfos[0].GetNumDimensions() < 2) {
        return Refuse(reason, "Trilu: input " + info.m_InputTensorInfos[0].GetShape().ToString() + " has rank below 2");
    }
    return CheckSameEncoding("Trilu", "output", info.m_OutputTensorInfos[0], "input", info.m_InputTensorInfos[0], reason);
}

IWorkloadPtr TriluRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<TriluWorkload>(layer.Get<TriluDescriptor>(), info);
}

}  // namespace trellis::ref
