#!/usr/bin/env python3
"""Trellis (CpuAcc) against ONNX Runtime 1.30 on CPU, in one run: a benchmark, not a test.

For each model and thread count it alternates the two engines (Trellis first in even rounds,
ONNX Runtime first in odd ones), each in its own process, and records each process's median
latency and peak RSS. It prints, per model and thread count, the best median of each engine over
the rounds and the ratio Trellis/ORT of those, the paired ratio (the median over the rounds of
each round's Trellis/ORT ratio of median latencies; the two processes of a round ran back to back,
so it is the least disturbed by a shared machine's slow and fast periods, and it is the headline
number: < 1 means Trellis is faster), the peak RSS of each, and Trellis's output error against
PyTorch's.

  # once: export the models (Debian's python with torch/torchvision/onnx; large files, never committed)
  MODELS_DIR=bench/cpu/models /usr/bin/python3 bench/cpu/make_models.py \\
      --only resnet50,mobilenet_v2,squeezenet1_1,efficientnet_b0,bert_base_encoder
  # the decoders with a KV cache (transformers 4.40.2 for Debian's python): a decode step of 1
  # token after 127 cached, and a 128-token prefill
  MODELS_DIR=bench/cpu/models /usr/bin/python3 bench/cpu/make_models.py \\
      --only gpt2_decode,gpt2_prefill,llama_decode,llama_prefill
  # then (python3 with onnxruntime==1.30.0 and numpy, as scripts/install-deps.sh installs)
  python3 bench/cpu/run_bench.py [--threads 1,2] [--rounds 8] [--min-time 1.5] [--markdown FILE]

Trellis runs as `trellis bench MODEL --backends CpuAcc,CpuRef --threads T --json`, ONNX Runtime as
`ort_bench.py` (graph optimizations on, intra-op threads T, sequential execution).

The sweep (every torchvision classification and segmentation model, a few transformers
architectures; `make_models.py --sweep` exports them into models-sweep/):

  python3 bench/cpu/run_bench.py --models-dir bench/cpu/models-sweep --models all --rounds 2 \
      --min-time 0.5 --markdown sweep.md [--isa-cap AVX2]

--models all takes every model the manifest lists as exported; a model that fails in either engine
is reported with the reason and the run goes on.

--isa-cap AVX2 measures both engines as on a CPU without AVX-512: Trellis's kernels are capped by
their switches (oneDNN's ONEDNN_MAX_CPU_ISA, CpuAcc's own TRELLIS_MAX_CPU_ISA), and both processes
run with LD_AUDIT=build/lib/libtrellis_avx2_cpuid.so (tools/avx2_cpuid), which hides the AVX-512,
AMX and AVX-VNNI bits of CPUID, so ONNX Runtime's MLAS (which has no switch and reads CPUID itself)
also picks its AVX2 kernels. With Linux's CPUID faulting (`cpuid_fault` in /proc/cpuinfo) that
covers every library; without it the script lists, with tools/avx2_cpuid/cpuid_sites.py (objdump),
the CPUID instructions of ONNX Runtime's libraries and of the trellis program and the libraries it
links (CUDA's excepted), and the library rewrites those (the table's header says which way was
used; the lists are cached in ~/.cache/trellis/cpuid-sites). --isa-cap AVX512_CORE caps Trellis
only (the library cannot emulate that ISA).
"""
import argparse
import atexit
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_MODELS = "resnet50,mobilenet_v2,squeezenet1_1,efficientnet_b0,bert_base_encoder"


