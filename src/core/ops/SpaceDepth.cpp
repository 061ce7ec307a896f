// DepthToSpace and SpaceToDepth: validation and shape inference on NCHW (rank 4).
// DepthToSpace: C must divide by blocksize^2; output [N, C/b^2, H*b, W*b].
// SpaceToDepth: H and W must divide by blocksize; output [N, C*b^2, H/b, W/b].
#include "core/InferContext.hpp"
#include "core/ops/DataOpsUtil.hpp"

namespace trellis::core {

namespace {

void CheckCommon(InferContext& ctx, const SpaceDepthDescriptor& d) {
    if (d.m_BlockSize == 0) ctx.Fail("blocksize is 0; it must be 1 or more");
    const TensorInfo& x = ctx.Input(0);
    if (x.GetNumDimensions() != 4) {
        ctx.Fail("input " + x.GetShape().ToString() + " has rank " + std::to_string(x.GetNumDimensions()) +
                 "; it must be NCHW (rank 4)");
    }
}

}  // namespace

std::vector<TensorInfo> DepthToSpaceInfer(InferContext& ctx) {
    const auto& d = ctx.Desc<SpaceDepthDescriptor>();
    CheckCommon(ctx, d);
    const TensorInfo& x = ctx.Input(0);
    const TensorShape& s = x.GetShape();
    const int64_t b = d.m_BlockSize;
    if (s[1] % (b * b) != 0) {
        ctx.Fail("channels " + std::to_string(s[1]) + " of input " + s.ToString() + " do not divide by blocksize^2 = " +
                 std::to_string(b * b));
    }
    return {WithShape(x, DimsToShape(ctx, {s[0], s[1] / (b * b), s[2] * b, s[3] * b}, "output shape"))};
}

std::vector<TensorInfo> SpaceToDepthInfer(InferContext& ctx) {
    const auto& d = ctx.Desc<SpaceDepthDescriptor>();
    CheckCommon(ctx, d);
    const TensorInfo& x = ctx.Input(0);
    const TensorShape& s = x.GetShape();
    const int64_t b = d.m_BlockSize;
    if (s[2] % b != 0 || s[3] % b != 0) {
        ctx.Fail("height and width of input " + s.ToString() + " must divide by blocksize " + std::to_string(b));
    }
    return {WithShape(x, DimsToShape(ctx, {s[0], s[1] * b * b, s[2] / b, s[3] / b}, "output shape"))};
}

}  // namespace trellis::core
