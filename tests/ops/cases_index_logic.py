"""Per-op cases for the index, logic and activation ops: ArgMax/ArgMin, And/Or/Xor/Not, Trilu,
Size, GatherElements, ScatterElements (and Scatter-9), Tile, CumSum, DepthToSpace/SpaceToDepth,
Round/Floor/Ceil/Sign, the parameterized activations (Softplus, Softsign, Selu, Celu, Mish,
ThresholdedRelu, Shrink), the trigonometric and hyperbolic functions, Mod, IsNaN/IsInf, variadic
Sum/Mean, OneHot, EyeLike, CastLike and Hardmax.

Expected outputs come from numpy (float64 for transcendental functions, then cast), never from
Trellis. Shapes are odd and ties, negative indices, NaN and infinities are placed on purpose.
Uses its own random generator so the other case modules keep their inputs.
"""
import numpy as np
import onnx
from onnx import TensorProto

from opcase import save_case

F32 = np.float32
I32 = np.int32
I64 = np.int64
RNG = np.random.RandomState(4004)


def save_case_opset18(*args, **kwargs):
    """save_case for opset-18 forms (Mish, ScatterElements max/min): Debian's onnx 1.12 knows opset
    17 at most, so its checker cannot validate these one-node models; they are written unchecked."""
    check = onnx.checker.check_model
    onnx.checker.check_model = lambda model: None
    try:
        save_case(*args, opset=18, **kwargs)
    finally:
        onnx.checker.check_model = check


def rand(*shape, low=-1.0, high=1.0):
    return RNG.uniform(low, high, size=shape).astype(F32)


def f32(a):
    return np.asarray(a).astype(F32)


# ---------------------------------------------------------------------------------------------
# ArgMax / ArgMin
# ---------------------------------------------------------------------------------------------

def argminmax_cases(out):
    # Few distinct values so ties are common: first vs last index matters.
    x = f32(np.rint(rand(3, 5, 7, low=-2.0, high=2.0)))
    for op, fn in (("ArgMax", np.argmax), ("ArgMin", np.argmin)):
        for axis in (0, 1, -1):
            for keepdims in (0, 1):
                y = fn(x, axis=axis)
                if keepdims:
                    y = np.expand_dims(y, axis)
                save_case(out, "%s_axis%d_keep%d" % (op.lower(), axis % 3, keepdims), op, [("X", x)],
                          [("Y", y.astype(I64))], {"axis": axis, "keepdims": keepdims}, opset=13)
        # select_last_index: argmax of the reversed axis, mapped back.
        rev = np.flip(x, axis=1)
        y = x.shape[1] - 1 - fn(rev, axis=1)
        save_case(out, "%s_select_last" % op.lower(), op, [("X", x)], [("Y", np.expand_dims(y, 1).astype(I64))],
                  {"axis": 1, "keepdims": 1, "select_last_index": 1}, opset=13)
    xi = np.array([[3, -7, 3, 9], [9, 9, -1, 0]], dtype=I32)
    save_case(out, "argmax_int32", "ArgMax", [("X", xi)], [("Y", np.argmax(xi, axis=1).astype(I64))],
              {"axis": 1, "keepdims": 0}, opset=13)


# ---------------------------------------------------------------------------------------------
# Boolean logic
# ---------------------------------------------------------------------------------------------

def logic_cases(out):
    a = RNG.rand(3, 4, 5) > 0.5
    b = RNG.rand(4, 1) > 0.5
    for op, fn in (("And", np.logical_and), ("Or", np.logical_or), ("Xor", np.logical_xor)):
        save_case(out, op.lower() + "_bcast", op, [("A", a), ("B", b)], [("C", fn(a, b))])
    save_case(out, "not", "Not", [("X", a)], [("Y", np.logical_not(a))])


# ---------------------------------------------------------------------------------------------
# Trilu, Size
# ---------------------------------------------------------------------------------------------

