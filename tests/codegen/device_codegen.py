#!/usr/bin/python3
"""Cuda-target artifacts checked on a GPU machine against CpuRef, in two steps:

  pack   (on the build machine, or wherever Trellis, the CUDA toolkit and cuDNN are): for each
         exported model BASE.onnx of --models (with saved inputs BASE.input_<k>.pb): CpuRef's
         outputs (trellis run --backends CpuRef), the artifact (trellis codegen --target cuda
         --with-main), compiled with nvcc and c++ -Wall -Wextra -Werror; writes OUT/<model>/ with
         Net_main, Net.params, input_<k>.npy, expected_<k>.npy and manifest.json (the names).
  check  (on the GPU machine): runs every OUT/<model>/Net_main on its inputs and compares each
         output with CpuRef's: PASS when every relative L2 error is at most --tolerance (1e-4).
         With pack --programs, also the allocation counter (tests/codegen/count_inference_allocations.cpp:
         no heap allocation in Inference()) and two cuda artifacts linked into one program
         (two_artifacts_main.cpp), each against CpuRef.
         One line per model ("PASS resnet50_op13 rel. L2 3.1e-07", "FAIL ...: reason") and a
         count; exits 1 when a model failed.

  tests/codegen/device_codegen.py pack --trellis build/bin/trellis --models build/tests/models \\
      --out .device-gpu/gpu/codegen --filter '^(tiny_cnn|squeezenet1_1)_op13$'
  tests/codegen/device_codegen.py check --dir .device-gpu/gpu/codegen

A model the cuda target refuses is reported ("unsupported: ...") and left out of the pack. Set
TRELLIS_CUDA_LINK to replace the link arguments (a machine whose cuDNN and cuBLASLt are versioned
libraries only, as in PyTorch's wheels) and TRELLIS_CUDA_INCLUDE to add an include folder.
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from run_codegen_cases import CUDA, NVCC_FLAGS, TARGET_LIBRARIES, compile_artifact, missing_toolkit  # noqa: E402


def rel_l2(got, want):
    g = got.astype(np.float64).ravel()
    w = want.astype(np.float64).ravel()
    denom = np.linalg.norm(w)
    return float(np.linalg.norm(g - w) / denom) if denom > 0 else float(np.linalg.norm(g - w))


def load_pb(path):
    import onnx
    from onnx import numpy_helper
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t.name, numpy_helper.to_array(t)


def pack_model(base, args):
    import onnx
    name = os.path.basename(base)
    work = os.path.join(args.work, name)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
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
        return "unsupported" if "cannot generate" in message else "FAIL", "codegen: " + message
    ref = os.path.join(work, "ref")
    cmd = [args.trellis, "run", base + ".onnx", "--backends", "CpuRef", "--output-dir", ref]
    for n, path, _ in inputs:
        cmd += ["--input", "%s=%s" % (n, path)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return "FAIL", "CpuRef: " + (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1]
    error = compile_artifact("cuda", work, args.cxx, "-O2")
    if error:
        return "FAIL", "compile: " + error
    out = os.path.join(args.out, name)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    shutil.copy2(os.path.join(work, "Net_main"), out)
    # Smaller to carry to the GPU machine (cudart is linked statically).
    subprocess.run(["strip", "--strip-unneeded", os.path.join(out, "Net_main")], capture_output=True)
    shutil.copy2(os.path.join(work, "Net.params"), out)
    manifest = {"model": name, "inputs": [], "outputs": []}
    for k, (n, _, a) in enumerate(inputs):
        np.save(os.path.join(out, "input_%d.npy" % k), a)
        manifest["inputs"].append([n, "input_%d.npy" % k])
    for i, n in enumerate(graph_outputs):
        _, want = load_pb(os.path.join(ref, "output_%d.pb" % i))
        np.save(os.path.join(out, "expected_%d.npy" % i), want)
        manifest["outputs"].append([n, "expected_%d.npy" % i])
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return "packed", "%.1f MiB" % (sum(os.path.getsize(p) for p in glob.glob(os.path.join(out, "*"))) / 2**20)


def codegen(args, base, name, folder, with_main=False):
    """Generates BASE's cuda artifact `name` into `folder`; returns its saved input (name, array)."""
    shutil.rmtree(folder, ignore_errors=True)
    pb_name, x = load_pb(base + ".input_0.pb")
    import onnx
    model = onnx.load(base + ".onnx", load_external_data=False)
    initializers = {i.name for i in model.graph.initializer}
    n = [i.name for i in model.graph.input if i.name not in initializers][0]
    cmd = [args.trellis, "codegen", base + ".onnx", "-o", folder, "--target", "cuda", "--name", name,
           "--shape", "%s=%s" % (n, "x".join(str(d) for d in x.shape))] + (["--with-main"] if with_main else [])
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("codegen of %s: %s" % (base, r.stderr.strip()))
    return n, x


