"""GpuAcc against PyTorch on the same GPU, in one run: median latency of PyTorch eager (fp32, tf32,
fp16), torch.compile(mode="reduce-overhead") (fp32, fp16) and GpuAcc (Precision fp32, tf32,
fp16; inputs and outputs on the GPU, and on the host), per model and batch; GpuAcc's error against PyTorch's fp32 output
per precision; a per-step profile of chosen configurations (GpuAcc's StepTimesFile option) with
the best matrix-product rate against the GPU's measured fp16 GEMM peak.

    python3 run_gpu_bench.py --trellis PATH/trellis --work DIR --out DIR \
        [--models resnet50,mobilenet_v2,bert_like,vit_b_16] [--batches 1,32] \
        [--precisions fp32,tf32,fp16] [--compile fp32,fp16] [--iters 50] \
        [--profile resnet50:32:fp16,bert_like:32:fp16] [--error-variants tf32:ConvTf32=off]

Timing: PyTorch with CUDA events around each call (inputs already on the GPU), median of --iters
after 10 warm-ups, as bench/gpu/compile_anchor.py does. GpuAcc: trellis_gpuacc_io_bench (built beside
`trellis`), the wall-clock time of EnqueueWorkload, which includes launching and waiting for the
GPU work, with the input and output on the GPU (the columns compared with PyTorch) and on the
host (copies through pinned staging included); median of --iters after 20 warm-ups (the first
runs capture the CUDA graphs). Writes OUT/gpu_bench.json and OUT/gpu_bench.md.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
from onnx import TensorProto, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_models  # noqa: E402


def cuda_median_ms(fn, iters, warm=10):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(iters):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        torch.cuda.synchronize()
        ts.append(s.elapsed_time(e))
    ts.sort()
    return ts[len(ts) // 2]


def set_tf32(on):
    torch.backends.cuda.matmul.allow_tf32 = on
    torch.backends.cudnn.allow_tf32 = on


def torch_times(name, batch, iters, compile_precisions):
    res = {}
    model, shape = gpu_models.make(name)
    dev = torch.device("cuda")
    for prec in ["fp32", "tf32", "fp16"]:
        m = gpu_models.make(name)[0].to(dev)
        x = torch.randn(batch, *shape, device=dev)
        if prec == "fp16":
            m, x = m.half(), x.half()
        set_tf32(prec == "tf32")
        with torch.inference_mode():
            res[f"eager_{prec}"] = round(cuda_median_ms(lambda: m(x), iters), 3)
            if prec in compile_precisions:
                try:
                    c = torch.compile(m, mode="reduce-overhead")
                    t0 = time.time()
                    for _ in range(3):
                        c(x)
                    res[f"compile_{prec}_s"] = round(time.time() - t0, 1)
                    res[f"compile_{prec}"] = round(cuda_median_ms(lambda: c(x), iters), 3)
                except Exception as e:  # noqa: BLE001
                    res[f"compile_{prec}"] = f"failed: {str(e)[:100]}"
                torch._dynamo.reset()
        del m, x
        torch.cuda.empty_cache()
    set_tf32(False)
    return res


def trellis(args, *cmd, timeout=300):
    r = subprocess.run([args.trellis, *cmd], capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError(f"trellis {' '.join(cmd[:3])}...: {r.stderr.strip()[-400:]}")
    return r.stdout


def gpuacc_io_time(args, path, prec):
    io_bench = os.path.join(os.path.dirname(args.trellis), "trellis_gpuacc_io_bench")
    r = subprocess.run([io_bench, path, prec, str(args.iters)], capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise RuntimeError(f"io bench: {r.stderr.strip()[-400:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def gpuacc_time(args, path, prec, extra=()):
    out = trellis(args, "bench", path, "--backends", "GpuAcc,CpuRef", "--backend-option", f"GpuAcc:Precision={prec}",
                  "--warmup", "10", "--iterations", str(args.iters), "--json", *extra)
    return json.loads(out)


def gpuacc_error(args, path, prec, options=()):
    """GpuAcc's relative L2 error against PyTorch's fp32 output, over the whole batch and for the worst
    image; `options` are more GpuAcc backend options (NAME=VALUE). Returns (error, worst image's
    error, that image, the run's stderr)."""
    extra = [a for o in options for a in ("--backend-option", f"GpuAcc:{o}")]
    with tempfile.TemporaryDirectory() as d:
        cmd = [args.trellis, "run", path, "--backends", "GpuAcc,CpuRef", "--backend-option", f"GpuAcc:Precision={prec}",
               *extra, "--input", "input=" + path + ".input.npy", "--output-dir", d]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            raise RuntimeError(f"trellis run: {r.stderr.strip()[-400:]}")
        t = TensorProto()
        with open(os.path.join(d, "output_0.pb"), "rb") as f:
            t.ParseFromString(f.read())
        got = numpy_helper.to_array(t).astype(np.float64)
    want = np.load(path + ".output.npy").astype(np.float64)
    per = [float(np.linalg.norm(g - w) / np.linalg.norm(w)) for g, w in zip(got, want)]
    worst = int(np.argmax(per))
    return float(np.linalg.norm(got - want) / np.linalg.norm(want)), per[worst], worst, r.stderr


def gemm_peak_tflops():
    """cuBLAS fp16 8192^3 through PyTorch on random data: the GPU's practical tensor-core peak here."""
    n = 8192
    a = torch.randn(n, n, device="cuda", dtype=torch.half)
    b = torch.randn(n, n, device="cuda", dtype=torch.half)
    ms = cuda_median_ms(lambda: a @ b, 20, warm=5)
    return round(2 * n ** 3 / (ms * 1e-3) / 1e12, 1)


def profile(args, path, prec, label):
    steps = os.path.join(args.work, f"steps_{label}.tsv")
    if os.path.exists(steps):
        os.remove(steps)
    gpuacc_time(args, path, prec, ("--backend-option", f"GpuAcc:StepTimesFile={steps}"))
    rows = []
    with open(steps) as f:
        for line in f:
            if line.startswith("#"):
                continue
            ms, what = line.rstrip("\n").split("\t", 1)
            rows.append((float(ms), what))
    by_kind = {}
    best = None
    for ms, what in rows:
        kind = what.split(" ", 1)[0]
        by_kind[kind] = by_kind.get(kind, 0.0) + ms
        m = re.search(r"cuBLASLt (\d+)x(\d+)x(\d+)(?: x(\d+))?", what)
        if m and ms > 0:
            mm, kk, nn, bb = int(m[1]), int(m[2]), int(m[3]), int(m[4] or 1)
            tflops = 2.0 * mm * nn * kk * bb / (ms * 1e-3) / 1e12
            if best is None or tflops > best[0]:
                best = (round(tflops, 1), what, round(ms, 4))
    total = sum(ms for ms, _ in rows)
    top = sorted(rows, reverse=True)[:8]
    return {"gpu_ms": round(total, 3), "by_kind_ms": {k: round(v, 3) for k, v in sorted(by_kind.items())},
            "best_gemm": best, "top_steps": [(round(ms, 4), w) for ms, w in top], "steps": len(rows)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trellis", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", default="resnet50,mobilenet_v2,bert_like,vit_b_16")
    ap.add_argument("--batches", default="1,32")
    ap.add_argument("--precisions", default="fp32,tf32,fp16")
    ap.add_argument("--compile", default="fp32,fp16")
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--profile", default="")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--error-variants", default="",
                    help="more error runs, PREC:NAME=VALUE[:NAME=VALUE...] comma-separated (e.g. tf32:ConvTf32=off); "
                         "CheckConvs=on runs write their per-convolution lines to WORK/checkconvs_*.txt")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    os.makedirs(args.out, exist_ok=True)
    results = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "runs": [], "profiles": {}}
    results["gemm_fp16_peak_tflops"] = gemm_peak_tflops()
    print("cuBLAS fp16 8192^3:", results["gemm_fp16_peak_tflops"], "TFLOP/s", flush=True)
    compile_precisions = [p for p in args.compile.split(",") if p and p != "none"]
    for name in args.models.split(","):
        for batch in [int(b) for b in args.batches.split(",")]:
            path = os.path.join(args.work, f"{name}_b{batch}.onnx")
            row = {"model": name, "batch": batch}
            if not os.path.exists(path):
                t0 = time.time()
                gpu_models.export(name, batch, path)
                row["export_s"] = round(time.time() - t0, 1)
            if not args.no_torch:
                row.update(torch_times(name, batch, args.iters, compile_precisions))
            for prec in args.precisions.split(","):
                try:
                    b = gpuacc_io_time(args, path, prec)
                    row[f"gpuacc_{prec}"] = b["device_io_ms"]
                    row[f"gpuacc_{prec}_host_io"] = b["host_io_ms"]
                    row[f"gpuacc_{prec}_load_ms"] = b["load_ms"]
                    row[f"gpuacc_{prec}_layers"] = b["layers"]
                    err, worst, image, _ = gpuacc_error(args, path, prec)
                    row[f"gpuacc_{prec}_err"] = err
                    row[f"gpuacc_{prec}_worst_image_err"] = [image, worst]
                except Exception as e:  # noqa: BLE001
                    row[f"gpuacc_{prec}"] = f"failed: {str(e)[-300:]}"
            for spec in [v for v in args.error_variants.split(",") if v]:
                prec, *options = spec.split(":")
                try:
                    err, worst, image, log = gpuacc_error(args, path, prec, options)
                    row[f"gpuacc_{spec}_err"] = [err, image, worst]
                    checks = [ln for ln in log.splitlines() if ln.startswith("GpuAcc CheckConvs")]
                    if checks:
                        with open(os.path.join(args.work, f"checkconvs_{name}_b{batch}_{prec}.txt"), "w") as f:
                            f.write("\n".join(checks) + "\n")
                        differs = [ln for ln in checks if " DIFFERS " in ln]
                        print(f"{spec}: {len(checks)} convolution checks, {len(differs)} differ", flush=True)
                        for ln in differs[:20]:
                            print("  " + ln, flush=True)
                except Exception as e:  # noqa: BLE001
                    row[f"gpuacc_{spec}_err"] = f"failed: {str(e)[-300:]}"
            print(json.dumps(row), flush=True)
            results["runs"].append(row)
            json.dump(results, open(os.path.join(args.out, "gpu_bench.json"), "w"), indent=1)
    for spec in [s for s in args.profile.split(",") if s]:
        name, batch, prec = spec.split(":")
        path = os.path.join(args.work, f"{name}_b{batch}.onnx")
        try:
            if not os.path.exists(path):
                gpu_models.export(name, int(batch), path)
            p = profile(args, path, prec, f"{name}_b{batch}_{prec}")
            if p["best_gemm"]:
                p["best_gemm_share_of_peak"] = round(p["best_gemm"][0] / results["gemm_fp16_peak_tflops"], 3)
        except Exception as e:  # noqa: BLE001
            p = {"failed": str(e)[-300:]}
        results["profiles"][spec] = p
        print(spec, json.dumps(p), flush=True)
    json.dump(results, open(os.path.join(args.out, "gpu_bench.json"), "w"), indent=1)
    write_table(results, os.path.join(args.out, "gpu_bench.md"))


