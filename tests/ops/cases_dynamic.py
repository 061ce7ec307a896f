"""Cases of ops whose output shapes depend on input values (NonZero, Compress, Unique,
NonMaxSuppression) and of parameter inputs fed as graph inputs (the network is then optimized
for each run's values). Expected values from numpy."""
import numpy as np
from onnx import helper, TensorProto

from opcase import save_case, save_graph_case, RNG

I64 = np.int64


def rand(*shape, low=-1.0, high=1.0):
    return RNG.uniform(low, high, size=shape).astype(np.float32)


def nonzero_cases(out):
    x = rand(3, 4)
    x[x < 0.2] = 0.0
    save_case(out, "nonzero_float_2d", "NonZero", [("x", x)], [("y", np.array(np.nonzero(x), dtype=I64))], opset=13)
    xb = RNG.uniform(size=(2, 3, 4)) < 0.4
    save_case(out, "nonzero_bool_3d", "NonZero", [("x", xb)], [("y", np.array(np.nonzero(xb), dtype=I64))], opset=9)
    xi = RNG.randint(-2, 3, size=(7,)).astype(I64)
    save_case(out, "nonzero_int64_1d", "NonZero", [("x", xi)], [("y", np.array(np.nonzero(xi), dtype=I64))])
    z = np.zeros((2, 3), dtype=np.float32)
    save_case(out, "nonzero_all_zero", "NonZero", [("x", z)], [("y", np.zeros((2, 0), dtype=I64))])


def compress_cases(out):
    x = rand(3, 4, 2)
    for axis in (0, 1, -1, None):
        n = x.size if axis is None else x.shape[axis]
        cond = RNG.uniform(size=(n,)) < 0.5
        cond[0] = True
        want = np.compress(cond, x, axis=axis)
        attrs = {} if axis is None else {"axis": axis}
        name = "compress_flat" if axis is None else "compress_axis%d" % (axis % 3)
        save_case(out, name, "Compress", [("x", x), ("cond", cond)], [("y", want)], attrs)
    # A condition shorter than the axis, as a constant: data stays a run-time input.
    cond = np.array([False, True], dtype=bool)
    xi = RNG.randint(0, 9, size=(4, 3)).astype(I64)
    save_case(out, "compress_short_const_cond", "Compress", [("x", xi)], [("y", np.compress(cond, xi, axis=0))],
              {"axis": 0}, initializers=[("cond", cond)], input_order=["x", "cond"])


def unique_ref(x, axis, sorted_):
    y, idx, inv, cnt = np.unique(x, return_index=True, return_inverse=True, return_counts=True, axis=axis)
    if not sorted_:
        order = np.argsort(idx, kind="stable")
        pos = np.empty_like(order)
        pos[order] = np.arange(len(order))
        y = np.take(y, order, axis=0 if axis is None else axis)
        idx, cnt, inv = idx[order], cnt[order], pos[inv]
    return y, idx.astype(I64), inv.reshape(-1).astype(I64), cnt.astype(I64)


def unique_cases(out):
    x = np.array([2.0, 1.0, 1.0, 3.0, 4.0, 3.0, -1.0], dtype=np.float32)
    for sorted_ in (1, 0):
        y, idx, inv, cnt = unique_ref(x, None, sorted_)
        save_case(out, "unique_flat_sorted%d" % sorted_, "Unique", [("X", x)],
                  [("Y", y), ("indices", idx), ("inverse_indices", inv), ("counts", cnt)], {"sorted": sorted_},
                  opset=11)
    m = RNG.randint(0, 3, size=(4, 3)).astype(I64)
    m[2] = m[0]
    for axis in (0, 1, -2):
        y, idx, inv, cnt = unique_ref(m, axis % 2, 1)
        save_case(out, "unique_int64_axis%d" % axis, "Unique", [("X", m)],
                  [("Y", y), ("indices", idx), ("inverse_indices", inv), ("counts", cnt)], {"axis": axis},
                  opset=11)
    t = np.array([[[1, 1], [0, 1]], [[1, 0], [0, 1]], [[1, 1], [0, 1]]], dtype=np.float32)
    y, idx, inv, cnt = unique_ref(t, 0, 0)
    save_case(out, "unique_3d_axis0_unsorted", "Unique", [("X", t)],
              [("Y", y), ("indices", idx), ("inverse_indices", inv), ("counts", cnt)], {"axis": 0, "sorted": 0},
              opset=11)


def nms_ref(boxes, scores, max_out, iou, score_thr, center):
    """ONNX NonMaxSuppression, written out with numpy."""
    def corners(b):
        if center:
            xc, yc, w, h = b
            return np.array([yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2])
        return np.array([min(b[0], b[2]), min(b[1], b[3]), max(b[0], b[2]), max(b[1], b[3])])

    def iou_of(a, b):
        h = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
        w = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
        inter = h * w
        union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
        return inter / union if union > 0 else 0.0

    rows = []
    for bi in range(boxes.shape[0]):
        for ci in range(scores.shape[1]):
            s = scores[bi, ci]
            cand = [i for i in range(len(s)) if score_thr is None or s[i] > score_thr]
            cand.sort(key=lambda i: -s[i])
            kept = []
            for i in cand:
                if len(kept) >= max_out:
                    break
                c = corners(boxes[bi, i])
                if all(iou_of(c, k) <= iou for k in kept):
                    kept.append(c)
                    rows.append([bi, ci, i])
    return np.array(rows, dtype=I64).reshape(-1, 3)


