"""trellis.serving over KServe's Open Inference Protocol, called with Triton's client on loopback.

Two servers run in subprocesses (``python -m trellis.serving``) on free ports, over one model
repository of two small models generated here: ``classifier`` (a conv net, X float32
[batch, 3, 8, 8] -> Y [batch, 10], DIR/classifier/model.onnx, backends from the flags) and
``arith`` (S = A + B, P = A * B on float32 [batch, 4], Triton's versioned layout
DIR/arith/1/model.onnx, backends from its config.json). One server batches (max 8 rows, 50 ms),
the other does not. KServe is never imported here: kserve and tritonclient.grpc cannot be
imported into one process (both register the protobuf message 'inference.ServerLiveRequest').

Skips, with the reason, where the trellis package, kserve or tritonclient are missing.
"""
import concurrent.futures
import http.client
import importlib.util
import json
import os
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

trellis = pytest.importorskip("trellis", reason="the trellis package was not built")
onnx = pytest.importorskip("onnx")
if importlib.util.find_spec("kserve") is None:
    pytest.skip("kserve is not installed for this python (scripts/install-deps.sh installs it into .venv)",
                allow_module_level=True)
httpclient = pytest.importorskip("tritonclient.http",
                                 reason="tritonclient[http] is not installed (scripts/install-deps.sh)")
grpcclient = pytest.importorskip("tritonclient.grpc",
                                 reason="tritonclient[grpc] is not installed (scripts/install-deps.sh)")
from tritonclient.utils import InferenceServerException  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from models import make_model  # noqa: E402

MAX_BODY_BYTES = 1 << 20
START_TIMEOUT_S = 90


def classifier_model():
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "W")
    fc = numpy_helper.from_array(rng.standard_normal((256, 10)).astype(np.float32), "FC")
    nodes = [helper.make_node("Conv", ["X", "W"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("Flatten", ["r"], ["f"], name="flatten", axis=1),
             helper.make_node("MatMul", ["f", "FC"], ["m"], name="fc"),
             helper.make_node("Softmax", ["m"], ["Y"], name="softmax", axis=1)]
    return make_model(nodes, [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["batch", 3, 8, 8])],
                      [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["batch", 10])], [w, fc])


def arith_model():
    info = [helper.make_tensor_value_info(n, TensorProto.FLOAT, ["batch", 4]) for n in ("A", "B", "S", "P")]
    return make_model([helper.make_node("Add", ["A", "B"], ["S"], name="add"),
                       helper.make_node("Mul", ["A", "B"], ["P"], name="mul")], info[:2], info[2:])


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    root = tmp_path_factory.mktemp("model_repository")
    (root / "classifier").mkdir()
    onnx.save(classifier_model(), str(root / "classifier" / "model.onnx"))
    (root / "arith" / "1").mkdir(parents=True)
    onnx.save(arith_model(), str(root / "arith" / "1" / "model.onnx"))
    (root / "arith" / "config.json").write_text(json.dumps({"backends": ["CpuRef"]}))
    return root


@pytest.fixture(scope="module")
def sessions(repo):
    """The same models on trellis.InferenceSession directly, with the backends the server uses."""
    return {"classifier": trellis.InferenceSession(str(repo / "classifier" / "model.onnx")),
            "arith": trellis.InferenceSession(str(repo / "arith" / "1" / "model.onnx"), backends=["CpuRef"])}


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, repo, log_path, *flags):
        self.http_port, self.grpc_port = _free_port(), _free_port()
        self.log_path = log_path
        cmd = [sys.executable, "-m", "trellis.serving", "--model-dir", str(repo), "--http-port", str(self.http_port),
               "--grpc-port", str(self.grpc_port), "--max-body-bytes", str(MAX_BODY_BYTES), "--workers", "4", *flags]
        self.log = open(log_path, "w")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT)
        self.http_url = f"127.0.0.1:{self.http_port}"
        self.grpc_url = f"127.0.0.1:{self.grpc_port}"

    def wait_ready(self):
        client = httpclient.InferenceServerClient(self.http_url)
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"the server exited with {self.proc.returncode}:\n{self.output()}")
            try:
                if client.is_server_ready():
                    return
            except Exception:  # noqa: BLE001 - not listening yet
                pass
            time.sleep(0.2)
        pytest.fail(f"the server was not ready after {START_TIMEOUT_S} s:\n{self.output()}")

    def output(self, tail=4000):
        self.log.flush()
        with open(self.log_path) as f:
            text = f.read()
        return text[-tail:] if tail else text

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


