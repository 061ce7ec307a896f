// BatchNormalization (ONNX BatchNormalization, inference form): validation and shape inference.
//
// X [N, C, ...] (rank >= 2); scale, B, mean, var are each 1-D [C]. Y has X's shape and type.
#include "core/InferContext.hpp"

namespace trellis::core {

std::vector<TensorInfo> BatchNormalizationInfer(InferContext& ctx) {
    const TensorInfo& x = ctx.Input(0);
    ctx.ExpectTypeIn(0, {DataType::Float32, DataType::Float16, DataType::BFloat16, DataType::Float64});
    if (x.GetNumDimensions() < 2) {
        ctx.Fail("input X must be N x C x ... (rank >= 2), got shape " + x.GetShape().ToString());
    }
    const unsigned int channels = x.GetShape()[1];
    static const char* const kNames[] = {"X", "scale", "B", "mean", "var"};
    for (unsigned int i = 1; i < 5; ++i) {
        ctx.ExpectType(i, x.GetDataType());
        if (ctx.Input(i).GetShape() != TensorShape({channels})) {
            ctx.Fail(std::string(kNames[i]) + " " + ctx.Input(i).GetShape().ToString() +
                     " must be 1-D with one value per channel (X[1]=" + std::to_string(channels) + ", X " +
                     x.GetShape().ToString() + ")");
        }
    }
    return {TensorInfo(x.GetShape(), x.GetDataType())};
}

}  // namespace trellis::core
