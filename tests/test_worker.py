"""The worker's protocol over a real ipc:// socket, on a fake model runner: hello, info and health,
a request's result, each kind of bad frame or job answered with its error (the next request still
served), a runner's failure confined to its request, one request id in flight at a time."""
# The fixtures imported from worker_fakes are the tests' parameters: not redefinitions.
# ruff: noqa: F811
from __future__ import annotations

import time

import msgpack
import pytest

from engine.client.calls import WorkerError
from engine.client.sync_client import WorkerClient
from engine.wire.protocol import (MAX_FRAME_BYTES, PROTOCOL_VERSION, CompleteRequest, Error, ErrorCode, Hello,
                                  Hole, MsgType, Result, encode)
from worker_fakes import GATED_DEADLINE_MS, REPLY_WAIT_S, request
from worker_fakes import client, ipc_address, raw, served  # noqa: F401 (fixtures)

pytestmark = pytest.mark.timeout(120)


def test_hello_info_health(client):
    welcome = client.hello()
    assert (welcome.version, welcome.model) == (PROTOCOL_VERSION, "fake-tiny")
    assert (welcome.vocab_size, welcome.max_context) == (256, 512)
    info = client.info()
    assert (info.model, info.family, info.protocol_version) == ("fake-tiny", "fake", PROTOCOL_VERSION)
    health = client.health()
    assert health.uptime_s >= 0 and health.live_requests == 0 and health.served == 0


def test_complete_gets_a_result(served, client):
    started = time.monotonic()
    result = client.complete(request("r1", mode="multi_line", max_tokens=9, decoder={"steps": 2}))
    assert result.id == "r1" and result.stop_reason == "done"
    assert [(i.text, i.confidence, i.forward_passes) for i in result.items] == [("x = |\n", 0.75, 3)]
    t = result.timings
    assert (t.prepare_ms, t.prefill_ms, t.decode_ms) == (0.5, 1.5, 2.5) and 0 <= t.queue_ms <= t.total_ms
    call = served[1].calls[0]
    assert (call["mode"], call["max_tokens"], call["overrides"]) == ("multi_line", 9, {"steps": 2})
    assert started < call["deadline"] <= time.monotonic() + 2.0
    assert client.health().served == 1


def test_version_mismatch(raw):
    reply = raw(encode(Hello(99, "future-client")))
    assert isinstance(reply, Error) and reply.code == ErrorCode.VERSION_MISMATCH


def test_malformed_frame_then_a_good_request(raw):
    reply = raw(bytes([MsgType.COMPLETE_REQUEST]) + b"\xc1\xc1")
    assert isinstance(reply, Error) and reply.code == ErrorCode.MALFORMED and reply.id is None
    assert raw(b"").code == ErrorCode.MALFORMED
    assert isinstance(raw(encode(request("ok"))), Result)


def test_unknown_type_tag(raw):
    reply = raw(bytes([200]) + msgpack.packb({}))
    assert isinstance(reply, Error) and reply.code == ErrorCode.UNKNOWN_TYPE


def test_reply_types_are_not_accepted(raw):
    reply = raw(encode(Error("x", "internal", "a client should not send this")))
    assert reply.code == ErrorCode.UNKNOWN_TYPE and "Error" in reply.message


def test_invalid_field_names_the_field_and_request(raw):
    payload = msgpack.unpackb(encode(request("bad"))[1:]) | {"max_tokens": 0}
    reply = raw(bytes([MsgType.COMPLETE_REQUEST]) + msgpack.packb(payload))
    assert (reply.id, reply.code) == ("bad", ErrorCode.INVALID_FIELD) and "max_tokens" in reply.message


def test_runner_exception_fails_that_request_alone(client):
    with pytest.raises(WorkerError) as info:
        client.complete(request("r-boom", prefix="boom"))
    assert info.value.code == ErrorCode.INTERNAL and "exploded" in info.value.message
    assert client.complete(request("r-after")).items[0].text == "x = |\n"


def test_a_model_error_in_a_shared_step_fails_its_request_alone(served, raw):
    raw.send(encode(request("slow", prefix="sleep:0.3")))
    raw.send(encode(request("bad", prefix="boom")))
    replies = {r.id: r for r in (raw.recv(), raw.recv())}
    assert replies["bad"].code == ErrorCode.INTERNAL and "exploded" in replies["bad"].message
    assert replies["slow"].stop_reason == "done" and replies["slow"].items[0].forward_passes == 10
    assert not raw.sock.poll(100)


def test_an_edit_job_gets_the_items_of_each_hole(served, client):
    holes = [Hole("single_line", 4, "old"), Hole("multi_line", 8), Hole("single_line", 2)]
    result = client.complete(CompleteRequest("e1", "edit", "a", "d", holes=holes, pieces=["b", "c"]))
    assert [(item.hole, item.text) for item in result.items] == [(0, "a|b"), (1, "b|c"), (2, "c|d")]
    assert served[1].calls[0]["holes"] == 3


HOLE = {"mode": "single_line", "max_tokens": 4, "replaces": "", "draft": [], "slots": []}  # a hole as the wire has it


@pytest.mark.parametrize("fields, code", [
    ({"kind": "edit"}, ErrorCode.INVALID_FIELD),  # no hole
    ({"kind": "edit", "holes": [HOLE] * 2, "pieces": []},
     ErrorCode.INVALID_FIELD),  # a piece missing between two holes
    ({"kind": "edit", "holes": [HOLE] * 33,
      "pieces": ["x"] * 32}, ErrorCode.INVALID_FIELD),  # over MAX_HOLES
    ({"kind": "edit", "holes": [HOLE | {"mode": "auto"}], "pieces": []},
     ErrorCode.INVALID_FIELD),  # the worker takes no "auto": the front end decides
    ({"kind": "fim", "holes": [HOLE], "pieces": []},
     ErrorCode.INVALID_FIELD),  # FIM's hole is prefix|suffix
    ({"kind": "edit", "holes": [HOLE] * 2,
      "pieces": ["p" * 30_000]}, ErrorCode.TOO_LARGE),  # the pieces over the text cap
])
def test_a_bad_job_gets_its_error_and_the_next_request_succeeds(raw, fields, code):
    payload = msgpack.unpackb(encode(request("bad"))[1:]) | fields
    reply = raw(bytes([MsgType.COMPLETE_REQUEST]) + msgpack.packb(payload))
    assert isinstance(reply, Error) and reply.id == "bad" and reply.code == code
    assert isinstance(raw(encode(request("good"))), Result)


def test_duplicate_id_in_flight(served, raw):
    raw.send(encode(request("dup", prefix="gated:0.01", deadline_ms=GATED_DEADLINE_MS)))
    raw.send(encode(request("dup")))
    first = raw.recv()
    assert (first.id, first.code) == ("dup", ErrorCode.INVALID_FIELD) and "in flight" in first.message
    served[1].gate.set()
    second = raw.recv()
    assert isinstance(second, Result) and second.items[0].text == "gated:0.01|\n"


def test_multipart_messages_are_malformed(raw):
    raw.sock.send_multipart([encode(request("a")), b"extra"])
    reply = raw.recv()
    assert reply.code == ErrorCode.MALFORMED and "one frame" in reply.message


def test_oversized_frames_are_refused_by_the_socket(served, raw):
    raw.send(bytes([MsgType.HEALTH]) + b"\x00" * MAX_FRAME_BYTES)
    assert not raw.sock.poll(200)  # the worker dropped the connection instead of reading it
    with WorkerClient(served[0], timeout_s=REPLY_WAIT_S) as fresh:
        assert fresh.health().live_requests == 0
