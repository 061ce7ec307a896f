// CpuRef Convolution: N-d (1-D, 2-D, 3-D, ...) convolution with groups, strides, dilations and
// asymmetric pads, as im2col + a plain GEMM per (image, group). Float32, and Signed32 (wrapping;
// the accumulator the ONNX importer builds ConvInteger/QLinearConv on).
//
// For image n and group g, with Cg = C / group input and Mg = M / group output channels:
//   col [Cg * prod(K), prod(O)]  (im2col of the group's input channels; zero where padded)
//   Y_g [Mg, prod(O)] = bias + W_g [Mg, Cg * prod(K)] x col
// A 1x1 kernel with stride 1 and no pads needs no im2col: the input planes already are col.
#include "RefKernelTable.hpp"
#include "ops/RefMathCommon.hpp"

#include <algorithm>
#include <vector>

namespace trellis::ref {

namespace {

using math::Refuse;

struct ConvGeometry {
    std::size_t batch = 0, inChannels = 0, outChannels = 0, groups = 1;
    bool hasBias = false;
    std::vector<long long> in, kernel, out, strides, dilations, padsBegin;
    std::size_t inPlane = 1, outPlane = 1, kernelVolume = 1;
};

template <typename T>
class ConvolutionWorkload final : public IWorkload {
public:
    explicit ConvolutionWorkload(ConvGeometry g) : m_G(std::move(g)) {
        bool direct = true;
        for (std::size_t d = 0; d < m_G.in.size(); ++d) {
            direct =
                direct && m_G.kernel[d] == 1 && m_G.strides[d] == 1 && m_G.padsBegin[d] == 0 && m_G.in[d] == m_G.out[d];
        }
        m_Direct = direct;
    }

    std::size_t GetScratchBytes() const override { return m_Direct ? 0 : ColRows() * m_G.outPlane * sizeof(T); }

    void Execute(const WorkloadIo& io) const override {
        const T* x = static_cast<const T*>(io.m_Inputs[0]->Map());
        const T* w = static_cast<const T*>(io.m_Inputs[1]->Map());
        const T* bias = m_G.hasBias ? static_cast<const T*>(io.m_Inputs[2]->Map()) : nullptr;
        T* y = static_cast<T*>(io.m_Outputs[0]->Map());
        T* col = static_cast<T*>(io.m_Scratch);

        const std::size_t cg = m_G.inChannels / m_G.groups, mg = m_G.outChannels / m_G.groups;
        const std::size_t rows = ColRows();
        std::vector<long long> counters(2 * m_G.in.size());  // im2col's kernel and output odometers
        for (std::size_t n = 0; n < m_G.batch; ++n) {
            for (std::size_t g = 0; g < m_G.groups; ++g) {
                const T* xg = x + (n * m_G.inChannels + g * cg) * m_G.inPlane;
                T* yg = y + (n * m_G.outChannels + g * mg) * m_G.outPlane;
                for (std::size_t m = 0; m < mg; ++m) {
                    std::fill_n(yg + m * m_G.outPlane, m_G.outPlane, bias ? bias[g * mg + m] : T(0));
                }
                const T* b = xg;
                if (!m_Direct) {
                    Im2Col(xg, cg, col, counters);
                    b = col;
                }
                math::GemmAccumulate<T>(mg, m_G.outPlane, rows, T(1), w + g * mg * rows, rows, 1, b, m_G.outPlane, yg,
                                     m_G.outPlane);
            }
        }
    }

private:
    std::size_t ColRows() const { return m_G.inChannels / m_G.groups * m_G.kernelVolume; }

