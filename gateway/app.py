"""The gateway's routes on FastAPI: each reads its dialect's body, completes, and answers in kind.

`build_app(state)` makes the app over a `GatewayState` (the completer, the pool, the rules, the
limits, the counters). Every request passes `gateway.guard` first (host, browser origin, bearer
key, JSON content type), is counted (`/metrics`) and answered exactly once: its answer, or an
OpenAI error object (`gateway.errors`). A body over `max_body_bytes`, or one that takes over
`BODY_TIMEOUT_S` to arrive, is refused before it is read whole. A client that goes away cancels its
request at the worker, and counts in `client_gone_total`: a stream's when Starlette cancels the
stream, an unstreamed one's when its connection closes while the worker decodes
(`answer_unless_gone`). Streams are counted when admitted, so that a burst cannot open more than
`max_streams`; a stream that fails after it started ends with an error event. A request's
deadline is capped at `max_deadline_ms`.
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.exceptions import HTTPException
from starlette.middleware.cors import CORSMiddleware

from engine.client.calls import WorkerError, WorkerTimeout
from engine.client.pool import AsyncWorkerPool
from engine.wire.protocol import MAX_DEADLINE_MS, MAX_TOKENS
from gateway import shapes
from gateway.bodies import Ask, infill_ask, openai_ask
from gateway.completer import Completer
from gateway.errors import ApiError, error_response, worker_failure
from gateway.guard import Guard, Rules
from gateway.metrics import Metrics
from gateway.tasks import started

logger = logging.getLogger(__name__)

DEFAULT_MAX_BODY_BYTES = 256 * 1024  # ten times what the worker takes (24,000 + 12,000 characters
#   of prefix and suffix, 16 snippets): clients that send whole files still fit
DEFAULT_MAX_STREAMS = 64
BODY_TIMEOUT_S = 10.0  # a body that takes longer to arrive is refused (a slow client holds a task)
MAX_JSON_DEPTH = 32  # no dialect nests deeper than 4; deeper is refused before it is parsed
T = TypeVar("T")
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


@dataclass(slots=True)
class GatewayState:
    completer: Completer
    pool: AsyncWorkerPool
    model_id: str
    rules: Rules
    aliases: tuple[str, ...] = ()  # other model names a request may give (the worker's own)
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    max_deadline_ms: int = MAX_DEADLINE_MS
    max_tokens: int = MAX_TOKENS
    max_streams: int = DEFAULT_MAX_STREAMS
    metrics: Metrics = field(default_factory=Metrics)
    edits: Callable | None = None  # the next-edit endpoint's handler (`gateway.edits`)


async def read_json(request: Request, max_bytes: int) -> dict:
    """The request's JSON object, read up to `max_bytes` within BODY_TIMEOUT_S; ApiError 413,
    408, 400 or 422 otherwise."""
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > max_bytes:
        raise _too_large(max_bytes)
    try:
        async with asyncio.timeout(BODY_TIMEOUT_S):
            body = await _body(request, max_bytes)
    except TimeoutError:
        raise ApiError(408, f"the body did not arrive within {BODY_TIMEOUT_S:.0f} s", None,
                       "body_timeout") from None
    return parse_json(bytes(body))


async def _body(request: Request, max_bytes: int) -> bytearray:
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > max_bytes:
            raise _too_large(max_bytes)
    return body


def parse_json(body: bytes) -> dict:
    """The JSON object in `body`; ApiError 400 for text that is not JSON, nests deeper than
    MAX_JSON_DEPTH or holds a lone surrogate (which no UTF-8 text can carry on), 422 for a
    value that is not an object."""
    if json_depth(body) > MAX_JSON_DEPTH:
        raise ApiError(400, f"the body nests deeper than {MAX_JSON_DEPTH} levels", None,
                       "malformed_json")
    try:
        value = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ApiError(400, f"the body is not valid JSON: {str(exc)[:200]}", None,
                       "malformed_json") from None
    if not isinstance(value, dict):
        raise ApiError(422, f"the body must be a JSON object, got {type(value).__name__}", None,
                       "invalid_type")
    if has_lone_surrogate(value):
        raise ApiError(400, "the body holds a lone UTF-16 surrogate (an unpaired \\ud800-\\udfff "
                            "escape); send valid Unicode text", None, "malformed_json")
    return value


def json_depth(body: bytes) -> int:
    """The deepest nesting of brackets in `body` outside strings, counted up to one past
    MAX_JSON_DEPTH (escapes are dropped first, so an escaped quote never ends a string)."""
    unescaped = body.replace(b"\\\\", b"").replace(b'\\"', b"")
    brackets = b"".join(unescaped.split(b'"')[::2]).translate(None, _NOT_BRACKETS)
    depth = deepest = 0
    for byte in brackets:
        depth += 1 if byte in b"[{" else -1
        deepest = max(deepest, depth)
        if deepest > MAX_JSON_DEPTH:
            break
    return deepest


def has_lone_surrogate(value: Any) -> bool:
    """Whether any string in the parsed JSON `value` (keys too) holds a lone surrogate."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(item, dict):
            stack += [*item.keys(), *item.values()]
        elif isinstance(item, list):
            stack += item
    return False


