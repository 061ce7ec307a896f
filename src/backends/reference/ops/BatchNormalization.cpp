// CpuRef BatchNormalization: Y = scale * (X - mean) / sqrt(var + eps) + B per channel (dim 1),
// any rank >= 2. Float32 only. The kernel is the snippet kernels/BatchNormalization.hpp.
//
// Per channel the affine form Y = a * X + b is computed in double first (a = scale / sqrt(var +
// eps), b = B - mean * a), so the per-element work is one multiply-add. In training mode mean and
// var are the channel's batch statistics (over N and the spatial dims; the variance biased, as
// ONNX's reference), and outputs 1 and 2, when present, get the running statistics
// input * momentum + batch statistic * (1 - momentum).
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/BatchNormalization.hpp"
#include "ops/RefMathCommon.hpp"


namespace trellis::ref {

namespace {

class BatchNormalizationWorkload final : public IWorkload {
public:
    explicit BatchNormalizationWorkload(kernels::BatchNormalizationParams p) : m_P(p) {}
    void Execute(const WorkloadIo& io) const override {
        float* runningMean = io.m_Outputs.size() > 2 ? math::OutputF32(io, 1) : nullptr;
        float* runningVar = io.m_Outputs.size() > 2 ? math::OutputF32(io, 2) : nullptr;
        kernels::BatchNormalization(m_P, math::InputF32(io, 0), math::InputF32(io, 1), math::InputF32(io, 2),
                                    math::InputF32(io, 3), math::InputF32(io, 4), math::OutputF32(io, 0), runningMean,
                                    runningVar);
    }
private:
    const kernels::BatchNormalizationParams m_P;
};

}  // namespace

kernels::BatchNormalizationParams BatchNormalizationRefParams(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const TensorShape& s = info.m_InputTensorInfos[0].GetShape();
    const auto& d = layer.Get<BatchNormalizationDescriptor>();
    return {s[0], s[1], math::Volume(s, 2, s.GetNumDimensions()), d.m_Eps, d.m_Training, d.m_Momentum};
}

bool BatchNormalizationRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    return math::RequireAllFloat32("BatchNormalization", info, reason);
}

IWorkloadPtr BatchNormalizationRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<BatchNormalizationWorkload>(BatchNormalizationRefParams(layer, info));
}

}  // namespace trellis::ref
