// Compress: the slices of input 0 along m_Axis (of the flattened input when unset) whose entry
// in input 1 is true; a condition shorter than the axis drops the rest. The condition's values
// decide the output shape, so it must be constant when the network is optimized (a graph input
// feeding it is pinned per run). The data input may be any tensor.
#include "core/InferContext.hpp"
#include <trellis/backends/ValueDependentOps.hpp>

namespace trellis::core {

std::vector<TensorInfo> CompressInfer(InferContext& ctx) {
    auto& d = ctx.Desc<CompressDescriptor>();
    const TensorInfo& x = ctx.Input(0);
    const TensorInfo& c = ctx.Input(1);
    ctx.ExpectTypeIn(1, {DataType::Boolean});
    if (c.GetNumDimensions() != 1) ctx.Fail("input 1 (condition) must be 1-D, got shape " + c.GetShape().ToString());
    std::size_t length = x.GetNumElements();
    if (d.m_Axis) {
        if (x.GetNumDimensions() == 0) ctx.Fail("axis is given but input 0 is a scalar");
        d.m_Axis = ctx.NormalizeAxis(*d.m_Axis, x.GetNumDimensions());
        length = x.GetShape()[static_cast<unsigned int>(*d.m_Axis)];
    }
    if (c.GetNumElements() > length) {
        ctx.Fail("input 1 (condition) has " + std::to_string(c.GetNumElements()) + " entries, more than the " +
                 std::to_string(length) + (d.m_Axis ? " slices along axis " + std::to_string(*d.m_Axis) : " elements") +
                 " of input 0 " + x.GetShape().ToString());
    }
    const ConstTensor& cond = ctx.RequireConstant(
        1, "condition", std::string("decides the output shape by its values, ") + kNotConstantThen);
    const auto kept = static_cast<unsigned int>(
        valuedep::CountNonZero(cond.GetMemoryArea(), DataType::Boolean, cond.GetNumElements()));
    if (!d.m_Axis) return {TensorInfo(TensorShape({kept}), x.GetDataType())};
    TensorShape out = x.GetShape();
    out[static_cast<unsigned int>(*d.m_Axis)] = kept;
    return {TensorInfo(out, x.GetDataType())};
}

}  // namespace trellis::core
