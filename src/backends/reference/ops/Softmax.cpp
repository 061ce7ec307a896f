// CpuRef Softmax / LogSoftmax along one axis, or (m_Coerce2d, opset < 13) over all dims from the
// axis to the end flattened together. Float32 only. The kernel is the snippet kernels/Softmax.hpp.
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/Softmax.hpp"
#include "ops/RefMathCommon.hpp"

namespace trellis::ref {

namespace {

class SoftmaxWorkload final : public IWorkload {
public:
    explicit SoftmaxWorkload(kernels::SoftmaxParams p) : m_P(p) {}
    void Execute(const WorkloadIo& io) const override { kernels::Softmax(m_P, math::InputF32(io, 0), math::OutputF32(io, 0)); }
private:
    const kernels::SoftmaxParams m_P;
};

}  // namespace

bool SoftmaxRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    if (!math::RequireAllFloat32("Softmax", info, reason)) return false;
    const auto& d = layer.Get<SoftmaxDescriptor>();
    const unsigned int rank = info.m_InputTensorInfos[0].GetNumDimensions();
    if (d.m_Axis < 0 || static_cast<unsigned int>(d.m_Axis) >= rank) {
        return math::Refuse(reason, "Softmax: axis " + std::to_string(d.m_Axis) + " is not normalized to [0, " +
                                        std::to_string(rank) + ")");
    }
    return true;
}

kernels::SoftmaxParams SoftmaxRefParams(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const auto& d = layer.Get<SoftmaxDescriptor>();
    const TensorShape& s = info.m_InputTensorInfos[0].GetShape();
    const unsigned int rank = s.GetNumDimensions(), axis = static_cast<unsigned int>(d.m_Axis);
    const std::size_t outer = math::Volume(s, 0, axis);
    if (d.m_Coerce2d) return {outer, math::Volume(s, axis, rank), 1, d.m_Log};
    return {outer, s[axis], math::Volume(s, axis + 1, rank), d.m_Log};
}

IWorkloadPtr SoftmaxRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<SoftmaxWorkload>(SoftmaxRefParams(layer, info));
}

}  // namespace trellis::ref