def write_table(results, path):
    def cell(row, key):
        v = row.get(key)
        return f"{v:.3f}" if isinstance(v, (int, float)) else ("—" if v is None else "fail")

    lines = [f"GPU: {results['gpu']}, PyTorch {results['torch']}; cuBLAS fp16 GEMM 8192^3: "
             f"{results['gemm_fp16_peak_tflops']} TFLOP/s. Median ms; GpuAcc with input and output on the GPU "
             "(host I/O in the last columns).", "",
             "| model | batch | eager fp32 | eager tf32 | eager fp16 | compile fp32 | compile fp16 | GpuAcc fp32 | "
             "GpuAcc tf32 | GpuAcc fp16 | GpuAcc fp16 / compile fp16 | best GpuAcc / eager fp32 | GpuAcc fp32 host I/O | "
             "GpuAcc fp16 host I/O |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results["runs"]:
        g16, c16 = r.get("gpuacc_fp16"), r.get("compile_fp16")
        ratio = f"{g16 / c16:.2f}" if isinstance(g16, float) and isinstance(c16, float) else "—"
        gs = [r.get(f"gpuacc_{p}") for p in ("fp32", "tf32", "fp16")]
        gs = [g for g in gs if isinstance(g, float)]
        e32 = r.get("eager_fp32")
        best = f"{min(gs) / e32:.2f}" if gs and isinstance(e32, float) else "—"
        lines.append(f"| {r['model']} | {r['batch']} | " + " | ".join(
            cell(r, k) for k in ["eager_fp32", "eager_tf32", "eager_fp16", "compile_fp32", "compile_fp16", "gpuacc_fp32",
                                 "gpuacc_tf32", "gpuacc_fp16"]) + f" | {ratio} | {best} | " +
            cell(r, "gpuacc_fp32_host_io") + " | " + cell(r, "gpuacc_fp16_host_io") + " |")
    lines += ["", "GpuAcc's relative L2 error against PyTorch's fp32 output (CPU):", "",
              "| model | batch | fp32 | tf32 | fp16 |", "|---|---:|---:|---:|---:|"]
    for r in results["runs"]:
        errs = [r.get(f"gpuacc_{p}_err") for p in ("fp32", "tf32", "fp16")]
        lines.append(f"| {r['model']} | {r['batch']} | " + " | ".join(f"{e:.2e}" if isinstance(e, float) else "—" for e in errs) + " |")
    for r in results["runs"]:
        for p in ("fp32", "tf32", "fp16"):
            if isinstance(r.get(f"gpuacc_{p}_worst_image_err"), list):
                image, worst = r[f"gpuacc_{p}_worst_image_err"]
                lines.append(f"- {r['model']} b{r['batch']} {p}: worst image {image}, relative L2 {worst:.2e}")
        for k, v in r.items():
            if k.startswith("gpuacc_") and ":" in k and k.endswith("_err"):
                text = (f"{v[0]:.2e} (worst image {v[1]}: {v[2]:.2e})" if isinstance(v, list) else str(v))
                lines.append(f"- {r['model']} b{r['batch']} {k[len('gpuacc_'):-len('_err')]}: {text}")
    for spec, p in results["profiles"].items():
        lines += ["", f"Per-step profile {spec}: " + json.dumps(p)]
    open(path, "w").write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
