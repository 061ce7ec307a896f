#!/usr/bin/python3
"""ctest wrapper: runs `trellis onnx-test` on one directory of ONNX backend test cases and fails if
the pass count dropped below the number recorded in expected_pass_counts.json, or if the command
crashed, hung, was misused or wrote no summary.

Exit status 0 = ok, 1 = regression or crash (the reason is printed). Only the standard library is
used, so any python3 runs it.
"""

import argparse
import json
import os
import subprocess
import sys
import time


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trellis", required=True, help="path of the trellis executable")
    parser.add_argument("--dir", required=True, help="directory of test cases, e.g. .../data/node")
    parser.add_argument("--key", required=True, help="entry of the expected-counts file, e.g. node")
    parser.add_argument("--expected", required=True, help="expected_pass_counts.json")
    parser.add_argument("--summary-json", required=True, help="where onnx-test writes its per-case results")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds before the run counts as hung")
    args = parser.parse_args()

    if not os.path.isdir(args.dir):
        fail(f"ONNX test data directory '{args.dir}' not found: install Debian's libonnx-testdata "
             "(scripts/install-deps.sh does) or set TRELLIS_ONNX_TESTDATA_DIR when configuring")
    with open(args.expected, encoding="utf-8") as f:
        expected_counts = json.load(f)
    if args.key not in expected_counts:
        fail(f"'{args.expected}' records no pass count for '{args.key}'")
    expected = int(expected_counts[args.key])

    os.makedirs(os.path.dirname(os.path.abspath(args.summary_json)), exist_ok=True)
    if os.path.exists(args.summary_json):
        os.remove(args.summary_json)
    command = [args.trellis, "onnx-test", args.dir, "--summary-json", args.summary_json]
    print("running:", " ".join(command), flush=True)
    start = time.monotonic()
    try:
        run = subprocess.run(command, capture_output=True, text=True, errors="replace", timeout=args.timeout)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        lines = out.splitlines()
        fail(f"onnx-test hung: no result after {args.timeout:.0f} s; the last case reported was: "
             f"{lines[-1] if lines else '(none)'}")
    seconds = time.monotonic() - start
    lines = run.stdout.splitlines()
    if run.returncode < 0 or run.returncode not in (0, 1):
        # A negative code is a signal (a crash); the case after the last line printed caused it.
        print(run.stdout[-4000:])
        print(run.stderr[-4000:])
        fail(f"onnx-test exited with status {run.returncode} (a crash or a usage error); the last case "
             f"reported was: {lines[-1] if lines else '(none)'}")
    if not os.path.exists(args.summary_json):
        print(run.stderr[-4000:])
        fail("onnx-test wrote no summary (--summary-json)")
    with open(args.summary_json, encoding="utf-8") as f:
        summary = json.load(f)
    cases = summary["cases"]
    passed = summary["passed"]
    closing = f"{summary['passed']} passed, {summary['failed']} failed, {summary['skipped']} skipped"
    if not lines or lines[-1] != closing:
        fail(f"the closing line '{lines[-1] if lines else ''}' does not match the summary ('{closing}')")
    counted = {s: sum(1 for c in cases if c["status"] == s) for s in ("pass", "fail", "unsupported")}
    if (counted["pass"], counted["fail"], counted["unsupported"]) != (passed, summary["failed"], summary["skipped"]):
        fail(f"the summary's counts {closing} disagree with its cases {counted}")

    print(f"{args.key}: {closing} ({len(cases)} cases, {seconds:.1f} s); recorded pass count {expected}")
    if passed < expected:
        for c in cases:
            if c["status"] != "pass":
                print(f"  {c['case']}: {c['status']}: {c['reason']}")
        fail(f"{args.key}: {passed} cases pass, fewer than the {expected} recorded in {args.expected} "
             "(the cases that do not pass are listed above)")
    if passed > expected:
        print(f"note: {passed - expected} more cases pass than recorded: raise '{args.key}' to {passed} in "
              f"{args.expected} and regenerate docs/conformance.md")


if __name__ == "__main__":
    main()
