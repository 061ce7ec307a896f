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
DIR_ORDER = ["node", "pytorch-converted", "pytorch-operator", "simple"]


def case_dir(case):
    base = case["dir"]
    return base if os.path.isfile(os.path.join(base, "model.onnx")) else os.path.join(base, case["case"])


def dir_label(case):
    path = os.path.normpath(case["dir"])
    if os.path.isfile(os.path.join(path, "model.onnx")):
        path = os.path.dirname(path)
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
    parser.add_argument("summaries", nargs="+", help="onnx-test --summary-json files")
    parser.add_argument("-o", "--output", default="-", help="markdown file to write (default: stdout)")
    parser.add_argument("--gpu", help="GpuAcc's node-suite results from a GPU machine (see the docstring)")
    parser.add_argument("--expected", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                           "expected_pass_counts.json"))
    args = parser.parse_args()

    cases = []
    backends = None
    for path in args.summaries:
        with open(path, encoding="utf-8") as f:
            summary = json.load(f)
        backends = backends or summary["backends"]
        cases.extend(summary["cases"])
    with open(args.expected, encoding="utf-8") as f:
        expected = json.load(f)

    for case in cases:
        case["label"] = dir_label(case)
        case["path"] = case_dir(case)
        case["excluded"] = exclusions.classify_case(case["path"])
    labels = sorted({c["label"] for c in cases},
                    key=lambda l: (DIR_ORDER.index(l) if l in DIR_ORDER else len(DIR_ORDER), l))

    out = []
    w = out.append
    w("# ONNX conformance")
    w("")
    w("How Trellis does on the ONNX backend test cases of Debian's `libonnx-testdata` "
      f"(version {data_version()}), run by `trellis onnx-test` on backends {', '.join(backends)}. Each case is a "
      "model and its expected outputs; a case passes when every output has the expected type and shape and its "
      "values match (floats within ONNX's tolerance, `|got - want| <= 1e-7 + 1e-3 * |want|`; integers and "
      "booleans exactly). A case that does not pass either *fails* (wrong result, or an error other than a "
      "refusal) or is *unsupported* (the importer or the optimizer refused the model, with a reason).")
    w("")
    w("This file is generated; do not edit it. To regenerate it:")
    w("")
    w("```")
    w("ctest --test-dir build -R onnx_conformance     # writes build/tests/conformance/*.json")
    w("/usr/bin/python3 tests/conformance/make_conformance_doc.py build/tests/conformance/*.json \\")
    w("    --gpu tests/conformance/gpuacc_node_results.json -o docs/conformance.md")
    w("```")
    w("")
    w("The ctest tests `onnx_conformance_<dir>` fail when fewer cases pass than "
      "`tests/conformance/expected_pass_counts.json` records; raise the count there when more pass.")
    w("")
    w("## Summary")
    w("")
    w("| directory | cases | pass | fail | unsupported | excluded | pass outside exclusions | target | recorded pass count |")
    w("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for label in labels:
        mine = [c for c in cases if c["label"] == label]
        count = collections.Counter(c["status"] for c in mine)
        inside = [c for c in mine if not c["excluded"]]
        inside_pass = sum(1 for c in inside if c["status"] == "pass")
        rate = f"{inside_pass} of {len(inside)} ({100.0 * inside_pass / len(inside):.1f}%)" if inside else "-"
        target = f"{TARGETS[label] * 100:.0f}%" if label in TARGETS else "-"
        w(f"| {label} | {len(mine)} | {count['pass']} | {count['fail']} | {count['unsupported']} | "
          f"{len(mine) - len(inside)} | {rate} | {target} | {expected.get(label, '-')} |")
    w("")
    w("The `_expanded` variants of the node tests (a function op written out as its body) count like any "
      "other case.")
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
    for category, title in exclusions.CATEGORIES.items():
        mine = [c for c in cases if c["excluded"] and c["excluded"][0] == category]
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

    failing = [c for c in cases if not c["excluded"] and c["status"] != "pass"]
    groups = collections.OrderedDict()
    for c in failing:
        c["cause"] = cause_of(c["status"], c["reason"])
        groups.setdefault((c["status"], c["cause"]), []).append(c)
    ordered = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0][0], kv[0][1]))

    w("## Cases that do not pass, by cause")
    w("")
    w(f"{len(failing)} cases outside the exclusions do not pass. Causes by number of cases:")
    w("")
    w("| cases | result | cause |")
    w("|---:|---|---|")
    for (status, cause), members in ordered:
        w(f"| {len(members)} | {status} | {cause} |")
    w("")
    for (status, cause), members in ordered:
        w(f"### {cause} ({status}, {len(members)} cases)")
        w("")
        reasons = {strip_names(c["reason"]) for c in members}
        notes = {note_for(c) for c in members}
        if len(reasons) == 1 and cause != "wrong values":
            w(f"Reason, for example: {members[0]['label']}/`{members[0]['case']}`: {members[0]['reason']}")
            w("")
            w(case_list([(c["label"], c["case"]) for c in members]))
            if len(notes) == 1 and None not in notes:
                w("")
                w(f"Why it stays so: {notes.pop()}")
        else:
            for c in members:
                ops = ", ".join(model_ops(c["path"]))
                note = note_for(c)
                w(f"- {c['label']}/`{c['case']}` (ops: {ops}): {c['reason']}" +
                  (f"\n\n  Why it stays so: {note}\n" if note else ""))
        w("")
    for c in cases:
        if c["status"] == "pass" and c["case"] in NOTES:
            print(f"note: {c['case']} passes now; remove its entry from NOTES", file=sys.stderr)

    if args.gpu:
        gpu_section(w, args.gpu)

    text = "\n".join(out).rstrip("\n") + "\n"
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    main()
