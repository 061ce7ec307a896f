"""Per-op cases for the fused transformer ops of opset 23: Attention (4-D and 3-D, grouped-query,
Boolean and additive masks - broadcast, shorter than the keys -, causal with a past and the
present outputs, scale, softcap, every qk_matmul_output_mode, a fully masked row),
RMSNormalization (axes, broadcast scale) and RotaryEmbedding (split halves and interleaved,
partial rotation, position_ids, 3-D input).

Expected outputs are computed here with numpy in float64 from the ONNX specification, then cast;
never by Trellis. Sizes are odd on purpose. Debian's onnx 1.12 knows opset 17 at most, so these
opset-23 one-node models are written without its checker (as the opset-18 cases are).
"""
import numpy as np
import onnx

from onnx import helper

from opcase import save_case, save_graph_case, tensor_type

F32 = np.float32
I64 = np.int64
RNG = np.random.RandomState(2323)


def save_case_opset23(out, name, op, inputs, outputs, attrs=None):
    """A one-node opset-23 case; an input or output named "" is omitted (left out of the node's
    optional slots and of the graph)."""
    node = helper.make_node(op, [n for n, _ in inputs], [n for n, _ in outputs], **(attrs or {}))
    graph = helper.make_graph(
        [node], name,
        [helper.make_tensor_value_info(n, tensor_type(a.dtype), a.shape) for n, a in inputs if n],
        [helper.make_tensor_value_info(n, tensor_type(a.dtype), a.shape) for n, a in outputs if n])
    check = onnx.checker.check_model
    onnx.checker.check_model = lambda model: None
    try:
        save_graph_case(out, name, graph, [a for n, a in inputs if n], [a for n, a in outputs if n], opset=23)
    finally:
        onnx.checker.check_model = check


def rand(*shape):
    return RNG.uniform(-1.0, 1.0, size=shape).astype(F32)


# ---------------------------------------------------------------------------------------------
# Attention
# ---------------------------------------------------------------------------------------------