def trilu_cases(out):
    x = rand(2, 4, 6)
    for upper in (0, 1):
        fn = np.triu if upper else np.tril
        save_case(out, "trilu_%s" % ("upper" if upper else "lower"), "Trilu", [("X", x)], [("Y", fn(x))],
                  {"upper": upper}, opset=14)
        for k in (-2, 3):
            # k as a constant initializer, and as a graph input (read at run time).
            save_case(out, "trilu_%s_k%d_const" % ("upper" if upper else "lower", k), "Trilu", [("X", x)],
                      [("Y", fn(x, k))], {"upper": upper}, initializers=[("k", np.array(k, dtype=I64))], opset=14)
        save_case(out, "trilu_%s_k_input" % ("upper" if upper else "lower"), "Trilu",
                  [("X", x), ("k", np.array(1, dtype=I64))], [("Y", fn(x, 1))], {"upper": upper}, opset=14)
    xi = np.arange(12, dtype=I64).reshape(3, 4)
    save_case(out, "trilu_int64", "Trilu", [("X", xi)], [("Y", np.triu(xi))], opset=14)


def size_cases(out):
    for shape in ((3, 5, 7), (), (2, 0, 3)):
        x = rand(*shape) if shape else np.array(1.5, dtype=F32)
        save_case(out, "size_rank%d%s" % (len(shape), "_empty" if 0 in shape else ""), "Size", [("X", x)],
                  [("Y", np.array(x.size, dtype=I64))], opset=13)


# ---------------------------------------------------------------------------------------------
# GatherElements, ScatterElements
# ---------------------------------------------------------------------------------------------

def gather_elements_ref(data, indices, axis):
    idx = np.where(indices < 0, indices + data.shape[axis], indices)
    out = np.empty(indices.shape, dtype=data.dtype)
    for pos in np.ndindex(*indices.shape):
        source = list(pos)
        source[axis] = idx[pos]
        out[pos] = data[tuple(source)]
    return out


def scatter_elements_ref(data, indices, updates, axis, reduction="none"):
    out = data.copy()
    idx = np.where(indices < 0, indices + data.shape[axis], indices)
    for pos in np.ndindex(*indices.shape):
        target = list(pos)
        target[axis] = idx[pos]
        target = tuple(target)
        u = updates[pos]
        if reduction == "none":
            out[target] = u
        elif reduction == "add":
            out[target] += u
        elif reduction == "mul":
            out[target] *= u
        elif reduction == "max":
            out[target] = max(out[target], u)
        else:
            out[target] = min(out[target], u)
    return out


