// Pad: validation and shape inference. Resolves the descriptor to m_Pads with one (begin, end)
// pair per input dim (all begins, then all ends) and m_Value, reading the optional parameter
// inputs 1..3 (pads, constant value, axes — the opset 18 form pads only the listed axes).
//
// Negative pads crop. They are accepted in constant mode only: with reflect/edge, ONNX leaves
// open whether the reflection sees the cropped or the original tensor.
#include "core/InferContext.hpp"
#include "core/ops/DataOpsUtil.hpp"

#include <cmath>
#include <set>

namespace trellis::core {

namespace {
const char* PadModeName(PadMode m) {
    switch (m) {
        case PadMode::Constant: return "constant";
        case PadMode::Reflect: return "reflect";
        case PadMode::Edge: return "edge";
    }
    return "?";
}
}  // namespace

std::vector<TensorInfo> PadInfer(InferContext& ctx) {
    PadDescriptor& d = ctx.Desc<PadDescriptor>();
    const TensorInfo& in = ctx.Input(0);
    const unsigned int rank = in.GetNumDimensions();

    ReadParamInts(ctx, 1, d.m_Pads, "pads");
    if (ctx.GetNumInputs() > 2) {
        if (ctx.HasInput(2)) {
            const std::vector<double> v = ctx.GetParamDoubles(2, "constant value");
            if (v.size() != 1) ctx.Fail("constant value input has " + std::to_string(v.size()) + " elements; it must have one");
            // The descriptor keeps the value as float; refuse values that would silently change.
            if (!std::isnan(v[0]) && static_cast<double>(static_cast<float>(v[0])) != v[0]) {
                ctx.Fail("constant value " + std::to_string(v[0]) + " is not exactly representable as float");
            }
            d.m_Value = static_cast<float>(v[0]);
        }
        ctx.AbsorbInput(2);
    }
    std::vector<int64_t> axes;
    ReadParamInts(ctx, 3, axes, "axes");

    std::vector<int64_t> pads(2 * rank, 0);
    if (!axes.empty()) {
        if (d.m_Pads.size() != 2 * axes.size()) {
            ctx.Fail("pads " + DimsToString(d.m_Pads) + " have " + std::to_string(d.m_Pads.size()) + " entries for axes " +
                     DimsToString(axes) + "; they need two per axis (all begins, then all ends)");
        }
        std::set<unsigned int> seen;
        for (std::size_t j = 0; j < axes.size(); ++j) {
            const unsigned int a = ctx.NormalizeAxis(axes[j], rank, "pad axis");
            if (!seen.insert(a).second) ctx.Fail("axes " + DimsToString(axes) + " name dim " + std::to_string(a) + " twice");
            pads[a] = d.m_Pads[j];
            pads[rank + a] = d.m_Pads[axes.size() + j];
        }
    } else if (!d.m_Pads.empty()) {
        if (d.m_Pads.size() != 2 * rank) {
            ctx.Fail("pads " + DimsToString(d.m_Pads) + " have " + std::to_string(d.m_Pads.size()) + " entries for input " +
                     in.GetShape().ToString() + "; they need two per dim (all begins, then all ends)");
        }
        pads = d.m_Pads;
    }

    std::vector<int64_t> outDims(rank);
    for (unsigned int k = 0; k < rank; ++k) {
        const int64_t dim = in.GetShape()[k];
        const int64_t begin = pads[k];
        const int64_t end = pads[rank + k];
        const std::string where = "pads " + DimsToString(pads) + " on dim " + std::to_string(k) + " (size " + std::to_string(dim) + ")";
        if (d.m_Mode != PadMode::Constant && (begin < 0 || end < 0)) {
            ctx.Fail(where + ": negative pads are supported in constant mode only, not " + PadModeName(d.m_Mode));
        }
        if (d.m_Mode == PadMode::Reflect && (begin >= dim || end >= dim) && (begin > 0 || end > 0)) {
            ctx.Fail(where + ": reflect pads must be smaller than the dim");
        }
        if (d.m_Mode == PadMode::Edge && dim == 0 && (begin > 0 || end > 0)) {
            ctx.Fail(where + ": edge mode cannot pad an empty dim");
        }
        if (__builtin_add_overflow(dim, begin, &outDims[k]) || __builtin_add_overflow(outDims[k], end, &outDims[k]) ||
            outDims[k] < 0) {
            ctx.Fail(where + ": the output dim would be negative or overflow");
        }
    }
    d.m_Pads = std::move(pads);
    return {WithShape(in, DimsToShape(ctx, outDims, "output shape"))};
}

}  // namespace trellis::core
