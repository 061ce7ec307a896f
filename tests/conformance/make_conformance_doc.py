#!/usr/bin/python3
"""Writes docs/conformance.md from `trellis onnx-test --summary-json` results.

Usage:
  make_conformance_doc.py SUMMARY.json... [-o docs/conformance.md] [--expected expected_pass_counts.json]
                          [--gpu tests/conformance/gpuacc_node_results.json]

Each SUMMARY is the JSON one `trellis onnx-test DIR --summary-json FILE` run wrote (the ctest tests
onnx_conformance_* leave them in build/tests/conformance/). Every case's model.onnx is read (with
Debian's python3-onnx) to classify the exclusions (see exclusions.py) and to name the ops of cases
that fail, so the test data must still be where the summaries say. The output has no dates or
timings: the same results give the same document.

--gpu names the GpuAcc results measured on a GPU (no CI machine has one): the node suite run on the
device (bench/gpu/device_run.sh writes one `--summary-json` per backend list; the results file keeps
each run's counts and every case that did not pass, with its reason). They get a section of their
own; nothing in them is re-run here.
"""

import argparse
import collections
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import exclusions  # noqa: E402

import onnx  # noqa: E402

# The targets: share of the cases outside the exclusions that must pass.
TARGETS = {"node": 0.95, "pytorch-converted": 1.0, "pytorch-operator": 1.0, "simple": 1.0}
# The generated suite of the current ONNX release: its target is ONNX Runtime's count on the same cases.
ONNX_CASES_VERSION = "1.23.1"
DIR_ORDER = [f"onnx-{ONNX_CASES_VERSION}/node", "node", "pytorch-converted", "pytorch-operator", "simple"]


def case_dir(case):
    base = case["dir"]
    return base if os.path.isfile(os.path.join(base, "model.onnx")) else os.path.join(base, case["case"])


def dir_label(case):
    """The suite: the case directory's name ("node"), with its parent's for generated suites
    ("onnx-1.23.1/node")."""
    path = os.path.normpath(case["dir"])
    if os.path.isfile(os.path.join(path, "model.onnx")):
        path = os.path.dirname(path)
    parent = os.path.basename(os.path.dirname(path))
    if parent.startswith("onnx-"):
        return f"{parent}/{os.path.basename(path)}"
    return os.path.basename(path)


def strip_names(text):
    """The reason with node/tensor names and file paths left out, so equal causes compare equal."""
    text = re.sub(r"^model\.onnx: ", "", text)
    text = re.sub(r"test_data_set_\d+/", "", text)
    text = re.sub(r"(?<!=)'[^']*'", "'…'", text)  # names go; attribute values (after '=') stay
    return re.sub(r"opset \d+", "opset N", text)


def cause_of(status, reason):
    """A short cause shared by every case that does not pass for the same reason."""
    patterns = [
        (r"not supported by any of the preferred backends: (\w+) '[^']*' \(inputs: [^)]*\); (\w+): .*?data type (\w+)",
         lambda m: f"{m[2]} does not run type {m[3]}"),
        (r"not supported by any of the preferred backends: (\w+) '[^']*' \(inputs: [^)]*\); (.*)",
         lambda m: f"no preferred backend runs {m[1]}: {strip_names(m[2])}"),
        (r"\((\w+), opset \d+\): operator not supported by Trellis", lambda m: f"operator {m[1]} not supported"),
        (r"opset (\d+) is not supported", lambda m: f"opset {m[1]} not supported (the importer reads 7 to 18)"),
        (r"domain '([^']*)' is not supported", lambda m: f"operator domain {m[1]} not supported"),
        (r"imports no opset of the default ONNX domain", lambda m: "the model imports no default-domain opset"),
        (r"only tensor values are supported", lambda m: "non-tensor graph value (sequence or optional)"),
        (r"test data: .*data type (\w+) is not supported", lambda m: f"test data of type {m[1]} cannot be read"),
        (r"data type (\w+) is not supported", lambda m: f"data type {m[1]} not supported"),
        (r"\((\w+), opset \d+\): (.*)", lambda m: f"{m[1]}: {strip_names(m[2])}"),
        (r"^(\w+) '[^']*': input (\d+) \(([^)]*)\) must be constant when the network is loaded",
         lambda m: f"{m[1]}: input {m[2]} ({m[3]}) must be constant when the network is loaded, "
                   "but the test feeds it as a graph input"),
        (r"^(\w+) '[^']*': (\w+): input A is \w+ and input B is \w+; both inputs must have the same type",
         lambda m: f"{m[1]} {m[2]}: inputs of different types"),
        (r"^test data contradicts the model: .*the model declares",
         lambda m: "the test data contradicts the shape the model declares for an input"),
        (r"^output '[^']*' \([^)]*\) element", lambda m: "wrong values"),
        (r"^output '[^']*': got ", lambda m: "wrong output type or shape"),
    ]
    for pattern, make in patterns:
        m = re.search(pattern, reason)
        if m:
            return make(m)
    return strip_names(reason)


