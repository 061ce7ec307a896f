"""Loop cases: trip counts and conditions given as constants, as graph inputs (pinned per run)
and computed in the body; loop-carried values and scan outputs computed at run time; values of
the enclosing graph read by the body (constants and computed tensors); Range inside the body; a
loop nested in a loop body; no iteration at all. Expected values come from running the loop in
Python with numpy."""
import numpy as np
from onnx import helper, TensorProto

from opcase import save_graph_case, RNG

F32 = np.float32
I64 = np.int64
n = helper.make_node
vi = helper.make_tensor_value_info


def scalar_i64(name, value):
    return helper.make_tensor(name, TensorProto.INT64, [], [value])


def body_graph(name, nodes, inputs, outputs, initializers=()):
    return helper.make_graph(nodes, name, inputs, outputs, initializer=list(initializers))


def range_in_body_case(out):
    # acc_{i+1} = acc_i + sum(Range(0, i + 1, 1)); scan: that sum. Range's limit comes from the
    # iteration number: a constant in each unrolled iteration.
    body = body_graph(
        "range_body",
        [n("Add", ["i", "one"], ["limit"]), n("Range", ["zero", "limit", "one"], ["r"]),
         n("ReduceSum", ["r"], ["s"], keepdims=0), n("Add", ["acc_in", "s"], ["acc_out"]),
         n("Identity", ["cond_in"], ["cond_out"]), n("Identity", ["s"], ["s_scan"])],
        [vi("i", TensorProto.INT64, []), vi("cond_in", TensorProto.BOOL, []), vi("acc_in", TensorProto.INT64, [])],
        [vi("cond_out", TensorProto.BOOL, []), vi("acc_out", TensorProto.INT64, []), vi("s_scan", TensorProto.INT64, [])],
        [scalar_i64("zero", 0), scalar_i64("one", 1)])
    graph = helper.make_graph(
        [n("Loop", ["M", "", "acc0"], ["acc", "sums"], body=body)], "loop_range_in_body",
        [vi("M", TensorProto.INT64, []), vi("acc0", TensorProto.INT64, [])],
        [vi("acc", TensorProto.INT64, []), vi("sums", TensorProto.INT64, [4])])
    m, acc = 4, 10
    sums = [sum(range(0, i + 1)) for i in range(m)]
    save_graph_case(out, "loop_range_in_body", graph, [np.array(m, dtype=I64), np.array(acc, dtype=I64)],
                    [np.array(acc + sum(sums), dtype=I64), np.array(sums, dtype=I64)], opset=13)


def run_time_values_case(out):
    # The trip count is a graph input (pinned per run); y and the outer value w (computed outside
    # the loop from the input x) stay run-time values: y_{i+1} = y_i * 0.5 + w * i, scanned.
    body = body_graph(
        "affine_body",
        [n("Cast", ["i"], ["i_f"], to=TensorProto.FLOAT), n("Mul", ["y_in", "half"], ["a"]),
         n("Mul", ["w", "i_f"], ["b"]), n("Add", ["a", "b"], ["y_out"]), n("Identity", ["cond_in"], ["cond_out"]),
         n("Identity", ["y_out"], ["y_scan"])],
        [vi("i", TensorProto.INT64, []), vi("cond_in", TensorProto.BOOL, []), vi("y_in", TensorProto.FLOAT, [3])],
        [vi("cond_out", TensorProto.BOOL, []), vi("y_out", TensorProto.FLOAT, [3]), vi("y_scan", TensorProto.FLOAT, [3])],
        [helper.make_tensor("half", TensorProto.FLOAT, [], [0.5])])
    graph = helper.make_graph(
        [n("Abs", ["x"], ["w"]), n("Loop", ["M", "", "y0"], ["y", "ys"], body=body)], "loop_run_time_values",
        [vi("M", TensorProto.INT64, []), vi("x", TensorProto.FLOAT, [3]), vi("y0", TensorProto.FLOAT, [3])],
        [vi("y", TensorProto.FLOAT, [3]), vi("ys", TensorProto.FLOAT, [5, 3])])
    m = 5
    x = RNG.uniform(-1, 1, size=3).astype(F32)
    y = RNG.uniform(-1, 1, size=3).astype(F32)
    w, ys = np.abs(x), []
    cur = y.copy()
    for i in range(m):
        cur = (cur * F32(0.5) + w * F32(i)).astype(F32)
        ys.append(cur)
    save_graph_case(out, "loop_run_time_values", graph, [np.array(m, dtype=I64), x, y], [cur, np.stack(ys)], opset=13)


