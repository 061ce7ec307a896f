#!/usr/bin/env python3
"""The cost of one Python call: trellis.InferenceSession.run against onnxruntime.InferenceSession.run.

For each model it times N calls of `run` from Python for both (median and p90 of each call's
wall time, after warm-up runs), and Trellis's engine time without Python (`session.bench`, the
same inputs, the GIL released): Trellis's Python-call overhead is its `run` median minus that.
The tiny model (one Relu on 16 floats) does almost no work, so there the whole call is overhead
for both engines. Models: the tiny one (built here with onnx.helper) and, where the test models
were exported (ctest's export_test_models, or tests/models/export_models.py), resnet50.

    .venv/bin/python bench/python/bench_overhead.py [--models-dir build/tests/models] [--calls 2000]
        [--json out.json]

Run it with the package importable: after `make python`, or with PYTHONPATH=build/python.
"""
import argparse
import json
import os
import platform
import statistics
import time

import numpy as np
import onnx
from onnx import TensorProto, helper

import trellis


def tiny_model():
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "tiny",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])])
    return helper.make_model(graph, opset_imports=[helper.make_operatorsetid("", 13)]).SerializeToString()


def time_calls(call, calls, warmup):
    for _ in range(warmup):
        call()
    times = []
    for _ in range(calls):
        start = time.perf_counter_ns()
        call()
        times.append((time.perf_counter_ns() - start) / 1000.0)
    times.sort()
    return {"median_us": statistics.median(times), "p90_us": times[int(0.9 * (len(times) - 1))],
            "min_us": times[0]}


def measure(name, model, feed, calls, warmup):
    import onnxruntime as ort

    session = trellis.InferenceSession(model)
    reference = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    result = {"model": name, "calls": calls, "trellis_backends": session.get_providers()}
    result["trellis_run"] = time_calls(lambda: session.run(None, feed), calls, warmup)
    result["onnxruntime_run"] = time_calls(lambda: reference.run(None, feed), calls, warmup)
    engine = session.bench(feed, iterations=calls, warmup=warmup)
    result["trellis_engine_median_us"] = engine["median_ms"] * 1000.0
    result["trellis_engine_min_us"] = engine["min_ms"] * 1000.0
    result["trellis_overhead_us"] = result["trellis_run"]["median_us"] - result["trellis_engine_median_us"]
    result["trellis_overhead_min_us"] = result["trellis_run"]["min_us"] - result["trellis_engine_min_us"]
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models-dir", default=os.path.join("build", "tests", "models"))
    parser.add_argument("--calls", type=int, default=2000, help="timed calls on the tiny model")
    parser.add_argument("--large-calls", type=int, default=30, help="timed calls on resnet50")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()

    import onnxruntime as ort

    rows = [measure("tiny (Relu, 1x16)", tiny_model(), {"x": np.ones((1, 16), np.float32)}, args.calls, 200)]
    resnet = os.path.join(args.models_dir, "resnet50_op17.onnx")
    if os.path.exists(resnet):
        x = np.random.default_rng(0).random((1, 3, 224, 224), dtype=np.float32)
        name = onnx.load(resnet, load_external_data=False).graph.input[0].name
        rows.append(measure("resnet50 (1x3x224x224)", resnet, {name: x}, args.large_calls, 5))
    else:
        print(f"resnet50: {resnet} not found (export it with ctest -R export_test_models); skipped")

    print(f"trellis {trellis.__version__}, onnxruntime {ort.__version__}, Python {platform.python_version()}, "
          f"{os.cpu_count()} CPUs")
    print(f"load average {os.getloadavg()[0]:.1f}; times in microseconds, median (min) of each call")
    print(f"{'model':<24} {'trellis run':>20} {'ORT run':>20} {'trellis engine':>20} {'trellis overhead':>20}")
    for r in rows:
        cells = [(r["trellis_run"]["median_us"], r["trellis_run"]["min_us"]),
                 (r["onnxruntime_run"]["median_us"], r["onnxruntime_run"]["min_us"]),
                 (r["trellis_engine_median_us"], r["trellis_engine_min_us"]),
                 (r["trellis_overhead_us"], r["trellis_overhead_min_us"])]
        print(f"{r['model']:<24} " + " ".join(f"{m:>10.1f} ({n:>7.1f})" for m, n in cells))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"trellis": trellis.__version__, "onnxruntime": ort.__version__, "results": rows}, f, indent=1)


if __name__ == "__main__":
    main()
