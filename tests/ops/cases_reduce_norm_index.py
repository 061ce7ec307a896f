"""Per-op cases for the reductions, normalizations and indexing ops:
ReduceL1/L2/Prod/LogSum/LogSumExp/SumSquare, LayerNormalization's Mean/InvStdDev outputs,
InstanceNormalization, LRN, MeanVarianceNormalization, Einsum, TopK, GatherND, ScatterND,
ReverseSequence, MaxUnpool, MaxPool's Indices output, BatchNormalization in training mode and
Dropout's mask.

Expected outputs come from numpy (float64 where it matters, then cast), never from Trellis.
Shapes are odd; ties, negative indices and repeated labels are placed on purpose. Uses its own
random generator so the other case modules keep their inputs.
"""
import itertools

import numpy as np

from opcase import save_case

F32 = np.float32
F64 = np.float64
I32 = np.int32
I64 = np.int64
RNG = np.random.RandomState(4005)


def rand(*shape, low=-1.0, high=1.0):
    return RNG.uniform(low, high, size=shape).astype(F32)


def f32(a):
    return np.asarray(a).astype(F32)


# ---------------------------------------------------------------------------------------------
# Reductions
# ---------------------------------------------------------------------------------------------

REDUCERS = {
    "ReduceL1": lambda x, ax, kd: np.sum(np.abs(x), axis=ax, keepdims=kd),
    "ReduceL2": lambda x, ax, kd: np.sqrt(np.sum(x * x, axis=ax, keepdims=kd)),
    "ReduceProd": lambda x, ax, kd: np.prod(x, axis=ax, keepdims=kd),
    "ReduceLogSum": lambda x, ax, kd: np.log(np.sum(x, axis=ax, keepdims=kd)),
    "ReduceLogSumExp": lambda x, ax, kd: np.log(np.sum(np.exp(x), axis=ax, keepdims=kd)),
    "ReduceSumSquare": lambda x, ax, kd: np.sum(x * x, axis=ax, keepdims=kd),
}


def reduce_cases(out):
    x = rand(3, 5, 7, low=0.5, high=1.5).astype(F64)  # positive: LogSum is defined everywhere
    for op, fn in REDUCERS.items():
        name = op[len("Reduce"):].lower()
        for axes, keepdims in (((1,), 1), ((0, 2), 0), ((-1,), 1), (None, 0)):
            y = f32(fn(x, tuple(a % 3 for a in axes) if axes else None, bool(keepdims)))
            attrs = {"keepdims": keepdims}
            if axes:
                attrs["axes"] = list(axes)
            tag = "all" if axes is None else "_".join(str(a) for a in axes).replace("-", "m")
            save_case(out, "reduce_%s_axes%s_keep%d" % (name, tag, keepdims), op, [("X", f32(x))], [("Y", y)],
                      attrs, opset=13)
    # Integer forms (L1, Prod, SumSquare keep their integer type).
    xi = RNG.randint(-3, 4, size=(4, 3)).astype(I64)
    for op in ("ReduceL1", "ReduceProd", "ReduceSumSquare"):
        y = REDUCERS[op](xi, (1,), True).astype(I64)
        save_case(out, "reduce_%s_int64" % op[len("Reduce"):].lower(), op, [("X", xi)], [("Y", y)],
                  {"axes": [1]}, opset=13)
    # Over an empty dim: the identity of each fold (0, 1, log 0 = -inf).
    xe = np.zeros((2, 0, 3), dtype=F32)
    for op in ("ReduceL1", "ReduceProd", "ReduceLogSumExp"):
        with np.errstate(divide="ignore"):
            y = f32(REDUCERS[op](xe.astype(F64), (1,), True))
        save_case(out, "reduce_%s_empty_dim" % op[len("Reduce"):].lower(), op, [("X", xe)], [("Y", y)],
                  {"axes": [1]}, opset=13)


# ---------------------------------------------------------------------------------------------
# Normalizations
# ---------------------------------------------------------------------------------------------

