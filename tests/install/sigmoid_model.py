"""A one-node ONNX model (Sigmoid, float32 2x7) for the install test, and the check of its output.

    sigmoid_model.py make DIR    writes DIR/sigmoid.onnx and DIR/x.npy
    sigmoid_model.py check DIR   compares DIR/out/output_0.pb with numpy's sigmoid of DIR/x.npy

Exits 1 with a message naming the file and the first wrong value when the check fails.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def make(directory):
    graph = helper.make_graph(
        [helper.make_node("Sigmoid", ["x"], ["y"], name="sigmoid")],
        "sigmoid",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 7])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 7])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(directory, "sigmoid.onnx"))
    # Both signs, zero, and saturation at both ends.
    x = np.array([-30.0, -6.0, -2.5, -1.0, -0.25, 0.0, 0.25,
                  1.0, 2.5, 6.0, 30.0, -88.0, 0.5, 3.75], dtype=np.float32).reshape(2, 7)
    np.save(os.path.join(directory, "x.npy"), x)


def check(directory):
    x = np.load(os.path.join(directory, "x.npy")).astype(np.float64)
    path = os.path.join(directory, "out", "output_0.pb")
    tensor = onnx.TensorProto()
    with open(path, "rb") as f:
        tensor.ParseFromString(f.read())
    y = numpy_helper.to_array(tensor)
    if tensor.name != "y" or y.dtype != np.float32 or y.shape != x.shape:
        print(f"{path}: expected float32 {x.shape} named 'y', got {y.dtype} {y.shape} named '{tensor.name}'")
        return 1
    want = 1.0 / (1.0 + np.exp(-x))
    err = np.abs(y.astype(np.float64) - want)
    bad = np.argwhere(err > 1e-6 + 1e-6 * np.abs(want))
    if bad.size:
        i = tuple(bad[0])
        print(f"{path}: sigmoid({x[i]}) = {y[i]}, expected {want[i]} ({len(bad)} values wrong)")
        return 1
    print(f"{path}: {y.size} values match numpy's sigmoid (max error {err.max():.3g})")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("make", "check"):
        print(__doc__)
        sys.exit(2)
    if sys.argv[1] == "make":
        make(sys.argv[2])
        sys.exit(0)
    sys.exit(check(sys.argv[2]))
