#!/usr/bin/python3
"""Generate, compile and run code-generator artifacts for ONNX test cases, as onnx2c's own suite does.

Each case is a folder holding model.onnx and test_data_set_0/ (input_<i>.pb, output_<i>.pb): the ONNX
backend node tests (Debian's libonnx-testdata) or Trellis's per-op cases (tests/ops/). For each:

  1. trellis codegen model.onnx -o WORK/<case> --target T --with-main --shape NAME=... (every input
     pinned to its test data's shape);
  2. c++ -std=c++17 -Wall -Wextra -Werror ... <Name>.cpp <Name>_main.cpp (the target's libraries);
  3. <Name>_main --input NAME=FILE.npy ... --output-dir OUT;
  4. every OUT/<output>.npy against output_<i>.pb: the same type and shape; floats within
     |got - want| <= atol + rtol * |want| (NaN matches NaN), everything else exactly.

A case the target refuses (the generator names the layer and why, or the importer cannot read the
model) is "unsupported"; a generated file that does not compile, a crash, an error or a wrong value
is a FAIL. Prints one line per case and a count; exits 1 when a case failed, or when fewer cases
passed than --min-pass. The cuda target's cases need the CUDA toolkit and cuDNN (nvcc compiles the
kernels) and a GPU: without them the script prints why and exits 77 (ctest's skip).

  /usr/bin/python3 tests/codegen/run_codegen_cases.py --trellis build/bin/trellis --target soft \\
      --cases /usr/share/libonnx-testdata/data/node --work /tmp/cg-node [--filter REGEX] [--jobs 2]
"""
import argparse
import concurrent.futures
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


def cuda_home():
    """The CUDA toolkit's folder: $CUDA_HOME, else nvcc's on PATH, else /usr/local/cuda."""
    if os.environ.get("CUDA_HOME"):
        return os.environ["CUDA_HOME"]
    nvcc = shutil.which("nvcc")
    return os.path.dirname(os.path.dirname(os.path.realpath(nvcc))) if nvcc else "/usr/local/cuda"


CUDA = cuda_home()
# Compiler arguments a target's artifacts need beyond the standard library. A cuda artifact also
# needs its <Name>_kernels.cu compiled by nvcc (compile_artifact does that).
TARGET_LIBRARIES = {
    "soft": [],
    "onednn": ["-fopenmp", "-ldnnl"],
    # TRELLIS_CUDA_INCLUDE: a folder of headers to add (cuDNN's, where the toolkit lacks them);
    # TRELLIS_CUDA_LINK: link arguments replacing these (cuDNN and cuBLASLt as versioned
    # libraries only, as PyTorch's wheels hold them: -l:libcudnn.so.9).
    "cuda": ["-isystem", os.path.join(CUDA, "include")]
            + (["-isystem", os.environ["TRELLIS_CUDA_INCLUDE"]] if os.environ.get("TRELLIS_CUDA_INCLUDE") else [])
            + (os.environ.get("TRELLIS_CUDA_LINK", "").split()
               or ["-L" + os.path.join(CUDA, "lib64"), "-lcudnn", "-lcublasLt", "-lcudart_static", "-ldl", "-lrt", "-lpthread"]),
}
# nvcc's arguments for a cuda artifact's kernels: Hopper code (H100/H200) and PTX for the rest,
# every warning an error.
NVCC_FLAGS = ["-std=c++17", "-O2", "-gencode", "arch=compute_90,code=sm_90", "-gencode", "arch=compute_75,code=compute_75",
              "-Werror", "all-warnings", "-Xcompiler", "-Wall,-Wextra,-Werror"]


def missing_toolkit(target):
    """Why artifacts of `target` cannot be built here ("" when they can): the cuda target needs
    nvcc and cuDNN's header."""
    if target != "cuda":
        return ""
    if not os.path.exists(os.path.join(CUDA, "bin", "nvcc")):
        return "no CUDA toolkit (no %s/bin/nvcc; set CUDA_HOME)" % CUDA
    if not any(os.path.exists(os.path.join(d, "cudnn.h"))
               for d in (os.path.join(CUDA, "include"), os.environ.get("TRELLIS_CUDA_INCLUDE", ""))):
        return "no cuDNN header (%s/include/cudnn.h; or set TRELLIS_CUDA_INCLUDE)" % CUDA
    return ""


def missing_gpu():
    """Why no CUDA device can run here, in the driver's words ("" when one can)."""
    import ctypes
    try:
        driver = ctypes.CDLL("libcuda.so.1")
    except OSError as e:
        return "no CUDA driver (%s)" % e
    status = driver.cuInit(0)
    if status != 0:
        text = ctypes.c_char_p()
        driver.cuGetErrorString(status, ctypes.byref(text))
        return "the CUDA driver: %s (cuInit error %d)" % ((text.value or b"?").decode(), status)
    count = ctypes.c_int(0)
    driver.cuDeviceGetCount(ctypes.byref(count))
    return "" if count.value > 0 else "the CUDA driver reports no device"


