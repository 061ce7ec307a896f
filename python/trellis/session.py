"""trellis.InferenceSession: an ONNX model loaded on Trellis's backends, shaped like ONNX Runtime's."""

import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

import numpy as np

from trellis import _trellis
from trellis.errors import InvalidArgumentError

__all__ = ["InferenceSession", "NodeArg", "backends", "supported_operators"]


class NodeArg:
    """A model input or output, as ``onnxruntime.NodeArg`` describes it.

    Attributes:
        name: the graph input's or output's name.
        shape: one entry per dim: an int for a fixed dim, the symbol (a str such as ``"batch"``)
            for a symbolic one, ``None`` for a dim the model leaves unnamed and unknown.
        dtype: the numpy dtype of the tensor (``numpy.dtype("float32")``, ...).
        type: ONNX Runtime's spelling of the type (``"tensor(float)"``, ...).
    """

    __slots__ = ("name", "shape", "dtype", "type")

    def __init__(self, name: str, shape: List[Union[int, str, None]], dtype: np.dtype, type: str) -> None:
        self.name = name
        self.shape = shape
        self.dtype = dtype
        self.type = type

    def __repr__(self) -> str:
        return f"NodeArg(name={self.name!r}, shape={self.shape!r}, dtype={self.dtype.name}, type={self.type!r})"


def _model_argument(path_or_bytes: Any) -> Union[str, bytes]:
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        return bytes(path_or_bytes)
    if isinstance(path_or_bytes, (str, os.PathLike)):
        return os.fspath(path_or_bytes)
    serialize = getattr(path_or_bytes, "SerializeToString", None)
    if callable(serialize):  # an onnx.ModelProto
        return serialize()
    raise InvalidArgumentError(
        "InferenceSession: path_or_bytes must be a path (str or os.PathLike), the bytes of an ONNX "
        f"ModelProto, or an onnx.ModelProto; got {type(path_or_bytes).__name__}")


def _string_options(backend_options: Optional[Mapping[str, Mapping[str, Any]]]) -> Dict[str, Dict[str, str]]:
    options: Dict[str, Dict[str, str]] = {}
    for backend, values in (backend_options or {}).items():
        if not isinstance(values, Mapping):
            raise InvalidArgumentError(
                f"backend_options[{backend!r}]: expected a dict of option name -> value, got {type(values).__name__}")
        options[str(backend)] = {str(k): (str(v).lower() if isinstance(v, bool) else str(v)) for k, v in values.items()}
    return options


def _shape_options(shapes: Optional[Mapping[str, Sequence[int]]]) -> Dict[str, List[int]]:
    result: Dict[str, List[int]] = {}
    for name, dims in (shapes or {}).items():
        try:
            result[str(name)] = [int(d) for d in dims]
        except (TypeError, ValueError):
            raise InvalidArgumentError(f"shapes[{name!r}]: expected a sequence of ints, got {dims!r}") from None
    return result


