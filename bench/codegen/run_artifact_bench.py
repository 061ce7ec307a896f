#!/usr/bin/env python3
"""The onednn-target artifact (trellis codegen) against Trellis's CpuAcc and ONNX Runtime, in one
run: a benchmark, not a test.

Per model it generates the artifact (`trellis codegen MODEL --target onednn`), builds the timing
driver artifact_bench.cpp against it, and checks its output against PyTorch's (NAME.ref.npy).
Then, per thread count, it alternates the three engines for --rounds rounds (the order rotating
each round), each in its own process: the artifact (OMP_NUM_THREADS=T), `trellis bench --backends
CpuAcc,CpuRef --threads T`, and bench/cpu/ort_bench.py (intra-op threads T). It reports per engine
the best median latency over the rounds, the paired ratios (the median over the rounds of each
round's artifact/CpuAcc and artifact/ORT ratio of median latencies: the processes of a round ran
back to back, so these are the least disturbed by a shared machine), start-up time (the artifact's
constructor; Trellis's LoadNetwork; ORT's session creation; medians over the rounds), and the
artifact's size: the shared library its source compiles to (-O2, stripped) and its weights file.

  # once: export the models (see bench/cpu/run_bench.py)
  MODELS_DIR=bench/cpu/models /usr/bin/python3 bench/cpu/make_models.py --only resnet50,mobilenet_v2,bert_base_encoder
  python3 bench/codegen/run_artifact_bench.py [--threads 1,2] [--rounds 5] [--min-time 1.5] [--markdown FILE]
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench", "cpu"))
import run_bench  # noqa: E402  (trellis_once, ort_once, run_measured, cpu_model)

DEFAULT_MODELS = "resnet50,mobilenet_v2,bert_base_encoder"


def check(cmd, what):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("error: %s failed (%s):\n%s" % (what, " ".join(cmd), (p.stderr or p.stdout)[-3000:]))
    return p.stdout


def class_name(model):
    return "".join(part.capitalize() for part in model.split("_"))


def build_artifact(args, name, onnx_path):
    """Generates and builds the artifact of one model; returns (folder, class, bench binary, sizes)."""
    cls = class_name(name)
    folder = os.path.join(args.work, name)
    check([args.trellis, "codegen", onnx_path, "-o", folder, "--target", "onednn", "--name", cls], "trellis codegen")
    binary = os.path.join(folder, "artifact_bench")
    check([args.cxx, "-O2", "-std=c++17", "-fopenmp", "-I", folder, '-DARTIFACT_HEADER="%s.h"' % cls,
           "-DARTIFACT_CLASS=" + cls, os.path.join(HERE, "artifact_bench.cpp"), os.path.join(folder, cls + ".cpp"),
           "-ldnnl", "-o", binary], "compiling the artifact")
    library = os.path.join(folder, "lib%s.so" % cls)
    check([args.cxx, "-O2", "-std=c++17", "-fopenmp", "-shared", "-fPIC", "-s", "-I", folder,
           os.path.join(folder, cls + ".cpp"), "-ldnnl", "-o", library], "compiling the artifact as a shared library")
    sizes = {"library_bytes": os.path.getsize(library),
             "params_bytes": os.path.getsize(os.path.join(folder, cls + ".params"))}
    return folder, cls, binary, sizes


def artifact_once(binary, params, input_npy, threads, min_time, output=None):
    cmd = [binary, "--params", params, "--input", input_npy, "--min-time", str(min_time)]
    if output:
        cmd += ["--output", output]
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        raise RuntimeError("artifact failed: " + p.stderr.strip())
    return json.loads(p.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=DEFAULT_MODELS)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--min-time", type=float, default=1.5, help="seconds of timed runs per process")
    ap.add_argument("--models-dir", default=os.environ.get("MODELS_DIR") or os.path.join(ROOT, "bench", "cpu", "models"))
    ap.add_argument("--trellis", default=os.path.join(ROOT, "build", "bin", "trellis"))
    ap.add_argument("--backends", default="CpuAcc,CpuRef")
    ap.add_argument("--cxx", default="c++")
    ap.add_argument("--python", default=sys.executable, help="python with onnxruntime==1.30.0 and numpy")
    ap.add_argument("--work", default="/tmp/trellis-artifact-bench")
    ap.add_argument("--markdown", default="", help="write the summary table here")
    args = ap.parse_args()

    with open(os.path.join(args.models_dir, "manifest.json")) as f:
        entries = {e["name"]: e for e in json.load(f)["models"] if e.get("status") == "ok"}
    names = [m for m in args.models.split(",") if m]
    missing = [m for m in names if m not in entries]
    if missing:
        sys.exit("error: not exported in %s: %s" % (args.models_dir, ", ".join(missing)))
    threads_list = [int(t) for t in args.threads.split(",") if t]
    machine = "%s, %d logical CPUs" % (run_bench.cpu_model(), os.cpu_count() or 0)
    print("machine: %s; %s" % (machine, time.strftime("%Y-%m-%d %H:%M")), flush=True)

    rows = []
    for name in names:
        onnx_path = os.path.join(args.models_dir, entries[name]["onnx"])
        input_npy = os.path.join(args.models_dir, name + ".input.npy")
        folder, cls, binary, sizes = build_artifact(args, name, onnx_path)
        params = os.path.join(folder, cls + ".params")
        out_npy = os.path.join(folder, "output.npy")
        artifact_once(binary, params, input_npy, 1, 0.1, out_npy)
        got = np.load(out_npy).astype(np.float64).ravel()
        ref = np.load(os.path.join(args.models_dir, name + ".ref.npy")).astype(np.float64).ravel()
        rel_l2 = float(np.linalg.norm(got - ref) / np.linalg.norm(ref))
        print("%s: artifact %s, library %.1f KiB, weights %.1f MiB, rel. L2 vs PyTorch %.1e" %
              (name, cls, sizes["library_bytes"] / 1024.0, sizes["params_bytes"] / 2**20, rel_l2), flush=True)
        for threads in threads_list:
            probe = run_bench.trellis_once(args, onnx_path, threads, 3)
            iterations = max(10, int(math.ceil(args.min_time * 1000.0 / max(probe["median_ms"], 0.01))))
            runs = {"artifact": [], "cpuacc": [], "ort": []}
            engines = ["artifact", "cpuacc", "ort"]
            for r in range(args.rounds):
                for engine in engines[r % 3:] + engines[:r % 3]:
                    if engine == "artifact":
                        m = artifact_once(binary, params, input_npy, threads, args.min_time)
                        m["load_ms"] = m["startup_ms"]
                    elif engine == "cpuacc":
                        m = run_bench.trellis_once(args, onnx_path, threads, iterations)
                    else:
                        m = run_bench.ort_once(args, name, threads)
                    runs[engine].append(m)
                    print("  %-8s %-18s t=%d round %d: median %8.2f ms  start-up %7.1f ms" %
                          (engine, name, threads, r, m["median_ms"], m["load_ms"]), flush=True)
            best = {e: min(m["median_ms"] for m in runs[e]) for e in engines}
            startup = {e: statistics.median(m["load_ms"] for m in runs[e]) for e in engines}
            paired = {e: statistics.median(a["median_ms"] / o["median_ms"] for a, o in zip(runs["artifact"], runs[e]))
                      for e in ("cpuacc", "ort")}
            row = dict(model=name, threads=threads, best=best, startup=startup, paired=paired, rel_l2=rel_l2, **sizes)
            rows.append(row)
            print("%-18s t=%d  artifact %8.2f  CpuAcc %8.2f  ORT %8.2f ms  artifact/CpuAcc %.2f  artifact/ORT %.2f" %
                  (name, threads, best["artifact"], best["cpuacc"], best["ort"], paired["cpuacc"], paired["ort"]), flush=True)

    table = ["| model | threads | artifact (ms) | CpuAcc (ms) | ORT (ms) | paired artifact/CpuAcc | paired artifact/ORT | "
             "start-up artifact / CpuAcc / ORT (ms) | artifact library (KiB) | weights file (MiB) | rel. L2 vs PyTorch |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        table.append("| %s | %d | %.2f | %.2f | %.2f | **%.2f** | %.2f | %.0f / %.0f / %.0f | %.0f | %.1f | %.1e |" %
                     (r["model"], r["threads"], r["best"]["artifact"], r["best"]["cpuacc"], r["best"]["ort"],
                      r["paired"]["cpuacc"], r["paired"]["ort"], r["startup"]["artifact"], r["startup"]["cpuacc"],
                      r["startup"]["ort"], r["library_bytes"] / 1024.0, r["params_bytes"] / 2**20, r["rel_l2"]))
    print("\n".join(table))
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("machine: %s; measured %s; best median of %d rotating rounds, %.1f s each; paired ratio: the "
                    "median over the rounds of each round's ratio of median latencies\n\n"
                    % (machine, time.strftime("%Y-%m-%d"), args.rounds, args.min_time))
            f.write("\n".join(table) + "\n")


if __name__ == "__main__":
    main()
