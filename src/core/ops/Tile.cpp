// Tile: validation and shape inference. m_Repeats (descriptor or parameter input 1) has one
// non-negative entry per input dim; output dim i = input dim i * repeats[i].
#include "core/InferContext.hpp"
#include "core/ops/DataOpsUtil.hpp"

namespace trellis::core {

std::vector<TensorInfo> TileInfer(InferContext& ctx) {
    auto& d = ctx.Desc<TileDescriptor>();
    ReadParamInts(ctx, 1, d.m_Repeats, "repeats");
    const TensorInfo& x = ctx.Input(0);
    const unsigned int rank = x.GetNumDimensions();
    if (d.m_Repeats.size() != rank) {
        ctx.Fail("repeats " + DimsToString(d.m_Repeats) + " has " + std::to_string(d.m_Repeats.size()) +
                 " entries; the input " + x.GetShape().ToString() + " needs one per dim");
    }
    std::vector<int64_t> dims;
    for (unsigned int i = 0; i < rank; ++i) {
        if (d.m_Repeats[i] < 0) {
            ctx.Fail("repeats " + DimsToString(d.m_Repeats) + ": entry " + std::to_string(i) + " is negative");
        }
        int64_t v = 0;
        if (__builtin_mul_overflow(static_cast<int64_t>(x.GetShape()[i]), d.m_Repeats[i], &v)) v = -1;
        dims.push_back(v);
    }
    return {WithShape(x, DimsToShape(ctx, dims, "output shape"))};
}

}  // namespace trellis::core
