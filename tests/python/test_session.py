"""trellis.InferenceSession and the module's functions: the API, zero-copy inputs, the GIL released
during run, many threads on one session, and every error class."""
import os
import pathlib
import pydoc
import threading
import time

import numpy as np
import pytest

import trellis
import models

HAVE_CPUACC = "CpuAcc" in [b["id"] for b in trellis.backends()["registered"]]


def run_relu(session, x):
    return session.run(None, {"X": x})[0]


# ---- module ----------------------------------------------------------------------------------

def test_version_is_the_projects():
    assert trellis.__version__.count(".") == 2
    assert all(part.isdigit() for part in trellis.__version__.split("."))


def test_backends_lists_the_built_in_ones():
    report = trellis.backends()
    ids = [b["id"] for b in report["registered"]]
    assert "CpuRef" in ids
    cpuref = next(b for b in report["registered"] if b["id"] == "CpuRef")
    assert cpuref["origin"] == "built in" and cpuref["available"]
    assert report["default"][-1] == "CpuRef"
    assert report["default"] == (["CpuAcc", "CpuRef"] if HAVE_CPUACC else ["CpuRef"])


@pytest.mark.skipif(not os.environ.get("TRELLIS_TEST_DYNAMIC_BACKENDS_DIR"),
                    reason="TRELLIS_TEST_DYNAMIC_BACKENDS_DIR (the test dynamic backends, set by ctest) is not set")
def test_backends_reports_dynamic_backend_files():
    report = trellis.backends(os.environ["TRELLIS_TEST_DYNAMIC_BACKENDS_DIR"])
    files = {os.path.basename(f["path"]): f for f in report["dynamic_backend_files"]}
    assert files["Test_Valid_backend.so"]["loaded"]
    assert files["Test_Valid_backend.so"]["id"] == "TestValid"
    assert "TestValid" in [b["id"] for b in report["registered"]]
    skipped = files["Test_MajorNewer_backend.so"]
    assert not skipped["loaded"] and skipped["reason"]


def test_relative_dynamic_backends_path_is_made_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    os.mkdir("empty")
    report = trellis.backends("empty")
    assert report["dynamic_backend_files"] == [] and report["dynamic_backend_warnings"] == []


@pytest.mark.skipif(not os.environ.get("TRELLIS_CUSTOM_BACKEND_DIR"),
                    reason="TRELLIS_CUSTOM_BACKEND_DIR (the sample Custom backend, set by ctest) is not set")
def test_session_on_a_dynamic_backend():
    model = models.two_output_model()
    session = trellis.InferenceSession(model, backends=["Custom", "CpuRef"],
                                       dynamic_backends_path=os.environ["TRELLIS_CUSTOM_BACKEND_DIR"])
    placed = {layer["name"]: layer["backend"] for layer in session.inspect()["layers"] if layer["backend"]}
    assert "Custom" in placed.values()
    a, b = np.full((2, 3), 2, np.float32), np.full((2, 3), 3, np.float32)
    s, p = session.run(None, {"A": a, "B": b})
    np.testing.assert_array_equal(s, a + b)
    np.testing.assert_array_equal(p, a * b)


def test_supported_operators():
    ops = trellis.supported_operators()
    assert "Conv" in ops and "MatMul" in ops and ops == sorted(ops)


# ---- session -----------------------------------------------------------------------------------

def test_inputs_and_outputs_describe_the_model():
    session = trellis.InferenceSession(models.relu_model())
    (x,), (y,) = session.get_inputs(), session.get_outputs()
    assert (x.name, x.shape, x.dtype, x.type) == ("X", ["batch", 4], np.dtype(np.float32), "tensor(float)")
    assert y.name == "Y" and y.dtype == np.float32
    assert session.dynamic
    assert "NodeArg(name='X'" in repr(x)


def test_symbolic_dims_are_decided_by_each_run():
    session = trellis.InferenceSession(models.relu_model())
    for batch in (1, 3, 7):
        x = np.linspace(-1, 1, batch * 4, dtype=np.float32).reshape(batch, 4)
        np.testing.assert_array_equal(run_relu(session, x), np.maximum(x, 0))


def test_shapes_pin_symbolic_dims():
    session = trellis.InferenceSession(models.relu_model(), shapes={"X": (2, 4)})
    assert session.get_inputs()[0].shape == [2, 4]
    assert session.get_outputs()[0].shape == [2, 4]
    assert not session.dynamic
    with pytest.raises(trellis.InvalidInputError):
        run_relu(session, np.zeros((3, 4), np.float32))