def layer_norm_stat_cases(out):
    x = rand(2, 3, 5).astype(F64)
    for axis in (1, -1):
        ax = tuple(range(axis % 3, 3))
        mean = x.mean(axis=ax, keepdims=True)
        inv = 1.0 / np.sqrt(x.var(axis=ax, keepdims=True) + 1e-5)
        w = rand(*x.shape[axis % 3:])
        b = rand(*x.shape[axis % 3:])
        y = (x - mean) * inv * w + b
        save_case(out, "layernorm_stats_axis%d" % (axis % 3), "LayerNormalization", [("X", f32(x)), ("W", w), ("B", b)],
                  [("Y", f32(y)), ("Mean", f32(mean)), ("InvStdDev", f32(inv))], {"axis": axis}, opset=17)
    # Only Mean used (InvStdDev left unnamed).
    mean = x.mean(axis=2, keepdims=True)
    w = rand(5)
    y = (x - mean) / np.sqrt(x.var(axis=2, keepdims=True) + 1e-5) * w
    save_case(out, "layernorm_mean_only", "LayerNormalization", [("X", f32(x)), ("W", w)],
              [("Y", f32(y)), ("Mean", f32(mean))], opset=17)


def instance_norm_cases(out):
    for shape, eps in (((2, 3, 5, 7), 1e-5), ((1, 4, 9), 1e-2)):
        x = rand(*shape).astype(F64)
        s, b = rand(shape[1]), rand(shape[1])
        ax = tuple(range(2, len(shape)))
        bshape = (1, shape[1]) + (1,) * (len(shape) - 2)
        y = (x - x.mean(axis=ax, keepdims=True)) / np.sqrt(x.var(axis=ax, keepdims=True) + eps) * \
            s.reshape(bshape) + b.reshape(bshape)
        save_case(out, "instancenorm_rank%d" % len(shape), "InstanceNormalization", [("X", f32(x)), ("S", s), ("B", b)],
                  [("Y", f32(y))], {"epsilon": eps}, opset=6)


def lrn_ref(x, size, alpha, beta, bias):
    c = x.shape[1]
    sq = np.zeros_like(x)
    for ch in range(c):
        lo, hi = max(0, ch - (size - 1) // 2), min(c - 1, ch + int(np.ceil((size - 1) / 2)))
        sq[:, ch] = np.sum(x[:, lo:hi + 1] ** 2, axis=1)
    return x / (bias + alpha / size * sq) ** beta


def lrn_cases(out):
    x = rand(2, 7, 3, 4).astype(F64)
    for size, alpha, beta, bias in ((3, 1e-4, 0.75, 1.0), (4, 0.5, 0.6, 2.0), (1, 0.3, 1.0, 0.5)):
        save_case(out, "lrn_size%d" % size, "LRN", [("X", f32(x))], [("Y", f32(lrn_ref(x, size, alpha, beta, bias)))],
                  {"size": size, "alpha": alpha, "beta": beta, "bias": bias}, opset=13)


def mvn_cases(out):
    x = rand(3, 4, 5, 2).astype(F64)
    for axes in (None, [1], [0, 3]):
        ax = tuple(axes) if axes else (0, 2, 3)
        y = (x - x.mean(axis=ax, keepdims=True)) / (np.sqrt(x.var(axis=ax, keepdims=True)) + 1e-9)
        save_case(out, "mvn_axes%s" % ("_default" if axes is None else "".join(map(str, axes))),
                  "MeanVarianceNormalization", [("X", f32(x))], [("Y", f32(y))],
                  {} if axes is None else {"axes": axes}, opset=13)


def batchnorm_training_cases(out):
    x = rand(3, 4, 5, 2).astype(F64)
    s, b, m, v = rand(4), rand(4), rand(4), rand(4, low=0.5, high=1.5)
    for momentum in (0.9, 0.3):
        mean = x.mean(axis=(0, 2, 3))
        var = x.var(axis=(0, 2, 3))
        y = (x - mean.reshape(1, 4, 1, 1)) / np.sqrt(var.reshape(1, 4, 1, 1) + 1e-5) * s.reshape(1, 4, 1, 1) + \
            b.reshape(1, 4, 1, 1)
        save_case(out, "batchnorm_training_m%d" % int(momentum * 10), "BatchNormalization",
                  [("X", f32(x)), ("S", s), ("B", b), ("M", m), ("V", v)],
                  [("Y", f32(y)), ("RM", f32(m * momentum + mean * (1 - momentum))),
                   ("RV", f32(v * momentum + var * (1 - momentum)))],
                  {"training_mode": 1, "momentum": momentum}, opset=15)
    # training_mode=1 with only Y used: batch statistics still apply.
    mean, var = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))
    y = (x - mean.reshape(1, 4, 1, 1)) / np.sqrt(var.reshape(1, 4, 1, 1) + 1e-5) * s.reshape(1, 4, 1, 1) + \
        b.reshape(1, 4, 1, 1)
    save_case(out, "batchnorm_training_y_only", "BatchNormalization", [("X", f32(x)), ("S", s), ("B", b), ("M", m), ("V", v)],
              [("Y", f32(y))], {"training_mode": 1}, opset=15)


