"""The LSP base protocol's framing, read so that no input can make the reader deaf or kill it.

A message is a header block (`Content-Length: N`, optionally `Content-Type: ...`, each line ended
by CRLF, the block by an empty line) and N bytes of JSON. `FrameReader.next()` returns the next
message's decoded JSON, or `Unparseable` for a body that holds no JSON value (the caller answers
`-32700`), or raises `EOFError` when the input ends. What it does with bad input:

- Lines that are not headers (garbage, the rest of a mis-framed body) are skipped up to the next
  `Content-Length:` header, which is searched for inside a garbage line too; with `strict_start`,
  input whose first line is not a header (an HTTP request line) raises `NotLsp` at once.
- A body over `max_body_bytes` is never held: the reader skips to the next header.
- A wrong `Content-Length` (a client that counts characters, not bytes) is recovered where the
  bytes allow it: a body that does not parse is cut at the next header found in or after it, or
  at the end of its first JSON value, and a body still short after `stall_s` without bytes is
  taken as it is when it already holds a whole JSON value. The reader then goes on at the next
  header, so one mis-framed message never costs the ones after it.

Memory stays under `max_body_bytes` plus one chunk. Nothing here writes; `encode` makes a frame.
"""
from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

logger = logging.getLogger(__name__)

DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024  # a 5 MB file, JSON-escaped, several times over
MAX_HEADER_LINE_BYTES = 1024  # real header lines are under 100 bytes
STALL_S = 0.25  # a body this long without more bytes while still short is looked at as it is
_KEEP_WHILE_SKIPPING = 128  # bytes kept from skipped input: a header cut between two chunks
# A header line: a token, a colon, a value. The Content-Length header ends with a real line
# break, which JSON never holds inside a string, so the search cannot match inside a body.
_HEADER = re.compile(rb"([A-Za-z][A-Za-z0-9-]*):[ \t]*([^\r\n]*?)[ \t]*")
_CONTENT_LENGTH = re.compile(rb"content-length:[ \t]*\d+[ \t]*\r?\n", re.IGNORECASE)
_HEADER_START = re.compile(rb"[A-Za-z][A-Za-z0-9-]*(:|$)")

ReadChunk = Callable[[], Awaitable[bytes]]  # the next bytes (b"" at the end); safe to cancel


class NotLsp(Exception):
    """The input does not start as an LSP header block (with `strict_start`)."""


@dataclass(frozen=True, slots=True)
class Unparseable:
    """A framed body that holds no JSON value."""

    reason: str


def encode(message: Any) -> bytes:
    """One frame: the header block and the message as compact JSON."""
    body = json.dumps(message, separators=(",", ":")).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n%b" % (len(body), body)


def parse_json(body: bytes) -> Any:
    """The body's JSON value; raises ValueError when it is not one (or nests too deep to read)."""
    try:
        return json.loads(body.decode("utf-8"))
    except RecursionError as exc:
        raise ValueError("the JSON nests too deep") from exc


def first_value_end(data: bytes) -> int | None:
    """The end of the JSON value `data` starts with (after any whitespace), or None."""
    try:
        text = data.decode("utf-8")
        start = len(text) - len(text.lstrip())
        _, end = json.JSONDecoder().raw_decode(text, start)
    except (ValueError, RecursionError):
        return None
    return len(text[:end].encode("utf-8"))


def whole_value(data: bytes) -> bool:
    """True when `data` is one JSON value with nothing but whitespace around it."""
    end = first_value_end(data)
    return end is not None and not data[end:].strip()


def next_header_at(data: bytes, start: int = 0) -> int | None:
    """Where the next `Content-Length:` header line starts in `data` at or after `start`."""
    found = _CONTENT_LENGTH.search(data, start)
    return None if found is None else found.start()


