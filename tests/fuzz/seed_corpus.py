#!/usr/bin/env python3
"""Copies the seed corpus of the fuzz targets into OUT/<target>/, the working corpus (inputs the
fuzzer added there earlier stay; seeds are overwritten with the same names). Nothing is
downloaded.

  onnx_model:      every model.onnx of the ONNX test data (node, pytorch-converted,
                   pytorch-operator, simple) up to 64 KiB, the target's input cap
  tensor_file:     every .pb of the same test cases up to 64 KiB, and .npy files generated with
                   numpy (each dtype the reader knows, ranks 0 to 4, an empty array, a version-2.0
                   header)
  dynamic_backend: the test dynamic backends (tests/dynamic) and the Custom sample backend,
                   stripped, each behind the target's two-byte prefix (flags 0, name length 0);
                   those still over the target's 256 KiB cap are left out

Usage: seed_corpus.py TESTDATA_DIR OUT_DIR TEST_BACKENDS_DIR CUSTOM_BACKEND_FILE
One process (spawning one per file made seeding take most of a minute here).
"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

LIMIT = 64 * 1024
BACKEND_LIMIT = 256 * 1024


def copy_models_and_tensors(testdata, out):
    for group in ("node", "pytorch-converted", "pytorch-operator", "simple"):
        for model in sorted(glob.glob(os.path.join(testdata, group, "*", "model.onnx"))):
            if os.path.getsize(model) > LIMIT:
                continue
            case_dir = os.path.dirname(model)
            case = os.path.basename(case_dir)
            shutil.copyfile(model, os.path.join(out, "onnx_model", f"{group}_{case}.onnx"))
            for pb in sorted(glob.glob(os.path.join(case_dir, "test_data_set_*", "*.pb"))):
                if os.path.getsize(pb) > LIMIT:
                    continue
                data_set = os.path.basename(os.path.dirname(pb))
                name = f"{group}_{case}_{data_set}_{os.path.basename(pb)}"
                shutil.copyfile(pb, os.path.join(out, "tensor_file", name))


def generate_npy(out):
    rng = np.random.default_rng(0)
    shapes = [(), (0,), (5,), (2, 3), (1, 2, 3, 1)]
    for dtype in ["<f4", "<f8", "<f2", "<i4", "<i8", "|b1", "|u1", "|i1", "<i2", "<u2", "<u4", "<u8"]:
        for rank, shape in enumerate(shapes):
            a = (rng.random(shape) * 10).astype(dtype)
            np.save(os.path.join(out, "tensor_file", f"gen_{dtype[1:]}_rank{rank}.npy"), a, allow_pickle=False)
    # A version 2.0 header, which numpy writes only for long headers: written by hand.
    a = np.arange(6, dtype="<f4").reshape(2, 3)
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"
    header += " " * (63 - (12 + len(header)) % 64) + "\n"
    with open(os.path.join(out, "tensor_file", "gen_f4_v2.npy"), "wb") as f:
        f.write(b"\x93NUMPY\x02\x00" + len(header).to_bytes(4, "little") + header.encode() + a.tobytes())


def copy_backends(backends, custom, out):
    # Stripped: the fuzzing build's objects carry instrumentation and debug information; the
    # loader reads headers only, and a smaller input fuzzes faster.
    files = sorted(glob.glob(os.path.join(backends, "*_backend.so"))) + [custom]
    with tempfile.TemporaryDirectory() as tmp:
        stripped = os.path.join(tmp, "stripped.so")
        for so in files:
            if not os.path.isfile(so):
                continue
            if subprocess.run(["strip", "-s", "-o", stripped, so], stderr=subprocess.DEVNULL).returncode != 0:
                shutil.copyfile(so, stripped)
            if os.path.getsize(stripped) > BACKEND_LIMIT:
                continue
            with open(stripped, "rb") as f:
                content = f.read()
            with open(os.path.join(out, "dynamic_backend", os.path.basename(so)), "wb") as f:
                f.write(b"\x00\x00" + content)


def main():
    testdata, out, backends, custom = sys.argv[1:5]
    for target in ("onnx_model", "tensor_file", "dynamic_backend"):
        os.makedirs(os.path.join(out, target), exist_ok=True)
    copy_models_and_tensors(testdata, out)
    generate_npy(out)
    copy_backends(backends, custom, out)
    for target in ("onnx_model", "tensor_file", "dynamic_backend"):
        print(f"fuzz seeds: {target}: {len(os.listdir(os.path.join(out, target)))} files in {out}/{target}")


if __name__ == "__main__":
    main()
