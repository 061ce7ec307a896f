// AffineGrid: validation and shape inference. theta is (N, 2, 3) for a 2-D grid or (N, 3, 4) for
// a 3-D one; parameter input 1 (size: N, C, H, W or N, C, D, H, W) is folded into m_Size (it may
// be a graph input, read when the network is specialized for a run). The output is the grid
// (N, H, W, 2) or (N, D, H, W, 3) in theta's type.
#include "core/InferContext.hpp"

#include <limits>

namespace trellis::core {

std::vector<TensorInfo> AffineGridInfer(InferContext& ctx) {
    auto& d = ctx.Desc<AffineGridDescriptor>();
    ctx.ExpectTypeIn(0, {DataType::Float32, DataType::Float64, DataType::Float16, DataType::BFloat16});
    ctx.ExpectRank(0, 3);
    if (ctx.GetNumInputs() > 1) {
        d.m_Size.clear();
        for (int64_t v : ctx.GetParamInts(1, "size")) {
            if (v < 0 || v > std::numeric_limits<unsigned int>::max()) {
                ctx.Fail("size holds " + std::to_string(v) + "; each entry must be a dim (0 to 2^32 - 1)");
            }
            d.m_Size.push_back(static_cast<unsigned int>(v));
        }
        ctx.AbsorbInput(1);
    }
    const std::size_t n = d.m_Size.size();
    if (n != 4 && n != 5) {
        ctx.Fail("size has " + std::to_string(n) + " entries; it must be (N, C, H, W) or (N, C, D, H, W)");
    }
    const unsigned int spatial = static_cast<unsigned int>(n - 2);
    const TensorShape& ts = ctx.Input(0).GetShape();
    if (ts[1] != spatial || ts[2] != spatial + 1) {
        ctx.Fail("theta " + ts.ToString() + " must be (N, " + std::to_string(spatial) + ", " +
                 std::to_string(spatial + 1) + ") for a size of " + std::to_string(n) + " entries");
    }
    if (ts[0] != d.m_Size[0]) {
        ctx.Fail("theta " + ts.ToString() + " has batch " + std::to_string(ts[0]) + " but size says N = " +
                 std::to_string(d.m_Size[0]) + "; they must match");
    }
    std::vector<unsigned int> dims{d.m_Size[0]};
    dims.insert(dims.end(), d.m_Size.begin() + 2, d.m_Size.end());
    dims.push_back(spatial);
    return {TensorInfo(TensorShape(dims), ctx.Input(0).GetDataType())};
}

}  // namespace trellis::core
