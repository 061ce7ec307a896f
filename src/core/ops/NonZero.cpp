// NonZero: the indices of the non-zero elements of input 0, as a Signed64 [rank, count] tensor.
// The count depends on the input's values, so the input must be constant when the network is
// optimized (a graph input feeding it is pinned per run: the network is specialized on it).
#include "core/InferContext.hpp"
#include <trellis/backends/ValueDependentOps.hpp>

namespace trellis::core {

std::vector<TensorInfo> NonZeroInfer(InferContext& ctx) {
    const TensorInfo& x = ctx.Input(0);
    const ConstTensor& data = ctx.RequireConstant(
        0, "data", std::string("decides the output shape by its values, ") + kNotConstantThen);
    const std::size_t count = valuedep::CountNonZero(data.GetMemoryArea(), x.GetDataType(), x.GetNumElements());
    // A scalar has rank 0 but counts as one dim of size 1 for ONNX (numpy.nonzero of a 0-d array).
    const unsigned int rank = std::max(x.GetNumDimensions(), 1u);
    return {TensorInfo(TensorShape({rank, static_cast<unsigned int>(count)}), DataType::Signed64)};
}

}  // namespace trellis::core
