// Convolution (ONNX Conv): validation and shape inference.
//
// X [N, C, D1..Dk], W [M, C/group, K1..Kk], optional B [M] -> Y [N, M, O1..Ok] with
// O = floor((D + pad_begin + pad_end - ((K - 1) * dilation + 1)) / stride) + 1.
// Float types, and Signed32 (the integer convolution the ONNX importer builds ConvInteger and
// QLinearConv from: the accumulator is Signed32 like ONNX's).
#include "core/InferContext.hpp"
#include "core/ops/SpatialWindow.hpp"

namespace trellis::core {

std::vector<TensorInfo> ConvolutionInfer(InferContext& ctx) {
    auto& d = ctx.Desc<ConvolutionDescriptor>();
    const TensorInfo& x = ctx.Input(0);
    const TensorInfo& w = ctx.Input(1);
    ctx.ExpectTypeIn(0, {DataType::Float32, DataType::Float16, DataType::BFloat16, DataType::Float64, DataType::Signed32});
    ctx.ExpectType(1, x.GetDataType());

    const unsigned int rank = x.GetNumDimensions();
    if (rank < 3) {
        ctx.Fail("input X must be N x C x spatial... (rank >= 3), got shape " + x.GetShape().ToString());
    }
    if (w.GetNumDimensions() != rank) {
        ctx.Fail("weights W " + w.GetShape().ToString() + " must have the rank of input X " + x.GetShape().ToString() +
                 " (M x C/group x kernel...)");
    }
    if (!d.m_OutputPadding.empty() || !d.m_OutputShape.empty()) {
        ctx.Fail("output_padding/output_shape are ConvolutionTranspose attributes, not Convolution ones");
    }
    if (d.m_Groups == 0) ctx.Fail("group must be >= 1, got 0");

    const TensorShape& xs = x.GetShape();
    const TensorShape& ws = w.GetShape();
    const unsigned int channels = xs[1], outChannels = ws[0], groups = d.m_Groups;
    if (static_cast<unsigned long long>(ws[1]) * groups != channels) {
        ctx.Fail("weight input channels W[1]=" + std::to_string(ws[1]) + " x group=" + std::to_string(groups) +
                 " must equal input channels X[1]=" + std::to_string(channels) + " (W " + ws.ToString() + ", X " +
                 xs.ToString() + ")");
    }
    if (outChannels % groups != 0) {
        ctx.Fail("output channels W[0]=" + std::to_string(outChannels) +
                 " must be divisible by group=" + std::to_string(groups));
    }

    const unsigned int nsp = rank - 2;
    std::vector<unsigned int> in(nsp), kernel(nsp);
    for (unsigned int i = 0; i < nsp; ++i) {
        in[i] = xs[i + 2];
        kernel[i] = ws[i + 2];
    }
    if (!d.m_KernelShape.empty() && d.m_KernelShape != kernel) {
        ctx.Fail("kernel_shape " + spatial::DimsToString(d.m_KernelShape) +
                 " does not match the weights' spatial dims " + spatial::DimsToString(kernel) + " (W " + ws.ToString() +
                 ")");
    }
    d.m_KernelShape = kernel;
    spatial::ResolvePerDim(ctx, d.m_Strides, nsp, 1, "strides", true);
    spatial::ResolvePerDim(ctx, d.m_Dilations, nsp, 1, "dilations", true);
    spatial::ResolveForwardPads(ctx, d.m_AutoPad, in, kernel, d.m_Strides, d.m_Dilations, d.m_PadsBegin, d.m_PadsEnd);

    if (ctx.HasInput(2)) {
        ctx.ExpectType(2, x.GetDataType());
        const TensorShape& bs = ctx.Input(2).GetShape();
        if (bs != TensorShape({outChannels})) {
            ctx.Fail("bias B " + bs.ToString() + " must be 1-D with one value per output channel (" +
                     std::to_string(outChannels) + ")");
        }
    } else if (ctx.GetNumInputs() > 2) {
        ctx.AbsorbInput(2);  // an empty placeholder for the omitted optional bias
    }

    std::vector<unsigned int> out = {xs[0], outChannels};
    for (unsigned int i = 0; i < nsp; ++i) {
        out.push_back(spatial::ForwardOutputSize(ctx, i, in[i], kernel[i], d.m_Strides[i], d.m_Dilations[i],
                                                 d.m_PadsBegin[i], d.m_PadsEnd[i], false));
    }
    return {TensorInfo(TensorShape(out), x.GetDataType())};
}

}  // namespace trellis::core
