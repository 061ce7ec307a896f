// CpuRef Softmax / LogSoftmax along one axis, or (m_Coerce2d, opset < 13) over all dims from the
// axis to the end flattened together. Float32 only.
//
// The input is viewed as [outer, extent, inner] and each of the outer * inner lines (elements
// `inner` apart) is normalized on its own. Numerically stable: the line's maximum is subtracted
// before exp; sums run in double.
#include "RefKernelTable.hpp"
#include "ops/RefMathCommon.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace trellis::ref {

namespace {

class SoftmaxWorkload final : public IWorkload {
public:
    SoftmaxWorkload(std::size_t outer, std::size_t extent, std::size_t inner, bool log)
        : m_Outer(outer), m_Extent(extent), m_Inner(inner), m_Log(log) {}

    void Execute(const WorkloadIo& io) const override {
        const float* x = math::InputF32(io, 0);
        float* y = math::OutputF32(io, 0);
        for (std::size_t o = 0; o < m_Outer; ++o) {
            for (std::size_t i = 0; i < m_Inner; ++i) {
                const std::size_t base = o * m_Extent * m_Inner + i;
                float maxValue = -std::numeric_limits<float>::infinity();
                for (std::size_t e = 0; e < m_Extent; ++e) maxValue = std::max(maxValue, x[base + e * m_Inner]);
                double sum = 0.0;
                for (std::size_t e = 0; e < m_Extent; ++e)
                    sum += std::exp(static_cast<double>(x[base + e * m_Inner]) - maxValue);
                if (m_Log) {
                    const double logSum = std::log(sum);
                    for (std::size_t e = 0; e < m_Extent; ++e) {
                        y[base + e * m_Inner] =
                            static_cast<float>(static_cast<double>(x[base + e * m_Inner]) - maxValue - logSum);
                    }
                } else {
                    for (std::size_t e = 0; e < m_Extent; ++e) {
                        y[base + e * m_Inner] =
                            static_cast<float>(std::exp(static_cast<double>(x[base + e * m_Inner]) - maxValue) / sum);
                    }
                }
            }
        }
    }

private:
    const std::size_t m_Outer, m_Extent, m_Inner;
    const bool m_Log;
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

IWorkloadPtr SoftmaxRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const auto& d = layer.Get<SoftmaxDescriptor>();
    const TensorShape& s = info.m_InputTensorInfos[0].GetShape();
    const unsigned int rank = s.GetNumDimensions(), axis = static_cast<unsigned int>(d.m_Axis);
    const std::size_t outer = math::Volume(s, 0, axis);
    if (d.m_Coerce2d) return std::make_unique<SoftmaxWorkload>(outer, math::Volume(s, axis, rank), 1, d.m_Log);
    return std::make_unique<SoftmaxWorkload>(outer, s[axis], math::Volume(s, axis + 1, rank), d.m_Log);
}

}  // namespace trellis::ref
