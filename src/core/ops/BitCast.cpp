// BitCast (ONNX BitCast, opset 26): validation and shape inference. Each element's bytes are read
// as m_To; Trellis reinterprets between types of one element size only (the output then has the
// input's shape), and not from or to the quantized types (their scales would be lost).
#include "core/InferContext.hpp"

namespace trellis::core {

std::vector<TensorInfo> BitCastInfer(InferContext& ctx) {
    const auto& d = ctx.Desc<CastDescriptor>();
    const TensorInfo& x = ctx.Input(0);
    if (x.IsQuantized() || TensorInfo(TensorShape(), d.m_To).IsQuantized()) {
        ctx.Fail(std::string("BitCast between ") + GetDataTypeName(x.GetDataType()) + " and " +
                 GetDataTypeName(d.m_To) + ": quantized types cannot be reinterpreted");
    }
    if (GetDataTypeSize(x.GetDataType()) != GetDataTypeSize(d.m_To)) {
        ctx.Fail(std::string("BitCast from ") + GetDataTypeName(x.GetDataType()) + " (" +
                 std::to_string(GetDataTypeSize(x.GetDataType())) + " bytes) to " + GetDataTypeName(d.m_To) + " (" +
                 std::to_string(GetDataTypeSize(d.m_To)) + " bytes): Trellis reinterprets between types of one element "
                 "size only");
    }
    return {TensorInfo(x.GetShape(), d.m_To)};
}

}  // namespace trellis::core
