// Converters of the fused transformer ops of opsets 23-25: Attention, RMSNormalization and
// RotaryEmbedding, each one layer (the core validates shapes; see Descriptors.hpp).
#include "OnnxConverters.hpp"

namespace trellis::onnximport {

void ConvertAttention(OnnxNodeContext& ctx) {
    // Inputs Q, K, V, attn_mask, past_key, past_value; nonpad_kv_seqlen from opset 24.
    ctx.ExpectInputs(3, ctx.Opset() >= 24 ? 7 : 6);
    ctx.ExpectOutputs(1, 4);
    AttentionDescriptor d;
    d.m_IsCausal = ctx.GetBool("is_causal", false);
    d.m_QNumHeads = ctx.ToUnsigned({ctx.GetInt("q_num_heads", 0)}, "attribute q_num_heads", 0)[0];
    d.m_KvNumHeads = ctx.ToUnsigned({ctx.GetInt("kv_num_heads", 0)}, "attribute kv_num_heads", 0)[0];
    d.m_Scale = ctx.FindFloat("scale");
    d.m_Softcap = ctx.GetFloat("softcap", 0.0f);
    d.m_QkMatmulOutputMode = ctx.ToInt(ctx.GetInt("qk_matmul_output_mode", 0), "attribute qk_matmul_output_mode");
    // softmax_precision asks for at least that precision in the softmax; CpuRef computes it in double.
    ctx.IgnoreAttributes({"softmax_precision"});
    if (ctx.Opset() >= 25) {
        d.m_LeftWindow = ctx.GetInt("left_window_size", -1);
        d.m_RightWindow = ctx.GetInt("right_window_size", -1);
    }
    int outputs = 1;
    for (unsigned int i = 1; i < 4; ++i) {
        if (ctx.IsOutputUsed(i)) outputs = static_cast<int>(i) + 1;
    }
    const unsigned int slots = ctx.NumInputs() > 3 ? ctx.NumInputs() : 3;
    ctx.AddNodeLayer(LayerType::Attention, d, slots, DataType::Signed64, outputs);
}

void ConvertRmsNormalization(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(2, 2);
    ctx.ExpectOutputs(1, 1);
    // stash_type picks the precision of the statistics; CpuRef computes them in double.
    ctx.IgnoreAttributes({"stash_type"});
    RmsNormalizationDescriptor d;
    d.m_Axis = ctx.ToInt(ctx.GetInt("axis", -1), "attribute axis");
    d.m_Eps = ctx.GetFloat("epsilon", 1e-5f);
    ctx.AddNodeLayer(LayerType::RmsNormalization, d, 2);
}

void ConvertRotaryEmbedding(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(3, 4);
    ctx.ExpectOutputs(1, 1);
    RotaryEmbeddingDescriptor d;
    d.m_Interleaved = ctx.GetBool("interleaved", false);
    d.m_NumHeads = ctx.ToUnsigned({ctx.GetInt("num_heads", 0)}, "attribute num_heads", 0)[0];
    d.m_RotaryDim = ctx.ToUnsigned({ctx.GetInt("rotary_embedding_dim", 0)}, "attribute rotary_embedding_dim", 0)[0];
    ctx.AddNodeLayer(LayerType::RotaryEmbedding, d, ctx.HasInput(3) ? 4 : 3);
}

}  // namespace trellis::onnximport
