"""The LSP reader (`lsp_server.framing`) on hostile and careless input, without a process.

Each test feeds bytes in chunks and reads messages; a chunk source that runs dry waits forever,
as a client waiting for an answer does, so the reader's stall rule is what answers then.
"""
from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lsp_server.framing import FrameReader, NotLsp, Unparseable, encode

GOOD = {"jsonrpc": "2.0", "id": 7, "method": "textDocument/inlineCompletion",
        "params": {"text": "naïve — ünïcode"}}
STALL_S = 0.02


def body(message) -> bytes:
    return json.dumps(message, ensure_ascii=False).encode("utf-8")


def framed(message, length_delta: int = 0) -> bytes:
    data = body(message)
    return b"Content-Length: %d\r\n\r\n%b" % (len(data) + length_delta, data)


class Feed:
    """Chunks to read, then silence (an awaiting that never ends) or the end of the input."""

    def __init__(self, *chunks: bytes, ends: bool = False) -> None:
        self.chunks = [chunk for chunk in chunks if chunk]  # b"" would mean the end
        self.ends = ends

    async def __call__(self) -> bytes:
        if self.chunks:
            return self.chunks.pop(0)
        if self.ends:
            return b""
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


def reader(*chunks: bytes, ends: bool = False, **kwargs) -> FrameReader:
    return FrameReader(Feed(*chunks, ends=ends), stall_s=STALL_S, **kwargs)


async def messages(frames: FrameReader, count: int) -> list:
    return [await asyncio.wait_for(frames.next(), 5) for _ in range(count)]


async def test_well_framed_messages_in_any_chunking():
    data = framed(GOOD) + b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n" + framed({"a": 1})
    chunks = [data[i:i + 3] for i in range(0, len(data), 3)]
    assert await messages(reader(*chunks), 2) == [GOOD, {"a": 1}]


async def test_the_end_of_the_input_is_eof():
    frames = reader(framed(GOOD), ends=True)
    assert await frames.next() == GOOD
    with pytest.raises(EOFError):
        await frames.next()


@pytest.mark.parametrize("delta", [-9, -3, -1])
async def test_a_length_too_short_is_recovered_before_the_next_message(delta):
    # a client that counts characters, not bytes, of non-ASCII text sends a length too short
    assert await messages(reader(framed(GOOD, delta) + framed({"next": 1})), 2) == [GOOD, {"next": 1}]


@pytest.mark.parametrize("delta", [-5, -1])
async def test_a_length_too_short_is_recovered_when_nothing_follows(delta):
    assert await messages(reader(framed(GOOD, delta)), 1) == [GOOD]


@pytest.mark.parametrize("delta", [1, 3, 10, 40])
async def test_a_length_too_long_is_recovered_with_the_next_message(delta):
    assert await messages(reader(framed(GOOD, delta) + framed({"next": 1})), 2) == [GOOD, {"next": 1}]


async def test_a_length_too_long_is_recovered_when_the_client_waits():
    assert await messages(reader(framed(GOOD, 12)), 1) == [GOOD]


async def test_malformed_json_is_unparseable_and_the_next_message_is_read():
    frames = reader(b"Content-Length: 5\r\n\r\n{bad}" + framed(GOOD))
    first, second = await messages(frames, 2)
    assert isinstance(first, Unparseable) and second == GOOD


async def test_malformed_json_is_unparseable_when_the_client_waits():
    [first] = await messages(reader(b"Content-Length: 5\r\n\r\n{bad}"), 1)
    assert isinstance(first, Unparseable)


async def test_json_nested_too_deep_is_unparseable():
    deep = b"[" * 100_000 + b"]" * 100_000
    frames = reader(b"Content-Length: %d\r\n\r\n%b" % (len(deep), deep) + framed(GOOD))
    first, second = await messages(frames, 2)
    assert isinstance(first, Unparseable) and second == GOOD


async def test_a_body_over_the_limit_is_skipped_without_being_held():
    big = framed({"text": "x" * 50_000})
    frames = reader(*[big[i:i + 4096] for i in range(0, len(big), 4096)], framed(GOOD), max_body_bytes=10_000)
    assert await messages(frames, 1) == [GOOD]
    assert len(frames._buf) < 10_000


async def test_a_huge_length_never_allocates_and_the_next_message_is_read():
    frames = reader(b"Content-Length: 99999999999999\r\n\r\n", framed(GOOD))
    assert await messages(frames, 1) == [GOOD]


@pytest.mark.parametrize("junk", [b"garbage\r\n", b"Content-Length: abc\r\n\r\n", b"\r\n\r\n",
                                  b"x" * 5000, b"Content-Length: 3\r\n", b"Content-Len",
                                  b"Content-Length: 0\r\n\r\n", b"Content-Length: 50\r\n\r\n",
                                  b"\xff\xfe\x00\r\n"])
async def test_garbage_before_a_message_is_skipped(junk):
    for chunks in ([junk, framed(GOOD)], [junk + framed(GOOD)]):
        frames = reader(*chunks)
        first = await messages(frames, 1)
        if isinstance(first[0], Unparseable):  # junk that frames an empty or partial body
            first = await messages(frames, 1)
        assert first == [GOOD]


@pytest.mark.parametrize("start", [b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\n", b"GET /", b"{\"jsonrpc\"",
                                   b"\x16\x03\x01"])
async def test_a_strict_start_refuses_what_is_not_an_lsp_header(start):
    with pytest.raises(NotLsp):
        await asyncio.wait_for(reader(start, strict_start=True).next(), 5)


async def test_a_strict_start_reads_an_lsp_header():
    assert await messages(reader(framed(GOOD), strict_start=True), 1) == [GOOD]


def test_encode_counts_bytes():
    frame = encode({"text": "ü"})
    header, data = frame.split(b"\r\n\r\n")
    assert int(header.split(b":")[1]) == len(data) and json.loads(data) == {"text": "ü"}


def mutate(frame: bytes, cut: int, insert: bytes) -> bytes:
    cut %= len(frame) + 1
    return frame[:cut] + insert + frame[cut + 1:]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.binary(max_size=300),
                 st.builds(mutate, st.just(framed(GOOD)), st.integers(0, 200), st.binary(max_size=8)),
                 st.builds(lambda d: framed(GOOD, d), st.integers(-40, 40))))
def test_fuzz_any_bytes_then_a_good_message_is_read(junk):
    """Whatever comes first, a well-formed message after it is read (after at most a few
    unparseable or recovered ones)."""
    async def run():
        frames = reader(junk, framed({"id": "after"}))
        for _ in range(6):
            value = await asyncio.wait_for(frames.next(), 5)
            if value == {"id": "after"}:
                return True
        return False
    assert asyncio.run(run())
