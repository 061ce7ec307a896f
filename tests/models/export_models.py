#!/usr/bin/python3
"""Export PyTorch reference models to ONNX together with input/output tensors.

Run with Debian's python (python3-torch 1.13, python3-torchvision 0.14, python3-onnx):

    /usr/bin/python3 tests/models/export_models.py --out DIR \
        [--only resnet50,tiny_cnn] [--opsets 13,17] [--force]

For each model NAME and opset N it writes into DIR:
    NAME_opN.onnx
    NAME_opN.input_0.pb   / NAME_opN.input_0.npy    (input, TensorProto named after graph input)
    NAME_opN.output_0.pb  / NAME_opN.output_0.npy   (PyTorch eager output, named after graph output)
Existing files are kept unless --force. Weights are random (torch.manual_seed(0)); nothing
is downloaded. After export it prints the op types used and any "parameter" inputs
(Reshape shape, Slice starts, ...) that are computed by other nodes rather than constants.
If onnxruntime is importable here, or by the `python3` on PATH, the export is also run
through it and compared with the PyTorch output (optional, informational only).
"""
import argparse
import collections
import importlib.util
import inspect
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import onnx
import torch
import torch.nn as nn
import torchvision
from onnx import numpy_helper

INPUT_SHAPE_224 = (1, 3, 224, 224)


class TinyCNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1),
            nn.BatchNorm2d(8),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, stride=2, padding=1, groups=2),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
        )
        self.fc = nn.Linear(16, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.features(x))


def make_tiny_cnn() -> nn.Module:
    m = TinyCNN()
    bn = m.features[1]
    with torch.no_grad():  # non-trivial BatchNorm affine; statistics come from calibrate_bn
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.uniform_(-0.5, 0.5)
    return m


def make_transformer() -> nn.Module:
    layer = nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128,
                                       dropout=0.0, batch_first=True)
    enc = nn.TransformerEncoder(layer, num_layers=2)
    # TransformerEncoder deep-copies `layer`, so both layers would share identical
    # weights (and the exporter would dedupe them into Identity nodes). Re-draw them.
    with torch.no_grad():
        for name, p in enc.named_parameters():
            if "norm" in name:
                p.copy_((1.0 if name.endswith("weight") else 0.0) + 0.1 * torch.randn_like(p))
            else:
                p.copy_(torch.randn_like(p) * (0.02 if name.endswith("bias") else 0.125))
    return enc


class LstmModel(nn.Module):
    """nn.LSTM(input_size=32, hidden_size=64, num_layers=2) on [seq 16, batch 1, 32]; only the
    output sequence is returned (the final states feed nothing)."""

    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(input_size=32, hidden_size=64, num_layers=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lstm(x)[0]


def make_vit_b_16() -> nn.Module:
    m = torchvision.models.vit_b_16(weights=None)
    # torchvision initializes the classification head to zeros: every output would be 0 and no
    # comparison could fail. Random head weights make the output depend on the whole network.
    with torch.no_grad():
        m.heads.head.weight.normal_(0.0, 0.02)
        m.heads.head.bias.normal_(0.0, 0.02)
    return m


def calibrate_bn(model: nn.Module, shape) -> nn.Module:
    """Set BatchNorm running stats to the batch statistics of random inputs.

    With random init and default stats (mean 0, var 1) activations drift badly
    (mobilenet_v2 outputs ~1e-9, resnet50 ~1e2), making references useless; calibrated
    stats keep them O(1), like a trained net. Uses the caller's RNG stream (seeded)."""
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if bns:
        for bn in bns:
            bn.reset_running_stats()
            bn.momentum = None  # cumulative average == exact batch statistics
        model.train()
        with torch.no_grad():
            model(torch.randn(4, *shape[1:]))
        for bn in bns:
            bn.momentum = 0.1
    return model.eval()


# name -> (constructor, input shape)
MODELS = {
    "tiny_cnn": (make_tiny_cnn, (1, 3, 32, 32)),
    "squeezenet1_1": (lambda: torchvision.models.squeezenet1_1(weights=None), INPUT_SHAPE_224),
    "mobilenet_v2": (lambda: torchvision.models.mobilenet_v2(weights=None), INPUT_SHAPE_224),
    "resnet50": (lambda: torchvision.models.resnet50(weights=None), INPUT_SHAPE_224),
    "transformer": (make_transformer, (1, 16, 64)),
    "lstm": (LstmModel, (16, 1, 32)),
    "efficientnet_b0": (lambda: torchvision.models.efficientnet_b0(weights=None), INPUT_SHAPE_224),
    "shufflenet_v2_x1_0": (lambda: torchvision.models.shufflenet_v2_x1_0(weights=None), INPUT_SHAPE_224),
    "mobilenet_v3_small": (lambda: torchvision.models.mobilenet_v3_small(weights=None), INPUT_SHAPE_224),
    "vit_b_16": (make_vit_b_16, INPUT_SHAPE_224),
}

# Opsets each model is exported at when --opsets is not given for it: all requested ones, except
# vit_b_16 (330 MB per file): opset 13 only, which keeps the test data and its export time small.
MODEL_OPSETS = {"vit_b_16": (13,)}

# Inputs of these ops that act as parameters (shapes, axes, bounds, ...).
PARAM_INPUTS = {
    "Reshape": {1: "shape"}, "Expand": {1: "shape"}, "ConstantOfShape": {0: "input"},
    "Slice": {1: "starts", 2: "ends", 3: "axes", 4: "steps"},
    "Unsqueeze": {1: "axes"}, "Squeeze": {1: "axes"}, "Split": {1: "split"},
    "Resize": {1: "roi", 2: "scales", 3: "sizes"},
    "Pad": {1: "pads", 2: "constant_value", 3: "axes"}, "Clip": {1: "min", 2: "max"},
    "Range": {0: "start", 1: "limit", 2: "delta"}, "Tile": {1: "repeats"}, "TopK": {1: "k"},
    **{op: {1: "axes"} for op in ("ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin",
                                  "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSumExp",
                                  "ReduceSumSquare", "ReduceLogSum")},
}


def describe(model: onnx.ModelProto) -> str:
    g = model.graph
    ops = collections.Counter(n.op_type for n in g.node)
    inits = {t.name for t in g.initializer}
    producer = {o: n for n in g.node for o in n.output}
    lines = ["  ops: " + ", ".join(f"{k} x{v}" for k, v in sorted(ops.items()))]
    computed = collections.Counter()
    for n in g.node:
        for idx, pname in PARAM_INPUTS.get(n.op_type, {}).items():
            if idx >= len(n.input) or not n.input[idx] or n.input[idx] in inits:
                continue
            src = producer.get(n.input[idx])
            if src is not None and src.op_type == "Constant":
                continue
            computed[f"{n.op_type}.{pname} <- {src.op_type if src else 'graph input'}"] += 1
    lines.append("  computed params: " + (", ".join(f"{k} x{v}" for k, v in
                                                  sorted(computed.items())) or "none"))
    attrs = collections.defaultdict(set)
    for n in g.node:
        for a in n.attribute:
            attrs[n.op_type].add(a.name)
    lines.append("  attrs: " + "; ".join(f"{op}[{','.join(sorted(s))}]"
                                        for op, s in sorted(attrs.items())))
    return "\n".join(lines)


_ORT_SNIPPET = r"""
import sys, numpy as np, onnxruntime as ort
path, xin, yref = sys.argv[1:4]
s = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
y = s.run(None, {s.get_inputs()[0].name: np.load(xin)})[0]
print(f"{float(np.max(np.abs(y - np.load(yref)))):.3g} (onnxruntime {ort.__version__})")
"""


def ort_check(path: str, xin: str, yref: str) -> str:
    """Max |ORT - PyTorch|, using onnxruntime here or in the `python3` on PATH."""
    py = sys.executable if importlib.util.find_spec("onnxruntime") else shutil.which("python3")
    if not py:
        return "skipped (no onnxruntime)"
    r = subprocess.run([py, "-c", _ORT_SNIPPET, path, xin, yref],
                       capture_output=True, text=True)
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["?"])[-1]
        return "skipped" if "No module named" in last else f"FAILED: {last[:200]}"
    return r.stdout.strip()


