// Trilu: validation and shape inference. The input needs rank 2 or more; the output has its
// shape and type. Optional input 1 (k, one Signed32/Signed64 value) is folded into m_K when it
// is constant; otherwise it stays a runtime input that the backend reads (k moves no dims).
#include "core/InferContext.hpp"
#include "core/ops/DataOpsUtil.hpp"

namespace trellis::core {

std::vector<TensorInfo> TriluInfer(InferContext& ctx) {
    auto& d = ctx.Desc<TriluDescriptor>();
    const TensorInfo& x = ctx.Input(0);
    if (x.GetNumDimensions() < 2) {
        ctx.Fail("input " + x.GetShape().ToString() + " has rank " + std::to_string(x.GetNumDimensions()) +
                 "; Trilu needs rank 2 or more");
    }
    if (ctx.GetNumInputs() > 1) {
        const TensorInfo& k = ctx.Input(1);
        if (ctx.HasInput(1) && k.GetNumElements() != 1) {
            ctx.Fail("k " + k.GetShape().ToString() + " must hold one value, has " + std::to_string(k.GetNumElements()));
        }
        if (ctx.HasInput(1)) ctx.ExpectTypeIn(1, {DataType::Signed32, DataType::Signed64});
        if (!ctx.HasInput(1)) {
            ctx.AbsorbInput(1);
        } else if (ctx.Constant(1) != nullptr) {
            d.m_K = ctx.GetParamInts(1, "k")[0];
            ctx.AbsorbInput(1);
        }
    }
    return {WithShape(x, x.GetShape())};
}

}  // namespace trellis::core
