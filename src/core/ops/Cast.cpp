// Cast: the output has the input's shape and the descriptor's type. Which type pairs a backend
// converts is that backend's support question. With a second input (ONNX CastLike) the target is
// that input's type, known once its producer is inferred: it becomes m_To and the input is
// dropped (only its type is read, never its values).
#include "core/InferContext.hpp"

namespace trellis::core {

std::vector<TensorInfo> CastInfer(InferContext& ctx) {
    auto& d = ctx.Desc<CastDescriptor>();
    if (ctx.GetNumInputs() == 2) {
        d.m_To = ctx.Input(1).GetDataType();
        ctx.AbsorbInput(1);
    }
    return {TensorInfo(ctx.Input(0).GetShape(), d.m_To)};
}

}  // namespace trellis::core
