// GridSample: validation and shape inference. X is (N, C, H, W) with a grid (N, Hout, Wout, 2) of
// normalized (x, y) positions, or (opset 20's volumetric form) X (N, C, D, H, W) with a grid
// (N, Dout, Hout, Wout, 3) of (x, y, z); the output is (N, C, Hout, Wout) or (N, C, Dout, Hout,
// Wout). Bicubic mode is 4-D only (ONNX).
#include "core/InferContext.hpp"

namespace trellis::core {

std::vector<TensorInfo> GridSampleInfer(InferContext& ctx) {
    const TensorInfo& x = ctx.Input(0);
    const TensorInfo& grid = ctx.Input(1);
    const unsigned int rank = x.GetNumDimensions();
    const TensorShape& xs = x.GetShape();
    if (rank != 4 && rank != 5) {
        ctx.Fail("input 0 must have rank 4 (N, C, H, W) or 5 (N, C, D, H, W), got shape " + xs.ToString());
    }
    ctx.ExpectRank(1, rank);
    ctx.ExpectType(1, x.GetDataType());
    const TensorShape& gs = grid.GetShape();
    const unsigned int spatial = rank - 2;
    if (gs[rank - 1] != spatial) {
        ctx.Fail("grid " + gs.ToString() + " must have " + std::to_string(spatial) + " entries (" +
                 (spatial == 2 ? "x, y" : "x, y, z") + ") in its last dim for a " + std::to_string(rank) + "-D X " +
                 xs.ToString());
    }
    if (gs[0] != xs[0]) {
        ctx.Fail("grid " + gs.ToString() + " has batch " + std::to_string(gs[0]) + " but X " + xs.ToString() +
                 " has batch " + std::to_string(xs[0]) + "; they must match");
    }
    if (rank == 5 && ctx.Desc<GridSampleDescriptor>().m_Mode == GridSampleMode::Bicubic) {
        ctx.Fail("cubic mode is defined for 4-D input only (X is " + xs.ToString() + ")");
    }
    std::vector<unsigned int> dims{xs[0], xs[1]};
    for (unsigned int i = 1; i + 1 < rank; ++i) dims.push_back(gs[i]);
    TensorInfo out = x;
    out.SetShape(TensorShape(dims));
    out.SetConstant(false);
    return {out};
}

}  // namespace trellis::core