def export_one(name: str, opset: int, out: str, force: bool) -> None:
    base = os.path.join(out, f"{name}_op{opset}")
    files = [base + s for s in (".onnx", ".input_0.pb", ".output_0.pb",
                                ".input_0.npy", ".output_0.npy")]
    if not force and all(os.path.exists(f) for f in files):
        print(f"export {name} opset {opset} ... exists, skipped", flush=True)
        return
    ctor, shape = MODELS[name]
    t0 = time.time()
    torch.manual_seed(0)
    model = calibrate_bn(ctor(), shape)
    torch.manual_seed(1)
    x = torch.randn(*shape)
    with torch.no_grad():
        y = model(x)
    # torch 1.13 has no torch.backends.mha.set_fastpath_enabled(); in eval mode under
    # no_grad, nn.TransformerEncoderLayer takes the fused "fast path"
    # (aten::_transformer_encoder_layer_fwd) which the ONNX exporter cannot export.
    # That path is skipped when grad is enabled and the weights require grad, so the
    # export is traced under enable_grad() (parameters require grad by default); this
    # yields the plain MatMul/Softmax/LayerNorm decomposition. Harmless for CNNs.
    if hasattr(torch.backends, "mha"):
        torch.backends.mha.set_fastpath_enabled(False)
    # PyTorch 2.x exports through dynamo by default (opset 18+); the TorchScript exporter this
    # script was written for is asked for by name where the argument exists.
    legacy = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}
    with torch.enable_grad():
        torch.onnx.export(model, x, base + ".onnx", opset_version=opset,
                          input_names=["input"], output_names=["output"],
                          do_constant_folding=True, **legacy)
    m = onnx.load(base + ".onnx")
    onnx.checker.check_model(m)
    for suffix, arr, vi in ((".input_0", x, m.graph.input[0]), (".output_0", y, m.graph.output[0])):
        a = arr.detach().numpy()
        np.save(base + suffix + ".npy", a)
        with open(base + suffix + ".pb", "wb") as f:
            f.write(numpy_helper.from_array(a, vi.name).SerializeToString())
    dt = time.time() - t0
    size = os.path.getsize(base + ".onnx")
    print(f"export {name} opset {opset} ... {dt:.1f} s, {size / 1e6:.2f} MB, "
          f"output {tuple(y.shape)}", flush=True)
    print(describe(m))
    print("  onnxruntime max abs diff: " +
          ort_check(base + ".onnx", base + ".input_0.npy", base + ".output_0.npy"), flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="output directory")
    ap.add_argument("--only", default="", help="comma-separated model names: " + ",".join(MODELS))
    ap.add_argument("--opsets", default="13,17", help="comma-separated opsets (default 13,17)")
    ap.add_argument("--force", action="store_true", help="re-export even if files exist")
    args = ap.parse_args()
    names = [n for n in args.only.split(",") if n] or list(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        ap.error(f"unknown model(s) {unknown}; known: {list(MODELS)}")
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    for name in names:
        for opset in (int(o) for o in args.opsets.split(",") if o):
            if name in MODEL_OPSETS and opset not in MODEL_OPSETS[name]:
                continue
            export_one(name, opset, args.out, args.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
