// Converters of the transformer ops of opsets 23-27: Attention, RMSNormalization and
// RotaryEmbedding, each one layer (the core validates shapes; see Descriptors.hpp); TensorScatter
// (one layer); CausalConvWithState and LinearAttention, composed of existing layers.
#include "OnnxConverters.hpp"

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

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

void ConvertTensorScatter(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(2, 3);
    ctx.ExpectOutputs(1, 1);
    TensorScatterDescriptor d;
    d.m_Axis = ctx.GetInt("axis", -2);
    const std::string mode = ctx.GetString("mode", "linear");
    if (mode == "circular") d.m_Circular = true;
    else if (mode != "linear") ctx.Fail("attribute mode='" + mode + "' is not supported (expected linear or circular)");
    ctx.AddNodeLayer(LayerType::TensorScatter, d, ctx.HasInput(2) ? 3 : 2);
}

namespace {

// Layer builders for the composed LinearAttention, each named after the node plus `suffix`.
struct Composer {
    OnnxNodeContext& ctx;

    IOutputSlot& Add(LayerType type, const LayerDescriptor& d, std::vector<IOutputSlot*> in, const std::string& suffix) {
        return ctx.AddLayer(type, d, in, 1, suffix)->GetOutputSlot(0);
    }
    IOutputSlot& Reshape(IOutputSlot& x, std::vector<int64_t> shape, const std::string& suffix) {
        ReshapeDescriptor d;
        d.m_TargetShape = std::move(shape);
        return Add(LayerType::Reshape, d, {&x}, suffix);
    }
    IOutputSlot& Transpose(IOutputSlot& x, std::vector<unsigned int> perm, const std::string& suffix) {
        return Add(LayerType::Transpose, TransposeDescriptor{std::move(perm)}, {&x}, suffix);
    }
    /// Index t of dim `axis`, the dim kept (size 1).
    IOutputSlot& Step(IOutputSlot& x, int64_t axis, int64_t t, const std::string& suffix) {
        SliceDescriptor d;
        d.m_Axes = {axis};
        d.m_Starts = {t};
        d.m_Ends = {t + 1};
        return Add(LayerType::Slice, d, {&x}, suffix);
    }
    IOutputSlot& Binary(BinaryOperation op, IOutputSlot& a, IOutputSlot& b, const std::string& suffix) {
        return Add(LayerType::ElementwiseBinary, ElementwiseBinaryDescriptor{op}, {&a, &b}, suffix);
    }
    IOutputSlot& MatMul(IOutputSlot& a, IOutputSlot& b, const std::string& suffix) {
        return Add(LayerType::MatMul, EmptyDescriptor{}, {&a, &b}, suffix);
    }
    IOutputSlot& Cast(IOutputSlot& x, DataType to, const std::string& suffix) {
        return Add(LayerType::Cast, CastDescriptor{to}, {&x}, suffix);
    }
    IOutputSlot& Scalar(float v, const std::string& suffix) {
        auto storage = std::make_shared<float>(v);
        const TensorInfo info(TensorShape(std::vector<unsigned int>{}), DataType::Float32, 0.0f, 0, /*isConstant=*/true);
        return Add(LayerType::Constant, ConstantDescriptor{ConstTensor(info, storage.get()), storage}, {}, suffix);
    }
};

// The shape of input i, which must be known at import.
TensorShape KnownShapeOf(OnnxNodeContext& ctx, unsigned int i, const char* what) {
    if (!ctx.InputSlot(i).IsTensorInfoSet() || !ctx.InputSlot(i).GetTensorInfo().GetShape().AreAllDimensionsSpecified()) {
        ctx.Fail(std::string(what) + "'s shape must be known when the model is imported ('" + ctx.InputName(i) +
                 "' is computed by other nodes or has unknown dims)");
    }
    return ctx.InputSlot(i).GetTensorInfo().GetShape();
}

}  // namespace