@pytest.mark.parametrize("form", ["str", "pathlib", "bytes", "ModelProto"])
def test_model_forms(form, tmp_path):
    model = models.relu_model((2, 2))
    path = tmp_path / "relu.onnx"
    path.write_bytes(model.SerializeToString())
    arg = {"str": str(path), "pathlib": pathlib.Path(path), "bytes": model.SerializeToString(),
           "ModelProto": model}[form]
    session = trellis.InferenceSession(arg, backends=["CpuRef"])
    x = np.array([[-1, 2], [3, -4]], np.float32)
    np.testing.assert_array_equal(run_relu(session, x), np.maximum(x, 0))


def test_run_selects_and_orders_outputs():
    session = trellis.InferenceSession(models.two_output_model())
    a, b = np.full((2, 3), 2, np.float32), np.full((2, 3), 5, np.float32)
    feed = {"A": a, "B": b}
    s, p = session.run(None, feed)
    np.testing.assert_array_equal(s, a + b)
    np.testing.assert_array_equal(p, a * b)
    (p_only,) = session.run(["P"], feed)
    np.testing.assert_array_equal(p_only, a * b)
    p2, s2 = session.run(["P", "S"], feed)
    np.testing.assert_array_equal(p2, a * b)
    np.testing.assert_array_equal(s2, a + b)


def test_outputs_own_their_memory():
    session = trellis.InferenceSession(models.two_output_model())
    feed = {"A": np.ones((2, 3), np.float32), "B": np.ones((2, 3), np.float32)}
    first = session.run(["S"], feed)[0]
    second = session.run(["S"], feed)[0]
    assert isinstance(first, np.ndarray)
    assert first.flags.owndata and first.flags.writeable and first.flags.c_contiguous
    assert first.ctypes.data != second.ctypes.data
    first[...] = 0
    np.testing.assert_array_equal(second, 2)


def test_int_and_bool_tensors():
    session = trellis.InferenceSession(models.int_mod_model())
    a, b = np.array([7, 8, 9, 10], np.int32), np.array([3, 3, 4, 4], np.int32)
    np.testing.assert_array_equal(session.run(None, {"A": a, "B": b})[0], a % b)
    session = trellis.InferenceSession(models.bool_and_model())
    a, b = np.array([True, True, False]), np.array([True, False, False])
    out = session.run(None, {"A": a, "B": b})[0]
    assert out.dtype == np.bool_
    np.testing.assert_array_equal(out, a & b)


def test_bfloat16_is_exchanged_as_float32():
    session = trellis.InferenceSession(models.bfloat16_model(), backends=["CpuRef"])
    b_arg = session.get_inputs()[1]
    assert (b_arg.dtype, b_arg.type) == (np.dtype(np.float32), "tensor(bfloat16)")
    x = np.array([1.0, 0.48033667, -3.14159, 65504.0], np.float32)
    h, y = session.run(None, {"X": x, "B": x})
    # bfloat16 keeps 8 significant bits, rounded to nearest even: 0.48033667 -> 0.48046875.
    expected = np.array([1.0, 0.48046875, -3.140625, 65536.0], np.float32)
    assert h.dtype == np.float32 and y.dtype == np.float32
    np.testing.assert_array_equal(h, expected)
    np.testing.assert_array_equal(y, expected)
    assert session.copied_inputs == 1  # B, rounded from float32


def test_bfloat16_torch_tensors_are_read_in_place():
    torch = pytest.importorskip("torch", reason="torch (Debian's python3-torch) is not importable")
    session = trellis.InferenceSession(models.bfloat16_model(), backends=["CpuRef"])
    b = torch.tensor([1.0, 0.5, -2.0, 3.0], dtype=torch.bfloat16)
    _, y = session.run(None, {"X": np.zeros(4, np.float32), "B": b})
    np.testing.assert_array_equal(y, b.float().numpy())
    assert session.copied_inputs == 0
    bits = np.array([0x3F80, 0x3F00, 0xC000, 0x4040], np.uint16)  # 1, 0.5, -2, 3 as bfloat16 bit patterns
    _, y = session.run(None, {"X": np.zeros(4, np.float32), "B": bits})
    np.testing.assert_array_equal(y, [1.0, 0.5, -2.0, 3.0])
    assert session.copied_inputs == 0
    with pytest.raises(trellis.InvalidInputError, match=r"float32 \(or a bfloat16 tensor"):
        session.run(None, {"X": np.zeros(4, np.float32), "B": np.zeros(4, np.float64)})


