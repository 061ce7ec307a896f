// Reduce (ONNX ReduceMean, ReduceSum, ReduceMax, ReduceMin): validation and shape inference.
//
// Axes come from parameter input 1 (opset 13+ ReduceSum, opset 18+ others) or the descriptor
// (the attribute form). After inference m_Axes is non-negative, sorted and unique; empty axes
// mean "all dims" unless m_NoopWithEmptyAxes, in which case m_Axes stays empty and the layer
// copies its input. keepdims keeps each reduced dim as 1, else drops it.
#include "core/InferContext.hpp"

#include <algorithm>

namespace trellis::core {

std::vector<TensorInfo> ReduceInfer(InferContext& ctx) {
    auto& d = ctx.Desc<ReduceDescriptor>();
    const TensorInfo& x = ctx.Input(0);
    ctx.ExpectTypeIn(0, {DataType::Float32, DataType::Float16, DataType::BFloat16, DataType::Float64,
                         DataType::Signed32, DataType::Signed64, DataType::UInt8, DataType::Boolean});
    if (x.GetDataType() == DataType::Boolean && d.m_Operation != ReduceOperation::Max &&
        d.m_Operation != ReduceOperation::Min) {
        ctx.Fail(std::string("Reduce") + GetReduceOperationName(d.m_Operation) +
                 " takes no Boolean input (ReduceMax and ReduceMin do, from ONNX opset 20)");
    }
    const unsigned int rank = x.GetNumDimensions();
    const TensorShape& xs = x.GetShape();

    if (ctx.GetNumInputs() > 1) {
        if (ctx.HasInput(1)) d.m_Axes = ctx.GetParamInts(1, "axes");
        else d.m_Axes.clear();  // an empty axes tensor: the same as no axes
        ctx.AbsorbInput(1);
    }

    std::vector<int64_t> axes;
    for (int64_t a : d.m_Axes) axes.push_back(ctx.NormalizeAxis(a, rank, "axes entry"));
    std::sort(axes.begin(), axes.end());
    if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) {
        std::string list;
        for (int64_t a : d.m_Axes) {
            if (!list.empty()) list += ',';
            list += std::to_string(a);
        }
        ctx.Fail("axes [" + list + "] name a dim more than once (input " + xs.ToString() + ")");
    }
    if (axes.empty() && !d.m_NoopWithEmptyAxes) {
        for (unsigned int i = 0; i < rank; ++i) axes.push_back(i);
    }
    d.m_Axes = axes;

    std::vector<unsigned int> out;
    for (unsigned int i = 0; i < rank; ++i) {
        const bool reduced = std::binary_search(axes.begin(), axes.end(), static_cast<int64_t>(i));
        if (!reduced) out.push_back(xs[i]);
        else if (d.m_KeepDims) out.push_back(1);
    }
    return {TensorInfo(TensorShape(out), x.GetDataType(), x.GetQuantizationScale(), x.GetQuantizationOffset())};
}

}  // namespace trellis::core
