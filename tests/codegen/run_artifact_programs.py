#!/usr/bin/python3
"""Programs built around generated artifacts (trellis codegen), for the tests of what an artifact
promises beyond its values:

  allocations   BASE.onnx's artifact built into tests/codegen/count_inference_allocations.cpp:
                Inference() makes no heap allocation (soft target); for the onednn target none
                larger than oneDNN's per-execution bookkeeping (--small-bookkeeping 4096 bytes).
  two-artifacts two models' artifacts (different names, targets may differ) linked into
                tests/codegen/two_artifacts_main.cpp, both run, each output against CpuRef's
                (relative L2 error at most 1e-4).

Both compile with -Wall -Wextra -Werror (and --cxx, e.g. clang++). Exits 0 on success, 1 on a
failed check (the reason printed), 2 on a usage error.

  /usr/bin/python3 tests/codegen/run_artifact_programs.py allocations --trellis build/bin/trellis \\
      --target soft --model build/tests/models/tiny_cnn_opset13 --work /tmp/cg-alloc
  /usr/bin/python3 tests/codegen/run_artifact_programs.py two-artifacts --trellis build/bin/trellis \\
      --model-a build/tests/models/tiny_cnn_opset13 --target-a soft \\
      --model-b build/tests/models/transformer_opset13 --target-b onednn --work /tmp/cg-two
"""
import argparse
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from run_codegen_cases import TARGET_LIBRARIES  # noqa: E402


class CheckFailed(Exception):
    pass


def run(cmd, what, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise CheckFailed("%s failed (exit %d): %s\n  command: %s" % (what, r.returncode,
                                                                    (r.stderr or r.stdout).strip()[-2000:], " ".join(cmd)))
    return r.stdout


def input_of(base):
    """(name, array) of the model's only saved input."""
    model = onnx.load(base + ".onnx", load_external_data=False)
    initializers = {i.name for i in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in initializers]
    t = onnx.TensorProto()
    with open(base + ".input_0.pb", "rb") as f:
        t.ParseFromString(f.read())
    if len(names) != 1:
        raise CheckFailed("%s has %d inputs; these checks take models of one input" % (base, len(names)))
    return names[0], numpy_helper.to_array(t)


def generate(args, base, target, name, work):
    folder = os.path.join(work, name)
    shutil.rmtree(folder, ignore_errors=True)
    n, x = input_of(base)
    run([args.trellis, "codegen", base + ".onnx", "-o", folder, "--target", target, "--name", name,
         "--shape", "%s=%s" % (n, "x".join(str(d) for d in x.shape))], "trellis codegen of " + base)
    return folder, n, x


def flags(args):
    return [args.cxx, "-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror"]


def allocations(args):
    folder, _, _ = generate(args, args.model, args.target, "Net", args.work)
    exe = os.path.join(folder, "count_allocations")
    run(flags(args) + ["-I", folder, '-DARTIFACT_HEADER="Net.h"', "-DARTIFACT_CLASS=Net",
                       os.path.join(HERE, "count_inference_allocations.cpp"), os.path.join(folder, "Net.cpp"), "-o", exe]
        + TARGET_LIBRARIES[args.target], "compiling the allocation counter")
    cmd = [exe, os.path.join(folder, "Net.params")]
    if args.target == "onednn":
        cmd += ["--small-bookkeeping", "4096"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    print(r.stdout.strip() or r.stderr.strip())
    if r.returncode != 0:
        raise CheckFailed("Inference() of the %s artifact of %s allocated (%s)" % (args.target, args.model,
                                                                                  (r.stdout + r.stderr).strip()))


def cpuref_output(args, base, name, x, work):
    path = os.path.join(work, "cpuref_input.npy")
    np.save(path, x)
    out = os.path.join(work, "cpuref_" + os.path.basename(base))
    run([args.trellis, "run", base + ".onnx", "--backends", "CpuRef", "--input", "%s=%s" % (name, path),
         "--output-dir", out], "CpuRef")
    t = onnx.TensorProto()
    with open(os.path.join(out, "output_0.pb"), "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def two_artifacts(args):
    a_dir, a_in, a_x = generate(args, args.model_a, args.target_a, "ArtifactA", args.work)
    b_dir, b_in, b_x = generate(args, args.model_b, args.target_b, "ArtifactB", args.work)
    exe = os.path.join(args.work, "two_artifacts")
    libs = sorted(set(TARGET_LIBRARIES[args.target_a] + TARGET_LIBRARIES[args.target_b]))
    run(flags(args) + ["-I", a_dir, "-I", b_dir, '-DARTIFACT_A_HEADER="ArtifactA.h"', "-DARTIFACT_A_CLASS=ArtifactA",
                       '-DARTIFACT_B_HEADER="ArtifactB.h"', "-DARTIFACT_B_CLASS=ArtifactB",
                       os.path.join(HERE, "two_artifacts_main.cpp"), os.path.join(a_dir, "ArtifactA.cpp"),
                       os.path.join(b_dir, "ArtifactB.cpp"), "-o", exe] + libs, "compiling the two artifacts into one program")
    files = {}
    for tag, x in (("a", a_x), ("b", b_x)):
        files[tag + "_in"] = os.path.join(args.work, tag + "_in.bin")
        files[tag + "_out"] = os.path.join(args.work, tag + "_out.bin")
        x.astype(np.float32).tofile(files[tag + "_in"])
    run([exe, os.path.join(a_dir, "ArtifactA.params"), files["a_in"], files["a_out"],
         os.path.join(b_dir, "ArtifactB.params"), files["b_in"], files["b_out"]], "the program of two artifacts")
    for tag, base, n, x in (("a", args.model_a, a_in, a_x), ("b", args.model_b, b_in, b_x)):
        want = cpuref_output(args, base, n, x, args.work).astype(np.float64).ravel()
        got = np.fromfile(files[tag + "_out"], dtype=np.float32).astype(np.float64)
        if got.size != want.size:
            raise CheckFailed("%s: %d output values, CpuRef has %d" % (base, got.size, want.size))
        err = float(np.linalg.norm(got - want) / np.linalg.norm(want))
        print("%s (%s): relative L2 error against CpuRef %.1e" % (os.path.basename(base), tag, err))
        if not err <= 1e-4:
            raise CheckFailed("%s: relative L2 error %.2e against CpuRef (limit 1e-4)" % (base, err))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="check", required=True)
    a = sub.add_parser("allocations")
    a.add_argument("--target", choices=sorted(TARGET_LIBRARIES), required=True)
    a.add_argument("--model", required=True, help="BASE of BASE.onnx and BASE.input_0.pb")
    t = sub.add_parser("two-artifacts")
    t.add_argument("--model-a", required=True)
    t.add_argument("--target-a", choices=sorted(TARGET_LIBRARIES), required=True)
    t.add_argument("--model-b", required=True)
    t.add_argument("--target-b", choices=sorted(TARGET_LIBRARIES), required=True)
    for p in (a, t):
        p.add_argument("--trellis", required=True)
        p.add_argument("--work", required=True)
        p.add_argument("--cxx", default=os.environ.get("CXX", "c++"))
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    try:
        (allocations if args.check == "allocations" else two_artifacts)(args)
    except CheckFailed as e:
        print("FAIL: %s" % e, file=sys.stderr)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
