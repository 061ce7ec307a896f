// CpuRef BatchNormalization: Y = scale * (X - mean) / sqrt(var + eps) + B per channel (dim 1),
// any rank >= 2. Float32 only.
//
// Per channel the affine form Y = a * X + b is computed in double first (a = scale / sqrt(var +
// eps), b = B - mean * a), so the per-element work is one multiply-add. In training mode mean and
// var are the channel's batch statistics (over N and the spatial dims; the variance biased, as
// ONNX's reference), and outputs 1 and 2, when present, get the running statistics
// input * momentum + batch statistic * (1 - momentum).
#include "RefKernelTable.hpp"
#include "ops/RefMathCommon.hpp"

#include <cmath>

namespace trellis::ref {

namespace {

class BatchNormalizationWorkload final : public IWorkload {
public:
    BatchNormalizationWorkload(std::size_t batch, std::size_t channels, std::size_t inner,
                               const BatchNormalizationDescriptor& d)
        : m_Batch(batch), m_Channels(channels), m_Inner(inner), m_Eps(d.m_Eps), m_Training(d.m_Training),
          m_Momentum(d.m_Momentum) {}

    void Execute(const WorkloadIo& io) const override {
        const float* x = math::InputF32(io, 0);
        const float* scale = math::InputF32(io, 1);
        const float* bias = math::InputF32(io, 2);
        const float* mean = math::InputF32(io, 3);
        const float* var = math::InputF32(io, 4);
        float* y = math::OutputF32(io, 0);
        float* runningMean = io.m_Outputs.size() > 2 ? math::OutputF32(io, 1) : nullptr;
        float* runningVar = io.m_Outputs.size() > 2 ? math::OutputF32(io, 2) : nullptr;
        for (std::size_t c = 0; c < m_Channels; ++c) {
            double mu = mean[c], sigma2 = var[c];
            if (m_Training) {
                BatchStatistics(x, c, mu, sigma2);
                if (runningMean) {
                    runningMean[c] = static_cast<float>(mean[c] * m_Momentum + mu * (1.0 - m_Momentum));
                    runningVar[c] = static_cast<float>(var[c] * m_Momentum + sigma2 * (1.0 - m_Momentum));
                }
            }
            const double a = scale[c] / std::sqrt(sigma2 + m_Eps);
            const float af = static_cast<float>(a);
            const float bf = static_cast<float>(bias[c] - mu * a);
            for (std::size_t n = 0; n < m_Batch; ++n) {
                const std::size_t base = (n * m_Channels + c) * m_Inner;
                for (std::size_t i = 0; i < m_Inner; ++i) y[base + i] = af * x[base + i] + bf;
            }
        }
    }

private:
    // Mean and biased variance of channel c over the batch and the spatial dims.
    void BatchStatistics(const float* x, std::size_t c, double& mean, double& var) const {
        const double count = static_cast<double>(m_Batch * m_Inner);
        double sum = 0.0, sq = 0.0;
        for (std::size_t n = 0; n < m_Batch; ++n) {
            const float* xc = x + (n * m_Channels + c) * m_Inner;
            for (std::size_t i = 0; i < m_Inner; ++i) sum += xc[i];
        }
        mean = count > 0 ? sum / count : 0.0;
        for (std::size_t n = 0; n < m_Batch; ++n) {
            const float* xc = x + (n * m_Channels + c) * m_Inner;
            for (std::size_t i = 0; i < m_Inner; ++i) sq += (xc[i] - mean) * (xc[i] - mean);
        }
        var = count > 0 ? sq / count : 0.0;
    }

    const std::size_t m_Batch, m_Channels, m_Inner;
    const float m_Eps;
    const bool m_Training;
    const double m_Momentum;
};

}  // namespace

bool BatchNormalizationRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    return math::RequireAllFloat32("BatchNormalization", info, reason);
}

IWorkloadPtr BatchNormalizationRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const TensorShape& s = info.m_InputTensorInfos[0].GetShape();
    return std::make_unique<BatchNormalizationWorkload>(s[0], s[1], math::Volume(s, 2, s.GetNumDimensions()),
                                                        layer.Get<BatchNormalizationDescriptor>());
}

}  // namespace trellis::ref
