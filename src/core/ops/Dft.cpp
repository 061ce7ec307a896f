// Dft (ONNX DFT-17 and DFT-20): validation and shape inference. The input is (batch, ..., n, 1)
// real or (batch, ..., n, 2) complex; the transform runs along m_Axis, which may be neither the
// batch dim nor the last (re, im) dim. Optional parameter input 1 (dft_length, a scalar) is folded
// into m_DftLength, optional parameter input 2 (DFT-20's axis, a scalar) into m_Axis; either may be
// a graph input, read when the network is specialized for a run. The output has the input's shape with the axis dim set to the length
// (length / 2 + 1 when onesided) and a last dim of 2; onesided with inverse (numpy.fft.irfft) gives
// the real signal, last dim 1.
#include "core/InferContext.hpp"

#include <limits>

namespace trellis::core {

std::vector<TensorInfo> DftInfer(InferContext& ctx) {
    auto& d = ctx.Desc<DftDescriptor>();
    const TensorInfo& x = ctx.Input(0);
    const TensorShape& xs = x.GetShape();
    const unsigned int r = x.GetNumDimensions();
    if (r < 3) ctx.Fail("input " + xs.ToString() + " must have rank 3 or more: (batch, ..., n, 1 or 2)");
    if (xs[r - 1] != 1 && xs[r - 1] != 2) {
        ctx.Fail("input " + xs.ToString() + " must end in a dim of 1 (real) or 2 (complex), not " +
                 std::to_string(xs[r - 1]));
    }
    ctx.ExpectTypeIn(0, {DataType::Float32, DataType::Float64});
    if (ctx.GetNumInputs() > 2) {
        if (ctx.HasInput(2)) {
            if (ctx.Input(2).GetNumElements() != 1) ctx.Fail("axis " + ctx.Input(2).GetShape().ToString() + " must be a scalar");
            d.m_Axis = ctx.GetParamInts(2, "axis")[0];
        }
        ctx.AbsorbInput(2);
    }
    const int64_t axis = d.m_Axis < 0 ? d.m_Axis + static_cast<int64_t>(r) : d.m_Axis;
    if (axis < 1 || axis >= static_cast<int64_t>(r) - 1) {
        ctx.Fail("axis=" + std::to_string(d.m_Axis) + " must name a signal dim of input " + xs.ToString() +
                 " (not the batch dim 0 nor the last, re/im, dim)");
    }
    d.m_Axis = axis;
    if (ctx.GetNumInputs() > 1) {
        if (ctx.HasInput(1)) {
            if (ctx.Input(1).GetNumElements() != 1) {
                ctx.Fail("dft_length " + ctx.Input(1).GetShape().ToString() + " must be a scalar");
            }
            d.m_DftLength = ctx.GetParamInts(1, "dft_length")[0];
        }
        ctx.AbsorbInput(1);
    }
    // onesided with inverse is numpy.fft.irfft (ONNX 1.23's reference): the input holds bins
    // 0 .. m - 1 of a Hermitian spectrum, the length defaults to 2 * (m - 1), the output is real.
    const bool inverseOnesided = d.m_Onesided && d.m_Inverse;
    const int64_t axisLength = xs[static_cast<unsigned int>(axis)];
    const int64_t n = d.m_DftLength.value_or(inverseOnesided ? 2 * (axisLength - 1) : axisLength);
    if (n < 1 || n > std::numeric_limits<unsigned int>::max()) {
        ctx.Fail("dft_length=" + std::to_string(n) + " must lie in [1, 2^32)" +
                 (inverseOnesided && !d.m_DftLength ? " (onesided inverse: 2 * (bins - 1))" : ""));
    }
    if (inverseOnesided && xs[r - 1] != 2) {
        ctx.Fail("onesided=1 with inverse=1 needs a complex input (last dim 2), the half spectrum; input " +
                 xs.ToString() + " is real");
    }
    if (d.m_Onesided && !d.m_Inverse && xs[r - 1] != 1) {
        ctx.Fail("onesided=1 needs a real input (last dim 1); input " + xs.ToString() + " is complex");
    }
    std::vector<unsigned int> dims(xs.GetDims().begin(), xs.GetDims().end());
    dims[static_cast<unsigned int>(axis)] =
        static_cast<unsigned int>(d.m_Onesided && !d.m_Inverse ? n / 2 + 1 : n);
    dims[r - 1] = inverseOnesided ? 1 : 2;
    return {TensorInfo(TensorShape(dims), x.GetDataType())};
}

}  // namespace trellis::core