def cpuref(args, base, n, x, work):
    path = os.path.join(work, os.path.basename(base) + "_input.npy")
    np.save(path, x)
    out = os.path.join(work, os.path.basename(base) + "_cpuref")
    r = subprocess.run([args.trellis, "run", base + ".onnx", "--backends", "CpuRef", "--input", "%s=%s" % (n, path),
                        "--output-dir", out], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("CpuRef on %s: %s" % (base, r.stderr.strip()))
    return load_pb(os.path.join(out, "output_0.pb"))[1]


def pack_programs(args):
    """The programs of tests/codegen built around cuda artifacts: the allocation counter on the tiny
    CNN's (Inference() must not allocate), and the tiny CNN's and the transformer's artifacts linked
    into one program (their kernels in namespaces of their own), each against CpuRef."""
    tiny = os.path.join(args.models, "tiny_cnn_op13")
    transformer = os.path.join(args.models, "transformer_op13")
    if not (os.path.exists(tiny + ".onnx") and os.path.exists(transformer + ".onnx")):
        print("programs: not packed (no tiny_cnn_op13 and transformer_op13 in %s)" % args.models)
        return 0
    work = os.path.join(args.work, "programs")
    os.makedirs(work, exist_ok=True)
    try:
        folder = os.path.join(work, "alloc")
        codegen(args, tiny, "Net", folder)
        error = compile_artifact("cuda", folder, args.cxx, "-O2", extra_sources=[os.path.join(HERE, "count_inference_allocations.cpp")],
                                 extra_flags=["-I", folder, '-DARTIFACT_HEADER="Net.h"', "-DARTIFACT_CLASS=Net"],
                                 output="count_allocations")
        if error:
            raise RuntimeError("compiling the allocation counter: " + error)
        out = os.path.join(args.out, "_allocations_tiny_cnn_op13")
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        for f in ("count_allocations", "Net.params"):
            shutil.copy2(os.path.join(folder, f), out)
        subprocess.run(["strip", "--strip-unneeded", os.path.join(out, "count_allocations")], capture_output=True)
        with open(os.path.join(out, "manifest.json"), "w") as f:
            json.dump({"model": "allocations in Inference() (tiny_cnn_op13)", "kind": "allocations"}, f)
        print("allocations (tiny_cnn_op13): packed", flush=True)

        dirs, objects = {}, []
        for tag, base, name in (("a", tiny, "ArtifactA"), ("b", transformer, "ArtifactB")):
            folder = os.path.join(work, name)
            n, x = codegen(args, base, name, folder)
            dirs[tag] = (folder, name, base, n, x)
            r = subprocess.run([os.path.join(CUDA, "bin", "nvcc")] + NVCC_FLAGS +
                               ["-c", os.path.join(folder, name + "_kernels.cu"), "-o", os.path.join(folder, name + "_kernels.o")],
                               capture_output=True, text=True)
            if r.returncode != 0:
                raise RuntimeError("nvcc on %s: %s" % (name, r.stderr.strip()[-1000:]))
            objects.append(os.path.join(folder, name + "_kernels.o"))
        exe = os.path.join(work, "two_artifacts")
        cmd = ([args.cxx, "-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", "-I", dirs["a"][0], "-I", dirs["b"][0],
                '-DARTIFACT_A_HEADER="ArtifactA.h"', "-DARTIFACT_A_CLASS=ArtifactA", '-DARTIFACT_B_HEADER="ArtifactB.h"',
                "-DARTIFACT_B_CLASS=ArtifactB", os.path.join(HERE, "two_artifacts_main.cpp"),
                os.path.join(dirs["a"][0], "ArtifactA.cpp"), os.path.join(dirs["b"][0], "ArtifactB.cpp"), "-o", exe]
               + objects + TARGET_LIBRARIES["cuda"])
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("compiling the program of two artifacts: " + r.stderr.strip()[-1000:])
        out = os.path.join(args.out, "_two_artifacts")
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        shutil.copy2(exe, out)
        subprocess.run(["strip", "--strip-unneeded", os.path.join(out, "two_artifacts")], capture_output=True)
        for tag, (folder, name, base, n, x) in dirs.items():
            shutil.copy2(os.path.join(folder, name + ".params"), out)
            x.astype(np.float32).tofile(os.path.join(out, tag + "_in.bin"))
            np.save(os.path.join(out, tag + "_expected.npy"), cpuref(args, base, n, x, work))
        with open(os.path.join(out, "manifest.json"), "w") as f:
            json.dump({"model": "two artifacts in one program (tiny_cnn_op13, transformer_op13)", "kind": "two-artifacts"}, f)
        print("two artifacts (tiny_cnn_op13, transformer_op13): packed", flush=True)
    except RuntimeError as e:
        print("programs: FAIL: %s" % e, flush=True)
        return 1
    return 0


def pack(args):
    why = missing_toolkit("cuda")
    if why:
        print("error: cannot build cuda artifacts here: %s" % why, file=sys.stderr)
        return 1
    bases = sorted(p[:-len(".onnx")] for p in glob.glob(os.path.join(args.models, "*.onnx"))
                   if os.path.exists(p[:-len(".onnx")] + ".input_0.pb"))
    if args.filter:
        bases = [b for b in bases if re.search(args.filter, os.path.basename(b))]
    if not bases:
        print("error: no exported models in %s match '%s'" % (args.models, args.filter), file=sys.stderr)
        return 1
    os.makedirs(args.out, exist_ok=True)
    os.makedirs(args.work, exist_ok=True)
    failed = 0
    for base in bases:
        status, detail = pack_model(base, args)
        failed += status == "FAIL"
        print("%s: %s: %s" % (os.path.basename(base), status, detail), flush=True)
    if args.programs:
        failed += pack_programs(args)
    return 1 if failed else 0


def check_program(folder, manifest, args):
    if manifest["kind"] == "allocations":
        r = subprocess.run([os.path.join(folder, "count_allocations"), os.path.join(folder, "Net.params")],
                           capture_output=True, text=True, timeout=args.timeout)
        text = (r.stdout.strip() or r.stderr.strip()).replace("\n", "; ")
        return ("PASS" if r.returncode == 0 else "FAIL"), text, None
    out = os.path.join(args.work, "two_artifacts")
    os.makedirs(out, exist_ok=True)
    cmd = [os.path.join(folder, "two_artifacts")]
    for tag, name in (("a", "ArtifactA"), ("b", "ArtifactB")):
        cmd += [os.path.join(folder, name + ".params"), os.path.join(folder, tag + "_in.bin"), os.path.join(out, tag + "_out.bin")]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    if r.returncode != 0:
        return "FAIL", "exit %d: %s" % (r.returncode, (r.stderr.strip().splitlines() or [""])[-1]), None
    worst = 0.0
    for tag in ("a", "b"):
        want = np.load(os.path.join(folder, tag + "_expected.npy"))
        got = np.fromfile(os.path.join(out, tag + "_out.bin"), dtype=np.float32)
        if got.size != want.size:
            return "FAIL", "artifact %s: %d output values, CpuRef has %d" % (tag, got.size, want.size), None
        e = rel_l2(got, want)
        worst = max(worst, e)
        if not e <= args.tolerance:
            return "FAIL", "artifact %s: relative L2 error %.2e against CpuRef" % (tag, e), e
    return "PASS", "both ran twice, interleaved", worst


def check_model(folder, args):
    with open(os.path.join(folder, "manifest.json")) as f:
        manifest = json.load(f)
    if "kind" in manifest:
        try:
            return check_program(folder, manifest, args)
        except subprocess.TimeoutExpired:
            return "FAIL", "timed out after %d s" % args.timeout, None
    out = os.path.join(args.work, manifest["model"])
    shutil.rmtree(out, ignore_errors=True)
    cmd = [os.path.join(folder, "Net_main"), "--params", os.path.join(folder, "Net.params"), "--output-dir", out]
    for n, file in manifest["inputs"]:
        cmd += ["--input", "%s=%s" % (n, os.path.join(folder, file))]
    start = time.time()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return "FAIL", "timed out after %d s" % args.timeout, None
    seconds = time.time() - start
    if r.returncode != 0:
        return "FAIL", "exit %d: %s" % (r.returncode, (r.stderr.strip().splitlines() or [""])[-1]), None
    worst = 0.0
    for n, file in manifest["outputs"]:
        want = np.load(os.path.join(folder, file))
        path = os.path.join(out, n.replace("/", "_") + ".npy")
        if not os.path.exists(path):
            return "FAIL", "output '%s' was not written" % n, None
        got = np.load(path)
        if got.shape != want.shape:
            return "FAIL", "output '%s': shape %s, CpuRef's %s" % (n, got.shape, want.shape), None
        if want.dtype.kind != "f":
            if not np.array_equal(got, want):
                return "FAIL", "output '%s': %d elements differ from CpuRef's" % (n, int((got != want).sum())), None
            continue
        e = rel_l2(got, want)
        worst = max(worst, e)
        if not e <= args.tolerance:
            return "FAIL", "output '%s': relative L2 error %.2e against CpuRef (limit %.0e)" % (n, e, args.tolerance), e
    return "PASS", "program %.1f s (constructor, one inference)" % seconds, worst


def check(args):
    folders = sorted(os.path.dirname(p) for p in glob.glob(os.path.join(args.dir, "*", "manifest.json")))
    if args.filter:
        folders = [f for f in folders if re.search(args.filter, os.path.basename(f))]
    if not folders:
        print("error: no packed models in %s" % args.dir, file=sys.stderr)
        return 1
    os.makedirs(args.work, exist_ok=True)
    counts = {"PASS": 0, "FAIL": 0}
    for folder in folders:
        status, detail, error = check_model(folder, args)
        counts[status] += 1
        print("%s %s%s: %s" % (status, os.path.basename(folder), "" if error is None else " rel. L2 %.1e" % error, detail),
              flush=True)
    print("cuda artifacts against CpuRef: %d PASS, %d FAIL (of %d)" % (counts["PASS"], counts["FAIL"], len(folders)))
    return 1 if counts["FAIL"] else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("pack")
    p.add_argument("--trellis", required=True)
    p.add_argument("--models", required=True, help="folder of exported models (BASE.onnx, BASE.input_<k>.pb)")
    p.add_argument("--out", required=True)
    p.add_argument("--work", default="/tmp/trellis-codegen-pack")
    p.add_argument("--filter", default="")
    p.add_argument("--cxx", default=os.environ.get("CXX", "c++"))
    p.add_argument("--keep", action="store_true")
    p.add_argument("--programs", action="store_true",
                   help="also pack the allocation counter and the program of two artifacts (tiny_cnn_op13, transformer_op13)")
    c = sub.add_parser("check")
    c.add_argument("--dir", required=True, help="what pack wrote")
    c.add_argument("--work", default="/tmp/trellis-codegen-check")
    c.add_argument("--filter", default="")
    c.add_argument("--tolerance", type=float, default=1e-4)
    c.add_argument("--timeout", type=int, default=300)
    args = ap.parse_args()
    return pack(args) if args.command == "pack" else check(args)


if __name__ == "__main__":
    sys.exit(main())
