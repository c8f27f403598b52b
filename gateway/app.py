"""The gateway's routes on FastAPI: each reads its dialect's body, completes, and answers in kind.

`build_app(state)` makes the app over a `GatewayState` (the completer, the pool, the keys, the
limits, the counters). Every request is counted (`/metrics`), checked for a bearer key when the
gateway has keys (all routes but `/health`), and answered exactly once: its answer, or an OpenAI
error object (`gateway.errors`). A body over `max_body_bytes` is refused before it is read whole.
A stream that fails after it started ends with an error event; a client that goes away cancels its
request at the worker (Starlette cancels the stream, which cancels the worker call).
"""
from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.exceptions import HTTPException

from engine.client import WorkerError, WorkerTimeout
from engine.pool import AsyncWorkerPool
from engine.protocol import MAX_TOKENS
from gateway import shapes
from gateway.api_keys import KeyFile, bearer_token
from gateway.bodies import Ask, infill_ask, openai_ask
from gateway.completer import Completer
from gateway.errors import ApiError, error_response, worker_failure
from gateway.metrics import Metrics

logger = logging.getLogger(__name__)

DEFAULT_MAX_BODY_BYTES = 1024 * 1024  # a large file of context twice over
DEFAULT_MAX_STREAMS = 64
OPEN_ROUTES = ("/health",)  # answered without a key, as llama.cpp's server does


@dataclass(slots=True)
class GatewayState:
    completer: Completer
    pool: AsyncWorkerPool
    model_id: str
    aliases: tuple[str, ...] = ()  # other model names a request may give (the worker's own)
    keys: KeyFile | None = None
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    max_tokens: int = MAX_TOKENS
    max_streams: int = DEFAULT_MAX_STREAMS
    metrics: Metrics = field(default_factory=Metrics)
    edits: Callable | None = None  # the next-edit endpoint's handler (`gateway.edits`)


async def read_json(request: Request, max_bytes: int) -> dict:
    """The request's JSON object, read up to `max_bytes`; ApiError 413, 400 or 422 otherwise."""
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > max_bytes:
        raise _too_large(max_bytes)
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > max_bytes:
            raise _too_large(max_bytes)
    try:
        value = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ApiError(400, f"the body is not valid JSON: {exc}", None, "malformed_json") from None
    if not isinstance(value, dict):
        raise ApiError(422, f"the body must be a JSON object, got {type(value).__name__}", None,
                       "invalid_type")
    return value


def _too_large(max_bytes: int) -> ApiError:
    return ApiError(413, f"the body is over this server's limit of {max_bytes} bytes; send less "
                         "context", None, "body_too_large")


ROUTES = ("/v1/completions", "/beta/completions", "/completions", "/v1/fim/completions", "/infill",
          "/v1/edit/completions", "/health", "/v1/models", "/metrics")


