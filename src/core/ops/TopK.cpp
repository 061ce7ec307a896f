// TopK (ONNX TopK): validation and shape inference. K comes from the descriptor or parameter
// input 1 (one integer, absorbed); it must lie in [0, dim of the axis]. Outputs: the values
// (the input's type) and Signed64 indices, both the input's shape with the axis dim set to K.
// After inference m_Axis is in [0, rank).
#include "core/InferContext.hpp"

namespace trellis::core {

std::vector<TensorInfo> TopKInfer(InferContext& ctx) {
    auto& d = ctx.Desc<TopKDescriptor>();
    const TensorInfo& x = ctx.Input(0);
    ctx.ExpectTypeIn(0, {DataType::Float32, DataType::Float64, DataType::Float16, DataType::Signed32,
                         DataType::Signed64, DataType::UInt8, DataType::UInt64});
    const unsigned int rank = x.GetNumDimensions();
    if (rank == 0) ctx.Fail("input X is a scalar; it needs rank 1 or more");
    d.m_Axis = ctx.NormalizeAxis(d.m_Axis, rank);
    if (ctx.GetNumInputs() > 1) {
        if (!ctx.HasInput(1)) ctx.Fail("input 1 (K) is required");
        const std::vector<int64_t> k = ctx.GetParamInts(1, "K");
        if (k.size() != 1) ctx.Fail("input 1 (K) must hold one value, holds " + std::to_string(k.size()));
        d.m_K = k[0];
        ctx.AbsorbInput(1);
    }
    const unsigned int dim = x.GetShape()[static_cast<unsigned int>(d.m_Axis)];
    if (d.m_K < 0 || d.m_K > dim) {
        ctx.Fail("K=" + std::to_string(d.m_K) + " must lie in [0, " + std::to_string(dim) + "], the size of axis " +
                 std::to_string(d.m_Axis) + " of X " + x.GetShape().ToString());
    }
    std::vector<unsigned int> dims = x.GetShape().GetDims();
    dims[static_cast<std::size_t>(d.m_Axis)] = static_cast<unsigned int>(d.m_K);
    return {TensorInfo(TensorShape(dims), x.GetDataType()), TensorInfo(TensorShape(dims), DataType::Signed64)};
}

}  // namespace trellis::core
