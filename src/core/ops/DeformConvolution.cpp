// DeformConvolution (ONNX DeformConv, 2-D): validation and shape inference. X (N, C, H, W), W
// (M, C / group, kH, kW), offset (N, offset_group * kH * kW * 2, oH, oW), optional B (M) and mask
// (N, offset_group * kH * kW, oH, oW), all of one float type. kernel_shape defaults to W's, strides
// and dilations to 1, pads to 0. Output (N, M, oH, oW) with oH = (H + pads - ((kH - 1) * dH + 1)) /
// sH + 1 (likewise oW), which the offset's spatial dims must equal.
#include "core/InferContext.hpp"

namespace trellis::core {

std::vector<TensorInfo> DeformConvolutionInfer(InferContext& ctx) {
    auto& d = ctx.Desc<DeformConvolutionDescriptor>();
    const DataType t = ctx.Input(0).GetDataType();
    ctx.ExpectTypeIn(0, {DataType::Float32, DataType::Float64, DataType::Float16, DataType::BFloat16});
    const TensorShape& xs = ctx.Input(0).GetShape();
    if (xs.GetNumDimensions() != 4) {
        ctx.Fail("X " + xs.ToString() + " must be (N, C, H, W): only the 2-D form is supported");
    }
    ctx.ExpectRank(1, 4);
    ctx.ExpectRank(2, 4);
    for (unsigned int i = 1; i < ctx.GetNumInputs(); ++i) {
        if (ctx.HasInput(i)) ctx.ExpectType(i, t);
    }
    const TensorShape& ws = ctx.Input(1).GetShape();
    const TensorShape& os = ctx.Input(2).GetShape();
    if (d.m_KernelShape.empty()) d.m_KernelShape = {ws[2], ws[3]};
    if (d.m_Strides.empty()) d.m_Strides.assign(2, 1);
    if (d.m_Dilations.empty()) d.m_Dilations.assign(2, 1);
    if (d.m_PadsBegin.empty()) d.m_PadsBegin.assign(2, 0);
    if (d.m_PadsEnd.empty()) d.m_PadsEnd.assign(2, 0);
    if (d.m_KernelShape.size() != 2 || d.m_Strides.size() != 2 || d.m_Dilations.size() != 2 || d.m_PadsBegin.size() != 2 ||
        d.m_PadsEnd.size() != 2) {
        ctx.Fail("kernel_shape, strides, dilations and pads must have 2 entries each (one per spatial dim)");
    }
    if (d.m_KernelShape[0] != ws[2] || d.m_KernelShape[1] != ws[3]) {
        ctx.Fail("kernel_shape disagrees with W " + ws.ToString());
    }
    if (d.m_Groups == 0 || d.m_OffsetGroups == 0) ctx.Fail("group and offset_group must be at least 1");
    if (xs[1] != ws[1] * d.m_Groups || ws[0] % d.m_Groups != 0) {
        ctx.Fail("X " + xs.ToString() + " and W " + ws.ToString() + " do not fit group=" + std::to_string(d.m_Groups) +
                 " (C must be W's dim 1 times group, M a multiple of group)");
    }
    if (xs[1] % d.m_OffsetGroups != 0) {
        ctx.Fail("X's " + std::to_string(xs[1]) + " channels are not a multiple of offset_group=" + std::to_string(d.m_OffsetGroups));
    }
    unsigned int out[2];
    for (unsigned int i = 0; i < 2; ++i) {
        if (d.m_Strides[i] == 0 || d.m_Dilations[i] == 0) ctx.Fail("strides and dilations must be at least 1");
        const int64_t span = int64_t(xs[2 + i]) + d.m_PadsBegin[i] + d.m_PadsEnd[i] -
                             (int64_t(d.m_Dilations[i]) * (d.m_KernelShape[i] - 1) + 1);
        if (span < 0) ctx.Fail("X " + xs.ToString() + " with its pads is smaller than the dilated kernel");
        out[i] = static_cast<unsigned int>(span / d.m_Strides[i] + 1);
    }
    const unsigned int taps = d.m_KernelShape[0] * d.m_KernelShape[1];
    if (os[0] != xs[0] || os[1] != d.m_OffsetGroups * taps * 2 || os[2] != out[0] || os[3] != out[1]) {
        ctx.Fail("offset " + os.ToString() + " must be (" + std::to_string(xs[0]) + ", " +
                 std::to_string(d.m_OffsetGroups * taps * 2) + ", " + std::to_string(out[0]) + ", " +
                 std::to_string(out[1]) + "): (N, offset_group * kH * kW * 2, oH, oW)");
    }
    if (ctx.HasInput(3)) {
        const TensorShape& bs = ctx.Input(3).GetShape();
        if (bs.GetNumDimensions() != 1 || bs[0] != ws[0]) ctx.Fail("B " + bs.ToString() + " must be (M) = (" + std::to_string(ws[0]) + ")");
    }
    if (ctx.HasInput(4)) {
        const TensorShape& ms = ctx.Input(4).GetShape();
        if (ms.GetNumDimensions() != 4 || ms[0] != xs[0] || ms[1] != d.m_OffsetGroups * taps || ms[2] != out[0] ||
            ms[3] != out[1]) {
            ctx.Fail("mask " + ms.ToString() + " must be (" + std::to_string(xs[0]) + ", " +
                     std::to_string(d.m_OffsetGroups * taps) + ", " + std::to_string(out[0]) + ", " +
                     std::to_string(out[1]) + "): (N, offset_group * kH * kW, oH, oW)");
        }
    }
    return {TensorInfo(TensorShape{xs[0], ws[0], out[0], out[1]}, t)};
}

}  // namespace trellis::core
