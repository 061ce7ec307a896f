// TensorScatter: validation and shape inference. past_cache and update have the same rank and
// dims but along m_Axis (normalized here; never 0, the batch dim), where update may be shorter;
// the optional write_indices is (batch) Signed64. The output has past_cache's info.
#include "core/InferContext.hpp"

namespace trellis::core {

std::vector<TensorInfo> TensorScatterInfer(InferContext& ctx) {
    auto& d = ctx.Desc<TensorScatterDescriptor>();
    const TensorInfo& cache = ctx.Input(0);
    const TensorInfo& update = ctx.Input(1);
    ctx.ExpectType(1, cache.GetDataType());
    const unsigned int rank = cache.GetNumDimensions();
    if (rank < 2) ctx.Fail("past_cache " + cache.GetShape().ToString() + " must have rank 2 or more (batch, ..., sequence, ...)");
    const unsigned int axis = ctx.NormalizeAxis(d.m_Axis, rank);
    if (axis == 0) ctx.Fail("axis " + std::to_string(d.m_Axis) + " names the batch dim 0; it must name the sequence dim");
    d.m_Axis = axis;
    const TensorShape& cs = cache.GetShape();
    const TensorShape& us = update.GetShape();
    if (update.GetNumDimensions() != rank) {
        ctx.Fail("update " + us.ToString() + " must have past_cache's rank (" + cs.ToString() + ")");
    }
    for (unsigned int i = 0; i < rank; ++i) {
        if (i == axis ? us[i] > cs[i] : us[i] != cs[i]) {
            ctx.Fail("update " + us.ToString() + " must match past_cache " + cs.ToString() +
                     " in every dim but the axis (" + std::to_string(axis) + "), and be no longer there");
        }
    }
    if (ctx.HasInput(2)) {
        ctx.ExpectType(2, DataType::Signed64);
        const TensorShape& ws = ctx.Input(2).GetShape();
        if (ws.GetNumDimensions() != 1 || ws[0] != cs[0]) {
            ctx.Fail("write_indices " + ws.ToString() + " must be 1-D with one entry per batch (" + std::to_string(cs[0]) + ")");
        }
    }
    TensorInfo out = cache;
    out.SetConstant(false);
    return {out};
}

}  // namespace trellis::core
