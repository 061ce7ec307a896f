// CpuRef LayerNormalization: each row X[outer, :] over dims [axis, rank) becomes
// (x - mean) / sqrt(var + eps) * scale + B, mean and (biased) variance in double. Float32 only.
// The optional outputs 1 and 2 get each row's mean and 1 / sqrt(var + eps).
//
// Scale and B may broadcast (ONNX rule); CpuRef handles the forms that vary only over the
// normalized dims, which covers every real model: index tables built at create time map each
// position of the normalized block to its scale / B element.
#include "RefKernelTable.hpp"
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
    LayerNormalizationWorkload(std::size_t rows, std::size_t size, float eps, std::vector<std::size_t> scaleIndex,
                               std::vector<std::size_t> biasIndex)
        : m_Rows(rows),
          m_Size(size),
          m_Eps(eps),
          m_ScaleIndex(std::move(scaleIndex)),
          m_BiasIndex(std::move(biasIndex)) {}

    void Execute(const WorkloadIo& io) const override {
        const float* x = math::InputF32(io, 0);
        const float* scale = math::InputF32(io, 1);
        const float* bias = m_BiasIndex.empty() ? nullptr : math::InputF32(io, 2);
        float* y = math::OutputF32(io, 0);
        float* meanOut = io.m_Outputs.size() > 1 ? math::OutputF32(io, 1) : nullptr;
        float* invStdOut = io.m_Outputs.size() > 2 ? math::OutputF32(io, 2) : nullptr;
        for (std::size_t r = 0; r < m_Rows; ++r) {
            const float* xr = x + r * m_Size;
            float* yr = y + r * m_Size;
            double sum = 0.0;
            for (std::size_t i = 0; i < m_Size; ++i) sum += xr[i];
            const double mean = sum / static_cast<double>(m_Size);
            double sq = 0.0;
            for (std::size_t i = 0; i < m_Size; ++i) sq += (xr[i] - mean) * (xr[i] - mean);
            const double inv = 1.0 / std::sqrt(sq / static_cast<double>(m_Size) + m_Eps);
            if (meanOut) meanOut[r] = static_cast<float>(mean);
            if (invStdOut) invStdOut[r] = static_cast<float>(inv);
            for (std::size_t i = 0; i < m_Size; ++i) {
                const double v = (xr[i] - mean) * inv * scale[m_ScaleIndex[i]] + (bias ? bias[m_BiasIndex[i]] : 0.0f);
                yr[i] = static_cast<float>(v);
            }
        }
    }

private:
    const std::size_t m_Rows, m_Size;
    const float m_Eps;
    const std::vector<std::size_t> m_ScaleIndex, m_BiasIndex;
};

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

IWorkloadPtr LayerNormalizationRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const auto& d = layer.Get<LayerNormalizationDescriptor>();
    const TensorShape& xs = info.m_InputTensorInfos[0].GetShape();
    const unsigned int rank = xs.GetNumDimensions(), axis = static_cast<unsigned int>(d.m_Axis);
    std::vector<std::size_t> biasIndex;
    if (math::HasInput(info, 2)) biasIndex = BroadcastIndex(xs, axis, info.m_InputTensorInfos[2].GetShape());
    return std::make_unique<LayerNormalizationWorkload>(
        math::Volume(xs, 0, axis), math::Volume(xs, axis, rank), d.m_Eps,
        BroadcastIndex(xs, axis, info.m_InputTensorInfos[1].GetShape()), std::move(biasIndex));
}

}  // namespace trellis::ref
