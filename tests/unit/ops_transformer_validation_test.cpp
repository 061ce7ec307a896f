// Validation and run-time errors of the fused transformer layers: Attention, RmsNormalization,
// RotaryEmbedding. A bad layer makes Optimize() throw naming the layer and the rule; a position
// id outside the caches, which only arrives with the inputs, makes EnqueueWorkload() throw naming
// the layer. Values are checked by the numpy cases (tests/ops/cases_transformer.py) and ONNX's
// node cases (docs/conformance.md).
#include "TestHelpers.hpp"

#include <cstdint>
#include <string>
#include <vector>

using namespace trellis;
using trellis::test::ExpectRejected;
using trellis::test::ExpectRunThrows;
using trellis::test::MakeTensor;
using trellis::test::LayerTestNetwork;

TEST(OpsTransformer, AttentionShapesAndAttributesAreChecked) {
    {
        LayerTestNetwork n;  // mixed ranks
        n.Layer(LayerType::Attention, AttentionDescriptor{}, "attn_rank",
                {&n.Input({1, 2, 3, 4}), &n.Input({1, 2, 12}), &n.Input({1, 2, 3, 4})});
        ExpectRejected(n, "attn_rank", "must all be 3-D or all 4-D");
    }
    {
        LayerTestNetwork n;  // 3 kv heads do not divide 4 q heads
        n.Layer(LayerType::Attention, AttentionDescriptor{}, "attn_gqa",
                {&n.Input({1, 4, 3, 8}), &n.Input({1, 3, 5, 8}), &n.Input({1, 3, 5, 8})});
        ExpectRejected(n, "attn_gqa", "kv heads 3 must divide q heads 4");
    }
    {
        LayerTestNetwork n;  // 3-D without head counts
        n.Layer(LayerType::Attention, AttentionDescriptor{}, "attn_heads",
                {&n.Input({1, 3, 8}), &n.Input({1, 5, 8}), &n.Input({1, 5, 8})});
        ExpectRejected(n, "attn_heads", "need the attributes q_num_heads and kv_num_heads");
    }
    {
        LayerTestNetwork n;  // K's head size differs from Q's
        n.Layer(LayerType::Attention, AttentionDescriptor{}, "attn_head_size",
                {&n.Input({1, 2, 3, 8}), &n.Input({1, 2, 5, 6}), &n.Input({1, 2, 5, 6})});
        ExpectRejected(n, "attn_head_size", "must have Q's head size 8");
    }
    {
        LayerTestNetwork n;  // a mask longer than the keys
        n.Layer(LayerType::Attention, AttentionDescriptor{}, "attn_mask",
                {&n.Input({1, 2, 3, 8}), &n.Input({1, 2, 5, 8}), &n.Input({1, 2, 5, 8}), &n.Input({3, 6})});
        ExpectRejected(n, "attn_mask", "attn_mask 3x6 must broadcast to (batch, q heads, q length, total length)");
    }
    {
        LayerTestNetwork n;  // an integer mask
        n.Layer(LayerType::Attention, AttentionDescriptor{}, "attn_mask_type",
                {&n.Input({1, 2, 3, 8}), &n.Input({1, 2, 5, 8}), &n.Input({1, 2, 5, 8}),
                 &n.Input({3, 5}, DataType::Signed32)});
        ExpectRejected(n, "attn_mask_type", "it must be Boolean or Q's type Float32");
    }
    {
        LayerTestNetwork n;  // past_key without past_value
        n.Layer(LayerType::Attention, AttentionDescriptor{}, "attn_past",
                {&n.Input({1, 2, 3, 8}), &n.Input({1, 2, 5, 8}), &n.Input({1, 2, 5, 8}), &n.ConstFloats({}, {0}),
                 &n.Input({1, 2, 4, 8})});
        ExpectRejected(n, "attn_past", "past_key and past_value must be given together");
    }
    {
        LayerTestNetwork n;
        AttentionDescriptor d;
        d.m_QkMatmulOutputMode = 4;
        n.Layer(LayerType::Attention, d, "attn_mode", {&n.Input({1, 2, 3, 8}), &n.Input({1, 2, 5, 8}), &n.Input({1, 2, 5, 8})});
        ExpectRejected(n, "attn_mode", "qk_matmul_output_mode=4 must be 0, 1, 2 or 3");
    }
}