def gather_scatter_cases(out):
    data = rand(3, 5, 4)
    for axis in (0, 1, 2):
        n = data.shape[axis]
        ishape = list(data.shape)
        ishape[axis] = 6  # longer than the axis along it, shorter elsewhere is allowed too
        ishape[(axis + 1) % 3] -= 1
        indices = RNG.randint(-n, n, size=ishape).astype(I64)
        save_case(out, "gatherelements_axis%d" % axis, "GatherElements", [("data", data), ("indices", indices)],
                  [("Y", gather_elements_ref(data, indices, axis))], {"axis": axis}, opset=13)
    indices32 = RNG.randint(0, 3, size=(2, 5, 4)).astype(I32)
    save_case(out, "gatherelements_int32_indices", "GatherElements", [("data", data), ("indices", indices32)],
              [("Y", gather_elements_ref(data, indices32, 0))], {"axis": 0}, opset=13)

    # Scatter: unique targets for 'none' (repeated ones are order-dependent in ONNX).
    data = rand(4, 5)
    indices = np.array([[1, 0, 3, 2, 0], [3, 2, 0, 1, 2]], dtype=I64)  # axis 0: unique per column
    updates = rand(2, 5)
    save_case(out, "scatterelements_axis0", "ScatterElements",
              [("data", data), ("indices", indices), ("updates", updates)],
              [("Y", scatter_elements_ref(data, indices, updates, 0))], {"axis": 0}, opset=13)
    indices = np.array([[-1, 0], [2, -4], [1, 3], [0, 4]], dtype=I64)  # axis 1, negative indices
    updates = rand(4, 2)
    save_case(out, "scatterelements_axis1_negative", "ScatterElements",
              [("data", data), ("indices", indices), ("updates", updates)],
              [("Y", scatter_elements_ref(data, indices, updates, 1))], {"axis": -1}, opset=13)
    # Reductions with repeated targets.
    indices = np.array([[1, 1, 3, 1], [0, 0, 0, 2], [4, 4, 4, 4]], dtype=I64)
    updates = rand(3, 4, low=0.5, high=2.0)
    data = rand(3, 5, low=0.5, high=2.0)
    for reduction, opset in (("add", 16), ("mul", 16), ("max", 18), ("min", 18)):
        save = save_case_opset18 if opset == 18 else lambda *a, **k: save_case(*a, opset=opset, **k)
        save(out, "scatterelements_%s" % reduction, "ScatterElements",
             [("data", data), ("indices", indices), ("updates", updates)],
             [("Y", scatter_elements_ref(data, indices, updates, 1, reduction))], {"axis": 1, "reduction": reduction})
    di = np.arange(10, dtype=I64).reshape(2, 5)
    ii = np.array([[4, 4], [0, 0]], dtype=I64)
    ui = np.array([[5, 7], [-3, 2]], dtype=I64)
    save_case(out, "scatterelements_add_int64", "ScatterElements", [("data", di), ("indices", ii), ("updates", ui)],
              [("Y", scatter_elements_ref(di, ii, ui, 1, "add"))], {"axis": 1, "reduction": "add"}, opset=16)
    # Scatter-9/10: ScatterElements' former name.
    indices = np.array([[1, 0, 3, 2, 0]], dtype=I64)
    updates = rand(1, 5)
    data = rand(4, 5)
    save_case(out, "scatter_opset10", "Scatter", [("data", data), ("indices", indices), ("updates", updates)],
              [("Y", scatter_elements_ref(data, indices, updates, 0))], {"axis": 0}, opset=10)


# ---------------------------------------------------------------------------------------------
# Tile, CumSum
# ---------------------------------------------------------------------------------------------

def tile_cumsum_cases(out):
    x = rand(2, 3, 5)
    for reps in ((1, 1, 1), (2, 3, 1), (1, 2, 3), (3, 1, 2)):
        save_case(out, "tile_%s" % "x".join(map(str, reps)), "Tile", [("X", x)], [("Y", np.tile(x, reps))],
                  initializers=[("repeats", np.array(reps, dtype=I64))], opset=13)
    save_case(out, "tile_zero_repeat", "Tile", [("X", x)], [("Y", np.tile(x, (1, 0, 2)))],
              initializers=[("repeats", np.array((1, 0, 2), dtype=I64))], opset=13)
    xb = RNG.rand(3, 2) > 0.5
    save_case(out, "tile_bool", "Tile", [("X", xb)], [("Y", np.tile(xb, (2, 2)))],
              initializers=[("repeats", np.array((2, 2), dtype=I64))], opset=13)

    x = rand(3, 4, 5)
    xd = x.astype(np.float64)
    for axis in (0, 1, -1):
        for exclusive in (0, 1):
            for reverse in (0, 1):
                v = np.flip(xd, axis) if reverse else xd
                y = np.cumsum(v, axis=axis)
                if exclusive:
                    y = y - v
                if reverse:
                    y = np.flip(y, axis)
                save_case(out, "cumsum_axis%d_excl%d_rev%d" % (axis % 3, exclusive, reverse), "CumSum", [("X", x)],
                          [("Y", f32(y))], {"exclusive": exclusive, "reverse": reverse},
                          initializers=[("axis", np.array(axis, dtype=I64))], opset=14)
    x64 = xd[:, :, 0]
    save_case(out, "cumsum_float64", "CumSum", [("X", x64)], [("Y", np.cumsum(x64, axis=0))],
              initializers=[("axis", np.array(0, dtype=I64))], opset=14)
    # The axis as a graph input (read at run time), int32 data.
    xi = np.array([[1, -2, 3], [4, 5, -6]], dtype=I32)
    save_case(out, "cumsum_int32_axis_input", "CumSum", [("X", xi), ("axis", np.array(1, dtype=I32))],
              [("Y", np.cumsum(xi, axis=1).astype(I32))], opset=14)