def _too_large(max_bytes: int) -> ApiError:
    return ApiError(413, f"the body is over this server's limit of {max_bytes} bytes; send less "
                         "context", None, "body_too_large")


ROUTES = ("/v1/completions", "/beta/completions", "/completions", "/v1/fim/completions", "/infill",
          "/v1/edit/completions", "/health", "/v1/models", "/metrics")


def build_app(state: GatewayState) -> FastAPI:
    app = FastAPI(title="infill gateway", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.gateway = state
    app.add_middleware(Guard, rules=state.rules, metrics=state.metrics, routes=ROUTES)
    if state.rules.origins:  # outermost: answers the allowed origins' preflights, adds their headers
        app.add_middleware(CORSMiddleware, allow_origins=sorted(state.rules.origins),
                           allow_methods=["GET", "POST"],
                           allow_headers=["authorization", "content-type"], max_age=600)
    app.exception_handler(ApiError)(lambda request, exc: error_response(exc))
    app.exception_handler(HTTPException)(_http_error)
    app.exception_handler(ClientGone)(_client_gone)
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


def _checked(state: GatewayState, ask: Ask) -> Ask:
    """`ask` for a model served here, its deadline capped at the gateway's limit."""
    if ask.model is not None and ask.model not in (state.model_id, *state.aliases):
        raise ApiError(404, f"the model {ask.model!r} does not exist here; use {state.model_id!r} "
                            "(GET /v1/models)", "model", "model_not_found")
    if ask.deadline_ms is not None:
        ask.deadline_ms = min(ask.deadline_ms, state.max_deadline_ms)
    return ask


class ClientGone(Exception):
    """The client closed its connection before its answer was ready."""


async def answer_unless_gone(request: Request, work: Awaitable[T]) -> T:
    """`work`'s value, or ClientGone once the client disconnects first: `work` is cancelled
    then, which cancels its request at the worker (`engine.client.async_client`)."""
    task, gone = started(work), started(_disconnected(request))
    try:
        await asyncio.wait((task, gone), return_when=asyncio.FIRST_COMPLETED)
    finally:
        gone.cancel()
        if not task.done():
            task.cancel()
    if task.cancelled() or not task.done():
        _state(request).metrics.client_gone += 1
        raise ClientGone()
    return task.result()


async def _disconnected(request: Request) -> None:
    """Returns when the client disconnects (the body has been read: only that message is left)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


async def _client_gone(request: Request, exc: ClientGone) -> Response:
    return Response(status_code=499)  # nginx's "client closed request": nobody reads it


async def _choices(request: Request, state: GatewayState, ask: Ask) -> list:
    try:
        return await answer_unless_gone(request, state.completer.complete(ask))
    except (WorkerError, WorkerTimeout) as exc:
        raise worker_failure(exc) from None


async def completions(request: Request) -> Response:
    return await _openai(request, fim=False)


async def fim_completions(request: Request) -> Response:
    return await _openai(request, fim=True)


async def _openai(request: Request, fim: bool) -> Response:
    state = _state(request)
    ask = _checked(state, openai_ask(await read_json(request, state.max_body_bytes), state.max_tokens))
    rid = f"cmpl-{uuid.uuid4().hex}"
    if ask.stream:
        return _stream(state, _openai_events(state, ask, rid, fim))
    choices = await _choices(request, state, ask)
    state.metrics.completion_chars += sum(len(c.text) for c in choices)
    return JSONResponse(shapes.completion_json(rid, state.model_id, choices, ask.prefix + ask.suffix, fim))


def _stream(state: GatewayState, events: AsyncIterator[bytes]) -> StreamingResponse:
    if state.metrics.live_streams >= state.max_streams:
        raise ApiError(429, f"this server already holds {state.max_streams} streams, its limit; "
                            "retry shortly", None, "too_many_streams")
    return AdmittedStream(state.metrics, events)


class AdmittedStream(StreamingResponse):
    """An event stream counted live from its admission to the end of its answer, so that the
    streams admitted before any has started are counted too; one that ends before its last event
    was sent (its client left, and Starlette cancelled it) counts in `client_gone`."""

    def __init__(self, metrics: Metrics, events: AsyncIterator[bytes]) -> None:
        self.events_sent = False  # every event, the last included, went out
        super().__init__(self._every(events), media_type="text/event-stream",
                         headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
        self.metrics = metrics
        metrics.stream_opened()

    async def _every(self, events: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
        async with contextlib.aclosing(events):  # a stream left at an event is closed with this one
            async for event in events:
                yield event
        self.events_sent = True

    async def __call__(self, scope, receive, send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.metrics.live_streams -= 1
            if not self.events_sent:
                self.metrics.client_gone += 1


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
    ask = _checked(state, infill_ask(await read_json(request, state.max_body_bytes), state.max_tokens))
    if ask.stream:
        return _stream(state, _infill_events(state, ask))
    started = time.monotonic()
    [choice] = await _choices(request, state, ask)
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
    return JSONResponse(await answer_unless_gone(request, state.edits(state, body)))


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
