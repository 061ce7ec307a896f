"""Per-op cases for the integer types (Signed8/16, UInt8/16/32/64, Float16 arithmetic), BitShift,
the quantization ops (QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, MatMulInteger,
ConvInteger, QLinearMatMul, QLinearConv) and the loss ops (NegativeLogLikelihoodLoss,
SoftmaxCrossEntropyLoss).

Expected outputs come from numpy, never from Trellis: integer arithmetic in the element type
itself (wrapping like numpy), quantization with np.rint (half to even) in float32 as ONNX's
reference defines it, integer products in int64 (then checked to fit int32), losses in float64.
Uses its own random generator so the other case modules keep their inputs.
"""
import numpy as np
from onnx import helper

from opcase import save_case, save_graph_case, tensor_type

F32 = np.float32
I32 = np.int32
I64 = np.int64
RNG = np.random.RandomState(4242)

INT_TYPES = [np.int8, np.int16, np.uint8, np.uint16, np.uint32, np.uint64]


def ints(dtype, *shape, low=None, high=None):
    info = np.iinfo(dtype)
    lo = max(info.min, -100) if low is None else low
    hi = min(info.max, 100) if high is None else high
    return RNG.randint(lo, hi + 1, size=shape).astype(dtype)


# ---------------------------------------------------------------------------------------------
# Integer and Float16 element-wise arithmetic
# ---------------------------------------------------------------------------------------------

def trunc_div(a, b):
    q = np.abs(a.astype(np.float64)) // np.abs(b.astype(np.float64))
    return (np.sign(a.astype(np.float64)) * np.sign(b.astype(np.float64)) * q)


