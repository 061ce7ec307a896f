// Window (ONNX HannWindow, HammingWindow, BlackmanWindow): shape inference. The optional
// parameter input 0 (size: one Signed32/Signed64 value) is folded into m_Size; the output is a
// 1-D tensor of m_Size values of m_DataType.
#include "core/InferContext.hpp"

#include <limits>

namespace trellis::core {

std::vector<TensorInfo> WindowInfer(InferContext& ctx) {
    auto& d = ctx.Desc<WindowDescriptor>();
    if (ctx.GetNumInputs() == 1) {
        const TensorInfo& size = ctx.Input(0);
        if (size.GetNumElements() != 1) {
            ctx.Fail("size " + size.GetShape().ToString() + " must be a scalar (one value)");
        }
        ctx.ExpectTypeIn(0, {DataType::Signed32, DataType::Signed64});
        d.m_Size = ctx.GetParamInts(0, "size")[0];
        ctx.AbsorbInput(0);
    }
    if (d.m_Size < 0 || d.m_Size > std::numeric_limits<unsigned int>::max()) {
        ctx.Fail("size=" + std::to_string(d.m_Size) + " must lie in [0, 2^32)");
    }
    return {TensorInfo(TensorShape{static_cast<unsigned int>(d.m_Size)}, d.m_DataType)};
}

}  // namespace trellis::core
