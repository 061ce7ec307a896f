#!/usr/bin/env python3
"""Exports small models with a current PyTorch (2.11, its dynamo exporter and onnxscript) at opset
20 and at opset 23, with inputs and PyTorch's outputs, as test data for every backend
(tests/unit/torch_export_model_test.cpp reads them from TRELLIS_TORCH_EXPORTS_DIR).

The CI machine's PyTorch is Debian's 1.13, whose exporter writes neither opset; run this where
PyTorch 2.11 is installed (the GPU machine), then keep the small files it writes:

    python3 tests/models/export_torch211.py --out tests/models/torch211

For each model NAME and opset N it writes into OUT:
    NAME_op<N>.onnx
    NAME_op<N>.input_K.pb    (K = 0, 1, ...: TensorProtos named after the graph inputs)
    NAME_op<N>.output_0.pb   (PyTorch eager output)
and OUT/manifest.txt: one line per model file with the ops that matter (at opset 23 the exporter
writes one Attention per scaled_dot_product_attention and RMSNormalization for nn.RMSNorm; the
script fails if it does not, since the opset-23 files would then not test those layers).

Models (random weights, torch.manual_seed(0); nothing is downloaded):
  bert_sdpa      a BERT-like encoder: embeddings, LayerNorm, 2 layers of multi-head attention
                 through F.scaled_dot_product_attention with a padding mask, GELU MLP
  llama_block    a llama-style decoder block: nn.RMSNorm, rotary embeddings, grouped-query
                 causal attention through F.scaled_dot_product_attention, SiLU-gated MLP
  small_cnn      conv, batch norm, ReLU, pooling, a linear head
"""
import argparse
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
from onnx import numpy_helper

OPSETS = (20, 23)


class BertSdpa(nn.Module):
    def __init__(self, vocab=500, hidden=64, heads=4, layers=2, seq=24):
        super().__init__()
        self.heads = heads
        self.tok = nn.Embedding(vocab, hidden)
        self.pos = nn.Embedding(seq, hidden)
        self.ln0 = nn.LayerNorm(hidden)
        self.layers = nn.ModuleList()
        for _ in range(layers):
            self.layers.append(nn.ModuleDict({
                "qkv": nn.Linear(hidden, 3 * hidden), "out": nn.Linear(hidden, hidden), "ln1": nn.LayerNorm(hidden),
                "up": nn.Linear(hidden, 4 * hidden), "down": nn.Linear(4 * hidden, hidden), "ln2": nn.LayerNorm(hidden)}))

    def forward(self, ids, mask):
        b, s = ids.shape
        x = self.ln0(self.tok(ids) + self.pos(torch.arange(s, device=ids.device))[None])
        attn_mask = mask[:, None, None, :].to(torch.bool)  # (b, 1, 1, s): true attends
        for layer in self.layers:
            q, k, v = layer["qkv"](x).chunk(3, dim=-1)
            split = lambda t: t.view(b, s, self.heads, -1).transpose(1, 2)  # noqa: E731
            a = F.scaled_dot_product_attention(split(q), split(k), split(v), attn_mask=attn_mask)
            x = layer["ln1"](x + layer["out"](a.transpose(1, 2).reshape(b, s, -1)))
            x = layer["ln2"](x + layer["down"](F.gelu(layer["up"](x))))
        return x


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class LlamaBlock(nn.Module):
    def __init__(self, hidden=64, heads=4, kv_heads=2, seq=24):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, hidden // heads
        self.norm1 = nn.RMSNorm(hidden, eps=1e-6)
        self.norm2 = nn.RMSNorm(hidden, eps=1e-6)
        self.q = nn.Linear(hidden, hidden, bias=False)
        self.k = nn.Linear(hidden, kv_heads * self.head_dim, bias=False)
        self.v = nn.Linear(hidden, kv_heads * self.head_dim, bias=False)
        self.o = nn.Linear(hidden, hidden, bias=False)
        self.gate = nn.Linear(hidden, 3 * hidden, bias=False)
        self.up = nn.Linear(hidden, 3 * hidden, bias=False)
        self.down = nn.Linear(3 * hidden, hidden, bias=False)
        inv = 1.0 / (10000 ** (torch.arange(0, self.head_dim, 2).float() / self.head_dim))
        angles = torch.outer(torch.arange(seq).float(), inv)
        emb = torch.cat((angles, angles), dim=-1)
        self.register_buffer("cos", emb.cos(), persistent=False)
        self.register_buffer("sin", emb.sin(), persistent=False)

    def forward(self, x):
        b, s, _ = x.shape
        h = self.norm1(x)
        q = self.q(h).view(b, s, self.heads, -1).transpose(1, 2)
        k = self.k(h).view(b, s, self.kv_heads, -1).transpose(1, 2)
        v = self.v(h).view(b, s, self.kv_heads, -1).transpose(1, 2)
        cos, sin = self.cos[:s], self.sin[:s]
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        x = x + self.o(a.transpose(1, 2).reshape(b, s, -1))
        h = self.norm2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class SmallCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.head = nn.Linear(32, 10)

    def forward(self, x):
        return self.head(self.body(x).flatten(1))


def models():
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, 500, (2, 24), generator=g)
    mask = torch.ones(2, 24, dtype=torch.int64)
    mask[1, 17:] = 0
    return {
        "bert_sdpa": (BertSdpa(), (ids, mask), ["ids", "mask"]),
        "llama_block": (LlamaBlock(), (torch.randn(2, 24, 64, generator=g),), ["x"]),
        "small_cnn": (SmallCnn(), (torch.randn(2, 3, 32, 32, generator=g),), ["x"]),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    if tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2]) < (2, 9):
        sys.exit(f"error: PyTorch {torch.__version__} is too old: the opset-23 Attention and RMSNormalization "
                 "exports need PyTorch 2.9 or later (2.11 is what these files were made with)")
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(0)
    manifest = []
    for name, (model, inputs, input_names) in models().items():
        model.eval()
        with torch.no_grad():
            want = model(*inputs)
        for opset in OPSETS:
            base = os.path.join(args.out, f"{name}_op{opset}")
            torch.onnx.export(model, inputs, base + ".onnx", opset_version=opset, input_names=input_names,
                              output_names=["output"], dynamo=True, external_data=False)
            onnx_model = onnx.load(base + ".onnx")
            ops = sorted({n.op_type for n in onnx_model.graph.node})
            if opset >= 23 and name != "small_cnn":
                wanted = {"Attention"} | ({"RMSNormalization"} if name == "llama_block" else set())
                if not wanted <= set(ops):
                    sys.exit(f"error: {base}.onnx has no {sorted(wanted - set(ops))}: ops {ops}")
            graph_inputs = [i.name for i in onnx_model.graph.input]
            for k, (tensor, input_name) in enumerate(zip(inputs, graph_inputs)):
                with open(f"{base}.input_{k}.pb", "wb") as f:
                    f.write(numpy_helper.from_array(tensor.numpy(), input_name).SerializeToString())
            with open(f"{base}.output_0.pb", "wb") as f:
                f.write(numpy_helper.from_array(want.numpy().astype(np.float32), "output").SerializeToString())
            manifest.append(f"{name}_op{opset}: torch {torch.__version__}, ops {' '.join(ops)}")
            print(manifest[-1])
    with open(os.path.join(args.out, "manifest.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(manifest) + "\n")


if __name__ == "__main__":
    main()