def integer_cases(out):
    with np.errstate(over="ignore"):
        for dt in INT_TYPES:
            name = np.dtype(dt).name
            info = np.iinfo(dt)
            # Full-range values so Add/Sub/Mul wrap; broadcasting [3, 1, 5] with [4, 5].
            big_lo, big_hi = max(info.min, -2**62), min(info.max, 2**62)
            a = RNG.randint(big_lo, big_hi, size=(3, 1, 5), dtype=np.int64 if info.min < 0 else np.uint64).astype(dt)
            b = RNG.randint(big_lo, big_hi, size=(4, 5), dtype=np.int64 if info.min < 0 else np.uint64).astype(dt)
            for op, fn in (("Add", np.add), ("Sub", np.subtract), ("Mul", np.multiply),
                           ("Max", np.maximum), ("Min", np.minimum)):
                save_case(out, "%s_%s" % (op.lower(), name), op, [("a", a), ("b", b)], [("c", fn(a, b).astype(dt))],
                          opset=14)  # Add/Sub/Mul/Div take the 8- and 16-bit types from opset 14
            for op, fn in (("Equal", np.equal), ("Less", np.less), ("Greater", np.greater)):
                bb = b.copy()
                bb[0, :] = a[0, 0, :]  # some equal pairs
                save_case(out, "%s_%s" % (op.lower(), name), op, [("a", a), ("b", bb)], [("c", fn(a, bb))], opset=13)
            # Div truncates toward zero; Mod (fmod=0) takes the divisor's sign, fmod=1 the dividend's.
            x = ints(dt, 4, 6)
            y = ints(dt, 4, 6)
            y[y == 0] = 3
            save_case(out, "div_%s" % name, "Div", [("a", x), ("b", y)], [("c", trunc_div(x, y).astype(dt))], opset=14)
            save_case(out, "mod_%s" % name, "Mod", [("a", x), ("b", y)], [("c", np.mod(x, y).astype(dt))], opset=13)
            save_case(out, "fmod_%s" % name, "Mod", [("a", x), ("b", y)], [("c", np.fmod(x, y).astype(dt))],
                      {"fmod": 1}, opset=13)
            # Unary ops that run on integers; Clip with constant bounds.
            save_case(out, "abs_%s" % name, "Abs", [("x", x)], [("y", np.abs(x).astype(dt))], opset=13)
            if info.min < 0:  # Relu-14 takes the signed integer types
                save_case(out, "relu_%s" % name, "Relu", [("x", x)], [("y", np.maximum(x, 0).astype(dt))], opset=14)
            lo, hi = np.array(info.min // 2 + 7 if info.min < 0 else 10, dtype=dt), np.array(60, dtype=dt)
            save_case(out, "clip_%s" % name, "Clip", [("x", x)], [("y", np.clip(x, lo, hi).astype(dt))],
                      initializers=[("lo", lo), ("hi", hi)], opset=13)

    # Float16: computed exactly and rounded once to half; values keep float32 sums exact.
    h1 = RNG.uniform(-4, 4, size=(3, 4)).astype(np.float16)
    h2 = RNG.uniform(-4, 4, size=(4,)).astype(np.float16)
    h2[h2 == 0] = np.float16(0.5)
    for op, fn, attrs in (("Add", np.add, {}), ("Sub", np.subtract, {}), ("Mul", np.multiply, {}),
                          ("Max", np.maximum, {}), ("Min", np.minimum, {}), ("Mod", np.fmod, {"fmod": 1})):
        want = fn(h1.astype(np.float64), h2.astype(np.float64)).astype(np.float16)
        save_case(out, "%s_float16" % op.lower(), op, [("a", h1), ("b", h2)], [("c", want)], attrs, opset=14)
    save_case(out, "less_float16", "Less", [("a", h1), ("b", h2)], [("c", h1 < h2)], opset=13)


def cast_cases(out):
    x = RNG.uniform(-120, 120, size=(3, 5)).astype(F32)
    for dt in (np.int8, np.int16):
        save_case(out, "cast_float_to_%s" % np.dtype(dt).name, "Cast", [("x", x)], [("y", np.trunc(x).astype(dt))],
                  {"to": tensor_type(dt)}, opset=13)
    xp = np.abs(x)
    for dt in (np.uint16, np.uint32, np.uint64):
        save_case(out, "cast_float_to_%s" % np.dtype(dt).name, "Cast", [("x", xp)], [("y", np.trunc(xp).astype(dt))],
                  {"to": tensor_type(dt)}, opset=13)
    for dt in INT_TYPES:
        v = ints(dt, 2, 7)
        save_case(out, "cast_%s_to_float" % np.dtype(dt).name, "Cast", [("x", v)], [("y", v.astype(F32))],
                  {"to": tensor_type(F32)}, opset=13)
        save_case(out, "cast_%s_to_int64" % np.dtype(dt).name, "Cast", [("x", v)], [("y", v.astype(I64))],
                  {"to": tensor_type(I64)}, opset=13)
    # uint64 values at and above 2^63 stay positive; int64 -> uint16 wraps.
    u = np.array([0, 1, 2**63, 2**64 - 1, 2**53 + 1, 12345], dtype=np.uint64)
    save_case(out, "cast_uint64_large_to_double", "Cast", [("x", u)], [("y", u.astype(np.float64))],
              {"to": tensor_type(np.float64)}, opset=13)
    w = np.array([-1, 65536, 70000, -70000, 5], dtype=I64)
    save_case(out, "cast_int64_to_uint16_wraps", "Cast", [("x", w)], [("y", w.astype(np.uint16))],
              {"to": tensor_type(np.uint16)}, opset=13)


def data_movement_cases(out):
    """Ops that move elements without computing: every new integer type goes through by byte size."""
    for dt in INT_TYPES:
        name = np.dtype(dt).name
        x = ints(dt, 2, 3, 4)
        save_case(out, "transpose_%s" % name, "Transpose", [("x", x)], [("y", np.transpose(x, (2, 0, 1)))],
                  {"perm": [2, 0, 1]}, opset=13)
        y = ints(dt, 2, 1, 4)
        save_case(out, "concat_%s" % name, "Concat", [("x", x), ("y", y)], [("z", np.concatenate([x, y], axis=1))],
                  {"axis": 1}, opset=13)
        idx = np.array([2, 0, -1], dtype=I64)
        save_case(out, "gather_%s" % name, "Gather", [("x", x), ("i", idx)], [("y", np.take(x, idx, axis=2))],
                  {"axis": 2}, opset=13)
        cond = RNG.rand(3, 4) > 0.5
        save_case(out, "where_%s" % name, "Where", [("c", cond), ("x", x), ("y", y)], [("z", np.where(cond, x, y))],
                  opset=16)
        starts, ends, axes = np.array([1], dtype=I64), np.array([4], dtype=I64), np.array([2], dtype=I64)
        save_case(out, "slice_%s" % name, "Slice", [("x", x)], [("y", x[:, :, 1:4])],
                  initializers=[("starts", starts), ("ends", ends), ("axes", axes)], opset=13)
        pads = np.array([0, 1, 0, 0, 0, 2], dtype=I64)
        value = np.array(7, dtype=dt)
        save_case(out, "pad_constant_%s" % name, "Pad", [("x", x)],
                  [("y", np.pad(x, ((0, 0), (1, 0), (0, 2)), constant_values=7))],
                  initializers=[("pads", pads), ("value", value)], opset=13)


def bitshift_cases(out):
    for dt in (np.uint8, np.uint16, np.uint32, np.uint64):
        bits = np.iinfo(dt).bits
        x = ints(dt, 3, 4, low=0, high=min(np.iinfo(dt).max, 10**6))
        s = RNG.randint(0, bits + 3, size=(4,)).astype(dt)  # some shifts reach the width: 0
        s[0] = bits
        big = s >= bits
        safe = np.where(big, 0, s).astype(dt)
        left = np.where(big, 0, np.left_shift(x, safe)).astype(dt)
        right = np.where(big, 0, np.right_shift(x, safe)).astype(dt)
        name = np.dtype(dt).name
        save_case(out, "bitshift_left_%s" % name, "BitShift", [("x", x), ("s", s)], [("y", left)],
                  {"direction": "LEFT"}, opset=11)
        save_case(out, "bitshift_right_%s" % name, "BitShift", [("x", x), ("s", s)], [("y", right)],
                  {"direction": "RIGHT"}, opset=11)


def maxpool_uint8_cases(out):
    x = ints(np.uint8, 1, 2, 5, 6, low=0, high=255)
    y = np.zeros((1, 2, 3, 3), dtype=np.uint8)
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (0, 0)))  # pads top/bottom 1; zero pads never win over 0..255
    for c in range(2):
        for i in range(3):
            for j in range(3):
                y[0, c, i, j] = xp[0, c, i * 2:i * 2 + 3, j * 2:j * 2 + 2].max()
    save_case(out, "maxpool_uint8_pads_strides", "MaxPool", [("x", x)], [("y", y)],
              {"kernel_shape": [3, 2], "strides": [2, 2], "pads": [1, 0, 1, 0]}, opset=12)