@pytest.mark.skipif(not HAVE_CPUACC, reason="CpuAcc is not built into this libtrellis")
def test_inspect_gives_placement_and_reasons():
    session = trellis.InferenceSession(models.int_mod_model(), backends=["CpuAcc", "CpuRef"])
    info = session.inspect()
    assert info["backends"] == ["CpuAcc", "CpuRef"] and info["opset"] == 13
    (mod,) = [layer for layer in info["layers"] if layer["name"] == "mod"]
    assert mod["op"] == "Mod" and mod["backend"] == "CpuRef"
    assert "Signed32" in mod["declined"]["CpuAcc"]
    assert info["layer_counts"]["CpuRef"] == 1
    assert session.get_providers() == ["CpuAcc", "CpuRef"]


def test_inspect_small_net():
    session = trellis.InferenceSession(models.small_net_model(), backends=["CpuRef"])
    info = session.inspect()
    ops = [layer["op"] for layer in info["layers"] if layer["backend"] == "CpuRef"]
    assert "Softmax" in ops
    assert info["peak_working_memory_bytes"] > 0
    assert not info["dynamic"]


def test_bench_times_runs():
    session = trellis.InferenceSession(models.small_net_model())
    result = session.bench(iterations=20, warmup=2)
    assert result["iterations"] == 20 and len(result["times_ms"]) == 20
    assert 0 < result["min_ms"] <= result["median_ms"] <= result["p90_ms"] <= result["max_ms"]
    feed = {"X": np.ones((1, 3, 8, 8), np.float32)}
    assert session.bench(feed, iterations=3, warmup=0)["iterations"] == 3


def test_help_documents_the_api():
    text = pydoc.render_doc(trellis.InferenceSession)
    for needle in ("backends", "backend_options", "shapes", "dynamic_backends_path", "Runs the model once",
                   "InvalidInputError", "GIL"):
        assert needle in text, needle
    assert trellis.__doc__ and "InferenceSession" in trellis.__doc__


def test_stubs_are_shipped():
    package = os.path.dirname(trellis.__file__)
    for name in ("__init__.pyi", "_trellis.pyi", "py.typed"):
        assert os.path.exists(os.path.join(package, name)), name


# ---- zero copy ---------------------------------------------------------------------------------

def test_contiguous_inputs_are_not_copied():
    session = trellis.InferenceSession(models.relu_model((4, 6)))
    x = np.arange(24, dtype=np.float32).reshape(4, 6) - 10
    readonly = x.copy()
    readonly.flags.writeable = False
    rows = np.arange(48, dtype=np.float32).reshape(8, 6)[2:6]  # a view, but C-contiguous
    for value in (x, readonly, rows):
        np.testing.assert_array_equal(run_relu(session, value), np.maximum(value, 0))
    assert session.copied_inputs == 0


def test_strided_inputs_are_copied_once_and_counted():
    session = trellis.InferenceSession(models.relu_model((4, 6)))
    wide = np.arange(48, dtype=np.float32).reshape(4, 12) - 20
    strided = wide[:, ::2]
    assert not strided.flags.c_contiguous
    np.testing.assert_array_equal(run_relu(session, strided), np.maximum(strided, 0))
    assert session.copied_inputs == 1
    transposed = np.ascontiguousarray(wide[:, :6].T).T  # Fortran order
    np.testing.assert_array_equal(run_relu(session, transposed), np.maximum(transposed, 0))
    assert session.copied_inputs == 2


def test_torch_tensors_and_dlpack_capsules_are_not_copied():
    torch = pytest.importorskip("torch", reason="torch (Debian's python3-torch) is not importable")
    from torch.utils import dlpack

    session = trellis.InferenceSession(models.relu_model((4, 6)))
    t = torch.linspace(-1, 1, 24).reshape(4, 6)
    expected = np.maximum(t.numpy(), 0)
    np.testing.assert_array_equal(run_relu(session, t), expected)
    np.testing.assert_array_equal(run_relu(session, dlpack.to_dlpack(t)), expected)
    assert session.copied_inputs == 0
    np.testing.assert_array_equal(run_relu(session, t.t().contiguous().t()), expected)
    assert session.copied_inputs == 1


