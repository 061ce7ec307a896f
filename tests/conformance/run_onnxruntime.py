#!/usr/bin/env python3
"""Runs ONNX backend test cases on ONNX Runtime (CPU) and writes the result in the summary format
of `trellis onnx-test --summary-json`, so make_conformance_doc.py puts ONNX Runtime's count beside
Trellis's on the same cases, measured in the same run.

A case passes as it does for `trellis onnx-test`: every output has the expected type and shape,
integers and booleans match exactly, floats within |got - want| <= 1e-7 + 1e-3 * |want| (NaN
matches NaN). It is *unsupported* when ONNX Runtime refuses the model (creating the session
fails), and *fails* on anything else (a run error, a mismatch). Sequence and optional values are
compared element by element.

Run it with the Python that has onnxruntime and the onnx of the cases (the venv
$HOME/.cache/trellis/onnx-1.23.1-venv of scripts/install-deps.sh has both). Exit status 0 when the
run completed (the counts are informational), 1 when it could not run at all.
"""

import argparse
import json
import os
import sys
import time
import warnings

import numpy as np
import onnx
from onnx import numpy_helper

RTOL = 1e-3
ATOL = 1e-7


class CaseFailure(Exception):
    pass


def read_value(path, value_info):
    """The value in `path` as numpy (tensor), list (sequence), None or value (optional)."""
    with open(path, "rb") as f:
        data = f.read()
    kind = value_info.type.WhichOneof("value")
    if kind == "sequence_type":
        proto = onnx.SequenceProto()
        proto.ParseFromString(data)
        return numpy_helper.to_list(proto)
    if kind == "optional_type":
        proto = onnx.OptionalProto()
        proto.ParseFromString(data)
        return numpy_helper.to_optional(proto)
    if kind == "map_type":
        proto = onnx.MapProto()
        proto.ParseFromString(data)
        return numpy_helper.to_dict(proto)
    proto = onnx.TensorProto()
    proto.ParseFromString(data)
    return numpy_helper.to_array(proto)


def to_feed(ort, value, value_info):
    """A graph input's value as ONNX Runtime's Python API takes it. numpy has no bfloat16 or float8
    types (ml_dtypes adds them, which ORT does not read): those go in as an OrtValue over the same
    bytes with the ONNX element type named. Sub-byte types (int4, float4, int2) have no such path:
    ml_dtypes stores one element per byte, ORT packs two or four per byte."""
    if not isinstance(value, np.ndarray) or value.dtype.kind != "V":
        return value
    elem_type = value_info.type.tensor_type.elem_type
    if value.dtype.itemsize == 2:
        return ort.OrtValue.ortvalue_from_numpy_with_onnx_type(value.view(np.uint16), elem_type)
    if value.dtype.itemsize == 1 and elem_type in EIGHT_BIT_TYPES:
        return ort.OrtValue.ortvalue_from_numpy_with_onnx_type(value.view(np.uint8), elem_type)
    return value


