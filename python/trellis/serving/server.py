"""``python3 -m trellis.serving`` / ``trellis-serve``: a model repository behind KServe's model server.

Every subdirectory of ``--model-dir`` is one model (``trellis.serving.config``); all are loaded
into Trellis sessions before the server listens, and a model that cannot be loaded stops the
server with the error naming it. The server answers KServe's Open Inference Protocol (v2) over
HTTP (``--http-port``) and gRPC (``--grpc-port``). See docs/serving.md.
"""

import argparse
import json
import logging
import os
import sys
import warnings
from typing import List, Optional, Sequence

from trellis.serving.config import ServingConfigError, discover_models, parse_backend_options

__all__ = ["main", "build_parser", "BodySizeLimit"]

log = logging.getLogger("trellis.serving")

DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="trellis-serve",
        description="Serve the ONNX models of a model repository on Trellis over KServe's Open Inference "
                    "Protocol (v2: HTTP and gRPC). One model per subdirectory: DIR/<name>/model.onnx or "
                    "DIR/<name>/<version>/model.onnx (the highest version), with an optional DIR/<name>/config.json "
                    "(backends, backend_options, shapes, max_batch_size, max_latency_ms) that overrides the flags.",
        allow_abbrev=False)
    p.add_argument("--model-dir", required=True, help="the model repository")
    p.add_argument("--backends", default=None,
                   help="Trellis backends in preference order, comma-separated (default: Trellis's default, "
                        "CpuAcc,CpuRef where CpuAcc is built)")
    p.add_argument("--backend-option", action="append", default=[], metavar="BACKEND:NAME=VALUE",
                   help="a backend option for every model, e.g. CpuAcc:NumThreads=2 (repeatable)")
    p.add_argument("--http-port", type=int, default=8080, help="HTTP port (default 8080)")
    p.add_argument("--grpc-port", type=int, default=8081, help="gRPC port (default 8081)")
    p.add_argument("--no-grpc", action="store_true", help="serve HTTP only")
    p.add_argument("--max-batch-size", type=int, default=1,
                   help="server-side batching: the most rows (sum of the first dims) one run takes; "
                        "1 (default) turns batching off")
    p.add_argument("--max-latency-ms", type=float, default=5.0,
                   help="server-side batching: the longest a request waits for others to join its batch "
                        "(default 5 ms)")
    p.add_argument("--max-body-bytes", type=int, default=DEFAULT_MAX_BODY_BYTES,
                   help=f"largest request accepted: HTTP body (413 above it) and gRPC message "
                        f"(RESOURCE_EXHAUSTED) (default {DEFAULT_MAX_BODY_BYTES})")
    p.add_argument("--workers", type=int, default=None,
                   help="threads running the models (default: the number of CPUs + 4, at most 32)")
    p.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"],
                   help="log level (default INFO)")
    return p


