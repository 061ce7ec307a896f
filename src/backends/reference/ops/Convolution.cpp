// CpuRef Convolution: N-d (1-D, 2-D, 3-D, ...) convolution with groups, strides, dilations and
// asymmetric pads, as im2col + a plain GEMM per (image, group). Float32; Float16 and BFloat16
// (widened exactly to double, the double kernel, each result rounded once); and Signed32 (wrapping;
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
#include "ops/RefFloatIo.hpp"
#include "ops/RefMathCommon.hpp"

#include <vector>


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

// Float16 / BFloat16 through the double kernel.
class HalfConvolutionWorkload final : public IWorkload {
public:
    HalfConvolutionWorkload(kernels::ConvParams p, DataType type, std::size_t xCount, std::size_t wCount,
                            std::size_t yCount)
        : m_P(std::move(p)), m_Type(type), m_XCount(xCount), m_WCount(wCount), m_YCount(yCount) {}
    std::size_t GetScratchBytes() const override { return kernels::ConvWorkspaceBytes<double>(m_P); }
    void Execute(const WorkloadIo& io) const override {
        const std::vector<double> x = floatio::Read(m_Type, io.m_Inputs[0]->Map(), m_XCount);
        const std::vector<double> w = floatio::Read(m_Type, io.m_Inputs[1]->Map(), m_WCount);
        const std::vector<double> bias =
            m_P.hasBias ? floatio::Read(m_Type, io.m_Inputs[2]->Map(), m_P.outChannels) : std::vector<double>();
        std::vector<double> y(m_YCount);
        kernels::Conv<double>(m_P, x.data(), w.data(), m_P.hasBias ? bias.data() : nullptr, y.data(), io.m_Scratch);
        floatio::WriteAll(m_Type, y, io.m_Outputs[0]->Map());
    }
private:
    const kernels::ConvParams m_P;
    const DataType m_Type;
    const std::size_t m_XCount, m_WCount, m_YCount;
};

}  // namespace

bool ConvolutionRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    const DataType t = info.m_InputTensorInfos.empty() ? DataType::Float32 : info.m_InputTensorInfos[0].GetDataType();
    const bool known = t == DataType::Signed32 || floatio::IsHalfType(t);
    if (!math::RequireAllOfType("Convolution", info, known ? t : DataType::Float32, "Float32, Float16, BFloat16, Signed32",
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
    const DataType t = info.m_InputTensorInfos[0].GetDataType();
    if (t == DataType::Signed32) return std::make_unique<ConvolutionWorkload<int32_t>>(ConvolutionRefParams(layer, info));
    if (floatio::IsHalfType(t)) {
        return std::make_unique<HalfConvolutionWorkload>(ConvolutionRefParams(layer, info), t,
                                                         info.m_InputTensorInfos[0].GetNumElements(),
                                                         info.m_InputTensorInfos[1].GetNumElements(),
                                                         info.m_OutputTensorInfos[0].GetNumElements());
    }
    return std::make_unique<ConvolutionWorkload<float>>(ConvolutionRefParams(layer, info));
}

}  // namespace trellis::ref
