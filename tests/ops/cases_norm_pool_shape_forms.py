"""Per-op cases for the ops Trellis imports as several layers and for op forms of opsets 18-28:
LpNormalization (p 1 and 2, several axes, rows whose norm is 0), GroupNormalization (opset 18:
scale and bias per group; opset 21: per channel), LpPool (p 1, 2, 3; strides, pads, dilations),
GlobalLpPool, CenterCropPad (crop, pad, both, axes), Split-18's
num_outputs over a dim that does not divide evenly (the last part smaller), ReduceMax /
ReduceMin over an empty set (opset 18: -inf / +inf, keepdims and not) and SpaceToDepth-28's CRD
mode (the inverse of DepthToSpace's).

Expected outputs come from numpy, never from Trellis. Debian's onnx 1.12 knows opset 17 at most,
so the opset-18 one-node models are written without its checker.
"""
import numpy as np
import onnx

from opcase import save_case

F32 = np.float32
RNG = np.random.RandomState(1818)


def save_unchecked(*args, **kwargs):
    check = onnx.checker.check_model
    onnx.checker.check_model = lambda model: None
    try:
        save_case(*args, **kwargs)
    finally:
        onnx.checker.check_model = check


def lpnorm_cases(out):
    x = RNG.uniform(-2, 2, size=(3, 5, 7)).astype(F32)
    x[1, :, 2] = 0.0  # a zero row along axis 1
    for p in (1, 2):
        for axis in (1, -1):
            x64 = x.astype(np.float64)
            norm = np.sum(np.abs(x64), axis=axis, keepdims=True) if p == 1 else \
                np.sqrt(np.sum(x64 * x64, axis=axis, keepdims=True))
            with np.errstate(invalid="ignore", divide="ignore"):
                y = np.where(norm == 0, 0.0, x64 / norm).astype(F32)
            save_case(out, "lpnorm_p%d_axis%d" % (p, axis % 3), "LpNormalization", [("x", x)], [("y", y)],
                      {"p": p, "axis": axis}, opset=17)


def groupnorm_cases(out):
    x = RNG.uniform(-2, 2, size=(2, 6, 5, 3)).astype(F32)
    groups, eps = 3, 1e-3
    g = x.astype(np.float64).reshape(2, groups, -1)
    normalized = (g - g.mean(axis=2, keepdims=True)) / np.sqrt(g.var(axis=2, keepdims=True) + eps)
    for opset, count in ((18, groups), (21, 6)):
        scale, bias = RNG.uniform(0.5, 1.5, size=count).astype(F32), RNG.uniform(-1, 1, size=count).astype(F32)
        if opset == 18:
            y = (normalized * scale[None, :, None] + bias[None, :, None]).reshape(x.shape)
        else:
            y = normalized.reshape(2, 6, -1) * scale[None, :, None] + bias[None, :, None]
        save_unchecked(out, "groupnorm%d" % opset, "GroupNormalization",
                       [("x", x), ("scale", scale), ("bias", bias)], [("y", y.reshape(x.shape).astype(F32))],
                       {"num_groups": groups, "epsilon": eps}, opset=opset)