def run_measured(cmd, env=None):
    """Runs cmd; returns (returncode, stdout, stderr, peak RSS in MiB) of that process alone."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen(cmd, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return p.returncode, out.read().decode(), err.read().decode(), usage.ru_maxrss / 1024.0


def cpuid_faulting():
    """Whether Linux offers CPUID faulting here (libtrellis_avx2_cpuid's first way)."""
    try:
        with open("/proc/cpuinfo") as f:
            return any(line.startswith("flags") and " cpuid_fault" in line for line in f)
    except OSError:
        return False


def cpuid_sites_file(args):
    """Without CPUID faulting: the sites file naming the CPUID instructions libtrellis_avx2_cpuid
    rewrites, for ONNX Runtime's libraries (of --python) and for the trellis program and the libraries
    it links (CUDA's excepted: their CPUIDs choose no CPU kernel, and cuBLASLt alone is 540 MB to disassemble).
    Written once per run."""
    if getattr(args, "_cpuid_sites", None):
        return args._cpuid_sites
    sys.path.insert(0, os.path.join(ROOT, "tools", "avx2_cpuid"))
    import cpuid_sites  # noqa: E402 (tools/avx2_cpuid/cpuid_sites.py)
    ort_dir = subprocess.run([getattr(args, "python", sys.executable), "-c",
                              "import onnxruntime, os; print(os.path.dirname(onnxruntime.__file__))"],
                             check=True, capture_output=True, text=True).stdout.strip()
    capi = os.path.join(ort_dir, "capi")
    objects = sorted(os.path.join(capi, f) for f in os.listdir(capi) if ".so" in f)
    objects.append(args.trellis)
    for line in subprocess.run(["ldd", args.trellis], check=True, capture_output=True, text=True).stdout.splitlines():
        parts = line.split("=>")
        path = parts[1].split("(")[0].strip() if len(parts) == 2 else ""
        if path.startswith("/") and "/cuda" not in path and not os.path.basename(path).startswith(("libc.so", "ld-linux")):
            objects.append(path)
    fd, path = tempfile.mkstemp(prefix="trellis-cpuid-sites-", suffix=".txt")
    os.close(fd)
    atexit.register(os.unlink, path)
    n = cpuid_sites.write_sites(path, objects, os.path.join(os.path.expanduser("~"), ".cache", "trellis", "cpuid-sites"))
    print("no CPUID faulting here: libtrellis_avx2_cpuid rewrites %d CPUID instructions in %d objects (%s)"
          % (n, len(objects), path), file=sys.stderr)
    args._cpuid_sites = path
    return path


def peer_env(args, env=None):
    """The environment of the peer's processes: with --isa-cap AVX2 they see an AVX2-only CPU."""
    env = dict(os.environ if env is None else env)
    if args.isa_cap == "AVX2":
        if not os.path.exists(args.avx2_cpuid):
            sys.exit("error: --isa-cap AVX2 needs %s (built by make build on x86-64 Linux)" % args.avx2_cpuid)
        env["LD_AUDIT"] = args.avx2_cpuid
        if not cpuid_faulting():
            env["TRELLIS_AVX2_CPUID_SITES"] = cpuid_sites_file(args)
    return env


def trellis_env(args):
    """The environment of Trellis's processes: --isa-cap caps oneDNN's and CpuAcc's own kernels (and
    with AVX2 also hides AVX-512 from CPUID, as for the peer)."""
    env = peer_env(args)
    if args.isa_cap:
        env["ONEDNN_MAX_CPU_ISA"] = args.isa_cap
        env["TRELLIS_MAX_CPU_ISA"] = args.isa_cap
    return env


def cap_note(args):
    """How the table's engines were capped, for its header line ('' when not)."""
    if args.isa_cap == "AVX2":
        way = ("CPUID faulting" if cpuid_faulting() else
               "the CPUID instructions of each engine's libraries rewritten: no CPUID faulting here")
        return ("; both engines shown an AVX2-only CPU (CPUID without AVX-512/AMX/AVX-VNNI through "
                "libtrellis_avx2_cpuid, %s; Trellis also ONEDNN_MAX_CPU_ISA=AVX2, TRELLIS_MAX_CPU_ISA=AVX2)" % way)
    if args.isa_cap:
        return "; Trellis capped to %s (ONEDNN_MAX_CPU_ISA, TRELLIS_MAX_CPU_ISA), ONNX Runtime not" % args.isa_cap
    return ""


def add_isa_cap_arguments(ap):
    ap.add_argument("--isa-cap", default="", choices=["", "AVX2", "AVX512_CORE"],
                    help="AVX2: both engines as on a CPU without AVX-512 (Trellis's switches plus CPUID masked "
                         "for both processes by --avx2-cpuid); AVX512_CORE: Trellis's switches only")
    ap.add_argument("--avx2-cpuid", default=os.path.join(ROOT, "build", "lib", "libtrellis_avx2_cpuid.so"),
                    help="the LD_AUDIT library that hides AVX-512 from CPUID (tools/avx2_cpuid)")


def trellis_once(args, model_path, threads, iterations):
    cmd = [args.trellis, "bench", model_path, "--backends", args.backends, "--threads", str(threads),
           "--warmup", "3", "--iterations", str(iterations), "--json"]
    rc, out, err, rss = run_measured(cmd, trellis_env(args))
    if rc != 0:
        raise RuntimeError("trellis bench failed: " + (err.strip().splitlines() or ["exit %d" % rc])[-1])
    r = json.loads(out)
    r["peak_rss_mib"] = rss
    return r


def ort_once(args, name, threads):
    with tempfile.NamedTemporaryFile(suffix=".jsonl", delete=False) as f:
        path = f.name
    env = peer_env(args, dict(os.environ, MODELS_DIR=args.models_dir))
    cmd = [args.python, os.path.join(HERE, "ort_bench.py"), "--threads", str(threads), "--models", name,
           "--min-time", str(args.min_time), "--out", path]
    rc, out, err, rss = run_measured(cmd, env)
    with open(path) as f:
        lines = [json.loads(line) for line in f if line.strip()]
    os.unlink(path)
    if rc != 0 or not lines or lines[-1].get("status") != "ok":
        why = lines[-1].get("error") if lines else (err.strip().splitlines() or ["exit %d" % rc])[-1]
        raise RuntimeError("onnxruntime failed: %s" % why)
    r = lines[-1]
    r["peak_rss_mib"] = rss
    return r


def trellis_accuracy(args, entry, threads):
    """Relative L2 error of Trellis's (first) output against PyTorch's (NAME.ref.npy)."""
    name = entry["name"]
    with tempfile.TemporaryDirectory() as d:
        model = os.path.join(args.models_dir, name + ".onnx")
        cmd = [args.trellis, "run", model, "--backends", args.backends, "--threads", str(threads), "--output-dir", d]
        if "inputs" in entry:  # several inputs (the decoders with a KV cache)
            for i in entry["inputs"]:
                cmd += ["--input", i["name"] + "=" + os.path.join(args.models_dir, i["file"])]
        else:
            cmd += ["--input", "input=" + os.path.join(args.models_dir, name + ".input.npy")]
        rc, out, err, _ = run_measured(cmd, trellis_env(args))
        if rc != 0:
            return None
        script = ("import numpy as np, onnx, onnx.numpy_helper as h, sys\n"
                  "y = h.to_array(onnx.load_tensor(sys.argv[1])).astype(np.float64).ravel()\n"
                  "r = np.load(sys.argv[2]).astype(np.float64).ravel()\n"
                  "print(np.linalg.norm(y - r) / np.linalg.norm(r))\n")
        rc, out, err, _ = run_measured([args.debian_python, "-c", script, os.path.join(d, "output_0.pb"),
                                        os.path.join(args.models_dir, name + ".ref.npy")])
        return float(out) if rc == 0 else None


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=DEFAULT_MODELS)
    ap.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    ap.add_argument("--rounds", type=int, default=8, help="alternations per model and thread count")
    ap.add_argument("--min-time", type=float, default=1.5, help="seconds of timed runs per process")
    ap.add_argument("--models-dir", default=os.environ.get("MODELS_DIR") or os.path.join(HERE, "models"))
    ap.add_argument("--trellis", default=os.path.join(ROOT, "build", "bin", "trellis"))
    ap.add_argument("--backends", default="CpuAcc,CpuRef")
    ap.add_argument("--python", default=sys.executable, help="python with onnxruntime==1.30.0 and numpy")
    ap.add_argument("--debian-python", default="/usr/bin/python3", help="python with onnx (accuracy check)")
    ap.add_argument("--out", default="", help="append one JSON line per measurement here")
    ap.add_argument("--markdown", default="", help="write the summary table here")
    add_isa_cap_arguments(ap)
    ap.add_argument("--flag-above", type=float, default=1.1,
                    help="list the models whose paired ratio is above this at the end")
    ap.add_argument("--rows-json", default="", help="also write the summary rows (and failures) as JSON here")
    ap.add_argument("--merge", default="",
                    help="measure nothing: render the table from these comma-separated --rows-json files "
                         "(shards of one sweep run in parallel)")
    args = ap.parse_args()
    if args.merge:
        rows, failed = [], []
        for path in filter(None, args.merge.split(",")):
            with open(path) as f:
                part = json.load(f)
            rows += part["rows"]
            failed += [tuple(x) for x in part["failed"]]
        render(args, rows, failed)
        return

    manifest = os.path.join(args.models_dir, "manifest.json")
    if not os.path.exists(manifest):
        sys.exit("error: %s not found; export the models first:\n  MODELS_DIR=%s /usr/bin/python3 %s --only %s"
                 % (manifest, args.models_dir, os.path.join(HERE, "make_models.py"), args.models))
    if not os.access(args.trellis, os.X_OK):
        sys.exit("error: %s is not an executable; build first (make build)" % args.trellis)
    with open(manifest) as f:
        entries = {e["name"]: e for e in json.load(f)["models"] if e.get("status") == "ok"}
    names = list(entries) if args.models == "all" else [m for m in args.models.split(",") if m]
    missing = [m for m in names if m not in entries]
    if missing:
        sys.exit("error: not exported in %s: %s" % (args.models_dir, ", ".join(missing)))
    threads_list = [int(t) for t in args.threads.split(",") if t]

    print("machine: %s, %d logical CPUs; %s%s" % (cpu_model(), os.cpu_count() or 0, time.strftime("%Y-%m-%d %H:%M"),
                                                 cap_note(args)), flush=True)
    rows, failed = [], []
    for name in names:
        model_path = os.path.join(args.models_dir, entries[name]["onnx"])
        for threads in threads_list:
            try:
                row = measure(args, entries[name], model_path, threads)
            except Exception as why:  # noqa: BLE001 - a sweep reports a model's failure and goes on
                print("%-18s t=%d  FAILED: %s" % (name, threads, why), flush=True)
                failed.append((name, threads, str(why)))
            else:
                rows.append(row)
            if args.rows_json:  # after every measurement: a sweep cut short keeps what it measured
                with open(args.rows_json, "w") as f:
                    json.dump({"rows": rows, "failed": failed}, f)
    render(args, rows, failed)


