"""The GPU benchmark's models, as the PyTorch anchors define them (bench/gpu/compile_anchor.py on the
shared machine): torchvision's resnet50, mobilenet_v2 and vit_b_16, and a BERT-base-sized encoder
(nn.TransformerEncoder: 12 post-norm layers, d_model 768, 12 heads, FFN 3072, exact GELU) over
sequences of 128. Random weights (seeded); nothing is downloaded.

export(name, batch, path) writes the fp32 model with a fixed batch through PyTorch's TorchScript
exporter at opset 17 (LayerNormalization as one op, GELU as its Erf form), with the model's input
and output for that batch beside it (path + ".input.npy", ".output.npy")."""
import inspect

import numpy as np
import torch
import torchvision


def bert_like():
    layer = torch.nn.TransformerEncoderLayer(768, 12, 3072, activation="gelu", batch_first=True)
    return torch.nn.TransformerEncoder(layer, 12, enable_nested_tensor=False)


MODELS = {
    "resnet50": (lambda: torchvision.models.resnet50(), (3, 224, 224)),
    "mobilenet_v2": (lambda: torchvision.models.mobilenet_v2(), (3, 224, 224)),
    "bert_like": (bert_like, (128, 768)),
    "vit_b_16": (lambda: torchvision.models.vit_b_16(), (3, 224, 224)),
}


def make(name):
    torch.manual_seed(0)
    ctor, shape = MODELS[name]
    model = ctor().eval()
    # BatchNorm statistics that are not the identity (a few passes in training mode).
    if any(isinstance(m, torch.nn.BatchNorm2d) for m in model.modules()):
        model.train()
        with torch.no_grad():
            for _ in range(2):
                model(torch.randn(4, *shape))
        model.eval()
    # torchvision zero-initializes ViT's classifier head, so its output would be all zeros (and a
    # relative error against it undefined): give the head the default random Linear weights.
    head = getattr(getattr(model, "heads", None), "head", None)
    if isinstance(head, torch.nn.Linear):
        with torch.no_grad():
            head.reset_parameters()
    return model, shape


def export(name, batch, path):
    model, shape = make(name)
    torch.manual_seed(1)
    x = torch.randn(batch, *shape)
    with torch.no_grad():
        y = model(x)
    if hasattr(torch.backends, "mha"):
        torch.backends.mha.set_fastpath_enabled(False)  # the fused encoder path does not export
    legacy = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}
    with torch.enable_grad():
        torch.onnx.export(model, x, path, opset_version=17, input_names=["input"], output_names=["output"],
                          do_constant_folding=True, **legacy)
    np.save(path + ".input.npy", x.numpy())
    np.save(path + ".output.npy", y.numpy())