# Why a case outside the exclusions that does not pass is left so, when the cause is the test data
# rather than Trellis (checked against the ONNX specification and ONNX Runtime 1.30). Printed
# under the case's cause; a case listed here that passes is reported so the note gets removed.
NOTES = {
    "test_cast_FLOAT_to_BFLOAT16": (
        "ONNX 1.12's case generator (onnx/backend/test/case/node/cast.py) makes the expected bfloat16 values "
        "by keeping the upper 16 bits of each float32, i.e. by truncation. Trellis rounds to nearest even, as "
        "ONNX 1.12's own `onnx.helper.float32_to_bfloat16` does by default, as ONNX Runtime 1.30 does (0.48033667 "
        "becomes 0.48046875 in both; the test data says 0.478515625), and as later ONNX releases generate this "
        "case (with ml_dtypes' bfloat16 cast). The ONNX 1.12 specification of Cast does not state a rounding."),
    "castlike_like_shape": (
        "The model declares input `like` as [3, 4] but the test data feeds a [1] tensor (in its BFLOAT16 cases only, "
        "ONNX 1.12's castlike.py declares `like` with the output's type, shape [3, 4] included). The ONNX IR requires a graph input's value to have the "
        "declared rank and fixed dims (IR.md, \"Static tensor shapes\"), so Trellis refuses the data, as ONNX "
        "Runtime 1.30 does (\"Invalid rank for input: like Got: 1 Expected: 2\"). The expected output cannot "
        "decide it: CastLike's output takes `input`'s shape, whatever `like`'s is."),
}


def note_for(case):
    if case["label"] != "node":  # the notes are about Debian's ONNX 1.12 data
        return None
    if case["case"].startswith("test_castlike_") and "BFLOAT16" in case["case"] and \
            "test data contradicts the model" in case["reason"]:
        return NOTES["castlike_like_shape"]
    return NOTES.get(case["case"])


def model_ops(path):
    model = onnx.load(os.path.join(path, "model.onnx"), load_external_data=False)
    ops = []
    for graph in exclusions._graphs(model.graph):
        for node in graph.node:
            if node.op_type not in ops:
                ops.append(node.op_type)
    return ops


def data_version():
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "libonnx-testdata"],
                             capture_output=True, text=True, timeout=30)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def case_list(entries):
    """'node: a, b; simple: c' with each name in backticks."""
    by_dir = collections.OrderedDict()
    for label, name in entries:
        by_dir.setdefault(label, []).append(f"`{name}`")
    return "; ".join(f"{label}: {', '.join(names)}" for label, names in by_dir.items())


def run_key(label, backends):
    """The entry of expected_pass_counts.json for a run: the directory name for Debian's data (run on
    CpuRef), "onnx-1.23.1/node (CpuAcc,CpuRef)" for the generated cases."""
    return f"{label} ({','.join(backends)})" if label.startswith("onnx-") else label