void ConvertLinearAttention(OnnxNodeContext& ctx) {
    // LinearAttention (opset 27), composed of layers with its recurrence unrolled over the T
    // positions (known at import), in Float32 as the ONNX reference computes (inputs cast to
    // Float32, outputs cast back). Per position t and KV head, the state S (d_k x d_v):
    //   gated / gated_delta: S = exp(g_t) * S (g_t per head or per key dim, scaling S's rows)
    //   delta / gated_delta: v_t = beta_t * (v_t - k_t S)
    //   S = S + k_t^T v_t;  output_t = scale * q_t S for each query head of the KV head's group.
    ctx.ExpectInputs(3, 6);
    ctx.ExpectOutputs(1, 2);
    ctx.IgnoreAttributes({"chunk_size"});  // a tuning hint: the results do not depend on it
    const std::string rule = ctx.GetString("update_rule", "gated_delta");
    if (rule != "linear" && rule != "gated" && rule != "delta" && rule != "gated_delta") {
        ctx.Fail("attribute update_rule='" + rule + "' is not supported (expected linear, gated, delta or gated_delta)");
    }
    const bool gating = rule == "gated" || rule == "gated_delta", delta = rule == "delta" || rule == "gated_delta";
    if (gating != ctx.HasInput(4)) ctx.Fail("update_rule='" + rule + "' " + (gating ? "needs" : "takes no") + " input 4 (decay)");
    if (delta != ctx.HasInput(5)) ctx.Fail("update_rule='" + rule + "' " + (delta ? "needs" : "takes no") + " input 5 (beta)");
    const int64_t hq = ctx.GetInt("q_num_heads", 0), hkv = ctx.GetInt("kv_num_heads", 0);
    if (hq <= 0 || hkv <= 0 || hq % hkv != 0) {
        ctx.Fail("attributes q_num_heads=" + std::to_string(hq) + " and kv_num_heads=" + std::to_string(hkv) +
                 " must be positive, q_num_heads a multiple of kv_num_heads");
    }
    const TensorShape qs = KnownShapeOf(ctx, 0, "query"), ks = KnownShapeOf(ctx, 1, "key"), vs = KnownShapeOf(ctx, 2, "value");
    if (qs.GetNumDimensions() != 3 || ks.GetNumDimensions() != 3 || vs.GetNumDimensions() != 3) {
        ctx.Fail("query, key and value must be rank 3 (B, T, H*D); got " + qs.ToString() + ", " + ks.ToString() + ", " +
                 vs.ToString());
    }
    const int64_t b = qs[0], t = qs[1];
    if (qs[2] % hq != 0 || ks[2] % hkv != 0 || vs[2] % hkv != 0) {
        ctx.Fail("query's last dim must divide by q_num_heads, key's and value's by kv_num_heads");
    }
    const int64_t dk = qs[2] / hq, dv = vs[2] / hkv, group = hq / hkv;
    if (ks[2] / hkv != dk || ks[0] != b || vs[0] != b || ks[1] != t || vs[1] != t) {
        ctx.Fail("key " + ks.ToString() + " and value " + vs.ToString() + " must match query " + qs.ToString() +
                 " in batch and length, and key's head size query's");
    }
    if (t < 1) ctx.Fail("query " + qs.ToString() + " has no positions");
    const float scaleAttr = ctx.GetFloat("scale", 0.0f);
    const float scale = scaleAttr == 0.0f ? static_cast<float>(1.0 / std::sqrt(static_cast<double>(dk))) : scaleAttr;
    const DataType outType = ctx.InputSlot(0).GetTensorInfo().GetDataType();

    Composer c{ctx};
    const auto f32 = [&](unsigned int i, const std::string& name) -> IOutputSlot& {
        return c.Cast(ctx.InputSlot(i), DataType::Float32, "/" + name + "_float");
    };
    // (B, T, H*D) -> (B, H, T, D)
    const auto heads = [&](IOutputSlot& x, int64_t h, int64_t d, const std::string& name) -> IOutputSlot& {
        return c.Transpose(c.Reshape(x, {b, t, h, d}, "/" + name + "_heads"), {0, 2, 1, 3}, "/" + name + "_bhtd");
    };
    IOutputSlot& q = c.Reshape(heads(f32(0, "query"), hq, dk, "query"), {b, hkv, group, t, dk}, "/query_groups");
    IOutputSlot& k = heads(f32(1, "key"), hkv, dk, "key");
    IOutputSlot& v = heads(f32(2, "value"), hkv, dv, "value");
    IOutputSlot* decay = nullptr;  // (B, H_kv, T, 1 or d_k)
    if (gating) {
        const TensorShape gs = KnownShapeOf(ctx, 4, "decay");
        if (gs.GetNumDimensions() != 3 || gs[0] != b || gs[1] != t || (gs[2] != hkv && gs[2] != hkv * dk)) {
            ctx.Fail("decay " + gs.ToString() + " must be (B, T, kv_num_heads) or (B, T, kv_num_heads * d_k)");
        }
        decay = &heads(f32(4, "decay"), hkv, gs[2] == hkv ? 1 : dk, "decay");
    }
    IOutputSlot* beta = nullptr;  // (B, H_kv or 1, T, 1)
    if (delta) {
        const TensorShape bs = KnownShapeOf(ctx, 5, "beta");
        if (bs.GetNumDimensions() != 3 || bs[0] != b || bs[1] != t || (bs[2] != hkv && bs[2] != 1)) {
            ctx.Fail("beta " + bs.ToString() + " must be (B, T, kv_num_heads) or (B, T, 1)");
        }
        beta = &heads(f32(5, "beta"), static_cast<int64_t>(bs[2]), 1, "beta");
    }
    DataType stateType = outType;
    IOutputSlot* state = nullptr;  // (B, H_kv, d_k, d_v); none yet: all zeros
    if (ctx.HasInput(3)) {
        const TensorShape ps = KnownShapeOf(ctx, 3, "past_state");
        if (ps != TensorShape({static_cast<unsigned int>(b), static_cast<unsigned int>(hkv), static_cast<unsigned int>(dk),
                               static_cast<unsigned int>(dv)})) {
            ctx.Fail("past_state " + ps.ToString() + " must be (B, kv_num_heads, d_k, d_v) = (" + std::to_string(b) + ", " +
                     std::to_string(hkv) + ", " + std::to_string(dk) + ", " + std::to_string(dv) + ")");
        }
        stateType = ctx.InputSlot(3).GetTensorInfo().GetDataType();
        state = &f32(3, "past_state");
    }
    IOutputSlot& scaleSlot = c.Scalar(scale, "/scale");
    std::vector<IOutputSlot*> outputs;
    for (int64_t i = 0; i < t; ++i) {
        const std::string at = "/t" + std::to_string(i);
        IOutputSlot& kt = c.Step(k, 2, i, at + "_key");                                // (B, H_kv, 1, d_k)
        IOutputSlot* vt = &c.Step(v, 2, i, at + "_value");                             // (B, H_kv, 1, d_v)
        if (state && gating) {
            IOutputSlot& g = c.Transpose(c.Step(*decay, 2, i, at + "_decay"), {0, 1, 3, 2}, at + "_decay_rows");
            ElementwiseUnaryDescriptor exp;
            exp.m_Operation = UnaryOperation::Exp;
            state = &c.Binary(BinaryOperation::Mul, *state, c.Add(LayerType::ElementwiseUnary, exp, {&g}, at + "_gate"),
                              at + "_decayed");
        }
        if (delta) {
            IOutputSlot* residual = vt;
            if (state) {
                residual = &c.Binary(BinaryOperation::Sub, *vt, c.MatMul(kt, *state, at + "_retrieved"), at + "_residual");
            }
            vt = &c.Binary(BinaryOperation::Mul, c.Step(*beta, 2, i, at + "_beta"), *residual, at + "_update");
        }
        IOutputSlot& outer = c.MatMul(c.Transpose(kt, {0, 1, 3, 2}, at + "_key_column"), *vt, at + "_outer");
        state = state ? &c.Binary(BinaryOperation::Add, *state, outer, at + "_state") : &outer;
        IOutputSlot& qt = c.Reshape(c.Step(q, 3, i, at + "_query"), {b, hkv, group, dk}, at + "_query_rows");
        IOutputSlot& read = c.MatMul(qt, *state, at + "_read");                        // (B, H_kv, G, d_v)
        outputs.push_back(&c.Reshape(c.Binary(BinaryOperation::Mul, read, scaleSlot, at + "_scaled"), {b, hq, 1, dv},
                                     at + "_output"));
    }
    IOutputSlot& all = outputs.size() == 1 ? *outputs[0] : c.Add(LayerType::Concat, ConcatDescriptor{2}, outputs, "/outputs");
    IOutputSlot& packed = c.Reshape(c.Transpose(all, {0, 2, 1, 3}, "/output_bthd"), {b, t, hq * dv}, "/output_float");
    ctx.SetOutput(0, c.Cast(packed, outType, ""));
    if (ctx.IsOutputUsed(1)) ctx.SetOutput(1, c.Cast(*state, stateType, "/present_state"));
}

