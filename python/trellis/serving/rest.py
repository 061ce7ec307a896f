"""The v2 HTTP ``infer`` route of ``trellis.serving``, in place of KServe 0.21's.

KServe's own route decodes a tensor sent as binary data (the protocol's binary extension, which
``tritonclient`` uses by default) into a Python list before the model sees it
(``InferRequest.from_bytes`` calls ``set_data_from_numpy(..., binary_data=False)``), and the
model turns the list back into an array: for a 1x3x224x224 float32 input that cost about 36 ms
of CPU per request, several times the network's run (docs/performance.md, "Serving"). This route
decodes the same request format but keeps binary tensors as bytes (read in place with
``numpy.frombuffer``), then answers through KServe's DataPlane exactly as KServe's route does
(the model's ``predict``, the response's JSON or binary encoding, the error handlers). It is
registered on KServe's FastAPI app before KServe registers its routes, so it takes precedence;
every other endpoint is KServe's. CloudEvents bodies are not decoded on this route.
"""

from typing import Any, Dict, List

import orjson
from fastapi import FastAPI, Request, Response
from kserve.errors import InvalidInput, ModelNotReady
from kserve.protocol.dataplane import DataPlane
from kserve.protocol.infer_type import InferInput, InferRequest, RequestedOutput

__all__ = ["INFER_PATH", "decode_infer_request", "add_infer_route"]

INFER_PATH = "/v2/models/{model_name}/infer"
_HEADER_LENGTH = "inference-header-content-length"


def _field(obj: Dict[str, Any], key: str, kind, where: str):
    value = obj.get(key)
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise InvalidInput(f"{where}: '{key}' must be {getattr(kind, '__name__', kind)}, got {value!r}"[:300])
    return value


def decode_infer_request(body: bytes, json_length: int, model_name: str) -> InferRequest:
    """An inference request: a JSON object, followed by the binary tensors its inputs'
    ``binary_data_size`` parameters announce (``json_length``: the JSON's length)."""
    try:
        header = orjson.loads(body[:json_length])
    except orjson.JSONDecodeError as e:
        raise InvalidInput(f"model '{model_name}': the request body is not valid JSON: {e}") from None
    if not isinstance(header, dict):
        raise InvalidInput(f"model '{model_name}': the request must be a JSON object with a list of \"inputs\"")
    where = f"model '{model_name}': the request"
    items = _field(header, "inputs", list, where)
    inputs: List[InferInput] = []
    offset = json_length
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise InvalidInput(f"{where}: inputs[{index}] must be a JSON object, got {item!r}"[:300])
        name = _field(item, "name", str, f"{where}: inputs[{index}]")
        at = f"model '{model_name}': input '{name}'"
        datatype = _field(item, "datatype", str, at)
        shape = _field(item, "shape", list, at)
        if not all(isinstance(d, int) and not isinstance(d, bool) for d in shape):
            raise InvalidInput(f"{at}: 'shape' must be a list of integers, got {shape!r}"[:300])
        parameters = item.get("parameters") or {}
        if not isinstance(parameters, dict):
            raise InvalidInput(f"{at}: 'parameters' must be a JSON object, got {parameters!r}"[:300])
        infer_input = InferInput(name=name, shape=shape, datatype=datatype, parameters=parameters or None)
        if "data" in item:
            if datatype == "FP16":
                raise InvalidInput(f"{at}: FP16 data cannot be sent as JSON; send it as binary data")
            infer_input.data = item["data"]
        elif "binary_data_size" in parameters:
            size = parameters["binary_data_size"]
            if not isinstance(size, int) or isinstance(size, bool) or size < 0 or offset + size > len(body):
                raise InvalidInput(f"{at}: binary_data_size {size!r} does not fit the {len(body) - offset} bytes "
                                   "of binary data left in the body")
            infer_input._raw_data = body[offset:offset + size]  # read in place by as_numpy (numpy.frombuffer)
            offset += size
        else:
            raise InvalidInput(f"{at}: neither 'data' nor a 'binary_data_size' parameter")
        inputs.append(infer_input)
    if offset != len(body):
        raise InvalidInput(f"{where}: {len(body) - offset} bytes after the JSON are not claimed by any input's "
                           "binary_data_size")
    outputs = header.get("outputs")
    requested = None
    if outputs is not None:
        if not isinstance(outputs, list) or not all(isinstance(o, dict) and isinstance(o.get("name"), str)
                                                    for o in outputs):
            raise InvalidInput(f"{where}: 'outputs' must be a list of objects with a 'name', got {outputs!r}"[:300])
        requested = [RequestedOutput(name=o["name"], parameters=o.get("parameters")) for o in outputs]
    parameters = header.get("parameters")
    if parameters is not None and not isinstance(parameters, dict):
        raise InvalidInput(f"{where}: 'parameters' must be a JSON object, got {parameters!r}"[:300])
    request_id = header.get("id")
    return InferRequest(model_name=model_name, request_id=None if request_id is None else str(request_id),
                        parameters=parameters, infer_inputs=inputs, request_outputs=requested)


def add_infer_route(app: FastAPI, dataplane: DataPlane) -> None:
    """Registers ``POST /v2/models/{model_name}/infer`` on ``app``; call before KServe's
    ``ModelServer.start`` registers its own routes."""

    async def infer(request: Request, model_name: str) -> Response:
        if not await dataplane.model_ready(model_name, True):  # ModelNotFound (404) for an unknown model
            raise ModelNotReady(model_name)
        body = await request.body()
        header_length = request.headers.get(_HEADER_LENGTH)
        if header_length is None:
            json_length = len(body)
        else:
            try:
                json_length = int(header_length)
            except ValueError:
                raise InvalidInput(f"Inference-Header-Content-Length {header_length!r} is not a number") from None
            if not 0 <= json_length <= len(body):
                raise InvalidInput(f"Inference-Header-Content-Length {json_length} does not fit a body of "
                                   f"{len(body)} bytes")
        infer_request = decode_infer_request(body, json_length, model_name)
        headers = dict(request.headers)
        response, response_headers = await dataplane.infer(model_name=model_name, request=infer_request,
                                                           headers=headers)
        response, encode_headers = dataplane.encode(model_name=model_name, response=response, headers=headers,
                                                    req_attributes={})
        response_headers.update(encode_headers)
        response_headers.pop("content-length", None)
        response_headers.pop("content-type", None)
        if isinstance(response, bytes):
            return Response(content=response, headers=response_headers, media_type="application/octet-stream")
        return Response(content=orjson.dumps(response, option=orjson.OPT_SERIALIZE_NUMPY), headers=response_headers,
                        media_type="application/json")

    app.add_api_route(INFER_PATH, infer, methods=["POST"], include_in_schema=False)
