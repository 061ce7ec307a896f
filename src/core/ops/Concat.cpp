// Concat: validation and shape inference. Every input has the first input's type and rank and
// the same dims except along the axis; the axis is normalized in the descriptor.
#include "core/InferContext.hpp"
#include "core/ops/DataOpsUtil.hpp"

#include <limits>

namespace trellis::core {

std::vector<TensorInfo> ConcatInfer(InferContext& ctx) {
    ConcatDescriptor& d = ctx.Desc<ConcatDescriptor>();
    const TensorInfo& first = ctx.Input(0);
    const unsigned int rank = first.GetNumDimensions();
    if (rank == 0) ctx.Fail("input 0 is a scalar; Concat joins tensors of rank 1 or more");
    const unsigned int axis = ctx.NormalizeAxis(d.m_Axis, rank);
    d.m_Axis = static_cast<int>(axis);

    uint64_t total = 0;
    for (unsigned int i = 0; i < ctx.GetNumInputs(); ++i) {
        const TensorInfo& in = ctx.Input(i);
        if (in.GetDataType() != first.GetDataType()) {
            ctx.Fail("input " + std::to_string(i) + " is " + GetDataTypeName(in.GetDataType()) + ", input 0 is " +
                     GetDataTypeName(first.GetDataType()) + "; all inputs must have the same type");
        }
        if (in.GetNumDimensions() != rank) {
            ctx.Fail("input " + std::to_string(i) + " has shape " + in.GetShape().ToString() + ", input 0 has " +
                     first.GetShape().ToString() + "; all inputs must have the same rank");
        }
        for (unsigned int k = 0; k < rank; ++k) {
            if (k != axis && in.GetShape()[k] != first.GetShape()[k]) {
                ctx.Fail("input " + std::to_string(i) + " has shape " + in.GetShape().ToString() + ", input 0 has " +
                         first.GetShape().ToString() + "; dims other than axis " + std::to_string(axis) +
                         " must match (they differ at dim " + std::to_string(k) + ")");
            }
        }
        total += in.GetShape()[axis];
    }
    if (total > std::numeric_limits<unsigned int>::max()) {
        ctx.Fail("output dim " + std::to_string(total) + " along axis " + std::to_string(axis) + " does not fit 32 bits");
    }
    TensorShape shape = first.GetShape();
    shape[axis] = static_cast<unsigned int>(total);
    return {WithShape(first, shape)};
}

}  // namespace trellis::core
