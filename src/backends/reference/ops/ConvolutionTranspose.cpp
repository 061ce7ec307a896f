// CpuRef ConvolutionTranspose: N-d transposed convolution with groups, strides, dilations, pads
// and output_padding (the core has already turned output_shape / auto_pad into explicit pads),
// as a GEMM into a column buffer followed by col2im. Float32 only.
//
// For image n and group g, with Cg = C / group input and Mg = M / group output channels:
//   col [Mg * prod(K), prod(I)] = W_g^T x X_g      (W_g is [Cg, Mg * prod(K)], X_g is [Cg, prod(I)])
//   Y_g = bias; Y_g[m][i * stride - pad_begin + k * dilation] += col[(m, k)][i]  (inside Y only)
// output_padding needs no code: it only makes Y longer, and those positions receive the bias.
#include "RefKernelTable.hpp"
#include "ops/RefMathCommon.hpp"

#include <algorithm>
#include <vector>

namespace trellis::ref {

namespace {

using math::Refuse;

struct ConvTransposeGeometry {
    std::size_t batch = 0, inChannels = 0, outChannels = 0, groups = 1;
    bool hasBias = false;
    std::vector<long long> in, kernel, out, strides, dilations, padsBegin;
    std::size_t inPlane = 1, outPlane = 1, kernelVolume = 1;
};

class ConvolutionTransposeWorkload final : public IWorkload {
public:
    explicit ConvolutionTransposeWorkload(ConvTransposeGeometry g) : m_G(std::move(g)) {}

    std::size_t GetScratchBytes() const override { return ColRows() * m_G.inPlane * sizeof(float); }

    void Execute(const WorkloadIo& io) const override {
        const float* x = math::InputF32(io, 0);
        const float* w = math::InputF32(io, 1);
        const float* bias = m_G.hasBias ? math::InputF32(io, 2) : nullptr;
        float* y = math::OutputF32(io, 0);
        float* col = static_cast<float*>(io.m_Scratch);

        const std::size_t cg = m_G.inChannels / m_G.groups, mg = m_G.outChannels / m_G.groups;
        const std::size_t rows = ColRows();
        std::vector<long long> counters(2 * m_G.in.size());  // col2im's kernel and input odometers
        for (std::size_t n = 0; n < m_G.batch; ++n) {
            for (std::size_t g = 0; g < m_G.groups; ++g) {
                const float* xg = x + (n * m_G.inChannels + g * cg) * m_G.inPlane;
                const float* wg = w + g * cg * rows;
                float* yg = y + (n * m_G.outChannels + g * mg) * m_G.outPlane;
                std::fill_n(col, rows * m_G.inPlane, 0.0f);
                // col = W_g^T x X_g: A(i, p) = W_g[p][i], i.e. row stride 1 and column stride `rows`.
                math::GemmAccumulate(rows, m_G.inPlane, cg, 1.0f, wg, 1, rows, xg, m_G.inPlane, col, m_G.inPlane);
                for (std::size_t m = 0; m < mg; ++m) {
                    std::fill_n(yg + m * m_G.outPlane, m_G.outPlane, bias ? bias[g * mg + m] : 0.0f);
                }
                Col2Im(col, mg, yg, counters);
            }
        }
    }

private:
    std::size_t ColRows() const { return m_G.outChannels / m_G.groups * m_G.kernelVolume; }

    // Scatters col row (m, k) onto output channel m: input position i lands on
    // o = i * stride - pad_begin + k * dilation when o is inside Y. Input positions run as an
    // odometer over all but the last spatial dim; the last dim is the inner loop.
    void Col2Im(const float* col, std::size_t channels, float* y, std::vector<long long>& counters) const {
        const std::size_t nsp = m_G.in.size();
        long long* kidx = counters.data();
        long long* iidx = counters.data() + nsp;
        const long long inLast = m_G.in[nsp - 1], outLast = m_G.out[nsp - 1], strideLast = m_G.strides[nsp - 1];
        const std::size_t outerCount = inLast == 0 ? 0 : m_G.inPlane / static_cast<std::size_t>(inLast);
        const float* src = col;
        for (std::size_t m = 0; m < channels; ++m) {
            float* plane = y + m * m_G.outPlane;
            std::fill_n(kidx, nsp, 0);
            for (std::size_t kf = 0; kf < m_G.kernelVolume; ++kf) {
                std::fill_n(iidx, nsp, 0);
                const long long offLast = kidx[nsp - 1] * m_G.dilations[nsp - 1] - m_G.padsBegin[nsp - 1];
                for (std::size_t outer = 0; outer < outerCount; ++outer) {
                    bool inside = true;
                    long long base = 0;
                    for (std::size_t d = 0; d + 1 < nsp; ++d) {
                        const long long o = iidx[d] * m_G.strides[d] + kidx[d] * m_G.dilations[d] - m_G.padsBegin[d];
                        if (o < 0 || o >= m_G.out[d]) {
                            inside = false;
                            break;
                        }
                        base = base * m_G.out[d] + o;
                    }
                    if (inside) {
                        float* row = plane + base * outLast;
                        for (long long i = 0; i < inLast; ++i) {
                            const long long o = i * strideLast + offLast;
                            if (o >= 0 && o < outLast) row[o] += src[i];
                        }
                    }
                    src += inLast;
                    for (std::size_t d = nsp - 1; d-- > 0;) {
                        if (++iidx[d] < m_G.in[d]) break;
                        iidx[d] = 0;
                    }
                }
                for (std::size_t d = nsp; d-- > 0;) {
                    if (++kidx[d] < m_G.kernel[d]) break;
                    kidx[d] = 0;
                }
            }
        }
    }

    const ConvTransposeGeometry m_G;
};

}  // namespace

bool ConvolutionTransposeRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    if (!math::RequireAllFloat32("ConvolutionTranspose", info, reason)) return false;
    const auto& d = layer.Get<ConvolutionDescriptor>();
    const std::size_t nsp = info.m_InputTensorInfos[0].GetNumDimensions() - 2;
    if (d.m_AutoPad != PaddingMode::Explicit || !d.m_OutputShape.empty() || d.m_Strides.size() != nsp ||
        d.m_Dilations.size() != nsp || d.m_PadsBegin.size() != nsp) {
        return Refuse(reason,
                      "ConvolutionTranspose: descriptor is not resolved (auto_pad and output_shape must be "
                      "turned into explicit pads, one entry per spatial dim)");
    }
    return true;
}

IWorkloadPtr ConvolutionTransposeRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const auto& d = layer.Get<ConvolutionDescriptor>();
    const TensorShape& xs = info.m_InputTensorInfos[0].GetShape();
    const TensorShape& ws = info.m_InputTensorInfos[1].GetShape();
    const TensorShape& ys = info.m_OutputTensorInfos[0].GetShape();
    ConvTransposeGeometry g;
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
    return std::make_unique<ConvolutionTransposeWorkload>(std::move(g));
}

}  // namespace trellis::ref
