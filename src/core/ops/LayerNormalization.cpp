// LayerNormalization (ONNX LayerNormalization): validation and shape inference.
//
// Normalizes X over dims [axis, rank). Scale and the optional B are multiplied/added with numpy
// broadcasting (the ONNX function body), so each must broadcast unidirectionally to X's shape.
// m_Axis is normalized to [0, rank). Optional outputs Mean and InvStdDev have X's type (the ONNX
// stash_type is float; Trellis computes the statistics in double either way).
#include "core/InferContext.hpp"

namespace trellis::core {

std::vector<TensorInfo> LayerNormalizationInfer(InferContext& ctx) {
    auto& d = ctx.Desc<LayerNormalizationDescriptor>();
    const TensorInfo& x = ctx.Input(0);
    ctx.ExpectTypeIn(0, {DataType::Float32, DataType::Float16, DataType::BFloat16, DataType::Float64});
    d.m_Axis = static_cast<int>(ctx.NormalizeAxis(d.m_Axis, x.GetNumDimensions()));

    static const char* const kNames[] = {"X", "scale", "B"};
    for (unsigned int i = 1; i < 3; ++i) {
        if (!ctx.HasInput(i)) {
            if (i == 1) ctx.Fail("scale (input 1) is required");
            if (i < ctx.GetNumInputs()) ctx.AbsorbInput(i);  // an empty placeholder for the omitted B
            continue;
        }
        ctx.ExpectType(i, x.GetDataType());
        const TensorShape& s = ctx.Input(i).GetShape();
        const auto b = Broadcast(x.GetShape(), s);
        if (!b || *b != x.GetShape()) {
            ctx.Fail(std::string(kNames[i]) + " " + s.ToString() + " must broadcast unidirectionally to X " +
                     x.GetShape().ToString());
        }
    }
    // Mean and InvStdDev: X's shape with the normalized dims [axis, rank) set to 1.
    std::vector<unsigned int> stat;
    for (unsigned int i = 0; i < x.GetNumDimensions(); ++i) {
        stat.push_back(i < static_cast<unsigned int>(d.m_Axis) ? x.GetShape()[i] : 1u);
    }
    std::vector<TensorInfo> outs{TensorInfo(x.GetShape(), x.GetDataType())};
    for (unsigned int i = 1; i < ctx.GetNumOutputs(); ++i) outs.push_back(TensorInfo(TensorShape(stat), x.GetDataType()));
    return outs;
}

}  // namespace trellis::core