def render(args, rows, failed):
    """Prints the table and the summary line; writes them to --markdown."""
    table = ["| model | threads | Trellis CpuAcc (ms) | ONNX Runtime (ms) | ratio of best medians | paired ratio "
             "Trellis/ORT | peak RSS Trellis / ORT (MiB) | rel. L2 vs PyTorch | layers not on CpuAcc |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        table.append("| %s | %d | %.2f | %.2f | %.2f | **%.2f** | %.0f / %.0f | %s | %s |" %
                     (r["model"], r["threads"], r["trellis_ms"], r["ort_ms"], r["ratio"], r["paired_ratio"],
                      r["trellis_rss"], r["ort_rss"], "n/a" if r["rel_l2"] is None else "%.1e" % r["rel_l2"],
                      off_cpuacc(r["layers"])))
    for name, threads, why in failed:
        table.append("| %s | %d | failed: %s | | | | | | |" % (name, threads, why.replace("|", "/")))
    above = sorted((r for r in rows if r["paired_ratio"] > args.flag_above), key=lambda r: -r["paired_ratio"])
    summary = ("%d measurements (%d models); paired ratio: median %.2f, worst %.2f; %d above %.2f%s; %d failed" %
               (len(rows), len({r["model"] for r in rows}),
                statistics.median(r["paired_ratio"] for r in rows) if rows else float("nan"),
                max((r["paired_ratio"] for r in rows), default=float("nan")), len(above), args.flag_above,
                (" (" + ", ".join("%s t=%d %.2f" % (r["model"], r["threads"], r["paired_ratio"]) for r in above) + ")")
                if above else "", len(failed)))
    print("\n".join(table))
    print(summary)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("machine: %s, %d logical CPUs; measured %s; best median of %d alternating rounds, %.1f s each; "
                    "paired ratio (the headline number): the median over the rounds of each round's Trellis/ORT "
                    "ratio of median latencies%s\n\n"
                    % (cpu_model(), os.cpu_count() or 0, time.strftime("%Y-%m-%d"), args.rounds, args.min_time,
                       cap_note(args)))
            f.write("\n".join(table) + "\n\n" + summary + "\n")


