"""``TrellisModel``: one ONNX model on a Trellis session behind KServe's Open Inference Protocol (v2).

KServe's model server calls ``load`` once, then ``predict`` for every v2 ``infer`` request over
HTTP or gRPC; ``get_input_types``/``get_output_types`` answer the model-metadata endpoint.
Requests are checked against the model's inputs before they run, and every client mistake is a
``kserve.errors.InvalidInput`` (HTTP 400, gRPC INVALID_ARGUMENT) whose message names the model,
the input and the rule broken; a failure of the engine itself is a ``kserve.errors.InferenceError``
(HTTP 500).
"""

import asyncio
from typing import Any, Dict, List, Optional, Union

import numpy as np
from kserve import Model
from kserve.errors import InferenceError, InvalidInput
from kserve.protocol.grpc.grpc_predict_v2_pb2 import ModelInferRequest
from kserve.protocol.infer_type import InferOutput, InferRequest, InferResponse

import trellis
from trellis.serving.batcher import Batcher
from trellis.serving.config import ModelConfig

__all__ = ["TrellisModel", "V2_DATATYPES"]

# numpy dtype -> the Open Inference Protocol's datatype. (bfloat16 is exchanged as float32, as
# trellis.InferenceSession does; BYTES, strings, has no ONNX tensor Trellis runs.)
V2_DATATYPES = {
    np.dtype(np.bool_): "BOOL",
    np.dtype(np.uint8): "UINT8", np.dtype(np.uint16): "UINT16", np.dtype(np.uint32): "UINT32",
    np.dtype(np.uint64): "UINT64",
    np.dtype(np.int8): "INT8", np.dtype(np.int16): "INT16", np.dtype(np.int32): "INT32", np.dtype(np.int64): "INT64",
    np.dtype(np.float16): "FP16", np.dtype(np.float32): "FP32", np.dtype(np.float64): "FP64",
}


def _v2_shape(shape: List[Union[int, str, None]]) -> List[int]:
    """A NodeArg shape in the protocol's spelling: -1 for a dim decided per request."""
    return [d if isinstance(d, int) else -1 for d in shape]