def nms_cases(out):
    boxes = np.array([[[0.0, 0.0, 1.0, 1.0], [0.0, 0.1, 1.0, 1.1], [0.0, -0.1, 1.0, 0.9],
                       [0.0, 10.0, 1.0, 11.0], [0.0, 10.1, 1.0, 11.1], [0.0, 100.0, 1.0, 101.0]]], dtype=np.float32)
    scores = np.array([[[0.9, 0.75, 0.6, 0.95, 0.5, 0.3]]], dtype=np.float32)
    for name, max_out, iou, thr in (("nms_basic", 3, 0.5, None), ("nms_score_threshold", 3, 0.5, 0.4),
                                    ("nms_limit", 2, 0.5, 0.0)):
        inputs = [("boxes", boxes), ("scores", scores), ("max_output_boxes_per_class", np.array([max_out], dtype=I64)),
                  ("iou_threshold", np.array([iou], dtype=np.float32))]
        if thr is not None:
            inputs.append(("score_threshold", np.array([thr], dtype=np.float32)))
        save_case(out, name, "NonMaxSuppression", inputs,
                  [("selected_indices", nms_ref(boxes, scores, max_out, iou, thr, False))], opset=11)
    flipped = boxes[:, :, [2, 3, 0, 1]].copy()
    save_case(out, "nms_flipped_two_classes", "NonMaxSuppression",
              [("boxes", flipped), ("scores", np.concatenate([scores, scores[:, :, ::-1]], axis=1))],
              [("selected_indices", nms_ref(flipped, np.concatenate([scores, scores[:, :, ::-1]], axis=1), 2, 0.5,
                                            None, False))],
              initializers=[("m", np.array([2], dtype=I64)), ("i", np.array([0.5], dtype=np.float32))],
              input_order=["boxes", "scores", "m", "i"], opset=10)
    centered = np.array([[[0.5, 0.5, 1.0, 1.0], [0.5, 0.6, 1.0, 1.0], [0.5, 10.5, 1.0, 1.0]],
                         [[0.0, 0.0, 2.0, 2.0], [3.0, 3.0, 1.0, 1.0], [0.2, 0.0, 2.0, 2.0]]], dtype=np.float32)
    cs = rand(2, 1, 3, low=0.0, high=1.0)
    save_case(out, "nms_center_point_two_batches", "NonMaxSuppression",
              [("boxes", centered), ("scores", cs), ("max_output_boxes_per_class", np.array([5], dtype=I64)),
               ("iou_threshold", np.array([0.3], dtype=np.float32))],
              [("selected_indices", nms_ref(centered, cs, 5, 0.3, None, True))], {"center_point_box": 1}, opset=11)


def parameter_input_cases(out):
    """Parameters fed as graph inputs: the network is specialized on their values at run time."""
    x = rand(2, 3, 4)
    save_case(out, "param_reshape_shape_input", "Reshape", [("x", x), ("shape", np.array([4, -1], dtype=I64))],
              [("y", x.reshape(4, -1))], opset=14)
    save_case(out, "param_slice_starts_input", "Slice",
              [("x", x), ("starts", np.array([1, 0], dtype=I64)), ("ends", np.array([3, 2], dtype=I64)),
               ("axes", np.array([1, 2], dtype=I64))], [("y", x[:, 1:3, 0:2])], opset=13)
    e = rand(3, 1)
    save_case(out, "param_expand_shape_input", "Expand", [("x", e), ("shape", np.array([2, 3, 4], dtype=I64))],
              [("y", e * np.ones((2, 3, 4), dtype=np.float32))], opset=13)
    lo, hi = np.array(-0.3, dtype=np.float32), np.array(0.4, dtype=np.float32)
    save_case(out, "param_clip_bounds_input", "Clip", [("x", x), ("min", lo), ("max", hi)],
              [("y", np.clip(x, lo, hi))], opset=13)
    save_case(out, "param_clip_max_only_input", "Clip", [("x", x), ("max", hi)], [("y", np.minimum(x, hi))],
              input_order=["x", "", "max"], opset=13)
    # Shape computed from a graph input's values through other nodes (Mul), not fed directly.
    n = helper.make_node
    graph = helper.make_graph(
        [n("Mul", ["half", "two"], ["shape"]), n("Reshape", ["x", "shape"], ["y"])], "param_shape_computed",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4]),
         helper.make_tensor_value_info("half", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [12, 2])],
        initializer=[helper.make_tensor("two", TensorProto.INT64, [1], [2])])
    save_graph_case(out, "param_shape_computed", graph, [x, np.array([6, 1], dtype=I64)], [x.reshape(12, 2)],
                    opset=14)
    # NonZero on a tensor computed from a graph input (Greater), then used by a Gather.
    v = rand(6)
    graph = helper.make_graph(
        [n("Greater", ["v", "zero"], ["mask"]), n("NonZero", ["mask"], ["nz"]),
         n("Squeeze", ["nz", "axis0"], ["idx"]), n("Gather", ["v", "idx"], ["pos"])], "nonzero_computed",
        [helper.make_tensor_value_info("v", TensorProto.FLOAT, [6])],
        [helper.make_tensor_value_info("pos", TensorProto.FLOAT, ["n"])],
        initializer=[helper.make_tensor("zero", TensorProto.FLOAT, [], [0.0]),
                     helper.make_tensor("axis0", TensorProto.INT64, [1], [0])])
    save_graph_case(out, "nonzero_of_computed_mask", graph, [v], [v[v > 0]], opset=13)


def generate(out_dir):
    nonzero_cases(out_dir)
    compress_cases(out_dir)
    unique_cases(out_dir)
    nms_cases(out_dir)
    parameter_input_cases(out_dir)