def off_cpuacc(layers):
    """The layer counts of backends other than CpuAcc, e.g. 'CpuRef 3', or '' when all ran on CpuAcc."""
    if not isinstance(layers, dict):
        return ""
    return ", ".join("%s %s" % (b, n) for b, n in sorted(layers.items()) if b != "CpuAcc" and n)


def measure(args, entry, model_path, threads):
    name = entry["name"]
    """Alternating rounds of both engines on one model and thread count; the summary row."""
    # Calibrate Trellis's iteration count so each process times about --min-time seconds.
    probe = trellis_once(args, model_path, threads, 3)
    iterations = max(10, int(math.ceil(args.min_time * 1000.0 / max(probe["median_ms"], 0.01))))
    tr, ort = [], []
    for r in range(args.rounds):
        order = ("trellis", "ort") if r % 2 == 0 else ("ort", "trellis")
        for engine in order:
            if engine == "trellis":
                m = trellis_once(args, model_path, threads, iterations)
                tr.append(m)
                print("  trellis %-18s t=%d round %d: median %8.2f ms  rss %6.0f MiB" %
                      (name, threads, r, m["median_ms"], m["peak_rss_mib"]), flush=True)
            else:
                m = ort_once(args, name, threads)
                ort.append(m)
                print("  ort     %-18s t=%d round %d: median %8.2f ms  rss %6.0f MiB" %
                      (name, threads, r, m["median_ms"], m["peak_rss_mib"]), flush=True)
            if args.out:
                with open(args.out, "a") as f:
                    f.write(json.dumps(dict(m, engine=engine, model_name=name, round=r)) + "\n")
    err = trellis_accuracy(args, entry, threads)
    row = {
        "model": name, "threads": threads,
        "trellis_ms": min(m["median_ms"] for m in tr), "ort_ms": min(m["median_ms"] for m in ort),
        "trellis_rss": max(m["peak_rss_mib"] for m in tr), "ort_rss": max(m["peak_rss_mib"] for m in ort),
        "rel_l2": err, "layers": tr[-1].get("layers_per_backend"),
    }
    row["ratio"] = row["trellis_ms"] / row["ort_ms"]
    # Paired: each round's two processes ran back to back, so their ratio is the least
    # disturbed by the machine's slow and fast periods; the median over the rounds.
    row["paired_ratio"] = statistics.median(t["median_ms"] / o["median_ms"] for t, o in zip(tr, ort))
    print("%-18s t=%d  trellis %8.2f ms  ort %8.2f ms  ratio %.2f  paired %.2f  rss %5.0f / %5.0f MiB  rel L2 %s" %
          (name, threads, row["trellis_ms"], row["ort_ms"], row["ratio"], row["paired_ratio"], row["trellis_rss"],
           row["ort_rss"], "n/a" if err is None else "%.1e" % err), flush=True)
    return row


if __name__ == "__main__":
    main()