class TrellisModel(Model):
    """One ONNX model on a ``trellis.InferenceSession``, served over KServe's v2 protocol.

    Args:
        config: where the model is and how to load it (``trellis.serving.config.ModelConfig``).

    Batching (``config.max_batch_size`` > 1) applies when every input and output has a first dim
    decided per request (a symbolic batch dim); otherwise requests run one by one and the log says
    why.
    """

    def __init__(self, config: ModelConfig) -> None:
        super().__init__(config.name)
        self.config = config
        self.session: Optional[trellis.InferenceSession] = None
        self.batcher: Optional[Batcher] = None
        self.batching_note = "batching off (max_batch_size 1)"
        self._inputs: Dict[str, trellis.NodeArg] = {}
        self._outputs: Dict[str, trellis.NodeArg] = {}

    # --- loading and metadata ------------------------------------------------------------------
    def load(self) -> bool:
        """Loads the model into a Trellis session. Raises the trellis error (naming the file, node
        or backend) when it cannot be loaded; the server then does not start."""
        cfg = self.config
        self.session = trellis.InferenceSession(cfg.path, backends=cfg.backends, backend_options=cfg.backend_options,
                                                shapes=cfg.shapes or None)
        self._inputs = {a.name: a for a in self.session.get_inputs()}
        self._outputs = {a.name: a for a in self.session.get_outputs()}
        for arg in list(self._inputs.values()) + list(self._outputs.values()):
            if arg.dtype not in V2_DATATYPES:
                raise trellis.InvalidModelError(
                    f"model '{self.name}' ({cfg.path}): '{arg.name}' is of type {arg.type}, which the inference "
                    "protocol cannot carry")
        if cfg.max_batch_size > 1:
            unbatched = [a for a in list(self._inputs.values()) + list(self._outputs.values())
                         if not a.shape or isinstance(a.shape[0], int)]
            if unbatched:
                a = unbatched[0]
                self.batching_note = (f"batching off: '{a.name}' has shape {_v2_shape(a.shape)}, not a first dim "
                                      "decided per request")
            else:
                self.batcher = Batcher(self.name, self._run, cfg.max_batch_size, cfg.max_latency_ms)
                self.batching_note = (f"batching up to {cfg.max_batch_size} rows, waiting at most "
                                      f"{cfg.max_latency_ms:g} ms")
        self.ready = True
        return self.ready

    def get_input_types(self) -> List[Dict[str, Any]]:
        return [{"name": a.name, "datatype": V2_DATATYPES[a.dtype], "shape": _v2_shape(a.shape)}
                for a in self._inputs.values()]

    def get_output_types(self) -> List[Dict[str, Any]]:
        return [{"name": a.name, "datatype": V2_DATATYPES[a.dtype], "shape": _v2_shape(a.shape)}
                for a in self._outputs.values()]

    # --- inference -----------------------------------------------------------------------------
    def _run(self, feed: Dict[str, np.ndarray]) -> List[np.ndarray]:
        return self.session.run(None, feed)

    def _decode(self, request: InferRequest) -> Dict[str, np.ndarray]:
        """The request's inputs as arrays, each checked against the model's input."""
        model = f"model '{self.name}'"
        feed: Dict[str, np.ndarray] = {}
        for inp in request.inputs:
            arg = self._inputs.get(inp.name)
            if arg is None:
                raise InvalidInput(f"{model}: unknown input '{inp.name}'; its inputs are "
                                   f"{', '.join(repr(n) for n in self._inputs)}")
            if inp.name in feed:
                raise InvalidInput(f"{model}: input '{inp.name}' is given more than once")
            expected_type = V2_DATATYPES[arg.dtype]
            if inp.datatype != expected_type:
                raise InvalidInput(f"{model}: input '{inp.name}' has datatype {inp.datatype}; the model needs "
                                   f"{expected_type}")
            shape = list(inp.shape)
            if any(not isinstance(d, (int, np.integer)) or d < 0 for d in shape):
                raise InvalidInput(f"{model}: input '{inp.name}' has shape {shape}; dims must be integers >= 0")
            needed = _v2_shape(arg.shape)
            if len(shape) != len(needed) or any(n != -1 and n != d for n, d in zip(needed, shape)):
                raise InvalidInput(f"{model}: input '{inp.name}' has shape {shape}; the model needs {needed} "
                                   "(-1: any size)")
            try:
                array = inp.as_numpy()
            except InvalidInput as e:
                raise InvalidInput(f"{model}: input '{inp.name}': {e}") from None
            except (ValueError, TypeError, OverflowError) as e:
                raise InvalidInput(f"{model}: input '{inp.name}': its data does not fit datatype {inp.datatype} and "
                                   f"shape {shape} ({e})") from None
            if array.dtype != arg.dtype or list(array.shape) != shape:
                raise InvalidInput(f"{model}: input '{inp.name}': its data does not fit datatype {inp.datatype} and "
                                   f"shape {shape}")
            if not array.flags.aligned:
                array = array.copy()
            feed[inp.name] = array
        missing = [n for n in self._inputs if n not in feed]
        if missing:
            raise InvalidInput(f"{model}: input '{missing[0]}' is missing; the model needs "
                               f"{', '.join(repr(n) for n in self._inputs)}")
        return feed

    async def predict(self, payload: Union[InferRequest, ModelInferRequest, Dict], headers: Optional[Dict[str, str]] = None,
                      response_headers: Optional[Dict[str, str]] = None) -> InferResponse:
        if isinstance(payload, ModelInferRequest):
            payload = InferRequest.from_grpc(payload)
        if not isinstance(payload, InferRequest):
            raise InvalidInput(f"model '{self.name}': only the v2 protocol (/v2/models/{self.name}/infer or gRPC) "
                               "is served; the v1 protocol is not")
        feed = self._decode(payload)
        requested = [o.name for o in payload.request_outputs or []]
        for name in requested:
            if name not in self._outputs:
                raise InvalidInput(f"model '{self.name}': unknown output '{name}' requested; its outputs are "
                                   f"{', '.join(repr(n) for n in self._outputs)}")
        rows = {a.shape[0] for a in feed.values() if a.ndim > 0}
        try:
            if self.batcher is not None and len(rows) == 1 and all(a.ndim > 0 for a in feed.values()):
                outputs = await self.batcher.submit(feed)
            else:
                outputs = await asyncio.get_running_loop().run_in_executor(None, self._run, feed)
        except (trellis.InvalidInputError, trellis.InvalidArgumentError, trellis.ResourceLimitError) as e:
            raise InvalidInput(f"model '{self.name}': {e}") from None
        except trellis.InvalidModelError as e:
            # A run whose input values make a layer invalid (e.g. a Reshape the values cannot take).
            raise InvalidInput(f"model '{self.name}': the inputs cannot run through the model: {e}") from None
        except trellis.Error as e:
            raise InferenceError(f"model '{self.name}': the run failed: {e}") from None
        names = list(self._outputs)
        by_name = dict(zip(names, outputs))
        infer_outputs = []
        for name in requested or names:
            array = by_name[name]
            output = InferOutput(name=name, shape=list(array.shape), datatype=V2_DATATYPES[array.dtype])
            if payload.from_grpc:
                # KServe's gRPC encoder takes raw bytes (or lists), not arrays.
                output.set_data_from_numpy(array, binary_data=True)
            else:
                output.data = array  # encoded as JSON or binary as the request asks (to_rest)
            infer_outputs.append(output)
        return InferResponse(response_id=payload.id if payload.id is not None else "", model_name=self.name, infer_outputs=infer_outputs,
                             use_binary_outputs=payload.use_binary_outputs,
                             requested_outputs=payload.request_outputs or None)
