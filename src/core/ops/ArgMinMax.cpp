// ArgMinMax (ONNX ArgMax, ArgMin): validation and shape inference. The output is Signed64 with
// the reduced dim kept as 1 (m_KeepDims) or dropped; m_Axis is normalized to [0, rank).
#include "core/InferContext.hpp"

namespace trellis::core {

std::vector<TensorInfo> ArgMinMaxInfer(InferContext& ctx) {
    auto& d = ctx.Desc<ArgMinMaxDescriptor>();
    const char* op = d.m_Function == ArgMinMaxFunction::Max ? "ArgMax" : "ArgMin";
    ctx.ExpectTypeIn(0, {DataType::Float32, DataType::Float16, DataType::BFloat16, DataType::Float64,
                         DataType::Signed32, DataType::Signed64, DataType::UInt8});
    const TensorShape& xs = ctx.Input(0).GetShape();
    const unsigned int rank = xs.GetNumDimensions();
    if (rank == 0) ctx.Fail(std::string(op) + ": the input is a scalar; it needs rank 1 or more");
    const unsigned int axis = ctx.NormalizeAxis(d.m_Axis, rank);
    d.m_Axis = axis;
    if (xs[axis] == 0) {
        ctx.Fail(std::string(op) + " over the empty dim " + std::to_string(axis) + " of " + xs.ToString() +
                 " has no index to return");
    }
    std::vector<unsigned int> out;
    for (unsigned int i = 0; i < rank; ++i) {
        if (i != axis) out.push_back(xs[i]);
        else if (d.m_KeepDims) out.push_back(1);
    }
    return {TensorInfo(TensorShape(out), DataType::Signed64)};
}

}  // namespace trellis::core
