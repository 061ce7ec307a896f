// Shape: the input's dims [start, end) as a 1-D Signed64 tensor. Resolves start/end the ONNX
// (opset 15) way: negative values count from the back, then both clamp to [0, rank]; an end
// before the start gives an empty result (stored as end == start).
#include "core/InferContext.hpp"

#include <algorithm>

namespace trellis::core {

std::vector<TensorInfo> ShapeInfer(InferContext& ctx) {
    ShapeDescriptor& d = ctx.Desc<ShapeDescriptor>();
    const int64_t rank = ctx.Input(0).GetNumDimensions();
    auto resolve = [rank](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
    const int64_t start = resolve(d.m_Start);
    const int64_t end = std::max(start, resolve(d.m_End.value_or(rank)));
    d.m_Start = start;
    d.m_End = end;
    return {TensorInfo(TensorShape{static_cast<unsigned int>(end - start)}, DataType::Signed64)};
}

}  // namespace trellis::core
