#!/usr/bin/env python3
"""Writes the node test cases of an installed `onnx` package in the backend-test layout.

The PyPI wheel of onnx ships no node test data, but its case generators
(`onnx.backend.test.case.node.collect_testcases`) build every case's model, inputs and expected
outputs. This writes each one as ONNX's own `backend-test-tools generate-data` does:

  OUT/<case>/model.onnx
  OUT/<case>/test_data_set_<n>/input_<i>.pb, output_<i>.pb

Run it with the Python that has the pinned onnx (scripts/install-deps.sh makes the venv
$HOME/.cache/trellis/onnx-1.23.1-venv). OUT/generated.json records the onnx version and the case
names; when it already matches, nothing is written again (the cases are deterministic: each
generator seeds numpy itself). A case whose tolerance is not ONNX's default is refused, because
`trellis onnx-test` and run_onnxruntime.py compare with the default (rtol 1e-3, atol 1e-7).
"""

import argparse
import json
import os
import shutil
import sys
import warnings

import onnx
from onnx import numpy_helper
from onnx.backend.test.case.node import collect_testcases

DEFAULT_RTOL = 1e-3
DEFAULT_ATOL = 1e-7


def serialize_value(value, value_info):
    """`value` (numpy array, TensorProto, list, dict or optional) as the proto ONNX's tools write."""
    kind = value_info.type.WhichOneof("value")
    if kind == "map_type":
        return numpy_helper.from_dict(value, value_info.name).SerializeToString()
    if kind == "sequence_type":
        return numpy_helper.from_list(value, value_info.name).SerializeToString()
    if kind == "optional_type":
        return numpy_helper.from_optional(value, value_info.name).SerializeToString()
    if isinstance(value, onnx.TensorProto):
        return value.SerializeToString()
    return numpy_helper.from_array(value, value_info.name).SerializeToString()


def write_case(case, out_dir):
    case_dir = os.path.join(out_dir, case.name)
    if os.path.exists(case_dir):
        shutil.rmtree(case_dir)
    os.makedirs(case_dir)
    with open(os.path.join(case_dir, "model.onnx"), "wb") as f:
        f.write(case.model.SerializeToString())
    graph = case.model.graph
    for n, (inputs, outputs) in enumerate(case.data_sets):
        set_dir = os.path.join(case_dir, f"test_data_set_{n}")
        os.makedirs(set_dir)
        for prefix, values, infos in (("input", inputs, graph.input), ("output", outputs, graph.output)):
            for i, value in enumerate(values):
                with open(os.path.join(set_dir, f"{prefix}_{i}.pb"), "wb") as f:
                    f.write(serialize_value(value, infos[i]))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="directory to write the cases into (one folder per case)")
    parser.add_argument("--expect-version", help="fail unless the installed onnx has this version")
    parser.add_argument("--expect-count", type=int, help="fail unless the generators yield this many cases")
    args = parser.parse_args()

    if args.expect_version and onnx.__version__ != args.expect_version:
        sys.exit(f"error: onnx {onnx.__version__} is installed for {sys.executable}; expected {args.expect_version} "
                 "(run scripts/install-deps.sh)")
    with warnings.catch_warnings():
        # Some generators overflow on purpose (casts to small float types, log(0)).
        warnings.simplefilter("ignore", RuntimeWarning)
        cases = sorted(collect_testcases(None), key=lambda c: c.name)
    if args.expect_count is not None and len(cases) != args.expect_count:
        sys.exit(f"error: onnx {onnx.__version__} yields {len(cases)} node cases; expected {args.expect_count}")
    names = [c.name for c in cases]
    if len(set(names)) != len(names):
        sys.exit("error: two node cases share a name")
    for case in cases:
        if (case.rtol, case.atol) != (DEFAULT_RTOL, DEFAULT_ATOL):
            sys.exit(f"error: case {case.name} asks for rtol={case.rtol} atol={case.atol}; the runners compare with "
                     f"ONNX's default rtol={DEFAULT_RTOL} atol={DEFAULT_ATOL} only")
        if not case.model or not case.data_sets:
            sys.exit(f"error: case {case.name} has no model or no data set")

    stamp_path = os.path.join(args.out, "generated.json")
    stamp = {"onnx": onnx.__version__, "cases": names}
    if os.path.exists(stamp_path):
        with open(stamp_path, encoding="utf-8") as f:
            if json.load(f) == stamp and all(os.path.isfile(os.path.join(args.out, n, "model.onnx")) for n in names):
                print(f"{len(names)} node cases of onnx {onnx.__version__} already in {args.out}")
                return
    os.makedirs(args.out, exist_ok=True)
    if os.path.exists(stamp_path):
        os.remove(stamp_path)
    for entry in os.listdir(args.out):  # cases of another onnx version
        path = os.path.join(args.out, entry)
        if os.path.isdir(path) and entry not in set(names):
            shutil.rmtree(path)
    for case in cases:
        write_case(case, args.out)
    with open(stamp_path, "w", encoding="utf-8") as f:
        json.dump(stamp, f, indent=0)
    print(f"wrote {len(names)} node cases of onnx {onnx.__version__} to {args.out}")


if __name__ == "__main__":
    main()
