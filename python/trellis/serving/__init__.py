"""trellis.serving: Trellis behind KServe's Open Inference Protocol (v2, HTTP and gRPC).

``python3 -m trellis.serving --model-dir DIR`` (or the console script ``trellis-serve``) serves
every model of a model repository (``DIR/<name>/model.onnx``; see ``trellis.serving.config``) with
KServe's model server; ``TrellisModel`` is the ``kserve.Model`` subclass behind each one, usable
with a ``kserve.ModelServer`` of one's own. Needs the ``kserve`` package (``pip install
trellis[serving]``). See docs/serving.md.

The names are imported on first use, so that ``python3 -m trellis.serving`` parses its flags
before KServe (which reads ``sys.argv`` when imported) is loaded.
"""

__all__ = ["TrellisModel", "Batcher", "ModelConfig", "ServingConfigError", "discover_models", "main"]

_WHERE = {
    "TrellisModel": "trellis.serving.model",
    "Batcher": "trellis.serving.batcher",
    "ModelConfig": "trellis.serving.config",
    "ServingConfigError": "trellis.serving.config",
    "discover_models": "trellis.serving.config",
    "main": "trellis.serving.server",
}


def __getattr__(name):
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'trellis.serving' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


def __dir__():
    return sorted(list(globals()) + __all__)
