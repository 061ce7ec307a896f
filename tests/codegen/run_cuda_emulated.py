#!/usr/bin/python3
"""Cuda-target artifacts of exported models run under the host emulation of CUDA, cuDNN and cuBLASLt
(cuda_emulation/), against CpuRef, on a machine without a GPU.

For each model BASE.onnx of --models with saved inputs (BASE.input_<k>.pb): CpuRef's outputs;
trellis codegen --target cuda --with-main; the kernels file made host C++ (emulate_kernels.py); the
artifact, its program and the emulation compiled with the CUDA toolkit's headers (no CUDA library);
the program run on the saved inputs; every output within --tolerance (1e-4) relative L2 error of
CpuRef's. What it checks: the generated code - memory plan, the configurations of the cuDNN and
cuBLASLt calls (the emulation aborts on inconsistent shapes, TF32 compute, tensor-op algorithms)
and the artifact's own kernels. Not what it checks: cuDNN, cuBLASLt and the GPU themselves
(bench/gpu/device_run.sh's codegen stage runs the artifacts on one). Emulated convolutions are naive
loops: resnet50 takes minutes.

A model the target refuses is "unsupported"; anything else that goes wrong is a FAIL. Exits 1 when a
model failed or fewer passed than --min-pass; 77 (ctest's skip) without the CUDA toolkit's headers.

  tests/codegen/run_cuda_emulated.py --trellis build/bin/trellis --models build/tests/models \\
      --work /tmp/cg-emulated [--filter REGEX]
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from device_codegen import load_pb, rel_l2  # noqa: E402
from run_codegen_cases import CUDA  # noqa: E402

EMULATION = os.path.join(HERE, "cuda_emulation")


def compile_cmd(args, sources, output):
    return [args.cxx, "-std=c++20", "-O2", "-w", "-isystem", os.path.join(CUDA, "include"), "-I", EMULATION] + sources + [
        "-o", output, "-lpthread"]


def run_model(base, args, emulation_object):
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
        n, a = load_pb("%s.input_%d.pb" % (base, k))
        inputs.append((n if n in graph_inputs else graph_inputs[k], "%s.input_%d.pb" % (base, k), a))
        k += 1
    cmd = [args.trellis, "codegen", base + ".onnx", "-o", work, "--target", "cuda", "--with-main", "--name", "Net"]
    for n, _, a in inputs:
        if a.shape:
            cmd += ["--shape", "%s=%s" % (n, "x".join(str(d) for d in a.shape))]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        message = (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1]
        return result("unsupported" if "cannot generate" in message else "FAIL", "codegen: " + message)
    ref = os.path.join(work, "ref")
    cmd = [args.trellis, "run", base + ".onnx", "--backends", "CpuRef", "--output-dir", ref]
    for n, path, _ in inputs:
        cmd += ["--input", "%s=%s" % (n, path)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return result("FAIL", "CpuRef: " + (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1])
    host = os.path.join(work, "Net_kernels_host.cpp")
    with open(host, "w") as f:
        r = subprocess.run([sys.executable, os.path.join(EMULATION, "emulate_kernels.py"), os.path.join(work, "Net_kernels.cu")],
                           stdout=f, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        return result("FAIL", "emulate_kernels.py: " + r.stderr.strip()[-300:])
    exe = os.path.join(work, "Net_main_emulated")
    r = subprocess.run(compile_cmd(args, [os.path.join(work, "Net.cpp"), os.path.join(work, "Net_main.cpp"), host, emulation_object], exe),
                       capture_output=True, text=True)
    if r.returncode != 0:
        lines = [l for l in r.stderr.splitlines() if "error" in l] or r.stderr.splitlines() or ["exit %d" % r.returncode]
        return result("FAIL", "compile: " + lines[0])
    cmd = [exe, "--params", os.path.join(work, "Net.params"), "--output-dir", os.path.join(work, "out")]
    for k, (n, _, a) in enumerate(inputs):
        path = os.path.join(work, "input_%d.npy" % k)
        np.save(path, a)
        cmd += ["--input", "%s=%s" % (n, path)]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return result("FAIL", "run: timed out after %d s" % args.timeout)
    if r.returncode != 0:
        return result("FAIL", "run: exit %d: %s" % (r.returncode, (r.stderr.strip().splitlines() or [""])[-1]))
    worst = 0.0
    for i, n in enumerate(graph_outputs):
        _, want = load_pb(os.path.join(ref, "output_%d.pb" % i))
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
    ap.add_argument("--models", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--filter", default="")
    ap.add_argument("--cxx", default=os.environ.get("CXX", "c++"))
    ap.add_argument("--tolerance", type=float, default=1e-4)
    ap.add_argument("--timeout", type=int, default=1800)
    ap.add_argument("--min-pass", type=int, default=0)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    missing = [h for h in ("cuda_runtime.h", "cudnn.h", "cublasLt.h") if not os.path.exists(os.path.join(CUDA, "include", h))]
    if missing:
        print("skipped: no CUDA toolkit headers (%s not in %s/include; set CUDA_HOME)" % (", ".join(missing), CUDA))
        return 77
    bases = sorted(p[:-len(".onnx")] for p in glob.glob(os.path.join(args.models, "*.onnx"))
                   if os.path.exists(p[:-len(".onnx")] + ".input_0.pb"))
    if args.filter:
        bases = [b for b in bases if re.search(args.filter, os.path.basename(b))]
    if not bases:
        print("error: no exported models in %s" % args.models, file=sys.stderr)
        return 1
    os.makedirs(args.work, exist_ok=True)
    emulation_object = os.path.join(args.work, "CudaHostEmulation.o")
    r = subprocess.run(compile_cmd(args, ["-c", os.path.join(EMULATION, "CudaHostEmulation.cpp")], emulation_object),
                       capture_output=True, text=True)
    if r.returncode != 0:
        print("error: compiling the emulation: %s" % r.stderr.strip()[-1000:], file=sys.stderr)
        return 1
    counts = {"pass": 0, "FAIL": 0, "unsupported": 0}
    for base in bases:
        res = run_model(base, args, emulation_object)
        counts[res["status"]] += 1
        line = "%s: %s" % (res["model"], res["status"])
        if res["rel_l2"] is not None:
            line += " (rel. L2 %.1e)" % res["rel_l2"]
        if res["reason"]:
            line += ": " + res["reason"]
        print(line, flush=True)
    print("target cuda, emulated on the host: %d models passed, %d failed, %d unsupported (of %d)" % (
        counts["pass"], counts["FAIL"], counts["unsupported"], len(bases)))
    if counts["FAIL"]:
        return 1
    if counts["pass"] < args.min_pass:
        print("error: %d models passed, fewer than the %d expected" % (counts["pass"], args.min_pass), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
