// Lrn (ONNX LRN): validation and shape inference. X is N x C x ... (rank >= 3); size >= 1. The
// output is X's shape and type.
#include "core/InferContext.hpp"

namespace trellis::core {

std::vector<TensorInfo> LrnInfer(InferContext& ctx) {
    const auto& d = ctx.Desc<LrnDescriptor>();
    const TensorInfo& x = ctx.Input(0);
    ctx.ExpectTypeIn(0, {DataType::Float32, DataType::Float16, DataType::BFloat16, DataType::Float64});
    if (x.GetNumDimensions() < 3) {
        ctx.Fail("input X must be N x C x spatial... (rank >= 3), got shape " + x.GetShape().ToString());
    }
    if (d.m_Size < 1) ctx.Fail("size=" + std::to_string(d.m_Size) + " must be at least 1");
    return {TensorInfo(x.GetShape(), x.GetDataType())};
}

}  // namespace trellis::core
