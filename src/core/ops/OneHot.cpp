// OneHot: validation and shape inference. Inputs: indices (any integer or float type; floats are
// truncated), values (2 elements: off, on) and optional parameter input 2, depth (one value,
// folded into m_Depth; the layer keeps inputs indices and values). The output has the values'
// type and the indices' shape with a dim of m_Depth inserted at m_Axis (normalized to [0, rank]).
#include "core/InferContext.hpp"
#include "core/ops/DataOpsUtil.hpp"

#include <cmath>

namespace trellis::core {

std::vector<TensorInfo> OneHotInfer(InferContext& ctx) {
    auto& d = ctx.Desc<OneHotDescriptor>();
    const TensorInfo& indices = ctx.Input(0);
    const TensorInfo& values = ctx.Input(1);
    ctx.ExpectTypeIn(0, {DataType::Float32, DataType::Float64, DataType::Signed32, DataType::Signed64,
                         DataType::UInt8});
    if (ctx.GetNumInputs() > 2) {
        if (!ctx.HasInput(2)) ctx.Fail("input 2 (depth) is empty; OneHot needs a depth");
        const std::vector<double> depth = ctx.GetParamDoubles(2, "depth");
        if (depth.size() != 1) ctx.Fail("depth must hold one value, has " + std::to_string(depth.size()));
        if (!(depth[0] >= 1.0 && depth[0] < 4294967296.0)) {
            ctx.Fail("depth " + std::to_string(depth[0]) + " must be at least 1 (and fit a dim)");
        }
        d.m_Depth = static_cast<int64_t>(std::trunc(depth[0]));
        ctx.AbsorbInput(2);
    }
    if (d.m_Depth < 1) ctx.Fail("depth " + std::to_string(d.m_Depth) + " must be at least 1");
    if (values.GetNumElements() != 2) {
        ctx.Fail("values " + values.GetShape().ToString() + " must hold 2 elements (off, on)");
    }
    const unsigned int rank = indices.GetNumDimensions();
    const unsigned int axis = ctx.NormalizeAxis(d.m_Axis, rank + 1);
    d.m_Axis = axis;
    std::vector<int64_t> dims = ShapeToDims(indices.GetShape());
    dims.insert(dims.begin() + axis, d.m_Depth);
    return {WithShape(values, DimsToShape(ctx, dims, "output shape"))};
}

}  // namespace trellis::core
