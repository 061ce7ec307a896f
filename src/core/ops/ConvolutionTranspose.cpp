// ConvolutionTranspose (ONNX ConvTranspose): validation and shape inference.
//
// X [N, C, D1..Dk], W [C, M/group, K1..Kk], optional B [M] -> Y [N, M, O1..Ok] with
// O = stride * (D - 1) + output_padding + ((K - 1) * dilation + 1) - pad_begin - pad_end.
// output_shape and auto_pad are turned into explicit pads here (ONNX spec rules), so a backend
// only ever sees explicit pads, output_padding and an empty m_OutputShape.
#include "core/InferContext.hpp"
#include "core/ops/SpatialWindow.hpp"

namespace trellis::core {

std::vector<TensorInfo> ConvolutionTransposeInfer(InferContext& ctx) {
    auto& d = ctx.Desc<ConvolutionDescriptor>();
    const TensorInfo& x = ctx.Input(0);
    const TensorInfo& w = ctx.Input(1);
    ctx.ExpectTypeIn(0, {DataType::Float32, DataType::Float16, DataType::BFloat16, DataType::Float64});
    ctx.ExpectType(1, x.GetDataType());

    const unsigned int rank = x.GetNumDimensions();
    if (rank < 3) {
        ctx.Fail("input X must be N x C x spatial... (rank >= 3), got shape " + x.GetShape().ToString());
    }
    if (w.GetNumDimensions() != rank) {
        ctx.Fail("weights W " + w.GetShape().ToString() + " must have the rank of input X " + x.GetShape().ToString() +
                 " (C x M/group x kernel...)");
    }
    if (d.m_Groups == 0) ctx.Fail("group must be >= 1, got 0");

    const TensorShape& xs = x.GetShape();
    const TensorShape& ws = w.GetShape();
    const unsigned int channels = xs[1], groups = d.m_Groups;
    if (ws[0] != channels) {
        ctx.Fail("weights W[0]=" + std::to_string(ws[0]) + " must equal input channels X[1]=" +
                 std::to_string(channels) + " (W " + ws.ToString() + ", X " + xs.ToString() + ")");
    }
    if (channels % groups != 0) {
        ctx.Fail("input channels X[1]=" + std::to_string(channels) +
                 " must be divisible by group=" + std::to_string(groups));
    }
    const unsigned int outChannels = ws[1] * groups;

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
    spatial::ResolvePerDim(ctx, d.m_OutputPadding, nsp, 0, "output_padding", false);

    // Full (unpadded) output length along each dim.
    std::vector<long long> full(nsp);
    for (unsigned int i = 0; i < nsp; ++i) {
        full[i] = static_cast<long long>(d.m_Strides[i]) * (static_cast<long long>(in[i]) - 1) + d.m_OutputPadding[i] +
                  spatial::EffectiveKernel(kernel[i], d.m_Dilations[i]);
    }

    // A requested output shape (explicit, or in * stride for SAME_*) fixes the total padding; ONNX
    // puts the odd element at the end for SAME_UPPER and at the beginning otherwise. A request
    // larger than the full output (negative total padding) yields extra trailing positions that
    // receive only the bias, as ONNX Runtime does: we express them as extra output_padding.
    std::vector<unsigned int> target;
    if (!d.m_OutputShape.empty()) {
        if (d.m_OutputShape.size() == nsp) target = d.m_OutputShape;
        else if (d.m_OutputShape.size() == rank) target.assign(d.m_OutputShape.begin() + 2, d.m_OutputShape.end());
        else {
            ctx.Fail("output_shape " + spatial::DimsToString(d.m_OutputShape) + " must list the " +
                     std::to_string(nsp) + " spatial output dims");
        }
    } else if (d.m_AutoPad == PaddingMode::SameUpper || d.m_AutoPad == PaddingMode::SameLower) {
        for (unsigned int i = 0; i < nsp; ++i) target.push_back(in[i] * d.m_Strides[i]);
    }
    if (!target.empty()) {
        d.m_PadsBegin.assign(nsp, 0);
        d.m_PadsEnd.assign(nsp, 0);
        for (unsigned int i = 0; i < nsp; ++i) {
            const long long total = full[i] - static_cast<long long>(target[i]);
            if (total < 0) {
                d.m_OutputPadding[i] += static_cast<unsigned int>(-total);
                full[i] = target[i];
                continue;
            }
            const unsigned int small = static_cast<unsigned int>(total / 2);
            const unsigned int large = static_cast<unsigned int>(total - total / 2);
            d.m_PadsBegin[i] = d.m_AutoPad == PaddingMode::SameUpper ? small : large;
            d.m_PadsEnd[i] = d.m_AutoPad == PaddingMode::SameUpper ? large : small;
        }
    } else if (d.m_AutoPad == PaddingMode::Valid) {
        d.m_PadsBegin.assign(nsp, 0);
        d.m_PadsEnd.assign(nsp, 0);
    }
    d.m_AutoPad = PaddingMode::Explicit;
    d.m_OutputShape.clear();
    spatial::ResolvePerDim(ctx, d.m_PadsBegin, nsp, 0, "pads (begin)", false);
    spatial::ResolvePerDim(ctx, d.m_PadsEnd, nsp, 0, "pads (end)", false);

    if (ctx.HasInput(2)) {
        ctx.ExpectType(2, x.GetDataType());
        const TensorShape& bs = ctx.Input(2).GetShape();
        if (bs != TensorShape({outChannels})) {
            ctx.Fail("bias B " + bs.ToString() + " must be 1-D with one value per output channel (W[1] x group = " +
                     std::to_string(outChannels) + ")");
        }
    } else if (ctx.GetNumInputs() > 2) {
        ctx.AbsorbInput(2);  // an empty placeholder for the omitted optional bias
    }

    std::vector<unsigned int> out = {xs[0], outChannels};
    for (unsigned int i = 0; i < nsp; ++i) {
        const long long o = full[i] - d.m_PadsBegin[i] - d.m_PadsEnd[i];
        if (o < 1) {
            ctx.Fail("spatial dim " + std::to_string(i) + ": pads " + std::to_string(d.m_PadsBegin[i]) + "+" +
                     std::to_string(d.m_PadsEnd[i]) + " leave no output (full output length " +
                     std::to_string(full[i]) + ")");
        }
        out.push_back(static_cast<unsigned int>(o));
    }
    return {TensorInfo(TensorShape(out), x.GetDataType())};
}

}  // namespace trellis::core
