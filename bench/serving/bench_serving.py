#!/usr/bin/env python3
"""Load benchmark of trellis.serving: N concurrent clients against one model, with and without
server-side batching.

For each mode the script starts ``python -m trellis.serving`` (this interpreter) on free loopback
ports over a model repository made in a temporary directory, warms it up, then runs
``--clients`` threads, each with its own tritonclient connection (``--protocol`` http or grpc)
sending one request of one row after another for ``--duration`` seconds. It reports requests per second, p50/p90/p99 latency
(client side, whole call) and the failed-request count, and writes them as JSON with the machine
(CPU model, cores, load average before and after).

The model's first input and output dim is made symbolic ("batch"; the copy in the temporary
repository, value_info dropped) so that the batching server can stack requests; the model must
be batch-independent along that dim (torchvision's mobilenet_v2 and resnet50 are).

Usage (the .venv of scripts/install-deps.sh has kserve and tritonclient; the model comes from
bench/cpu/make_models.py)::

    MODELS_DIR=bench/cpu/models /usr/bin/python3 bench/cpu/make_models.py --only mobilenet_v2
    PYTHONPATH=build/python .venv/bin/python bench/serving/bench_serving.py \\
        --model bench/cpu/models/mobilenet_v2.onnx --clients 8 --duration 60 --json serving.json

Clients and server share the machine: on a small one the clients' own CPU time is part of what
is measured.
"""
import argparse
import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
import onnx


def machine():
    model = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"cpu": model, "cores": os.cpu_count(), "loadavg": os.getloadavg()}


def batch_symbolic_copy(src, dst):
    """``src`` with its inputs' and outputs' first dim symbolic ('batch') and value_info dropped."""
    model = onnx.load(src)
    for value in list(model.graph.input) + list(model.graph.output):
        dims = value.type.tensor_type.shape.dim
        if dims:
            dims[0].ClearField("dim_value")
            dims[0].dim_param = "batch"
    del model.graph.value_info[:]
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    onnx.save(model, dst)
    first = model.graph.input[0]
    shape = [d.dim_value for d in first.type.tensor_type.shape.dim]
    return first.name, shape[1:]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(repo, flags, log_path):
    """The server process, its log file, and its HTTP and gRPC addresses."""
    http_port, grpc_port = free_port(), free_port()
    cmd = [sys.executable, "-m", "trellis.serving", "--model-dir", repo, "--http-port", str(http_port),
           "--grpc-port", str(grpc_port), *flags]
    log = open(log_path, "w")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    return proc, log, f"127.0.0.1:{http_port}", f"127.0.0.1:{grpc_port}"


def client_module(protocol):
    if protocol == "grpc":
        import tritonclient.grpc as module
    else:
        import tritonclient.http as module
    return module


def make_client(module, url, timeout):
    if module.__name__.endswith("grpc"):
        return module.InferenceServerClient(url)
    return module.InferenceServerClient(url, connection_timeout=timeout, network_timeout=timeout)


def wait_ready(proc, url, log_path, timeout=300):
    import tritonclient.http as httpclient

    client = httpclient.InferenceServerClient(url)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"bench_serving: the server exited with {proc.returncode}; see {log_path}")
        try:
            if client.is_server_ready():
                return
        except Exception:  # noqa: BLE001 - not listening yet
            pass
        time.sleep(0.2)
    sys.exit(f"bench_serving: the server was not ready after {timeout} s; see {log_path}")