class BodySizeLimit:
    """ASGI middleware answering 413 (with the protocol's ``{"error": ...}`` body) to an HTTP request
    whose body is larger than ``max_body_bytes``, before the body is decoded. A body without a
    Content-Length (chunked) is read up to the limit first."""

    def __init__(self, app, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def _reject(self, send, status: int, message: str) -> None:
        body = json.dumps({"error": message}).encode()
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                                (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = dict(scope["headers"]).get(b"content-length")
        limit = self.max_body_bytes
        if length is not None:
            try:
                size = int(length)
            except ValueError:
                await self._reject(send, 400, f"Content-Length {length.decode(errors='replace')!r} is not a number")
                return
            if size > limit:
                await self._reject(send, 413, f"request body of {size} bytes is larger than the server's limit of "
                                              f"{limit} bytes (--max-body-bytes)")
                return
            await self.app(scope, receive, send)
            return
        chunks, total = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            chunk = message.get("body", b"")
            total += len(chunk)
            if total > limit:
                await self._reject(send, 413, f"request body larger than the server's limit of {limit} bytes "
                                              "(--max-body-bytes)")
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        replayed = False

        async def replay():
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


async def _request_validation_error(request, exc):
    from fastapi.responses import JSONResponse

    problems = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error.get("loc", ()) if p != "body")
        problems.append(f"{error.get('msg', 'invalid')}" + (f" at {where}" if where else ""))
    return JSONResponse(status_code=400, content={
        "error": f"{request.method} {request.url.path}: the request body is not a valid inference request: "
                 + "; ".join(dict.fromkeys(problems))})


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=args.log_level, format="%(asctime)s %(name)s %(levelname)s: %(message)s")
    log.setLevel(args.log_level)
    for flag, value, low, high in (("--http-port", args.http_port, 1, 65535), ("--grpc-port", args.grpc_port, 1, 65535),
                                   ("--max-body-bytes", args.max_body_bytes, 1, None),
                                   ("--workers", 1 if args.workers is None else args.workers, 1, None)):
        if value < low or (high is not None and value > high):
            bounds = f"in [{low}, {high}]" if high is not None else f">= {low}"
            print(f"trellis-serve: {flag} must be {bounds}, got {value}", file=sys.stderr)
            return 2
    try:
        backends: Optional[List[str]] = [b for b in args.backends.split(",") if b] if args.backends else None
        configs = discover_models(os.path.abspath(args.model_dir), backends=backends,
                                  backend_options=parse_backend_options(args.backend_option),
                                  max_batch_size=args.max_batch_size, max_latency_ms=args.max_latency_ms)
    except ServingConfigError as e:
        print(f"trellis-serve: {e}", file=sys.stderr)
        return 2

    # KServe 0.21 answers with FastAPI's ORJSONResponse, which FastAPI deprecates: nothing a user can act on.
    warnings.filterwarnings("ignore", message="ORJSONResponse is deprecated")
    # KServe's model_server parses sys.argv when it is imported (its own flags): hide ours from it.
    saved_argv, sys.argv = sys.argv, sys.argv[:1]
    try:
        import kserve
        from kserve import model_server as kserve_model_server
    finally:
        sys.argv = saved_argv
    from fastapi.exceptions import RequestValidationError

    import trellis
    from trellis.serving.model import TrellisModel
    from trellis.serving.rest import add_infer_route

    models = []
    for config in configs:
        model = TrellisModel(config)
        try:
            model.load()
        except trellis.Error as e:
            print(f"trellis-serve: model '{config.name}' ({config.path}) could not be loaded: {e}", file=sys.stderr)
            return 1
        log.info("model '%s': %s on %s; %s", config.name, config.path, ",".join(model.session.get_providers()),
                 model.batching_note)
        models.append(model)

    kserve_model_server.args.grpc_max_receive_message_length = args.max_body_bytes
    app = kserve_model_server.app
    app.add_middleware(BodySizeLimit, max_body_bytes=args.max_body_bytes)
    # On KServe's routes (v1, the versioned ones), a body FastAPI cannot decode is the protocol's
    # 400 with an "error" message, not FastAPI's 422 with "detail".
    app.add_exception_handler(RequestValidationError, _request_validation_error)
    server = kserve.ModelServer(http_port=args.http_port, grpc_port=args.grpc_port, enable_grpc=not args.no_grpc,
                                max_asyncio_workers=args.workers, enable_latency_logging=False)
    # The v2 HTTP infer route that keeps binary tensors as bytes (trellis/serving/rest.py); it is
    # registered before ModelServer.start adds KServe's routes, so it answers first.
    add_infer_route(app, server.dataplane)
    if args.log_level != "DEBUG":
        # A line per request (KServe's timings, uvicorn's access log) only with --log-level DEBUG.
        logging.getLogger("kserve.trace").setLevel(logging.WARNING)
        logging.getLogger("uvicorn.access").setLevel(logging.WARNING)
    log.info("serving %d model(s) on HTTP port %d%s", len(models), args.http_port,
             "" if args.no_grpc else f" and gRPC port {args.grpc_port}")
    server.start(models)
    return 0
