#!/usr/bin/env bash
# Runs the fuzz targets of a TRELLIS_FUZZ build tree (see docs/reliability.md), one at a time:
#   1. replay: every input of BUILD/corpus/<target> (the seeds plus whatever earlier runs added)
#      and of tests/fuzz/regressions/<target> (the committed reproducers of fixed bugs) runs once;
#   2. fuzz: libFuzzer mutates that corpus for SECONDS seconds (new inputs that reach new code
#      are added to BUILD/corpus/<target>).
# A crash, sanitizer report, timeout or out-of-memory report in either step stops the script
# with status 1; libFuzzer leaves the input in BUILD/artifacts/<target>/ and the log in
# BUILD/logs/. Usage: run_fuzzers.sh BUILD SECONDS [TARGET...] (default: all three targets).
# Environment: FUZZ_NICE (default 0) runs the targets under `nice -n FUZZ_NICE`.
set -euo pipefail
build=$(cd "$1" && pwd)
seconds=$2
shift 2
targets=("$@")
((${#targets[@]})) || targets=(onnx_model tensor_file dynamic_backend)
root=$(cd "$(dirname "$0")/../.." && pwd)
nice_level=${FUZZ_NICE:-0}

# Per target: the input cap (the target's own cap) and the per-input time limit.
declare -A max_len=([onnx_model]=65536 [tensor_file]=65536 [dynamic_backend]=262144)
common=(-timeout=30 -rss_limit_mb=4096 -malloc_limit_mb=1024 -print_final_stats=1)

mkdir -p "$build/logs"
total_start=$(date +%s)
for target in "${targets[@]}"; do
  bin=$build/bin/trellis_fuzz_$target
  [[ -x $bin ]] || { echo "fuzz: $bin is not built (make fuzz builds it)" >&2; exit 1; }
  corpus=$build/corpus/$target
  regressions=$root/tests/fuzz/regressions/$target
  artifacts=$build/artifacts/$target
  mkdir -p "$corpus" "$artifacts"
  dirs=("$corpus")
  [[ -d $regressions ]] && dirs+=("$regressions")
  flags=("${common[@]}" -max_len="${max_len[$target]}" -artifact_prefix="$artifacts/")
  inputs=$(find "${dirs[@]}" -type f | wc -l)

  start=$(date +%s)
  log=$build/logs/$target-replay.log
  if ! nice -n "$nice_level" "$bin" "${flags[@]}" -runs=0 "${dirs[@]}" >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "fuzz: $target: replaying the corpus failed (log: $log, input: $artifacts/)" >&2
    exit 1
  fi
  replay=$(($(date +%s) - start))

  # -max_total_time counts from the start of the process, and loading the corpus comes first.
  start=$(date +%s)
  log=$build/logs/$target-fuzz.log
  if ! nice -n "$nice_level" "$bin" "${flags[@]}" -max_total_time=$((seconds + replay)) "${dirs[@]}" >"$log" 2>&1; then
    tail -n 60 "$log" >&2
    echo "fuzz: $target: fuzzing found a bug (log: $log, input: $artifacts/)" >&2
    exit 1
  fi
  fuzzed=$(($(date +%s) - start))
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  echo "fuzz: $target: replayed $inputs inputs in ${replay}s; fuzzed ${fuzzed}s (corpus reloaded, then" \
       "$seconds s of mutation), ${runs:-?} runs, no crash; corpus now $(find "$corpus" -type f | wc -l) files"
done
echo "fuzz: all targets clean in $(($(date +%s) - total_start))s"