class InferenceSession:
    """An ONNX model parsed, optimized for a list of backends and loaded, ready to run.

    The model's layers are assigned to the first backend in ``backends`` that supports them (CpuAcc,
    Trellis's optimized CPU backend, then CpuRef, the reference, by default); ``inspect()`` says
    where each layer went and why the backends before it declined.

    Example::

        import numpy as np
        import trellis

        session = trellis.InferenceSession("model.onnx")
        x = np.random.rand(1, 3, 224, 224).astype(np.float32)
        (y,) = session.run(None, {session.get_inputs()[0].name: x})

    Args:
        path_or_bytes: the .onnx file (str or os.PathLike), the serialized ModelProto (bytes), or
            an ``onnx.ModelProto``. External data is resolved relative to the file's folder (the
            current directory for bytes).
        backends: backend ids in order of preference, e.g. ``["CpuAcc", "CpuRef"]``; ``None``
            takes CpuAcc then CpuRef where CpuAcc is built in, else CpuRef. ``trellis.backends()``
            lists what is registered.
        backend_options: per backend, option name -> value, e.g.
            ``{"CpuAcc": {"NumThreads": 4, "FastMath": "bf16"}}`` (values are passed as strings).
        shapes: input name -> shape, pinning the model's symbolic or unknown dims at load time
            (otherwise they are decided by each run, and the network is specialized per shape).
        dynamic_backends_path: a directory scanned for dynamic backends
            (``<vendor>_<name>_backend.so``) instead of the built-in paths.
        max_tensor_bytes: refuse models with a tensor larger than this (0: physical memory).
        max_working_memory_bytes: refuse runs needing more working memory (0: physical memory).

    Raises:
        trellis.ModelFileNotFoundError, trellis.InvalidModelError,
        trellis.UnsupportedOperatorError, trellis.BackendError, trellis.InvalidArgumentError,
        trellis.ResourceLimitError, trellis.EngineError.

    Thread-safety: ``run`` releases the GIL while the network runs, and any number of threads may
    call ``run`` on one session at once; each call has its own working memory and outputs.
    """

    def __init__(
        self,
        path_or_bytes: Any,
        backends: Optional[Sequence[str]] = None,
        backend_options: Optional[Mapping[str, Mapping[str, Any]]] = None,
        shapes: Optional[Mapping[str, Sequence[int]]] = None,
        dynamic_backends_path: Optional[Union[str, "os.PathLike[str]"]] = None,
        max_tensor_bytes: int = 0,
        max_working_memory_bytes: int = 0,
    ) -> None:
        if isinstance(backends, str):
            backends = [b for b in backends.split(",") if b]
        for name, limit in (("max_tensor_bytes", max_tensor_bytes), ("max_working_memory_bytes", max_working_memory_bytes)):
            if not isinstance(limit, int) or limit < 0:
                raise InvalidArgumentError(f"InferenceSession: {name} must be a byte count >= 0 (0: no limit but "
                                           f"physical memory), got {limit!r}")
        self._session = _trellis.Session(
            _model_argument(path_or_bytes),
            None if backends is None else [str(b) for b in backends],
            _string_options(backend_options),
            _shape_options(shapes),
            "" if dynamic_backends_path is None else os.path.abspath(os.fspath(dynamic_backends_path)),
            int(max_tensor_bytes),
            int(max_working_memory_bytes),
        )
        self._inputs = [NodeArg(n, s, np.dtype(d), t) for n, s, d, t in self._session.inputs()]
        self._outputs = [NodeArg(n, s, np.dtype(d), t) for n, s, d, t in self._session.outputs()]

    def get_inputs(self) -> List[NodeArg]:
        """The model's inputs (initializers excluded), in graph order."""
        return list(self._inputs)

    def get_outputs(self) -> List[NodeArg]:
        """The model's outputs in graph order; for a network specialized per run (symbolic input
        dims), dims that depend on the inputs are symbolic here."""
        return list(self._outputs)

    def run(self, output_names: Optional[Sequence[str]], input_feed: Mapping[str, Any],
            run_options: Any = None) -> List[np.ndarray]:
        """Runs the model once and returns the requested outputs as numpy arrays.

        Args:
            output_names: the outputs to return, in that order; ``None`` or ``[]`` for all, in
                graph order.
            input_feed: input name -> array: a numpy array, or any CPU tensor with
                ``__dlpack__`` (a detached torch tensor) or a DLPack capsule. Arrays that are
                C-contiguous and of the model's dtype are read in place (not copied); others are
                copied once (counted by ``copied_inputs``). Dtypes are not converted.
            run_options: accepted for ONNX Runtime compatibility; must be None.

        Returns:
            one numpy array per requested output; each owns its memory.

        Raises:
            trellis.InvalidInputError: an input is missing, unknown, or has the wrong dtype or
                shape (``input_name``, ``expected`` and ``got`` say which and how).
            trellis.InvalidArgumentError: an unknown output name.
            trellis.EngineError, trellis.ResourceLimitError: the run failed.

        The GIL is released while the network runs.
        """
        if run_options is not None:
            raise InvalidArgumentError("run: run_options is not supported by trellis (pass None)")
        return self._session.run(None if output_names is None else list(output_names), dict(input_feed))

    def bench(self, input_feed: Optional[Mapping[str, Any]] = None, iterations: int = 50, warmup: int = 5,
              seed: int = 0) -> Dict[str, Any]:
        """Times ``iterations`` runs after ``warmup`` untimed ones, without the GIL, and returns
        ``{"min_ms", "median_ms", "p90_ms", "max_ms", "mean_ms", "times_ms", ...}``.

        ``input_feed`` defaults to seeded random inputs (uniform in [0, 1) for floats, 0/1 for
        integers and bools); that needs every input dim fixed (or pinned by ``shapes``).
        The times are the engine's alone; time ``run`` from Python to include the call's cost.
        """
        if not isinstance(iterations, int) or iterations < 1 or not isinstance(warmup, int) or warmup < 0:
            raise InvalidArgumentError(f"bench: iterations must be >= 1 and warmup >= 0, got {iterations!r} and {warmup!r}")
        feed = dict(input_feed) if input_feed is not None else self._random_feed(seed)
        return self._session.bench(feed, int(iterations), int(warmup))

    def inspect(self) -> Dict[str, Any]:
        """What the optimizer made of the model: ``layers`` (each with ``name``, ``op``,
        ``backend``, ``outputs``, and ``declined``: backend -> the reason it gave), ``layer_counts``
        per backend, ``backends``, ``dynamic``, ``opset``, ``optimization_log``, ``warnings`` and
        ``peak_working_memory_bytes``. For a dynamic network, layers are placed per run and
        ``layers`` lists the network as built."""
        return self._session.inspect()

    @property
    def copied_inputs(self) -> int:
        """How many inputs so far had to be copied because they were not C-contiguous."""
        return self._session.copied_inputs

    @property
    def dynamic(self) -> bool:
        """True when the network is specialized per run (symbolic input dims not pinned)."""
        return self._session.dynamic

    def get_providers(self) -> List[str]:
        """The session's backends in preference order (ONNX Runtime's name for them)."""
        return list(self.inspect()["backends"])

    def _random_feed(self, seed: int) -> Dict[str, np.ndarray]:
        rng = np.random.default_rng(seed)
        feed = {}
        for arg in self._inputs:
            if not all(isinstance(d, int) for d in arg.shape):
                raise InvalidArgumentError(
                    f"bench: input '{arg.name}' has shape {tuple(arg.shape)} with dims decided per run; "
                    "pass input_feed, or pin them with shapes= when creating the session")
            if arg.dtype.kind == "f":
                feed[arg.name] = rng.random(arg.shape).astype(arg.dtype)
            else:
                feed[arg.name] = rng.integers(0, 2, size=arg.shape).astype(arg.dtype)
        return feed

    def __repr__(self) -> str:
        info = self.inspect()
        return f"<trellis.InferenceSession {info['model']!r} on {','.join(info['backends'])}>"


def backends(dynamic_backends_path: Optional[Union[str, "os.PathLike[str]"]] = None) -> Dict[str, Any]:
    """The registered backends and the dynamic-backend report, as ``trellis backends`` prints them.

    Returns a dict with ``registered`` (each: ``id``, ``origin`` — "built in" or the file it was
    loaded from —, ``available`` and ``unavailable_reason``, ``backend_api``), ``default`` (the
    backends an InferenceSession uses when none are named), ``dynamic_backend_files`` (each file
    found while scanning: ``path``, ``id``, ``loaded``, ``reason`` it was skipped) and
    ``dynamic_backend_warnings``. ``dynamic_backends_path`` scans that directory instead of the
    built-in paths (loaded backends stay registered for the process).
    """
    return _trellis.backends("" if dynamic_backends_path is None else os.path.abspath(os.fspath(dynamic_backends_path)))


def supported_operators() -> List[str]:
    """The ONNX operators (default domain) the importer converts, sorted."""
    return list(_trellis.supported_operators())
