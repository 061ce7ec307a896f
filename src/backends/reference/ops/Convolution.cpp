// CpuRef Convolution: N-d (1-D, 2-D, 3-D, ...) convolution with groups, strides, dilations and
// asymmetric pads, as im2col + a plain GEMM per (image, group). Float32, and Signed32 (wrapping;
// the accumulator the ONNX importer builds ConvInteger/QLinearConv on).
//
// For image n and group g, with Cg = C / group input and Mg = M / group output channels:
//   col [Cg * prod(K), prod(O)]  (im2col of the group's input channels; zero where padded)
//   Y_g [Mg, prod(O)] = bias + W_g [Mg, Cg * prod(K)] x col
// A 1x1 kernel with stride 1 and no pads needs no im2col: the input planes already are col.
// The kernel is the snippet kernels/Convolution.hpp.
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/Convolution.hpp"
#include "ops/RefMathCommon.hpp"


namespace trellis::ref {

namespace {

using math::Refuse;

template <typename T>
class ConvolutionWorkload final : public IWorkload {
public:
    explicit ConvolutionWorkload(kernels::ConvParams p) : m_P(std::move(p)) {}
    std::size_t GetScratchBytes() const override { return kernels::ConvWorkspaceBytes<T>(m_P); }
    void Execute(const WorkloadIo& io) const override {
        kernels::Conv<T>(m_P, static_cast<const T*>(io.m_Inputs[0]->Map()), static_cast<const T*>(io.m_Inputs[1]->Map()),
                         m_P.hasBias ? static_cast<const T*>(io.m_Inputs[2]->Map()) : nullptr,
                         static_cast<T*>(io.m_Outputs[0]->Map()), io.m_Scratch);
    }
private:
    const kernels::ConvParams m_P;
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

kernels::ConvParams ConvolutionRefParams(const QueueDescriptor& layer, const WorkloadInfo& info) {
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
    bool direct = true;
    for (std::size_t k = 0; k < g.in.size(); ++k) {
        direct = direct && g.kernel[k] == 1 && g.strides[k] == 1 && g.padsBegin[k] == 0 && g.in[k] == g.out[k];
    }
    g.direct = direct;
    return g;
}

IWorkloadPtr ConvolutionRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    if (info.m_InputTensorInfos[0].GetDataType() == DataType::Signed32) {
        return std::make_unique<ConvolutionWorkload<int32_t>>(ConvolutionRefParams(layer, info));
    }
    return std::make_unique<ConvolutionWorkload<float>>(ConvolutionRefParams(layer, info));
}

}  // namespace trellis::ref
