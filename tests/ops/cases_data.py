"""Per-op cases for the elementwise and data-movement ops: Add/Sub/Mul/Div/Pow/Max/Min and the
comparisons with broadcasting, the unary activations, PRelu, Where, Concat, Split, Slice, Reshape,
Flatten, Squeeze/Unsqueeze, Transpose, Gather, Shape, ConstantOfShape, Expand, Pad, Identity,
Dropout (inference), Cast and Range.

Expected outputs come from numpy (float64 where a function is transcendental, then cast to float32).
Sizes are odd (3, 5, 7, 13) so nothing lines up with a vector width; broadcasting covers trailing
dims, middle size-1 dims, rank differences and scalars.
"""
import numpy as np
from onnx import TensorProto, helper

from opcase import rand, save_case

F32 = np.float32
I64 = np.int64
INT64_MAX = np.iinfo(np.int64).max
INT64_MIN = np.iinfo(np.int64).min


def f32(a):
    return np.asarray(a).astype(F32)


# ---------------------------------------------------------------------------------------------
# elementwise binary
# ---------------------------------------------------------------------------------------------

# (suffix, shape of A, shape of B): trailing-dim broadcast, size-1 dims on both sides, a scalar.
BROADCASTS = [
    ("bcast_last", (2, 3, 4), (4,)),
    ("bcast_both", (2, 1, 4), (3, 1)),
    ("scalar", (3, 5), ()),
]

BINARY = {
    "Add": np.add,
    "Sub": np.subtract,
    "Mul": np.multiply,
    "Div": np.divide,
    "Pow": np.power,
    "Max": np.maximum,
    "Min": np.minimum,
    "Equal": np.equal,
    "Less": np.less,
    "Greater": np.greater,
}


def binary_operands(op, sa, sb):
    if op == "Pow":  # a positive base keeps real results
        return rand(*sa, low=0.5, high=2.0), rand(*sb, low=-2.0, high=2.0)
    if op == "Div":  # keep divisors away from 0
        b = rand(*sb, low=0.5, high=2.0) * np.where(rand(*sb) < 0, -1, 1).astype(F32)
        return rand(*sa), f32(b)
    if op in ("Equal", "Less", "Greater"):  # few distinct values, so ties happen
        return f32(np.rint(rand(*sa, low=-1.0, high=1.0))), f32(np.rint(rand(*sb, low=-1.0, high=1.0)))
    return rand(*sa), rand(*sb)


