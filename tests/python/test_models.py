"""The exported PyTorch models (tests/models/export_models.py, export_transformers.py) run by
trellis.InferenceSession and by ONNX Runtime in the same test, on the exported inputs: every output
must agree within 1e-4 (absolute and relative), and its shape and dtype must be ONNX Runtime's.

TRELLIS_TEST_MODELS_DIR names the folder the export wrote (ctest sets it; the ctest fixture
test_data exports them first). The int8 variants (quantized by onnxruntime's tool) are left to
the C++ tests, whose tolerances are in quantization steps.
"""
import glob
import os
import re

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

import trellis

MODELS_DIR = os.environ.get("TRELLIS_TEST_MODELS_DIR", "")
TOLERANCE = 1e-4


def _model_paths():
    if not MODELS_DIR or not os.path.isdir(MODELS_DIR):
        return []
    return sorted(p for p in glob.glob(os.path.join(MODELS_DIR, "*.onnx"))
                  if re.search(r"_op\d+\.onnx$", os.path.basename(p)))


def _inputs(path):
    stem = path[:-len(".onnx")]
    feed = {}
    for file in sorted(glob.glob(stem + ".input_*.pb"), key=lambda f: int(f.rsplit("_", 1)[1].split(".")[0])):
        tensor = onnx.TensorProto()
        with open(file, "rb") as f:
            tensor.ParseFromString(f.read())
        feed[tensor.name] = numpy_helper.to_array(tensor)
    return feed


PATHS = _model_paths()


def test_models_were_exported():
    if not MODELS_DIR:
        pytest.skip("TRELLIS_TEST_MODELS_DIR is not set (ctest sets it to the exported models' folder)")
    assert PATHS, f"no exported models (NAME_opN.onnx) in {MODELS_DIR}"


@pytest.mark.parametrize("path", PATHS, ids=[os.path.basename(p)[:-5] for p in PATHS])
def test_model_matches_onnxruntime(path):
    ort = pytest.importorskip("onnxruntime", reason="onnxruntime is not importable by this python "
                                                    "(scripts/install-deps.sh installs onnxruntime==1.30.0 into .venv)")
    feed = _inputs(path)
    assert feed, f"no inputs exported for {path}"
    reference = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    names = [o.name for o in reference.get_outputs()]
    want = reference.run(names, feed)
    session = trellis.InferenceSession(path)
    assert [o.name for o in session.get_outputs()] == names
    got = session.run(names, feed)
    for name, g, w in zip(names, got, want):
        assert g.shape == w.shape and g.dtype == w.dtype, (name, g.shape, g.dtype, w.shape, w.dtype)
        np.testing.assert_allclose(g, w, rtol=TOLERANCE, atol=TOLERANCE, err_msg=f"output '{name}'")
