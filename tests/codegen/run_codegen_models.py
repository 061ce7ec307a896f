#!/usr/bin/python3
"""Generate, compile and run code-generator artifacts of exported models, against CpuRef.

For each model BASE.onnx of --models that has saved inputs (BASE.input_<k>.pb, as
tests/models/export_models.py writes them):

  1. CpuRef's outputs: trellis run BASE.onnx --backends CpuRef --input NAME=BASE.input_<k>.pb ...;
  2. trellis codegen BASE.onnx --target T --with-main (every input pinned to its saved shape);
  3. c++ -std=c++17 -Wall -Wextra -Werror ... (the target's libraries), then <Name>_main on the
     saved inputs;
  4. every output against CpuRef's: the same shape, relative L2 error at most --tolerance (1e-4).

A model the target refuses (the generator names the layer and why) is "unsupported"; anything else
that goes wrong is a FAIL. --compile-only stops after step 3's compile (a pass is a model that
compiled). The cuda target needs the CUDA toolkit and cuDNN, and to run, a GPU: without them the
script prints why and exits 77 (ctest's skip). Prints one line per model with its error, and a count; exits 1 when a
model failed or fewer passed than --min-pass.

  /usr/bin/python3 tests/codegen/run_codegen_models.py --trellis build/bin/trellis --target soft \\
      --models build/tests/models --work /tmp/cg-models [--filter REGEX] [--jobs 2]
"""
import argparse
import concurrent.futures
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_codegen_cases import TARGET_LIBRARIES, compile_artifact, missing_gpu, missing_toolkit  # noqa: E402


def load_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t


def rel_l2(got, want):
    g = got.astype(np.float64).ravel()
    w = want.astype(np.float64).ravel()
    denom = np.linalg.norm(w)
    return float(np.linalg.norm(g - w) / denom) if denom > 0 else float(np.linalg.norm(g - w))