def while_condition_case(out):
    # A while loop: no trip count; the body's condition (c < limit) decides when it stops. c and
    # limit are graph inputs, so they are pinned and every condition folds; z stays a run-time
    # value that the loop adds 1 to per iteration.
    body = body_graph(
        "while_body",
        [n("Add", ["c_in", "step"], ["c_out"]), n("Less", ["c_out", "limit"], ["cond_out"]),
         n("Add", ["z_in", "one_f"], ["z_out"])],
        [vi("i", TensorProto.INT64, []), vi("cond_in", TensorProto.BOOL, []), vi("c_in", TensorProto.INT64, []),
         vi("z_in", TensorProto.FLOAT, [2, 2])],
        [vi("cond_out", TensorProto.BOOL, []), vi("c_out", TensorProto.INT64, []), vi("z_out", TensorProto.FLOAT, [2, 2])],
        [scalar_i64("step", 3), helper.make_tensor("one_f", TensorProto.FLOAT, [], [1.0])])
    graph = helper.make_graph(
        [n("Less", ["c0", "limit"], ["go"]), n("Loop", ["", "go", "c0", "z0"], ["c", "z"], body=body)],
        "loop_while_condition",
        [vi("c0", TensorProto.INT64, []), vi("limit", TensorProto.INT64, []), vi("z0", TensorProto.FLOAT, [2, 2])],
        [vi("c", TensorProto.INT64, []), vi("z", TensorProto.FLOAT, [2, 2])])
    c, limit = 2, 13
    z0 = RNG.uniform(-1, 1, size=(2, 2)).astype(F32)
    z = z0.copy()
    while c < limit:
        c += 3
        z = z + F32(1.0)
    save_graph_case(out, "loop_while_condition", graph, [np.array(2, dtype=I64), np.array(limit, dtype=I64), z0],
                    [np.array(c, dtype=I64), z], opset=13)


def zero_iterations_case(out):
    # Trip count 0: the loop-carried value comes out as it went in.
    body = body_graph(
        "never_body",
        [n("Neg", ["v_in"], ["v_out"]), n("Identity", ["cond_in"], ["cond_out"])],
        [vi("i", TensorProto.INT64, []), vi("cond_in", TensorProto.BOOL, []), vi("v_in", TensorProto.FLOAT, [4])],
        [vi("cond_out", TensorProto.BOOL, []), vi("v_out", TensorProto.FLOAT, [4])])
    graph = helper.make_graph(
        [n("Loop", ["M", "cond", "v0"], ["v"], body=body)], "loop_zero_iterations",
        [vi("v0", TensorProto.FLOAT, [4])], [vi("v", TensorProto.FLOAT, [4])],
        initializer=[scalar_i64("M", 0), helper.make_tensor("cond", TensorProto.BOOL, [], [True])])
    v0 = RNG.uniform(-1, 1, size=4).astype(F32)
    save_graph_case(out, "loop_zero_iterations", graph, [v0], [v0], opset=13)


def nested_loop_case(out):
    # An outer loop of 3 iterations whose body runs an inner loop of (outer iteration + 1)
    # iterations; the inner body adds x, a graph input two scopes out, to the accumulator:
    # acc = acc0 + x * (1 + 2 + 3).
    inner = body_graph(
        "inner_body",
        [n("Add", ["acc_inner_in", "x"], ["acc_inner_out"]), n("Identity", ["c_in"], ["c_out"])],
        [vi("j", TensorProto.INT64, []), vi("c_in", TensorProto.BOOL, []), vi("acc_inner_in", TensorProto.FLOAT, [2])],
        [vi("c_out", TensorProto.BOOL, []), vi("acc_inner_out", TensorProto.FLOAT, [2])])
    outer = body_graph(
        "outer_body",
        [n("Add", ["i", "one"], ["count"]), n("Loop", ["count", "", "acc_in"], ["acc_out"], body=inner),
         n("Identity", ["cond_in"], ["cond_out"])],
        [vi("i", TensorProto.INT64, []), vi("cond_in", TensorProto.BOOL, []), vi("acc_in", TensorProto.FLOAT, [2])],
        [vi("cond_out", TensorProto.BOOL, []), vi("acc_out", TensorProto.FLOAT, [2])],
        [scalar_i64("one", 1)])
    graph = helper.make_graph(
        [n("Loop", ["M", "", "acc0"], ["acc"], body=outer)], "loop_nested",
        [vi("x", TensorProto.FLOAT, [2]), vi("acc0", TensorProto.FLOAT, [2])], [vi("acc", TensorProto.FLOAT, [2])],
        initializer=[scalar_i64("M", 3)])
    x = RNG.uniform(-1, 1, size=2).astype(F32)
    acc0 = RNG.uniform(-1, 1, size=2).astype(F32)
    acc = acc0.copy()
    for i in range(3):
        for _ in range(i + 1):
            acc = acc + x
    save_graph_case(out, "loop_nested", graph, [x, acc0], [acc], opset=13)


def generate(out_dir):
    range_in_body_case(out_dir)
    run_time_values_case(out_dir)
    while_condition_case(out_dir)
    zero_iterations_case(out_dir)
    nested_loop_case(out_dir)
