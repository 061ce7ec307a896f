#!/usr/bin/env bash
# The model sweep (every torchvision classification and segmentation model, a few transformers
# architectures) on a machine with many cores: a benchmark, not a test.
#
#   bench/cpu/sweep_parallel.sh OUTDIR [run_bench.py options, e.g. --isa-cap AVX2]
#
# It splits the sweep into SHARDS (default: cores / 2) shards, exports each shard's models into
# OUTDIR/shard-K (make_models.py --sweep; models already there are kept), then runs run_bench.py on
# every shard at once, each shard pinned with taskset to its own two cores (so a 2-thread run has two
# cores to itself), and merges the shards' rows into OUTDIR/sweep[-ISA].md. Shards share the memory
# bus and the last-level cache: both engines of a round see the same neighbours, which the paired
# ratio (each round's two processes back to back) is least disturbed by; on a 2-core machine run
# run_bench.py directly instead (see its help).
#
# Environment: PY (python with torch, torchvision, onnx, transformers: the export; default
# /usr/bin/python3), ORT_PY (python with onnxruntime 1.30 and onnx; default python3), TRELLIS (the
# trellis program; default build/bin/trellis), SHARDS, ROUNDS (default 2), MIN_TIME (default 0.5),
# MAX_PARAMS (default 5e8: vit_h_14 and regnet_y_128gf, 2.5 GB of weights each in a NAME.onnx.data file
# beside the model, take minutes each to export and to time), PHASE
# (export, time or all; default all), MODELS (comma-separated sweep models: only these; default all).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
OUTDIR="${1:?usage: sweep_parallel.sh OUTDIR [run_bench.py options]}"
shift
PY="${PY:-/usr/bin/python3}"
ORT_PY="${ORT_PY:-python3}"
TRELLIS="${TRELLIS:-$ROOT/build/bin/trellis}"
CORES="$(nproc)"
SHARDS="${SHARDS:-$(( CORES / 2 > 0 ? CORES / 2 : 1 ))}"
ROUNDS="${ROUNDS:-2}"
MIN_TIME="${MIN_TIME:-0.5}"
MAX_PARAMS="${MAX_PARAMS:-5e8}"
PHASE="${PHASE:-all}"
export MODELS="${MODELS:-}"
SUFFIX=""
for a in "$@"; do case "$a" in AVX2|AVX512_CORE) SUFFIX="-$a";; esac; done
mkdir -p "$OUTDIR"

# Shard K gets every SHARDS-th model of the sweep in order of parameter count, so the big ones spread.
# The lists are kept in OUTDIR/shards-N.txt, so a later PHASE=time run reads the same ones.
if [ ! -s "$OUTDIR/shards-$SHARDS.txt" ]; then
(cd "$HERE" && "$PY" - "$SHARDS" > "$OUTDIR/shards-$SHARDS.txt" <<'PYEOF'
import sys
import model_zoo
shards = int(sys.argv[1])
import os
models = model_zoo.sweep_models()
wanted = [m for m in os.environ.get("MODELS", "").split(",") if m]
unknown = [m for m in wanted if m not in models]
if unknown:
    sys.exit("sweep_parallel.sh: MODELS names models the sweep does not have: " + ",".join(unknown))
if wanted:
    models = {m: models[m] for m in wanted}
def size(name):
    try:
        return sum(p.numel() for p in models[name][0]().parameters())
    except Exception:  # noqa: BLE001 - an unbuildable model still gets a shard; its export reports why
        return 0
names = sorted(models, key=size, reverse=True)
for k in range(min(shards, len(names))):  # no empty shard where MODELS names fewer models than shards
    print(",".join(names[k::shards]))
PYEOF
)
fi
mapfile -t SHARD_LISTS < "$OUTDIR/shards-$SHARDS.txt"

if [ "$PHASE" != time ]; then
echo "[sweep] $(date -u +%H:%M:%S) exporting ${#SHARD_LISTS[@]} shards on $CORES cores"
pids=()
for k in "${!SHARD_LISTS[@]}"; do
  c0=$(( (2 * k) % CORES )); c1=$(( (2 * k + 1) % CORES ))
  ( cd "$HERE" && MODELS_DIR="$OUTDIR/shard-$k" taskset -c "$c0,$c1" "$PY" make_models.py --sweep --skip-existing \
      --max-params "$MAX_PARAMS" --only "${SHARD_LISTS[$k]}" > "$OUTDIR/export-$k.log" 2>&1 ) &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || true; done
grep -h "FAILED\|skipped" "$OUTDIR"/export-*.log || true
fi
[ "$PHASE" != export ] || exit 0

echo "[sweep] $(date -u +%H:%M:%S) timing"
pids=(); jsons=()
for k in "${!SHARD_LISTS[@]}"; do
  c0=$(( (2 * k) % CORES )); c1=$(( (2 * k + 1) % CORES ))
  [ -f "$OUTDIR/shard-$k/manifest.json" ] || continue
  jsons+=("$OUTDIR/rows-$k$SUFFIX.json")
  taskset -c "$c0,$c1" "$ORT_PY" "$HERE/run_bench.py" --models-dir "$OUTDIR/shard-$k" --models all \
      --rounds "$ROUNDS" --min-time "$MIN_TIME" --trellis "$TRELLIS" --python "$ORT_PY" --debian-python "$ORT_PY" \
      --rows-json "$OUTDIR/rows-$k$SUFFIX.json" "$@" > "$OUTDIR/bench-$k$SUFFIX.log" 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || true; done
"$ORT_PY" "$HERE/run_bench.py" --merge "$(IFS=,; echo "${jsons[*]}")" --rounds "$ROUNDS" --min-time "$MIN_TIME" \
    --markdown "$OUTDIR/sweep$SUFFIX.md" "$@" | tail -1
echo "[sweep] $(date -u +%H:%M:%S) done: $OUTDIR/sweep$SUFFIX.md"