def run_model(base, args):
    name = os.path.basename(base)
    work = os.path.join(args.work, name)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    start = time.time()

    def result(status, reason="", error=None):
        if status == "pass" and not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        return {"model": name, "status": status, "reason": reason, "rel_l2": error, "s": round(time.time() - start, 1)}

    model = onnx.load(base + ".onnx", load_external_data=False)
    initializers = {i.name for i in model.graph.initializer}
    graph_inputs = [i.name for i in model.graph.input if i.name not in initializers]
    graph_outputs = [o.name for o in model.graph.output]
    inputs = []
    k = 0
    while os.path.exists("%s.input_%d.pb" % (base, k)):
        t = load_pb("%s.input_%d.pb" % (base, k))
        n = t.name if t.name in graph_inputs else graph_inputs[k]
        inputs.append((n, "%s.input_%d.pb" % (base, k), numpy_helper.to_array(t)))
        k += 1

    ref_dir = os.path.join(work, "ref")
    cmd = [args.trellis, "run", base + ".onnx", "--backends", "CpuRef", "--output-dir", ref_dir]
    for n, path, _ in inputs:
        cmd += ["--input", "%s=%s" % (n, path)]
    r = subprocess.run(cmd, capture_output=True, text=True) if not args.compile_only else None
    if r is not None and r.returncode != 0:
        return result("FAIL", "CpuRef: " + (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1])

    cmd = [args.trellis, "codegen", base + ".onnx", "-o", work, "--target", args.target, "--with-main", "--name", "Net"]
    for n, _, a in inputs:
        if a.shape:
            cmd += ["--shape", "%s=%s" % (n, "x".join(str(d) for d in a.shape))]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        message = (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1]
        refusal = "cannot generate" in message or "shapes are decided when it runs" in message
        return result("unsupported" if refusal and r.returncode == 1 else "FAIL", "codegen: " + message)

    error = compile_artifact(args.target, work, args.cxx, args.opt)
    if error:
        return result("FAIL", "compile: " + error)
    if args.compile_only:
        return result("pass", "compiled (not run: --compile-only)")

    run_cmd = [os.path.join(work, "Net_main"), "--output-dir", os.path.join(work, "out")]
    for k, (n, _, a) in enumerate(inputs):
        path = os.path.join(work, "input_%d.npy" % k)
        np.save(path, a)
        run_cmd += ["--input", "%s=%s" % (n, path)]
    r = subprocess.run(run_cmd, capture_output=True, text=True, timeout=args.timeout)
    if r.returncode != 0:
        return result("FAIL", "run: exit %d: %s" % (r.returncode, (r.stderr.strip().splitlines() or [""])[-1]))
    worst = 0.0
    for i, n in enumerate(graph_outputs):
        want = numpy_helper.to_array(load_pb(os.path.join(ref_dir, "output_%d.pb" % i)))
        path = os.path.join(work, "out", n.replace("/", "_") + ".npy")
        if not os.path.exists(path):
            return result("FAIL", "output '%s' was not written" % n)
        got = np.load(path)
        if got.shape != want.shape:
            return result("FAIL", "output '%s': shape %s, CpuRef's %s" % (n, got.shape, want.shape))
        if want.dtype.kind != "f":
            if not np.array_equal(got, want):
                return result("FAIL", "output '%s': %d elements differ from CpuRef's" % (n, int((got != want).sum())))
            continue
        e = rel_l2(got, want)
        worst = max(worst, e)
        if not e <= args.tolerance:
            return result("FAIL", "output '%s': relative L2 error %.2e against CpuRef (limit %.0e)" % (n, e, args.tolerance), e)
    return result("pass", "", worst)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trellis", required=True)
    ap.add_argument("--target", default="soft", choices=sorted(TARGET_LIBRARIES))
    ap.add_argument("--models", required=True, help="folder of exported models (BASE.onnx, BASE.input_<k>.pb)")
    ap.add_argument("--work", required=True)
    ap.add_argument("--filter", default="")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--cxx", default=os.environ.get("CXX", "c++"))
    ap.add_argument("--opt", default="-O1")
    ap.add_argument("--tolerance", type=float, default=1e-4, help="relative L2 error limit against CpuRef")
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--min-pass", type=int, default=0)
    ap.add_argument("--summary-json", default="")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--compile-only", action="store_true",
                    help="generate and compile each artifact, do not run it (a pass is a model that compiled)")
    args = ap.parse_args()

    why = missing_toolkit(args.target) or (missing_gpu() if args.target == "cuda" and not args.compile_only else "")
    if why:
        print("skipped: %s" % why)
        return 77

    bases = sorted(p[:-len(".onnx")] for p in glob.glob(os.path.join(args.models, "*.onnx"))
                   if os.path.exists(p[:-len(".onnx")] + ".input_0.pb"))
    if args.filter:
        rx = re.compile(args.filter)
        bases = [b for b in bases if rx.search(os.path.basename(b))]
    if not bases:
        print("error: no exported models in %s" % args.models, file=sys.stderr)
        return 1
    os.makedirs(args.work, exist_ok=True)
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for res in pool.map(lambda b: run_model(b, args), bases):
            results.append(res)
            line = "%s: %s" % (res["model"], res["status"])
            if res["rel_l2"] is not None:
                line += " (rel. L2 %.1e)" % res["rel_l2"]
            if res["reason"]:
                line += ": " + res["reason"]
            print(line, flush=True)
    counts = {s: sum(1 for r in results if r["status"] == s) for s in ("pass", "FAIL", "unsupported")}
    print("target %s: %d models passed, %d failed, %d unsupported (of %d)" % (
        args.target, counts["pass"], counts["FAIL"], counts["unsupported"], len(results)))
    if args.summary_json:
        with open(args.summary_json, "w") as f:
            json.dump({"target": args.target, "models": results}, f, indent=1)
    if counts["FAIL"]:
        return 1
    if counts["pass"] < args.min_pass:
        print("error: %d models passed, fewer than the %d expected" % (counts["pass"], args.min_pass), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
