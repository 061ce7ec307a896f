// CpuRef Pooling: N-d max and average pooling (global too) with strides, dilations, asymmetric
// pads, ceil_mode (already folded into the output shape by the core) and count_include_pad.
// Float32; max pooling (global too) also UInt8.
//
// The window is a Cartesian product of per-dim taps, so the tables built at create time are per
// dim: for output index o, the range of taps inside the input, and how many taps lie inside the
// padded input [-pad_begin, in + pad_end). Average divides by the product of the
// latter (count_include_pad) or of the former, as ONNX Runtime and PyTorch do; a ceil_mode window
// that overhangs the end padding therefore counts only its taps inside the padded input.
//
// Max pooling's optional output 1 (ONNX Indices, Signed64) holds the flat offset of the first
// maximum of each window in the whole input: (n * C + c) * plane + the offset inside the plane,
// row major, or with the spatial dims' order reversed for storage_order 1 (ONNX's reference).
#include "RefKernelTable.hpp"
#include "ops/RefMathCommon.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace trellis::ref {

namespace {

// The window's taps j in [0, k) at positions base + j * dilation lying in [lo, hi), as the
// range [first, last) of j: computed, not counted tap by tap, so a kernel far wider than its input
// (a fuzzed kernel_shape of 56623103 took 25 s to build its tables) costs nothing extra.
std::pair<long long, long long> TapsIn(long long base, long long dilation, long long k, long long lo, long long hi) {
    auto ceilDiv = [](long long a, long long b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); };
    const long long first = std::clamp(ceilDiv(lo - base, dilation), 0LL, k);
    const long long last = std::clamp(ceilDiv(hi - base, dilation), 0LL, k);
    return {first, std::max(first, last)};
}

// One spatial dim's windows. Only ranges are stored (O(outputs) memory): a table of every tap's
// offset took outputs x kernel entries (a fuzzed 1-d MaxPool of 220000 inputs and a kernel of
// 4232 asked for 3.7 GB).
struct PoolDimTaps {
    std::vector<long long> start;                         ///< per output index: position of tap 0
    std::vector<std::pair<long long, long long>> inside;  ///< per output index: taps [first, last) inside the input
    std::vector<std::size_t> paddedCount;                 ///< per output index: taps inside the padded input
    long long dilation = 1;
    std::size_t stride = 0;                               ///< input elements between two positions of this dim
};