def compile_artifact(target, work, cxx, opt, extra_sources=(), extra_flags=(), output="Net_main", name="Net"):
    """Compiles <name>.cpp (and <name>_main.cpp when there is one, and `extra_sources`) into `output`
    with -Wall -Wextra -Werror, and a cuda artifact's kernels with nvcc first; returns the first
    error line, or ""."""
    objects = []
    if target == "cuda":
        obj = os.path.join(work, name + "_kernels.o")
        r = subprocess.run([os.path.join(CUDA, "bin", "nvcc")] + NVCC_FLAGS + ["-c", os.path.join(work, name + "_kernels.cu"), "-o", obj],
                           capture_output=True, text=True)
        if r.returncode != 0:
            lines = [l for l in (r.stderr + r.stdout).splitlines() if "error" in l] or r.stderr.splitlines() or ["exit %d" % r.returncode]
            return "nvcc: " + lines[0]
        objects.append(obj)
    sources = [os.path.join(work, name + ".cpp")]
    if os.path.exists(os.path.join(work, name + "_main.cpp")):
        sources.append(os.path.join(work, name + "_main.cpp"))
    cmd = ([cxx, "-std=c++17", opt, "-Wall", "-Wextra", "-Werror"] + list(extra_flags) + ["-o", os.path.join(work, output)]
           + sources + list(extra_sources) + objects + TARGET_LIBRARIES[target])
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        lines = [l for l in r.stderr.splitlines() if "error" in l] or r.stderr.splitlines() or ["exit %d" % r.returncode]
        return lines[0]
    return ""


def case_dirs(roots, pattern):
    found = []
    for root in roots:
        if os.path.exists(os.path.join(root, "model.onnx")):
            found.append(root)
            continue
        for name in sorted(os.listdir(root)):
            d = os.path.join(root, name)
            if os.path.exists(os.path.join(d, "model.onnx")) and os.path.isdir(os.path.join(d, "test_data_set_0")):
                found.append(d)
    if pattern:
        rx = re.compile(pattern)
        found = [d for d in found if rx.search(os.path.basename(d))]
    return found


def load_set(folder, prefix):
    tensors = []
    i = 0
    while os.path.exists(os.path.join(folder, "%s_%d.pb" % (prefix, i))):
        t = onnx.TensorProto()
        with open(os.path.join(folder, "%s_%d.pb" % (prefix, i)), "rb") as f:
            t.ParseFromString(f.read())
        tensors.append(t)
        i += 1
    return tensors


def compare(got, want, rtol, atol):
    if got.shape != want.shape:
        return "shape %s, expected %s" % (got.shape, want.shape)
    if got.dtype != want.dtype:
        return "type %s, expected %s" % (got.dtype, want.dtype)
    if want.dtype.kind == "f":
        g = got.astype(np.float64)
        w = want.astype(np.float64)
        both_nan = np.isnan(g) & np.isnan(w)
        same_inf = np.isinf(w) & (g == w)
        ok = both_nan | same_inf | (np.abs(g - w) <= atol + rtol * np.abs(w))
    else:
        ok = got == want
    if ok.all():
        return ""
    bad = np.argwhere(~ok.reshape(want.shape) if want.shape else ~ok)
    first = tuple(bad[0]) if len(bad) else ()
    return "%d of %d elements differ; first at %s: got %r, expected %r" % (
        int((~ok).sum()), ok.size, list(first), got[first] if got.shape else got, want[first] if want.shape else want)