def test_inputs_are_read_in_place_by_address():
    # numpy's __array_interface__ address of the array and of what the engine read: an input that
    # is changed between two runs changes the output, and its buffer is never reallocated.
    session = trellis.InferenceSession(models.relu_model((4, 6)))
    x = np.ones((4, 6), np.float32)
    address = x.__array_interface__["data"][0]
    first = run_relu(session, x)
    x *= 3
    second = run_relu(session, x)
    assert x.__array_interface__["data"][0] == address
    np.testing.assert_array_equal(first, 1)
    np.testing.assert_array_equal(second, 3)
    assert session.copied_inputs == 0


# ---- threads -----------------------------------------------------------------------------------

# The GIL tests measure timings on a machine that may be busy with other work; a held GIL can never
# pass them, so each takes the best of three attempts against OS scheduling noise.

def longest_stall_during_runs(session, x, workers):
    """The longest the main thread's Python loop stalled while `workers` threads each ran `session`
    once, and the shortest of those runs. The runs start only once the loop is running; a run that
    held the GIL would stall the loop for all of its duration."""
    looping = threading.Event()
    durations = []

    def worker():
        looping.wait()
        begin = time.perf_counter()
        session.run(None, {"X": x})
        durations.append(time.perf_counter() - begin)

    threads = [threading.Thread(target=worker) for _ in range(workers)]
    for t in threads:
        t.start()
    last, longest = time.perf_counter(), 0.0
    looping.set()
    while any(t.is_alive() for t in threads):
        now = time.perf_counter()
        longest = max(longest, now - last)
        last = now
    for t in threads:
        t.join()
    return longest, min(durations)


def test_run_releases_the_gil():
    session = trellis.InferenceSession(models.matmul_chain_model(), backends=["CpuRef"])
    x = np.ones((512, 512), np.float32)
    attempts = [longest_stall_during_runs(session, x, workers=1) for _ in range(3)]
    assert any(stall < 0.5 * duration for stall, duration in attempts), attempts


def test_two_runs_overlap_with_python():
    session = trellis.InferenceSession(models.matmul_chain_model(), backends=["CpuRef"])
    x = np.ones((512, 512), np.float32)
    attempts = [longest_stall_during_runs(session, x, workers=2) for _ in range(3)]
    assert any(stall < 0.5 * duration for stall, duration in attempts), attempts


def test_eight_threads_hundred_runs_give_identical_results():
    session = trellis.InferenceSession(models.small_net_model())
    rng = np.random.default_rng(1)
    inputs = [rng.standard_normal((1, 3, 8, 8)).astype(np.float32) for _ in range(8)]
    expected = [session.run(None, {"X": x})[0] for x in inputs]
    mismatches, errors = [], []

    def worker(k):
        try:
            for i in range(100):
                got = session.run(None, {"X": inputs[k]})[0]
                if not np.array_equal(got, expected[k]):
                    mismatches.append((k, i))
        except Exception as e:  # reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and not mismatches, (errors, mismatches[:5])


# ---- errors ------------------------------------------------------------------------------------

def test_error_classes_derive_from_trellis_error():
    for cls in (trellis.InvalidModelError, trellis.ModelFileNotFoundError, trellis.UnsupportedOperatorError,
                trellis.InvalidInputError, trellis.InvalidArgumentError, trellis.BackendError,
                trellis.ResourceLimitError, trellis.EngineError):
        assert issubclass(cls, trellis.Error)
    assert issubclass(trellis.ModelFileNotFoundError, FileNotFoundError)
    assert issubclass(trellis.InvalidInputError, ValueError)


def test_missing_model_file(tmp_path):
    with pytest.raises(trellis.ModelFileNotFoundError, match="does-not-exist.onnx"):
        trellis.InferenceSession(str(tmp_path / "does-not-exist.onnx"))


def test_invalid_models(tmp_path):
    with pytest.raises(trellis.InvalidModelError):
        trellis.InferenceSession(b"this is not an ONNX model")
    with pytest.raises(trellis.InvalidModelError, match="is a directory"):
        trellis.InferenceSession(str(tmp_path))
    with pytest.raises(trellis.InvalidArgumentError, match="path_or_bytes"):
        trellis.InferenceSession(42)


def test_unsupported_operator_names_the_node():
    with pytest.raises(trellis.UnsupportedOperatorError, match=r"node 'mystery' \(FooBar, opset 13\)"):
        trellis.InferenceSession(models.unsupported_op_model())


def test_unknown_backend_lists_the_registered_ones():
    with pytest.raises(trellis.BackendError, match=r"unknown backend 'NoSuchBackend'.*CpuRef"):
        trellis.InferenceSession(models.relu_model(), backends=["NoSuchBackend", "CpuRef"])
    with pytest.raises(trellis.InvalidArgumentError, match="backends is empty"):
        trellis.InferenceSession(models.relu_model(), backends=[])