def run_load(module, url, model, input_name, sample_shape, clients, duration, seed=0):
    latencies = [[] for _ in range(clients)]
    failures = [0] * clients
    errors = {}
    stop = time.monotonic() + duration

    def client_loop(i):
        rng = np.random.default_rng(seed + i)
        x = rng.random((1, *sample_shape), dtype=np.float32)
        client = make_client(module, url, 120)
        inp = module.InferInput(input_name, list(x.shape), "FP32")
        inp.set_data_from_numpy(x)
        try:
            while time.monotonic() < stop:
                t0 = time.perf_counter()
                try:
                    client.infer(model, [inp])
                    latencies[i].append(time.perf_counter() - t0)
                except Exception as e:  # noqa: BLE001 - counted, the load goes on
                    failures[i] += 1
                    errors.setdefault(type(e).__name__, str(e)[:200])
        finally:
            client.close()

    threads = [threading.Thread(target=client_loop, args=(i,)) for i in range(clients)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - t0
    all_ms = np.array([v for per in latencies for v in per]) * 1000.0
    done = len(all_ms)
    return {
        "requests_ok": int(done), "failed": int(sum(failures)), "seconds": round(elapsed, 2),
        "throughput_rps": round(done / elapsed, 2),
        "p50_ms": round(float(np.percentile(all_ms, 50)), 2) if done else None,
        "p90_ms": round(float(np.percentile(all_ms, 90)), 2) if done else None,
        "p99_ms": round(float(np.percentile(all_ms, 99)), 2) if done else None,
        "errors": errors,
    }


def warm_up(module, url, model, input_name, sample_shape, max_rows):
    """One request of each row count the server may run (1..max_rows), so that the timed run
    does not include Trellis specializing the network for a new batch size."""
    client = make_client(module, url, 300)
    try:
        for rows in range(1, max_rows + 1):
            x = np.zeros((rows, *sample_shape), np.float32)
            inp = module.InferInput(input_name, list(x.shape), "FP32")
            inp.set_data_from_numpy(x)
            client.infer(model, [inp])
    finally:
        client.close()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="bench/cpu/models/mobilenet_v2.onnx", help="the .onnx model")
    p.add_argument("--clients", type=int, default=8, help="concurrent clients (default 8)")
    p.add_argument("--duration", type=float, default=60.0, help="seconds of load per mode (default 60)")
    p.add_argument("--modes", default="unbatched,batching", help="comma-separated: unbatched, batching")
    p.add_argument("--max-batch-size", type=int, default=8, help="the batching server's --max-batch-size")
    p.add_argument("--max-latency-ms", type=float, default=5.0, help="the batching server's --max-latency-ms")
    p.add_argument("--backends", default=None, help="the servers' --backends (default: Trellis's default)")
    p.add_argument("--protocol", default="http", choices=["http", "grpc"],
                   help="the clients' protocol (default http; tritonclient sends tensors as binary data)")
    p.add_argument("--json", default=None, help="write the results here as JSON")
    args = p.parse_args()

    name = os.path.splitext(os.path.basename(args.model))[0]
    module = client_module(args.protocol)
    results = {"model": name, "clients": args.clients, "duration_s": args.duration, "protocol": args.protocol,
               "machine_before": machine(), "modes": {}}
    with tempfile.TemporaryDirectory(prefix="trellis-serving-bench-") as tmp:
        repo = os.path.join(tmp, "models")
        input_name, sample_shape = batch_symbolic_copy(args.model, os.path.join(repo, name, "model.onnx"))
        for mode in [m for m in args.modes.split(",") if m]:
            if mode not in ("unbatched", "batching"):
                sys.exit(f"bench_serving: unknown mode {mode!r} (unbatched, batching)")
            flags = ["--max-batch-size", str(args.max_batch_size if mode == "batching" else 1),
                     "--max-latency-ms", str(args.max_latency_ms)]
            if args.backends:
                flags += ["--backends", args.backends]
            log_path = os.path.join(tmp, f"{mode}.log")
            proc, log, http_url, grpc_url = start_server(repo, flags, log_path)
            url = grpc_url if args.protocol == "grpc" else http_url
            try:
                wait_ready(proc, http_url, log_path)
                warm_up(module, url, name, input_name, sample_shape, args.max_batch_size if mode == "batching" else 1)
                print(f"[{mode}, {args.protocol}] {args.clients} clients for {args.duration:g} s ...", flush=True)
                r = run_load(module, url, name, input_name, sample_shape, args.clients, args.duration)
            finally:
                proc.terminate()
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                log.close()
            r["server_flags"] = flags
            results["modes"][mode] = r
            print(f"[{mode}, {args.protocol}] {r['throughput_rps']} req/s, p50 {r['p50_ms']} ms, p99 {r['p99_ms']} ms, "
                  f"{r['requests_ok']} ok, {r['failed']} failed {r['errors'] or ''}", flush=True)
    results["machine_after"] = machine()
    m = results["machine_before"]
    print(f"machine: {m['cpu']}, {m['cores']} cores, load average before {m['loadavg']}, "
          f"after {results['machine_after']['loadavg']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