@pytest.fixture(scope="module")
def servers(repo, tmp_path_factory):
    """{"batching": ..., "unbatched": ...}: started together, so both load while the other does."""
    logs = tmp_path_factory.mktemp("logs")
    started = {"batching": Server(repo, logs / "batching.log", "--backends", "CpuAcc,CpuRef", "--max-batch-size", "8",
                                  "--max-latency-ms", "50", "--log-level", "DEBUG"),
               "unbatched": Server(repo, logs / "unbatched.log", "--max-batch-size", "1")}
    try:
        for server in started.values():
            server.wait_ready()
        yield started
    finally:
        for server in started.values():
            server.stop()


@pytest.fixture(scope="module")
def server(servers):
    return servers["batching"]


def _inputs(module, model, feed):
    inputs = []
    for name, array in feed.items():
        inp = module.InferInput(name, list(array.shape), "FP32")
        inp.set_data_from_numpy(array)
        inputs.append(inp)
    return inputs


def _feeds(rows=1, seed=0):
    rng = np.random.default_rng(seed)
    return {"classifier": {"X": rng.standard_normal((rows, 3, 8, 8)).astype(np.float32)},
            "arith": {"A": rng.standard_normal((rows, 4)).astype(np.float32),
                      "B": rng.standard_normal((rows, 4)).astype(np.float32)}}


def _expect_error(call, status, *words):
    with pytest.raises(InferenceServerException) as info:
        call()
    assert info.value.status() == status, info.value
    for word in words:
        assert word in info.value.message(), info.value.message()
    return info.value.message()


PROTOCOLS = {"http": (httpclient, "http_url"), "grpc": (grpcclient, "grpc_url")}


@pytest.fixture(params=sorted(PROTOCOLS))
def client(request, server):
    module, url = PROTOCOLS[request.param]
    c = module.InferenceServerClient(getattr(server, url))
    c.module = module
    c.protocol = request.param
    c.server = server
    yield c
    c.close()


def test_readiness(client):
    assert client.is_server_live()
    assert client.is_server_ready()
    assert client.is_model_ready("classifier")
    assert client.is_model_ready("arith")
    if client.protocol == "http":
        assert not client.is_model_ready("no_such_model")  # tritonclient.http: False on any non-200
        status, reply = _get(server_of(client), "/v2/models/no_such_model/ready")
        assert status == 404 and "no_such_model" in reply["error"], reply
    else:
        _expect_error(lambda: client.is_model_ready("no_such_model"), "StatusCode.NOT_FOUND", "no_such_model")


def test_metadata(client):
    def md(name):
        m = client.get_model_metadata(name)
        if client.protocol == "grpc":
            from google.protobuf.json_format import MessageToDict

            m = MessageToDict(m, preserving_proto_field_name=True)
        return {"inputs": [(t["name"], t["datatype"], [int(d) for d in t["shape"]]) for t in m["inputs"]],
                "outputs": [(t["name"], t["datatype"], [int(d) for d in t["shape"]]) for t in m["outputs"]]}

    assert md("classifier") == {"inputs": [("X", "FP32", [-1, 3, 8, 8])], "outputs": [("Y", "FP32", [-1, 10])]}
    assert md("arith") == {"inputs": [("A", "FP32", [-1, 4]), ("B", "FP32", [-1, 4])],
                           "outputs": [("S", "FP32", [-1, 4]), ("P", "FP32", [-1, 4])]}


@pytest.mark.parametrize("model", ["classifier", "arith"])
def test_outputs_match_the_session(client, sessions, model):
    session = sessions[model]
    for rows in (1, 3):
        feed = _feeds(rows, seed=rows)[model]
        result = client.infer(model, _inputs(client.module, model, feed))
        expected = session.run(None, feed)
        for arg, want in zip(session.get_outputs(), expected):
            np.testing.assert_allclose(result.as_numpy(arg.name), want, rtol=1e-5, atol=1e-6)
    # Asking for one output returns that one.
    feed = _feeds(2)[model]
    last = session.get_outputs()[-1].name
    result = client.infer(model, _inputs(client.module, model, feed), outputs=[client.module.InferRequestedOutput(last)])
    np.testing.assert_allclose(result.as_numpy(last), session.run([last], feed)[0], rtol=1e-5, atol=1e-6)
    assert len(result.get_response()["outputs"] if client.protocol == "http" else result.get_response().outputs) == 1