# ---------------------------------------------------------------------------------------------
# Quantization
# ---------------------------------------------------------------------------------------------

def quantize(x, scale, zp, dtype):
    info = np.iinfo(dtype)
    q = np.rint(np.divide(x.astype(F32), scale.astype(F32))).astype(np.float64) + zp.astype(np.float64)
    return np.clip(q, info.min, info.max).astype(dtype)


def quantization_cases(out):
    x = RNG.uniform(-30, 30, size=(2, 3, 4)).astype(F32)
    x[0, 0, :] = [0.5, 1.5, 2.5, -2.5]  # scale 1: ties round half to even
    x[0, 1, :] = [0.125, 0.375, 0.625, -0.125]  # scale 0.25: ties too
    x[1, 2, :] = [1000.0, -1000.0, 0.0, 3.0]  # saturate
    for dt, zp in ((np.uint8, 128), (np.int8, -3)):
        name = np.dtype(dt).name
        scale = np.array(0.25 if name == "uint8" else 1.0, dtype=F32)
        z = np.array(zp, dtype=dt)
        save_case(out, "quantizelinear_%s" % name, "QuantizeLinear", [("x", x), ("s", scale), ("z", z)],
                  [("y", quantize(x, scale, z, dt))], opset=13)
        deq = ((ints(dt, 2, 3, 4, low=np.iinfo(dt).min, high=np.iinfo(dt).max).astype(np.int64)))
        q = deq.astype(dt)
        save_case(out, "dequantizelinear_%s" % name, "DequantizeLinear", [("x", q), ("s", scale), ("z", z)],
                  [("y", ((deq - zp) * np.float64(scale)).astype(F32))], opset=13)
    # Default zero point (uint8 0), opset 10.
    s = np.array(0.5, dtype=F32)
    save_case(out, "quantizelinear_default_zero_point_opset10", "QuantizeLinear", [("x", x), ("s", s)],
              [("y", quantize(x, s, np.array(0), np.uint8))], opset=10)
    # Per axis: axis 1 (default) and the last axis.
    for axis in (1, -1):
        n = x.shape[axis]
        scales = RNG.uniform(0.1, 2.0, size=(n,)).astype(F32)
        zps = RNG.randint(0, 255, size=(n,)).astype(np.uint8)
        shape = [1, 1, 1]
        shape[axis] = n
        want = quantize(x, scales.reshape(shape), zps.reshape(shape), np.uint8)
        save_case(out, "quantizelinear_axis%d" % (axis % 3), "QuantizeLinear", [("x", x), ("s", scales), ("z", zps)],
                  [("y", want)], {"axis": axis}, opset=13)
        q = ints(np.uint8, 2, 3, 4, low=0, high=255)
        deq = ((q.astype(np.int64) - zps.reshape(shape)) * scales.reshape(shape).astype(np.float64)).astype(F32)
        save_case(out, "dequantizelinear_axis%d" % (axis % 3), "DequantizeLinear", [("x", q), ("s", scales), ("z", zps)],
                  [("y", deq)], {"axis": axis}, opset=13)
    i32 = RNG.randint(-100000, 100000, size=(5,)).astype(I32)
    s = np.array(0.125, dtype=F32)
    save_case(out, "dequantizelinear_int32", "DequantizeLinear", [("x", i32), ("s", s)],
              [("y", (i32 * np.float64(s)).astype(F32))], opset=13)

    # DynamicQuantizeLinear, as ONNX defines it (float32 throughout).
    for tag, data in (("mixed", RNG.uniform(-3, 5, size=(3, 7))), ("positive", RNG.uniform(1, 9, size=(13,))),
                      ("negative", RNG.uniform(-9, -1, size=(2, 2, 3)))):
        d = data.astype(F32)
        lo = np.minimum(F32(0), d.min())
        hi = np.maximum(F32(0), d.max())
        scale = F32((hi - lo) / F32(255))
        zp = np.clip(np.rint(F32(0) - lo / scale), 0, 255).astype(np.uint8)
        y = np.clip(np.rint(d / scale) + zp, 0, 255).astype(np.uint8)
        save_case(out, "dynamicquantizelinear_%s" % tag, "DynamicQuantizeLinear", [("x", d)],
                  [("y", y), ("y_scale", np.array(scale, dtype=F32)), ("y_zero_point", np.array(zp, dtype=np.uint8))],
                  opset=11)


