#!/usr/bin/env python3
"""int8 on CPU in one run: Trellis CpuAcc int8 vs Trellis CpuAcc float32 vs ONNX Runtime int8 (and
ONNX Runtime float32). A benchmark, not a test.

The int8 models are made here (never committed, never downloaded) with onnxruntime's quantization
tool from the float models make_models.py exported: quantize_static, QDQ format (or with --format
qop the QOperator format, QLinearConv / QLinearMatMul for the Conv and MatMul nodes only),
per-channel int8 weights, uint8 activations, MinMax calibration on 8 seeded random inputs of the
model's shape (MatMuls with a constant B only, unless --all-matmuls); or with --format dyn
quantize_dynamic (int8 weights per tensor, activations quantized at run time: DynamicQuantizeLinear,
MatMulInteger, ConvInteger).

  # once: the float models (Debian's python with torch)
  MODELS_DIR=bench/cpu/models /usr/bin/python3 bench/cpu/make_models.py --only resnet50,bert_base_encoder
  # then (python3 with onnxruntime==1.30.0, onnx, numpy, as scripts/install-deps.sh installs)
  python3 bench/cpu/int8_bench.py [--models resnet50,bert_base_encoder] [--threads 1,2] [--rounds 4] \
      [--format qdq|qop|dyn] [--all-matmuls]

Each measurement is its own process (`trellis bench ... --json`, or this script with --ort-one),
engines alternated within a round; the table has the best median of each over the rounds, the
ratios int8/float32 (CpuAcc) and Trellis int8 / ORT int8, and each output's relative L2 error
against PyTorch's float32 output (NAME.ref.npy).
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run_bench  # noqa: E402  (run_measured, trellis_once, cpu_model)


def quantize(src, dst, x_shape, input_name, fmt="qdq", const_b_only=True):
    import numpy as np
    from onnxruntime import quantization as q

    if fmt == "dyn":
        # Dynamic quantization, as most BERT-style models are quantized for CPU: int8 weights (per
        # tensor, the tool's default), activations quantized at run time by DynamicQuantizeLinear,
        # products as MatMulInteger / ConvInteger. No calibration.
        q.quantize_dynamic(src, dst, weight_type=q.QuantType.QInt8)
        return

    class Reader:
        def __init__(self):
            rng = np.random.default_rng(7)
            self.data = iter([{input_name: rng.standard_normal(x_shape).astype(np.float32)} for _ in range(8)])

        def get_next(self):
            return next(self.data, None)

    # QOperator: only Conv and MatMul become QLinearConv / QLinearMatMul (ONNX ops); the quantizer's
    # other QOperator forms (QGemm, QLinearAdd, QLinearGlobalAveragePool, ...) are com.microsoft contrib
    # ops that only ONNX Runtime runs.
    ops = {"op_types_to_quantize": ["Conv", "MatMul"]} if fmt == "qop" else {}
    q.quantize_static(src, dst, Reader(), quant_format=q.QuantFormat.QOperator if fmt == "qop" else q.QuantFormat.QDQ,
                      per_channel=True, activation_type=q.QuantType.QUInt8, weight_type=q.QuantType.QInt8,
                      calibrate_method=q.CalibrationMethod.MinMax,
                      extra_options={"MatMulConstBOnly": const_b_only}, **ops)


def ort_one(model, x_path, ref_path, threads, min_time):
    """One process: ORT session latency (median of runs over min_time s) and error vs ref."""
    import numpy as np
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    x = np.load(x_path)
    feeds = {sess.get_inputs()[0].name: x}
    for _ in range(3):
        y = sess.run(None, feeds)[0]
    times = []
    start = time.perf_counter()
    while time.perf_counter() - start < min_time or len(times) < 10:
        t0 = time.perf_counter()
        sess.run(None, feeds)
        times.append(time.perf_counter() - t0)
    ref = np.load(ref_path).astype(np.float64).ravel()
    err = float(np.linalg.norm(y.astype(np.float64).ravel() - ref) / np.linalg.norm(ref))
    print(json.dumps({"median_ms": statistics.median(times) * 1e3, "rel_l2": err, "version": ort.__version__}))


def trellis_error(args, model, x_path, ref_path, threads):
    import numpy as np
    with tempfile.TemporaryDirectory() as d:
        rc, out, err, _ = run_bench.run_measured([args.trellis, "run", model, "--backends", "CpuAcc,CpuRef", "--threads",
                                                  str(threads), "--input", "input=" + x_path, "--output-dir", d],
                                                 run_bench.trellis_env(args))
        if rc != 0:
            return None
        path = os.path.join(d, "output_0.pb")
        if not os.path.exists(path):
            return None
        import onnx
        from onnx import numpy_helper
        y = numpy_helper.to_array(onnx.load_tensor(path)).astype(np.float64).ravel()
    ref = np.load(ref_path).astype(np.float64).ravel()
    return float(np.linalg.norm(y - ref) / np.linalg.norm(ref))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="resnet50,bert_base_encoder")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--min-time", type=float, default=1.5)
    ap.add_argument("--models-dir", default=os.environ.get("MODELS_DIR") or os.path.join(HERE, "models"))
    ap.add_argument("--int8-dir", default="", help="where the int8 models go (default: --models-dir)")
    ap.add_argument("--trellis", default=os.path.join(run_bench.ROOT, "build", "bin", "trellis"))
    ap.add_argument("--markdown", default="")
    ap.add_argument("--format", default="qdq", choices=["qdq", "qop", "dyn"],
                    help="QDQ (QuantizeLinear/DequantizeLinear around float ops), QOperator (QLinearConv, "
                         "QLinearMatMul) or dynamically quantized (quantize_dynamic: DynamicQuantizeLinear, "
                         "MatMulInteger, ConvInteger) models")
    ap.add_argument("--all-matmuls", action="store_true",
                    help="quantize_static's default MatMulConstBOnly=False: the attention MatMuls of two activations "
                         "are quantized too (QLinearMatMul of two activations with --format qop); the models get "
                         "their own file names")
    run_bench.add_isa_cap_arguments(ap)  # as run_bench.py (without VNNI CpuAcc keeps int8 layers in float32)
    ap.add_argument("--ort-one", nargs=3, metavar=("MODEL", "INPUT", "REF"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.ort_one:
        ort_one(*args.ort_one, int(args.threads), args.min_time)
        return
    int8_dir = args.int8_dir or args.models_dir
    os.makedirs(int8_dir, exist_ok=True)
    with open(os.path.join(args.models_dir, "manifest.json")) as f:
        entries = {e["name"]: e for e in json.load(f)["models"] if e.get("status") == "ok"}
    args.backends = "CpuAcc,CpuRef"
    print("machine: %s, %d logical CPUs; %s%s" % (run_bench.cpu_model(), os.cpu_count() or 0, time.strftime("%Y-%m-%d %H:%M"),
                                                run_bench.cap_note(args)))
    rows = []
    for name in (m for m in args.models.split(",") if m):
        if name not in entries:
            print("skipped %s: not in %s/manifest.json" % (name, args.models_dir))
            continue
        fp32 = os.path.join(args.models_dir, entries[name]["onnx"])
        x_path = os.path.join(args.models_dir, name + ".input.npy")
        ref_path = os.path.join(args.models_dir, name + ".ref.npy")
        int8 = os.path.join(int8_dir, name + "_int8_%s%s.onnx" % (args.format, "_all" if args.all_matmuls else ""))
        if not os.path.exists(int8) or os.path.getmtime(int8) < os.path.getmtime(fp32):
            import numpy as np
            import onnx
            t0 = time.time()
            input_name = onnx.load(fp32, load_external_data=False).graph.input[0].name
            quantize(fp32, int8, np.load(x_path).shape, input_name, args.format, const_b_only=not args.all_matmuls)
            print("quantized %s in %.0f s" % (name, time.time() - t0), flush=True)
        for threads in (int(t) for t in args.threads.split(",") if t):
            res = {k: [] for k in ("trellis_fp32", "trellis_int8", "ort_int8", "ort_fp32")}
            iters = {}
            for key, model in (("trellis_fp32", fp32), ("trellis_int8", int8)):
                probe = run_bench.trellis_once(args, model, threads, 3)
                iters[key] = max(10, int(math.ceil(args.min_time * 1000.0 / max(probe["median_ms"], 0.01))))
            ort_err = {}
            for r in range(args.rounds):
                order = list(res) if r % 2 == 0 else list(reversed(list(res)))
                for key in order:
                    if key.startswith("trellis"):
                        m = run_bench.trellis_once(args, fp32 if key == "trellis_fp32" else int8, threads, iters[key])
                        res[key].append(m["median_ms"])
                    else:
                        cmd = [sys.executable, __file__, "--ort-one", int8 if key == "ort_int8" else fp32, x_path, ref_path,
                               "--threads", str(threads), "--min-time", str(args.min_time)]
                        rc, out, err, _ = run_bench.run_measured(cmd, run_bench.peer_env(args))
                        if rc != 0:
                            raise RuntimeError("onnxruntime failed: " + (err.strip().splitlines() or ["?"])[-1])
                        m = json.loads(out.strip().splitlines()[-1])
                        res[key].append(m["median_ms"])
                        ort_err[key] = m["rel_l2"]
                    print("  %-12s %-18s t=%d round %d: median %8.2f ms" % (key, name, threads, r, res[key][-1]), flush=True)
            best = {k: min(v) for k, v in res.items()}
            row = dict(model=name, threads=threads, **best,
                       int8_vs_fp32=best["trellis_int8"] / best["trellis_fp32"],
                       int8_vs_ort=best["trellis_int8"] / best["ort_int8"],
                       paired_vs_ort=statistics.median(a / b for a, b in zip(res["trellis_int8"], res["ort_int8"])),
                       err_trellis_int8=trellis_error(args, int8, x_path, ref_path, threads),
                       err_trellis_fp32=trellis_error(args, fp32, x_path, ref_path, threads),
                       err_ort_int8=ort_err.get("ort_int8"))
            rows.append(row)
            print(json.dumps(row), flush=True)

    def e(v):
        return "n/a" if v is None else "%.1e" % v
    table = ["| model | threads | CpuAcc fp32 (ms) | CpuAcc int8 (ms) | ORT int8 (ms) | ORT fp32 (ms) | int8/fp32 CpuAcc | "
             "CpuAcc int8 / ORT int8 (best, paired) | rel. L2 vs PyTorch: CpuAcc int8, ORT int8, CpuAcc fp32 |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        table.append("| %s | %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f, %.2f | %s, %s, %s |" % (
            r["model"] + {"qdq": "", "qop": " (QOperator)", "dyn": " (dynamic)"}[args.format] +
            (", all MatMuls" if args.all_matmuls else ""), r["threads"], r["trellis_fp32"], r["trellis_int8"], r["ort_int8"], r["ort_fp32"], r["int8_vs_fp32"],
            r["int8_vs_ort"], r["paired_vs_ort"], e(r["err_trellis_int8"]), e(r["err_ort_int8"]), e(r["err_trellis_fp32"])))
    print("\n".join(table))
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n".join(table) + "\n")


if __name__ == "__main__":
    main()
