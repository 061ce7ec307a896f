// CpuRef MeanVarianceNormalization: y = (x - mean) / (sqrt(variance) + 1e-9), mean and (biased)
// variance over the axes (the core resolved them) for each position of the other dims; computed
// in double. Float32 only.
//
// Every element belongs to the group named by its coordinates along the kept dims; a group index
// table (one entry per element, built once) lets the three passes (mean, variance, output) be
// plain loops.
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/Normalization.hpp"
#include "ops/RefMathCommon.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace trellis::ref {

namespace {

class MeanVarianceNormalizationWorkload final : public IWorkload {
public:
    explicit MeanVarianceNormalizationWorkload(kernels::MeanVarianceNormalizationParams p) : m_P(std::move(p)) {}
    std::size_t GetScratchBytes() const override { return kernels::MeanVarianceNormalizationWorkspaceBytes(m_P); }
    void Execute(const WorkloadIo& io) const override {
        kernels::MeanVarianceNormalization(m_P, math::InputF32(io, 0), math::OutputF32(io, 0), io.m_Scratch);
    }
private:
    const kernels::MeanVarianceNormalizationParams m_P;
};

}  // namespace

bool MeanVarianceNormalizationRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    return math::RequireAllFloat32("MeanVarianceNormalization", info, reason);
}

kernels::MeanVarianceNormalizationParams MeanVarianceNormalizationRefParams(const QueueDescriptor& layer,
                                                                            const WorkloadInfo& info) {
    const TensorShape& x = info.m_InputTensorInfos[0].GetShape();
    const unsigned int rank = x.GetNumDimensions();
    std::vector<bool> reduced(rank, false);
    for (int64_t a : layer.Get<MeanVarianceNormalizationDescriptor>().m_Axes) reduced[static_cast<std::size_t>(a)] = true;
    kernels::MeanVarianceNormalizationParams p;
    p.dims.assign(x.GetDims().begin(), x.GetDims().end());
    p.groupStride.assign(rank, 0);
    std::size_t s = 1;
    for (unsigned int i = rank; i-- > 0;) {
        if (!reduced[i]) {
            p.groupStride[i] = s;
            s *= x[i];
        }
    }
    p.groups = s;
    p.count = x.GetNumElements();
    p.groupSize = p.groups ? p.count / p.groups : 0;
    return p;
}

IWorkloadPtr MeanVarianceNormalizationRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<MeanVarianceNormalizationWorkload>(MeanVarianceNormalizationRefParams(layer, info));
}

}  // namespace trellis::ref