class FrameReader:
    """Messages from a byte stream; `read_chunk` is the stream (see `ReadChunk`)."""

    def __init__(self, read_chunk: ReadChunk, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
                 strict_start: bool = False, stall_s: float = STALL_S) -> None:
        self._read_chunk = read_chunk
        self.max_body_bytes = max_body_bytes
        self._strict = strict_start
        self._stall_s = stall_s
        self._buf = bytearray()
        self._ended = False
        self._skipped = 0  # garbage bytes skipped since the last header block

    async def next(self) -> Any:
        """The next message's JSON value, or `Unparseable`; EOFError at the end of the input."""
        while True:
            length = await self._header_block()
            if length <= self.max_body_bytes:
                return await self._body(length)
            logger.warning("skipped a message of %d bytes (the limit is %d)", length,
                           self.max_body_bytes)
            await self._skip_to_header()

    async def _fill(self, timeout_s: float | None = None) -> bool:
        """Read one chunk into the buffer; False at the end of the input or after `timeout_s`."""
        if self._ended:
            return False
        try:
            chunk = await asyncio.wait_for(self._read_chunk(), timeout_s)
        except TimeoutError:
            return False
        if not chunk:
            self._ended = True
            return False
        self._buf += chunk
        return True

    async def _header_block(self) -> int:
        """Read header lines up to the empty line that ends a block with a Content-Length."""
        length = None
        while True:
            line = await self._line()
            if not line.strip():
                if length is not None:
                    self._report_skipped()
                    return length
                continue  # a stray empty line between messages
            header = _HEADER.fullmatch(line.rstrip(b"\r\n"))
            if header is None or next_header_at(line, 1) is not None \
                    or (header[1].lower() == b"content-length" and not header[2].isdigit()):
                self._junk(line)
                length = None
                continue
            self._strict = False
            if header[1].lower() == b"content-length":
                length = int(header[2])

    async def _line(self) -> bytes:
        """The next line with its line break; an over-long one is cut (and then is garbage)."""
        while True:
            if self._strict and self._buf and not _HEADER_START.match(self._buf[:64]):
                raise NotLsp(f"the input starts with {bytes(self._buf[:40])!r}, not an LSP header")
            end = self._buf.find(b"\n")
            if end >= 0 or len(self._buf) > MAX_HEADER_LINE_BYTES:
                cut = end + 1 if end >= 0 else len(self._buf) - _KEEP_WHILE_SKIPPING
                line = bytes(self._buf[:cut])
                del self._buf[:cut]
                return line
            if not await self._fill():
                if self._buf:  # a last line without a break: garbage, or a cut header
                    line = bytes(self._buf)
                    self._buf.clear()
                    return line
                raise EOFError

    def _junk(self, line: bytes) -> None:
        """A line that is not a header: put back what starts at a header inside it, if any."""
        if self._strict:
            raise NotLsp(f"the input starts with {line[:40]!r}, not an LSP header")
        start = next_header_at(line + bytes(self._buf[:MAX_HEADER_LINE_BYTES]))
        if start is not None and start < len(line):
            self._buf[:0] = line[start:]
            line = line[:start]
        self._skipped += len(line)

    def _report_skipped(self) -> None:
        """One log line for the garbage skipped before a header block, however long it was."""
        if self._skipped:
            logger.warning("skipped %d bytes that are not an LSP header", self._skipped)
            self._skipped = 0

    async def _skip_to_header(self) -> None:
        """Drop input up to the next Content-Length header, holding only a few bytes meanwhile."""
        while True:
            start = next_header_at(self._buf)
            if start is not None:
                del self._buf[:start]
                return
            del self._buf[:-_KEEP_WHILE_SKIPPING]
            if not await self._fill():
                raise EOFError

    async def _body(self, length: int) -> Any:
        """The body of `length` bytes, decoded; a wrong length is recovered where it can be."""
        while len(self._buf) < length:
            if await self._fill(self._stall_s):
                continue
            if self._ended:
                break
            early = self._early_end()
            if early is not None:
                return self._take(early, f"Content-Length {length} is more than the body's "
                                          f"{early} bytes")
        body = bytes(self._buf[:length])
        try:
            value = parse_json(body)
        except ValueError:
            return await self._misframed(length)
        del self._buf[:length]
        return value

    def _early_end(self) -> int | None:
        """The end of a whole message in a short buffer: before a header in it, or the buffer."""
        start = next_header_at(self._buf)
        if start is not None:
            return start
        return len(self._buf) if whole_value(self._buf) else None

    def _take(self, end: int, why: str) -> Any:
        """Decode and drop the first `end` bytes of the buffer (a message whose length was wrong)."""
        body = bytes(self._buf[:end])
        del self._buf[:end]
        try:
            value = parse_json(body)
        except ValueError as exc:
            return Unparseable(f"the body is not JSON: {exc}")
        logger.warning("%s: recovered the message", why)
        return value

    async def _misframed(self, length: int) -> Any:
        """A body of `length` bytes that does not parse: cut at a header inside it, at the end
        of its first JSON value, or (a length too short) at the next header after it."""
        start = next_header_at(self._buf)
        if start is not None and start < length:
            return self._take(start, f"Content-Length {length} runs into the next message")
        end = first_value_end(self._buf[:length])
        if end is not None:
            return self._take(end, f"Content-Length {length} is more than the body's {end} bytes")
        while True:
            start = next_header_at(self._buf, length)
            if start is not None:
                return self._take(start, f"Content-Length {length} is less than the body")
            if len(self._buf) > self.max_body_bytes or not await self._fill(self._stall_s):
                return self._give_up(length)

    def _give_up(self, length: int) -> Any:
        """No header came after a body that does not parse: what came is one message if it is
        a whole JSON value, else the body is unparseable (the rest is skipped as garbage)."""
        if len(self._buf) <= self.max_body_bytes and whole_value(self._buf):
            return self._take(len(self._buf), f"Content-Length {length} is less than the body")
        del self._buf[:length]
        return Unparseable(f"the body of {length} bytes is not JSON")