TEST(OpsTransformer, AttentionOutputsHaveTheirShapes) {
    LayerTestNetwork n;  // 3-D GQA with a past: present is 4-D over past + new keys
    AttentionDescriptor d;
    d.m_QNumHeads = 4;
    d.m_KvNumHeads = 2;
    n.Layer(LayerType::Attention, d, "attn",
            {&n.Input({2, 3, 32}), &n.Input({2, 5, 16}), &n.Input({2, 5, 12}), &n.ConstFloats({}, {0}), &n.Input({2, 2, 7, 8}),
             &n.Input({2, 2, 7, 6})},
            4);
    NetworkId id = 0;
    ASSERT_EQ(n.m_Runtime->LoadNetwork(id, n.Optimize()), Status::Success);
    EXPECT_EQ(n.m_Runtime->GetOutputTensorInfo(id, 0).GetShape(), TensorShape({2, 3, 24}));
    EXPECT_EQ(n.m_Runtime->GetOutputTensorInfo(id, 1).GetShape(), TensorShape({2, 2, 12, 8}));
    EXPECT_EQ(n.m_Runtime->GetOutputTensorInfo(id, 2).GetShape(), TensorShape({2, 2, 12, 6}));
    EXPECT_EQ(n.m_Runtime->GetOutputTensorInfo(id, 3).GetShape(), TensorShape({2, 4, 3, 12}));
}

TEST(OpsTransformer, RmsNormalizationIsChecked) {
    {
        LayerTestNetwork n;
        RmsNormalizationDescriptor d;
        d.m_Axis = 3;
        n.Layer(LayerType::RmsNormalization, d, "rms_axis", {&n.Input({2, 3, 4}), &n.ConstFloats({1, 1, 1, 1}, {4})});
        ExpectRejected(n, "rms_axis", "axis");
    }
    {
        LayerTestNetwork n;
        n.Layer(LayerType::RmsNormalization, RmsNormalizationDescriptor{}, "rms_scale",
                {&n.Input({2, 3, 4}), &n.ConstFloats({1, 1, 1}, {3})});
        ExpectRejected(n, "rms_scale", "scale 3 must broadcast unidirectionally to X 2x3x4");
    }
}

TEST(OpsTransformer, RotaryEmbeddingIsChecked) {
    {
        LayerTestNetwork n;  // odd rotary dim
        RotaryEmbeddingDescriptor d;
        d.m_RotaryDim = 3;
        n.Layer(LayerType::RotaryEmbedding, d, "rope_dim",
                {&n.Input({1, 2, 3, 8}), &n.Input({1, 3, 1}), &n.Input({1, 3, 1})});
        ExpectRejected(n, "rope_dim", "rotary_embedding_dim=3 must be even");
    }
    {
        LayerTestNetwork n;  // caches of the wrong shape
        n.Layer(LayerType::RotaryEmbedding, RotaryEmbeddingDescriptor{}, "rope_cache",
                {&n.Input({1, 2, 3, 8}), &n.Input({1, 3, 3}), &n.Input({1, 3, 3})});
        ExpectRejected(n, "rope_cache", "without position_ids the caches 1x3x3 must be (batch, sequence, 4)");
    }
    {
        LayerTestNetwork n;  // a position id past the caches fails when the layer runs
        n.Layer(LayerType::RotaryEmbedding, RotaryEmbeddingDescriptor{}, "rope_pos",
                {&n.Input({1, 2, 3, 4}), &n.ConstFloats(std::vector<float>(8, 1.0f), {4, 2}),
                 &n.ConstFloats(std::vector<float>(8, 0.0f), {4, 2}), &n.Input({1, 3}, DataType::Signed64)});
        ExpectRunThrows(n,
                        {MakeTensor<float>({1, 2, 3, 4}, DataType::Float32, std::vector<float>(24, 1.0f)),
                         MakeTensor<int64_t>({1, 3}, DataType::Signed64, {0, 1, 4})},
                        "rope_pos", "position_ids[0, 2] = 4 is outside the caches' 4 positions");
    }
}
