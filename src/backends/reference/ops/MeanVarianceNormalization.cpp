// CpuRef MeanVarianceNormalization: y = (x - mean) / (sqrt(variance) + 1e-9), mean and (biased)
// variance over the axes (the core resolved them) for each position of the other dims; computed
// in double. Float32 only.
//
// Every element belongs to the group named by its coordinates along the kept dims; a group index
// table (one entry per element, built once) lets the three passes (mean, variance, output) be
// plain loops.
#include "RefKernelTable.hpp"
#include "ops/RefMathCommon.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace trellis::ref {

namespace {

class MeanVarianceNormalizationWorkload final : public IWorkload {
public:
    MeanVarianceNormalizationWorkload(const TensorShape& x, const std::vector<int64_t>& axes) {
        const unsigned int rank = x.GetNumDimensions();
        std::vector<bool> reduced(rank, false);
        for (int64_t a : axes) reduced[static_cast<std::size_t>(a)] = true;
        std::vector<std::size_t> groupStride(rank, 0);
        std::size_t s = 1;
        for (unsigned int i = rank; i-- > 0;) {
            if (!reduced[i]) {
                groupStride[i] = s;
                s *= x[i];
            }
        }
        m_Groups = s;
        const std::size_t count = x.GetNumElements();
        m_Group.resize(count);
        std::vector<unsigned int> pos(rank, 0);
        for (std::size_t f = 0; f < count; ++f) {
            std::size_t g = 0;
            for (unsigned int i = 0; i < rank; ++i) g += pos[i] * groupStride[i];
            m_Group[f] = g;
            for (unsigned int i = rank; i-- > 0;) {
                if (++pos[i] < x[i]) break;
                pos[i] = 0;
            }
        }
        m_GroupSize = m_Groups ? count / m_Groups : 0;
    }

    std::size_t GetScratchBytes() const override { return 2 * m_Groups * sizeof(double); }

    void Execute(const WorkloadIo& io) const override {
        const float* x = math::InputF32(io, 0);
        float* y = math::OutputF32(io, 0);
        double* mean = static_cast<double*>(io.m_Scratch);
        double* var = mean + m_Groups;
        std::fill_n(mean, 2 * m_Groups, 0.0);
        const std::size_t count = m_Group.size();
        const double n = static_cast<double>(m_GroupSize);
        for (std::size_t f = 0; f < count; ++f) mean[m_Group[f]] += x[f];
        for (std::size_t g = 0; g < m_Groups; ++g) mean[g] /= n;
        for (std::size_t f = 0; f < count; ++f) {
            const double d = x[f] - mean[m_Group[f]];
            var[m_Group[f]] += d * d;
        }
        for (std::size_t g = 0; g < m_Groups; ++g) var[g] = std::sqrt(var[g] / n) + 1e-9;  // now the divisor
        for (std::size_t f = 0; f < count; ++f) y[f] = static_cast<float>((x[f] - mean[m_Group[f]]) / var[m_Group[f]]);
    }

private:
    std::vector<std::size_t> m_Group;
    std::size_t m_Groups = 0, m_GroupSize = 0;
};

}  // namespace

bool MeanVarianceNormalizationRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    return math::RequireAllFloat32("MeanVarianceNormalization", info, reason);
}

IWorkloadPtr MeanVarianceNormalizationRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<MeanVarianceNormalizationWorkload>(info.m_InputTensorInfos[0].GetShape(),
                                                               layer.Get<MeanVarianceNormalizationDescriptor>().m_Axes);
}

}  // namespace trellis::ref
