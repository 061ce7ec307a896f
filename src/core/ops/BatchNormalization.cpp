// BatchNormalization (ONNX BatchNormalization): validation and shape inference.
//
// X [N, C, ...] (rank >= 2); scale, B, mean, var are each 1-D [C]. Y has X's shape and type. In
// training mode the layer may have outputs 1 and 2 (running mean and variance, [C]).
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
    const auto& d = ctx.Desc<BatchNormalizationDescriptor>();
    if (ctx.GetNumOutputs() != 1 && !(d.m_Training && ctx.GetNumOutputs() == 3)) {
        ctx.Fail("has " + std::to_string(ctx.GetNumOutputs()) + " outputs; " +
                 (d.m_Training ? "training mode has 1 or 3 (Y, running mean, running var)"
                               : "inference mode has 1 (Y); the running statistics need training mode"));
    }
    std::vector<TensorInfo> outs{TensorInfo(x.GetShape(), x.GetDataType())};
    for (unsigned int i = 1; i < ctx.GetNumOutputs(); ++i) outs.push_back(TensorInfo(TensorShape({channels}), x.GetDataType()));
    return outs;
}

}  // namespace trellis::core
