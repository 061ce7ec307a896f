#!/usr/bin/python3
"""Runs the per-op cases (written by gen_op_cases.py) on one backend with the `trellis` CLI.

For a backend that is not built into the engine (a dynamic backend, say): every case is run with
`trellis run MODEL --backends LIST --input-dir CASE/test_data_set_0 --output-dir TMP`, and each
output is compared with the case's expected output_<i>.pb (numpy-computed). Tolerances are the
ones the engine's own op-case test uses: |got - want| <= 1e-5 + 1e-4 * |want| for Float32/Float64
(NaN matches NaN, an infinity must match exactly), bit for bit for Float16, exact for every other
type.

    run_op_cases.py --cases DIR --trellis PATH/TO/trellis --backends ExampleAcc \
                    [--dynamic-backends-path DIR] [--filter SUBSTRING] [--verbose]

The backend under test is the first one in --backends (later ones are fallbacks). A case passes
when its outputs are right and at least one layer ran on that backend; right outputs with no
layer on it (everything folded away, or run by a fallback) are reported as "none". A case the
backends decline ("not supported by any of the preferred backends") is a skip, with the reason;
any other error or a wrong value is a failure. Prints one line per case ("pass NAME",
"none NAME: ...", "skip NAME: reason", "FAIL NAME: detail"), then a summary line. Exits 1 when a
case failed or none passed, else 0. Needs numpy and onnx (Debian: python3-numpy python3-onnx).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

UNSUPPORTED = "not supported by any of the preferred backends"


def load_tensor(path):
    tensor = onnx.TensorProto()
    with open(path, "rb") as f:
        tensor.ParseFromString(f.read())
    return numpy_helper.to_array(tensor)


def compare(got, want):
    """'' when `got` matches `want`, else what differs."""
    if got.dtype != want.dtype or got.shape != want.shape:
        return "expected %s %s, got %s %s" % (want.dtype, want.shape, got.dtype, got.shape)
    if want.dtype == np.float16:
        # As the engine's own test: 16-bit floats must match bit for bit.
        return "" if got.tobytes() == want.tobytes() else "16-bit float data differs"
    if want.dtype in (np.float32, np.float64):
        with np.errstate(invalid="ignore"):  # casting NaNs with payloads warns
            g = got.astype(np.float64)
            w = want.astype(np.float64)
            ok = (np.isnan(g) & np.isnan(w)) | (np.isinf(w) & (g == w)) | (np.abs(g - w) <= 1e-5 + 1e-4 * np.abs(w))
    else:
        ok = got == want
    if ok.all():
        return ""
    bad = np.argwhere(~ok)
    first = tuple(bad[0])
    return "%d of %d values differ; first at %s: got %r, want %r" % (
        len(bad), want.size, list(first), got[first].item(), want[first].item())


def run_case(args, case_dir, out_dir):
    """('pass'|'skip'|'fail', detail)."""
    data = os.path.join(case_dir, "test_data_set_0")
    command = [args.trellis, "run", os.path.join(case_dir, "model.onnx"), "--backends", args.backends,
               "--input-dir", data, "--output-dir", out_dir]
    if args.dynamic_backends_path:
        command += ["--dynamic-backends-path", args.dynamic_backends_path]
    proc = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        message = (proc.stderr.strip() or proc.stdout.strip()).replace("\n", "; ")
        return ("skip" if UNSUPPORTED in message else "fail"), message
    layers = [line for line in proc.stdout.splitlines() if line.startswith("layers: ")]
    i = 0
    while os.path.exists(os.path.join(data, "output_%d.pb" % i)):
        got_path = os.path.join(out_dir, "output_%d.pb" % i)
        if not os.path.exists(got_path):
            return "fail", "trellis wrote no output_%d.pb" % i
        diff = compare(load_tensor(got_path), load_tensor(os.path.join(data, "output_%d.pb" % i)))
        if diff:
            return "fail", "output %d: %s" % (i, diff)
        i += 1
    if i == 0:
        return "fail", "the case has no expected output_0.pb"
    counts = layers[0] if layers else "layers: ?"
    # Right values are only this backend's merit if it ran something (the optimizer may fold or
    # remove every layer, or give them all to a fallback backend).
    if not re.search(r" on %s(,|$)" % re.escape(args.backends.split(",")[0].strip()), counts):
        return "none", counts
    return "pass", counts


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", required=True, help="directory written by gen_op_cases.py --out")
    ap.add_argument("--trellis", required=True, help="the trellis command-line tool")
    ap.add_argument("--backends", required=True, help="backend preference list, e.g. ExampleAcc")
    ap.add_argument("--dynamic-backends-path", default="", help="passed to trellis run")
    ap.add_argument("--filter", default="", help="only cases whose name contains this")
    ap.add_argument("--verbose", action="store_true", help="print the backend layer counts of passing cases")
    args = ap.parse_args()

    cases = sorted(d for d in os.listdir(args.cases)
                   if args.filter in d and os.path.exists(os.path.join(args.cases, d, "model.onnx")))
    if not cases:
        print("no op cases in %s (filter '%s'): write them with gen_op_cases.py --out %s"
              % (args.cases, args.filter, args.cases))
        return 1
    counts = {"pass": 0, "none": 0, "skip": 0, "fail": 0}
    tested = args.backends.split(",")[0].strip()
    with tempfile.TemporaryDirectory() as tmp:
        for name in cases:
            out_dir = os.path.join(tmp, name)
            status, detail = run_case(args, os.path.join(args.cases, name), out_dir)
            counts[status] += 1
            if status == "pass":
                print("pass %s%s" % (name, " (%s)" % detail if args.verbose and detail else ""))
            elif status == "none":
                print("none %s: right values, but no layer ran on %s (%s)" % (name, tested, detail))
            elif status == "skip":
                print("skip %s: %s" % (name, detail))
            else:
                print("FAIL %s: %s" % (name, detail))
    print("op cases on %s: %d passed, %d ran no layer on %s, %d skipped, %d failed"
          % (args.backends, counts["pass"], counts["none"], tested, counts["skip"], counts["fail"]))
    return 1 if counts["fail"] or not counts["pass"] else 0


if __name__ == "__main__":
    sys.exit(main())
