// EyeLike: validation and shape inference. The input must be 2-D; the output has its shape and
// m_DataType (the input's type when unset).
#include "core/InferContext.hpp"

namespace trellis::core {

std::vector<TensorInfo> EyeLikeInfer(InferContext& ctx) {
    const auto& d = ctx.Desc<EyeLikeDescriptor>();
    const TensorInfo& x = ctx.Input(0);
    ctx.ExpectRank(0, 2);
    return {TensorInfo(x.GetShape(), d.m_DataType.value_or(x.GetDataType()))};
}

}  // namespace trellis::core
