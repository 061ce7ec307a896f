"""The model repository of ``trellis.serving``: which models a directory holds and how to load them.

Layout (KServe's and Triton's model-repository layout, one model per subdirectory)::

    DIR/<name>/model.onnx             the model, served as <name>
    DIR/<name>/<version>/model.onnx   or Triton's versioned layout: the highest numeric version
    DIR/<name>/config.json            optional: backends, options and batching of this model

``config.json`` (every key optional; a value here overrides the server's flag)::

    {"backends": ["CpuAcc", "CpuRef"],
     "backend_options": {"CpuAcc": {"NumThreads": 2}},
     "shapes": {"input": [1, 3, 224, 224]},
     "max_batch_size": 8,
     "max_latency_ms": 2.0}

This module does not import KServe; it only reads files.
"""

import dataclasses
import json
import os
from typing import Any, Dict, List, Mapping, Optional, Sequence

from trellis.errors import Error

__all__ = ["ModelConfig", "ServingConfigError", "discover_models", "parse_backend_options", "MODEL_FILE", "CONFIG_FILE"]

MODEL_FILE = "model.onnx"
CONFIG_FILE = "config.json"


class ServingConfigError(Error, ValueError):
    """The model directory, a model's config.json or a server flag is not usable; the message
    names the file or flag and the rule broken."""


@dataclasses.dataclass
class ModelConfig:
    """One model of the repository, as the server loads it.

    Attributes:
        name: the model's name on the endpoints (its subdirectory's name).
        path: the .onnx file.
        backends: Trellis backends in preference order (None: Trellis's default).
        backend_options: per backend, option name -> value (``InferenceSession(backend_options=)``).
        shapes: input name -> shape pinned at load time (``InferenceSession(shapes=)``).
        max_batch_size: the most rows (sum of the requests' first dims) one batched run takes;
            1 turns batching off for this model.
        max_latency_ms: the longest a request waits for others to join its batch.
    """

    name: str
    path: str
    backends: Optional[List[str]] = None
    backend_options: Dict[str, Dict[str, str]] = dataclasses.field(default_factory=dict)
    shapes: Dict[str, List[int]] = dataclasses.field(default_factory=dict)
    max_batch_size: int = 1
    max_latency_ms: float = 0.0


_CONFIG_KEYS = ("backends", "backend_options", "shapes", "max_batch_size", "max_latency_ms")


def parse_backend_options(values: Sequence[str]) -> Dict[str, Dict[str, str]]:
    """``["CpuAcc:NumThreads=2", ...]`` (the CLI's ``--backend-option BACKEND:NAME=VALUE``) as a dict."""
    options: Dict[str, Dict[str, str]] = {}
    for value in values:
        backend, sep, rest = value.partition(":")
        name, eq, setting = rest.partition("=")
        if not sep or not eq or not backend or not name:
            raise ServingConfigError(f"--backend-option {value!r}: expected BACKEND:NAME=VALUE, e.g. CpuAcc:NumThreads=2")
        options.setdefault(backend, {})[name] = setting
    return options


def _check_batching(where: Optional[str], max_batch_size: Any, max_latency_ms: Any) -> None:
    """``where``: the config file, or None for the server's flags."""
    size_name, latency_name = ("--max-batch-size", "--max-latency-ms") if where is None else (
        f"{where}: max_batch_size", f"{where}: max_latency_ms")
    if isinstance(max_batch_size, bool) or not isinstance(max_batch_size, int) or max_batch_size < 1:
        raise ServingConfigError(f"{size_name} must be an integer >= 1 (1: no batching), got {max_batch_size!r}")
    if isinstance(max_latency_ms, bool) or not isinstance(max_latency_ms, (int, float)) or not 0 <= max_latency_ms <= 60000:
        raise ServingConfigError(f"{latency_name} must be a number of milliseconds in [0, 60000], got {max_latency_ms!r}")


