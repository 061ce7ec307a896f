// NegativeLogLikelihoodLoss: validation and shape inference.
//
// Inputs: x [N, C, d1...] (a float type), target [N, d1...] (Signed32 or Signed64), optional
// weight [C] of x's type. The output has x's type: the target's shape for reduction none, a
// scalar for sum and mean. Target values are checked at run time (the kernel's job).
#include "core/InferContext.hpp"
#include "core/ops/DataOpsUtil.hpp"

namespace trellis::core {

std::vector<TensorInfo> NegativeLogLikelihoodLossInfer(InferContext& ctx) {
    const auto& d = ctx.Desc<NegativeLogLikelihoodLossDescriptor>();
    const TensorInfo& x = ctx.Input(0);
    const TensorInfo& target = ctx.Input(1);
    ctx.ExpectTypeIn(0, {DataType::Float32, DataType::Float16, DataType::BFloat16, DataType::Float64});
    ctx.ExpectTypeIn(1, {DataType::Signed32, DataType::Signed64});
    const unsigned int rank = x.GetNumDimensions();
    if (rank < 2) ctx.Fail("input 0 (x) " + x.GetShape().ToString() + " must have rank >= 2 ([N, C, d1...])");
    std::vector<unsigned int> expected = x.GetShape().GetDims();
    expected.erase(expected.begin() + 1);
    if (target.GetShape().GetDims() != expected) {
        ctx.Fail("input 1 (target) " + target.GetShape().ToString() + " must have x's shape " + x.GetShape().ToString() +
                 " without dim 1 (C), i.e. " + TensorShape(expected).ToString());
    }
    if (ctx.HasInput(2)) {
        ctx.ExpectType(2, x.GetDataType());
        const TensorInfo& weight = ctx.Input(2);
        if (weight.GetNumDimensions() != 1 || weight.GetShape()[0] != x.GetShape()[1]) {
            ctx.Fail("input 2 (weight) " + weight.GetShape().ToString() + " must be 1-D with C=" +
                     std::to_string(x.GetShape()[1]) + " values");
        }
    }
    if (d.m_Reduction == LossReduction::None) return {TensorInfo(target.GetShape(), x.GetDataType())};
    return {TensorInfo(TensorShape(std::vector<unsigned int>{}), x.GetDataType())};
}

}  // namespace trellis::core
