// CpuRef LayerNormalization: each row X[outer, :] over dims [axis, rank) becomes
// (x - mean) / sqrt(var + eps) * scale + B, mean and (biased) variance in double. Float32 only.
// The optional outputs 1 and 2 get each row's mean and 1 / sqrt(var + eps).
//
// Scale and B may broadcast (ONNX rule); CpuRef handles the forms that vary only over the
// normalized dims, which covers every real model: index tables built at create time map each
// position of the normalized block to its scale / B element.
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/LayerNormalization.hpp"
#include "ops/RefMathCommon.hpp"

#include <cmath>
#include <vector>

namespace trellis::ref {

namespace {

// For each flat position of X's dims [axis, rank), the flat index of the broadcast operand `p`
// (right-aligned to X; its dims before `axis` must all be 1).
std::vector<std::size_t> BroadcastIndex(const TensorShape& x, unsigned int axis, const TensorShape& p) {
    const unsigned int rank = x.GetNumDimensions(), pr = p.GetNumDimensions();
    std::vector<std::size_t> pstride(rank, 0);
    std::size_t s = 1;
    for (unsigned int i = rank; i-- > 0 && rank - i <= pr;) {
        const unsigned int pd = p[pr - (rank - i)];
        pstride[i] = pd == 1 ? 0 : s;
        s *= pd;
    }
    const std::size_t count = math::Volume(x, axis, rank);
    std::vector<std::size_t> index(count);
    std::vector<unsigned int> pos(rank, 0);
    for (std::size_t f = 0; f < count; ++f) {
        std::size_t off = 0;
        for (unsigned int i = axis; i < rank; ++i) off += pos[i] * pstride[i];
        index[f] = off;
        for (unsigned int i = rank; i-- > axis;) {
            if (++pos[i] < x[i]) break;
            pos[i] = 0;
        }
    }
    return index;
}

// True when every dim of `p` (right-aligned to rank `rank`) before `axis` is 1.
bool VariesOnlyOverNormalizedDims(unsigned int rank, unsigned int axis, const TensorShape& p) {
    const unsigned int pr = p.GetNumDimensions();
    for (unsigned int j = 0; j < pr; ++j) {
        const unsigned int xdim = rank - pr + j;
        if (xdim < axis && p[j] != 1) return false;
    }
    return true;
}

class LayerNormalizationWorkload final : public IWorkload {
public:
    LayerNormalizationWorkload(kernels::LayerNormalizationParams p, bool hasBias) : m_P(std::move(p)), m_HasBias(hasBias) {}
    void Execute(const WorkloadIo& io) const override {
        kernels::LayerNormalization(m_P, math::InputF32(io, 0), math::InputF32(io, 1),
                                    m_HasBias ? math::InputF32(io, 2) : nullptr, math::OutputF32(io, 0),
                                    io.m_Outputs.size() > 1 ? math::OutputF32(io, 1) : nullptr,
                                    io.m_Outputs.size() > 2 ? math::OutputF32(io, 2) : nullptr);
    }
private:
    const kernels::LayerNormalizationParams m_P;
    const bool m_HasBias;
};

// An index table that is the identity is left empty (the kernel's convention).
std::vector<std::size_t> UnlessIdentity(std::vector<std::size_t> index) {
    for (std::size_t i = 0; i < index.size(); ++i) {
        if (index[i] != i) return index;
    }
    return {};
}

}  // namespace

bool LayerNormalizationRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    if (!math::RequireAllFloat32("LayerNormalization", info, reason)) return false;
    const auto& d = layer.Get<LayerNormalizationDescriptor>();
    const unsigned int rank = info.m_InputTensorInfos[0].GetNumDimensions();
    if (d.m_Axis < 0 || static_cast<unsigned int>(d.m_Axis) >= rank) {
        return math::Refuse(reason, "LayerNormalization: axis " + std::to_string(d.m_Axis) +
                                        " is not normalized to [0, " + std::to_string(rank) + ")");
    }
    for (std::size_t i = 1; i < info.m_InputTensorInfos.size(); ++i) {
        const TensorShape& p = info.m_InputTensorInfos[i].GetShape();
        if (!VariesOnlyOverNormalizedDims(rank, static_cast<unsigned int>(d.m_Axis), p)) {
            return math::Refuse(reason, std::string("LayerNormalization: ") + (i == 1 ? "scale " : "B ") +
                                            p.ToString() + " varies over dims before axis " + std::to_string(d.m_Axis) +
                                            "; CpuRef only broadcasts it over the normalized dims");
        }
    }
    return true;
}

kernels::LayerNormalizationParams LayerNormalizationRefParams(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const auto& d = layer.Get<LayerNormalizationDescriptor>();
    const TensorShape& xs = info.m_InputTensorInfos[0].GetShape();
    const unsigned int rank = xs.GetNumDimensions(), axis = static_cast<unsigned int>(d.m_Axis);
    kernels::LayerNormalizationParams p;
    p.rows = math::Volume(xs, 0, axis);
    p.size = math::Volume(xs, axis, rank);
    p.eps = d.m_Eps;
    p.scaleIndex = UnlessIdentity(BroadcastIndex(xs, axis, info.m_InputTensorInfos[1].GetShape()));
    if (math::HasInput(info, 2)) p.biasIndex = UnlessIdentity(BroadcastIndex(xs, axis, info.m_InputTensorInfos[2].GetShape()));
    return p;
}

IWorkloadPtr LayerNormalizationRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<LayerNormalizationWorkload>(LayerNormalizationRefParams(layer, info), math::HasInput(info, 2));
}

}  // namespace trellis::ref