EIGHT_BIT_TYPES = {getattr(onnx.TensorProto, n) for n in (
    "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "FLOAT8E8M0") if hasattr(onnx.TensorProto, n)}


def compare(what, got, want):
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            raise CaseFailure(f"{what}: got a {type(got).__name__} of {len(got) if isinstance(got, list) else '-'} "
                              f"values, want a sequence of {len(want)}")
        for i, (g, w) in enumerate(zip(got, want)):
            compare(f"{what}[{i}]", g, w)
        return
    if want is None:
        if got is not None:
            raise CaseFailure(f"{what}: got a value, want an empty optional")
        return
    if isinstance(want, dict):
        if not isinstance(got, dict) or set(got) != set(want):
            raise CaseFailure(f"{what}: the map's keys differ")
        for k in want:
            compare(f"{what}[{k}]", got[k], want[k])
        return
    got = np.asarray(got)
    want = np.asarray(want)
    if got.shape != want.shape:
        raise CaseFailure(f"{what}: got shape {list(got.shape)}, want {list(want.shape)}")
    if got.dtype != want.dtype and want.dtype.kind == "V" and got.dtype.kind in "ui" and \
            got.dtype.itemsize == want.dtype.itemsize:
        got = got.view(want.dtype)  # bfloat16 / float8 handed back as their storage integers
    if got.dtype != want.dtype:
        if str(got.dtype) != str(want.dtype) and not (got.dtype.kind == "O" and want.dtype.kind in "OUS"):
            raise CaseFailure(f"{what}: got type {got.dtype}, want {want.dtype}")
    if want.dtype.kind in "OUS":
        if not np.array_equal(got.astype(object), want.astype(object)):
            raise CaseFailure(f"{what}: string values differ")
        return
    try:
        want_f = want.astype(np.float64)
        got_f = got.astype(np.float64)
    except (TypeError, ValueError):
        if got.tobytes() != want.tobytes():
            raise CaseFailure(f"{what}: values differ (compared bitwise)")
        return
    exact = want.dtype.kind in "biu" or want.dtype == np.bool_
    if exact:
        bad = got_f != want_f
    else:
        both_nan = np.isnan(got_f) & np.isnan(want_f)
        with np.errstate(invalid="ignore"):
            close = (got_f == want_f) | (np.abs(got_f - want_f) <= ATOL + RTOL * np.abs(want_f))
        close &= ~(np.isnan(got_f) ^ np.isnan(want_f))
        bad = ~(close | both_nan)
    if bad.any():
        first = int(np.flatnonzero(bad.reshape(-1))[0])
        raise CaseFailure(f"{what} element {first} ({int(bad.sum())} of {bad.size} differ): got "
                          f"{got_f.reshape(-1)[first]!r}, want {want_f.reshape(-1)[first]!r}")


def run_case(ort, case_dir):
    model = onnx.load(os.path.join(case_dir, "model.onnx"))
    graph = model.graph
    initializers = {i.name for i in graph.initializer}
    inputs = [i for i in graph.input if i.name not in initializers]
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.intra_op_num_threads = 1
    try:
        session = ort.InferenceSession(os.path.join(case_dir, "model.onnx"), options,
                                       providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001 - any refusal of the model
        return "unsupported", " ".join(str(e).split())
    sets = sorted((d for d in os.listdir(case_dir) if d.startswith("test_data_set_")),
                  key=lambda d: int(d.rsplit("_", 1)[1]))
    if not sets:
        return "fail", "the case has no test_data_set_* folder"
    try:
        for set_name in sets:
            set_dir = os.path.join(case_dir, set_name)
            feeds = {}
            for i, info in enumerate(inputs):
                path = os.path.join(set_dir, f"input_{i}.pb")
                if os.path.exists(path):
                    feeds[info.name] = to_feed(ort, read_value(path, info), info)
            outputs = [o.name for o in graph.output]
            got = session.run(outputs, feeds)
            for i, info in enumerate(graph.output):
                want = read_value(os.path.join(set_dir, f"output_{i}.pb"), info)
                compare(f"output '{info.name}' ({set_name}/output_{i}.pb)", got[i], want)
    except CaseFailure as e:
        return "fail", str(e)
    except Exception as e:  # noqa: BLE001 - a run error
        return "fail", " ".join(str(e).split())
    return "pass", ""


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", required=True, help="folder of test cases (each subfolder holds model.onnx)")
    parser.add_argument("--summary-json", required=True, help="where to write the per-case results")
    parser.add_argument("--expect-version", help="fail unless onnxruntime has this version")
    args = parser.parse_args()

    try:
        import onnxruntime as ort
    except ImportError as e:
        print(f"FAIL: onnxruntime cannot be imported by {sys.executable}: {e} (run scripts/install-deps.sh)")
        return 1
    if args.expect_version and ort.__version__ != args.expect_version:
        print(f"FAIL: onnxruntime {ort.__version__} is installed for {sys.executable}; expected {args.expect_version}")
        return 1
    if not os.path.isdir(args.dir):
        print(f"FAIL: test case folder '{args.dir}' not found")
        return 1
    names = sorted(d for d in os.listdir(args.dir) if os.path.isfile(os.path.join(args.dir, d, "model.onnx")))
    counts = {"pass": 0, "fail": 0, "unsupported": 0}
    results = []
    start = time.monotonic()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in names:
            t0 = time.monotonic()
            status, reason = run_case(ort, os.path.join(args.dir, name))
            counts[status] += 1
            results.append({"dir": args.dir, "case": name, "status": status, "reason": reason,
                            "ms": round((time.monotonic() - t0) * 1000.0, 3)})
            print(f"{name}: {status}" + (f": {reason}" if reason else ""), flush=True)
    summary = {"backends": [f"onnxruntime {ort.__version__} (CPUExecutionProvider)"], "runner": "onnxruntime",
               "passed": counts["pass"], "failed": counts["fail"], "skipped": counts["unsupported"], "cases": results}
    os.makedirs(os.path.dirname(os.path.abspath(args.summary_json)), exist_ok=True)
    with open(args.summary_json, "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=0)
    print(f"onnxruntime {ort.__version__}: {len(names)} cases in {time.monotonic() - start:.1f} s")
    print(f"{counts['pass']} passed, {counts['fail']} failed, {counts['unsupported']} skipped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
