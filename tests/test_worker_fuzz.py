"""Property-based fuzzing of a live worker's socket: random, mutated and hostile frames.

100 examples of 100 frames each: 10,000 frames through one worker. Whatever arrives, the worker
must stay up, and every frame that decodes as a CompleteRequest must get exactly one final reply
(a Result or an Error carrying its id).
"""
from __future__ import annotations

import uuid

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.wire.protocol import (PROTOCOL_VERSION, Cancel, CompleteRequest, Error, Health, HealthOk,
                                    Hello, InfoRequest, MsgType, ProtocolError, Result, decode, encode)
from worker_fakes import FakeDecoding, FakeRunner, RawPeer, serving

pytestmark = pytest.mark.timeout(240)

FRAMES_PER_EXAMPLE = 100
EXAMPLES = 100
REPLY_WAIT_MS = 30_000  # the longest wait for any one reply: only a broken worker needs it


def fresh_id() -> str:
    return f"ok-{uuid.uuid4().hex}"  # mutations cannot plausibly forge one of these


safe_text = st.text(st.characters(codec="utf-8"), max_size=40)


class QuickRunner(FakeRunner):
    """FakeRunner without its slow prefixes: every request finishes in three steps ("boom" still fails)."""

    def start(self, job, deadline) -> FakeDecoding:
        return FakeDecoding(job.pieces, 3, 0.0)


@st.composite
def valid_message(draw) -> bytes:
    kind = draw(st.sampled_from(["complete", "complete", "hello", "health", "info", "cancel"]))
    if kind == "complete":
        return encode(CompleteRequest(fresh_id(), "fim", draw(safe_text), draw(safe_text),
                                      mode=draw(st.sampled_from(["single_line", "multi_line"])),
                                      max_tokens=draw(st.integers(1, 64)),
                                      deadline_ms=draw(st.integers(200, 3000))))
    if kind == "hello":
        return encode(Hello(draw(st.sampled_from([PROTOCOL_VERSION, 0, 65535])), draw(safe_text)))
    if kind == "cancel":
        return encode(Cancel(draw(st.text(min_size=1, max_size=20))))
    return encode(Health() if kind == "health" else InfoRequest())


@st.composite
def mutated(draw) -> bytes:
    frame = bytearray(draw(valid_message()))
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["flip", "cut", "insert", "tag"]))
        at = draw(st.integers(0, max(0, len(frame) - 1)))
        if op == "flip" and frame:
            frame[at] ^= 1 << draw(st.integers(0, 7))
        elif op == "cut":
            del frame[at:]
        elif op == "insert":
            frame[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif frame:
            frame[0] = draw(st.integers(0, 255))
    return bytes(frame)


msgpack_value = st.recursive(
    st.none() | st.booleans() | st.integers(-2**63, 2**64 - 1) | st.floats() | st.text(max_size=30)
    | st.binary(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12)


@st.composite
def forged(draw) -> bytes:
    """A real type tag over a msgpack payload of the wrong shape: known field names, wrong values."""
    fields = ["id", "kind", "prefix", "suffix", "mode", "max_tokens", "deadline_ms", "snippets", "decoder",
              "version", "client_name", "session", "supersedes"]
    payload = draw(st.dictionaries(st.sampled_from(fields) | st.text(max_size=8), msgpack_value, max_size=8))
    return bytes([draw(st.sampled_from(list(MsgType)))]) + msgpack.packb(payload)


frames = st.lists(st.one_of(valid_message(), mutated(), forged(), st.binary(max_size=300)),
                  min_size=FRAMES_PER_EXAMPLE, max_size=FRAMES_PER_EXAMPLE)


def completes_sent(batch: list[bytes]) -> list[str]:
    """Ids of the frames the worker must answer as requests: those that decode as CompleteRequest."""
    ids = []
    for frame in batch:
        try:
            msg = decode(frame)
        except ProtocolError:
            continue
        if isinstance(msg, CompleteRequest):
            ids.append(msg.id)
    return ids


def collect_finals(peer: RawPeer, expected: list[str]) -> dict[str, int]:
    """Read replies until every expected id has a final reply, then until a Health sent after that
    is answered: the worker still answers, and a second reply sent before it is counted."""
    finals: dict[str, int] = {}
    pending, health_sent = set(expected), False
    while True:
        if not pending and not health_sent:
            peer.send(encode(Health()))
            health_sent = True
        assert peer.sock.poll(REPLY_WAIT_MS), f"no reply from the worker; waiting for {sorted(pending)}"
        reply = decode(peer.sock.recv())
        if health_sent and isinstance(reply, HealthOk):
            return finals
        rid = reply.id if isinstance(reply, (Result, Error)) else None
        if rid in expected:
            finals[rid] = finals.get(rid, 0) + 1
            pending.discard(rid)


@pytest.fixture(scope="module")
def fuzz_peer(tmp_path_factory):
    address = f"ipc://{tmp_path_factory.mktemp('fz')}/w.sock"
    with serving(QuickRunner(), address) as bound:
        peer = RawPeer(bound)
        yield peer
        peer.close()


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(batch=frames)
def test_ten_thousand_hostile_frames(fuzz_peer, batch):
    for frame in batch:
        fuzz_peer.send(frame)
    expected = completes_sent(batch)
    finals = collect_finals(fuzz_peer, expected)
    assert finals == {rid: 1 for rid in expected}, "a well-formed request lost its reply or got two"
