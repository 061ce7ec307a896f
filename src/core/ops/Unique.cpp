// Unique: the distinct elements (m_Axis unset: of the flattened input) or slices along m_Axis.
// Outputs Y (input type), indices, inverse_indices and counts (Signed64). How many are distinct
// depends on the input's values, so it must be constant when the network is optimized (a graph
// input feeding it is pinned per run).
#include "core/InferContext.hpp"
#include <trellis/backends/ValueDependentOps.hpp>

namespace trellis::core {

std::vector<TensorInfo> UniqueInfer(InferContext& ctx) {
    auto& d = ctx.Desc<UniqueDescriptor>();
    const TensorInfo& x = ctx.Input(0);
    if (!valuedep::UniqueSupportsType(x.GetDataType())) {
        ctx.Fail(std::string("input 0 has type ") + GetDataTypeName(x.GetDataType()) +
                 "; expected Float32, Float64, Float16, BFloat16, Signed32, Signed64, UInt8 or Boolean");
    }
    const TensorShape& xs = x.GetShape();
    std::size_t outer = 1, slices = x.GetNumElements(), inner = 1;
    if (d.m_Axis) {
        if (xs.GetNumDimensions() == 0) ctx.Fail("axis is given but input 0 is a scalar");
        const unsigned int axis = ctx.NormalizeAxis(*d.m_Axis, xs.GetNumDimensions());
        d.m_Axis = axis;
        outer = 1;
        for (unsigned int i = 0; i < axis; ++i) outer *= xs[i];
        slices = xs[axis];
        inner = 1;
        for (unsigned int i = axis + 1; i < xs.GetNumDimensions(); ++i) inner *= xs[i];
    }
    const ConstTensor& data = ctx.RequireConstant(
        0, "X", std::string("decides the output shapes by its values, ") + kNotConstantThen);
    const valuedep::UniqueResult r =
        valuedep::FindUnique(data.GetMemoryArea(), x.GetDataType(), outer, slices, inner, d.m_Sorted);
    const auto k = static_cast<unsigned int>(r.m_First.size());
    TensorShape y({k});
    if (d.m_Axis) {
        y = xs;
        y[static_cast<unsigned int>(*d.m_Axis)] = k;
    }
    return {TensorInfo(y, x.GetDataType()), TensorInfo(TensorShape({k}), DataType::Signed64),
            TensorInfo(TensorShape({static_cast<unsigned int>(slices)}), DataType::Signed64),
            TensorInfo(TensorShape({k}), DataType::Signed64)};
}

}  // namespace trellis::core
