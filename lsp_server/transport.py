"""The language server's connections: stdio, or loopback TCP for one authenticated editor.

pygls handles the messages; this module reads them (`lsp_server.framing`, which survives any
input) and hands each to pygls's protocol, answering itself what pygls would drop: `-32700` to a
body that is not JSON, `-32600` to one that is not a JSON-RPC message (and to requests after
`shutdown`), `-32602` (with the request's id) to a request whose params do not parse. Reading
never stops while the input is open, until the client's `exit` ends the connection (the caller
then stops the worker and leaves; pygls's own `exit` would raise SystemExit inside the loop).

Over TCP the server serves one editor, the one that knows the launch token (`lsp_server.launch_token`):
input that does not start as an LSP header (an HTTP request from a web page, for one) closes its
connection at once; the first message must be `initialize` carrying the token in
`initializationOptions.token`, within `AUTH_TIMEOUT_S`, or the connection closes before anything
of it is handled. At most `MAX_UNAUTHENTICATED` connections wait to authenticate: a new one closes
the oldest waiting, so connections that never authenticate cannot keep the editor out. Once the
editor has authenticated, every other connection is closed at once. Each connection closed unheard
is logged, a few lines a second at most (`engine.wire.ratelimit`). The server ends with the editor's
connection, as pygls's own TCP server does.
"""
from __future__ import annotations

import asyncio
import hmac
import logging
import os
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import Any

from cattrs import transform_error
from cattrs.errors import BaseValidationError
from pygls.lsp.server import LanguageServer

from engine.wire.ratelimit import RateLimitedLog
from lsp_server.framing import FrameReader, NotLsp, ReadChunk, Unparseable, encode

logger = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
AUTH_TIMEOUT_S = 2.0  # a connection that has not sent an authentic `initialize` by then is closed
MAX_UNAUTHENTICATED = 16  # connections waiting to authenticate at once; a new one closes the oldest
MAX_UNAUTHENTICATED_BODY_BYTES = 1024 * 1024  # an `initialize` is a few kilobytes
TOKEN_OPTION = "token"  # the key of `initializationOptions` that carries the launch token
_CHUNK_BYTES = 64 * 1024


def request_id_of(value: dict[str, Any]) -> int | str | None:
    """The id of a JSON-RPC request, or None when it has none that can be answered."""
    msg_id = value.get("id")
    return msg_id if isinstance(msg_id, (int, str)) and not isinstance(msg_id, bool) else None


def error_reply(msg_id: int | str | None, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}


def problem_of(value: Any) -> dict[str, Any] | None:
    """The error reply for a value that is not a JSON-RPC 2.0 message, or None for one that is
    (the params are checked later, by pygls's types)."""
    if isinstance(value, Unparseable):
        return error_reply(None, PARSE_ERROR, f"parse error: {value.reason}")
    if not isinstance(value, dict) or value.get("jsonrpc") != "2.0":
        return error_reply(None, INVALID_REQUEST, "not a JSON-RPC 2.0 message object")
    method = value.get("method")
    if "method" in value and not isinstance(method, str):
        return error_reply(request_id_of(value), INVALID_REQUEST, "'method' must be a string")
    return None


def take_token(value: Any) -> str | None:
    """Remove the launch token from an `initialize` message's options and return it (None when
    the message is something else or carries none): settings never see it."""
    if not isinstance(value, dict) or value.get("method") != "initialize":
        return None
    params = value.get("params")
    options = params.get("initializationOptions") if isinstance(params, dict) else None
    token = options.pop(TOKEN_OPTION, None) if isinstance(options, dict) else None
    return token if isinstance(token, str) else None


def why_invalid(exc: Exception) -> str:
    """What is wrong with a message pygls could not structure, in a line."""
    cause = exc.__cause__
    if isinstance(cause, BaseValidationError):
        return "; ".join(transform_error(cause))[:1000]
    return str(cause or exc)[:1000]


