#!/usr/bin/python3
"""Generate examples/models/mlp.onnx, the tiny model used by `make run`.

Graph: input "input" float32 [1,16]
       -> Gemm(16->32, transB=1) -> Relu -> Gemm(32->10, transB=1)
       -> Softmax(axis=-1) -> output "probs" [1,10]
Opset 13, weights from numpy RandomState(0). Deterministic.
Run with Debian's python (has onnx + numpy): /usr/bin/python3 make_example.py
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def build() -> onnx.ModelProto:
    rng = np.random.RandomState(0)
    w1 = (rng.randn(32, 16) * 0.25).astype(np.float32)
    b1 = (rng.randn(32) * 0.1).astype(np.float32)
    w2 = (rng.randn(10, 32) * 0.25).astype(np.float32)
    b2 = (rng.randn(10) * 0.1).astype(np.float32)
    inits = [numpy_helper.from_array(a, n)
             for a, n in ((w1, "fc1.weight"), (b1, "fc1.bias"),
                          (w2, "fc2.weight"), (b2, "fc2.bias"))]
    nodes = [
        helper.make_node("Gemm", ["input", "fc1.weight", "fc1.bias"], ["h1"],
                         name="fc1", transB=1),
        helper.make_node("Relu", ["h1"], ["h1_relu"], name="relu"),
        helper.make_node("Gemm", ["h1_relu", "fc2.weight", "fc2.bias"], ["logits"],
                         name="fc2", transB=1),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=-1),
    ]
    graph = helper.make_graph(
        nodes, "trellis_example_mlp",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 16])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [1, 10])],
        initializer=inits)
    model = helper.make_model(graph, producer_name="trellis-make-example",
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


def main() -> None:
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mlp.onnx")
    onnx.save(build(), out)
    print(f"wrote {out} ({os.path.getsize(out)} bytes)")


if __name__ == "__main__":
    main()
