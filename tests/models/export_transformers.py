#!/usr/bin/python3
"""Export small transformer architectures from Hugging Face `transformers` to ONNX, with inputs
and PyTorch's outputs, for the differential model tests.

Run with Debian's python (python3-torch 1.13, python3-onnx) and transformers 4.40.2 from PyPI
(scripts/install-deps.sh installs it; the newest that works with torch 1.13):

    /usr/bin/python3 tests/models/export_transformers.py --out DIR [--only t5_encoder,gpt2] [--force]

Every model comes from a small random config (torch.manual_seed(0)): nothing is downloaded. For
each model NAME it writes into DIR:
    NAME_op14.onnx
    NAME_op14.input_K.pb    (K = 0, 1, ...: TensorProtos named after the graph inputs)
    NAME_op14.output_0.pb   (PyTorch eager output, the last hidden state; the decoders also
                            NAME_op14.output_K.pb, K >= 1: the present key and value per layer)
exported by torch's TorchScript exporter at opset 14 (as the T5 encoder that gave a wrong answer
on CpuAcc was). The configurations are chosen to reach the code paths that matter:
  t5_encoder  relative-position bias with sequence 48 (the log-spaced buckets start at 8 and
              reach exact integers at 16 and 32), RMSNorm as Pow/ReduceMean/Sqrt/Div, padding mask
  bert        absolute positions, LayerNorm, GELU (erf), padding mask, token types
  gpt2        causal self-attention, tanh-GELU, Conv1D projections
  llama       RMSNorm, rotary embeddings, SiLU-gated MLP, grouped-query attention (2 kv heads),
              causal + padding mask
  gpt2_decoder, llama_decoder
              the same two with a KV cache: one decoding step of 4 new tokens after 20 cached
              ones (past_key_values inputs, use_cache=True: present key/value outputs); the
              attention then reads Concat(past, new) keys, with the causal mask offset by the
              past (GPT-2: a Where of a constant condition) and the second sequence's first 3
              positions padded
If the transformers package is missing the script says so and exits 0 (the tests that need its
models then fail naming the missing files).
"""
import argparse
import os
import sys
import time

import numpy as np
import onnx
import torch
from onnx import numpy_helper

SEQ = 48
BATCH = 2
VOCAB = 1000
OPSET = 14


def t5_encoder():
    from transformers import T5Config, T5EncoderModel
    cfg = T5Config(vocab_size=VOCAB, d_model=64, d_kv=16, d_ff=128, num_layers=2, num_heads=4,
                   relative_attention_num_buckets=32, relative_attention_max_distance=128,
                   dropout_rate=0.0)
    return T5EncoderModel(cfg), ["input_ids", "attention_mask"], {}


def bert():
    from transformers import BertConfig, BertModel
    cfg = BertConfig(vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                     intermediate_size=128, max_position_embeddings=128, hidden_dropout_prob=0.0,
                     attention_probs_dropout_prob=0.0, attn_implementation="eager")
    return BertModel(cfg, add_pooling_layer=False), ["input_ids", "attention_mask", "token_type_ids"], {}