    // Row (c, k) of col holds, for every output position o, X[c][o * stride - pad_begin + k * dilation]
    // (0 outside the input). Output positions run as an odometer over all but the last spatial dim;
    // the last dim is the contiguous inner loop.
    void Im2Col(const T* x, std::size_t channels, T* col, std::vector<long long>& counters) const {
        const std::size_t nsp = m_G.in.size();
        long long* kidx = counters.data();
        long long* oidx = counters.data() + nsp;
        const long long inLast = m_G.in[nsp - 1], outLast = m_G.out[nsp - 1], strideLast = m_G.strides[nsp - 1];
        const std::size_t outerCount = m_G.outPlane / static_cast<std::size_t>(outLast);
        T* dst = col;
        for (std::size_t c = 0; c < channels; ++c) {
            const T* plane = x + c * m_G.inPlane;
            std::fill_n(kidx, nsp, 0);
            for (std::size_t kf = 0; kf < m_G.kernelVolume; ++kf) {
                std::fill_n(oidx, nsp, 0);
                const long long offLast = kidx[nsp - 1] * m_G.dilations[nsp - 1] - m_G.padsBegin[nsp - 1];
                for (std::size_t outer = 0; outer < outerCount; ++outer) {
                    bool inside = true;
                    long long base = 0;
                    for (std::size_t d = 0; d + 1 < nsp; ++d) {
                        const long long i = oidx[d] * m_G.strides[d] + kidx[d] * m_G.dilations[d] - m_G.padsBegin[d];
                        if (i < 0 || i >= m_G.in[d]) {
                            inside = false;
                            break;
                        }
                        base = base * m_G.in[d] + i;
                    }
                    if (!inside) {
                        std::fill_n(dst, outLast, T(0));
                    } else {
                        const T* row = plane + base * inLast;
                        for (long long o = 0; o < outLast; ++o) {
                            const long long i = o * strideLast + offLast;
                            dst[o] = (i >= 0 && i < inLast) ? row[i] : T(0);
                        }
                    }
                    dst += outLast;
                    for (std::size_t d = nsp - 1; d-- > 0;) {
                        if (++oidx[d] < m_G.out[d]) break;
                        oidx[d] = 0;
                    }
                }
                for (std::size_t d = nsp; d-- > 0;) {
                    if (++kidx[d] < m_G.kernel[d]) break;
                    kidx[d] = 0;
                }
            }
        }
    }

    const ConvGeometry m_G;
    bool m_Direct = false;
};

}  // namespace

bool ConvolutionRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    const DataType t = info.m_InputTensorInfos.empty() ? DataType::Float32 : info.m_InputTensorInfos[0].GetDataType();
    if (!math::RequireAllOfType("Convolution", info, t == DataType::Signed32 ? t : DataType::Float32, "Float32, Signed32",
                                reason)) {
        return false;
    }
    const auto& d = layer.Get<ConvolutionDescriptor>();
    const std::size_t nsp = info.m_InputTensorInfos[0].GetNumDimensions() - 2;
    if (d.m_AutoPad != PaddingMode::Explicit || d.m_Strides.size() != nsp || d.m_Dilations.size() != nsp ||
        d.m_PadsBegin.size() != nsp || d.m_PadsEnd.size() != nsp) {
        return Refuse(reason,
                      "Convolution: descriptor is not resolved (auto_pad must be explicit and strides, dilations "
                      "and pads must have one entry per spatial dim)");
    }
    return true;
}

IWorkloadPtr ConvolutionRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const auto& d = layer.Get<ConvolutionDescriptor>();
    const TensorShape& xs = info.m_InputTensorInfos[0].GetShape();
    const TensorShape& ws = info.m_InputTensorInfos[1].GetShape();
    const TensorShape& ys = info.m_OutputTensorInfos[0].GetShape();
    ConvGeometry g;
    g.batch = xs[0];
    g.inChannels = xs[1];
    g.outChannels = ys[1];
    g.groups = d.m_Groups;
    g.hasBias = math::HasInput(info, 2);
    for (unsigned int i = 2; i < xs.GetNumDimensions(); ++i) {
        g.in.push_back(xs[i]);
        g.kernel.push_back(ws[i]);
        g.out.push_back(ys[i]);
        g.strides.push_back(d.m_Strides[i - 2]);
        g.dilations.push_back(d.m_Dilations[i - 2]);
        g.padsBegin.push_back(d.m_PadsBegin[i - 2]);
        g.inPlane *= xs[i];
        g.outPlane *= ys[i];
        g.kernelVolume *= ws[i];
    }
    if (info.m_InputTensorInfos[0].GetDataType() == DataType::Signed32) {
        return std::make_unique<ConvolutionWorkload<int32_t>>(std::move(g));
    }
    return std::make_unique<ConvolutionWorkload<float>>(std::move(g));
}

}  // namespace trellis::ref