def lppool_ref(x, kernel, p, strides, pads, dilations):
    """(sum over each window of |x|^p)^(1/p) over the 2-D spatial dims, zero padding."""
    n, c, h, w = x.shape
    xp = np.pad(np.abs(x.astype(np.float64)) ** p, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    eh, ew = (kernel[0] - 1) * dilations[0] + 1, (kernel[1] - 1) * dilations[1] + 1
    oh, ow = (xp.shape[2] - eh) // strides[0] + 1, (xp.shape[3] - ew) // strides[1] + 1
    y = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            win = xp[:, :, i * strides[0]:i * strides[0] + eh:dilations[0], j * strides[1]:j * strides[1] + ew:dilations[1]]
            y[:, :, i, j] = win.sum(axis=(2, 3))
    return (y ** (1.0 / p)).astype(F32)


def lppool_cases(out):
    x = RNG.uniform(-2, 2, size=(1, 3, 7, 9)).astype(F32)
    for name, p, kernel, strides, pads, dil in (("p2", 2, (3, 3), (1, 1), (0, 0, 0, 0), (1, 1)),
                                                  ("p1_strided_padded", 1, (2, 3), (2, 2), (1, 0, 1, 2), (1, 1)),
                                                  ("p3_dilated", 3, (2, 2), (1, 2), (0, 0, 0, 0), (2, 2))):
        save_unchecked(out, "lppool_%s" % name, "LpPool", [("x", x)],
                       [("y", lppool_ref(x, kernel, p, strides, pads, dil))],
                       {"p": p, "kernel_shape": list(kernel), "strides": list(strides), "pads": list(pads),
                        "dilations": list(dil)}, opset=18)
    y = (np.sum(np.abs(x.astype(np.float64)) ** 2, axis=(2, 3), keepdims=True) ** 0.5).astype(F32)
    save_case(out, "globallppool_p2", "GlobalLpPool", [("x", x)], [("y", y)], {"p": 2}, opset=17)


def center_crop_pad_cases(out):
    x = RNG.uniform(-1, 1, size=(5, 8, 3)).astype(F32)
    for name, shape, axes in (("crop", [3, 5, 3], None), ("pad", [8, 11, 3], None), ("crop_and_pad", [2, 13], [0, 1]),
                              ("negative_axes", [6, 4], [-2, 0])):
        axes_list = list(range(3)) if axes is None else [a % 3 for a in axes]
        y = x
        for size, a in zip(shape, axes_list):
            dim = y.shape[a]
            if size < dim:
                start = (dim - size) // 2
                y = np.take(y, range(start, start + size), axis=a)
            elif size > dim:
                before = (size - dim) // 2
                widths = [(0, 0)] * 3
                widths[a] = (before, size - dim - before)
                y = np.pad(y, widths)
        attrs = {} if axes is None else {"axes": axes}
        save_unchecked(out, "centercroppad_%s" % name, "CenterCropPad", [("x", x)], [("y", y.astype(F32))], attrs,
                       initializers=[("shape", np.array(shape, dtype=np.int64))], opset=18)


def split_cases(out):
    x = RNG.uniform(-1, 1, size=(2, 11, 3)).astype(F32)
    for n in (3, 4):
        chunk = -(-11 // n)
        bounds = [min(11, chunk * k) for k in range(n + 1)]
        parts = [x[:, bounds[k]:bounds[k + 1], :] for k in range(n)]
        save_unchecked(out, "split18_uneven_%d" % n, "Split", [("x", x)],
                       [("y%d" % k, p) for k, p in enumerate(parts)], {"axis": 1, "num_outputs": n}, opset=18)


def reduce_empty_cases(out):
    x = np.zeros((2, 0, 3), dtype=F32)
    axes = np.array([1], dtype=np.int64)
    for op, value in (("ReduceMax", -np.inf), ("ReduceMin", np.inf)):
        for keep in (0, 1):
            y = np.full((2, 1, 3) if keep else (2, 3), value, dtype=F32)
            save_unchecked(out, "%s_empty_keep%d" % (op.lower(), keep), op, [("x", x)], [("y", y)],
                           {"keepdims": keep}, initializers=[("axes", axes)], opset=18)


def spacetodepth_cases(out):
    b = 2
    x = RNG.uniform(-1, 1, size=(2, 3, 4, 6)).astype(F32)
    n, c, h, w = x.shape
    for mode in ("DCR", "CRD"):
        t = x.reshape(n, c, h // b, b, w // b, b)
        # DCR: channel (bh * b + bw) * C + c; CRD: c * b * b + bh * b + bw.
        t = t.transpose(0, 3, 5, 1, 2, 4) if mode == "DCR" else t.transpose(0, 1, 3, 5, 2, 4)
        y = t.reshape(n, c * b * b, h // b, w // b)
        save_unchecked(out, "spacetodepth28_%s" % mode.lower(), "SpaceToDepth", [("x", x)], [("y", y)],
                       {"blocksize": b, "mode": mode}, opset=28)


def generate(out):
    lpnorm_cases(out)
    groupnorm_cases(out)
    lppool_cases(out)
    center_crop_pad_cases(out)
    split_cases(out)
    reduce_empty_cases(out)
    spacetodepth_cases(out)
