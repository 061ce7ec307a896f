// CpuRef InstanceNormalization: each (n, c) plane of X is normalized over its spatial dims,
// (x - mean) / sqrt(var + eps) * scale[c] + B[c], mean and (biased) variance in double.
// Float32 only.
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/Normalization.hpp"
#include "ops/RefMathCommon.hpp"

#include <cmath>

namespace trellis::ref {

namespace {

class InstanceNormalizationWorkload final : public IWorkload {
public:
    explicit InstanceNormalizationWorkload(kernels::InstanceNormalizationParams p) : m_P(p) {}
    void Execute(const WorkloadIo& io) const override {
        kernels::InstanceNormalization(m_P, math::InputF32(io, 0), math::InputF32(io, 1), math::InputF32(io, 2),
                                       math::OutputF32(io, 0));
    }
private:
    const kernels::InstanceNormalizationParams m_P;
};

}  // namespace

bool InstanceNormalizationRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    return math::RequireAllFloat32("InstanceNormalization", info, reason);
}

kernels::InstanceNormalizationParams InstanceNormalizationRefParams(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const TensorShape& x = info.m_InputTensorInfos[0].GetShape();
    return {math::Volume(x, 0, 2), x[1], math::Volume(x, 2, x.GetNumDimensions()),
            static_cast<double>(layer.Get<InstanceNormalizationDescriptor>().m_Eps)};
}

IWorkloadPtr InstanceNormalizationRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<InstanceNormalizationWorkload>(InstanceNormalizationRefParams(layer, info));
}

}  // namespace trellis::ref