def dropout_mask_cases(out):
    x = rand(3, 4, 5)
    save_case(out, "dropout_mask_inference", "Dropout", [("X", x)],
              [("Y", x), ("mask", np.ones(x.shape, dtype=bool))], opset=13)


# ---------------------------------------------------------------------------------------------
# Einsum
# ---------------------------------------------------------------------------------------------

def einsum_cases(out):
    cases = [
        ("matmul", "ij,jk->ik", [(3, 4), (4, 5)]),
        ("implicit_matmul", "ij,jk", [(3, 4), (4, 5)]),
        ("batch_matmul_spaces", "bij, bjk -> bik", [(2, 3, 4), (2, 4, 5)]),
        ("trace", "ii", [(4, 4)]),
        ("diagonal", "ii->i", [(5, 5)]),
        ("batch_diagonal_ellipsis", "...ii->...i", [(2, 3, 4, 4)]),
        ("ellipsis_broadcast", "...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
        ("implicit_ellipsis", "...ij,jk", [(2, 3, 4), (4, 3)]),
        ("outer", "i,j->ij", [(3,), (4,)]),
        ("three_inputs", "ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
        ("sum_all", "ijk->", [(2, 3, 4)]),
        ("transpose_implicit", "ba", [(3, 4)]),
        ("repeated_in_two", "iij,jk->ik", [(3, 3, 4), (4, 2)]),
        ("uppercase", "Ab,bC->AC", [(2, 3), (3, 4)]),
    ]
    for name, eq, shapes in cases:
        arrays = [RNG.uniform(-1, 1, size=s) for s in shapes]
        y = np.einsum(eq.replace(" ", ""), *arrays)
        ins = [("X%d" % i, f32(a)) for i, a in enumerate(arrays)]
        save_case(out, "einsum_%s" % name, "Einsum", ins, [("Y", f32(y))], {"equation": eq}, opset=12)
    a, b = RNG.uniform(-1, 1, size=(3, 4)), RNG.uniform(-1, 1, size=(4,))
    save_case(out, "einsum_float64", "Einsum", [("A", a), ("B", b)], [("Y", np.einsum("ij,j->i", a, b))],
              {"equation": "ij,j->i"}, opset=12)


# ---------------------------------------------------------------------------------------------
# TopK
# ---------------------------------------------------------------------------------------------

def topk_ref(x, k, axis, largest):
    # Stable sort on the key: ties keep the lower index first, as ONNX asks.
    key = -x if largest else x
    idx = np.argsort(key, axis=axis, kind="stable")
    idx = np.take(idx, np.arange(k), axis=axis)
    return np.take_along_axis(x, idx, axis=axis), idx.astype(I64)


def topk_cases(out):
    x = f32(np.rint(rand(3, 6, 5, low=-3, high=3)))  # few distinct values: many ties
    for axis, k, largest in ((1, 3, 1), (-1, 2, 0), (0, 3, 1), (1, 0, 1), (2, 5, 0)):
        v, i = topk_ref(x, k, axis, largest)
        save_case(out, "topk_axis%d_k%d_%s" % (axis % 3, k, "largest" if largest else "smallest"), "TopK", [("X", x)],
                  [("Values", v), ("Indices", i)], {"axis": axis, "largest": largest},
                  initializers=[("K", np.array([k], dtype=I64))], input_order=["X", "K"], opset=11)
    xi = RNG.randint(-5, 5, size=(4, 7)).astype(I32)
    v, i = topk_ref(xi, 4, 1, 1)
    save_case(out, "topk_int32", "TopK", [("X", xi)], [("Values", v), ("Indices", i)], {"axis": 1},
              initializers=[("K", np.array([4], dtype=I64))], input_order=["X", "K"], opset=11)
    v, i = topk_ref(x, 2, 1, 1)
    save_case(out, "topk_opset1_attribute", "TopK", [("X", x)], [("Values", v), ("Indices", i)], {"axis": 1, "k": 2},
              opset=1)


# ---------------------------------------------------------------------------------------------
# GatherND, ScatterND
# ---------------------------------------------------------------------------------------------

def gather_nd_ref(data, indices, b):
    batch_shape = data.shape[:b]
    k = indices.shape[-1]
    out = np.empty(indices.shape[:-1] + data.shape[b + k:], dtype=data.dtype)
    for pos in np.ndindex(*indices.shape[:-1]):
        tup = tuple(int(v) for v in indices[pos])
        out[pos] = data[pos[:b] + tup]
    assert batch_shape == indices.shape[:b]
    return out


def scatter_nd_ref(data, indices, updates, reduction):
    out = data.copy()
    for pos in np.ndindex(*indices.shape[:-1]):
        tup = tuple(int(v) for v in indices[pos])
        if reduction == "none":
            out[tup] = updates[pos]
        elif reduction == "add":
            out[tup] += updates[pos]
        else:
            out[tup] *= updates[pos]
    return out


def gather_scatter_nd_cases(out):
    data = rand(4, 5, 6)
    idx = np.array([[[1, -2], [3, 0]], [[0, 4], [-1, -1]]], dtype=I64)  # [2, 2, 2]: slices of [6]
    save_case(out, "gathernd_k2", "GatherND", [("D", data), ("I", idx)], [("Y", gather_nd_ref(data, idx, 0))], opset=13)
    idx3 = np.array([[0, 1, 2], [3, 4, 5], [-1, 0, -6]], dtype=I64)
    save_case(out, "gathernd_k3_scalars", "GatherND", [("D", data), ("I", idx3)], [("Y", gather_nd_ref(data, idx3, 0))],
              opset=13)
    idxb = np.array([[[2], [0]], [[4], [1]], [[3], [3]], [[0], [-1]]], dtype=I64)  # batch 4, tuples of 1
    save_case(out, "gathernd_batch1", "GatherND", [("D", data), ("I", idxb)], [("Y", gather_nd_ref(data, idxb, 1))],
              {"batch_dims": 1}, opset=13)
    datai = RNG.randint(-9, 9, size=(3, 4)).astype(I32)
    idxi = np.array([[2], [0], [2]], dtype=I64)
    save_case(out, "gathernd_int32", "GatherND", [("D", datai), ("I", idxi)], [("Y", gather_nd_ref(datai, idxi, 0))],
              opset=13)

    sidx = np.array([[1, 2], [3, 0], [1, 2]], dtype=I64)  # a repeated tuple: add/mul combine both
    upd = rand(3, 6)
    for reduction in ("none", "add", "mul"):
        u = upd if reduction != "none" else upd[[2, 1, 2]]  # "none": the repeated tuple gets equal rows
        save_case(out, "scatternd_%s" % reduction, "ScatterND", [("D", data), ("I", sidx), ("U", f32(u))],
                  [("Y", scatter_nd_ref(data, sidx, u, reduction))],
                  {} if reduction == "none" else {"reduction": reduction}, opset=16)
    sidx1 = np.array([[-1], [0]], dtype=I64)
    upd1 = rand(2, 5, 6)
    save_case(out, "scatternd_slices_opset11", "ScatterND", [("D", data), ("I", sidx1), ("U", upd1)],
              [("Y", scatter_nd_ref(data, sidx1, upd1, "none"))], opset=11)


# ---------------------------------------------------------------------------------------------
# ReverseSequence, MaxUnpool, MaxPool with Indices
# ---------------------------------------------------------------------------------------------

def reverse_sequence_cases(out):
    x = rand(5, 3, 2)
    for batch_axis, time_axis in ((1, 0), (0, 1)):
        batch = x.shape[batch_axis]
        lens = RNG.randint(0, x.shape[time_axis] + 1, size=batch).astype(I64)
        y = x.copy()
        for b in range(batch):
            n = lens[b]
            if batch_axis == 1:
                y[:n, b] = x[:n, b][::-1]
            else:
                y[b, :n] = x[b, :n][::-1]
        save_case(out, "reversesequence_batch%d" % batch_axis, "ReverseSequence", [("X", x), ("L", lens)], [("Y", y)],
                  {"batch_axis": batch_axis, "time_axis": time_axis}, opset=10)


def maxpool_indices_ref(x, k, s, pads, storage_order):
    n, c, h, w = x.shape
    oh = (h + pads[0] + pads[2] - k[0]) // s[0] + 1
    ow = (w + pads[1] + pads[3] - k[1]) // s[1] + 1
    y = np.zeros((n, c, oh, ow), dtype=x.dtype)
    idx = np.zeros((n, c, oh, ow), dtype=I64)
    for b, ch, i, j in itertools.product(range(n), range(c), range(oh), range(ow)):
        best, at = -np.inf, None
        for di, dj in itertools.product(range(k[0]), range(k[1])):
            r, q = i * s[0] - pads[0] + di, j * s[1] - pads[1] + dj
            if 0 <= r < h and 0 <= q < w and x[b, ch, r, q] > best:
                best, at = x[b, ch, r, q], (r, q)
        y[b, ch, i, j] = best
        plane = at[0] * w + at[1] if storage_order == 0 else at[0] + at[1] * h
        idx[b, ch, i, j] = (b * c + ch) * h * w + plane
    return y, idx


def maxpool_unpool_cases(out):
    x = rand(2, 3, 5, 6)
    for k, s, pads, order in (((2, 2), (2, 2), (0, 0, 0, 0), 0), ((3, 2), (1, 2), (1, 0, 1, 1), 1)):
        y, idx = maxpool_indices_ref(x, k, s, pads, order)
        save_case(out, "maxpool_indices_k%d%d_order%d" % (k[0], k[1], order), "MaxPool", [("X", x)],
                  [("Y", y), ("I", idx)], {"kernel_shape": list(k), "strides": list(s), "pads": list(pads),
                                           "storage_order": order}, opset=12)
    xu = RNG.randint(0, 256, size=(1, 2, 5, 4)).astype(np.uint8)
    yu, idxu = maxpool_indices_ref(xu.astype(F64), (2, 3), (1, 1), (0, 1, 1, 1), 0)
    save_case(out, "maxpool_uint8_indices", "MaxPool", [("X", xu)], [("Y", yu.astype(np.uint8)), ("I", idxu)],
              {"kernel_shape": [2, 3], "pads": [0, 1, 1, 1]}, opset=12)
    # MaxUnpool of a 2x2/2 pooling of a [2, 3, 4, 6] input: the indices are offsets in that
    # (unpooled) shape, which is also the default output shape.
    x2 = x[:, :, :4, :]
    y2, idx2 = maxpool_indices_ref(x2, (2, 2), (2, 2), (0, 0, 0, 0), 0)
    save_case(out, "maxunpool_default_shape", "MaxUnpool", [("X", y2), ("I", idx2)],
              [("Y", maxunpool_ref(y2, idx2, x2.shape))], {"kernel_shape": [2, 2], "strides": [2, 2]}, opset=11)
    # With output_shape [2, 3, 5, 7] (larger than the unpooled [2, 3, 4, 6]): the same indices,
    # the unpooled tensor in the leading corner, zeros in the extra row and column.
    save_case(out, "maxunpool_output_shape", "MaxUnpool", [("X", y2), ("I", idx2)],
              [("Y", maxunpool_ref(y2, idx2, x2.shape, (2, 3, 5, 7)))], {"kernel_shape": [2, 2], "strides": [2, 2]},
              initializers=[("S", np.array((2, 3, 5, 7), dtype=I64))], input_order=["X", "I", "S"], opset=11)
    # Pads and strides 1: unpooled spatial dims (3 - 1) * 1 + 3 - 1 - 0 = 4 and (2 - 1) * 1 + 2 - 0 - 1 = 2.
    xp = rand(1, 2, 3, 2)
    idxp = RNG.choice(1 * 2 * 4 * 2, size=xp.size, replace=False).astype(I64).reshape(xp.shape)
    save_case(out, "maxunpool_pads_output_shape", "MaxUnpool", [("X", xp), ("I", idxp)],
              [("Y", maxunpool_ref(xp, idxp, (1, 2, 4, 2), (1, 2, 6, 3)))],
              {"kernel_shape": [3, 2], "pads": [1, 0, 0, 1]},
              initializers=[("S", np.array((1, 2, 6, 3), dtype=I64))], input_order=["X", "I", "S"], opset=11)


def maxunpool_ref(x, idx, unpooled_shape, output_shape=None):
    """ONNX's MaxUnpool (as its reference implementation, onnx/reference/ops/op_max_unpool.py):
    each index is a flat offset into the unpooled shape; a larger output_shape holds the unpooled
    tensor in its leading corner and zeros elsewhere."""
    unpooled = np.zeros(int(np.prod(unpooled_shape)), dtype=x.dtype)
    unpooled[idx.reshape(-1)] = x.reshape(-1)
    unpooled = unpooled.reshape(unpooled_shape)
    if output_shape is None:
        return unpooled
    y = np.zeros(output_shape, dtype=x.dtype)
    y[tuple(slice(0, n) for n in unpooled_shape)] = unpooled
    return y


def generate(out):
    reduce_cases(out)
    layer_norm_stat_cases(out)
    instance_norm_cases(out)
    lrn_cases(out)
    mvn_cases(out)
    batchnorm_training_cases(out)
    dropout_mask_cases(out)
    einsum_cases(out)
    topk_cases(out)
    gather_scatter_nd_cases(out)
    reverse_sequence_cases(out)
    maxpool_unpool_cases(out)
