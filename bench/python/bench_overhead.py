#!/usr/bin/env python3
"""The cost of one Python call: trellis.InferenceSession.run against onnxruntime.InferenceSession.run.

For each model it times N rounds of: Trellis's `run` from Python, Trellis's engine alone on the
same inputs (`session.bench`, without Python, the GIL released), and ONNX Runtime's `run` from
Python (median, p90 and min of each, after warm-up runs). Trellis's Python-call overhead is each
round's `run` minus its engine time (median over the rounds).
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


def summary(values):
    values = sorted(values)
    return {"median_us": statistics.median(values), "p90_us": values[int(0.9 * (len(values) - 1))],
            "min_us": values[0]}


def measure(name, model, feed, calls, warmup, threads):
    """Rounds of three adjacent measurements (Trellis's run from Python, Trellis's engine alone,
    ONNX Runtime's run from Python), so that a busy machine's drift hits all three alike; the
    overhead is the median of each round's run minus engine."""
    import onnxruntime as ort

    session = trellis.InferenceSession(model, backend_options={"CpuAcc": {"NumThreads": threads}})
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    reference = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    for _ in range(warmup):
        session.run(None, feed)
        reference.run(None, feed)
    run_us, engine_us, ort_us, overhead_us = [], [], [], []
    for _ in range(calls):
        start = time.perf_counter_ns()
        session.run(None, feed)
        run_us.append((time.perf_counter_ns() - start) / 1000.0)
        engine_us.append(session.bench(feed, iterations=1, warmup=0)["times_ms"][0] * 1000.0)
        overhead_us.append(run_us[-1] - engine_us[-1])
        start = time.perf_counter_ns()
        reference.run(None, feed)
        ort_us.append((time.perf_counter_ns() - start) / 1000.0)
    return {"model": name, "calls": calls, "trellis_backends": session.get_providers(),
            "trellis_run": summary(run_us), "onnxruntime_run": summary(ort_us),
            "trellis_engine": summary(engine_us), "trellis_overhead": summary(overhead_us)}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models-dir", default=os.path.join("build", "tests", "models"))
    parser.add_argument("--calls", type=int, default=2000, help="timed calls on the tiny model")
    parser.add_argument("--large-calls", type=int, default=30, help="timed calls on resnet50")
    parser.add_argument("--threads", type=int, default=1,
                        help="threads of each engine (CpuAcc's NumThreads, ORT's intra_op_num_threads); one by "
                             "default, which keeps the comparison steady on a shared machine")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()

    import onnxruntime as ort

    rows = [measure("tiny (Relu, 1x16)", tiny_model(), {"x": np.ones((1, 16), np.float32)}, args.calls, 200,
                    args.threads)]
    resnet = os.path.join(args.models_dir, "resnet50_op17.onnx")
    if os.path.exists(resnet):
        x = np.random.default_rng(0).random((1, 3, 224, 224), dtype=np.float32)
        name = onnx.load(resnet, load_external_data=False).graph.input[0].name
        rows.append(measure("resnet50 (1x3x224x224)", resnet, {name: x}, args.large_calls, 5, args.threads))
    else:
        print(f"resnet50: {resnet} not found (export it with ctest -R export_test_models); skipped")

    print(f"trellis {trellis.__version__}, onnxruntime {ort.__version__}, Python {platform.python_version()}, "
          f"{os.cpu_count()} CPUs")
    print(f"{args.threads} thread(s) per engine, load average {os.getloadavg()[0]:.1f}; microseconds per call, "
          "median (min); the overhead is the median of each round's run minus engine")
    print(f"{'model':<24} {'trellis run':>20} {'ORT run':>20} {'trellis engine':>20} {'trellis overhead':>20}")
    for r in rows:
        cells = [r[k] for k in ("trellis_run", "onnxruntime_run", "trellis_engine")]
        print(f"{r['model']:<24} " + " ".join(f"{c['median_us']:>10.1f} ({c['min_us']:>7.1f})" for c in cells) +
              f" {r['trellis_overhead']['median_us']:>20.1f}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"trellis": trellis.__version__, "onnxruntime": ort.__version__, "results": rows}, f, indent=1)


if __name__ == "__main__":
    main()
