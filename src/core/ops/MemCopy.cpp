// MemCopy: the copy layer the optimizer inserts where a tensor crosses backends. The output is
// the input (same shape, type and quantization).
#include "core/InferContext.hpp"
#include "core/ops/DataOpsUtil.hpp"

namespace trellis::core {

std::vector<TensorInfo> MemCopyInfer(InferContext& ctx) {
    const TensorInfo& in = ctx.Input(0);
    return {WithShape(in, in.GetShape())};
}

}  // namespace trellis::core