template <typename T>
class PoolingWorkload final : public IWorkload {
public:
    PoolingWorkload(const PoolingDescriptor& d, const TensorShape& xs, const TensorShape& ys)
        : m_Max(d.m_Algorithm == PoolingAlgorithm::Max),
          m_CountIncludePad(d.m_CountIncludePad),
          m_ColumnMajor(d.m_StorageOrder == 1) {
        const unsigned int rank = xs.GetNumDimensions();
        for (unsigned int i = 2; i < rank; ++i) m_In.push_back(xs[i]);
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
            taps.dilation = dl;
            taps.stride = stride;
            for (long long o = 0; o < ys[i]; ++o) {
                const long long base = o * s - pb;
                const auto [padFirst, padLast] = TapsIn(base, dl, k, -pb, in + pe);
                taps.start.push_back(base);
                taps.inside.push_back(TapsIn(base, dl, k, 0, in));
                taps.paddedCount.push_back(static_cast<std::size_t>(padLast - padFirst));
            }
            m_Out.push_back(ys[i]);
            m_Taps.push_back(std::move(taps));
        }
    }

    void Execute(const WorkloadIo& io) const override {
        const T* x = static_cast<const T*>(io.m_Inputs[0]->Map());
        T* y = static_cast<T*>(io.m_Outputs[0]->Map());
        int64_t* indices = io.m_Outputs.size() > 1 ? static_cast<int64_t*>(io.m_Outputs[1]->Map()) : nullptr;
        const std::size_t nsp = m_Out.size();
        std::vector<std::size_t> oidx(nsp);
        std::vector<Window> window(nsp);
        for (std::size_t p = 0; p < m_Planes; ++p) {
            const T* xp = x + p * m_InPlane;
            T* yp = y + p * m_OutPlane;
            std::fill(oidx.begin(), oidx.end(), 0);
            for (std::size_t o = 0; o < m_OutPlane; ++o) {
                std::size_t padded = 1, inside = 1;
                for (std::size_t d = 0; d < nsp; ++d) {
                    const PoolDimTaps& taps = m_Taps[d];
                    const auto [first, last] = taps.inside[oidx[d]];
                    window[d] = Window{taps.start[oidx[d]], first, last, taps.dilation, taps.stride};
                    inside *= static_cast<std::size_t>(last - first);
                    padded *= taps.paddedCount[oidx[d]];
                }
                if (m_Max) {
                    T v = std::numeric_limits<T>::lowest();
                    std::size_t best = 0;
                    ForEachTap(window, 0, 0, [&](std::size_t off) {
                        if (xp[off] > v) {
                            v = xp[off];
                            best = off;
                        }
                    });
                    yp[o] = v;
                    if (indices) indices[p * m_OutPlane + o] = static_cast<int64_t>(p * m_InPlane + PlaneIndex(best));
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

private:
    // A row-major offset inside one spatial plane, as ONNX reports it for the storage order.
    std::size_t PlaneIndex(std::size_t rowMajor) const {
        if (!m_ColumnMajor) return rowMajor;
        std::vector<std::size_t> coord(m_In.size());
        for (std::size_t d = m_In.size(); d-- > 0;) {  // the last dim varies fastest in rowMajor
            coord[d] = rowMajor % m_In[d];
            rowMajor /= m_In[d];
        }
        std::size_t index = 0, stride = 1;
        for (std::size_t d = 0; d < m_In.size(); ++d) {  // the first dim varies fastest in column major
            index += coord[d] * stride;
            stride *= m_In[d];
        }
        return index;
    }

    // One dim of one window: the taps j in [first, last) at input positions start + j * dilation.
    struct Window {
        long long start = 0, first = 0, last = 0, dilation = 1;
        std::size_t stride = 0;
    };

    // Calls f(offset) for every tap of the window inside the input: the sums of one offset per dim.
    template <typename F>
    static void ForEachTap(const std::vector<Window>& window, std::size_t d, std::size_t base, F&& f) {
        if (d == window.size()) {
            f(base);
            return;
        }
        const Window& w = window[d];
        for (long long j = w.first; j < w.last; ++j) {
            ForEachTap(window, d + 1, base + static_cast<std::size_t>(w.start + j * w.dilation) * w.stride, f);
        }
    }

    const bool m_Max, m_CountIncludePad, m_ColumnMajor;
    std::vector<std::size_t> m_In;  ///< the input's spatial dims
    std::size_t m_Planes = 0, m_InPlane = 0, m_OutPlane = 0;
    std::vector<std::size_t> m_Out;
    std::vector<PoolDimTaps> m_Taps;
};

}  // namespace

bool PoolingRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    const auto& d = layer.Get<PoolingDescriptor>();
    const DataType t = info.m_InputTensorInfos[0].GetDataType();
    const bool max = d.m_Algorithm == PoolingAlgorithm::Max;
    if (t != DataType::Float32 && !(max && t == DataType::UInt8)) {
        return math::Refuse(reason, std::string("Pooling: data type ") + GetDataTypeName(t) + " not supported by CpuRef (" +
                                        (max ? "Float32, UInt8" : "Float32 only") + ")");
    }
    if (info.m_OutputTensorInfos[0].GetDataType() != t) {
        return math::Refuse(reason, "Pooling: output type differs from the input's");
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
    const auto& d = layer.Get<PoolingDescriptor>();
    const TensorShape& xs = info.m_InputTensorInfos[0].GetShape();
    const TensorShape& ys = info.m_OutputTensorInfos[0].GetShape();
    if (info.m_InputTensorInfos[0].GetDataType() == DataType::UInt8) {
        return std::make_unique<PoolingWorkload<uint8_t>>(d, xs, ys);
    }
    return std::make_unique<PoolingWorkload<float>>(d, xs, ys);
}

}  // namespace trellis::ref
