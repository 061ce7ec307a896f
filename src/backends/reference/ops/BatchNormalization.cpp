// CpuRef BatchNormalization (inference): Y = scale * (X - mean) / sqrt(var + eps) + B per
// channel (dim 1), any rank >= 2. Float32 only.
//
// Per channel the affine form Y = a * X + b is computed in double first (a = scale / sqrt(var +
// eps), b = B - mean * a), so the per-element work is one multiply-add.
#include "RefKernelTable.hpp"
#include "ops/RefMathCommon.hpp"

#include <cmath>

namespace trellis::ref {

namespace {

class BatchNormalizationWorkload final : public IWorkload {
public:
    BatchNormalizationWorkload(std::size_t batch, std::size_t channels, std::size_t inner, float eps)
        : m_Batch(batch), m_Channels(channels), m_Inner(inner), m_Eps(eps) {}

    void Execute(const WorkloadIo& io) const override {
        const float* x = math::InputF32(io, 0);
        const float* scale = math::InputF32(io, 1);
        const float* bias = math::InputF32(io, 2);
        const float* mean = math::InputF32(io, 3);
        const float* var = math::InputF32(io, 4);
        float* y = math::OutputF32(io, 0);
        for (std::size_t c = 0; c < m_Channels; ++c) {
            const double a = scale[c] / std::sqrt(static_cast<double>(var[c]) + m_Eps);
            const float af = static_cast<float>(a);
            const float bf = static_cast<float>(bias[c] - mean[c] * a);
            for (std::size_t n = 0; n < m_Batch; ++n) {
                const std::size_t base = (n * m_Channels + c) * m_Inner;
                for (std::size_t i = 0; i < m_Inner; ++i) y[base + i] = af * x[base + i] + bf;
            }
        }
    }

private:
    const std::size_t m_Batch, m_Channels, m_Inner;
    const float m_Eps;
};

}  // namespace

bool BatchNormalizationRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    return math::RequireAllFloat32("BatchNormalization", info, reason);
}

IWorkloadPtr BatchNormalizationRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const TensorShape& s = info.m_InputTensorInfos[0].GetShape();
    return std::make_unique<BatchNormalizationWorkload>(s[0], s[1], math::Volume(s, 2, s.GetNumDimensions()),
                                                        layer.Get<BatchNormalizationDescriptor>().m_Eps);
}

}  // namespace trellis::ref
