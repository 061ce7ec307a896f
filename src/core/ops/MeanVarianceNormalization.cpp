// MeanVarianceNormalization (ONNX): validation, shape inference and axes resolution. m_Axes
// empty takes the ONNX default [0, 2, 3] (X must then have rank 4 or more); after inference the
// axes are non-negative, sorted and unique. The output is X's shape and type.
#include "core/InferContext.hpp"
#include "core/ops/DataOpsUtil.hpp"

#include <algorithm>

namespace trellis::core {

std::vector<TensorInfo> MeanVarianceNormalizationInfer(InferContext& ctx) {
    auto& d = ctx.Desc<MeanVarianceNormalizationDescriptor>();
    const TensorInfo& x = ctx.Input(0);
    ctx.ExpectTypeIn(0, {DataType::Float32, DataType::Float16, DataType::BFloat16, DataType::Float64});
    const unsigned int rank = x.GetNumDimensions();
    if (d.m_Axes.empty()) d.m_Axes = {0, 2, 3};
    std::vector<int64_t> axes;
    for (int64_t a : d.m_Axes) axes.push_back(ctx.NormalizeAxis(a, rank, "axes entry"));
    std::sort(axes.begin(), axes.end());
    if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) {
        ctx.Fail("axes " + DimsToString(d.m_Axes) + " name a dim more than once (X " + x.GetShape().ToString() + ")");
    }
    d.m_Axes = axes;
    TensorInfo out = x;
    out.SetConstant(false);
    return {out};
}

}  // namespace trellis::core
