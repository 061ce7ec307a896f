// CpuRef Compress: copies the slices of input 0 (along the axis, or the elements of the flattened
// input) whose condition entry (input 1, Boolean) is true. Every data type (bytes are copied).
#include "RefDataMovement.hpp"
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/Selection.hpp"

namespace trellis::ref {

namespace {

class CompressWorkload final : public IWorkload {
public:
    explicit CompressWorkload(kernels::CompressParams p) : m_P(p) {}
    void Execute(const WorkloadIo& io) const override {
        kernels::Compress(m_P, io.m_Inputs[0]->Map(), static_cast<const uint8_t*>(io.m_Inputs[1]->Map()), io.m_Outputs[0]->Map());
    }
private:
    const kernels::CompressParams m_P;
};

}  // namespace

bool CompressRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    if (!CheckArity("Compress", info, 2, 1, reason)) return false;
    if (!CheckType("Compress", "input 1 (condition)", info.m_InputTensorInfos[1], DataType::Boolean, reason)) return false;
    return CheckSameEncoding("Compress", "output", info.m_OutputTensorInfos[0], "input 0", info.m_InputTensorInfos[0],
                             reason);
}

kernels::CompressParams CompressRefParams(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const TensorInfo& x = info.m_InputTensorInfos[0];
    const std::optional<int64_t> axis = layer.Get<CompressDescriptor>().m_Axis;
    kernels::CompressParams p;
    p.length = info.m_InputTensorInfos[1].GetNumElements();
    const TensorShape& s = x.GetShape();
    const std::size_t elem = GetDataTypeSize(x.GetDataType());
    if (!axis) {
        p.slices = x.GetNumElements();
        p.sliceBytes = elem;
        return p;
    }
    const auto a = static_cast<unsigned int>(*axis);
    for (unsigned int i = 0; i < a; ++i) p.outer *= s[i];
    p.slices = s[a];
    p.sliceBytes = elem;
    for (unsigned int i = a + 1; i < s.GetNumDimensions(); ++i) p.sliceBytes *= s[i];
    return p;
}

IWorkloadPtr CompressRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<CompressWorkload>(CompressRefParams(layer, info));
}

}  // namespace trellis::ref
