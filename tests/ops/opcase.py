"""Shared helpers for the per-op test cases (run with Debian's /usr/bin/python3: numpy + onnx).

A case is written in the ONNX backend-test layout, so the same runner handles it and the
official ONNX test data:
    OUT/<case>/model.onnx
    OUT/<case>/test_data_set_0/input_<i>.pb    (graph inputs, in order)
    OUT/<case>/test_data_set_0/output_<i>.pb   (expected outputs, computed with numpy)

Expected values come from numpy (float64 where it matters, then cast), never from Trellis.
"""
import os

import numpy as np
import onnx
from onnx import helper, numpy_helper

RNG = np.random.RandomState(1234)


def tensor_type(dtype):
    """ONNX element type of a numpy dtype (onnx 1.12 has no helper.np_dtype_to_tensor_dtype)."""
    return onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dtype)]


def rand(*shape, dtype=np.float32, low=-1.0, high=1.0):
    return RNG.uniform(low, high, size=shape).astype(dtype)


def save_case(out_dir, name, op_type, inputs, outputs, attrs=None, initializers=None,
              opset=17, domain="", input_order=None):
    """One-node model.

    inputs:       list of (name, np.ndarray) fed as graph inputs (written to input_<i>.pb).
                  A name of "" stands for an omitted optional input.
    initializers: list of (name, np.ndarray) that become constant initializers; they are wired
                  into the node in the position given by input_order (list of names, "" allowed).
    outputs:      list of (name, np.ndarray) expected outputs.
    """
    attrs = attrs or {}
    initializers = initializers or []
    if input_order is None:
        input_order = [n for n, _ in inputs] + [n for n, _ in initializers]
    node = helper.make_node(op_type, input_order, [n for n, _ in outputs], domain=domain, **attrs)
    graph_inputs = [helper.make_tensor_value_info(n, tensor_type(a.dtype), a.shape)
                    for n, a in inputs if n]
    graph_outputs = [helper.make_tensor_value_info(n, tensor_type(a.dtype), a.shape)
                     for n, a in outputs]
    inits = [numpy_helper.from_array(a, n) for n, a in initializers]
    graph = helper.make_graph([node], name, graph_inputs, graph_outputs, initializer=inits)
    save_graph_case(out_dir, name, graph, [a for n, a in inputs if n], [a for _, a in outputs], opset)


def save_graph_case(out_dir, name, graph, input_arrays, output_arrays, opset=17):
    """A whole graph (for multi-node cases)."""
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="trellis-opcases")
    model.ir_version = 8
    onnx.checker.check_model(model)
    case_dir = os.path.join(out_dir, name)
    data_dir = os.path.join(case_dir, "test_data_set_0")
    os.makedirs(data_dir, exist_ok=True)
    onnx.save(model, os.path.join(case_dir, "model.onnx"))
    for i, a in enumerate(input_arrays):
        t = numpy_helper.from_array(np.asarray(a), graph.input[i].name)
        with open(os.path.join(data_dir, "input_%d.pb" % i), "wb") as f:
            f.write(t.SerializeToString())
    for i, a in enumerate(output_arrays):
        t = numpy_helper.from_array(np.asarray(a), graph.output[i].name)
        with open(os.path.join(data_dir, "output_%d.pb" % i), "wb") as f:
            f.write(t.SerializeToString())