def percent(part, whole):
    return f"{part} of {whole} ({100.0 * part / whole:.1f}%)" if whole else "-"


def gpu_cause(reason):
    """GpuAcc's refusal of the first layer it declines, with types, ranks and names left out, or
    the importer's or optimizer's cause when GpuAcc was not asked."""
    m = re.search(r"GpuAcc: (.*?)(?:;|\n|$)", reason)
    if not m:
        if re.search(r"could not be evaluated|must be known when the network is optimized", reason):
            return ("before GpuAcc: a shape or parameter must be computed at optimization; GpuAcc works on "
                    "device memory and computes nothing then (a host backend in the list does)")
        return "before GpuAcc: " + cause_of("unsupported", reason)
    text = strip_names(m[1])
    if re.search(r"data type \w+ is not supported|input \d+ is \w+|tensor \d+ is \w+|is not Float32|"
                 r"must be Boolean|must be Signed32|runs element-wise ops on Float32|computes Float32 tensors", text):
        op = text.split(":")[0].split(" ")[0]
        return f"{op}: a tensor type GpuAcc does not run (it computes Float32; Boolean for logic)"
    text = re.sub(r"\d+ spatial dims$", "not 2-D", text)
    text = re.sub(r"C \S+ must be a bias of N=\d+ elements or have the output's shape \S+",
                  "C must be a bias over N or have the output's shape", text)
    text = re.sub(r"dim \d+ between them", "a dim between them", text)
    return text


