// CpuRef Compress: copies the slices of input 0 (along the axis, or the elements of the flattened
// input) whose condition entry (input 1, Boolean) is true. Every data type (bytes are copied).
#include "RefDataMovement.hpp"
#include "RefKernelTable.hpp"

namespace trellis::ref {

namespace {

class CompressWorkload final : public IWorkload {
public:
    CompressWorkload(const TensorInfo& x, const TensorInfo& cond, std::optional<int64_t> axis) : m_Length(cond.GetNumElements()) {
        const TensorShape& s = x.GetShape();
        const std::size_t elem = GetDataTypeSize(x.GetDataType());
        if (!axis) {
            m_Outer = 1;
            m_Slices = x.GetNumElements();
            m_SliceBytes = elem;
            return;
        }
        const auto a = static_cast<unsigned int>(*axis);
        m_Outer = 1;
        for (unsigned int i = 0; i < a; ++i) m_Outer *= s[i];
        m_Slices = s[a];
        m_SliceBytes = elem;
        for (unsigned int i = a + 1; i < s.GetNumDimensions(); ++i) m_SliceBytes *= s[i];
    }
    void Execute(const WorkloadIo& io) const override {
        const auto* x = static_cast<const uint8_t*>(io.m_Inputs[0]->Map());
        const auto* c = static_cast<const uint8_t*>(io.m_Inputs[1]->Map());
        auto* y = static_cast<uint8_t*>(io.m_Outputs[0]->Map());
        for (std::size_t o = 0; o < m_Outer; ++o) {
            for (std::size_t s = 0; s < m_Slices && s < m_Length; ++s) {
                if (!c[s]) continue;
                CopyBytes(x + (o * m_Slices + s) * m_SliceBytes, y, m_SliceBytes);
                y += m_SliceBytes;
            }
        }
    }
private:
    std::size_t m_Length;
    std::size_t m_Outer = 1, m_Slices = 0, m_SliceBytes = 0;
};

}  // namespace

bool CompressRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    if (!CheckArity("Compress", info, 2, 1, reason)) return false;
    if (!CheckType("Compress", "input 1 (condition)", info.m_InputTensorInfos[1], DataType::Boolean, reason)) return false;
    return CheckSameEncoding("Compress", "output", info.m_OutputTensorInfos[0], "input 0", info.m_InputTensorInfos[0],
                             reason);
}

IWorkloadPtr CompressRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<CompressWorkload>(info.m_InputTensorInfos[0], info.m_InputTensorInfos[1],
                                              layer.Get<CompressDescriptor>().m_Axis);
}

}  // namespace trellis::ref
