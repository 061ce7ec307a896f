// Hardmax: validation and shape inference. 1 at the first maximum along m_Axis (or, with
// m_Coerce2d, over all dims from m_Axis on together), 0 elsewhere; the output has the input's
// shape and type. m_Axis is normalized to [0, rank); m_Log has no Hardmax meaning.
#include "core/InferContext.hpp"

namespace trellis::core {

std::vector<TensorInfo> HardmaxInfer(InferContext& ctx) {
    auto& d = ctx.Desc<SoftmaxDescriptor>();
    if (d.m_Log) ctx.Fail("m_Log is set; Hardmax has no log form");
    const TensorInfo& x = ctx.Input(0);
    ctx.ExpectTypeIn(0, {DataType::Float32, DataType::Float16, DataType::BFloat16, DataType::Float64});
    if (x.GetNumDimensions() == 0) ctx.Fail("the input is a scalar; Hardmax needs rank 1 or more");
    d.m_Axis = static_cast<int>(ctx.NormalizeAxis(d.m_Axis, x.GetNumDimensions()));
    return {TensorInfo(x.GetShape(), x.GetDataType())};
}

}  // namespace trellis::core
