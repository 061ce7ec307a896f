#!/usr/bin/python3
"""Generates every per-op test case (see opcase.py) into --out.

Each module tests/ops/cases_*.py defines generate(out_dir) and writes its cases there.
Run with Debian's python: /usr/bin/python3 tests/ops/gen_op_cases.py --out DIR
"""
import argparse
import glob
import importlib
import os
import shutil
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    # Start from an empty folder: a case renamed or removed since the last run must not linger
    # (the op-case test runs every folder it finds).
    shutil.rmtree(args.out, ignore_errors=True)
    os.makedirs(args.out, exist_ok=True)
    total = 0
    for path in sorted(glob.glob(os.path.join(HERE, "cases_*.py"))):
        name = os.path.splitext(os.path.basename(path))[0]
        t0 = time.time()
        before = len(os.listdir(args.out))
        importlib.import_module(name).generate(args.out)
        n = len(os.listdir(args.out)) - before
        total += n
        print("%s: %d cases (%.1f s)" % (name, n, time.time() - t0))
    print("op cases: %d in %s" % (total, args.out))


if __name__ == "__main__":
    main()
