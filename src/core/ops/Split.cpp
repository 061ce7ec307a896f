// Split: validation and shape inference. Resolves the descriptor to a normalized axis and one
// explicit size per output; sizes come from the descriptor or from parameter input 1 (opset 13).
#include "core/InferContext.hpp"
#include "core/ops/DataOpsUtil.hpp"

namespace trellis::core {

std::vector<TensorInfo> SplitInfer(InferContext& ctx) {
    SplitDescriptor& d = ctx.Desc<SplitDescriptor>();
    const TensorInfo& in = ctx.Input(0);
    const unsigned int rank = in.GetNumDimensions();
    if (rank == 0) ctx.Fail("input is a scalar; Split needs a tensor of rank 1 or more");
    const unsigned int axis = ctx.NormalizeAxis(d.m_Axis, rank);
    d.m_Axis = static_cast<int>(axis);
    ReadParamInts(ctx, 1, d.m_Sizes, "split sizes");

    const unsigned int numOutputs = ctx.GetNumOutputs();
    if (numOutputs == 0) ctx.Fail("layer has no outputs; Split needs at least one");
    const int64_t dim = in.GetShape()[axis];
    if (d.m_Sizes.empty()) {
        // Equal parts of ceil(dim / outputs), the last one smaller when the division is uneven
        // (ONNX Split-18's num_outputs; earlier opsets allow even divisions only, which this
        // rule splits the same way).
        const int64_t chunk = (dim + numOutputs - 1) / numOutputs;
        if (chunk * (numOutputs - 1) > dim) {
            ctx.Fail("dim " + std::to_string(dim) + " along axis " + std::to_string(axis) + " is too small for " +
                     std::to_string(numOutputs) + " parts of " + std::to_string(chunk) + " (ceil(dim / outputs)) with "
                     "only the last one smaller");
        }
        d.m_Sizes.assign(numOutputs, chunk);
        d.m_Sizes.back() = dim - chunk * (numOutputs - 1);
    }
    if (d.m_Sizes.size() != numOutputs) {
        ctx.Fail("split sizes " + DimsToString(d.m_Sizes) + " have " + std::to_string(d.m_Sizes.size()) +
                 " entries for " + std::to_string(numOutputs) + " outputs; there must be one per output");
    }
    int64_t sum = 0;
    for (int64_t s : d.m_Sizes) {
        if (s < 0) ctx.Fail("split sizes " + DimsToString(d.m_Sizes) + " contain a negative size");
        sum += s;
    }
    if (sum != dim) {
        ctx.Fail("split sizes " + DimsToString(d.m_Sizes) + " sum to " + std::to_string(sum) + ", but dim " +
                 std::to_string(axis) + " of input " + in.GetShape().ToString() + " is " + std::to_string(dim) +
                 "; they must sum to it");
    }
    std::vector<TensorInfo> outs;
    for (int64_t s : d.m_Sizes) {
        TensorShape shape = in.GetShape();
        shape[axis] = static_cast<unsigned int>(s);
        outs.push_back(WithShape(in, shape));
    }
    return outs;
}

}  // namespace trellis::core