def conv_int(x, w, strides, pads, group=1):
    """Direct N-C-H-W convolution in int64 (x, w already centered)."""
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    oh = (xp.shape[2] - kh) // strides[0] + 1
    ow = (xp.shape[3] - kw) // strides[1] + 1
    y = np.zeros((n, m, oh, ow), dtype=np.int64)
    mg = m // group
    for b in range(n):
        for o in range(m):
            g = o // mg
            for i in range(oh):
                for j in range(ow):
                    patch = xp[b, g * cg:(g + 1) * cg, i * strides[0]:i * strides[0] + kh, j * strides[1]:j * strides[1] + kw]
                    y[b, o, i, j] = np.sum(patch * w[o])
    return y


def requantize(acc, multiplier, zp, dtype):
    info = np.iinfo(dtype)
    v = np.rint(acc.astype(F32) * F32(multiplier)).astype(np.float64) + np.asarray(zp, dtype=np.float64)
    return np.clip(v, info.min, info.max).astype(dtype)


def integer_product_cases(out):
    # MatMulInteger: per-tensor, per-row a_zero_point and per-column b_zero_point, int8 x uint8, batched.
    a = ints(np.uint8, 4, 6, low=0, high=255)
    b = ints(np.uint8, 6, 5, low=0, high=255)
    azp, bzp = np.array(12, dtype=np.uint8), np.array(200, dtype=np.uint8)
    acc = (a.astype(I64) - azp) @ (b.astype(I64) - bzp)
    save_case(out, "matmulinteger_uint8", "MatMulInteger", [("a", a), ("b", b), ("azp", azp), ("bzp", bzp)],
              [("y", acc.astype(I32))], opset=10)
    azp_row = ints(np.uint8, 4, low=0, high=255)
    bzp_col = ints(np.uint8, 5, low=0, high=255)
    acc = (a.astype(I64) - azp_row[:, None]) @ (b.astype(I64) - bzp_col[None, :])
    save_case(out, "matmulinteger_per_row_column", "MatMulInteger",
              [("a", a), ("b", b), ("azp", azp_row), ("bzp", bzp_col)], [("y", acc.astype(I32))], opset=10)
    a3 = ints(np.int8, 2, 3, 7, low=-128, high=127)
    b3 = ints(np.int8, 7, 4, low=-128, high=127)
    save_case(out, "matmulinteger_int8_batched_no_zero_point", "MatMulInteger", [("a", a3), ("b", b3)],
              [("y", (a3.astype(I64) @ b3.astype(I64)).astype(I32))], opset=10)

    # ConvInteger: pads and strides, per-output-channel w_zero_point.
    x = ints(np.uint8, 1, 2, 6, 5, low=0, high=255)
    w = ints(np.uint8, 3, 2, 3, 2, low=0, high=255)
    xzp = np.array(100, dtype=np.uint8)
    wzp = ints(np.uint8, 3, low=0, high=255)
    acc = conv_int(x.astype(I64) - 100, w.astype(I64) - wzp.astype(I64)[:, None, None, None], (2, 1), (1, 0, 1, 1))
    save_case(out, "convinteger_pads_strides_per_channel", "ConvInteger", [("x", x), ("w", w), ("xzp", xzp), ("wzp", wzp)],
              [("y", acc.astype(I32))], {"strides": [2, 1], "pads": [1, 0, 1, 1]}, opset=10)
    xg = ints(np.uint8, 2, 4, 4, 4, low=0, high=255)
    wg = ints(np.uint8, 4, 2, 2, 2, low=0, high=255)
    save_case(out, "convinteger_group2_no_zero_point", "ConvInteger", [("x", xg), ("w", wg)],
              [("y", conv_int(xg.astype(I64), wg.astype(I64), (1, 1), (0, 0, 0, 0), group=2).astype(I32))],
              {"group": 2}, opset=10)

    # QLinearMatMul: requantized as float32(acc) * float32(a_s * b_s / y_s).
    a_s, b_s, y_s = np.array(0.02, dtype=F32), np.array(0.015, dtype=F32), np.array(0.3, dtype=F32)
    yzp = np.array(110, dtype=np.uint8)
    acc = (a.astype(I64) - azp) @ (b.astype(I64) - bzp)
    mult = F32(F32(a_s * b_s) / y_s)
    save_case(out, "qlinearmatmul_uint8", "QLinearMatMul",
              [("a", a), ("a_s", a_s), ("azp", azp), ("b", b), ("b_s", b_s), ("bzp", bzp), ("y_s", y_s), ("yzp", yzp)],
              [("y", requantize(acc, mult, yzp, np.uint8))], opset=10)
    # Per row of A (a_scale, a_zero_point [M]) and per column of B (b_scale, b_zero_point [N]).
    a_s_row = RNG.uniform(0.01, 0.03, size=(4,)).astype(F32)
    b_s_col = RNG.uniform(0.01, 0.03, size=(5,)).astype(F32)
    acc = (a.astype(I64) - azp_row[:, None]) @ (b.astype(I64) - bzp_col[None, :])
    mult_rc = ((a_s_row[:, None] * b_s_col[None, :]).astype(F32) / y_s).astype(F32)
    save_case(out, "qlinearmatmul_per_row_column", "QLinearMatMul",
              [("a", a), ("a_s", a_s_row), ("azp", azp_row), ("b", b), ("b_s", b_s_col), ("bzp", bzp_col), ("y_s", y_s),
               ("yzp", yzp)], [("y", requantize(acc, mult_rc, yzp, np.uint8))], opset=10)
    ai8, bi8 = ints(np.int8, 3, 8, low=-128, high=127), ints(np.int8, 8, 2, low=-128, high=127)
    azp8, bzp8, yzp8 = np.array(-5, dtype=np.int8), np.array(3, dtype=np.int8), np.array(-20, dtype=np.int8)
    acc = (ai8.astype(I64) - azp8) @ (bi8.astype(I64) - bzp8)
    save_case(out, "qlinearmatmul_int8", "QLinearMatMul",
              [("a", ai8), ("a_s", a_s), ("azp", azp8), ("b", bi8), ("b_s", b_s), ("bzp", bzp8), ("y_s", y_s), ("yzp", yzp8)],
              [("y", requantize(acc, mult, yzp8, np.int8))], opset=10)

    # QLinearConv: bias and per-channel w_scale / w_zero_point.
    x_s, y_s = np.array(0.05, dtype=F32), np.array(0.8, dtype=F32)
    w_s = RNG.uniform(0.005, 0.02, size=(3,)).astype(F32)
    bias = RNG.randint(-2000, 2000, size=(3,)).astype(I32)
    yzp = np.array(128, dtype=np.uint8)
    acc = conv_int(x.astype(I64) - 100, w.astype(I64) - wzp.astype(I64)[:, None, None, None], (1, 1), (1, 1, 1, 1))
    acc = acc + bias[None, :, None, None]
    mult = (F32(x_s * w_s) / y_s).astype(F32)
    want = np.stack([requantize(acc[:, o], mult[o], yzp, np.uint8) for o in range(3)], axis=1)
    save_case(out, "qlinearconv_bias_per_channel", "QLinearConv",
              [("x", x), ("x_s", x_s), ("xzp", xzp), ("w", w), ("w_s", w_s), ("wzp", wzp), ("y_s", y_s), ("yzp", yzp),
               ("bias", bias)], [("y", want)], {"pads": [1, 1, 1, 1]}, opset=10)


