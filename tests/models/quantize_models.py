#!/usr/bin/env python3
"""Quantize exported test models to int8 with onnxruntime's quantization tool (test set-up).

    quantize_models.py --models DIR [--only tiny_cnn,transformer] [--opset 13] [--force]
                       [--check-only]

Reads DIR/<name>_op<opset>.onnx (written by export_models.py) and writes, beside it:
  <name>_int8_qdq.onnx      QuantizeLinear/DequantizeLinear around Conv/MatMul/Gemm, per-tensor
  <name>_int8_qdq_pc.onnx   the same with per-channel weights
  <name>_int8_qop.onnx      QOperator format (QLinearConv, QLinearMatMul, ...)
  <name>_int8_dyn.onnx      dynamic quantization (MatMulInteger, DynamicQuantizeLinear)
(with the float model's input_0.pb and output_0.pb copied beside each), each with quantize_static (quantize_dynamic for the last) and a small seeded random
calibration reader (activations uint8, weights int8, as ORT's defaults). Nothing is downloaded.

It needs a python with onnxruntime (and the onnx package its quantization tool imports); CMake
picks that interpreter (TRELLIS_ORT_PYTHON). When it has none, or this one lacks the modules,
DIR/int8_models.skip is written with the reason and the int8 tests skip with it.
"""
import argparse
import os
import shutil
import sys
import time

MODELS = {
    # name: calibration input shape (the exported model's input)
    "tiny_cnn": (1, 3, 32, 32),
    "transformer": (1, 16, 64),
    "resnet50": (1, 3, 224, 224),  # benchmark only (bench/cpu), not in `make test`
}
VARIANTS = ("qdq", "qdq_pc", "qop", "dyn")
SKIP_FILE = "int8_models.skip"


def write_skip(models_dir: str, reason: str) -> None:
    os.makedirs(models_dir, exist_ok=True)
    with open(os.path.join(models_dir, SKIP_FILE), "w") as f:
        f.write(reason + "\n")
    print("int8 models skipped: " + reason, flush=True)


def import_quantization():
    """The quantization module, or the reason it cannot be imported."""
    try:
        import numpy  # noqa: F401
        import onnx  # noqa: F401
        import onnxruntime
        from onnxruntime import quantization
    except Exception as e:  # ImportError, or a broken install
        return None, f"{sys.executable} cannot import onnxruntime's quantization tool ({e})"
    return quantization, onnxruntime.__version__


class RandomReader:
    """A few seeded standard-normal inputs: enough for calibration ranges in tests."""

    def __init__(self, input_name: str, shape, count: int = 8, seed: int = 7) -> None:
        import numpy as np
        rng = np.random.default_rng(seed)
        self._data = [{input_name: rng.standard_normal(shape).astype(np.float32)} for _ in range(count)]
        self._it = iter(self._data)

    def get_next(self):
        return next(self._it, None)

    def rewind(self) -> None:
        self._it = iter(self._data)


def quantize_one(q, src: str, dst: str, variant: str, shape) -> None:
    import onnx
    model = onnx.load(src)
    input_name = model.graph.input[0].name
    if variant == "dyn":
        q.quantize_dynamic(src, dst, weight_type=q.QuantType.QInt8)
        return
    q.quantize_static(
        src, dst, RandomReader(input_name, shape),
        quant_format=q.QuantFormat.QOperator if variant == "qop" else q.QuantFormat.QDQ,
        per_channel=variant == "qdq_pc",
        activation_type=q.QuantType.QUInt8,
        weight_type=q.QuantType.QInt8,
        calibrate_method=q.CalibrationMethod.MinMax,
        # QOperator: only the ops with standard ONNX QLinear forms (QGemm and
        # QLinearGlobalAveragePool are com.microsoft contrib ops, which Trellis does not import).
        op_types_to_quantize=["Conv", "MatMul"] if variant == "qop" else None)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", required=True, help="directory of the exported float models")
    ap.add_argument("--only", default="tiny_cnn,transformer", help="comma-separated: " + ",".join(MODELS))
    ap.add_argument("--opset", type=int, default=13)
    ap.add_argument("--force", action="store_true")
    ap.add_argument("--skip-reason", default="", help="write the skip file with this reason and stop")
    args = ap.parse_args()
    if args.skip_reason:
        write_skip(args.models, args.skip_reason)
        return 0
    q, version = import_quantization()
    if q is None:
        write_skip(args.models, version)
        return 0
    skip = os.path.join(args.models, SKIP_FILE)
    if os.path.exists(skip):
        os.remove(skip)
    for name in (n for n in args.only.split(",") if n):
        if name not in MODELS:
            ap.error(f"unknown model {name}; known: {list(MODELS)}")
        src = os.path.join(args.models, f"{name}_op{args.opset}.onnx")
        if not os.path.exists(src):
            print(f"error: {src} is missing (export_models.py writes it)", file=sys.stderr)
            return 1
        for variant in VARIANTS:
            dst = os.path.join(args.models, f"{name}_int8_{variant}.onnx")
            if not args.force and os.path.exists(dst) and os.path.getmtime(dst) >= os.path.getmtime(src):
                print(f"quantize {name} {variant} ... exists, skipped", flush=True)
                continue
            t0 = time.time()
            quantize_one(q, src, dst, variant, MODELS[name])
            # The float model's saved input and PyTorch output go beside it (the tests read
            # <model>.input_0.pb and state the int8 model's error against the float output).
            for suffix in (".input_0.pb", ".output_0.pb"):
                shutil.copyfile(src[:-len(".onnx")] + suffix, dst[:-len(".onnx")] + suffix)
            print(f"quantize {name} {variant} ... {time.time() - t0:.1f} s (onnxruntime {version})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
