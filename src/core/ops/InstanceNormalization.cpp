// InstanceNormalization (ONNX): validation and shape inference. X is N x C x spatial... (rank >=
// 3); scale and B are 1-D [C] of X's type. The output is X's shape and type.
#include "core/InferContext.hpp"

namespace trellis::core {

std::vector<TensorInfo> InstanceNormalizationInfer(InferContext& ctx) {
    const TensorInfo& x = ctx.Input(0);
    ctx.ExpectTypeIn(0, {DataType::Float32, DataType::Float16, DataType::BFloat16, DataType::Float64});
    if (x.GetNumDimensions() < 3) {
        ctx.Fail("input X must be N x C x spatial... (rank >= 3), got shape " + x.GetShape().ToString());
    }
    const unsigned int channels = x.GetShape()[1];
    static const char* const kNames[] = {"X", "scale", "B"};
    for (unsigned int i = 1; i < 3; ++i) {
        ctx.ExpectType(i, x.GetDataType());
        if (ctx.Input(i).GetShape() != TensorShape({channels})) {
            ctx.Fail(std::string(kNames[i]) + " " + ctx.Input(i).GetShape().ToString() +
                     " must be 1-D with one value per channel (X " + x.GetShape().ToString() + ")");
        }
    }
    return {TensorInfo(x.GetShape(), x.GetDataType())};
}

}  // namespace trellis::core
