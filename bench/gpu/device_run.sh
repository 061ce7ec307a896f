#!/usr/bin/env bash
# Everything GpuAcc needs checked on a GPU machine, in one command per device lease.
#
# Build and stage on the build machine (no GPU needed there):
#   cmake --build build && ../shared/device/stage.sh build STAGE      # STAGE: e.g. .device-gpu
#   bench/gpu/device_run.sh --pack STAGE                              # adds this script, the test
#                                                                     # data and the bench scripts
# then on the GPU machine, from the folder holding STAGE:
#   source STAGE/env.sh && STAGE/gpu/device_run.sh STAGE [STAGES...]
# STAGES (default: all but tf32, bert, bf16, mobilenet and codegen): env unit opcases node models
# sanitizer bench smoke tf32 bert bf16 mobilenet codegen
#   codegen: `trellis codegen --target cuda` artifacts against CpuRef (relative L2 error at most
#   1e-4), a PASS or FAIL line per model in $OUT/summary.txt: the ones --pack built here with
#   CpuRef's outputs made here (tiny_cnn, squeezenet1_1, transformer, bert; set
#   CODEGEN_PACK_FILTER to change), then resnet50 and mobilenet_v2, which would take the staged
#   folder past the 64 MiB the device tool carries (CODEGEN_HERE_FILTER): exported,
#   generated, compiled (nvcc, cuDNN's headers of PyTorch's wheel) and referenced by CpuRef there;
#   then Trellis's op cases as cuda artifacts, built and run there (run_codegen_cases.py).
#   One command: source STAGE/env.sh && STAGE/gpu/device_run.sh STAGE codegen
# Logs go to $OUT (default /tmp/gpuacc-out): summary.txt, logs.tar.gz (one log per stage) and the
# bench results (gpu_bench.json, gpu_bench.md) - few files, as the device tool returns at most 8.
set -uo pipefail

if [[ ${1:-} == --pack ]]; then
  stage=$2
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  repo=$(cd "$here/../.." && pwd)
  mkdir -p "$stage/gpu"
  cp "$here/device_run.sh" "$here/run_gpu_bench.py" "$here/gpu_models.py" "$stage/gpu/"
  cp "$repo/tests/models/export_models.py" "$stage/gpu/"
  # Test data made here (numpy op cases; Debian's ONNX node tests), packed small.
  if [[ ! -f $stage/gpu/opcases.tar.xz ]]; then
    tmp=$(mktemp -d)
    /usr/bin/python3 "$repo/tests/ops/gen_op_cases.py" --out "$tmp/opcases" >/dev/null
    tar -C "$tmp" -cJf "$stage/gpu/opcases.tar.xz" opcases
    rm -rf "$tmp"
  fi
  [[ -f $stage/gpu/node.tar.xz ]] || tar -C /usr/share/libonnx-testdata/data -cJf "$stage/gpu/node.tar.xz" node
  # The codegen stage: cuda-target artifacts built here (nvcc, cuDNN) with CpuRef's outputs made
  # here, for the exported models of the build that fit in the carried tree.
  cp "$repo/tests/codegen/device_codegen.py" "$repo/tests/codegen/run_codegen_cases.py" "$stage/gpu/"
  build=${TRELLIS_BUILD_DIR:-$repo/build}
  /usr/bin/python3 "$repo/tests/codegen/device_codegen.py" pack --trellis "$build/bin/trellis" --models "$build/tests/models" \
    --out "$stage/gpu/codegen" --programs \
    --filter "${CODEGEN_PACK_FILTER:-^(tiny_cnn_op13|squeezenet1_1_op13|transformer_op13|bert_op14)$}" \
    || echo "device_run.sh --pack: some cuda artifacts could not be packed (see above)" >&2
  du -sh "$stage"
  exit 0
fi

