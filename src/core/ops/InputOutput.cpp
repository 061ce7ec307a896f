// Inference for the layers the core handles itself: Input, Output, Constant, PreCompiled.
#include "core/InferContext.hpp"

namespace trellis::core {

// Input layers have no inputs; their output info is set by the application (checked by the
// optimizer before inference runs), so inference returns nothing new here.
std::vector<TensorInfo> InputInfer(InferContext&) { return {}; }

std::vector<TensorInfo> OutputInfer(InferContext&) { return {}; }

std::vector<TensorInfo> ConstantInfer(InferContext& ctx) {
    const auto& d = ctx.Desc<ConstantDescriptor>();
    if (!d.m_Tensor.GetMemoryArea() && d.m_Tensor.GetNumBytes() != 0) ctx.Fail("constant has no data");
    TensorInfo info = d.m_Tensor.GetInfo();
    info.SetConstant(true);
    return {info};
}

// A PreCompiled layer's outputs are fixed by the backend that created it (set on its output
// slots); the optimizer keeps them as they are.
std::vector<TensorInfo> PreCompiledInfer(InferContext&) { return {}; }

}  // namespace trellis::core
