// Identity: the output is the input (same shape, type and quantization).
#include "core/InferContext.hpp"
#include "core/ops/DataOpsUtil.hpp"

namespace trellis::core {

std::vector<TensorInfo> IdentityInfer(InferContext& ctx) {
    const TensorInfo& in = ctx.Input(0);
    return {WithShape(in, in.GetShape())};
}

}  // namespace trellis::core