stage=$(cd "${1:?usage: device_run.sh STAGE [STAGES...]}" && pwd)
shift
stages=${*:-env unit opcases node models sanitizer bench}
OUT=${OUT:-/tmp/gpuacc-out}
logs=$OUT/logs
mkdir -p "$logs"
work=/tmp/gpuacc-work
mkdir -p "$work"
bin=$stage/bin
py=python3
export PYTHONUNBUFFERED=1

run() {  # run NAME SECONDS CMD... : log to $OUT/NAME.log, print its tail
  local name=$1 secs=$2
  shift 2
  echo "=== $name: $*" | tee -a "$OUT/summary.txt"
  local t0=$SECONDS
  timeout "$secs" "$@" >"$logs/$name.log" 2>&1
  local rc=$?
  echo "=== $name: exit $rc after $((SECONDS - t0)) s" | tee -a "$OUT/summary.txt"
  tail -n 25 "$logs/$name.log"
  return $rc
}

models_dir=$work/models
export_models() {  # the PyTorch-exported test models (TorchScript exporter, opsets 13 and 17)
  [[ -f $models_dir/.done-$1-${2:-13} ]] && return 0
  $py "$stage/gpu/export_models.py" --out "$models_dir" --only "$1" --opsets "${2:-13}" && touch "$models_dir/.done-$1-${2:-13}"
}

