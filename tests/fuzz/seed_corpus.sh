#!/usr/bin/env bash
# Copies the seed corpus of the fuzz targets into OUT/<target>/ (the working corpus: inputs the
# fuzzer added there earlier stay):
#   onnx_model:      every model.onnx of the ONNX test data (node, pytorch-converted,
#                    pytorch-operator, simple) up to 64 KiB, the target's input cap
#   tensor_file:     every .pb of the same test data up to 64 KiB, and .npy files generated with
#                    numpy (each dtype the reader knows, several ranks, versions 1.0 and 2.0)
#   dynamic_backend: the test dynamic backends (tests/dynamic) and the Custom sample backend,
#                    stripped, each behind the target's two-byte prefix (flags 0, name length 0);
#                    those still over the target's 256 KiB cap are left out
# Usage: seed_corpus.sh TESTDATA_DIR OUT_DIR TEST_BACKENDS_DIR CUSTOM_BACKEND_FILE
# Nothing is downloaded. Environment: TRELLIS_PYTHON (default /usr/bin/python3) for numpy.
set -euo pipefail
testdata=$1 out=$2 backends=$3 custom=$4
python=${TRELLIS_PYTHON:-/usr/bin/python3}
limit=$((64 * 1024))

# Seeds are copied over whatever the corpus holds; what the fuzzer added there is kept.
mkdir -p "$out/onnx_model" "$out/tensor_file" "$out/dynamic_backend"

for dir in node pytorch-converted pytorch-operator simple; do
  [[ -d "$testdata/$dir" ]] || continue
  for model in "$testdata/$dir"/*/model.onnx; do
    [[ -f "$model" && $(stat -c %s "$model") -le $limit ]] || continue
    case_name=$(basename "$(dirname "$model")")
    cp "$model" "$out/onnx_model/${dir}_${case_name}.onnx"
    for pb in "$(dirname "$model")"/test_data_set_*/*.pb; do
      [[ -f "$pb" && $(stat -c %s "$pb") -le $limit ]] || continue
      set_name=$(basename "$(dirname "$pb")")
      cp "$pb" "$out/tensor_file/${dir}_${case_name}_${set_name}_$(basename "$pb")"
    done
  done
done

"$python" - "$out/tensor_file" <<'PY'
import sys, numpy as np
out = sys.argv[1]
rng = np.random.default_rng(0)
shapes = [(), (0,), (5,), (2, 3), (1, 2, 3, 1)]
for dtype in ["<f4", "<f8", "<f2", "<i4", "<i8", "|b1", "|u1", "|i1", "<i2", "<u2", "<u4", "<u8"]:
    for rank, shape in enumerate(shapes):
        a = (rng.random(shape) * 10).astype(dtype)
        np.save(f"{out}/gen_{dtype[1:]}_rank{rank}.npy", a, allow_pickle=False)
# A version 2.0 header, which numpy writes only for long headers: write one by hand.
a = np.arange(6, dtype="<f4").reshape(2, 3)
header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"
header += " " * (63 - (12 + len(header)) % 64) + "\n"
with open(f"{out}/gen_f4_v2.npy", "wb") as f:
    f.write(b"\x93NUMPY\x02\x00" + len(header).to_bytes(4, "little") + header.encode() + a.tobytes())
PY

# Stripped (the fuzzing build's objects carry instrumentation and debug information; the loader
# reads headers only, and a smaller input fuzzes faster).
stripped=$(mktemp)
trap 'rm -f "$stripped"' EXIT
for so in "$backends"/*_backend.so "$custom"; do
  [[ -f "$so" ]] || continue
  strip -s -o "$stripped" "$so" 2>/dev/null || cp "$so" "$stripped"
  (($(stat -c %s "$stripped") <= 256 * 1024)) || continue  # the target's input cap
  { printf '\x00\x00'; cat "$stripped"; } > "$out/dynamic_backend/$(basename "$so")"
done

for target in onnx_model tensor_file dynamic_backend; do
  echo "fuzz seeds: $target: $(ls "$out/$target" | wc -l) files"
done