def attention_ref(q, k, v, mask=None, past_k=None, past_v=None, causal=False, scale=None, softcap=0.0,
                  q_heads=None, kv_heads=None):
    """(Y, present_k, present_v, [qk after scale+softcap, + bias, softmax]) in float64."""
    rank3 = q.ndim == 3
    q, k, v = (a.astype(np.float64) for a in (q, k, v))
    if rank3:
        def split(a, h):
            b, s, hid = a.shape
            return a.reshape(b, s, h, hid // h).transpose(0, 2, 1, 3)
        q, k, v = split(q, q_heads), split(k, kv_heads), split(v, kv_heads)
    if past_k is not None:
        k = np.concatenate([past_k.astype(np.float64), k], axis=2)
        v = np.concatenate([past_v.astype(np.float64), v], axis=2)
    present_k, present_v = k, v
    b, hq, sq, d = q.shape
    total = k.shape[2]
    scale = 1.0 / np.sqrt(d) if scale is None else scale
    bias = np.zeros((sq, total))
    if mask is not None:
        m = mask if mask.dtype == np.bool_ else mask.astype(np.float64)
        if m.shape[-1] < total:  # a shorter mask: the rest of the keys are masked
            pad = [(0, 0)] * (m.ndim - 1) + [(0, total - m.shape[-1])]
            m = np.pad(m, pad, constant_values=(False if m.dtype == np.bool_ else -np.inf))
        bias = bias + (np.where(m, 0.0, -np.inf) if m.dtype == np.bool_ else m)
    if causal:
        offset = total - sq
        i = np.arange(sq)[:, None]
        j = np.arange(total)[None, :]
        bias = bias + np.where(j <= i + offset, 0.0, -np.inf)
    bias = np.broadcast_to(bias, (b, hq, sq, total))
    group = hq // k.shape[1]
    k = np.repeat(k, group, axis=1)
    v = np.repeat(v, group, axis=1)
    s = q @ k.transpose(0, 1, 3, 2) * scale
    if softcap > 0:
        s = softcap * np.tanh(s / softcap)
    sb = s + bias
    row_masked = np.isneginf(bias.max(axis=-1, keepdims=True))
    mx = np.where(row_masked, 0.0, sb.max(axis=-1, keepdims=True))
    e = np.exp(sb - mx)
    p = np.where(row_masked, 0.0, e / np.where(row_masked, 1.0, e.sum(axis=-1, keepdims=True)))
    y = p @ v
    if rank3:
        y = y.transpose(0, 2, 1, 3).reshape(b, sq, -1)
    return y, present_k, present_v, (s, sb, p)


def attention_cases(out):
    # 4-D, default scale; all four outputs (mode 0).
    q, k, v = rand(2, 3, 5, 8), rand(2, 3, 7, 8), rand(2, 3, 7, 6)
    y, pk, pv, (s, sb, p) = attention_ref(q, k, v)
    save_case_opset23(out, "attention_4d_all_outputs", "Attention", [("Q", q), ("K", k), ("V", v)],
                      [("Y", y.astype(F32)), ("present_key", pk.astype(F32)), ("present_value", pv.astype(F32)),
                       ("qk", s.astype(F32))])
    # 3-D grouped-query attention (4 query heads, 2 kv heads) with a scale.
    q, k, v = rand(1, 3, 4 * 6), rand(1, 5, 2 * 6), rand(1, 5, 2 * 3)
    y, _, _, _ = attention_ref(q, k, v, scale=0.3, q_heads=4, kv_heads=2)
    save_case_opset23(out, "attention_3d_gqa_scale", "Attention", [("Q", q), ("K", k), ("V", v)],
                      [("Y", y.astype(F32))], {"q_num_heads": 4, "kv_num_heads": 2, "scale": 0.3})
    # A Boolean 2-D mask broadcast over batch and heads, with a fully masked row; mode 3.
    q, k, v = rand(2, 2, 3, 4), rand(2, 2, 5, 4), rand(2, 2, 5, 4)
    mask = RNG.rand(3, 5) > 0.4
    mask[1, :] = False
    y, _, _, (s, sb, p) = attention_ref(q, k, v, mask=mask)
    save_case_opset23(out, "attention_bool_mask_masked_row_mode3", "Attention",
                      [("Q", q), ("K", k), ("V", v), ("mask", mask)],
                      [("Y", y.astype(F32)), ("", None), ("", None), ("qk", p.astype(F32))],
                      {"qk_matmul_output_mode": 3})
    # An additive 4-D mask (per batch, broadcast over heads) shorter than the keys; mode 2.
    q, k, v = rand(2, 3, 4, 5), rand(2, 3, 6, 5), rand(2, 3, 6, 5)
    mask = rand(2, 1, 4, 4)
    y, _, _, (s, sb, p) = attention_ref(q, k, v, mask=mask)
    save_case_opset23(out, "attention_float_mask_short_mode2", "Attention",
                      [("Q", q), ("K", k), ("V", v), ("mask", mask)],
                      [("Y", y.astype(F32)), ("", None), ("", None), ("qk", sb.astype(F32))],
                      {"qk_matmul_output_mode": 2})
    # Causal with a past (bottom-right aligned), present outputs, softcap; mode 1.
    q, k, v = rand(1, 2, 3, 8), rand(1, 2, 3, 8), rand(1, 2, 3, 8)
    past_k, past_v = rand(1, 2, 4, 8), rand(1, 2, 4, 8)
    y, pk, pv, (s, sb, p) = attention_ref(q, k, v, past_k=past_k, past_v=past_v, causal=True, softcap=2.0)
    save_case_opset23(out, "attention_causal_past_softcap", "Attention",
                      [("Q", q), ("K", k), ("V", v), ("", None), ("past_key", past_k), ("past_value", past_v)],
                      [("Y", y.astype(F32)), ("present_key", pk.astype(F32)), ("present_value", pv.astype(F32)),
                       ("qk", s.astype(F32))],
                      {"is_causal": 1, "softcap": 2.0, "qk_matmul_output_mode": 1})
    # Y only (what CpuAcc's fused kernel takes): grouped-query causal with 19 keys (a vector
    # width and a remainder), a Boolean mask broadcast with a fully masked row, and a 3-D input
    # with an additive mask shorter than the keys.
    q, k, v = rand(2, 4, 19, 8), rand(2, 2, 19, 8), rand(2, 2, 19, 8)
    y, _, _, _ = attention_ref(q, k, v, causal=True)
    save_case_opset23(out, "attention_4d_gqa_causal_y", "Attention", [("Q", q), ("K", k), ("V", v)],
                      [("Y", y.astype(F32))], {"is_causal": 1})
    q, k, v = rand(2, 2, 3, 4), rand(2, 2, 17, 4), rand(2, 2, 17, 5)
    mask = RNG.rand(3, 17) > 0.4
    mask[2, :] = False
    y, _, _, _ = attention_ref(q, k, v, mask=mask)
    save_case_opset23(out, "attention_4d_bool_mask_y", "Attention", [("Q", q), ("K", k), ("V", v), ("mask", mask)],
                      [("Y", y.astype(F32))])
    q, k, v = rand(2, 6, 3 * 4), rand(2, 9, 3 * 4), rand(2, 9, 3 * 5)
    mask = rand(2, 1, 6, 7)
    y, _, _, _ = attention_ref(q, k, v, mask=mask, q_heads=3, kv_heads=3)
    save_case_opset23(out, "attention_3d_float_mask_short_y", "Attention",
                      [("Q", q), ("K", k), ("V", v), ("mask", mask)], [("Y", y.astype(F32))],
                      {"q_num_heads": 3, "kv_num_heads": 3})


# ---------------------------------------------------------------------------------------------
# RMSNormalization
# ---------------------------------------------------------------------------------------------

def rms_ref(x, scale, axis, eps):
    x64 = x.astype(np.float64)
    axes = tuple(range(axis % x.ndim, x.ndim))
    return (x64 / np.sqrt(np.mean(x64 * x64, axis=axes, keepdims=True) + eps) * scale).astype(F32)


def rms_cases(out):
    x = rand(3, 5, 13)
    scale = rand(13)
    save_case_opset23(out, "rmsnorm_last_axis", "RMSNormalization", [("X", x), ("scale", scale)],
                      [("Y", rms_ref(x, scale, -1, 1e-5))])
    scale2 = rand(5, 13)
    save_case_opset23(out, "rmsnorm_axis1_eps", "RMSNormalization", [("X", x), ("scale", scale2)],
                      [("Y", rms_ref(x, scale2, 1, 1e-2))], {"axis": 1, "epsilon": 1e-2})
    scale3 = rand(5, 1)  # broadcast over the last dim
    save_case_opset23(out, "rmsnorm_broadcast_scale", "RMSNormalization", [("X", x), ("scale", scale3)],
                      [("Y", rms_ref(x, scale3, 1, 1e-5))], {"axis": 1})
    scale4 = rand(1)  # one value for every element
    save_case_opset23(out, "rmsnorm_one_scale", "RMSNormalization", [("X", x), ("scale", scale4)],
                      [("Y", rms_ref(x, scale4, -1, 1e-5))])


# ---------------------------------------------------------------------------------------------
# RotaryEmbedding
# ---------------------------------------------------------------------------------------------

def rope_ref(x, cos, sin, pos=None, interleaved=False, dim=0, num_heads=0):
    x64 = x.astype(np.float64)
    rank3 = x.ndim == 3
    if rank3:
        b, s, hid = x.shape
        x64 = x64.reshape(b, s, num_heads, hid // num_heads)
    else:
        x64 = x64.transpose(0, 2, 1, 3)  # (b, s, h, d)
    d = x64.shape[-1]
    dim = dim or d
    if pos is not None:
        cos, sin = cos[pos], sin[pos]
    c = cos.astype(np.float64)[:, :, None, :]
    sn = sin.astype(np.float64)[:, :, None, :]
    y = x64.copy()
    rot = x64[..., :dim]
    x1, x2 = (rot[..., 0::2], rot[..., 1::2]) if interleaved else (rot[..., :dim // 2], rot[..., dim // 2:])
    r1, r2 = x1 * c - x2 * sn, x1 * sn + x2 * c
    if interleaved:
        y[..., 0:dim:2], y[..., 1:dim:2] = r1, r2
    else:
        y[..., :dim // 2], y[..., dim // 2:dim] = r1, r2
    y = y.reshape(x.shape) if rank3 else y.transpose(0, 2, 1, 3)
    return y.astype(F32)


def rope_cases(out):
    x = rand(2, 3, 5, 8)
    cos, sin = rand(2, 5, 4), rand(2, 5, 4)
    save_case_opset23(out, "rope_4d_halves", "RotaryEmbedding", [("X", x), ("cos", cos), ("sin", sin)],
                      [("Y", rope_ref(x, cos, sin))])
    save_case_opset23(out, "rope_4d_interleaved", "RotaryEmbedding", [("X", x), ("cos", cos), ("sin", sin)],
                      [("Y", rope_ref(x, cos, sin, interleaved=True))], {"interleaved": 1})
    # Partial rotation (6 of 10) with position ids into a table of 11 positions, 3-D input.
    x3 = rand(2, 5, 3 * 10)
    table_cos, table_sin = rand(11, 3), rand(11, 3)
    pos = RNG.randint(0, 11, size=(2, 5)).astype(I64)
    save_case_opset23(out, "rope_3d_partial_position_ids", "RotaryEmbedding",
                      [("X", x3), ("cos", table_cos), ("sin", table_sin), ("pos", pos)],
                      [("Y", rope_ref(x3, table_cos, table_sin, pos=pos, dim=6, num_heads=3))],
                      {"num_heads": 3, "rotary_embedding_dim": 6})


def generate(out):
    attention_cases(out)
    rms_cases(out)
    rope_cases(out)
