// Attention (ONNX Attention, opsets 23-25): validation and shape inference.
//
// Q, K, V: all 4-D (batch, heads, sequence, head size) or all 3-D (batch, sequence, hidden) with
// the head counts from the descriptor. Rules checked here (each failure names the rule):
//  - one float type for Q, K, V (and past_key/past_value, an additive mask);
//  - equal batch; Q's and K's head size equal; K and V the same heads and sequence length;
//  - kv heads divide q heads (grouped-query attention);
//  - past_key/past_value given together, 4-D (batch, kv heads, past, head size / V's head size);
//  - attn_mask Boolean or Q's type, rank 1 to 4, broadcastable right-aligned to (batch, q heads,
//    q length, total length) with its last dim at most the total length;
//  - nonpad_kv_seqlen (batch) Signed64, not with past_key;
//  - qk_matmul_output_mode in 0..3, softcap >= 0, window sizes >= -1.
// Outputs: Y (Q's layout, V's head size), present_key, present_value (4-D), qk_matmul_output
// (batch, q heads, q length, total length).
#include "core/InferContext.hpp"

namespace trellis::core {

namespace {

std::string Dims(const TensorShape& s) { return s.ToString(); }

}  // namespace

std::vector<TensorInfo> AttentionInfer(InferContext& ctx) {
    auto& d = ctx.Desc<AttentionDescriptor>();
    ctx.ExpectTypeIn(0, {DataType::Float32, DataType::Float16, DataType::BFloat16, DataType::Float64});
    const DataType type = ctx.Input(0).GetDataType();
    ctx.ExpectType(1, type);
    ctx.ExpectType(2, type);
    const TensorShape& q = ctx.Input(0).GetShape();
    const TensorShape& k = ctx.Input(1).GetShape();
    const TensorShape& v = ctx.Input(2).GetShape();
    const unsigned int rank = q.GetNumDimensions();
    if ((rank != 3 && rank != 4) || k.GetNumDimensions() != rank || v.GetNumDimensions() != rank) {
        ctx.Fail("Q " + Dims(q) + ", K " + Dims(k) + " and V " + Dims(v) + " must all be 3-D or all 4-D");
    }
    if (d.m_QkMatmulOutputMode < 0 || d.m_QkMatmulOutputMode > 3) {
        ctx.Fail("qk_matmul_output_mode=" + std::to_string(d.m_QkMatmulOutputMode) + " must be 0, 1, 2 or 3");
    }
    if (d.m_Softcap < 0.0f) ctx.Fail("softcap=" + std::to_string(d.m_Softcap) + " must not be negative");
    if (d.m_LeftWindow < -1 || d.m_RightWindow < -1) {
        ctx.Fail("left_window_size and right_window_size must be -1 (unbounded) or at least 0");
    }
    const unsigned int batch = q[0];
    unsigned int qHeads, kvHeads, qLen, kvLen, headSize, vHeadSize;
    if (rank == 4) {
        if ((d.m_QNumHeads && d.m_QNumHeads != q[1]) || (d.m_KvNumHeads && d.m_KvNumHeads != k[1])) {
            ctx.Fail("q_num_heads/kv_num_heads contradict the head dims of 4-D Q " + Dims(q) + " and K " + Dims(k));
        }
        qHeads = q[1], kvHeads = k[1], qLen = q[2], kvLen = k[2], headSize = q[3], vHeadSize = v[3];
        if (k[3] != headSize) ctx.Fail("K " + Dims(k) + " must have Q's head size " + std::to_string(headSize));
        if (v[1] != kvHeads || v[2] != kvLen) {
            ctx.Fail("V " + Dims(v) + " must have K's heads and sequence length (K " + Dims(k) + ")");
        }
    } else {
        if (d.m_QNumHeads == 0 || d.m_KvNumHeads == 0) {
            ctx.Fail("3-D inputs need the attributes q_num_heads and kv_num_heads (both > 0)");
        }
        qHeads = d.m_QNumHeads, kvHeads = d.m_KvNumHeads, qLen = q[1], kvLen = k[1];
        if (q[2] % qHeads || k[2] % kvHeads || v[2] % kvHeads) {
            ctx.Fail("the hidden sizes of Q " + Dims(q) + ", K " + Dims(k) + " and V " + Dims(v) +
                     " must divide by q_num_heads=" + std::to_string(qHeads) + " and kv_num_heads=" +
                     std::to_string(kvHeads));
        }
        headSize = q[2] / qHeads, vHeadSize = v[2] / kvHeads;
        if (k[2] / kvHeads != headSize) {
            ctx.Fail("K's head size " + std::to_string(k[2] / kvHeads) + " must equal Q's " + std::to_string(headSize));
        }
        if (v[1] != kvLen) ctx.Fail("V " + Dims(v) + " must have K's sequence length " + std::to_string(kvLen));
    }
    if (k[0] != batch || v[0] != batch) ctx.Fail("Q, K and V must have one batch size (Q " + Dims(q) + ")");
    if (kvHeads == 0 || qHeads % kvHeads) {
        ctx.Fail("kv heads " + std::to_string(kvHeads) + " must divide q heads " + std::to_string(qHeads) +
                 " (grouped-query attention)");
    }
    d.m_QNumHeads = qHeads;
    d.m_KvNumHeads = kvHeads;

    // past_key / past_value
    d.m_HasPast = ctx.HasInput(4) || ctx.HasInput(5);
    unsigned int pastLen = 0;
    if (d.m_HasPast) {
        if (!ctx.HasInput(4) || !ctx.HasInput(5)) ctx.Fail("past_key and past_value must be given together");
        ctx.ExpectType(4, type);
        ctx.ExpectType(5, type);
        const TensorShape& pk = ctx.Input(4).GetShape();
        const TensorShape& pv = ctx.Input(5).GetShape();
        if (pk.GetNumDimensions() != 4 || pv.GetNumDimensions() != 4 || pk[0] != batch || pv[0] != batch ||
            pk[1] != kvHeads || pv[1] != kvHeads || pk[2] != pv[2] || pk[3] != headSize || pv[3] != vHeadSize) {
            ctx.Fail("past_key " + Dims(pk) + " and past_value " + Dims(pv) + " must be (batch " +
                     std::to_string(batch) + ", kv heads " + std::to_string(kvHeads) +
                     ", one past length, head size " + std::to_string(headSize) + " / V's " +
                     std::to_string(vHeadSize) + ")");
        }
        pastLen = pk[2];
    }
    const unsigned int totalLen = pastLen + kvLen;

    // attn_mask
    d.m_HasMask = ctx.HasInput(3);
    if (d.m_HasMask) {
        const TensorInfo& m = ctx.Input(3);
        if (m.GetDataType() != DataType::Boolean && m.GetDataType() != type) {
            ctx.Fail(std::string("attn_mask has type ") + GetDataTypeName(m.GetDataType()) +
                     "; it must be Boolean or Q's type " + GetDataTypeName(type));
        }
        const TensorShape& ms = m.GetShape();
        const unsigned int mr = ms.GetNumDimensions();
        const unsigned int full[4] = {batch, qHeads, qLen, totalLen};
        bool ok = mr >= 1 && mr <= 4 && ms[mr - 1] <= totalLen;
        for (unsigned int i = 0; ok && i + 1 < mr; ++i) {
            const unsigned int dim = ms[i], want = full[4 - mr + i];
            ok = dim == 1 || dim == want;
        }
        if (!ok) {
            ctx.Fail("attn_mask " + Dims(ms) + " must broadcast to (batch, q heads, q length, total length) = (" +
                     std::to_string(batch) + ", " + std::to_string(qHeads) + ", " + std::to_string(qLen) + ", " +
                     std::to_string(totalLen) + "), its last dim at most the total length");
        }
    }

    // nonpad_kv_seqlen
    d.m_HasNonpadKvSeqlen = ctx.HasInput(6);
    if (d.m_HasNonpadKvSeqlen) {
        ctx.ExpectType(6, DataType::Signed64);
        if (ctx.Input(6).GetShape() != TensorShape({batch})) {
            ctx.Fail("nonpad_kv_seqlen " + Dims(ctx.Input(6).GetShape()) + " must have one value per batch entry (" +
                     std::to_string(batch) + ")");
        }
        if (d.m_HasPast) ctx.Fail("nonpad_kv_seqlen cannot be combined with past_key/past_value");
    }

    std::vector<TensorInfo> outs;
    outs.emplace_back(rank == 4 ? TensorShape({batch, qHeads, qLen, vHeadSize})
                                : TensorShape({batch, qLen, qHeads * vHeadSize}),
                      type);
    if (ctx.GetNumOutputs() > 1) outs.emplace_back(TensorShape({batch, kvHeads, totalLen, headSize}), type);
    if (ctx.GetNumOutputs() > 2) outs.emplace_back(TensorShape({batch, kvHeads, totalLen, vHeadSize}), type);
    if (ctx.GetNumOutputs() > 3) outs.emplace_back(TensorShape({batch, qHeads, qLen, totalLen}), type);
    return outs;
}

}  // namespace trellis::core
