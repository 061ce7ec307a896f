// CpuRef Pooling: N-d max and average pooling (global too) with strides, dilations, asymmetric
// pads, ceil_mode (already folded into the output shape by the core) and count_include_pad.
// Float32; max pooling also UInt8 (ONNX MaxPool-12's uint8 form).
//
// The window is a Cartesian product of per-dim taps, so the tables built at create time are per
// dim: for output index o, the input offsets of the taps inside the input, and how many taps lie
// inside the padded input [-pad_begin, in + pad_end). Average divides by the product of the
// latter (count_include_pad) or of the former, as ONNX Runtime and PyTorch do; a ceil_mode window
// that overhangs the end padding therefore counts only its taps inside the padded input.
#include "RefKernelTable.hpp"
#include "ops/RefMathCommon.hpp"

#include <algorithm>
#include <limits>
#include <vector>

namespace trellis::ref {

namespace {

struct PoolDimTaps {
    std::vector<std::vector<std::size_t>> offsets;  ///< per output index: tap * input stride, inside taps only
    std::vector<std::size_t> paddedCount;           ///< per output index: taps inside the padded input
};

class PoolingWorkload final : public IWorkload {
public:
    PoolingWorkload(const PoolingDescriptor& d, const TensorShape& xs, const TensorShape& ys)
        : m_Max(d.m_Algorithm == PoolingAlgorithm::Max), m_CountIncludePad(d.m_CountIncludePad) {
        const unsigned int rank = xs.GetNumDimensions();
        m_Planes = math::Volume(xs, 0, 2);
        m_InPlane = math::Volume(xs, 2, rank);
        m_OutPlane = math::Volume(ys, 2, rank);
        std::size_t stride = m_InPlane;
        for (unsigned int i = 2; i < rank; ++i) {
            const std::size_t d0 = i - 2;
            const long long in = xs[i], k = d.m_KernelShape[d0], s = d.m_Strides[d0], dl = d.m_Dilations[d0];
            const long long pb = d.m_PadsBegin[d0], pe = d.m_PadsEnd[d0];
            stride /= xs[i];
            PoolDimTaps taps;
            for (long long o = 0; o < ys[i]; ++o) {
                std::vector<std::size_t> offsets;
                std::size_t padded = 0;
                for (long long j = 0; j < k; ++j) {
                    const long long pos = o * s - pb + j * dl;
                    if (pos >= -pb && pos < in + pe) ++padded;
                    if (pos >= 0 && pos < in) offsets.push_back(static_cast<std::size_t>(pos) * stride);
                }
                taps.offsets.push_back(std::move(offsets));
                taps.paddedCount.push_back(padded);
            }
            m_Out.push_back(ys[i]);
            m_Taps.push_back(std::move(taps));
        }
    }

    void Execute(const WorkloadIo& io) const override {
        if (io.m_Inputs[0]->GetTensorInfo().GetDataType() == DataType::UInt8) {
            return Run(static_cast<const uint8_t*>(io.m_Inputs[0]->Map()), static_cast<uint8_t*>(io.m_Outputs[0]->Map()));
        }
        Run(math::InputF32(io, 0), math::OutputF32(io, 0));
    }

private:
    template <typename T>
    void Run(const T* x, T* y) const {
        const std::size_t nsp = m_Out.size();
        std::vector<std::size_t> oidx(nsp);
        std::vector<const std::vector<std::size_t>*> window(nsp);
        for (std::size_t p = 0; p < m_Planes; ++p) {
            const T* xp = x + p * m_InPlane;
            T* yp = y + p * m_OutPlane;
            std::fill(oidx.begin(), oidx.end(), 0);
            for (std::size_t o = 0; o < m_OutPlane; ++o) {
                std::size_t padded = 1, inside = 1;
                for (std::size_t d = 0; d < nsp; ++d) {
                    window[d] = &m_Taps[d].offsets[oidx[d]];
                    inside *= window[d]->size();
                    padded *= m_Taps[d].paddedCount[oidx[d]];
                }
                if (m_Max) {
                    T v = std::numeric_limits<T>::lowest();
                    ForEachTap(window, 0, 0, [&](std::size_t off) { v = std::max(v, xp[off]); });
                    yp[o] = v;
                } else {
                    double sum = 0.0;
                    ForEachTap(window, 0, 0, [&](std::size_t off) { sum += xp[off]; });
                    yp[o] = static_cast<T>(sum / static_cast<double>(m_CountIncludePad ? padded : inside));
                }
                for (std::size_t d = nsp; d-- > 0;) {
                    if (++oidx[d] < m_Out[d]) break;
                    oidx[d] = 0;
                }
            }
        }
    }

    // Calls f(offset) for every tap of the window: the sums of one offset per dim.
    template <typename F>
    static void ForEachTap(const std::vector<const std::vector<std::size_t>*>& window, std::size_t d, std::size_t base,
                           F&& f) {
        if (d == window.size()) {
            f(base);
            return;
        }
        for (std::size_t off : *window[d]) ForEachTap(window, d + 1, base + off, f);
    }

    const bool m_Max, m_CountIncludePad;
    std::size_t m_Planes = 0, m_InPlane = 0, m_OutPlane = 0;
    std::vector<std::size_t> m_Out;
    std::vector<PoolDimTaps> m_Taps;
};

}  // namespace

bool PoolingRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    const auto& d = layer.Get<PoolingDescriptor>();
    const bool maxUInt8 = d.m_Algorithm == PoolingAlgorithm::Max && !info.m_InputTensorInfos.empty() &&
                          info.m_InputTensorInfos[0].GetDataType() == DataType::UInt8;
    if (maxUInt8) {
        if (!math::RequireAllOfType("Pooling", info, DataType::UInt8, "Float32; UInt8 for max pooling", reason)) return false;
    } else if (!math::RequireAllFloat32("Pooling", info, reason)) {
        return false;
    }
    const std::size_t nsp = info.m_InputTensorInfos[0].GetNumDimensions() - 2;
    if (d.m_AutoPad != PaddingMode::Explicit || d.m_KernelShape.size() != nsp || d.m_Strides.size() != nsp ||
        d.m_Dilations.size() != nsp || d.m_PadsBegin.size() != nsp || d.m_PadsEnd.size() != nsp) {
        return math::Refuse(reason,
                            "Pooling: descriptor is not resolved (auto_pad must be explicit and kernel, strides, "
                            "dilations and pads must have one entry per spatial dim)");
    }
    return true;
}

IWorkloadPtr PoolingRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<PoolingWorkload>(layer.Get<PoolingDescriptor>(), info.m_InputTensorInfos[0].GetShape(),
                                             info.m_OutputTensorInfos[0].GetShape());
}

}  // namespace trellis::ref