def run_case(case, args):
    name = os.path.basename(case.rstrip("/"))
    work = os.path.join(args.work, name)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    start = time.time()

    def result(status, reason=""):
        if status == "pass" and not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        return {"case": name, "status": status, "reason": reason, "s": round(time.time() - start, 2)}

    model = onnx.load(os.path.join(case, "model.onnx"), load_external_data=False)
    initializers = {i.name for i in model.graph.initializer}
    graph_inputs = [i.name for i in model.graph.input if i.name not in initializers]
    graph_outputs = [o.name for o in model.graph.output]
    data = os.path.join(case, "test_data_set_0")
    inputs = load_set(data, "input")
    outputs = load_set(data, "output")
    named_inputs = []
    for i, t in enumerate(inputs):
        n = t.name if t.name in graph_inputs else (graph_inputs[i] if i < len(graph_inputs) else "")
        # Test data this harness cannot hand to the program (numpy has no bfloat16; strings):
        # a case it cannot run, not a failure of the generator.
        if t.data_type in (onnx.TensorProto.BFLOAT16, onnx.TensorProto.STRING):
            return result("unsupported", "test data: input '%s' is %s" % (n, onnx.TensorProto.DataType.Name(t.data_type)))
        try:
            named_inputs.append((n, numpy_helper.to_array(t)))
        except (ValueError, TypeError) as e:
            return result("unsupported", "test data: input '%s' unreadable by numpy_helper: %s" % (n, e))
    cmd = [args.trellis, "codegen", os.path.join(case, "model.onnx"), "-o", work, "--target", args.target,
           "--with-main", "--name", "Net"]
    for n, a in named_inputs:
        cmd += ["--shape", "%s=%s" % (n, "x".join(str(d) for d in a.shape))] if a.shape else []
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        message = (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1]
        # Refusals name what is not supported; anything else is a failure of the generator.
        # The importer's refusals count too: a data type Trellis does not support, a model of
        # another domain only (the training ops).
        refusal = ("cannot generate" in message or "not supported" in message or "no kernel" in message
                   or "operator not supported" in message or "shapes are decided when it runs" in message
                   or "must be static" in message or "does not support" in message
                   or "imports no opset of the default ONNX domain" in message
                   or "must be a constant false" in message  # training-mode Dropout
                   # test data whose shape contradicts the model's declaration (castlike's 'like')
                   or ("the given shape" in message and "the model declares" in message))
        return result("unsupported" if refusal and r.returncode == 1 else "FAIL", "codegen: " + message)

    error = compile_artifact(args.target, work, args.cxx, args.opt)
    if error:
        return result("FAIL", "compile: " + error)

    indir = os.path.join(work, "in")
    os.makedirs(indir)
    run_cmd = [os.path.join(work, "Net_main"), "--output-dir", os.path.join(work, "out")]
    for k, (n, a) in enumerate(named_inputs):
        path = os.path.join(indir, "input_%d.npy" % k)
        np.save(path, a)
        run_cmd += ["--input", "%s=%s" % (n, path)]
    try:
        r = subprocess.run(run_cmd, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return result("FAIL", "run: timed out after %d s" % args.timeout)
    if r.returncode != 0:
        return result("FAIL", "run: exit %d: %s" % (r.returncode, (r.stderr.strip().splitlines() or [""])[-1]))
    for i, t in enumerate(outputs):
        n = t.name if t.name in graph_outputs else graph_outputs[i]
        path = os.path.join(work, "out", n.replace("/", "_") + ".npy")
        if not os.path.exists(path):
            return result("FAIL", "output '%s' was not written" % n)
        diff = compare(np.load(path), numpy_helper.to_array(t), args.rtol, args.atol)
        if diff:
            return result("FAIL", "output '%s': %s" % (n, diff))
    return result("pass")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trellis", required=True)
    ap.add_argument("--target", default="soft", choices=sorted(TARGET_LIBRARIES))
    ap.add_argument("--cases", action="append", required=True, help="a case folder or a folder of cases (repeatable)")
    ap.add_argument("--work", required=True, help="where the artifacts are generated and built")
    ap.add_argument("--filter", default="", help="only cases whose name this regular expression matches")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--cxx", default=os.environ.get("CXX", "c++"))
    ap.add_argument("--opt", default="-O1", help="optimization flag for the artifacts (default -O1)")
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--atol", type=float, default=1e-5)
    ap.add_argument("--timeout", type=int, default=120)
    ap.add_argument("--min-pass", type=int, default=0, help="fail unless at least this many cases pass")
    ap.add_argument("--summary-json", default="")
    ap.add_argument("--keep", action="store_true", help="keep the work folders of passing cases")
    args = ap.parse_args()

    why = missing_toolkit(args.target) or (missing_gpu() if args.target == "cuda" else "")
    if why:
        print("skipped: %s" % why)
        return 77
    cases = case_dirs(args.cases, args.filter)
    if not cases:
        print("error: no cases found", file=sys.stderr)
        return 1
    os.makedirs(args.work, exist_ok=True)
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for res in pool.map(lambda c: run_case(c, args), cases):
            results.append(res)
            line = "%s: %s" % (res["case"], res["status"] if res["status"] != "FAIL" else "FAIL")
            if res["reason"]:
                line += ": " + res["reason"]
            print(line, flush=True)
    counts = {s: sum(1 for r in results if r["status"] == s) for s in ("pass", "FAIL", "unsupported")}
    print("target %s: %d passed, %d failed, %d unsupported (of %d)" % (
        args.target, counts["pass"], counts["FAIL"], counts["unsupported"], len(results)))
    if args.summary_json:
        with open(args.summary_json, "w") as f:
            json.dump({"target": args.target, "passed": counts["pass"], "failed": counts["FAIL"],
                       "unsupported": counts["unsupported"], "cases": results}, f, indent=1)
    if counts["FAIL"]:
        return 1
    if counts["pass"] < args.min_pass:
        print("error: %d cases passed, fewer than the %d expected" % (counts["pass"], args.min_pass), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
