// CpuRef ConvolutionTranspose: N-d transposed convolution with groups, strides, dilations, pads
// and output_padding (the core has already turned output_shape / auto_pad into explicit pads),
// as a GEMM into a column buffer followed by col2im. Float32 only.
//
// For image n and group g, with Cg = C / group input and Mg = M / group output channels:
//   col [Mg * prod(K), prod(I)] = W_g^T x X_g      (W_g is [Cg, Mg * prod(K)], X_g is [Cg, prod(I)])
//   Y_g = bias; Y_g[m][i * stride - pad_begin + k * dilation] += col[(m, k)][i]  (inside Y only)
// output_padding needs no code: it only makes Y longer, and those positions receive the bias.
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/ConvolutionTranspose.hpp"
#include "ops/RefMathCommon.hpp"

#include <algorithm>
#include <vector>

namespace trellis::ref {

namespace {

using math::Refuse;

class ConvolutionTransposeWorkload final : public IWorkload {
public:
    explicit ConvolutionTransposeWorkload(kernels::ConvParams p) : m_P(std::move(p)) {}
    std::size_t GetScratchBytes() const override { return kernels::ConvTransposeWorkspaceBytes(m_P); }
    void Execute(const WorkloadIo& io) const override {
        kernels::ConvTranspose(m_P, math::InputF32(io, 0), math::InputF32(io, 1), m_P.hasBias ? math::InputF32(io, 2) : nullptr,
                               math::OutputF32(io, 0), io.m_Scratch);
    }
private:
    const kernels::ConvParams m_P;
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

kernels::ConvParams ConvolutionTransposeRefParams(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const auto& d = layer.Get<ConvolutionDescriptor>();
    const TensorShape& xs = info.m_InputTensorInfos[0].GetShape();
    const TensorShape& ws = info.m_InputTensorInfos[1].GetShape();
    const TensorShape& ys = info.m_OutputTensorInfos[0].GetShape();
    kernels::ConvParams g;
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
    return g;
}

IWorkloadPtr ConvolutionTransposeRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<ConvolutionTransposeWorkload>(ConvolutionTransposeRefParams(layer, info));
}

}  // namespace trellis::ref
