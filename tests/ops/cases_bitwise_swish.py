"""Per-op cases for the integer bit operations and activations of opsets 18-26: BitwiseAnd,
BitwiseOr, BitwiseXor (odd shapes, broadcasting, signed and unsigned types, negative values),
BitwiseNot, BitShift-28 on signed types, Swish (alpha), SwiGLU (alpha), CumProd (exclusive, reverse, integer wrap-around) and BitCast (between
types of one size, NaN and negative zero bit patterns kept).

Expected outputs come from numpy (float64 for Swish, then cast), never from Trellis. Debian's
onnx 1.12 knows opset 17 at most, so these one-node models are written without its checker.
"""
import numpy as np
import onnx
from onnx import TensorProto

from opcase import save_case

F32 = np.float32
RNG = np.random.RandomState(2626)


def save_unchecked(*args, opset, **kwargs):
    check = onnx.checker.check_model
    onnx.checker.check_model = lambda model: None
    try:
        save_case(*args, opset=opset, **kwargs)
    finally:
        onnx.checker.check_model = check


def bitwise_cases(out):
    for dtype in (np.int8, np.uint16, np.int32, np.uint64):
        info = np.iinfo(dtype)
        a = RNG.randint(max(info.min, -2**31), min(info.max, 2**31 - 1), size=(3, 5, 7), dtype=np.int64).astype(dtype)
        b = RNG.randint(max(info.min, -2**31), min(info.max, 2**31 - 1), size=(5, 1), dtype=np.int64).astype(dtype)
        name = np.dtype(dtype).name
        for op, fn in (("BitwiseAnd", np.bitwise_and), ("BitwiseOr", np.bitwise_or), ("BitwiseXor", np.bitwise_xor)):
            save_unchecked(out, "%s_%s_bcast" % (op.lower(), name), op, [("A", a), ("B", b)], [("C", fn(a, b))],
                           opset=18)
        save_unchecked(out, "bitwisenot_%s" % name, "BitwiseNot", [("X", a)], [("Y", np.invert(a))], opset=18)


def signed_shift_cases(out):
    # BitShift-28 on signed types: arithmetic right shifts, left shifts past the sign bit, and
    # amounts that are negative or at least the width (sign fill only: 0, or -1 shifting a negative
    # value right).
    for dtype, bits in ((np.int8, 8), (np.int32, 32)):
        x = np.array([-8, -1, 64, 5, -128 if bits == 8 else -2**31, 3, -5, 7], dtype=dtype)
        y = np.array([1, 1, 1, 2, 1, bits, -1, 3], dtype=dtype)
        in_range = (y >= 0) & (y < bits)
        ys = np.where(in_range, y, 0).astype(dtype)
        left = np.where(in_range, (x.astype(np.int64) << ys.astype(np.int64)).astype(dtype), 0).astype(dtype)
        right = np.where(in_range, x >> ys, np.where(x < 0, -1, 0)).astype(dtype)
        name = np.dtype(dtype).name
        save_unchecked(out, "bitshift_left_%s" % name, "BitShift", [("X", x), ("Y", y)], [("Z", left)],
                       {"direction": "LEFT"}, opset=28)
        save_unchecked(out, "bitshift_right_%s" % name, "BitShift", [("X", x), ("Y", y)], [("Z", right)],
                       {"direction": "RIGHT"}, opset=28)


def swish_cases(out):
    x = RNG.uniform(-30.0, 30.0, size=(2, 3, 13)).astype(F32)
    x[0, 0, :3] = [0.0, -0.0, 1e-8]
    for alpha in (1.0, 0.35, -1.5):
        x64 = x.astype(np.float64)
        y = (x64 / (1.0 + np.exp(-alpha * x64))).astype(F32)
        attrs = {} if alpha == 1.0 else {"alpha": alpha}
        save_unchecked(out, "swish_alpha_%s" % str(alpha).replace("-", "m").replace(".", "_"), "Swish", [("X", x)],
                       [("Y", y)], attrs, opset=24)


def swiglu_cases(out):
    a = RNG.uniform(-6.0, 6.0, size=(3, 5, 8)).astype(F32)
    b = RNG.uniform(-2.0, 2.0, size=(3, 5, 8)).astype(F32)
    for alpha in (1.0, 1.702):
        a64 = a.astype(np.float64)
        y = (a64 / (1.0 + np.exp(-alpha * a64)) * b).astype(F32)
        save_unchecked(out, "swiglu_alpha_%s" % str(alpha).replace(".", "_"), "SwiGLU", [("A", a), ("B", b)],
                       [("Y", y)], {"alpha": alpha}, opset=28)


def cumprod_ref(x, axis, exclusive, reverse):
    x = np.flip(x, axis) if reverse else x
    y = np.cumprod(x, axis=axis, dtype=np.float64 if x.dtype.kind == "f" else x.dtype)
    if exclusive:
        y = np.concatenate([np.ones_like(np.take(y, [0], axis=axis)), np.delete(y, -1, axis=axis)], axis=axis)
    y = np.flip(y, axis) if reverse else y
    return y.astype(x.dtype)


def cumprod_cases(out):
    x = RNG.uniform(0.5, 1.5, size=(3, 7, 5)).astype(F32)
    for axis in (1, -1):
        for exclusive in (0, 1):
            for reverse in (0, 1):
                save_unchecked(out, "cumprod_axis%d_ex%d_rev%d" % (axis % 3, exclusive, reverse), "CumProd",
                               [("x", x)], [("y", cumprod_ref(x, axis, exclusive, reverse))],
                               {"exclusive": exclusive, "reverse": reverse},
                               initializers=[("axis", np.array(axis, dtype=np.int64))], opset=26)
    xi = RNG.randint(-9, 10, size=(4, 11)).astype(np.int32)  # wraps around past 2^31
    save_unchecked(out, "cumprod_int32_wraps", "CumProd", [("x", xi)], [("y", cumprod_ref(xi, 1, 0, 0))],
                   initializers=[("axis", np.array(1, dtype=np.int64))], opset=26)


def bitcast_cases(out):
    f = RNG.uniform(-5, 5, size=(3, 7)).astype(F32)
    f[0, :3] = [np.nan, -0.0, np.inf]
    save_unchecked(out, "bitcast_float32_to_int32", "BitCast", [("x", f)], [("y", f.view(np.int32))],
                   {"to": TensorProto.INT32}, opset=26)
    u = RNG.randint(0, 65536, size=(5, 3)).astype(np.uint16)
    save_unchecked(out, "bitcast_uint16_to_int16", "BitCast", [("x", u)], [("y", u.view(np.int16))],
                   {"to": TensorProto.INT16}, opset=26)


def generate(out):
    bitwise_cases(out)
    signed_shift_cases(out)
    swish_cases(out)
    swiglu_cases(out)
    cumprod_cases(out)
    bitcast_cases(out)