for s in $stages; do
  case $s in
    env)
      run env 60 bash -c "nvidia-smi; $py -c 'import torch, onnx, onnxruntime; print(torch.__version__, torch.cuda.get_device_name(), onnx.__version__, onnxruntime.__version__)'; $bin/trellis backends"
      ;;
    smoke)
      run smoke ${GPUACC_SMOKE_SECONDS:-300} "$bin/trellis_unit_tests" --gtest_filter='GpuAcc*:*/GpuAccConv.*:*/GpuAccDepthwise.*:*/GpuAccAttention.*'
      ;;
    unit)
      # GpuAcc's own tests, and the engine's tests that exercise backends and boundaries.
      run unit 420 "$bin/trellis_unit_tests" \
        --gtest_filter='GpuAcc*:*/GpuAccConv.*:*/GpuAccDepthwise.*:*/GpuAccAttention.*:BackendBoundary*:Substitution*'
      ;;
    opcases)
      # Every per-op case on every registered backend (GpuAcc included; a declined case is a skip).
      [[ -d $work/opcases ]] || tar -C "$work" -xJf "$stage/gpu/opcases.tar.xz"
      TRELLIS_OP_CASES_DIR=$work/opcases run opcases 420 "$bin/trellis_unit_tests" --gtest_filter='OpCases.*'
      grep -E "op cases;|  [A-Za-z]+: [0-9]+ ran" "$logs/opcases.log"
      grep -c "on GpuAcc:" "$logs/opcases.log" | sed 's/^/GpuAcc declined cases: /'
      ;;
    node)
      [[ -d $work/node ]] || tar -C "$work" -xJf "$stage/gpu/node.tar.xz"
      run node_gpuacc_cpuref 420 "$bin/trellis" onnx-test "$work/node" --backends GpuAcc,CpuRef \
        --summary-json "$logs/node_gpuacc_cpuref.json"
      run node_gpuacc_only 420 "$bin/trellis" onnx-test "$work/node" --backends GpuAcc \
        --summary-json "$logs/node_gpuacc_only.json"
      ;;
    models)
      # PyTorch 2.x exports scaled_dot_product_attention from opset 14 on: the transformers at 17.
      for m in tiny_cnn squeezenet1_1 mobilenet_v2 resnet50 efficientnet_b0 shufflenet_v2_x1_0 mobilenet_v3_small; do
        export_models "$m" 13 >>"$logs/export.log" 2>&1 || echo "export $m failed (see export.log)"
      done
      for m in transformer vit_b_16; do
        export_models "$m" 17 >>"$logs/export.log" 2>&1 || echo "export $m failed (see export.log)"
      done
      TRELLIS_GPU_TEST_MODELS_DIR=$models_dir run models 420 "$bin/trellis_unit_tests" --gtest_filter='Models/GpuAccModel.*'
      grep -E "relative L2 error" "$logs/models.log"
      ;;
    sanitizer)
      # compute-sanitizer memcheck (and racecheck on one) over a few small models, GpuAcc only.
      export_models tiny_cnn 13 >/dev/null 2>&1
      export_models transformer 17 >/dev/null 2>&1
      export_models squeezenet1_1 13 >/dev/null 2>&1
      for m in tiny_cnn_op13 transformer_op17 squeezenet1_1_op13; do
        run "sanitizer_memcheck_$m" 300 compute-sanitizer --tool memcheck --error-exitcode 9 \
          "$bin/trellis" run "$models_dir/$m.onnx" --backends GpuAcc,CpuRef
      done
      run sanitizer_racecheck_tiny_cnn 300 compute-sanitizer --tool racecheck --error-exitcode 9 \
        "$bin/trellis" run "$models_dir/tiny_cnn_op13.onnx" --backends GpuAcc,CpuRef
      ;;
    bench)
      run bench 580 $py "$stage/gpu/run_gpu_bench.py" --trellis "$bin/trellis" --work "$work/bench" --out "$OUT" \
        ${GPUACC_BENCH_ARGS:-}
      cp "$work"/bench/steps_*.tsv "$logs/" 2>/dev/null  # the per-step profiles, whole
      ;;
    tf32)
      # resnet50 at batch 32 in tf32 and fp16, timed as built (TF32 convolutions behind an empty
      # kernel each: StepBarrier=auto), and the errors without any barrier (tf32 was 0.12-0.17 off
      # PyTorch so), with convolutions in fp32, and in fp16 with and without a barrier between all
      # steps (equal errors: fp16 engines do not need one); then the unit test on the same model.
      run tf32 ${GPUACC_TF32_SECONDS:-300} $py "$stage/gpu/run_gpu_bench.py" --trellis "$bin/trellis" --work "$work/bench" \
        --out "$OUT/tf32" --models resnet50 --batches 32 --precisions tf32,fp16 --no-torch --iters 30 \
        ${GPUACC_TF32_ARGS:---error-variants tf32:StepBarrier=off,tf32:ConvTf32=off,fp16:StepBarrier=kernel,fp16:StepBarrier=off}
      TRELLIS_GPU_BENCH_DIR=$work/bench run tf32_test 120 "$bin/trellis_unit_tests" \
        --gtest_filter='GpuAccPrecision.Resnet50AtBatch32InTf32MatchesPyTorchImageByImage'
      cp "$work"/bench/checkconvs_*.txt "$work"/bench/steps_resnet50_*.tsv "$logs/" 2>/dev/null
      grep -h "failed its check" "$work"/bench/steps_resnet50_*.tsv 2>/dev/null | cut -c1-600
      ;;
    bert)
      # The BERT-like encoder in fp16 (fused attention) at batch 1 and 32 against PyTorch eager and
      # torch.compile, with a per-step profile at batch 32.
      run bert ${GPUACC_BERT_SECONDS:-400} $py "$stage/gpu/run_gpu_bench.py" --trellis "$bin/trellis" \
        --work "$work/bench" --out "$OUT/bert" --models bert_like --batches 1,32 --precisions fp16 --compile fp16 \
        --iters 50 --profile bert_like:32:fp16
      cp "$work"/bench/steps_*.tsv "$logs/" 2>/dev/null
      ;;
    bf16)
      # GpuAcc in bf16 on the four benchmark models (its error against PyTorch's fp32 output and
      # its time; no PyTorch runs), and a per-step profile of mobilenet_v2 b32 in fp32.
      run bf16 ${GPUACC_BF16_SECONDS:-400} $py "$stage/gpu/run_gpu_bench.py" --trellis "$bin/trellis" \
        --work "$work/bench" --out "$OUT/bf16" --models resnet50,mobilenet_v2,bert_like,vit_b_16 --batches 1,32 \
        --precisions bf16 --no-torch --iters 20 --profile mobilenet_v2:32:fp32
      cp "$work"/bench/steps_*.tsv "$logs/" 2>/dev/null
      ;;
    mobilenet)
      # mobilenet_v2 at batch 32 (depthwise convolutions): GpuAcc against PyTorch eager, with a
      # per-step profile in fp16.
      run mobilenet ${GPUACC_MOBILENET_SECONDS:-300} $py "$stage/gpu/run_gpu_bench.py" --trellis "$bin/trellis" \
        --work "$work/bench" --out "$OUT/mobilenet" --models mobilenet_v2 --batches 32 --compile none --iters 30 \
        --profile mobilenet_v2:32:fp16
      cp "$work"/bench/steps_*.tsv "$logs/" 2>/dev/null
      ;;
    codegen)
      # cuda-target artifacts (trellis codegen --target cuda) against CpuRef: first those packed on
      # the build machine, then resnet50, built here (its weights are too large to carry).
      run codegen_packed 300 $py "$stage/gpu/device_codegen.py" check --dir "$stage/gpu/codegen" --work "$work/codegen-check"
      grep -E "^(PASS|FAIL) |against CpuRef:" "$logs/codegen_packed.log" | tee -a "$OUT/summary.txt"
      for m in resnet50 mobilenet_v2; do  # built here: too large to carry with the rest
        export_models "$m" 13 >>"$logs/export.log" 2>&1 || echo "export $m failed (see export.log)"
      done
      # Building here: cuDNN's headers and library as PyTorch's wheel holds them (versioned .so
      # only), the toolkit's cuBLASLt and static cudart.
      cudnn_h=$(find /opt /usr/local/cuda/include /usr/include -name cudnn.h 2>/dev/null | head -1)
      cudnn_so=$(find /opt /usr/local/cuda/lib64 /usr/lib/x86_64-linux-gnu -name 'libcudnn.so.9' 2>/dev/null | head -1)
      cuda_lib=$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")/../lib64
      cuda_env=("TRELLIS_CUDA_INCLUDE=$(dirname "$cudnn_h")"
                "TRELLIS_CUDA_LINK=-L$(dirname "$cudnn_so") -l:libcudnn.so.9 -L$cuda_lib -lcublasLt -lcudart_static -ldl -lrt -lpthread")
      run codegen_build_here 420 env "${cuda_env[@]}" $py "$stage/gpu/device_codegen.py" pack --trellis "$bin/trellis" \
        --models "$models_dir" --filter "${CODEGEN_HERE_FILTER:-^(resnet50_op13|mobilenet_v2_op13)$}" --out "$work/codegen-here" --work "$work/codegen-pack"
      run codegen_here 300 $py "$stage/gpu/device_codegen.py" check --dir "$work/codegen-here" --work "$work/codegen-check"
      grep -E "^(PASS|FAIL) |against CpuRef:" "$logs/codegen_here.log" | tee -a "$OUT/summary.txt"
      # Trellis's op cases as cuda artifacts, built and run here against their expected outputs.
      [[ -d $work/opcases ]] || tar -C "$work" -xJf "$stage/gpu/opcases.tar.xz"
      run codegen_opcases ${CODEGEN_OPCASES_SECONDS:-480} env "${cuda_env[@]}" $py "$stage/gpu/run_codegen_cases.py" \
        --trellis "$bin/trellis" --target cuda --cases "$work/opcases" --work "$work/codegen-opcases" --jobs 16 \
        --summary-json "$logs/codegen_opcases.json"
      grep -E "^target cuda:|: FAIL" "$logs/codegen_opcases.log" | tee -a "$OUT/summary.txt"
      ;;
    *) echo "unknown stage $s" ;;
  esac
done
tar -C "$OUT" -czf "$OUT/logs.tar.gz" logs && rm -rf "$logs"
echo "=== done: $stages"
