// ReverseSequence (ONNX): validation and shape inference. X has rank >= 2; batch_axis and
// time_axis are 0 and 1 in either order; sequence_lens is Signed64 [batch]. The output is X's
// shape and type. Each length must lie in [0, time dim]; constant lengths are checked here, the
// rest when the layer runs.
#include "core/InferContext.hpp"

namespace trellis::core {

std::vector<TensorInfo> ReverseSequenceInfer(InferContext& ctx) {
    const auto& d = ctx.Desc<ReverseSequenceDescriptor>();
    const TensorInfo& x = ctx.Input(0);
    if (x.GetNumDimensions() < 2) ctx.Fail("input X " + x.GetShape().ToString() + " must have rank 2 or more");
    if (!((d.m_BatchAxis == 0 && d.m_TimeAxis == 1) || (d.m_BatchAxis == 1 && d.m_TimeAxis == 0))) {
        ctx.Fail("batch_axis=" + std::to_string(d.m_BatchAxis) + " and time_axis=" + std::to_string(d.m_TimeAxis) +
                 " must be 0 and 1 (in either order)");
    }
    ctx.ExpectType(1, DataType::Signed64);
    const unsigned int batch = x.GetShape()[static_cast<unsigned int>(d.m_BatchAxis)];
    const unsigned int time = x.GetShape()[static_cast<unsigned int>(d.m_TimeAxis)];
    if (ctx.Input(1).GetShape() != TensorShape({batch})) {
        ctx.Fail("sequence_lens " + ctx.Input(1).GetShape().ToString() + " must be [" + std::to_string(batch) +
                 "], one length per batch entry of X " + x.GetShape().ToString());
    }
    if (ctx.Constant(1) != nullptr) {
        for (int64_t len : ctx.GetParamInts(1, "sequence_lens")) {
            if (len < 0 || len > time) {
                ctx.Fail("sequence length " + std::to_string(len) + " is outside [0, " + std::to_string(time) +
                         "], the time dim of X " + x.GetShape().ToString());
            }
        }
    }
    TensorInfo out = x;
    out.SetConstant(false);
    return {out};
}

}  // namespace trellis::core
