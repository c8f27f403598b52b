"""`HttpBackend`: an upstream as the completion pipeline's `Backend` (`complete(request) -> Result`).

One call is one HTTP request (`dialects`): the request's deadline (or the setting's, when
shorter) is its timeout; a cancelled task (a superseded keystroke) leaves the `async with`
that holds the response, which closes the connection, so the upstream sees its client go. A
streamed answer is read to its end (the settled text is what is shown). What is read is capped:
`MAX_BODY_BYTES` of body, read raw (identity encoding is asked for, and a compressed answer is
refused rather than inflated), `MAX_LINE_BYTES` of buffered stream line and `MAX_CHARS_PER_TOKEN`
times `max_tokens` of text. The text and the messages lose control characters and lone surrogates
(`dialects.printable`) before they reach an editor or a terminal.

It never raises for the upstream's answers: one that is down, slow, refuses the key, rate-limits,
errs or answers garbage (or anything the reading of its answer raises on, such as JSON nested too
deep) gets an empty `Result`, and the first failure after a success sends ONE
status message (`on_status`); further requests are not sent at all for a backoff that doubles up to
`MAX_BACKOFF_S` (or the upstream's Retry-After), so a failing upstream costs no retry storm.
"""
from __future__ import annotations

import asyncio
import io
import json
import logging
import time
from collections.abc import Callable

import httpx

from engine.wire.protocol import CompleteRequest, Item, Result, Timings
from upstream import budget, dialects
from upstream.config import Upstream
from upstream.dialects import BadAnswer

logger = logging.getLogger(__name__)

MAX_BODY_BYTES = 1 << 20
MAX_LINE_BYTES = 64 << 10  # an event-stream line (one chunk) longer than this is garbage
MAX_CHARS_PER_TOKEN = 16  # an answer longer than this per token asked for is garbage
FIRST_BACKOFF_S = 0.5
MAX_BACKOFF_S = 30.0
STATUS_HINTS = {401: "the key was refused: check apiKeyFile", 403: "the key may not use this model",
                404: "no such endpoint: check the url and the kind", 429: "rate-limited"}


