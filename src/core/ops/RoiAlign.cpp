// RoiAlign: validation and shape inference. X (N, C, H, W), rois (R, 4) of X's type,
// batch_indices (R) Signed64; output (R, C, output_height, output_width) of X's type. Batch
// indices are data: the backend checks each against N when it runs.
#include "core/InferContext.hpp"

#include <cmath>

namespace trellis::core {

std::vector<TensorInfo> RoiAlignInfer(InferContext& ctx) {
    const auto& d = ctx.Desc<RoiAlignDescriptor>();
    const TensorInfo& x = ctx.Input(0);
    ctx.ExpectRank(0, 4);
    ctx.ExpectRank(1, 2);
    ctx.ExpectRank(2, 1);
    ctx.ExpectType(1, x.GetDataType());
    ctx.ExpectTypeIn(2, {DataType::Signed64, DataType::Signed32});
    const TensorShape& rs = ctx.Input(1).GetShape();
    const TensorShape& bs = ctx.Input(2).GetShape();
    if (rs[1] != 4) ctx.Fail("rois " + rs.ToString() + " must have 4 values (x1, y1, x2, y2) per row");
    if (bs[0] != rs[0]) {
        ctx.Fail("batch_indices " + bs.ToString() + " must have one entry per roi; rois is " + rs.ToString());
    }
    if (d.m_OutputHeight == 0 || d.m_OutputWidth == 0) {
        ctx.Fail("output_height=" + std::to_string(d.m_OutputHeight) + ", output_width=" +
                 std::to_string(d.m_OutputWidth) + ": both must be at least 1");
    }
    if (!std::isfinite(d.m_SpatialScale) || !(d.m_SpatialScale > 0.0f)) {
        ctx.Fail("spatial_scale=" + std::to_string(d.m_SpatialScale) + " must be positive and finite");
    }
    TensorInfo out = x;
    out.SetShape(TensorShape{rs[0], x.GetShape()[1], d.m_OutputHeight, d.m_OutputWidth});
    out.SetConstant(false);
    return {out};
}

}  // namespace trellis::core
