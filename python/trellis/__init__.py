"""Trellis: an ONNX inference engine with pluggable backends, from Python.

The API follows ONNX Runtime's, so code ports by changing the import::

    import numpy as np
    import trellis

    session = trellis.InferenceSession("model.onnx", backends=["CpuAcc", "CpuRef"])
    name = session.get_inputs()[0].name
    outputs = session.run(None, {name: np.zeros((1, 3, 224, 224), np.float32)})

``trellis.backends()`` lists the registered backends (and the dynamic-backend report);
``trellis.backend`` implements ONNX's backend interface (``onnx.backend.base.Backend``) for
ONNX's own test runner; errors are ``trellis.Error`` subclasses (``trellis.errors``).
``trellis.serving`` serves models over KServe's Open Inference Protocol (``python3 -m
trellis.serving``; needs the ``kserve`` package).
"""

from trellis._trellis import HIGHEST_SUPPORTED_OPSET, __version__
from trellis.errors import (
    BackendError,
    EngineError,
    Error,
    InvalidArgumentError,
    InvalidInputError,
    InvalidModelError,
    ModelFileNotFoundError,
    ResourceLimitError,
    UnsupportedOperatorError,
)
from trellis.session import InferenceSession, NodeArg, backends, supported_operators

__all__ = [
    "__version__",
    "HIGHEST_SUPPORTED_OPSET",
    "InferenceSession",
    "NodeArg",
    "backends",
    "supported_operators",
    "Error",
    "InvalidModelError",
    "ModelFileNotFoundError",
    "UnsupportedOperatorError",
    "InvalidInputError",
    "InvalidArgumentError",
    "BackendError",
    "ResourceLimitError",
    "EngineError",
]
