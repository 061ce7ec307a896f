"""trellis.backend as code written against onnx.backend.base.Backend calls it (ONNX's own test
runner drives it in test_onnx_backend.py)."""
import numpy as np
import pytest
from onnx import helper

import trellis
import trellis.backend as backend
import models


def test_devices():
    assert backend.supports_device("CPU")
    assert not backend.supports_device("CUDA")
    assert backend.is_compatible(models.relu_model(), "CPU")
    with pytest.raises(RuntimeError, match="device 'CUDA' is not supported"):
        backend.prepare(models.relu_model(), "CUDA")


def test_run_model_takes_a_list_in_graph_input_order():
    a, b = np.full((2, 3), 2, np.float32), np.arange(6, dtype=np.float32).reshape(2, 3)
    outputs = backend.run_model(models.two_output_model(), [a, b])
    np.testing.assert_array_equal(outputs[0], a + b)
    np.testing.assert_array_equal(outputs.P, a * b)  # a named tuple, as ONNX's interface returns
    assert outputs._fields == ("S", "P")


def test_prepare_once_run_many_with_session_options():
    rep = backend.prepare(models.relu_model(), "CPU", backends=["CpuRef"])
    assert rep.session.get_providers() == ["CpuRef"]
    for batch in (1, 2):
        x = np.linspace(-1, 1, batch * 4, dtype=np.float32).reshape(batch, 4)
        np.testing.assert_array_equal(rep.run({"X": x})[0], np.maximum(x, 0))
    assert backend.prepare(rep) is rep


def test_run_node_types_outputs_by_shape_inference():
    node = helper.make_node("Add", ["x", "y"], ["z"])
    x, y = np.ones((2, 2), np.float32), np.full((2, 2), 3, np.float32)
    (z,) = backend.run_node(node, [x, y])
    np.testing.assert_array_equal(z, x + y)


def test_run_node_with_outputs_info_and_opset():
    node = helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    (s,) = backend.run_node(node, {"x": x}, outputs_info=[(np.float32, ())], opset_version=11)
    np.testing.assert_allclose(s, x.sum())


def test_run_node_reports_unsupported_ops():
    # MaxRoiPool is an ONNX op (so onnx.checker accepts the node) that Trellis does not convert.
    node = helper.make_node("MaxRoiPool", ["x", "rois"], ["y"], pooled_shape=[1, 1])
    x, rois = np.ones((1, 1, 4, 4), np.float32), np.array([[0, 0, 0, 3, 3]], np.float32)
    with pytest.raises(trellis.UnsupportedOperatorError, match=r"\(MaxRoiPool, opset \d+\): operator not supported"):
        backend.run_node(node, [x, rois], outputs_info=[(np.float32, (1, 1, 1, 1))])