# ---------------------------------------------------------------------------------------------
# DepthToSpace / SpaceToDepth
# ---------------------------------------------------------------------------------------------

def space_depth_cases(out):
    b = 2
    x = rand(2, 12, 3, 5)
    n, c, h, w = x.shape
    dcr = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2).reshape(n, c // (b * b), h * b, w * b)
    crd = x.reshape(n, c // (b * b), b, b, h, w).transpose(0, 1, 4, 2, 5, 3).reshape(n, c // (b * b), h * b, w * b)
    save_case(out, "depthtospace_dcr", "DepthToSpace", [("X", x)], [("Y", dcr)], {"blocksize": b, "mode": "DCR"}, opset=13)
    save_case(out, "depthtospace_crd", "DepthToSpace", [("X", x)], [("Y", crd)], {"blocksize": b, "mode": "CRD"}, opset=13)
    x = rand(1, 3, 6, 9)
    n, c, h, w = x.shape
    b = 3
    y = x.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4).reshape(n, c * b * b, h // b, w // b)
    save_case(out, "spacetodepth_b3", "SpaceToDepth", [("X", x)], [("Y", y)], {"blocksize": b}, opset=13)


# ---------------------------------------------------------------------------------------------
# elementwise unary
# ---------------------------------------------------------------------------------------------

def softplus(x):
    return np.where(x > 0, x + np.log1p(np.exp(-np.abs(x))), np.log1p(np.exp(np.minimum(x, 0))))


def unary_cases(out):
    x = rand(3, 5, 7, low=-4.0, high=4.0)
    # Exact halves for Round (half to even), and integers, zero and negative zero.
    x.flat[:8] = [0.5, 1.5, 2.5, -0.5, -1.5, -2.0, 0.0, 3.0]
    xd = x.astype(np.float64)
    unit = rand(3, 13, low=-0.95, high=0.95)
    ud = unit.astype(np.float64)
    big = rand(3, 13, low=1.05, high=6.0).astype(np.float64)
    cases = [
        # name, op, input, expected, attrs, opset
        ("round", "Round", x, np.round(xd), {}, 11),
        ("floor", "Floor", x, np.floor(xd), {}, 13),
        ("ceil", "Ceil", x, np.ceil(xd), {}, 13),
        ("sign", "Sign", x, np.sign(xd), {}, 13),
        ("softplus", "Softplus", x, softplus(xd), {}, 13),
        ("softsign", "Softsign", x, xd / (1 + np.abs(xd)), {}, 13),
        ("selu_default", "Selu", x, 1.0507009873554804934193349852946 *
         np.where(xd > 0, xd, 1.6732632423543772848170429916717 * np.expm1(xd)), {}, 13),
        ("selu_attrs", "Selu", x, 1.5 * np.where(xd > 0, xd, 0.7 * np.expm1(xd)), {"alpha": 0.7, "gamma": 1.5}, 13),
        ("celu", "Celu", x, np.maximum(0, xd) + np.minimum(0, 2.0 * np.expm1(xd / 2.0)), {"alpha": 2.0}, 13),
        ("thresholdedrelu", "ThresholdedRelu", x, np.where(xd > 1.5, xd, 0), {"alpha": 1.5}, 13),
        ("shrink", "Shrink", x, np.where(xd < -1.5, xd + 0.5, np.where(xd > 1.5, xd - 0.5, 0)),
         {"lambd": 1.5, "bias": 0.5}, 13),
        ("sin", "Sin", x, np.sin(xd), {}, 13),
        ("cos", "Cos", x, np.cos(xd), {}, 13),
        ("tan", "Tan", unit, np.tan(ud), {}, 13),
        ("asin", "Asin", unit, np.arcsin(ud), {}, 13),
        ("acos", "Acos", unit, np.arccos(ud), {}, 13),
        ("atan", "Atan", x, np.arctan(xd), {}, 13),
        ("sinh", "Sinh", x, np.sinh(xd), {}, 13),
        ("cosh", "Cosh", x, np.cosh(xd), {}, 13),
        ("asinh", "Asinh", x, np.arcsinh(xd), {}, 13),
        ("acosh", "Acosh", f32(big), np.arccosh(big), {}, 13),
        ("atanh", "Atanh", unit, np.arctanh(ud), {}, 13),
    ]
    for name, op, a, y, attrs, opset in cases:
        save_case(out, name, op, [("X", a)], [("Y", f32(y))], attrs, opset=opset)
    save_case_opset18(out, "mish", "Mish", [("X", x)], [("Y", f32(xd * np.tanh(softplus(xd))))])
    xi = np.array([-7, 0, 3, -1, 9], dtype=I64)
    save_case(out, "sign_int64", "Sign", [("X", xi)], [("Y", np.sign(xi))], opset=13)

    special = np.array([[1.0, np.nan, -np.inf, np.inf], [0.0, -0.0, np.nan, -3.5]], dtype=F32)
    save_case(out, "isnan", "IsNaN", [("X", special)], [("Y", np.isnan(special))], opset=13)
    save_case(out, "isinf", "IsInf", [("X", special)], [("Y", np.isinf(special))], opset=10)
    save_case(out, "isinf_positive", "IsInf", [("X", special)], [("Y", np.isposinf(special))],
              {"detect_negative": 0}, opset=10)
    save_case(out, "isinf_negative", "IsInf", [("X", special)], [("Y", np.isneginf(special))],
              {"detect_positive": 0}, opset=10)


# ---------------------------------------------------------------------------------------------
# Mod, Sum, Mean
# ---------------------------------------------------------------------------------------------

def mod_sum_mean_cases(out):
    a = np.array([[7, -7, 7, -7, 0, 13], [5, -5, 3, -3, 100, -100]], dtype=I64)
    b = np.array([3, 3, -3, -3, 7, 9], dtype=I64)
    save_case(out, "mod_int64", "Mod", [("A", a), ("B", b)], [("C", np.mod(a, b))], opset=13)
    save_case(out, "mod_fmod_int64", "Mod", [("A", a), ("B", b)], [("C", np.fmod(a, b))], {"fmod": 1}, opset=13)
    save_case(out, "mod_int32_bcast", "Mod", [("A", a.astype(I32)), ("B", np.array(-4, dtype=I32))],
              [("C", np.mod(a, -4).astype(I32))], opset=13)
    af, bf = rand(3, 5, low=-6.0, high=6.0), rand(5, low=0.5, high=3.0)
    save_case(out, "mod_fmod_float", "Mod", [("A", af), ("B", bf)],
              [("C", f32(np.fmod(af.astype(np.float64), bf.astype(np.float64))))], {"fmod": 1}, opset=13)

    a64, b64 = rand(3, 5).astype(np.float64), rand(5, low=0.5, high=2.0).astype(np.float64)
    save_case(out, "mod_fmod_float64", "Mod", [("A", a64), ("B", b64)], [("C", np.fmod(a64, b64))], {"fmod": 1}, opset=13)
    save_case(out, "sum_float64", "Sum", [("a", a64), ("b", b64)], [("y", a64 + b64)], opset=13)
    save_case(out, "mean_float64", "Mean", [("a", a64), ("b", b64)], [("y", (a64 + b64) / 2)], opset=13)

    x0, x1, x2 = rand(3, 4), rand(4), rand(1, 4)
    save_case(out, "sum_three", "Sum", [("a", x0), ("b", x1), ("c", x2)], [("y", x0 + x1 + x2)], opset=13)
    save_case(out, "sum_one", "Sum", [("a", x0)], [("y", x0)], opset=13)
    mean = (x0.astype(np.float64) + x1 + x2) / 3
    save_case(out, "mean_three", "Mean", [("a", x0), ("b", x1), ("c", x2)], [("y", f32(mean))], opset=13)
    save_case(out, "mean_two", "Mean", [("a", x0), ("b", x1)], [("y", f32((x0.astype(np.float64) + x1) / 2))],
              opset=13)


# ---------------------------------------------------------------------------------------------
# OneHot, EyeLike, CastLike, Hardmax
# ---------------------------------------------------------------------------------------------

def onehot_ref(indices, depth, values, axis):
    idx = np.asarray(indices).astype(I64)
    idx = np.where(idx < 0, idx + depth, idx)
    eye = (np.arange(depth) == idx[..., None])
    y = np.where(eye, values[1], values[0]).astype(values.dtype)
    rank = idx.ndim
    axis = axis if axis >= 0 else axis + rank + 1
    return np.moveaxis(y, -1, axis)


def misc_cases(out):
    indices = np.array([[0, 3, -1], [5, 2, -6]], dtype=I64)  # 5 and -6 are out of range: all "off"
    values = np.array([-2.0, 7.0], dtype=F32)
    for axis in (-1, 0, 1):
        save_case(out, "onehot_axis%d" % (axis % 3), "OneHot", [("indices", indices)],
                  [("y", onehot_ref(indices, 5, values, axis))], {"axis": axis},
                  initializers=[("depth", np.array(5, dtype=I64)), ("values", values)],
                  input_order=["indices", "depth", "values"], opset=11)
    fidx = np.array([0.7, 2.2, -1.5], dtype=F32)  # truncated: 0, 2, -1
    ivalues = np.array([0, 1], dtype=I64)
    save_case(out, "onehot_float_indices", "OneHot", [("indices", fidx), ("values", ivalues)],
              [("y", onehot_ref(np.trunc(fidx), 4, ivalues, -1))],
              initializers=[("depth", np.array(4.0, dtype=F32))], input_order=["indices", "depth", "values"], opset=11)

    x = rand(4, 6)
    for k in (0, 2, -3):
        save_case(out, "eyelike_k%d" % k if k >= 0 else "eyelike_kneg%d" % -k, "EyeLike", [("x", x)],
                  [("y", np.eye(4, 6, k=k, dtype=F32))], {"k": k}, opset=9)
    save_case(out, "eyelike_dtype_int64", "EyeLike", [("x", x)], [("y", np.eye(4, 6, dtype=I64))],
              {"dtype": TensorProto.INT64}, opset=9)

    xf = rand(3, 4, low=-5.0, high=5.0)
    save_case(out, "castlike_float_to_int64", "CastLike", [("x", xf), ("like", np.array([1], dtype=I64))],
              [("y", xf.astype(I64))], opset=15)

    x = f32(np.rint(rand(3, 4, 5, low=-2.0, high=2.0)))  # ties: the first maximum wins
    for axis in (0, 1, -1):
        y = np.zeros_like(x)
        np.put_along_axis(y, np.expand_dims(np.argmax(x, axis=axis), axis), 1.0, axis=axis)
        save_case(out, "hardmax_axis%d" % (axis % 3), "Hardmax", [("x", x)], [("y", y)], {"axis": axis}, opset=13)
    # opset 11: coerced to 2-D at axis 1 (all trailing dims together).
    flat = x.reshape(3, 20)
    y = np.zeros_like(flat)
    y[np.arange(3), np.argmax(flat, axis=1)] = 1.0
    save_case(out, "hardmax_opset11_coerce2d", "Hardmax", [("x", x)], [("y", y.reshape(x.shape))], opset=11)


def generate(out_dir):
    argminmax_cases(out_dir)
    logic_cases(out_dir)
    trilu_cases(out_dir)
    size_cases(out_dir)
    gather_scatter_cases(out_dir)
    tile_cumsum_cases(out_dir)
    space_depth_cases(out_dir)
    unary_cases(out_dir)
    mod_sum_mean_cases(out_dir)
    misc_cases(out_dir)