def test_bad_options():
    with pytest.raises(trellis.InvalidModelError, match="a shape is given for 'Z', but the model has no input"):
        trellis.InferenceSession(models.relu_model(), shapes={"Z": [1, 4]})
    with pytest.raises(trellis.InvalidArgumentError, match="shapes"):
        trellis.InferenceSession(models.relu_model(), shapes={"X": ["a", 4]})
    session = trellis.InferenceSession(models.two_output_model())
    feed = {"A": np.ones((2, 3), np.float32), "B": np.ones((2, 3), np.float32)}
    with pytest.raises(trellis.InvalidArgumentError, match="'Q' is not an output.*'S', 'P'"):
        session.run(["Q"], feed)


def test_missing_input():
    session = trellis.InferenceSession(models.two_output_model())
    with pytest.raises(trellis.InvalidInputError) as info:
        session.run(None, {"A": np.ones((2, 3), np.float32)})
    assert info.value.input_name == "B" and info.value.got == "missing"
    assert info.value.expected == "float32 (2, 3)"


def test_unknown_input():
    session = trellis.InferenceSession(models.relu_model())
    with pytest.raises(trellis.InvalidInputError, match="'x' is not an input of the model") as info:
        session.run(None, {"X": np.ones((1, 4), np.float32), "x": np.ones(1)})
    assert info.value.input_name == "x"


def test_wrong_dtype_names_input_expected_and_got():
    session = trellis.InferenceSession(models.relu_model())
    with pytest.raises(trellis.InvalidInputError, match="input 'X': dtype float64") as info:
        session.run(None, {"X": np.ones((1, 4))})
    assert (info.value.input_name, info.value.expected, info.value.got) == ("X", "float32", "float64")


def test_wrong_shape_names_input_expected_and_got():
    session = trellis.InferenceSession(models.relu_model())
    with pytest.raises(trellis.InvalidInputError, match=r"input 'X': shape \(2, 5\)") as info:
        session.run(None, {"X": np.ones((2, 5), np.float32)})
    assert (info.value.input_name, info.value.expected, info.value.got) == ("X", "('batch', 4)", "(2, 5)")
    with pytest.raises(trellis.InvalidInputError, match="shape"):
        session.run(None, {"X": np.ones((4,), np.float32)})


def test_input_that_is_not_an_array():
    session = trellis.InferenceSession(models.relu_model())
    with pytest.raises(trellis.InvalidInputError, match="expected a numpy array") as info:
        session.run(None, {"X": [[1.0, 2.0, 3.0, 4.0]]})
    assert info.value.got == "list"


def test_run_time_model_error_after_specialization():
    # Reshape to a size the input does not have: found when the network is specialized for the run.
    from onnx import TensorProto, helper
    model = models.make_model([helper.make_node("Reshape", ["X", "S"], ["Y"], name="reshape")],
                              [helper.make_tensor_value_info("X", TensorProto.FLOAT, [4]),
                               helper.make_tensor_value_info("S", TensorProto.INT64, [2])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], check=False)
    session = trellis.InferenceSession(model)
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(session.run(None, {"X": x, "S": np.array([2, 2])})[0], x.reshape(2, 2))
    with pytest.raises(trellis.Error, match="Reshape 'reshape'"):
        session.run(None, {"X": x, "S": np.array([3, 2])})


def test_resource_limits():
    with pytest.raises(trellis.ResourceLimitError, match="maximum tensor size of 64 bytes"):
        trellis.InferenceSession(models.small_net_model(), max_tensor_bytes=64)
    with pytest.raises(trellis.EngineError, match="working memory"):
        trellis.InferenceSession(models.small_net_model(), max_working_memory_bytes=16)


def test_bad_counts():
    with pytest.raises(trellis.InvalidArgumentError, match="max_tensor_bytes must be a byte count"):
        trellis.InferenceSession(models.relu_model(), max_tensor_bytes=-1)
    session = trellis.InferenceSession(models.small_net_model())
    with pytest.raises(trellis.InvalidArgumentError, match="iterations must be >= 1"):
        session.bench(iterations=0)


def test_run_options_are_refused():
    session = trellis.InferenceSession(models.relu_model())
    with pytest.raises(trellis.InvalidArgumentError, match="run_options"):
        session.run(None, {"X": np.ones((1, 4), np.float32)}, run_options=object())