def binary_cases(out):
    for op, fn in BINARY.items():
        for suffix, sa, sb in BROADCASTS:
            a, b = binary_operands(op, sa, sb)
            y = fn(a.astype(np.float64), b.astype(np.float64))
            y = y if y.dtype == np.bool_ else f32(y)
            save_case(out, "%s_%s" % (op.lower(), suffix), op, [("A", a), ("B", b)], [("Y", y)])
    # Equal shapes, an odd length (the contiguous fast path).
    a, b = rand(13), rand(13)
    save_case(out, "add_same_shape", "Add", [("A", a), ("B", b)], [("Y", a + b)])
    # Broadcasting B as a constant initializer (the importer's constant path).
    a, b = rand(2, 5, 3), rand(5, 1)
    save_case(out, "mul_const_operand", "Mul", [("A", a)], [("Y", a * b)], initializers=[("B", b)])

    # int64: wrapping-free values; Div truncates toward zero (like C++ and ONNX Runtime), which
    # differs from numpy's floor division for negative quotients.
    a = np.array([[7, -7, 13, -13, 0], [5, -5, 3, -3, 100]], dtype=I64)
    b = np.array([2, 2, -5, -5, 7], dtype=I64)
    save_case(out, "add_int64", "Add", [("A", a), ("B", b)], [("Y", a + b)])
    save_case(out, "mul_int64", "Mul", [("A", a), ("B", b)], [("Y", a * b)])
    trunc_div = (np.sign(a) * np.sign(b) * (np.abs(a) // np.abs(b))).astype(I64)
    save_case(out, "div_int64", "Div", [("A", a), ("B", b)], [("Y", trunc_div)])


# ---------------------------------------------------------------------------------------------
# elementwise unary, PRelu, Where
# ---------------------------------------------------------------------------------------------

def erf(x):
    from math import erf as scalar_erf
    return np.vectorize(scalar_erf)(x.astype(np.float64))


def unary_cases(out):
    x = rand(3, 5, 7, low=-4.0, high=4.0)
    xd = x.astype(np.float64)
    pos = rand(3, 13, low=0.05, high=5.0)
    away = f32(rand(3, 13, low=0.2, high=3.0) * np.where(rand(3, 13) < 0, -1, 1))
    cases = [
        # name, op, input, expected, attrs, opset
        ("relu", "Relu", x, np.maximum(xd, 0), {}, 14),
        ("leakyrelu", "LeakyRelu", x, np.where(xd < 0, 0.1 * xd, xd), {"alpha": 0.1}, 16),
        ("sigmoid", "Sigmoid", x, 1 / (1 + np.exp(-xd)), {}, 13),
        ("tanh", "Tanh", x, np.tanh(xd), {}, 13),
        ("hardsigmoid", "HardSigmoid", x, np.clip(0.3 * xd + 0.4, 0, 1), {"alpha": 0.3, "beta": 0.4}, 13),
        ("hardswish", "HardSwish", x, xd * np.clip(xd / 6 + 0.5, 0, 1), {}, 14),
        ("elu", "Elu", x, np.where(xd > 0, xd, 0.7 * np.expm1(xd)), {"alpha": 0.7}, 13),
        ("erf", "Erf", x, erf(x), {}, 13),
        ("exp", "Exp", x, np.exp(xd), {}, 13),
        ("log", "Log", pos, np.log(pos.astype(np.float64)), {}, 13),
        ("sqrt", "Sqrt", pos, np.sqrt(pos.astype(np.float64)), {}, 13),
        ("neg", "Neg", x, -xd, {}, 13),
        ("abs", "Abs", x, np.abs(xd), {}, 13),
        ("reciprocal", "Reciprocal", away, 1 / away.astype(np.float64), {}, 13),
        # Clip-6 (opsets 6..10) takes its bounds as attributes; Trellis reads opsets from 7.
        ("clip_attrs_opset10", "Clip", x, np.clip(xd, -1.5, 2.5), {"min": -1.5, "max": 2.5}, 10),
    ]
    for name, op, a, y, attrs, opset in cases:
        save_case(out, name, op, [("X", a)], [("Y", f32(y))], attrs, opset=opset)

    # Clip, opset 11+: bounds are (optional) inputs, here constant initializers.
    lo, hi = np.array(-1.25, dtype=F32), np.array(0.75, dtype=F32)
    save_case(out, "clip_min_max", "Clip", [("X", x)], [("Y", f32(np.clip(xd, lo, hi)))],
              initializers=[("min", lo), ("max", hi)], opset=13)
    save_case(out, "clip_max_only", "Clip", [("X", x)], [("Y", f32(np.minimum(xd, hi)))],
              initializers=[("max", hi)], input_order=["X", "", "max"], opset=13)
    xi = np.array([-7, -2, 0, 3, 9, 12], dtype=I64)
    save_case(out, "clip_int64", "Clip", [("X", xi)], [("Y", np.clip(xi, -3, 8).astype(I64))],
              initializers=[("min", np.array(-3, dtype=I64)), ("max", np.array(8, dtype=I64))], opset=13)
    save_case(out, "relu_int32", "Relu", [("X", xi.astype(np.int32))], [("Y", np.maximum(xi, 0).astype(np.int32))],
              opset=14)

    # PRelu: per-channel slope [C, 1, 1] and a single slope.
    x4 = rand(2, 3, 5, 7)
    slope = rand(3, 1, 1, low=0.0, high=0.5)
    save_case(out, "prelu_channel", "PRelu", [("X", x4)], [("Y", np.where(x4 < 0, x4 * slope, x4))],
              initializers=[("slope", slope)], opset=16)
    slope1 = np.array([0.25], dtype=F32)
    save_case(out, "prelu_scalar", "PRelu", [("X", x4), ("slope", slope1)], [("Y", np.where(x4 < 0, x4 * slope1, x4))],
              opset=16)

    # Where: condition [3, 1], X [2, 3, 5], Y [5] broadcast to [2, 3, 5].
    cond = rand(3, 1) > 0
    wx, wy = rand(2, 3, 5), rand(5)
    save_case(out, "where_broadcast", "Where", [("C", cond), ("X", wx), ("Y", wy)], [("Z", np.where(cond, wx, wy))],
              opset=16)
    ix, iy = np.arange(7, dtype=I64), -np.arange(7, dtype=I64)
    icond = np.array([True, False, True, True, False, False, True])
    save_case(out, "where_int64", "Where", [("C", icond), ("X", ix), ("Y", iy)], [("Z", np.where(icond, ix, iy))],
              opset=16)


# ---------------------------------------------------------------------------------------------
# data movement
# ---------------------------------------------------------------------------------------------

def concat_split_cases(out):
    for axis, shapes in [(0, [(1, 3, 5), (3, 3, 5), (2, 3, 5)]),
                         (1, [(2, 1, 5), (2, 7, 5), (2, 3, 5)]),
                         (-1, [(2, 3, 5), (2, 3, 1), (2, 3, 13)])]:
        xs = [rand(*s) for s in shapes]
        name = "concat_axis%s" % (str(axis).replace("-", "m"))
        save_case(out, name, "Concat", [("X%d" % i, x) for i, x in enumerate(xs)],
                  [("Y", np.concatenate(xs, axis=axis))], {"axis": axis}, opset=13)
    ci = [np.arange(3, dtype=I64).reshape(1, 3), np.arange(6, dtype=I64).reshape(2, 3)]
    save_case(out, "concat_int64", "Concat", [("A", ci[0]), ("B", ci[1])], [("Y", np.concatenate(ci, 0))],
              {"axis": 0}, opset=13)

    x = rand(3, 9, 5)
    parts = np.split(x, 3, axis=1)
    outs = [("Y%d" % i, p) for i, p in enumerate(parts)]
    save_case(out, "split_equal_opset11", "Split", [("X", x)], outs, {"axis": 1}, opset=11)
    save_case(out, "split_equal_opset13", "Split", [("X", x)], outs, {"axis": 1}, opset=13)
    x = rand(3, 5, 13)
    sizes = [2, 5, 6]
    parts = np.split(x, np.cumsum(sizes)[:-1], axis=-1)
    outs = [("Y%d" % i, p) for i, p in enumerate(parts)]
    save_case(out, "split_sizes_opset11", "Split", [("X", x)], outs, {"axis": -1, "split": sizes}, opset=11)
    save_case(out, "split_sizes_opset13", "Split", [("X", x)], outs, {"axis": -1},
              initializers=[("split", np.array(sizes, dtype=I64))], opset=13)
    parts = np.split(x, [1], axis=0)
    save_case(out, "split_sizes_axis0", "Split", [("X", x)], [("Y0", parts[0]), ("Y1", parts[1])], {"axis": 0},
              initializers=[("split", np.array([1, 2], dtype=I64))], opset=13)


def slice_cases(out):
    x = rand(5, 7, 13)

    def case(name, starts, ends, axes=None, steps=None, expected=None):
        inits = [("starts", np.array(starts, dtype=I64)), ("ends", np.array(ends, dtype=I64))]
        order = ["X", "starts", "ends"]
        if axes is not None:
            inits.append(("axes", np.array(axes, dtype=I64)))
            order.append("axes")
        if steps is not None:
            if axes is None:
                order.append("")
            inits.append(("steps", np.array(steps, dtype=I64)))
            order.append("steps")
        save_case(out, "slice_" + name, "Slice", [("X", x)], [("Y", expected)], initializers=inits,
                  input_order=order, opset=13)

    case("basic", [1, 2], [4, 6], expected=x[1:4, 2:6])
    case("negative", [-4, -5], [-1, -1], axes=[0, 2], expected=x[-4:-1, :, -5:-1])
    case("step2", [0, 1], [7, 13], axes=[1, 2], steps=[2, 3], expected=x[:, 0:7:2, 1:13:3])
    case("reverse", [-1], [INT64_MIN], axes=[1], steps=[-1], expected=x[:, ::-1])
    case("reverse_step", [10, 4], [1, 0], axes=[2, 0], steps=[-3, -2], expected=x[4:0:-2, :, 10:1:-3])
    case("axes_subset", [2], [INT64_MAX], axes=[-1], expected=x[:, :, 2:])
    case("end_max", [1, 0, 3], [INT64_MAX, INT64_MAX, INT64_MAX], expected=x[1:, 0:, 3:])
    case("clamped", [-100, 3], [100, 100], axes=[0, 1], steps=[1, 1], expected=x[:, 3:])
    case("empty", [4], [2], axes=[0], expected=x[4:2])
    # Opset 1 form: starts/ends/axes as attributes.
    save_case(out, "slice_opset9_attrs", "Slice", [("X", x)], [("Y", x[:, 1:-1, :4])],
              {"starts": [1, 0], "ends": [-1, 4], "axes": [1, 2]}, opset=9)


def reshape_cases(out):
    x = rand(3, 5, 7)
    save_case(out, "reshape_zero_and_minus_one", "Reshape", [("X", x)], [("Y", x.reshape(3, 7, 5))],
              initializers=[("shape", np.array([0, -1, 5], dtype=I64))], opset=13)
    save_case(out, "reshape_flat", "Reshape", [("X", x)], [("Y", x.reshape(-1))],
              initializers=[("shape", np.array([-1], dtype=I64))], opset=13)
    save_case(out, "reshape_more_dims", "Reshape", [("X", x)], [("Y", x.reshape(1, 15, 1, 7))],
              initializers=[("shape", np.array([1, -1, 1, 7], dtype=I64))], opset=13)
    x4 = rand(2, 3, 5, 7)
    for axis in (0, 1, 2, -1):
        outer = int(np.prod(x4.shape[:axis]))
        y = x4.reshape(outer, -1)
        save_case(out, "flatten_axis%s" % str(axis).replace("-", "m"), "Flatten", [("X", x4)], [("Y", y)],
                  {"axis": axis}, opset=13)
    xs = rand(1, 3, 1, 5)
    save_case(out, "squeeze_opset11", "Squeeze", [("X", xs)], [("Y", xs.reshape(3, 1, 5))], {"axes": [0]}, opset=11)
    save_case(out, "squeeze_opset13", "Squeeze", [("X", xs)], [("Y", xs.reshape(1, 3, 5))],
              initializers=[("axes", np.array([-2], dtype=I64))], opset=13)
    save_case(out, "squeeze_all", "Squeeze", [("X", xs)], [("Y", xs.reshape(3, 5))], opset=13)
    xu = rand(3, 5)
    save_case(out, "unsqueeze_opset11", "Unsqueeze", [("X", xu)], [("Y", xu.reshape(1, 3, 5, 1))],
              {"axes": [0, -1]}, opset=11)
    save_case(out, "unsqueeze_opset13", "Unsqueeze", [("X", xu)], [("Y", xu.reshape(3, 1, 1, 5))],
              initializers=[("axes", np.array([1, 2], dtype=I64))], opset=13)


def transpose_cases(out):
    x3 = rand(3, 5, 7)
    save_case(out, "transpose_default", "Transpose", [("X", x3)], [("Y", x3.transpose())], opset=13)
    x4 = rand(2, 3, 5, 7)
    for perm in ([0, 2, 3, 1], [3, 1, 0, 2]):
        save_case(out, "transpose_rank4_" + "".join(map(str, perm)), "Transpose", [("X", x4)],
                  [("Y", x4.transpose(perm))], {"perm": perm}, opset=13)
    x5 = rand(3, 1, 5, 2, 7)
    perm = [4, 2, 0, 3, 1]
    save_case(out, "transpose_rank5", "Transpose", [("X", x5)], [("Y", x5.transpose(perm))], {"perm": perm}, opset=13)
    xi = np.arange(3 * 5 * 7, dtype=I64).reshape(3, 5, 7)
    save_case(out, "transpose_int64", "Transpose", [("X", xi)], [("Y", xi.transpose(2, 0, 1))], {"perm": [2, 0, 1]},
              opset=13)


def gather_cases(out):
    x = rand(5, 7, 3)
    idx = np.array([[0, -1, 3], [4, -5, 2]], dtype=I64)
    save_case(out, "gather_axis0", "Gather", [("X", x), ("I", idx)], [("Y", np.take(x, idx, axis=0))],
              {"axis": 0}, opset=13)
    idx1 = np.array([6, -7, 0, -2, 3], dtype=np.int32)
    save_case(out, "gather_axis1_int32", "Gather", [("X", x), ("I", idx1)], [("Y", np.take(x, idx1, axis=1))],
              {"axis": 1}, opset=13)
    save_case(out, "gather_scalar_index", "Gather", [("X", x)], [("Y", np.take(x, -2, axis=-1))], {"axis": -1},
              initializers=[("I", np.array(-2, dtype=I64))], opset=13)
    xi = np.arange(13, dtype=I64) * 3
    ii = np.array([12, 0, -13], dtype=I64)
    save_case(out, "gather_int64_data", "Gather", [("X", xi), ("I", ii)], [("Y", np.take(xi, ii))], opset=13)


def shape_cases(out):
    x = rand(2, 3, 5, 7)
    save_case(out, "shape_opset13", "Shape", [("X", x)], [("Y", np.array(x.shape, dtype=I64))], opset=13)
    save_case(out, "shape_start_end", "Shape", [("X", x)], [("Y", np.array(x.shape[1:-1], dtype=I64))],
              {"start": 1, "end": -1}, opset=15)
    save_case(out, "shape_start_only", "Shape", [("X", x)], [("Y", np.array(x.shape[-2:], dtype=I64))],
              {"start": -2}, opset=15)

    shape = np.array([3, 1, 5], dtype=I64)
    value = helper.make_tensor("value", TensorProto.FLOAT, [1], [2.5])
    save_case(out, "constantofshape_float", "ConstantOfShape", [], [("Y", np.full((3, 1, 5), 2.5, dtype=F32))],
              {"value": value}, initializers=[("shape", shape)], opset=13)
    value = helper.make_tensor("value", TensorProto.INT64, [1], [-7])
    save_case(out, "constantofshape_int64", "ConstantOfShape", [], [("Y", np.full((2, 7), -7, dtype=I64))],
              {"value": value}, initializers=[("shape", np.array([2, 7], dtype=I64))], opset=13)
    save_case(out, "constantofshape_default", "ConstantOfShape", [], [("Y", np.zeros((5,), dtype=F32))],
              initializers=[("shape", np.array([5], dtype=I64))], opset=13)

    x = rand(3, 1)
    save_case(out, "expand_bidirectional", "Expand", [("X", x)], [("Y", x * np.ones((2, 1, 7), dtype=F32))],
              initializers=[("shape", np.array([2, 1, 7], dtype=I64))], opset=13)
    x = rand(1, 5)
    save_case(out, "expand_smaller_shape", "Expand", [("X", x)], [("Y", np.broadcast_to(x, (3, 5)).copy())],
              initializers=[("shape", np.array([3, 1], dtype=I64))], opset=13)
    xi = np.arange(5, dtype=I64)
    save_case(out, "expand_int64", "Expand", [("X", xi)], [("Y", np.broadcast_to(xi, (3, 5)).copy())],
              initializers=[("shape", np.array([3, 1], dtype=I64))], opset=13)


def pad_cases(out):
    x = rand(2, 3, 5, 7)
    pads = np.array([0, 1, 2, 3, 1, 0, 1, 2], dtype=I64)  # all begins, then all ends
    width = [(int(pads[i]), int(pads[4 + i])) for i in range(4)]
    save_case(out, "pad_constant", "Pad", [("X", x)], [("Y", np.pad(x, width, constant_values=1.5))],
              {"mode": "constant"}, initializers=[("pads", pads), ("value", np.array(1.5, dtype=F32))], opset=11)
    save_case(out, "pad_constant_default", "Pad", [("X", x)], [("Y", np.pad(x, width))],
              initializers=[("pads", pads)], opset=11)
    save_case(out, "pad_reflect", "Pad", [("X", x)], [("Y", np.pad(x, width, mode="reflect"))],
              {"mode": "reflect"}, initializers=[("pads", pads)], opset=11)
    save_case(out, "pad_edge", "Pad", [("X", x)], [("Y", np.pad(x, width, mode="edge"))],
              {"mode": "edge"}, initializers=[("pads", pads)], opset=11)
    crop = np.array([0, -1, 2, 0, 0, 1, -2, 1], dtype=I64)  # negative pads crop
    y = np.pad(x, [(0, 0), (0, 1), (2, 0), (0, 1)])[:, 1:, :, :]
    y = y[:, :, :y.shape[2] - 2, :]
    save_case(out, "pad_constant_negative", "Pad", [("X", x)], [("Y", y)],
              initializers=[("pads", crop)], opset=11)
    xi = np.arange(15, dtype=I64).reshape(3, 5)
    save_case(out, "pad_int64", "Pad", [("X", xi)], [("Y", np.pad(xi, [(1, 0), (2, 3)], constant_values=-4))],
              initializers=[("pads", np.array([1, 2, 0, 3], dtype=I64)), ("value", np.array(-4, dtype=I64))],
              opset=11)


def misc_cases(out):
    x = rand(3, 5, 7)
    save_case(out, "identity", "Identity", [("X", x)], [("Y", x)], opset=13)
    save_case(out, "dropout_inference", "Dropout", [("X", x)], [("Y", x)], opset=13)

    vals = f32([-2.7, -1.0, -0.5, -0.0, 0.0, 0.49, 0.5, 1.5, 2.7, 1000.25, -123456.75, 3.0])
    save_case(out, "cast_float_to_int64", "Cast", [("X", vals)], [("Y", vals.astype(I64))],
              {"to": TensorProto.INT64}, opset=13)
    ints = np.array([-(2 ** 40) - 3, -5, 0, 7, 2 ** 24 + 1, 2 ** 53 + 1], dtype=I64)
    save_case(out, "cast_int64_to_float", "Cast", [("X", ints)], [("Y", ints.astype(F32))],
              {"to": TensorProto.FLOAT}, opset=13)
    i32 = np.array([-2147483648, -3, 0, 16777217, 2147483647], dtype=np.int32)
    save_case(out, "cast_int32_to_float", "Cast", [("X", i32)], [("Y", i32.astype(F32))],
              {"to": TensorProto.FLOAT}, opset=13)
    bvals = f32([0.0, -0.0, 1e-30, -2.5, np.nan, np.inf])
    save_case(out, "cast_float_to_bool", "Cast", [("X", bvals)], [("Y", bvals.astype(np.bool_))],
              {"to": TensorProto.BOOL}, opset=13)
    # Half: rounding ties to even, the largest finite value, overflow to inf, subnormals, NaN.
    hvals = f32([0.0, -0.0, 1.0, -1.5, 0.1, 3.14159, 2049.0, 2051.0, 65504.0, 65519.0, 65520.0, 1e5, -1e5,
                 6.0e-8, 2.9e-8, 3.0e-8, 1.0e-5, -6.1e-5, np.inf, -np.inf, np.nan])
    hvals = np.concatenate([hvals, rand(13, low=-100.0, high=100.0)])
    with np.errstate(over="ignore"):  # overflowing to inf is the point
        hvals16 = hvals.astype(np.float16)
    save_case(out, "cast_float_to_float16", "Cast", [("X", hvals)], [("Y", hvals16)],
              {"to": TensorProto.FLOAT16}, opset=13)
    halves = np.arange(0, 65536, 97, dtype=np.uint16).view(np.float16)  # every exponent, subnormals, inf/NaN
    save_case(out, "cast_float16_to_float", "Cast", [("X", halves)], [("Y", halves.astype(F32))],
              {"to": TensorProto.FLOAT}, opset=13)

    save_case(out, "range_float", "Range", [], [("Y", np.arange(1.0, -2.0, -0.75, dtype=F32))],
              initializers=[("start", np.array(1.0, dtype=F32)), ("limit", np.array(-2.0, dtype=F32)),
                            ("delta", np.array(-0.75, dtype=F32))], opset=11)
    save_case(out, "range_int64", "Range", [], [("Y", np.arange(-5, 13, 3, dtype=I64))],
              initializers=[("start", np.array(-5, dtype=I64)), ("limit", np.array(13, dtype=I64)),
                            ("delta", np.array(3, dtype=I64))], opset=11)
    save_case(out, "range_empty", "Range", [], [("Y", np.arange(5, 1, 2, dtype=I64))],
              initializers=[("start", np.array(5, dtype=I64)), ("limit", np.array(1, dtype=I64)),
                            ("delta", np.array(2, dtype=I64))], opset=11)


def generate(out_dir):
    binary_cases(out_dir)
    unary_cases(out_dir)
    concat_split_cases(out_dir)
    slice_cases(out_dir)
    reshape_cases(out_dir)
    transpose_cases(out_dir)
    gather_cases(out_dir)
    shape_cases(out_dir)
    pad_cases(out_dir)
    misc_cases(out_dir)
