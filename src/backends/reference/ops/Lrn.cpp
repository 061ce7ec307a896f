// CpuRef Lrn (ONNX LRN): y = x / (bias + alpha / size * s)^beta, s the sum of x^2 over channels
// [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)] clipped to [0, C), at the same batch
// entry and spatial position; computed in double. Float32 only.
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/Normalization.hpp"
#include "ops/RefMathCommon.hpp"

#include <algorithm>
#include <cmath>

namespace trellis::ref {

namespace {

class LrnWorkload final : public IWorkload {
public:
    explicit LrnWorkload(kernels::LrnParams p) : m_P(p) {}
    void Execute(const WorkloadIo& io) const override { kernels::Lrn(m_P, math::InputF32(io, 0), math::OutputF32(io, 0)); }
private:
    const kernels::LrnParams m_P;
};

}  // namespace

bool LrnRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    return math::RequireAllFloat32("Lrn", info, reason);
}

kernels::LrnParams LrnRefParams(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const TensorShape& x = info.m_InputTensorInfos[0].GetShape();
    const LrnDescriptor& d = layer.Get<LrnDescriptor>();
    return {x[0], x[1], math::Volume(x, 2, x.GetNumDimensions()), d.m_Alpha, d.m_Beta, d.m_Bias, d.m_Size};
}

IWorkloadPtr LrnRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<LrnWorkload>(LrnRefParams(layer, info));
}

}  // namespace trellis::ref