def _read_config(path: str) -> Dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except json.JSONDecodeError as e:
        raise ServingConfigError(f"{path}: not valid JSON: {e}") from None
    except OSError as e:
        raise ServingConfigError(f"{path}: cannot be read: {e.strerror}") from None
    if not isinstance(data, dict):
        raise ServingConfigError(f"{path}: expected a JSON object, got {type(data).__name__}")
    unknown = sorted(set(data) - set(_CONFIG_KEYS))
    if unknown:
        raise ServingConfigError(f"{path}: unknown key(s) {', '.join(map(repr, unknown))}; "
                                 f"allowed: {', '.join(_CONFIG_KEYS)}")
    backends = data.get("backends")
    if backends is not None and (not isinstance(backends, list) or not backends
                                 or not all(isinstance(b, str) and b for b in backends)):
        raise ServingConfigError(f"{path}: backends must be a non-empty list of backend ids, got {backends!r}")
    options = data.get("backend_options", {})
    if not isinstance(options, dict) or not all(isinstance(v, dict) for v in options.values()):
        raise ServingConfigError(f"{path}: backend_options must map a backend id to an object of option -> value, "
                                 f"got {options!r}")
    shapes = data.get("shapes", {})
    if not isinstance(shapes, dict) or not all(
            isinstance(v, list) and all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in v)
            for v in shapes.values()):
        raise ServingConfigError(f"{path}: shapes must map an input name to a list of dims (integers >= 0), got {shapes!r}")
    return data


def _model_file(model_dir: str, name: str) -> str:
    direct = os.path.join(model_dir, MODEL_FILE)
    versions = sorted((int(v) for v in os.listdir(model_dir)
                       if v.isdigit() and os.path.isfile(os.path.join(model_dir, v, MODEL_FILE))))
    if os.path.isfile(direct):
        if versions:
            raise ServingConfigError(
                f"model '{name}': both {direct} and version directories ({', '.join(map(str, versions))}) hold a "
                f"{MODEL_FILE}; keep one layout")
        return direct
    if versions:
        return os.path.join(model_dir, str(versions[-1]), MODEL_FILE)
    raise ServingConfigError(f"model '{name}': no {MODEL_FILE} in {model_dir} nor in a numeric version "
                             f"subdirectory ({model_dir}/<N>/{MODEL_FILE})")


def discover_models(model_dir: str, backends: Optional[Sequence[str]] = None,
                    backend_options: Optional[Mapping[str, Mapping[str, str]]] = None,
                    max_batch_size: int = 1, max_latency_ms: float = 0.0) -> List[ModelConfig]:
    """The models of ``model_dir`` (one per subdirectory, sorted by name), each with the server's
    defaults overridden by its ``config.json``. Subdirectories whose name starts with '.' are
    skipped; any other subdirectory without a model is an error, as is an empty repository."""
    _check_batching(None, max_batch_size, max_latency_ms)
    if not os.path.isdir(model_dir):
        raise ServingConfigError(f"--model-dir {model_dir}: not a directory")
    configs = []
    for name in sorted(os.listdir(model_dir)):
        sub = os.path.join(model_dir, name)
        if name.startswith(".") or not os.path.isdir(sub):
            continue
        config = ModelConfig(name=name, path=_model_file(sub, name),
                             backends=list(backends) if backends else None,
                             backend_options={b: dict(o) for b, o in (backend_options or {}).items()},
                             max_batch_size=max_batch_size, max_latency_ms=float(max_latency_ms))
        config_path = os.path.join(sub, CONFIG_FILE)
        if os.path.exists(config_path):
            data = _read_config(config_path)
            if "backends" in data:
                config.backends = list(data["backends"])
            for backend, values in data.get("backend_options", {}).items():
                config.backend_options.setdefault(backend, {}).update(
                    {str(k): (str(v).lower() if isinstance(v, bool) else str(v)) for k, v in values.items()})
            config.shapes = {k: list(v) for k, v in data.get("shapes", {}).items()}
            config.max_batch_size = data.get("max_batch_size", config.max_batch_size)
            config.max_latency_ms = data.get("max_latency_ms", config.max_latency_ms)
            _check_batching(config_path, config.max_batch_size, config.max_latency_ms)
            config.max_latency_ms = float(config.max_latency_ms)
        configs.append(config)
    if not configs:
        raise ServingConfigError(f"--model-dir {model_dir}: no model subdirectories (expected {model_dir}/<name>/{MODEL_FILE})")
    return configs