void ConvertCausalConvWithState(OnnxNodeContext& ctx) {
    // CausalConvWithState (opset 27): a depthwise causal 1-D convolution over the input with the
    // carried state (k - 1 positions; zeros when absent) in front, as its definition composes it:
    // padded = Concat(past_state, input) (or constant Pad), output = Conv(padded, weight, bias,
    // group = channels) then Swish with alpha 1 for silu/swish, present_state = the last k - 1
    // positions of padded. The kernel size k comes from weight's shape (C, 1, k), known at import.
    ctx.ExpectInputs(2, 4);
    ctx.ExpectOutputs(1, 2);
    const std::string activation = ctx.GetString("activation", "none");
    if (activation != "none" && activation != "silu" && activation != "swish") {
        ctx.Fail("attribute activation='" + activation + "' is not supported (expected none, silu or swish)");
    }
    if (!ctx.InputSlot(1).IsTensorInfoSet() || !ctx.InputSlot(1).GetTensorInfo().GetShape().AreAllDimensionsSpecified()) {
        ctx.Fail("weight's shape (channels, 1, k) must be known when the model is imported ('" + ctx.InputName(1) +
                 "' is computed by other nodes or has unknown dims)");
    }
    const TensorShape ws = ctx.InputSlot(1).GetTensorInfo().GetShape();
    if (ws.GetNumDimensions() != 3 || ws[1] != 1 || ws[2] == 0) {
        ctx.Fail("weight " + ws.ToString() + " must be (channels, 1, k) with k >= 1");
    }
    const unsigned int channels = ws[0], k = ws[2];
    IOutputSlot* padded = &ctx.InputSlot(0);
    if (ctx.HasInput(3)) {
        padded = &ctx.AddLayer(LayerType::Concat, ConcatDescriptor{2}, {&ctx.InputSlot(3), &ctx.InputSlot(0)}, 1, "/padded")
                      ->GetOutputSlot(0);
    } else if (k > 1) {
        PadDescriptor pad;
        pad.m_Pads = {0, 0, static_cast<int64_t>(k - 1), 0, 0, 0};
        padded = &ctx.AddLayer(LayerType::Pad, pad, {padded}, 1, "/padded")->GetOutputSlot(0);
    }
    ConvolutionDescriptor conv;
    conv.m_KernelShape = {k};
    conv.m_Strides = {1};
    conv.m_Dilations = {1};
    conv.m_PadsBegin = {0};
    conv.m_PadsEnd = {0};
    conv.m_Groups = channels;
    std::vector<IOutputSlot*> convInputs{padded, &ctx.InputSlot(1)};
    if (ctx.HasInput(2)) convInputs.push_back(&ctx.InputSlot(2));
    IOutputSlot* y = &ctx.AddLayer(LayerType::Convolution, conv, convInputs, 1, activation == "none" ? "" : "/conv")
                          ->GetOutputSlot(0);
    if (activation != "none") {
        ElementwiseUnaryDescriptor swish;
        swish.m_Operation = UnaryOperation::Swish;
        swish.m_A = 1.0f;
        y = &ctx.AddLayer(LayerType::ElementwiseUnary, swish, {y}, 1)->GetOutputSlot(0);
    }
    ctx.SetOutput(0, *y);
    if (ctx.IsOutputUsed(1)) {
        // The last k - 1 positions; none when k is 1 (a start past the end gives an empty slice).
        SliceDescriptor last;
        last.m_Axes = {2};
        last.m_Starts = {k > 1 ? -static_cast<int64_t>(k - 1) : std::numeric_limits<int64_t>::max()};
        last.m_Ends = {std::numeric_limits<int64_t>::max()};
        ctx.SetOutput(1, ctx.AddLayer(LayerType::Slice, last, {padded}, 1, "/present_state")->GetOutputSlot(0));
    }
}

}  // namespace trellis::onnximport