class Failure(Exception):
    """An upstream's fault; `retry_after_s` is its own Retry-After, if any."""

    def __init__(self, message: str, retry_after_s: float = 0.0) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class HttpBackend:
    def __init__(self, upstream: Upstream, on_status: Callable[[str], None] = lambda message: None,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.upstream, self.on_status = upstream, on_status
        headers = {"Accept-Encoding": "identity"}
        if upstream.api_key:
            headers["Authorization"] = f"Bearer {upstream.api_key}"
        self._client = httpx.AsyncClient(base_url=upstream.url, headers=headers, follow_redirects=False,
                                         timeout=None, transport=transport, trust_env=False)
        self.address = upstream.url  # what logs and the arena call it
        self.failures = 0  # in a row
        self.quiet_until = 0.0  # monotonic time before which nothing is sent

    async def complete(self, request: CompleteRequest) -> Result:
        started = time.monotonic()
        if started < self.quiet_until or (request.kind == "edit" and self.upstream.kind != "edit"):
            return _result(request, [], started)
        timeout_s = request.deadline_ms / 1000.0
        if self.upstream.deadline_ms:
            timeout_s = min(timeout_s, self.upstream.deadline_ms / 1000.0)
        try:
            async with asyncio.timeout(timeout_s):
                items = await self._exchange(budget.fit(request, self.upstream.max_context_tokens))
        except TimeoutError:
            self._failed(Failure(f"no answer within {timeout_s * 1000:.0f} ms"))
        except httpx.HTTPError as exc:
            self._failed(Failure(_describe(exc)))
        except (Failure, BadAnswer) as exc:
            self._failed(exc)
        except Exception as exc:  # never raises: whatever reading the answer raised on makes it a bad answer
            self._failed(BadAnswer(f"its answer could not be read ({type(exc).__name__}: {str(exc)[:120]})"))
        else:
            if self.failures:
                logger.info("the upstream at %s answers again", self.upstream.url)
            self.failures, self.quiet_until = 0, 0.0
            return _result(request, items, started)
        return _result(request, [], started)

    def close(self) -> None:
        """Close the connections (from the event loop that uses them)."""
        asyncio.get_running_loop().create_task(self.aclose())

    async def aclose(self) -> None:
        await self._client.aclose()

    def _failed(self, exc: Exception) -> None:
        self.failures += 1
        backoff_s = min(MAX_BACKOFF_S, FIRST_BACKOFF_S * 2 ** (self.failures - 1))
        backoff_s = max(backoff_s, min(MAX_BACKOFF_S * 2, getattr(exc, "retry_after_s", 0.0)))
        self.quiet_until = time.monotonic() + backoff_s
        message = dialects.one_line(f"infill: no completions from the upstream at {self.upstream.url}: {exc}; "
                                    f"trying again in {backoff_s:.1f} s")
        logger.warning("%s", message)
        if self.failures == 1:
            self.on_status(message)

    async def _exchange(self, request: CompleteRequest) -> list[Item]:
        call = dialects.call_for(self.upstream, request)
        async with self._client.stream("POST", call.path, json=call.body) as response:
            if response.status_code != 200:
                raise _status_failure(response)
            encoding = response.headers.get("content-encoding", "identity").strip().lower()
            if encoding not in ("identity", ""):
                raise BadAnswer(f"the answer is {encoding[:40]}-encoded though identity was asked for: "
                                "it is not inflated here")
            cap = MAX_CHARS_PER_TOKEN * max(request.max_tokens, 1)
            if response.headers.get("content-type", "").startswith("text/event-stream"):
                text = await _read_stream(response, cap)
            else:
                answer = await _read_json(response)
                if request.kind == "edit":
                    content = _edit_content(answer)
                    return dialects.edit_items(request, None if content is None else _edited(request, content))
                text = dialects.text_of(answer)
        if request.kind == "edit":
            return dialects.edit_items(request, _edited(request, text))
        text = dialects.printable(text)
        if len(text) > cap:
            raise BadAnswer(f"the answer holds {len(text)} characters for {request.max_tokens} tokens")
        return [Item(dialects.unfence(text) if call.chat else text, 0.5, 0)]


def _edited(request: CompleteRequest, content: str) -> str:
    """An edit's rewrite, printable but for the control characters the code it was sent holds (a
    form feed between two functions stays, as the pieces between the regions must)."""
    return dialects.printable(content, kept="".join(set(dialects.UNPRINTABLE.findall(dialects.region_text(request)))))


def _edit_content(answer: object) -> str | None:
    choices = answer.get("choices") if isinstance(answer, dict) else None
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        message = choices[0].get("message")
        if isinstance(message, dict) and message.get("content") is None:
            return None
    return dialects.text_of(answer)


async def _read_json(response: httpx.Response) -> object:
    raw = bytearray()
    async for chunk in response.aiter_raw():
        raw += chunk
        if len(raw) > MAX_BODY_BYTES:
            raise Failure(f"the answer is over {MAX_BODY_BYTES} bytes")
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise BadAnswer(f"the answer is not JSON: {bytes(raw[:60])!r}") from None


async def _read_stream(response: httpx.Response, cap: int) -> str:
    """The text of an event stream's chunks, to `[DONE]`, a chunk that says stop, or its end. The
    body is read raw and split here, so that what waits for a line break is capped too."""
    text, pending, read = io.StringIO(), bytearray(), 0
    async for chunk in response.aiter_raw():
        read += len(chunk)
        if read > MAX_BODY_BYTES:
            raise Failure(f"the stream is over {MAX_BODY_BYTES} bytes")
        if _take_lines(_complete_lines(pending, chunk), text, cap):
            return text.getvalue()
    _take_lines([bytes(pending)], text, cap)
    return text.getvalue()


def _complete_lines(pending: bytearray, chunk: bytes) -> list[bytes]:
    """The lines `chunk` completes, the first after what `pending` held; `pending` keeps the line
    not yet ended, which may not grow past MAX_LINE_BYTES (BadAnswer). Each byte is copied once."""
    *lines, rest = chunk.split(b"\n")
    if lines:
        lines[0] = bytes(pending) + lines[0]
        pending.clear()
    pending += rest
    if len(pending) > MAX_LINE_BYTES:
        raise BadAnswer(f"a stream line runs past {MAX_LINE_BYTES} bytes with no line break")
    return lines


def _take_lines(lines: list[bytes], text: io.StringIO, cap: int) -> bool:
    """Add the text of each event-stream line to `text` (BadAnswer past `cap` characters); whether
    the stream says it is done."""
    for line in lines:
        if not line.startswith(b"data:"):
            continue
        data = line[len(b"data:"):].strip()
        if data == b"[DONE]":
            return True
        try:
            chunk = json.loads(data)
        except ValueError:
            raise BadAnswer(f"a stream chunk is not JSON: {data[:60]!r}") from None
        text.write(dialects.text_of(chunk, chunk=True) or "")
        if text.tell() > cap:
            raise BadAnswer(f"the answer runs past {cap} characters")
        if dialects.chunk_ends(chunk):
            return True
    return False


def _status_failure(response: httpx.Response) -> Failure:
    code = response.status_code
    hint = STATUS_HINTS.get(code) or ("a redirect, which is not followed: give the final url"
                                      if 300 <= code < 400 else "the server failed")
    retry_after = response.headers.get("retry-after", "")
    seconds = float(retry_after) if retry_after.isdecimal() else 0.0
    return Failure(f"HTTP {code} ({hint})", seconds)


def _describe(exc: httpx.HTTPError) -> str:
    if isinstance(exc, httpx.ConnectError):
        reason = str(exc) or "refused"
        if "CERTIFICATE" in reason.upper() or "SSL" in reason.upper():
            return f"TLS failed: {reason[:200]}"
        return f"cannot connect: {reason[:200]}"
    return f"{type(exc).__name__}: {str(exc)[:200]}"


def _result(request: CompleteRequest, items: list[Item], started: float) -> Result:
    total_ms = (time.monotonic() - started) * 1000.0
    return Result(request.id, items, Timings(0.0, 0.0, total_ms, total_ms), "done")
