// GatherElements and ScatterElements: validation and shape inference.
// GatherElements: data and indices have the same rank; the output has the indices' shape and the
// data's type. ScatterElements: indices and updates have the same shape, of the data's rank; the
// output is the data's shape and type. Indices are Signed32 or Signed64; every index dim but the
// axis must not exceed the data's (ONNX leaves it open; a larger one would read out of bounds).
// Constant indices are range-checked here, the rest by the backend at execution time.
#include "core/InferContext.hpp"
#include "core/ops/DataOpsUtil.hpp"

namespace trellis::core {

namespace {

unsigned int CheckElementsIndices(InferContext& ctx, int64_t& axisField, unsigned int indicesInput) {
    const TensorInfo& data = ctx.Input(0);
    const TensorInfo& indices = ctx.Input(indicesInput);
    const unsigned int rank = data.GetNumDimensions();
    if (rank == 0) ctx.Fail("data is a scalar; it needs rank 1 or more");
    const unsigned int axis = ctx.NormalizeAxis(axisField, rank);
    axisField = axis;
    if (indices.GetDataType() != DataType::Signed32 && indices.GetDataType() != DataType::Signed64) {
        ctx.Fail(std::string("indices are ") + GetDataTypeName(indices.GetDataType()) +
                 "; they must be Signed32 or Signed64");
    }
    if (indices.GetNumDimensions() != rank) {
        ctx.Fail("indices " + indices.GetShape().ToString() + " and data " + data.GetShape().ToString() +
                 " must have the same rank");
    }
    for (unsigned int i = 0; i < rank; ++i) {
        if (i != axis && indices.GetShape()[i] > data.GetShape()[i]) {
            ctx.Fail("indices " + indices.GetShape().ToString() + " exceed data " + data.GetShape().ToString() +
                     " in dim " + std::to_string(i) + " (only the axis dim " + std::to_string(axis) + " may differ)");
        }
    }
    const int64_t dim = data.GetShape()[axis];
    if (ctx.Constant(indicesInput) != nullptr && indices.GetNumElements() > 0) {
        for (int64_t index : ctx.GetParamInts(indicesInput, "indices")) {
            if (index < -dim || index >= dim) {
                ctx.Fail("index " + std::to_string(index) + " is out of range [" + std::to_string(-dim) + ", " +
                         std::to_string(dim) + ") for dim " + std::to_string(axis) + " of data " +
                         data.GetShape().ToString());
            }
        }
    }
    return axis;
}

}  // namespace

std::vector<TensorInfo> GatherElementsInfer(InferContext& ctx) {
    GatherDescriptor& d = ctx.Desc<GatherDescriptor>();
    int64_t axis = d.m_Axis;
    CheckElementsIndices(ctx, axis, 1);
    d.m_Axis = static_cast<int>(axis);
    return {WithShape(ctx.Input(0), ctx.Input(1).GetShape())};
}

std::vector<TensorInfo> ScatterElementsInfer(InferContext& ctx) {
    auto& d = ctx.Desc<ScatterElementsDescriptor>();
    CheckElementsIndices(ctx, d.m_Axis, 1);
    const TensorInfo& data = ctx.Input(0);
    const TensorInfo& updates = ctx.Input(2);
    if (updates.GetShape() != ctx.Input(1).GetShape()) {
        ctx.Fail("updates " + updates.GetShape().ToString() + " and indices " + ctx.Input(1).GetShape().ToString() +
                 " must have the same shape");
    }
    if (updates.GetDataType() != data.GetDataType()) {
        ctx.Fail(std::string("updates are ") + GetDataTypeName(updates.GetDataType()) + " and data " +
                 GetDataTypeName(data.GetDataType()) + "; they must have the same type");
    }
    return {WithShape(data, data.GetShape())};
}

}  // namespace trellis::core
