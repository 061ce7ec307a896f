// GridSample: validation and shape inference. X is (N, C, H, W) Float32, the grid (N, Hout,
// Wout, 2) Float32 of normalized (x, y) positions; the output is (N, C, Hout, Wout). Only the
// 4-D form exists before opset 20.
#include "core/InferContext.hpp"

namespace trellis::core {

std::vector<TensorInfo> GridSampleInfer(InferContext& ctx) {
    const TensorInfo& x = ctx.Input(0);
    const TensorInfo& grid = ctx.Input(1);
    ctx.ExpectRank(0, 4);
    ctx.ExpectRank(1, 4);
    ctx.ExpectType(1, x.GetDataType());
    const TensorShape& xs = x.GetShape();
    const TensorShape& gs = grid.GetShape();
    if (gs[3] != 2) {
        ctx.Fail("grid " + gs.ToString() + " must have 2 entries (x, y) in its last dim for a 4-D X " + xs.ToString());
    }
    if (gs[0] != xs[0]) {
        ctx.Fail("grid " + gs.ToString() + " has batch " + std::to_string(gs[0]) + " but X " + xs.ToString() +
                 " has batch " + std::to_string(xs[0]) + "; they must match");
    }
    TensorInfo out = x;
    out.SetShape(TensorShape{xs[0], xs[1], gs[1], gs[2]});
    out.SetConstant(false);
    return {out};
}

}  // namespace trellis::core
