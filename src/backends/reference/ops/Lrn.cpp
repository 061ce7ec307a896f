// CpuRef Lrn (ONNX LRN): y = x / (bias + alpha / size * s)^beta, s the sum of x^2 over channels
// [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)] clipped to [0, C), at the same batch
// entry and spatial position; computed in double. Float32 only.
#include "RefKernelTable.hpp"
#include "ops/RefMathCommon.hpp"

#include <algorithm>
#include <cmath>

namespace trellis::ref {

namespace {

class LrnWorkload final : public IWorkload {
public:
    LrnWorkload(const TensorShape& x, const LrnDescriptor& d)
        : m_Batch(x[0]), m_Channels(x[1]), m_Plane(math::Volume(x, 2, x.GetNumDimensions())), m_D(d) {}

    void Execute(const WorkloadIo& io) const override {
        const float* x = math::InputF32(io, 0);
        float* y = math::OutputF32(io, 0);
        const long long before = (static_cast<long long>(m_D.m_Size) - 1) / 2;
        const long long after = static_cast<long long>(m_D.m_Size) - 1 - before;
        const long long channels = static_cast<long long>(m_Channels);
        for (std::size_t n = 0; n < m_Batch; ++n) {
            const float* xn = x + n * m_Channels * m_Plane;
            float* yn = y + n * m_Channels * m_Plane;
            for (long long c = 0; c < channels; ++c) {
                const long long lo = std::max(0LL, c - before), hi = std::min(channels - 1, c + after);
                for (std::size_t i = 0; i < m_Plane; ++i) {
                    double s = 0.0;
                    for (long long k = lo; k <= hi; ++k) {
                        const double v = xn[static_cast<std::size_t>(k) * m_Plane + i];
                        s += v * v;
                    }
                    const double base = m_D.m_Bias + static_cast<double>(m_D.m_Alpha) / m_D.m_Size * s;
                    const std::size_t at = static_cast<std::size_t>(c) * m_Plane + i;
                    yn[at] = static_cast<float>(xn[at] / std::pow(base, static_cast<double>(m_D.m_Beta)));
                }
            }
        }
    }

private:
    const std::size_t m_Batch, m_Channels, m_Plane;
    const LrnDescriptor m_D;
};

}  // namespace

bool LrnRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    return math::RequireAllFloat32("Lrn", info, reason);
}

IWorkloadPtr LrnRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<LrnWorkload>(info.m_InputTensorInfos[0].GetShape(), layer.Get<LrnDescriptor>());
}

}  // namespace trellis::ref
