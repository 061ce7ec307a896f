"""The exceptions of the trellis package.

Every error the engine reports is a :class:`trellis.Error`; nothing the caller passes in (a bad
model, an unsupported operator, a wrong input) crashes the interpreter. Messages name the file,
node, input or backend and the rule that was broken.
"""

__all__ = [
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


class Error(RuntimeError):
    """Base class of every error raised by trellis."""


class InvalidModelError(Error):
    """The model could not be read or is not a valid ONNX model Trellis can build
    (malformed protobuf, inconsistent shapes or types, a newer opset than the importer reads)."""


class ModelFileNotFoundError(InvalidModelError, FileNotFoundError):
    """The model file (or one of its external-data files) does not exist."""


class UnsupportedOperatorError(InvalidModelError):
    """The model uses an operator (or operator domain) Trellis does not convert; the message
    names the node, the op and the opset."""


class InvalidInputError(Error, ValueError):
    """An input given to ``run``/``bench`` is missing, unknown, or of the wrong type, dtype or shape.

    Attributes:
        input_name: the model input concerned ("" when the feed's key itself was wrong).
        expected: what the model needs there, e.g. ``"float32"`` or ``"(1, 3, 'N', 224)"``.
        got: what was given, e.g. ``"float64"``, ``"(1, 3, 224)"`` or ``"missing"``.
    """

    def __init__(self, message: str, input_name: str = "", expected: str = "", got: str = "") -> None:
        super().__init__(message)
        self.input_name = input_name
        self.expected = expected
        self.got = got


class InvalidArgumentError(Error, ValueError):
    """A session option or call argument breaks the API's contract (an unknown output name,
    a shape for an input the model does not have, an empty backend list, ...)."""


class BackendError(Error):
    """A requested backend is not registered (the message lists those that are and why a dynamic
    backend file was skipped), or no requested backend can run some layer."""


class ResourceLimitError(Error):
    """A tensor or the working memory of a run would exceed the session's resource limits."""


class EngineError(Error):
    """Loading or running the network failed inside the engine."""