class Dispatcher:
    """Hands messages to `server`'s protocol and writes the error replies pygls would not send.
    `server.shutdown_requested` says whether a `shutdown` request came (requests after it are
    answered as invalid, as LSP asks; pygls would drop them)."""

    def __init__(self, server: LanguageServer, write: Callable[[bytes], Any]) -> None:
        self.server = server
        self._write = write

    def reply(self, message: dict[str, Any]) -> None:
        self._write(encode(message))

    def handle(self, value: Any) -> bool:
        """Handle one message; False for `exit`, after which the connection is to end."""
        if isinstance(value, dict) and value.get("method") == "exit":
            return False
        problem = problem_of(value) or self._after_shutdown(value)
        if problem is not None:
            logger.warning("answered %s: %s", problem["error"]["code"], problem["error"]["message"])
            self.reply(problem)
            return True
        protocol = self.server.protocol
        try:
            message = protocol.structure_message(value)
        except Exception as exc:  # pygls raises its own JSON-RPC errors; any is a bad message
            self._bad_params(value, exc)
            return True
        try:
            protocol.handle_message(message)
        except Exception:  # a handler's own failure is pygls's to answer; this must not stop reading
            logger.exception("failed to handle %s", value.get("method", "a response"))
        return True

    def _after_shutdown(self, value: dict[str, Any]) -> dict[str, Any] | None:
        msg_id = request_id_of(value)
        if getattr(self.server, "shutdown_requested", False) and "method" in value \
                and msg_id is not None:
            return error_reply(msg_id, INVALID_REQUEST, "the server is shutting down")
        return None

    def _bad_params(self, value: dict[str, Any], exc: Exception) -> None:
        method, msg_id, why = value.get("method"), request_id_of(value), why_invalid(exc)
        logger.warning("the params of %s do not parse: %s", method or "a response", why)
        if method is not None and msg_id is not None:
            self.reply(error_reply(msg_id, INVALID_PARAMS, f"invalid params for {method}: {why}"))


async def pump(frames: FrameReader, dispatcher: Dispatcher) -> None:
    """Dispatch every message until the input ends or the client sends `exit`."""
    while True:
        try:
            value = await frames.next()
        except EOFError:
            return
        if not dispatcher.handle(value):
            return


class _StdinChunks:
    """Standard input as a `ReadChunk`: a daemon thread reads, so the process can always exit."""

    def __init__(self, fd: int) -> None:
        self._loop = asyncio.get_running_loop()
        self._chunks: asyncio.Queue[bytes] = asyncio.Queue(maxsize=4)
        threading.Thread(target=self._read, args=(fd,), name="lsp-stdin", daemon=True).start()

    def _read(self, fd: int) -> None:
        while True:
            try:
                chunk = os.read(fd, _CHUNK_BYTES)
            except OSError:
                chunk = b""
            asyncio.run_coroutine_threadsafe(self._chunks.put(chunk), self._loop).result()
            if not chunk:
                return

    def __call__(self) -> Awaitable[bytes]:
        return self._chunks.get()


class _StdoutWriter:
    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, data: bytes) -> None:
        self._stream.write(data)
        self._stream.flush()

    def close(self) -> None:
        self._stream.close()


async def serve_stdio(server: LanguageServer, max_body_bytes: int) -> None:
    """Serve the client on stdin/stdout until stdin ends."""
    writer = _StdoutWriter(sys.stdout.buffer)
    server.protocol.set_writer(writer)
    frames = FrameReader(_StdinChunks(sys.stdin.fileno()), max_body_bytes)
    await pump(frames, Dispatcher(server, writer.write))


def stream_chunks(reader: asyncio.StreamReader) -> ReadChunk:
    return lambda: reader.read(_CHUNK_BYTES)