def test_bad_requests_are_protocol_errors(client):
    bad = "400" if client.protocol == "http" else "StatusCode.INVALID_ARGUMENT"
    m = client.module
    # Wrong shape: a fixed dim differs, and a rank that differs.
    x = m.InferInput("X", [1, 3, 8, 9], "FP32")
    x.set_data_from_numpy(np.zeros((1, 3, 8, 9), np.float32))
    _expect_error(lambda: client.infer("classifier", [x]), bad, "classifier", "'X'", "[1, 3, 8, 9]", "[-1, 3, 8, 8]")
    x = m.InferInput("X", [3, 8, 8], "FP32")
    x.set_data_from_numpy(np.zeros((3, 8, 8), np.float32))
    _expect_error(lambda: client.infer("classifier", [x]), bad, "'X'", "shape")
    # Wrong datatype.
    x = m.InferInput("X", [1, 3, 8, 8], "FP64")
    x.set_data_from_numpy(np.zeros((1, 3, 8, 8), np.float64))
    _expect_error(lambda: client.infer("classifier", [x]), bad, "'X'", "FP64", "FP32")
    # A missing input, an unknown one, an unknown output.
    a, b = _inputs(m, "arith", _feeds()["arith"])
    _expect_error(lambda: client.infer("arith", [a]), bad, "arith", "'B'", "missing")
    z = m.InferInput("Z", [1, 4], "FP32")
    z.set_data_from_numpy(np.zeros((1, 4), np.float32))
    _expect_error(lambda: client.infer("arith", [a, b, z]), bad, "unknown input 'Z'")
    _expect_error(lambda: client.infer("arith", [a, b], outputs=[m.InferRequestedOutput("Q")]), bad,
                  "unknown output 'Q'")
    # Unknown model.
    _expect_error(lambda: client.infer("no_such_model", [a, b]),
                  "404" if client.protocol == "http" else "StatusCode.NOT_FOUND", "no_such_model")
    # Larger than --max-body-bytes.
    big = np.zeros((MAX_BODY_BYTES // (3 * 8 * 8 * 4) + 1, 3, 8, 8), np.float32)
    x = m.InferInput("X", list(big.shape), "FP32")
    x.set_data_from_numpy(big)
    _expect_error(lambda: client.infer("classifier", [x]),
                  "413" if client.protocol == "http" else "StatusCode.RESOURCE_EXHAUSTED")
    # Still serving.
    feed = _feeds()["arith"]
    result = client.infer("arith", _inputs(m, "arith", feed))
    np.testing.assert_array_equal(result.as_numpy("S"), feed["A"] + feed["B"])


def server_of(client):
    return client.server


def _get(server, path):
    conn = http.client.HTTPConnection("127.0.0.1", server.http_port, timeout=30)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, json.loads(response.read() or b"{}")
    finally:
        conn.close()


def _post(server, path, body, headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", server.http_port, timeout=30)
    try:
        conn.request("POST", path, body=body, headers={"Content-Type": "application/json", **(headers or {})})
        response = conn.getresponse()
        return response.status, json.loads(response.read() or b"{}")
    finally:
        conn.close()


def test_malformed_http_bodies_are_400(server):
    url = "/v2/models/arith/infer"
    cases = {
        b'{"inputs": [{"name": "A", "datatype": "FP32", "shape": [1, 4], "data": [1, 2': "not valid JSON",
        b"[1, 2]": "must be a JSON object",
        b'{"inputs": [{"name": "A", "datatype": "FP32", "shape": "1x4", "data": [1, 2, 3, 4]}]}': "'shape' must be",
        b'{"inputs": [{"name": "A", "datatype": "FP32", "shape": [1, 4]}]}': "neither 'data' nor",
        json.dumps({"inputs": [{"name": "A", "datatype": "FP32", "shape": [1, 4], "data": [1, 2, 3]},
                               {"name": "B", "datatype": "FP32", "shape": [1, 4], "data": [1, 2, 3, 4]}]}).encode():
            "input 'A': its data does not fit",
        json.dumps({"inputs": [{"name": "A", "datatype": "FP32", "shape": [1, 4], "data": ["a", "b", "c", "d"]},
                               {"name": "B", "datatype": "FP32", "shape": [1, 4], "data": [1, 2, 3, 4]}]}).encode():
            "input 'A': its data does not fit",
        json.dumps({"inputs": [{"name": "A", "datatype": "NOPE", "shape": [1, 4], "data": [1, 2, 3, 4]}]}).encode():
            "datatype NOPE",
    }
    for body, words in cases.items():
        status, reply = _post(server, url, body)
        assert status == 400 and words in reply.get("error", ""), (body, status, reply)
    # The binary extension: a tensor size that overruns the body, and bytes no input claims.
    header = json.dumps({"inputs": [{"name": "A", "datatype": "FP32", "shape": [1, 4],
                                     "parameters": {"binary_data_size": 16}}]}).encode()
    for tail, words in ((b"\0" * 8, "binary_data_size 16 does not fit"), (b"\0" * 20, "4 bytes after the JSON")):
        status, reply = _post(server, url, header + tail, {"Inference-Header-Content-Length": str(len(header))})
        assert status == 400 and words in reply.get("error", ""), (tail, status, reply)
    # A chunked body (no Content-Length) over the limit.
    def chunks():
        for _ in range(MAX_BODY_BYTES // 65536 + 2):
            yield b" " * 65536
    conn = http.client.HTTPConnection("127.0.0.1", server.http_port, timeout=30)
    try:
        conn.request("POST", url, body=chunks(), headers={"Content-Type": "application/json"}, encode_chunked=True)
        response = conn.getresponse()
        assert response.status == 413, response.read()
        assert "--max-body-bytes" in json.loads(response.read())["error"]
    except (BrokenPipeError, ConnectionResetError):
        pass  # the server answered 413 and closed before the whole body was sent
    finally:
        conn.close()
    status, reply = _post(server, url, json.dumps({"inputs": [
        {"name": "A", "datatype": "FP32", "shape": [1, 4], "data": [1, 2, 3, 4]},
        {"name": "B", "datatype": "FP32", "shape": [1, 4], "data": [1, 1, 1, 1]}]}).encode())
    assert status == 200 and reply["outputs"][0]["data"] == [2, 3, 4, 5], reply


def test_batching_on_and_off_give_the_same_results(servers, sessions):
    """32 concurrent requests of 1 or 2 rows per model, over HTTP, to both servers: the same
    outputs as the session run on each request alone; the batching server ran batches."""
    requests = []
    for i in range(32):
        model = ("classifier", "arith")[i % 2]
        requests.append((model, _feeds(rows=1 + i % 3 // 2, seed=100 + i)[model]))
    expected = [sessions[m].run(None, feed) for m, feed in requests]
    for kind, server in servers.items():
        client = httpclient.InferenceServerClient(server.http_url, concurrency=16)
        try:
            pending = [client.async_infer(m, _inputs(httpclient, m, feed)) for m, feed in requests]
            results = [p.get_result() for p in pending]
        finally:
            client.close()
        for (model, _), want, result in zip(requests, expected, results):
            for arg, value in zip(sessions[model].get_outputs(), want):
                np.testing.assert_allclose(result.as_numpy(arg.name), value, rtol=1e-5, atol=1e-6,
                                           err_msg=f"{kind} server, model {model}")
    # The batching server logs each batched run (DEBUG); the other never batches.
    deadline = time.monotonic() + 5
    while "ran a batch of" not in servers["batching"].output(None) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert "ran a batch of" in servers["batching"].output(None)
    assert "ran a batch of" not in servers["unbatched"].output(None)
    assert "batching off (max_batch_size 1)" in servers["unbatched"].output(None)


def test_bad_model_directory_fails_clearly(tmp_path):
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "model.onnx").write_bytes(b"not an onnx model")
    run = subprocess.run([sys.executable, "-m", "trellis.serving", "--model-dir", str(tmp_path)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 1 and "model 'broken'" in run.stderr, run.stderr
    (tmp_path / "broken" / "model.onnx").unlink()
    run = subprocess.run([sys.executable, "-m", "trellis.serving", "--model-dir", str(tmp_path)],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and "model 'broken': no model.onnx" in run.stderr, run.stderr