def build_app(state: GatewayState) -> FastAPI:
    app = FastAPI(title="infill gateway", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.gateway = state
    app.add_middleware(Guard, state=state)
    app.exception_handler(ApiError)(lambda request, exc: error_response(exc))
    app.exception_handler(HTTPException)(_http_error)
    app.exception_handler(Exception)(_failure)
    for path in ("/v1/completions", "/beta/completions", "/completions"):
        app.post(path)(completions)
    app.post("/v1/fim/completions")(fim_completions)
    app.post("/infill")(infill)
    app.post("/v1/edit/completions")(edit_completions)
    app.get("/health")(health)
    app.get("/v1/models")(models)
    app.get("/metrics")(metrics)
    return app


class Guard:
    """ASGI middleware: the key check, then the counters of the whole answer (a stream's too)."""

    def __init__(self, app, state: GatewayState) -> None:
        self.app, self.state = app, state

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started, path = time.monotonic(), scope["path"]
        route = path if path in ROUTES else "other"
        status = 500

        async def counted_send(message: dict) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            refusal = self._refusal(scope)
            if refusal is not None:
                await error_response(refusal)(scope, receive, counted_send)
                return
            await self.app(scope, receive, counted_send)
        finally:
            self.state.metrics.observe(route, status, time.monotonic() - started)

    def _refusal(self, scope) -> ApiError | None:
        """The 401 for a request without a valid key, when the gateway has keys."""
        if self.state.keys is None or scope["path"] in OPEN_ROUTES:
            return None
        headers = dict(scope["headers"])
        header = headers.get(b"authorization")
        token = bearer_token(header.decode("latin-1") if header is not None else None)
        if token is None:
            return ApiError(401, "a valid API key is required: send `Authorization: Bearer KEY`",
                            None, "missing_api_key")
        if not self.state.keys.allows(token):
            return ApiError(401, "the API key is not valid", None, "invalid_api_key")
        return None


async def _failure(request: Request, exc: Exception) -> JSONResponse:
    logger.exception("%s %s failed", request.method, request.url.path, exc_info=exc)
    return error_response(ApiError(500, f"the server failed on this request: {type(exc).__name__}",
                                   None, "internal"))


async def _http_error(request: Request, exc: HTTPException) -> JSONResponse:
    """Starlette's own errors (no such route, a wrong method) in the OpenAI shape."""
    return error_response(ApiError(exc.status_code, f"{request.method} {request.url.path}: "
                                                    f"{exc.detail}", None, "not_found"))


def _state(request: Request) -> GatewayState:
    return request.app.state.gateway


def _check_model(state: GatewayState, ask: Ask) -> None:
    if ask.model is not None and ask.model not in (state.model_id, *state.aliases):
        raise ApiError(404, f"the model {ask.model!r} does not exist here; use {state.model_id!r} "
                            "(GET /v1/models)", "model", "model_not_found")


async def _choices(state: GatewayState, ask: Ask) -> list:
    try:
        return await state.completer.complete(ask)
    except (WorkerError, WorkerTimeout) as exc:
        raise worker_failure(exc) from None


async def completions(request: Request) -> Response:
    return await _openai(request, fim=False)


async def fim_completions(request: Request) -> Response:
    return await _openai(request, fim=True)


async def _openai(request: Request, fim: bool) -> Response:
    state = _state(request)
    ask = openai_ask(await read_json(request, state.max_body_bytes), state.max_tokens)
    _check_model(state, ask)
    rid = f"cmpl-{uuid.uuid4().hex}"
    if ask.stream:
        return _stream(state, _openai_events(state, ask, rid, fim))
    choices = await _choices(state, ask)
    state.metrics.completion_chars += sum(len(c.text) for c in choices)
    return JSONResponse(shapes.completion_json(rid, state.model_id, choices, ask.prefix + ask.suffix, fim))


def _stream(state: GatewayState, events: AsyncIterator[bytes]) -> StreamingResponse:
    if state.metrics.live_streams >= state.max_streams:
        raise ApiError(429, f"this server already holds {state.max_streams} streams, its limit; "
                            "retry shortly", None, "too_many_streams")
    return StreamingResponse(_counted(state, events), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


async def _counted(state: GatewayState, events: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    state.metrics.live_streams += 1
    try:
        async for chunk in events:
            yield chunk
    finally:
        state.metrics.live_streams -= 1


def _stream_failure(exc: Exception, request_id: str) -> dict:
    if not isinstance(exc, (WorkerError, WorkerTimeout)):
        logger.error("stream %s failed", request_id, exc_info=exc)
        return ApiError(500, "the stream could not be continued; ask again", None, "internal").body()
    logger.warning("stream %s failed: %s", request_id, exc)
    return worker_failure(exc).body()


async def _openai_events(state: GatewayState, ask: Ask, rid: str, fim: bool) -> AsyncIterator[bytes]:
    texts = [""] * ask.n
    try:
        async for delta in state.completer.stream(ask):
            texts[delta.index] += delta.text
            yield shapes.completion_chunk(rid, state.model_id, delta.index, delta.text,
                                          delta.finish_reason, fim, ask.include_usage)
    except Exception as exc:  # the stream has started: it ends with an error event
        yield shapes.error_event(_stream_failure(exc, rid))
        yield shapes.DONE
        return
    state.metrics.completion_chars += sum(map(len, texts))
    if ask.include_usage:
        yield shapes.usage_chunk(rid, state.model_id, ask.prefix + ask.suffix, texts)
    yield shapes.DONE


async def infill(request: Request) -> Response:
    state = _state(request)
    ask = infill_ask(await read_json(request, state.max_body_bytes), state.max_tokens)
    _check_model(state, ask)
    if ask.stream:
        return _stream(state, _infill_events(state, ask))
    started = time.monotonic()
    [choice] = await _choices(state, ask)
    state.metrics.completion_chars += len(choice.text)
    return JSONResponse(shapes.infill_json(state.model_id, choice, ask.prefix + ask.suffix,
                                           (time.monotonic() - started) * 1000.0))


async def _infill_events(state: GatewayState, ask: Ask) -> AsyncIterator[bytes]:
    try:
        async for delta in state.completer.stream(ask):
            state.metrics.completion_chars += len(delta.text)
            if delta.text:
                yield shapes.infill_chunk(delta.text, False)
    except Exception as exc:  # the stream has started: it ends with an error event
        yield shapes.error_event(_stream_failure(exc, "infill"))
        return
    yield shapes.infill_chunk("", True)


async def edit_completions(request: Request) -> Response:
    state = _state(request)
    body = await read_json(request, state.max_body_bytes)
    if state.edits is None:
        raise ApiError(501, "next edits are not served by this gateway", None, "not_implemented")
    return JSONResponse(await state.edits(state, body))


async def health(request: Request) -> JSONResponse:
    """llama.cpp's shape: 200 `{"status": "ok"}` while a worker is up, else 503."""
    state = _state(request)
    up = len(state.pool.healthy())
    if up:
        return JSONResponse({"status": "ok", "workers_up": up})
    return JSONResponse({"error": {"code": 503, "message": "no worker is up", "type": "unavailable_error"}},
                        status_code=503)


async def models(request: Request) -> JSONResponse:
    state = _state(request)
    return JSONResponse({"object": "list", "data": [
        {"id": state.model_id, "object": "model", "created": 0, "owned_by": "infill"}]})


async def metrics(request: Request) -> PlainTextResponse:
    state = _state(request)
    text = state.metrics.render(len(state.pool.addresses), lambda: len(state.pool.healthy()))
    return PlainTextResponse(text, media_type="text/plain; version=0.0.4")
