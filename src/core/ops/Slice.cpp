// Slice: validation and shape inference, ONNX semantics (opset 1 attributes or opset 10+
// parameter inputs 1..4: starts, ends, axes, steps).
//
// Resolves the descriptor to one entry per input dim (m_Axes = 0..rank-1) with starts and ends
// clamped as the ONNX spec says: negative values count from the back; for a positive step both
// clamp to [0, dim]; for a negative step the start clamps to [0, dim-1] and the end to
// [-1, dim-1], -1 meaning "up to and including index 0". Element i of output dim k is then
// input index m_Starts[k] + i * m_Steps[k], for i < the output dim.
#include "core/InferContext.hpp"
#include "core/ops/DataOpsUtil.hpp"

#include <algorithm>
#include <set>

namespace trellis::core {

std::vector<TensorInfo> SliceInfer(InferContext& ctx) {
    SliceDescriptor& d = ctx.Desc<SliceDescriptor>();
    ReadParamInts(ctx, 1, d.m_Starts, "starts");
    ReadParamInts(ctx, 2, d.m_Ends, "ends");
    ReadParamInts(ctx, 3, d.m_Axes, "axes");
    ReadParamInts(ctx, 4, d.m_Steps, "steps");

    const TensorInfo& in = ctx.Input(0);
    const unsigned int rank = in.GetNumDimensions();
    const std::size_t n = d.m_Starts.size();
    if (d.m_Ends.size() != n) {
        ctx.Fail("starts " + DimsToString(d.m_Starts) + " and ends " + DimsToString(d.m_Ends) +
                 " differ in length; they must have one entry per sliced axis");
    }
    std::vector<int64_t> axes = d.m_Axes;
    if (axes.empty()) {
        if (n > rank) {
            ctx.Fail("starts " + DimsToString(d.m_Starts) + " have " + std::to_string(n) + " entries for input " +
                     in.GetShape().ToString() + " of rank " + std::to_string(rank));
        }
        for (std::size_t j = 0; j < n; ++j) axes.push_back(static_cast<int64_t>(j));
    }
    std::vector<int64_t> steps = d.m_Steps.empty() ? std::vector<int64_t>(n, 1) : d.m_Steps;
    if (axes.size() != n || steps.size() != n) {
        ctx.Fail("starts " + DimsToString(d.m_Starts) + ", axes " + DimsToString(axes) + " and steps " +
                 DimsToString(steps) + " differ in length; they must have one entry per sliced axis");
    }

    std::vector<int64_t> starts(rank, 0), ends(rank), resolvedSteps(rank, 1), outDims(rank);
    for (unsigned int k = 0; k < rank; ++k) ends[k] = in.GetShape()[k];
    std::set<unsigned int> seen;
    for (std::size_t j = 0; j < n; ++j) {
        const unsigned int axis = ctx.NormalizeAxis(axes[j], rank, "slice axis");
        if (!seen.insert(axis).second) ctx.Fail("axes " + DimsToString(axes) + " name dim " + std::to_string(axis) + " twice");
        const int64_t step = steps[j];
        if (step == 0) ctx.Fail("steps " + DimsToString(steps) + ": step for axis " + std::to_string(axis) + " is 0; steps must be non-zero");
        const int64_t dim = in.GetShape()[axis];
        int64_t start = d.m_Starts[j];
        int64_t end = d.m_Ends[j];
        if (start < 0) start += dim;
        if (end < 0) end += dim;
        if (step > 0) {
            start = std::clamp<int64_t>(start, 0, dim);
            end = std::clamp<int64_t>(end, 0, dim);
        } else if (dim == 0) {
            start = 0;
            end = 0;
        } else {
            start = std::clamp<int64_t>(start, 0, dim - 1);
            end = std::clamp<int64_t>(end, -1, dim - 1);
        }
        starts[axis] = start;
        ends[axis] = end;
        resolvedSteps[axis] = step;
    }
    for (unsigned int k = 0; k < rank; ++k) {
        const int64_t step = resolvedSteps[k];
        // |step| may be 2^63, so count in unsigned arithmetic.
        const uint64_t span = step > 0 ? (ends[k] > starts[k] ? uint64_t(ends[k] - starts[k]) : 0)
                                       : (starts[k] > ends[k] ? uint64_t(starts[k] - ends[k]) : 0);
        const uint64_t mag = step > 0 ? uint64_t(step) : uint64_t(0) - uint64_t(step);
        outDims[k] = static_cast<int64_t>((span + mag - 1) / mag);
    }
    d.m_Starts = std::move(starts);
    d.m_Ends = std::move(ends);
    d.m_Steps = std::move(resolvedSteps);
    d.m_Axes.clear();
    for (unsigned int k = 0; k < rank; ++k) d.m_Axes.push_back(k);
    return {WithShape(in, DimsToShape(ctx, outDims, "output shape"))};
}

}  // namespace trellis::core