def gpu_section(w, path):
    """GpuAcc's node-suite runs on a GPU: counts per backend list, failures, and (for the run with
    GpuAcc alone) why GpuAcc declined the cases it did not run, grouped by cause."""
    with open(path, encoding="utf-8") as f:
        results = json.load(f)
    w("## GpuAcc (CUDA), on a GPU")
    w("")
    w(f"Measured on {results['device']} (driver {results['driver']}, CUDA {results['cuda']}) with "
      f"{results['test_data']} by `bench/gpu/device_run.sh`; CI has no GPU, so these runs are not part of "
      "ctest. With `GpuAcc,CpuRef` every layer GpuAcc declines runs on CpuRef (with MemCopy layers at the "
      "boundaries); with `GpuAcc` alone a case with any declined layer is unsupported.")
    w("")
    w("| backends | directory | cases | pass | fail | unsupported |")
    w("|---|---|---:|---:|---:|---:|")
    for run in results["runs"]:
        total = run["passed"] + run["failed"] + run["skipped"]
        w(f"| {','.join(run['backends'])} | {run['directory']} | {total} | {run['passed']} | {run['failed']} | "
          f"{run['skipped']} |")
    w("")
    for run in results["runs"]:
        fails = [c for c in run["not_passed"] if c["status"] == "fail"]
        if fails:
            w(f"Failing with `{','.join(run['backends'])}`:")
            w("")
            for c in fails:
                w(f"- `{c['case']}`: {c['reason']}")
            w("")
    alone = [r for r in results["runs"] if r["backends"] == ["GpuAcc"]]
    if alone:
        causes = collections.Counter()
        for c in alone[0]["not_passed"]:
            if c["status"] == "unsupported":
                causes[gpu_cause(c["reason"])] += 1
        w("Why the cases unsupported with `GpuAcc` alone are (GpuAcc's reason for the first layer it declines, "
          "or the importer's):")
        w("")
        w("| cases | cause |")
        w("|---:|---|")
        for cause, n in sorted(causes.items(), key=lambda kv: (-kv[1], kv[0])):
            w(f"| {n} | {cause.replace('|', '/')} |")
        w("")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("summaries", nargs="+", help="onnx-test --summary-json files (and run_onnxruntime.py's)")
    parser.add_argument("-o", "--output", default="-", help="markdown file to write (default: stdout)")
    parser.add_argument("--gpu", help="GpuAcc's node-suite results from a GPU machine (see the docstring)")
    parser.add_argument("--expected", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                           "expected_pass_counts.json"))
    args = parser.parse_args()

    with open(args.expected, encoding="utf-8") as f:
        expected = json.load(f)
    # One run = one summary file: a suite (label) on one list of backends, or on ONNX Runtime.
    runs = []
    python_runs = []  # tests/python/test_onnx_backend.py's counts (tests/python/conftest.py)
    excluded_by_path = {}
    for path in args.summaries:
        with open(path, encoding="utf-8") as f:
            summary = json.load(f)
        if summary.get("runner", "").startswith("trellis.backend"):
            python_runs.append(summary)
            continue
        cases = summary["cases"]
        if not cases:
            continue
        for case in cases:
            case["label"] = dir_label(case)
            case["path"] = case_dir(case)
            if case["path"] not in excluded_by_path:
                excluded_by_path[case["path"]] = exclusions.classify_case(case["path"])
            case["excluded"] = excluded_by_path[case["path"]]
        runs.append({"label": cases[0]["label"], "backends": summary["backends"],
                     "onnxruntime": summary.get("runner") == "onnxruntime", "cases": cases})
    labels = sorted({r["label"] for r in runs},
                    key=lambda l: (DIR_ORDER.index(l) if l in DIR_ORDER else len(DIR_ORDER), l))

    def trellis_runs(label):
        mine = [r for r in runs if r["label"] == label and not r["onnxruntime"]]
        # The reference run (CpuRef alone) first.
        return sorted(mine, key=lambda r: (r["backends"] != ["CpuRef"], r["backends"]))

    def ort_run(label):
        return next((r for r in runs if r["label"] == label and r["onnxruntime"]), None)

    def inside_pass(run):
        inside = [c for c in run["cases"] if not c["excluded"]]
        return sum(1 for c in inside if c["status"] == "pass"), len(inside)

    out = []
    w = out.append
    w("# ONNX conformance")
    w("")
    w("How Trellis does on two suites of ONNX backend test cases, run by `trellis onnx-test`:")
    w("")
    w(f"- the node cases of **ONNX {ONNX_CASES_VERSION}**, the current release (PyPI `onnx=={ONNX_CASES_VERSION}`, "
      "opsets up to 28): its wheel ships no test data, so `tests/conformance/gen_onnx_node_cases.py` writes every "
      "case its generators (`onnx.backend.test.case.node`) make into the build tree at test time, with the venv "
      "`scripts/install-deps.sh` installs. They run on CpuRef alone and with CpuAcc in front, and ONNX Runtime "
      "runs the same cases in the same ctest run (`tests/conformance/run_onnxruntime.py`);")
    w(f"- Debian's `libonnx-testdata` (ONNX 1.12, opsets up to 17; version {data_version()}), on CpuRef.")
    w("")
    w("Each case is a model and its expected outputs; a case passes when every output has the expected type and "
      "shape and its values match (floats within ONNX's tolerance, `|got - want| <= 1e-7 + 1e-3 * |want|`; "
      "integers and booleans exactly). A case that does not pass either *fails* (wrong result, or an error other "
      "than a refusal) or is *unsupported* (the importer or the optimizer refused the model, with a reason; for "
      "ONNX Runtime: creating its session failed).")
    w("")
    w("This file is generated; do not edit it. To regenerate it:")
    w("")
    w("```")
    w("ctest --test-dir build -R 'onnx_conformance|python_onnx_backend'   # writes build/tests/conformance/*.json")
    w("/usr/bin/python3 tests/conformance/make_conformance_doc.py build/tests/conformance/*.json \\")
    w("    --gpu tests/conformance/gpuacc_node_results.json -o docs/conformance.md")
    w("```")
    w("")
    w("The ctest tests `onnx_conformance_<suite>[_<backends>]` fail when fewer cases pass than "
      "`tests/conformance/expected_pass_counts.json` records (or when `trellis onnx-test` crashes or hangs); raise "
      "the count there when more pass. `onnx_conformance_onnx_*_onnxruntime` only measures.")
    w("")
    w("## Summary")
    w("")
    w("| suite | run on | cases | pass | fail | unsupported | excluded | pass outside exclusions | target | "
      "recorded pass count |")
    w("|---|---|---:|---:|---:|---:|---:|---:|---|---:|")
    for label in labels:
        ort = ort_run(label)
        ordered = trellis_runs(label) + ([ort] if ort else [])
        for run in ordered:
            mine = run["cases"]
            count = collections.Counter(c["status"] for c in mine)
            passed, inside = inside_pass(run)
            if run["onnxruntime"]:
                target, recorded, who = "-", "-", run["backends"][0]
            else:
                if label in TARGETS:
                    target = f"{TARGETS[label] * 100:.0f}%"
                elif ort:
                    target = f">= ONNX Runtime ({inside_pass(ort)[0]})"
                else:
                    target = "-"
                recorded = expected.get(run_key(label, run["backends"]), "-")
                who = "Trellis: " + ", ".join(run["backends"])
            w(f"| {label} | {who} | {len(mine)} | {count['pass']} | {count['fail']} | {count['unsupported']} | "
              f"{len(mine) - inside} | {percent(passed, inside)} | {target} | {recorded} |")
    w("")
    w("The `_expanded` variants of the node tests (a function op written out as its body) count like any "
      "other case.")
    w("")
    if python_runs:
        w("### Through the Python package: ONNX's own test runner")
        w("")
        w("`tests/python/test_onnx_backend.py` (ctest `python_onnx_backend_<backends>`) runs ONNX's backend test "
          "suite with its own runner, `onnx.backend.test.BackendTest(trellis.backend)`: the cases of the onnx "
          "package of Debian's python3 (node, simple, pytorch-converted, pytorch-operator and the 'real' models), on "
          "the device CPU. Left out, as skips with their reasons: the cases of the exclusions below (decided from "
          "each model by the same `tests/conformance/exclusions.py`) and the 9 'real' models, which the runner "
          "would download. Known failures (expected failures: one that starts passing fails the run) are listed "
          "in the test with their reasons: the bfloat16 cases the CLI fails too (see below), and, with CpuAcc in "
          "front, `test_log_example` (below).")
        w("")
        w("| runner | run on | onnx | cases | pass | known failures | left out | fail |")
        w("|---|---|---|---:|---:|---:|---:|---:|")
        for run in sorted(python_runs, key=lambda r: (r["backends"] != ["CpuRef"], r["backends"])):
            w(f"| {run['runner']} | Trellis: {', '.join(run['backends'])} | {run['onnx']} | {run['cases']} | "
              f"{run['passed']} | {run['known_failures']} | {run['skipped']} | {run['failed']} |")
        w("")
        debian = [r for r in runs if r["label"] in ("node", "simple", "pytorch-converted", "pytorch-operator")
                  and r["backends"] == ["CpuRef"] and not r["onnxruntime"]]
        if debian:
            cli_pass = sum(1 for r in debian for c in r["cases"] if c["status"] == "pass")
            cli_cases = sum(len(r["cases"]) for r in debian)
            w(f"For comparison, `trellis onnx-test` passes {cli_pass} of the same {cli_cases} cases (node, simple, "
              "pytorch-converted, pytorch-operator; without the 'real' models) on CpuRef.")
            w("")
    for label in labels:
        ort = ort_run(label)
        reference = trellis_runs(label)[0] if trellis_runs(label) else None
        if not ort or not reference:
            continue
        ort_status = {c["case"]: c for c in ort["cases"]}
        inside = [c for c in reference["cases"] if not c["excluded"]]
        only_ort = [c for c in inside if c["status"] != "pass" and ort_status.get(c["case"], {}).get("status") == "pass"]
        only_trellis = [c for c in inside if c["status"] == "pass" and
                        ort_status.get(c["case"], {}).get("status") != "pass"]
        w(f"On {label}, outside the exclusions, ONNX Runtime passes {len(only_ort)} cases that Trellis "
          f"({', '.join(reference['backends'])}) does not, and Trellis passes {len(only_trellis)} that ONNX Runtime "
          "does not. ONNX Runtime's count is measured through its Python API, which cannot exchange the sub-byte "
          "types (int4, uint4, int2, uint2, float4e2m1) nor return float8/bfloat16 tensors it has no numpy type "
          "for: those cases fail for it with the API's message, listed below.")
        w("")

    w("## Exclusions")
    w("")
    w("Issue 4 allows four kinds of exclusion and no others. A case is excluded when its model (any node, "
      "nested graphs included, or any graph value) uses one of them; `tests/conformance/exclusions.py` decides "
      "from the model, not from the case's name. An excluded case still runs and is still counted above; it "
      "only leaves the \"pass outside exclusions\" figure.")
    w("")
    w("- **Training-only ops**: the `ai.onnx.preview.training` domain (Adagrad, Adam, Momentum, Gradient), and "
      "Dropout given a `training_mode` input (training-time behaviour; its mask is random).")
    w("- **String, sequence and optional types**: graph values of those types (and maps), the Sequence*/Optional*/"
      "String* ops, casts to or from STRING.")
    w("- **Random-number ops**: RandomNormal, RandomUniform (and their `Like` forms), Bernoulli, Multinomial.")
    w("- **Control flow**: If and Scan. (Loop would be allowed too, but Trellis runs it: it unrolls the loop "
      "when the network is optimized, pinning graph inputs that decide the trip count or the condition per run, "
      "so the Loop cases, the `range_*_expanded` ones among them, count like any other.)")
    w("")
    reference_cases = [c for label in labels if trellis_runs(label) for c in trellis_runs(label)[0]["cases"]]
    for category, title in exclusions.CATEGORIES.items():
        mine = [c for c in reference_cases if c["excluded"] and c["excluded"][0] == category]
        w(f"### {title} ({len(mine)} cases)")
        w("")
        if not mine:
            w("None.")
            w("")
            continue
        w("| case | uses | result |")
        w("|---|---|---|")
        for c in mine:
            w(f"| {c['label']}/`{c['case']}` | {c['excluded'][1]} | {c['status']} |")
        w("")

    failing = [c for c in reference_cases if not c["excluded"] and c["status"] != "pass"]
    ort_by_case = {}
    for label in labels:
        ort = ort_run(label)
        if ort:
            for c in ort["cases"]:
                ort_by_case[(label, c["case"])] = c
    groups = collections.OrderedDict()
    for c in failing:
        c["cause"] = cause_of(c["status"], c["reason"])
        groups.setdefault((c["status"], c["cause"]), []).append(c)
    ordered = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0][0], kv[0][1]))

    def ort_passes(c):
        o = ort_by_case.get((c["label"], c["case"]))
        return o is not None and o["status"] == "pass"

    w("## Cases that do not pass, by cause")
    w("")
    w(f"{len(failing)} cases outside the exclusions do not pass on the reference run of each suite (CpuRef). "
      "Causes by number of cases (the last column counts those ONNX Runtime passes, where it ran the suite):")
    w("")
    w("| cases | result | cause | ONNX Runtime passes |")
    w("|---:|---|---|---:|")
    for (status, cause), members in ordered:
        w(f"| {len(members)} | {status} | {cause} | {sum(1 for c in members if ort_passes(c))} |")
    w("")
    for (status, cause), members in ordered:
        w(f"### {cause} ({status}, {len(members)} cases)")
        w("")
        reasons = {strip_names(c["reason"]) for c in members}
        notes = {note_for(c) for c in members}
        if len(reasons) == 1 and cause != "wrong values":
            w(f"Reason, for example: {members[0]['label']}/`{members[0]['case']}`: {members[0]['reason']}")
            w("")
            w(case_list([(c["label"], c["case"] + (" (ORT passes)" if ort_passes(c) else "")) for c in members]))
            if len(notes) == 1 and None not in notes:
                w("")
                w(f"Why it stays so: {notes.pop()}")
        else:
            for c in members:
                ops = ", ".join(model_ops(c["path"]))
                note = note_for(c)
                w(f"- {c['label']}/`{c['case']}` (ops: {ops}{'; ONNX Runtime passes it' if ort_passes(c) else ''}): "
                  f"{c['reason']}" + (f"\n\n  Why it stays so: {note}\n" if note else ""))
        w("")

    # Other runs of a suite (CpuAcc in front) against its reference run.
    for label in labels:
        runs_here = trellis_runs(label)
        for run in runs_here[1:]:
            ref = {c["case"]: c for c in runs_here[0]["cases"]}
            differ = [c for c in run["cases"] if not c["excluded"] and c["status"] != ref[c["case"]]["status"]]
            w(f"## {label} with {', '.join(run['backends'])}: cases whose result differs from CpuRef's")
            w("")
            if not differ:
                w("None: every case outside the exclusions has the same result as on CpuRef alone.")
                w("")
                continue
            for c in differ:
                w(f"- `{c['case']}`: {c['status']} (CpuRef: {ref[c['case']]['status']})"
                  + (f": {c['reason']}" if c["reason"] else ""))
            w("")

    for label in labels:
        ort = ort_run(label)
        if not ort:
            continue
        bad = [c for c in ort["cases"] if not c["excluded"] and c["status"] != "pass"]
        by_cause = collections.OrderedDict()
        for c in bad:
            by_cause.setdefault(ort_cause(c["reason"]), []).append(c)
        w(f"## {label}: cases outside the exclusions that ONNX Runtime does not pass ({len(bad)})")
        w("")
        w("| cases | cause | cases |")
        w("|---:|---|---|")
        for cause, members in sorted(by_cause.items(), key=lambda kv: -len(kv[1])):
            w(f"| {len(members)} | {cause} | {', '.join('`' + c['case'] + '`' for c in members)} |")
        w("")

    for c in reference_cases:
        if c["status"] == "pass" and c["label"] == "node" and c["case"] in NOTES:
            print(f"note: {c['case']} passes now; remove its entry from NOTES", file=sys.stderr)

    if args.gpu:
        gpu_section(w, args.gpu)

    text = "\n".join(out).rstrip("\n") + "\n"
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)


