// CpuRef InstanceNormalization: each (n, c) plane of X is normalized over its spatial dims,
// (x - mean) / sqrt(var + eps) * scale[c] + B[c], mean and (biased) variance in double.
// Float32 only.
#include "RefKernelTable.hpp"
#include "ops/RefMathCommon.hpp"

#include <cmath>

namespace trellis::ref {

namespace {

class InstanceNormalizationWorkload final : public IWorkload {
public:
    InstanceNormalizationWorkload(const TensorShape& x, float eps)
        : m_Planes(math::Volume(x, 0, 2)), m_Channels(x[1]), m_Plane(math::Volume(x, 2, x.GetNumDimensions())),
          m_Eps(eps) {}

    void Execute(const WorkloadIo& io) const override {
        const float* x = math::InputF32(io, 0);
        const float* scale = math::InputF32(io, 1);
        const float* bias = math::InputF32(io, 2);
        float* y = math::OutputF32(io, 0);
        for (std::size_t p = 0; p < m_Planes; ++p) {
            const float* xp = x + p * m_Plane;
            float* yp = y + p * m_Plane;
            const std::size_t c = p % m_Channels;
            double sum = 0.0, sq = 0.0;
            for (std::size_t i = 0; i < m_Plane; ++i) sum += xp[i];
            const double mean = m_Plane ? sum / static_cast<double>(m_Plane) : 0.0;
            for (std::size_t i = 0; i < m_Plane; ++i) sq += (xp[i] - mean) * (xp[i] - mean);
            const double var = m_Plane ? sq / static_cast<double>(m_Plane) : 0.0;
            const double a = scale[c] / std::sqrt(var + m_Eps);
            for (std::size_t i = 0; i < m_Plane; ++i) yp[i] = static_cast<float>((xp[i] - mean) * a + bias[c]);
        }
    }

private:
    const std::size_t m_Planes, m_Channels, m_Plane;
    const double m_Eps;
};

}  // namespace

bool InstanceNormalizationRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    return math::RequireAllFloat32("InstanceNormalization", info, reason);
}

IWorkloadPtr InstanceNormalizationRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<InstanceNormalizationWorkload>(info.m_InputTensorInfos[0].GetShape(),
                                                           layer.Get<InstanceNormalizationDescriptor>().m_Eps);
}

}  // namespace trellis::ref