class TcpListener:
    """Loopback TCP for the one editor that knows `token` (see the module's docstring)."""

    def __init__(self, server: LanguageServer, token: str, max_body_bytes: int,
                 auth_timeout_s: float = AUTH_TIMEOUT_S) -> None:
        self.server = server
        self._token = token
        self._max_body_bytes = max_body_bytes
        self._auth_timeout_s = auth_timeout_s
        self._editor: asyncio.StreamWriter | None = None
        self._waiting: dict[asyncio.StreamWriter, Any] = {}  # not yet authenticated, oldest first
        self.refusals = RateLimitedLog(logger, what="closed connections")
        self.done = asyncio.Event()  # set when the editor's connection ends

    @property
    def num_waiting(self) -> int:
        """Connections waiting to authenticate."""
        return len(self._waiting)

    async def on_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername")
        if self._editor is not None:
            self.refusals.log("closed a connection from %s: the editor's connection is live", peer)
            await _close(writer)
            return
        if len(self._waiting) >= MAX_UNAUTHENTICATED:
            self._close_oldest_waiting(peer)
        frames = FrameReader(stream_chunks(reader), MAX_UNAUTHENTICATED_BODY_BYTES, strict_start=True)
        self._waiting[writer] = peer
        try:
            first, refusal = await self._authenticate(frames)
        finally:
            closed_for_newer = self._waiting.pop(writer, None) is None
        if first is not None and not closed_for_newer:
            await self._serve(frames, first, writer, peer)
            return
        if not closed_for_newer:  # one closed for a newer connection was logged then
            self.refusals.log("closed a connection from %s: %s", peer, refusal)
        await _close(writer)

    def _close_oldest_waiting(self, newer_peer: Any) -> None:
        """Close the connection that has waited longest to authenticate, to make room."""
        oldest = next(iter(self._waiting))
        peer = self._waiting.pop(oldest)
        self.refusals.log("closed a connection from %s: the oldest of %d waiting to authenticate, "
                          "to make room for one from %s", peer, MAX_UNAUTHENTICATED, newer_peer)
        oldest.close()

    async def _authenticate(self, frames: FrameReader) -> tuple[Any, str]:
        """(the first message, "") when it is an `initialize` with the launch token, else (None,
        why the connection is to be closed)."""
        try:
            first = await asyncio.wait_for(frames.next(), self._auth_timeout_s)
        except NotLsp as exc:
            return None, str(exc)
        except TimeoutError:
            return None, f"no initialize within {self._auth_timeout_s:g} s"
        except (EOFError, ConnectionError):
            return None, "it ended before an initialize"
        token = take_token(first)
        if token is None or not hmac.compare_digest(token.encode(), self._token.encode()):
            return None, "its first message is not an initialize with this launch's token"
        if self._editor is not None:
            return None, "the editor's connection is live"
        return first, ""

    async def _serve(self, frames: FrameReader, first: Any, writer: asyncio.StreamWriter,
                     peer: Any) -> None:
        self._editor = writer
        frames.max_body_bytes = self._max_body_bytes
        logger.info("the editor connected from %s", peer)
        self.server.protocol.set_writer(writer)
        dispatcher = Dispatcher(self.server, writer.write)
        try:
            if dispatcher.handle(first):
                await pump(frames, dispatcher)
        except ConnectionError as exc:
            logger.info("the editor's connection failed: %s", exc)
        finally:
            logger.info("the editor's connection ended")
            self.done.set()
            await _close(writer)


async def _close(writer: asyncio.StreamWriter) -> None:
    writer.close()
    try:
        await writer.wait_closed()
    except (ConnectionError, OSError):
        pass


async def serve_tcp(server: LanguageServer, host: str, port: int, token: str,
                    max_body_bytes: int, on_listening: Callable[[int], None] | None = None) -> None:
    """Listen on `host:port` until the editor's connection ends; `on_listening` gets the port."""
    listener = TcpListener(server, token, max_body_bytes)
    tcp = await asyncio.start_server(listener.on_connection, host, port)
    async with tcp:
        if on_listening is not None:
            on_listening(tcp.sockets[0].getsockname()[1])
        await listener.done.wait()
    listener.refusals.flush()