def ort_cause(reason):
    """A short cause for an ONNX Runtime failure, so equal causes group."""
    m = re.search(r"Unsupported model IR version: (\d+), max supported IR version: (\d+)", reason)
    if m:
        return f"refuses the model's IR version {m[1]} (it reads up to {m[2]})"
    m = re.search(r"Opset (\d+) is under development.*support for domain ai.onnx is till opset (\d+)", reason)
    if m:
        return f"refuses opsets above {m[2]} (opset {m[1]} and later are in development for it)"
    m = re.search(r"Unrecognized attribute: (\w+) for operator (\w+)", reason)
    if m:
        return f"does not know {m[2]}'s attribute {m[1]}"
    m = re.search(r"Failed to find kernel for (\w+)\((\d+)\)", reason)
    if m:
        return f"no kernel for {m[1]}-{m[2]}"
    m = re.search(r"Could not find an implementation for (\w+)\((\d+)\) node", reason)
    if m:
        return f"no kernel for {m[1]}-{m[2]} (for these types)"
    if re.search(r"Numpy_type \d+ can't be converted|No corresponding Numpy type", reason):
        return "its Python API cannot exchange the tensor type"
    m = re.search(r"running (\w+) node", reason)
    if m:
        return f"{m[1]} failed at run time"
    if re.search(r"element \d+ \(", reason):
        return "wrong values"
    if "shape" in reason and "got" in reason:
        return "wrong output shape"
    reason = re.sub(r"/\S+/model\.onnx", "model.onnx", reason)
    reason = re.sub(r"/onnxruntime_src/\S+ ", "", reason)
    return strip_names(reason)[:160]


if __name__ == "__main__":
    main()
