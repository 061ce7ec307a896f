"""Type stubs of the trellis package's public API."""
import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

import numpy as np

from trellis.errors import BackendError as BackendError
from trellis.errors import EngineError as EngineError
from trellis.errors import Error as Error
from trellis.errors import InvalidArgumentError as InvalidArgumentError
from trellis.errors import InvalidInputError as InvalidInputError
from trellis.errors import InvalidModelError as InvalidModelError
from trellis.errors import ModelFileNotFoundError as ModelFileNotFoundError
from trellis.errors import ResourceLimitError as ResourceLimitError
from trellis.errors import UnsupportedOperatorError as UnsupportedOperatorError

__version__: str
HIGHEST_SUPPORTED_OPSET: int

_PathLike = Union[str, "os.PathLike[str]"]

class NodeArg:
    name: str
    shape: List[Union[int, str, None]]
    dtype: np.dtype
    type: str
    def __init__(self, name: str, shape: List[Union[int, str, None]], dtype: np.dtype, type: str) -> None: ...

class InferenceSession:
    def __init__(self, path_or_bytes: Union[_PathLike, bytes, Any],
                 backends: Optional[Sequence[str]] = ...,
                 backend_options: Optional[Mapping[str, Mapping[str, Any]]] = ...,
                 shapes: Optional[Mapping[str, Sequence[int]]] = ...,
                 dynamic_backends_path: Optional[_PathLike] = ...,
                 max_tensor_bytes: int = ...,
                 max_working_memory_bytes: int = ...) -> None: ...
    def get_inputs(self) -> List[NodeArg]: ...
    def get_outputs(self) -> List[NodeArg]: ...
    def get_providers(self) -> List[str]: ...
    def run(self, output_names: Optional[Sequence[str]], input_feed: Mapping[str, Any],
            run_options: Any = ...) -> List[np.ndarray]: ...
    def bench(self, input_feed: Optional[Mapping[str, Any]] = ..., iterations: int = ..., warmup: int = ...,
              seed: int = ...) -> Dict[str, Any]: ...
    def inspect(self) -> Dict[str, Any]: ...
    @property
    def copied_inputs(self) -> int: ...
    @property
    def dynamic(self) -> bool: ...

def backends(dynamic_backends_path: Optional[_PathLike] = ...) -> Dict[str, Any]: ...
def supported_operators() -> List[str]: ...
