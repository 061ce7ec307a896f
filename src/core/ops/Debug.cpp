// Debug: a sink inserted by Optimize() (OptimizerOptions::m_Debug) that writes its input to a file.
#include "core/InferContext.hpp"

namespace trellis::core {

std::vector<TensorInfo> DebugInfer(InferContext& ctx) {
    const auto& d = ctx.Desc<DebugDescriptor>();
    if (d.m_Folder.empty() && !d.m_Callback) ctx.Fail("neither a debug folder nor a debug callback is set");
    if (!d.m_Folder.empty() && d.m_FileStem.empty()) ctx.Fail("the debug file name is empty");
    return {};
}

}  // namespace trellis::core
