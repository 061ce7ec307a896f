// Stft (ONNX STFT-17): validation and shape inference. Inputs: signal (batch, length, 1 or 2),
// frame_step (parameter, scalar), window (data, optional: frame_length values of the signal's
// type), frame_length (parameter, scalar, optional). The parameters are folded into the
// descriptor; omitted inputs are dropped, so the backend sees signal and, if given, window.
// frame_length comes from the input, else from the window's length. Output (batch, frames,
// bins, 2) with frames = (length - frame_length) / frame_step + 1 and bins = frame_length / 2 + 1
// when onesided (frame_length otherwise).
#include "core/InferContext.hpp"

#include <limits>

namespace trellis::core {

namespace {
int64_t ReadScalarParam(InferContext& ctx, unsigned int i, const char* what) {
    if (ctx.Input(i).GetNumElements() != 1) {
        ctx.Fail(std::string(what) + " " + ctx.Input(i).GetShape().ToString() + " must be a scalar");
    }
    ctx.ExpectTypeIn(i, {DataType::Signed32, DataType::Signed64});
    return ctx.GetParamInts(i, what)[0];
}
}  // namespace

std::vector<TensorInfo> StftInfer(InferContext& ctx) {
    auto& d = ctx.Desc<StftDescriptor>();
    const TensorInfo& signal = ctx.Input(0);
    const TensorShape& ss = signal.GetShape();
    ctx.ExpectRank(0, 3);
    ctx.ExpectTypeIn(0, {DataType::Float32, DataType::Float64});
    if (ss[2] != 1 && ss[2] != 2) {
        ctx.Fail("signal " + ss.ToString() + " must be (batch, length, 1) real or (batch, length, 2) complex");
    }
    const unsigned int n = ctx.GetNumInputs();
    if (n > 1) {
        if (ctx.HasInput(1)) d.m_FrameStep = ReadScalarParam(ctx, 1, "frame_step");
        ctx.AbsorbInput(1);
    }
    std::optional<int64_t> windowLength;
    if (n > 2) {
        if (ctx.HasInput(2)) {
            ctx.ExpectRank(2, 1);
            ctx.ExpectType(2, signal.GetDataType());
            windowLength = ctx.Input(2).GetShape()[0];
        } else {
            ctx.AbsorbInput(2);
        }
    }
    if (n > 3) {
        if (ctx.HasInput(3)) d.m_FrameLength = ReadScalarParam(ctx, 3, "frame_length");
        ctx.AbsorbInput(3);
    }
    if (d.m_FrameStep < 1) ctx.Fail("frame_step=" + std::to_string(d.m_FrameStep) + " must be at least 1");
    if (windowLength && d.m_FrameLength && *windowLength != *d.m_FrameLength) {
        ctx.Fail("window has " + std::to_string(*windowLength) + " values but frame_length=" +
                 std::to_string(*d.m_FrameLength) + "; they must agree");
    }
    if (!d.m_FrameLength) d.m_FrameLength = windowLength;
    if (!d.m_FrameLength) ctx.Fail("needs a window (input 2) or frame_length (input 3) to know the frame length");
    const int64_t frameLength = *d.m_FrameLength;
    if (frameLength < 1 || frameLength > static_cast<int64_t>(ss[1])) {
        ctx.Fail("frame_length=" + std::to_string(frameLength) + " must lie in [1, signal length " +
                 std::to_string(ss[1]) + "]");
    }
    if (d.m_Onesided && ss[2] != 1) {
        ctx.Fail("onesided=1 needs a real signal (last dim 1); signal " + ss.ToString() + " is complex");
    }
    const int64_t frames = (static_cast<int64_t>(ss[1]) - frameLength) / d.m_FrameStep + 1;
    const int64_t bins = d.m_Onesided ? frameLength / 2 + 1 : frameLength;
    return {TensorInfo(TensorShape{ss[0], static_cast<unsigned int>(frames), static_cast<unsigned int>(bins), 2},
                       signal.GetDataType())};
}

}  // namespace trellis::core
