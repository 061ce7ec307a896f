// Gemm (ONNX Gemm): validation and shape inference.
//
// Y [M, N] = alpha * op(A) * op(B) + beta * C, op() transposing when transA/transB is set;
// A and B are 2-D; C (optional) must broadcast unidirectionally to [M, N].
#include "core/InferContext.hpp"

namespace trellis::core {

std::vector<TensorInfo> GemmInfer(InferContext& ctx) {
    const auto& d = ctx.Desc<GemmDescriptor>();
    const TensorInfo& a = ctx.Input(0);
    ctx.ExpectTypeIn(0, {DataType::Float32, DataType::Float16, DataType::BFloat16, DataType::Float64,
                         DataType::Signed32, DataType::Signed64});
    ctx.ExpectType(1, a.GetDataType());
    ctx.ExpectRank(0, 2);
    ctx.ExpectRank(1, 2);

    const TensorShape& as = a.GetShape();
    const TensorShape& bs = ctx.Input(1).GetShape();
    const unsigned int m = d.m_TransA ? as[1] : as[0];
    const unsigned int k = d.m_TransA ? as[0] : as[1];
    const unsigned int kb = d.m_TransB ? bs[1] : bs[0];
    const unsigned int n = d.m_TransB ? bs[0] : bs[1];
    if (k != kb) {
        ctx.Fail("inner dims differ: op(A) is " + std::to_string(m) + "x" + std::to_string(k) + " (A " + as.ToString() +
                 (d.m_TransA ? ", transA" : "") + ") but op(B) is " + std::to_string(kb) + "x" + std::to_string(n) +
                 " (B " + bs.ToString() + (d.m_TransB ? ", transB" : "") + ")");
    }

    const TensorShape out({m, n});
    if (ctx.HasInput(2)) {
        ctx.ExpectType(2, a.GetDataType());
        const TensorShape& cs = ctx.Input(2).GetShape();
        const auto b = Broadcast(cs, out);
        if (cs.GetNumDimensions() > 2 || !b || *b != out) {
            ctx.Fail("C " + cs.ToString() + " must broadcast unidirectionally to the output " + out.ToString());
        }
    } else if (ctx.GetNumInputs() > 2) {
        ctx.AbsorbInput(2);  // an empty placeholder for the omitted optional C
    }
    return {TensorInfo(out, a.GetDataType())};
}

}  // namespace trellis::core