def gpt2():
    from transformers import GPT2Config, GPT2Model
    cfg = GPT2Config(vocab_size=VOCAB, n_positions=128, n_embd=64, n_layer=2, n_head=4,
                     resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    return GPT2Model(cfg), ["input_ids", "attention_mask"], {"use_cache": False}


def llama():
    from transformers import LlamaConfig, LlamaModel
    cfg = LlamaConfig(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
                      attn_implementation="eager")
    return LlamaModel(cfg), ["input_ids", "attention_mask"], {"use_cache": False}


MODELS = {"t5_encoder": t5_encoder, "bert": bert, "gpt2": gpt2, "llama": llama}

# The decoders with a KV cache: past length and new tokens of the exported step.
PAST = 20
NEW = 4


def gpt2_decoder():
    model, _, _ = gpt2()
    return model, 2, 4, 16  # layers, kv heads, head size


def llama_decoder():
    model, _, _ = llama()
    return model, 2, 2, 16


DECODERS = {"gpt2_decoder": gpt2_decoder, "llama_decoder": llama_decoder}


class LastHiddenState(torch.nn.Module):
    """The model called with its inputs by name (plus fixed keyword arguments); returns the last
    hidden state only."""

    def __init__(self, model, names, extra):
        super().__init__()
        self.model = model
        self.names = names
        self.extra = extra

    def forward(self, *args):
        return self.model(**dict(zip(self.names, args)), **self.extra).last_hidden_state


class DecoderStep(torch.nn.Module):
    """One decoding step with a KV cache: (input_ids, attention_mask, past key and value per layer)
    -> (last hidden state, present key and value per layer)."""

    def __init__(self, model, layers):
        super().__init__()
        self.model = model
        self.layers = layers

    def forward(self, input_ids, attention_mask, *past):
        cache = tuple((past[2 * i], past[2 * i + 1]) for i in range(self.layers))
        out = self.model(input_ids=input_ids, attention_mask=attention_mask, past_key_values=cache, use_cache=True)
        flat = [out.last_hidden_state]
        for k, v in out.past_key_values:
            flat += [k, v]
        return tuple(flat)


def export_base(name, out_dir, force):
    """The path prefix of `name`'s files, or None (said) where they exist and force is off."""
    base = os.path.join(out_dir, f"{name}_op{OPSET}")
    if not force and os.path.exists(base + ".output_0.pb"):
        print(f"export {name} ... exists, skipped", flush=True)
        return None
    return base


def export_decoder(name, out_dir, force):
    base = export_base(name, out_dir, force)
    if base is None:
        return
    t0 = time.time()
    torch.manual_seed(0)
    model, layers, kv_heads, head = DECODERS[name]()
    model.eval()
    step = DecoderStep(model, layers).eval()
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, VOCAB, (BATCH, NEW), generator=g)
    mask = torch.ones(BATCH, PAST + NEW, dtype=torch.int64)
    mask[1, :3] = 0  # the second sequence is left-padded
    past = [torch.randn(BATCH, kv_heads, PAST, head, generator=g) for _ in range(2 * layers)]
    names = ["input_ids", "attention_mask"] + [f"past_{i}_{kv}" for i in range(layers) for kv in ("key", "value")]
    out_names = ["last_hidden_state"] + [f"present_{i}_{kv}" for i in range(layers) for kv in ("key", "value")]
    inputs = [ids, mask] + past
    with torch.no_grad():
        ref = [t.numpy() for t in step(*inputs)]
        torch.onnx.export(step, tuple(inputs), base + ".onnx", input_names=names, output_names=out_names,
                          opset_version=OPSET, do_constant_folding=True)
    onnx.checker.check_model(base + ".onnx")
    for k, (n, t) in enumerate(zip(names, inputs)):
        with open(f"{base}.input_{k}.pb", "wb") as f:
            f.write(numpy_helper.from_array(t.numpy(), n).SerializeToString())
    for k, (n, r) in enumerate(zip(out_names, ref)):
        with open(f"{base}.output_{k}.pb", "wb") as f:
            f.write(numpy_helper.from_array(r, n).SerializeToString())
    ops = sorted({n.op_type for n in onnx.load(base + ".onnx").graph.node})
    print(f"export {name} ... {time.time() - t0:.1f} s, {len(ref)} outputs, ops: {' '.join(ops)}", flush=True)


def make_inputs(names):
    g = torch.Generator().manual_seed(1)
    out = {}
    for n in names:
        if n == "input_ids":
            out[n] = torch.randint(0, VOCAB, (BATCH, SEQ), generator=g)
        elif n == "attention_mask":
            m = torch.ones(BATCH, SEQ, dtype=torch.int64)
            m[1, SEQ - 11:] = 0  # the second sequence is padded
            out[n] = m
        elif n == "token_type_ids":
            t = torch.zeros(BATCH, SEQ, dtype=torch.int64)
            t[:, SEQ // 2:] = 1
            out[n] = t
    return [out[n] for n in names]


def export_one(name, out_dir, force):
    base = export_base(name, out_dir, force)
    if base is None:
        return
    t0 = time.time()
    torch.manual_seed(0)
    model, names, extra = MODELS[name]()
    model.eval()
    wrapped = LastHiddenState(model, names, extra).eval()
    inputs = make_inputs(names)
    with torch.no_grad():
        ref = wrapped(*inputs).numpy()
        torch.onnx.export(wrapped, tuple(inputs), base + ".onnx", input_names=names, output_names=["last_hidden_state"],
                          opset_version=OPSET, do_constant_folding=True)
    onnx.checker.check_model(base + ".onnx")
    for k, (n, t) in enumerate(zip(names, inputs)):
        with open(f"{base}.input_{k}.pb", "wb") as f:
            f.write(numpy_helper.from_array(t.numpy(), n).SerializeToString())
    with open(base + ".output_0.pb", "wb") as f:
        f.write(numpy_helper.from_array(ref, "last_hidden_state").SerializeToString())
    ops = sorted({n.op_type for n in onnx.load(base + ".onnx").graph.node})
    print(f"export {name} ... {time.time() - t0:.1f} s, output {ref.shape}, ops: {' '.join(ops)}", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default="", help="comma-separated: " + ",".join(list(MODELS) + list(DECODERS)))
    ap.add_argument("--force", action="store_true")
    args = ap.parse_args()
    try:
        import transformers  # noqa: F401
    except ImportError:
        print("export_transformers: the transformers package is missing (scripts/install-deps.sh installs "
              "transformers==4.40.2); no transformer models exported")
        return 0
    names = [n for n in args.only.split(",") if n] or list(MODELS) + list(DECODERS)
    unknown = [n for n in names if n not in MODELS and n not in DECODERS]
    if unknown:
        print("unknown model(s): " + ", ".join(unknown), file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    for n in names:
        if n in DECODERS:
            export_decoder(n, args.out, args.force)
        else:
            export_one(n, args.out, args.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
