// RotaryEmbedding (ONNX RotaryEmbedding, opset 23): validation and shape inference.
//
// X is 4-D (batch, heads, sequence, head size) or 3-D (batch, sequence, heads * head size) with
// num_heads. The rotated part of each head is rotary_embedding_dim (0: the whole head), even and
// at most the head size. With position_ids (batch, sequence; Signed64 or Signed32) the caches are
// tables (max position, dim / 2) indexed by it (positions are checked when the layer runs);
// without, they are (batch, sequence, dim / 2). The output has X's shape and type.
#include "core/InferContext.hpp"

namespace trellis::core {

std::vector<TensorInfo> RotaryEmbeddingInfer(InferContext& ctx) {
    auto& d = ctx.Desc<RotaryEmbeddingDescriptor>();
    const TensorInfo& x = ctx.Input(0);
    ctx.ExpectTypeIn(0, {DataType::Float32, DataType::Float16, DataType::BFloat16, DataType::Float64});
    ctx.ExpectType(1, x.GetDataType());
    ctx.ExpectType(2, x.GetDataType());
    const TensorShape& xs = x.GetShape();
    unsigned int batch, seq, heads, headSize;
    if (xs.GetNumDimensions() == 4) {
        if (d.m_NumHeads && d.m_NumHeads != xs[1]) {
            ctx.Fail("num_heads=" + std::to_string(d.m_NumHeads) + " contradicts the heads of 4-D X " + xs.ToString());
        }
        batch = xs[0], heads = xs[1], seq = xs[2], headSize = xs[3];
    } else if (xs.GetNumDimensions() == 3) {
        if (d.m_NumHeads == 0 || xs[2] % d.m_NumHeads) {
            ctx.Fail("3-D X " + xs.ToString() + " needs num_heads > 0 dividing its hidden size");
        }
        batch = xs[0], seq = xs[1], heads = d.m_NumHeads, headSize = xs[2] / d.m_NumHeads;
    } else {
        ctx.Fail("X " + xs.ToString() + " must be 3-D or 4-D");
    }
    d.m_NumHeads = heads;
    const unsigned int dim = d.m_RotaryDim ? d.m_RotaryDim : headSize;
    if (dim % 2 || dim > headSize) {
        ctx.Fail("rotary_embedding_dim=" + std::to_string(dim) + " must be even and at most the head size " +
                 std::to_string(headSize));
    }
    d.m_RotaryDim = dim;
    const TensorShape& cs = ctx.Input(1).GetShape();
    if (ctx.Input(2).GetShape() != cs) {
        ctx.Fail("cos_cache " + cs.ToString() + " and sin_cache " + ctx.Input(2).GetShape().ToString() +
                 " must have one shape");
    }
    if (ctx.HasInput(3)) {
        ctx.ExpectTypeIn(3, {DataType::Signed64, DataType::Signed32});
        if (ctx.Input(3).GetShape() != TensorShape({batch, seq})) {
            ctx.Fail("position_ids " + ctx.Input(3).GetShape().ToString() + " must be (batch, sequence) = (" +
                     std::to_string(batch) + ", " + std::to_string(seq) + ")");
        }
        if (cs.GetNumDimensions() != 2 || cs[1] != dim / 2) {
            ctx.Fail("with position_ids the caches " + cs.ToString() + " must be (max position, " +
                     std::to_string(dim / 2) + ")");
        }
    } else if (cs != TensorShape({batch, seq, dim / 2})) {
        ctx.Fail("without position_ids the caches " + cs.ToString() + " must be (batch, sequence, " +
                 std::to_string(dim / 2) + ") = (" + std::to_string(batch) + ", " + std::to_string(seq) + ", " +
                 std::to_string(dim / 2) + ")");
    }
    return {TensorInfo(xs, x.GetDataType())};
}

}  // namespace trellis::core
