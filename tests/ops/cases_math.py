"""Per-op cases for the compute-heavy ops: Conv, ConvTranspose, Gemm, MatMul, Softmax,
LogSoftmax, MaxPool/AveragePool (and Global*), BatchNormalization, LayerNormalization,
Reduce{Mean,Sum,Max,Min} and Resize.

Expected outputs come from the small numpy reference functions below (float64, then cast to
float32); Resize uses the ONNX reference implementation itself (onnx/backend/test/case/node/
resize.py) except for the nearest rounding of tf_half_pixel_for_nn. Shapes are chosen to
break kernels: odd channel counts (3, 13), 1x1/3x3/7x7 kernels, strides and dilations of 2,
asymmetric pads, every auto_pad form, groups and depthwise, batch 2, 1-D and 3-D.
"""
import itertools

import numpy as np

from opcase import rand, save_case

F32 = np.float32


# ---------------------------------------------------------------------------------------------
# numpy references
# ---------------------------------------------------------------------------------------------

def same_pads(in_sp, kernel, strides, dilations, upper):
    """ONNX auto_pad SAME_UPPER/SAME_LOWER for Conv/Pool: output = ceil(in / stride)."""
    begin, end = [], []
    for i, n in enumerate(in_sp):
        out = -(-n // strides[i])
        total = max(0, (out - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - n)
        small, large = total // 2, total - total // 2
        begin.append(small if upper else large)
        end.append(large if upper else small)
    return begin + end


def conv_ref(x, w, b=None, strides=None, dilations=None, pads=None, group=1):
    nsp = x.ndim - 2
    strides = strides or [1] * nsp
    dilations = dilations or [1] * nsp
    pads = pads or [0] * (2 * nsp)
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + [(pads[i], pads[nsp + i]) for i in range(nsp)])
    w = w.astype(np.float64)
    n, c = x.shape[:2]
    m, kernel = w.shape[0], w.shape[2:]
    out = [(xp.shape[2 + i] - ((kernel[i] - 1) * dilations[i] + 1)) // strides[i] + 1 for i in range(nsp)]
    y = np.zeros((n, m) + tuple(out))
    cg, mg = c // group, m // group
    for g in range(group):
        for kpos in itertools.product(*[range(k) for k in kernel]):
            taps = tuple(slice(kpos[i] * dilations[i], kpos[i] * dilations[i] + strides[i] * (out[i] - 1) + 1, strides[i])
                         for i in range(nsp))
            patch = xp[(slice(None), slice(g * cg, (g + 1) * cg)) + taps]
            wk = w[(slice(g * mg, (g + 1) * mg), slice(None)) + kpos]
            y[:, g * mg:(g + 1) * mg] += np.einsum("nc...,mc->nm...", patch, wk)
    if b is not None:
        y += b.astype(np.float64).reshape((1, m) + (1,) * nsp)
    return y.astype(F32)


def conv_transpose_ref(x, w, b=None, strides=None, dilations=None, pads=None, output_padding=None, group=1):
    """Scatter definition: y[i * s + k * d] += x[i] * w[k] over the full output, then crop pads."""
    nsp = x.ndim - 2
    strides = strides or [1] * nsp
    dilations = dilations or [1] * nsp
    pads = pads or [0] * (2 * nsp)
    output_padding = output_padding or [0] * nsp
    n, c = x.shape[:2]
    ins, mg, kernel = x.shape[2:], w.shape[1], w.shape[2:]
    m, cg = mg * group, c // group
    full = [strides[i] * (ins[i] - 1) + output_padding[i] + (kernel[i] - 1) * dilations[i] + 1 for i in range(nsp)]
    y = np.zeros((n, m) + tuple(full))
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    for g in range(group):
        for kpos in itertools.product(*[range(k) for k in kernel]):
            contrib = np.einsum("nc...,cm->nm...", x64[:, g * cg:(g + 1) * cg],
                                w64[(slice(g * cg, (g + 1) * cg), slice(None)) + kpos])
            taps = tuple(slice(kpos[i] * dilations[i], kpos[i] * dilations[i] + strides[i] * (ins[i] - 1) + 1, strides[i])
                         for i in range(nsp))
            y[(slice(None), slice(g * mg, (g + 1) * mg)) + taps] += contrib
    y = y[(slice(None), slice(None)) + tuple(slice(pads[i], full[i] - pads[nsp + i]) for i in range(nsp))]
    if b is not None:
        y = y + b.astype(np.float64).reshape((1, m) + (1,) * nsp)
    return y.astype(F32)


def conv_transpose_pads_for(x_sp, kernel, strides, dilations, output_padding, out_sp, auto_pad="NOTSET"):
    """ONNX ConvTranspose: pads from a requested output shape (odd element at the end only for SAME_UPPER)."""
    begin, end = [], []
    for i, n in enumerate(x_sp):
        total = strides[i] * (n - 1) + output_padding[i] + (kernel[i] - 1) * dilations[i] + 1 - out_sp[i]
        small, large = total // 2, total - total // 2
        begin.append(small if auto_pad == "SAME_UPPER" else large)
        end.append(large if auto_pad == "SAME_UPPER" else small)
    return begin + end


def pool_ref(x, kind, kernel, strides=None, dilations=None, pads=None, ceil_mode=0, count_include_pad=0):
    """Max/average pooling. ceil_mode: the last window must start inside the input or the left
    padding. count_include_pad divides by the taps inside the padded input."""
    nsp = x.ndim - 2
    strides = strides or [1] * nsp
    dilations = dilations or [1] * nsp
    pads = pads or [0] * (2 * nsp)
    ins = x.shape[2:]
    out = []
    for i in range(nsp):
        span = ins[i] + pads[i] + pads[nsp + i] - ((kernel[i] - 1) * dilations[i] + 1)
        o = (-(-span // strides[i]) if ceil_mode else span // strides[i]) + 1
        if ceil_mode and (o - 1) * strides[i] >= ins[i] + pads[i]:
            o -= 1
        out.append(o)
    x64 = x.astype(np.float64)
    y = np.zeros(x.shape[:2] + tuple(out))
    for opos in itertools.product(*[range(o) for o in out]):
        inside, padded = [], 1
        for i in range(nsp):
            taps = [opos[i] * strides[i] - pads[i] + j * dilations[i] for j in range(kernel[i])]
            padded *= sum(1 for t in taps if -pads[i] <= t < ins[i] + pads[nsp + i])
            inside.append([t for t in taps if 0 <= t < ins[i]])
        window = x64[(slice(None), slice(None)) + np.ix_(*inside)]
        axes = tuple(range(2, 2 + nsp))
        if kind == "max":
            v = window.max(axis=axes)
        else:
            v = window.sum(axis=axes) / (padded if count_include_pad else window[0, 0].size)
        y[(slice(None), slice(None)) + opos] = v
    return y.astype(F32)


def softmax_ref(x, axis, log=False, coerce=False):
    x64 = x.astype(np.float64)
    shape = x.shape
    axis = axis % x.ndim
    if coerce:
        x64 = x64.reshape(int(np.prod(shape[:axis])), -1)
        axis = 1
    e = np.exp(x64 - x64.max(axis=axis, keepdims=True))
    s = e.sum(axis=axis, keepdims=True)
    y = (x64 - x64.max(axis=axis, keepdims=True) - np.log(s)) if log else e / s
    return y.reshape(shape).astype(F32)


def batchnorm_ref(x, scale, b, mean, var, eps=1e-5):
    shp = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    r = lambda a: a.astype(np.float64).reshape(shp)
    return ((x.astype(np.float64) - r(mean)) / np.sqrt(r(var) + eps) * r(scale) + r(b)).astype(F32)


def layernorm_ref(x, scale, b=None, axis=-1, eps=1e-5):
    axes = tuple(range(axis % x.ndim, x.ndim))
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=axes, keepdims=True)
    var = ((x64 - mean) ** 2).mean(axis=axes, keepdims=True)
    y = (x64 - mean) / np.sqrt(var + eps) * scale.astype(np.float64)
    if b is not None:
        y = y + b.astype(np.float64)
    return y.astype(F32)


REDUCE_FN = {"Mean": np.mean, "Sum": np.sum, "Max": np.max, "Min": np.min}


def reduce_ref(op, x, axes, keepdims):
    ax = None if axes is None else tuple(axes)
    if np.issubdtype(x.dtype, np.integer):
        return REDUCE_FN[op](x, axis=ax, keepdims=bool(keepdims)).astype(x.dtype)
    return REDUCE_FN[op](x.astype(np.float64), axis=ax, keepdims=bool(keepdims)).astype(F32)


def resize_nearest_tf_half_pixel(x, sizes, nearest_mode):
    """tf_half_pixel_for_nn (its nearest rounding is not in the ONNX reference): x_original = (x + 0.5) / scale."""
    y = x
    for d, n in enumerate(sizes):
        scale = n / x.shape[d]
        src = (np.arange(n) + 0.5) / scale
        lo = np.floor(src)
        frac = src - lo
        if nearest_mode == "round_prefer_floor":
            idx = np.where(frac <= 0.5, lo, lo + 1)
        elif nearest_mode == "round_prefer_ceil":
            idx = np.where(frac < 0.5, lo, lo + 1)
        elif nearest_mode == "floor":
            idx = lo
        else:
            idx = np.ceil(src)
        idx = np.where(frac == 0, src, idx)
        y = np.take(y, np.clip(idx, 0, x.shape[d] - 1).astype(np.int64), axis=d)
    return y


def resize_ref(x, mode, coord="half_pixel", nearest_mode="round_prefer_floor", scales=None, sizes=None):
    from onnx.backend.test.case.node.resize import interpolate_nd, linear_coeffs, nearest_coeffs
    if mode == "nearest" and coord == "tf_half_pixel_for_nn":
        return resize_nearest_tf_half_pixel(x, sizes, nearest_mode).astype(x.dtype)
    coeffs = linear_coeffs if mode == "linear" else (lambda r: nearest_coeffs(r, mode=nearest_mode))
    y = interpolate_nd(x.astype(np.float64), coeffs, output_size=sizes, scale_factors=scales,
                       coordinate_transformation_mode=coord)
    return y.astype(x.dtype)


# ---------------------------------------------------------------------------------------------
# cases
# ---------------------------------------------------------------------------------------------

def conv_cases(out):
    def case(name, xs, ws, bias=True, strides=None, dilations=None, pads=None, group=1, auto_pad=None):
        x, w = rand(*xs), rand(*ws)
        b = rand(ws[0]) if bias else None
        nsp = len(xs) - 2
        attrs = {"group": group}
        if strides:
            attrs["strides"] = strides
        if dilations:
            attrs["dilations"] = dilations
        ref_pads = pads
        if auto_pad:
            attrs["auto_pad"] = auto_pad
            if auto_pad == "VALID":
                ref_pads = [0] * (2 * nsp)
            else:
                ref_pads = same_pads(xs[2:], ws[2:], strides or [1] * nsp, dilations or [1] * nsp,
                                     auto_pad == "SAME_UPPER")
        elif pads:
            attrs["pads"] = pads
        y = conv_ref(x, w, b, strides, dilations, ref_pads, group)
        inits = [("W", w)] + ([("B", b)] if bias else [])
        save_case(out, "conv_" + name, "Conv", [("X", x)], [("Y", y)], attrs, initializers=inits)

    case("1x1_c13", [1, 13, 5, 6], [7, 13, 1, 1])
    case("1x1_stride2", [1, 8, 7, 7], [5, 8, 1, 1], strides=[2, 2])
    case("3x3_pads1", [1, 3, 8, 8], [4, 3, 3, 3], pads=[1, 1, 1, 1])
    case("3x3_stride2_pads_asym", [1, 3, 9, 8], [5, 3, 3, 3], strides=[2, 2], pads=[1, 0, 2, 1])
    case("7x7_stride2_pad3_c3", [1, 3, 15, 15], [5, 3, 7, 7], strides=[2, 2], pads=[3, 3, 3, 3])
    case("3x3_dilation2", [1, 4, 9, 9], [3, 4, 3, 3], dilations=[2, 2])
    case("3x3_dilation2_stride2_pads", [1, 2, 11, 10], [3, 2, 3, 3], strides=[2, 2], dilations=[2, 2],
         pads=[2, 1, 2, 2])
    case("autopad_same_upper_stride2", [1, 3, 7, 8], [4, 3, 3, 3], strides=[2, 2], auto_pad="SAME_UPPER")
    case("autopad_same_lower_k4_stride2", [1, 3, 7, 7], [4, 3, 4, 4], strides=[2, 2], auto_pad="SAME_LOWER")
    case("autopad_same_upper_k4", [1, 2, 6, 5], [3, 2, 4, 4], auto_pad="SAME_UPPER")
    case("autopad_valid", [1, 3, 7, 6], [2, 3, 3, 2], strides=[2, 1], auto_pad="VALID")
    case("groups2", [1, 4, 6, 6], [6, 2, 3, 3], group=2, pads=[1, 1, 1, 1])
    case("groups3_stride2", [2, 6, 7, 7], [9, 2, 3, 3], group=3, strides=[2, 2])
    case("depthwise_c13", [1, 13, 7, 7], [13, 1, 3, 3], group=13, pads=[1, 1, 1, 1])
    case("depthwise_multiplier2", [1, 3, 6, 6], [6, 1, 3, 3], group=3)
    case("batch2_nobias", [2, 3, 5, 5], [4, 3, 3, 3], bias=False)
    case("rect_kernel_1x5", [1, 2, 6, 9], [3, 2, 1, 5], pads=[0, 2, 0, 2])
    case("kernel_equals_input", [1, 3, 4, 4], [2, 3, 4, 4])
    case("1d", [1, 3, 20], [4, 3, 5], strides=[2], pads=[2, 1])
    case("1d_dilation3_batch2", [2, 5, 17], [3, 5, 3], dilations=[3])
    case("3d", [1, 2, 5, 6, 4], [3, 2, 3, 3, 2], pads=[1, 1, 0, 1, 1, 1])
    case("3d_stride2_groups2", [1, 4, 5, 5, 5], [4, 2, 3, 3, 3], strides=[2, 2, 2], group=2)


def conv_transpose_cases(out):
    def case(name, xs, ws, bias=True, strides=None, dilations=None, pads=None, output_padding=None, group=1,
             output_shape=None, auto_pad=None):
        x, w = rand(*xs), rand(*ws)
        b = rand(ws[1] * group) if bias else None
        nsp = len(xs) - 2
        s, d = strides or [1] * nsp, dilations or [1] * nsp
        op = output_padding or [0] * nsp
        attrs = {"group": group}
        for key, v in (("strides", strides), ("dilations", dilations), ("output_padding", output_padding),
                       ("output_shape", output_shape)):
            if v:
                attrs[key] = v
        ref_pads = pads
        if auto_pad:
            attrs["auto_pad"] = auto_pad
        if output_shape or auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            target = output_shape or [xs[2 + i] * s[i] for i in range(nsp)]
            ref_pads = conv_transpose_pads_for(xs[2:], ws[2:], s, d, op, target, auto_pad or "NOTSET")
            # A target beyond the full output: no pads, the extra trailing positions get only the bias.
            for i in range(nsp):
                if ref_pads[i] + ref_pads[nsp + i] < 0:
                    op = list(op)
                    op[i] -= ref_pads[i] + ref_pads[nsp + i]
                    ref_pads[i] = ref_pads[nsp + i] = 0
            output_padding = op
        elif pads:
            attrs["pads"] = pads
        y = conv_transpose_ref(x, w, b, strides, dilations, ref_pads, output_padding, group)
        inits = [("W", w)] + ([("B", b)] if bias else [])
        save_case(out, "convtranspose_" + name, "ConvTranspose", [("X", x)], [("Y", y)], attrs, initializers=inits)

    case("3x3", [1, 2, 4, 4], [2, 3, 3, 3])
    case("stride2_pads1", [1, 3, 5, 4], [3, 2, 3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    case("stride2_output_padding1", [1, 2, 4, 5], [2, 3, 3, 3], strides=[2, 2], output_padding=[1, 1])
    case("stride3_pads_asym", [1, 2, 3, 4], [2, 2, 4, 3], strides=[3, 2], pads=[0, 1, 2, 1])
    case("output_shape", [1, 2, 4, 4], [2, 3, 3, 3], strides=[2, 2], output_shape=[8, 8])
    case("output_shape_odd_total", [1, 2, 3, 5], [2, 2, 3, 3], strides=[2, 2], output_shape=[6, 10])
    case("output_shape_beyond_full", [1, 2, 3, 3], [2, 2, 3, 3], strides=[2, 2], output_shape=[8, 6])
    case("autopad_same_upper", [1, 2, 3, 4], [2, 2, 4, 4], strides=[2, 2], auto_pad="SAME_UPPER")
    case("groups2", [1, 4, 4, 4], [4, 3, 3, 3], group=2, strides=[2, 2], pads=[1, 1, 1, 1])
    case("depthwise_c13", [1, 13, 5, 5], [13, 1, 3, 3], group=13, strides=[2, 2])
    case("dilation2", [1, 3, 5, 5], [3, 2, 3, 3], dilations=[2, 2], pads=[1, 1, 1, 1])
    case("batch2_nobias", [2, 3, 4, 3], [3, 2, 2, 2], bias=False, strides=[2, 2])
    case("1d", [1, 3, 7], [3, 4, 5], strides=[3], pads=[1, 2], output_padding=[2])
    case("3d", [1, 2, 3, 4, 3], [2, 2, 3, 3, 2], strides=[2, 1, 2], pads=[1, 0, 0, 1, 1, 0])


def gemm_cases(out):
    def case(name, m, k, n, trans_a=0, trans_b=0, alpha=None, beta=None, c_shape=None, c_as_input=False):
        a = rand(*((k, m) if trans_a else (m, k)))
        b = rand(*((n, k) if trans_b else (k, n)))
        attrs = {}
        if trans_a:
            attrs["transA"] = 1
        if trans_b:
            attrs["transB"] = 1
        if alpha is not None:
            attrs["alpha"] = alpha
        if beta is not None:
            attrs["beta"] = beta
        opa = a.T if trans_a else a
        opb = b.T if trans_b else b
        y = (alpha if alpha is not None else 1.0) * (opa.astype(np.float64) @ opb.astype(np.float64))
        inputs, inits = [("A", a)], [("B", b)]
        if c_shape is not None:
            c = rand(*c_shape)
            y = y + (beta if beta is not None else 1.0) * c.astype(np.float64)
            (inputs if c_as_input else inits).append(("C", c))
        order = ["A", "B"] + (["C"] if c_shape is not None else [])
        save_case(out, "gemm_" + name, "Gemm", inputs, [("Y", y.astype(F32))], attrs, initializers=inits,
                  input_order=order)

    case("basic_noc", 5, 7, 13)
    case("transA", 5, 7, 13, trans_a=1, c_shape=[5, 13])
    case("transB", 13, 7, 5, trans_b=1, c_shape=[5])
    case("transA_transB", 3, 13, 6, trans_a=1, trans_b=1, c_shape=[3, 1])
    case("alpha_beta", 4, 9, 7, alpha=0.5, beta=2.0, c_shape=[4, 7])
    case("c_scalar", 6, 5, 4, c_shape=[])
    case("c_1xN", 6, 5, 4, beta=-1.5, c_shape=[1, 4])
    case("c_Mx1", 6, 5, 4, trans_b=1, c_shape=[6, 1])
    case("c_single", 3, 4, 5, alpha=2.0, c_shape=[1])
    case("c_runtime_input", 7, 8, 9, trans_b=1, c_shape=[9], c_as_input=True)
    case("large_k", 4, 130, 17, trans_b=1, c_shape=[17])
    case("beta0", 2, 3, 4, beta=0.0, c_shape=[2, 4])


def matmul_cases(out):
    def case(name, ashape, bshape, b_const=False):
        a, b = rand(*ashape), rand(*bshape)
        y = np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(F32)
        if b_const:
            save_case(out, "matmul_" + name, "MatMul", [("A", a)], [("Y", y)], initializers=[("B", b)])
        else:
            save_case(out, "matmul_" + name, "MatMul", [("A", a), ("B", b)], [("Y", y)])

    case("2d", [5, 7], [7, 13])
    case("2d_const_b", [3, 17], [17, 6], b_const=True)
    case("1d_2d", [7], [7, 5])
    case("2d_1d", [4, 7], [7])
    case("1d_1d", [9], [9])
    case("batched_3d", [3, 4, 5], [3, 5, 6])
    case("broadcast_4d_3d", [2, 1, 3, 4], [5, 4, 6])
    case("3d_2d", [2, 5, 7], [7, 3])
    case("1d_3d", [4], [2, 4, 3])
    case("3d_1d", [2, 3, 4], [4])


def softmax_cases(out):
    def case(name, op, shape, axis=None, opset=13, scale=1.0):
        x = (rand(*shape) * scale).astype(F32)
        attrs = {} if axis is None else {"axis": axis}
        default_axis = 1 if opset < 13 else -1
        y = softmax_ref(x, default_axis if axis is None else axis, log=op == "LogSoftmax", coerce=opset < 13)
        save_case(out, name, op, [("X", x)], [("Y", y)], attrs, opset=opset)

    case("softmax_axis_last", "Softmax", [3, 4, 13])
    case("softmax_axis1", "Softmax", [2, 5, 3, 4], axis=1)
    case("softmax_axis0", "Softmax", [4, 3, 2], axis=0)
    case("softmax_large_values", "Softmax", [2, 17], scale=200.0)
    case("softmax_1d", "Softmax", [10])
    case("softmax_opset11_default_axis", "Softmax", [2, 3, 4], opset=11)
    case("softmax_opset11_axis0", "Softmax", [3, 2, 4], axis=0, opset=11)
    case("softmax_opset11_axis_last", "Softmax", [3, 2, 5], axis=-1, opset=11)
    case("logsoftmax_axis_last", "LogSoftmax", [3, 4, 13])
    case("logsoftmax_axis1", "LogSoftmax", [2, 5, 3], axis=1)
    case("logsoftmax_large_values", "LogSoftmax", [3, 9], scale=300.0)
    case("logsoftmax_opset11_axis1", "LogSoftmax", [2, 3, 4], axis=1, opset=11)


def pool_cases(out):
    def case(name, op, shape, kernel, strides=None, dilations=None, pads=None, ceil_mode=0, count_include_pad=None,
             auto_pad=None):
        x = rand(*shape)
        nsp = len(shape) - 2
        attrs = {"kernel_shape": kernel}
        if strides:
            attrs["strides"] = strides
        if dilations:
            attrs["dilations"] = dilations
        if ceil_mode:
            attrs["ceil_mode"] = 1
        if count_include_pad is not None:
            attrs["count_include_pad"] = count_include_pad
        ref_pads = pads
        if auto_pad:
            attrs["auto_pad"] = auto_pad
            ref_pads = ([0] * (2 * nsp) if auto_pad == "VALID" else
                        same_pads(shape[2:], kernel, strides or [1] * nsp, dilations or [1] * nsp,
                                  auto_pad == "SAME_UPPER"))
        elif pads:
            attrs["pads"] = pads
        kind = "max" if op == "MaxPool" else "avg"
        y = pool_ref(x, kind, kernel, strides, dilations, ref_pads, ceil_mode, count_include_pad or 0)
        save_case(out, name, op, [("X", x)], [("Y", y)], attrs)

    case("maxpool_2x2_stride2", "MaxPool", [1, 3, 8, 8], [2, 2], strides=[2, 2])
    case("maxpool_3x3_stride2_pads1_c13", "MaxPool", [2, 13, 9, 9], [3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    case("maxpool_pads_asym", "MaxPool", [1, 2, 7, 6], [3, 2], pads=[2, 0, 1, 1])
    case("maxpool_ceil_mode", "MaxPool", [1, 2, 7, 7], [3, 3], strides=[2, 2], ceil_mode=1)
    case("maxpool_ceil_mode_last_window_dropped", "MaxPool", [1, 2, 6, 6], [2, 2], strides=[2, 2],
         pads=[0, 0, 1, 1], ceil_mode=1)
    case("maxpool_dilation2", "MaxPool", [1, 3, 9, 8], [3, 3], dilations=[2, 2])
    case("maxpool_dilation2_stride2_ceil", "MaxPool", [1, 2, 10, 9], [2, 3], strides=[2, 2], dilations=[2, 2],
         pads=[1, 1, 0, 1], ceil_mode=1)
    case("maxpool_autopad_same_upper", "MaxPool", [1, 3, 7, 8], [3, 3], strides=[2, 2], auto_pad="SAME_UPPER")
    case("maxpool_autopad_same_lower", "MaxPool", [1, 2, 6, 7], [2, 2], auto_pad="SAME_LOWER")
    case("maxpool_1d", "MaxPool", [2, 3, 17], [3], strides=[2], pads=[1, 1])
    case("maxpool_3d", "MaxPool", [1, 2, 5, 6, 7], [2, 3, 2], strides=[2, 2, 2], pads=[0, 1, 0, 1, 1, 1])
    case("avgpool_3x3_pads_exclude", "AveragePool", [1, 3, 7, 7], [3, 3], pads=[1, 1, 1, 1], count_include_pad=0)
    case("avgpool_3x3_pads_include", "AveragePool", [1, 3, 7, 7], [3, 3], pads=[1, 1, 1, 1], count_include_pad=1)
    case("avgpool_stride2_pads_asym_include", "AveragePool", [1, 2, 8, 7], [3, 3], strides=[2, 2], pads=[1, 0, 2, 1],
         count_include_pad=1)
    case("avgpool_ceil_mode_exclude", "AveragePool", [1, 13, 8, 8], [3, 3], strides=[2, 2], ceil_mode=1)
    case("avgpool_ceil_mode_pads_include", "AveragePool", [1, 2, 8, 7], [3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
         ceil_mode=1, count_include_pad=1)
    case("avgpool_1d", "AveragePool", [1, 4, 15], [4], strides=[3])
    case("avgpool_3d", "AveragePool", [1, 2, 4, 5, 6], [2, 2, 3], strides=[2, 1, 2], pads=[1, 0, 1, 0, 1, 1],
         count_include_pad=1)
    case("avgpool_autopad_same_upper", "AveragePool", [1, 3, 7, 7], [3, 3], strides=[2, 2], auto_pad="SAME_UPPER")

    for op, kind in (("GlobalAveragePool", "avg"), ("GlobalMaxPool", "max")):
        for shape in ([2, 13, 5, 7], [1, 3, 9]):
            x = rand(*shape)
            y = pool_ref(x, kind, list(shape[2:]))
            save_case(out, "%s_%dd" % (op.lower(), len(shape) - 2), op, [("X", x)], [("Y", y)])


def norm_cases(out):
    for rank_shape in ([4, 13], [2, 3, 7], [2, 5, 4, 3]):
        c = rank_shape[1]
        x = rand(*rank_shape)
        scale, b, mean = rand(c), rand(c), rand(c)
        var = rand(c, low=0.1, high=2.0)
        eps = 1e-3 if len(rank_shape) == 4 else 1e-5
        y = batchnorm_ref(x, scale, b, mean, var, eps)
        save_case(out, "batchnorm_rank%d" % len(rank_shape), "BatchNormalization", [("X", x)], [("Y", y)],
                  {"epsilon": eps}, initializers=[("scale", scale), ("B", b), ("mean", mean), ("var", var)])

    def ln(name, shape, axis, scale_shape, bias=True, eps=1e-5):
        x = rand(*shape) * 3 + 1
        scale = rand(*scale_shape)
        b = rand(*scale_shape) if bias else None
        y = layernorm_ref(x, scale, b, axis, eps)
        inits = [("scale", scale)] + ([("B", b)] if bias else [])
        attrs = {"axis": axis}
        if eps != 1e-5:
            attrs["epsilon"] = eps
        save_case(out, "layernorm_" + name, "LayerNormalization", [("X", x)], [("Y", y)], attrs, initializers=inits)

    ln("axis_last_bias", [2, 5, 13], -1, [13])
    ln("axis_last_nobias", [3, 7], -1, [7], bias=False)
    ln("axis1_bias", [2, 4, 6], 1, [4, 6], eps=1e-3)
    ln("axis1_nobias", [3, 5, 2, 3], 1, [5, 2, 3], bias=False)
    ln("axis_neg2_scale_broadcast", [2, 3, 8], -2, [8])


def reduce_cases(out):
    def case(name, op, shape, axes, keepdims, opset=17, axes_input=False, noop=None, dtype=F32):
        x = rand(*shape) if dtype == F32 else np.random.RandomState(7).randint(-50, 50, size=shape).astype(dtype)
        attrs = {"keepdims": keepdims}
        inits, order = [], None
        if noop is not None:
            attrs["noop_with_empty_axes"] = noop
        if axes_input:
            if axes is not None:
                inits = [("axes", np.array(axes, dtype=np.int64))]
                order = ["X", "axes"]
        elif axes is not None:
            attrs["axes"] = axes
        if noop and not axes:
            y = x.copy()
        else:
            y = reduce_ref(op, x, axes, keepdims)
        save_case(out, "reduce%s_%s" % (op.lower(), name), "Reduce" + op, [("X", x)], [("Y", np.asarray(y))], attrs,
                  initializers=inits, input_order=order, opset=opset)

    case("axis1_keepdims", "Mean", [2, 13, 4], [1], 1)
    case("axes_0_2_nokeep", "Mean", [3, 4, 5], [0, 2], 0)
    case("all_keepdims", "Mean", [2, 3, 4], None, 1)
    case("negative_axes_opset11", "Mean", [2, 3, 4, 5], [-1, -2], 1, opset=11)
    case("spatial_opset13", "Mean", [2, 3, 6, 7], [2, 3], 0, opset=13)
    case("axis_last_nokeep_opset11", "Sum", [4, 7, 13], [-1], 0, opset=11)
    case("all_nokeep_opset11", "Sum", [3, 5], None, 0, opset=11)
    case("axes_input_opset13", "Sum", [2, 3, 4, 5], [1, 3], 1, opset=13, axes_input=True)
    case("axes_input_neg_nokeep", "Sum", [3, 4, 5], [-3, -1], 0, opset=13, axes_input=True)
    case("no_axes_input_opset13", "Sum", [2, 3, 4], None, 1, opset=13, axes_input=True)
    case("noop_empty_axes", "Sum", [2, 3, 4], None, 1, opset=13, axes_input=True, noop=1)
    case("int32_axis0", "Sum", [5, 3, 4], [0], 0, opset=13, axes_input=True, dtype=np.int32)
    case("axis0_keepdims", "Max", [5, 3, 4], [0], 1)
    case("axes_1_2_nokeep", "Max", [2, 3, 4, 5], [1, 2], 0)
    case("int64_all", "Max", [3, 4], None, 0, dtype=np.int64)
    case("axis1_nokeep", "Min", [2, 13, 3], [1], 0)
    case("axes_0_3_keep", "Min", [2, 3, 4, 5], [3, 0], 1)


def resize_cases(out):
    def case(name, x, mode, coord="half_pixel", nearest_mode=None, scales=None, sizes=None):
        attrs = {"mode": mode, "coordinate_transformation_mode": coord}
        if nearest_mode:
            attrs["nearest_mode"] = nearest_mode
        if scales is not None:
            inits = [("scales", np.array(scales, dtype=F32))]
            order = ["X", "", "scales"]
        else:
            inits = [("sizes", np.array(sizes, dtype=np.int64))]
            order = ["X", "", "", "sizes"]
        y = resize_ref(x, mode, coord, nearest_mode or "round_prefer_floor",
                       scales=None if scales is None else np.array(scales, dtype=F32), sizes=sizes)
        save_case(out, "resize_" + name, "Resize", [("X", x)], [("Y", y)], attrs, initializers=inits,
                  input_order=order)

    x4 = rand(1, 2, 4, 5)
    case("nearest_scales_up2_asymmetric_floor", x4, "nearest", "asymmetric", "floor", scales=[1, 1, 2, 2])
    case("nearest_scales_up3x2_half_pixel", x4, "nearest", scales=[1, 1, 3, 2])
    case("nearest_sizes_down_half_pixel", rand(1, 3, 8, 7), "nearest", sizes=[1, 3, 3, 4])
    case("nearest_sizes_up_round_prefer_ceil", x4, "nearest", "half_pixel", "round_prefer_ceil", sizes=[1, 2, 7, 9])
    case("nearest_sizes_up_ceil_asymmetric", x4, "nearest", "asymmetric", "ceil", sizes=[1, 2, 9, 8])
    case("nearest_sizes_align_corners_floor", x4, "nearest", "align_corners", "floor", sizes=[1, 2, 7, 8])
    case("nearest_sizes_pytorch_half_pixel", x4, "nearest", "pytorch_half_pixel", "round_prefer_floor",
         sizes=[1, 2, 6, 3])
    case("nearest_tf_half_pixel_for_nn", x4, "nearest", "tf_half_pixel_for_nn", "round_prefer_ceil",
         sizes=[1, 2, 6, 7])
    case("nearest_uint8", np.random.RandomState(3).randint(0, 255, size=(1, 1, 3, 4)).astype(np.uint8), "nearest",
         "asymmetric", "floor", scales=[1, 1, 2, 2])
    case("linear_scales_up2_half_pixel", x4, "linear", scales=[1, 1, 2, 2])
    case("linear_scales_down_half_pixel", rand(1, 2, 6, 8), "linear", scales=[1, 1, 0.6, 0.5])
    case("linear_scales_up_asymmetric", x4, "linear", "asymmetric", scales=[1, 1, 1.5, 2.5])
    case("linear_sizes_align_corners", x4, "linear", "align_corners", sizes=[1, 2, 7, 9])
    case("linear_sizes_down_pytorch_half_pixel", rand(1, 3, 8, 7), "linear", "pytorch_half_pixel", sizes=[1, 3, 3, 1])
    case("linear_sizes_up_half_pixel_3d", rand(1, 2, 3, 4, 5), "linear", sizes=[1, 2, 5, 6, 8])
    case("linear_scales_2d_input", rand(4, 5), "linear", scales=[2, 1.5])


def generate(out_dir):
    conv_cases(out_dir)
    conv_transpose_cases(out_dir)
    gemm_cases(out_dir)
    matmul_cases(out_dir)
    softmax_cases(out_dir)
    pool_cases(out_dir)
    norm_cases(out_dir)
    reduce_cases(out_dir)
    resize_cases(out_dir)