# ---------------------------------------------------------------------------------------------
# Loss ops
# ---------------------------------------------------------------------------------------------

def nll(x, target, weight=None, reduction="mean", ignore_index=None):
    """ONNX NegativeLogLikelihoodLoss in float64."""
    x = x.astype(np.float64)
    n, c = x.shape[:2]
    xf = x.reshape(n, c, -1)
    tf = target.reshape(n, -1)
    loss = np.zeros(tf.shape)
    wsum = np.zeros(tf.shape)
    for i in range(n):
        for d in range(tf.shape[1]):
            t = tf[i, d]
            if ignore_index is not None and t == ignore_index:
                continue
            w = 1.0 if weight is None else float(weight[t])
            loss[i, d] = -xf[i, t, d] * w
            wsum[i, d] = w
    if reduction == "none":
        return loss.reshape(target.shape).astype(F32)
    if reduction == "sum":
        return np.array(loss.sum(), dtype=F32)
    return np.array(loss.sum() / wsum.sum(), dtype=F32)


def log_softmax(x):
    x = x.astype(np.float64)
    m = x.max(axis=1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=1, keepdims=True))


def loss_cases(out):
    shapes = {"nc": (5, 4), "ncd": (3, 4, 6), "ncdd": (2, 3, 4, 5)}
    for tag, shape in shapes.items():
        x = RNG.uniform(-3, 0, size=shape).astype(F32)
        n, c = shape[:2]
        target = RNG.randint(0, c, size=(n,) + shape[2:]).astype(I64)
        target.flat[1] = -1  # ignored where ignore_index=-1
        weight = RNG.uniform(0.2, 2.0, size=(c,)).astype(F32)
        tgt_ok = np.where(target < 0, 0, target)
        for reduction in ("none", "sum", "mean"):
            save_case(out, "nllloss_%s_%s" % (tag, reduction), "NegativeLogLikelihoodLoss", [("x", x), ("t", tgt_ok)],
                      [("loss", nll(x, tgt_ok, reduction=reduction))], {"reduction": reduction}, opset=13)
            save_case(out, "nllloss_%s_%s_weight_ii" % (tag, reduction), "NegativeLogLikelihoodLoss",
                      [("x", x), ("t", target), ("w", weight)],
                      [("loss", nll(x, target, weight, reduction, ignore_index=-1))],
                      {"reduction": reduction, "ignore_index": -1}, opset=13)
            scores = RNG.uniform(-4, 4, size=shape).astype(F32)
            lp = log_softmax(scores)
            save_case(out, "sce_%s_%s_weight_ii" % (tag, reduction), "SoftmaxCrossEntropyLoss",
                      [("scores", scores), ("labels", target.astype(I32)), ("w", weight)],
                      [("loss", nll(lp, target, weight, reduction, ignore_index=-1)), ("log_prob", lp.astype(F32))],
                      {"reduction": reduction, "ignore_index": -1}, opset=13)
        scores = RNG.uniform(-4, 4, size=shape).astype(F32)
        save_case(out, "sce_%s_mean_no_weight" % tag, "SoftmaxCrossEntropyLoss", [("scores", scores), ("labels", tgt_ok)],
                  [("loss", nll(log_softmax(scores), tgt_ok))], opset=13)
    # Every target ignored: mean is 0/0 = NaN (ONNX's reference gives the same).
    x = RNG.uniform(-3, 0, size=(2, 3)).astype(F32)
    t = np.array([1, 1], dtype=I64)
    save_case(out, "nllloss_mean_all_ignored", "NegativeLogLikelihoodLoss", [("x", x), ("t", t)],
              [("loss", np.array(np.nan, dtype=F32))], {"ignore_index": 1}, opset=13)


def generate(out_dir):
    integer_cases(out_dir)
    cast_cases(out_dir)
    data_movement_cases(out_dir)
    bitshift_cases(out_dir)
    maxpool_uint8_cases(out_dir)
    quantization_cases(out_dir)
    integer_product_cases(out_dir)
    loss_cases(out_dir)
