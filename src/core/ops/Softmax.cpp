// Softmax / LogSoftmax (ONNX Softmax, LogSoftmax): validation and shape inference.
//
// The output has the input's shape and type; m_Axis is normalized to [0, rank).
#include "core/InferContext.hpp"

namespace trellis::core {

std::vector<TensorInfo> SoftmaxInfer(InferContext& ctx) {
    auto& d = ctx.Desc<SoftmaxDescriptor>();
    const TensorInfo& x = ctx.Input(0);
    ctx.ExpectTypeIn(0, {DataType::Float32, DataType::Float16, DataType::BFloat16, DataType::Float64});
    d.m_Axis = static_cast<int>(ctx.NormalizeAxis(d.m_Axis, x.GetNumDimensions()));
    return {TensorInfo(x.GetShape(), x.GetDataType())};
}

}  // namespace trellis::core
