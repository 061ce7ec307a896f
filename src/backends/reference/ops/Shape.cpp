// CpuRef Shape: writes dims [start, end) of the input's shape as Signed64. Shapes are static, so
// the values are fixed at creation; the input's data is never read. Any input type.
#include "RefDataMovement.hpp"
#include "RefKernelTable.hpp"

#include <cstring>

namespace trellis::ref {

namespace {

class ShapeWorkload final : public IWorkload {
public:
    explicit ShapeWorkload(std::vector<int64_t> dims) : m_Dims(std::move(dims)) {}
    void Execute(const WorkloadIo& io) const override {
        if (!m_Dims.empty()) std::memcpy(io.m_Outputs[0]->Map(), m_Dims.data(), m_Dims.size() * sizeof(int64_t));
    }
private:
    std::vector<int64_t> m_Dims;
};

}  // namespace

bool ShapeRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    if (!CheckArity("Shape", info, 1, 1, reason)) return false;
    const ShapeDescriptor& d = layer.Get<ShapeDescriptor>();
    const int64_t rank = info.m_InputTensorInfos[0].GetNumDimensions();
    const TensorInfo& out = info.m_OutputTensorInfos[0];
    if (d.m_Start < 0 || !d.m_End || *d.m_End < d.m_Start || *d.m_End > rank || out.GetNumDimensions() != 1 ||
        out.GetShape()[0] != *d.m_End - d.m_Start) {
        return Refuse(reason, "Shape: start/end not resolved to 0 <= start <= end <= rank, as Optimize() leaves them");
    }
    return CheckType("Shape", "output", out, DataType::Signed64, reason);
}

IWorkloadPtr ShapeRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const ShapeDescriptor& d = layer.Get<ShapeDescriptor>();
    const std::vector<unsigned int>& dims = info.m_InputTensorInfos[0].GetShape().GetDims();
    return std::make_unique<ShapeWorkload>(std::vector<int64_t>(dims.begin() + d.m_Start, dims.begin() + *d.m_End));
}

}  // namespace trellis::ref
