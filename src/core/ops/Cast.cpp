// Cast: the output has the input's shape and the descriptor's type. Which type pairs a backend
// converts is that backend's support question.
#include "core/InferContext.hpp"

namespace trellis::core {

std::vector<TensorInfo> CastInfer(InferContext& ctx) {
    return {TensorInfo(ctx.Input(0).GetShape(), ctx.Desc<CastDescriptor>().m_To)};
}

}  // namespace trellis::core
