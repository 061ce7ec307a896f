// Det: validation and shape inference. The input is (..., M, M); the output holds one
// determinant per matrix, shape (...), of the input's type.
#include "core/InferContext.hpp"

namespace trellis::core {

std::vector<TensorInfo> DetInfer(InferContext& ctx) {
    const TensorInfo& x = ctx.Input(0);
    const TensorShape& xs = x.GetShape();
    const unsigned int r = x.GetNumDimensions();
    if (r < 2 || xs[r - 1] != xs[r - 2]) {
        ctx.Fail("input " + xs.ToString() + " must be (..., M, M): rank 2 or more with square last two dims");
    }
    ctx.ExpectTypeIn(0, {DataType::Float32, DataType::Float64, DataType::Float16});
    std::vector<unsigned int> dims(xs.GetDims().begin(), xs.GetDims().end() - 2);
    TensorInfo out(TensorShape(dims), x.GetDataType());
    return {out};
}

}  // namespace trellis::core
