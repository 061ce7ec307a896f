// ElementwiseUnary: validation and shape inference. The output has the input's shape and type;
// the operation's parameters (m_A, m_B) need no resolving.
#include "core/InferContext.hpp"
#include "core/ops/DataOpsUtil.hpp"

#include <cmath>

namespace trellis::core {

std::vector<TensorInfo> ElementwiseUnaryInfer(InferContext& ctx) {
    const ElementwiseUnaryDescriptor& d = ctx.Desc<ElementwiseUnaryDescriptor>();
    // A NaN bound would make every output NaN or depend on comparison order; no model means that.
    if (d.m_Operation == UnaryOperation::Clip && (std::isnan(d.m_A) || std::isnan(d.m_B))) {
        ctx.Fail("Clip: bounds [" + std::to_string(d.m_A) + ", " + std::to_string(d.m_B) + "] contain NaN");
    }
    const TensorInfo& in = ctx.Input(0);
    return {WithShape(in, in.GetShape())};
}

}  // namespace trellis::core
