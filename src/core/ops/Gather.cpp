// Gather: validation and shape inference. Output shape is data[:axis] + indices + data[axis+1:].
// Indices are Signed32 or Signed64; constant indices are range-checked here, the rest at
// execution time by the backend.
#include "core/InferContext.hpp"
#include "core/ops/DataOpsUtil.hpp"

namespace trellis::core {

std::vector<TensorInfo> GatherInfer(InferContext& ctx) {
    GatherDescriptor& d = ctx.Desc<GatherDescriptor>();
    const TensorInfo& data = ctx.Input(0);
    const TensorInfo& indices = ctx.Input(1);
    const unsigned int rank = data.GetNumDimensions();
    if (rank == 0) ctx.Fail("data is a scalar; Gather needs data of rank 1 or more");
    const unsigned int axis = ctx.NormalizeAxis(d.m_Axis, rank);
    d.m_Axis = static_cast<int>(axis);
    if (indices.GetDataType() != DataType::Signed32 && indices.GetDataType() != DataType::Signed64) {
        ctx.Fail(std::string("indices are ") + GetDataTypeName(indices.GetDataType()) +
                 "; they must be Signed32 or Signed64");
    }
    const int64_t dim = data.GetShape()[axis];
    if (ctx.Constant(1) != nullptr && indices.GetNumElements() > 0) {
        for (int64_t index : ctx.GetParamInts(1, "indices")) {
            if (index < -dim || index >= dim) {
                ctx.Fail("index " + std::to_string(index) + " is out of range [" + std::to_string(-dim) + ", " +
                         std::to_string(dim) + ") for dim " + std::to_string(axis) + " of data " +
                         data.GetShape().ToString());
            }
        }
    }
    std::vector<unsigned int> dims(data.GetShape().GetDims().begin(), data.GetShape().GetDims().begin() + axis);
    dims.insert(dims.end(), indices.GetShape().GetDims().begin(), indices.GetShape().GetDims().end());
    dims.insert(dims.end(), data.GetShape().GetDims().begin() + axis + 1, data.GetShape().GetDims().end());
    return {WithShape(data, TensorShape(std::move(dims)))};
}

}  // namespace trellis::core
