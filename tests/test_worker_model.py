"""The worker as shipped: a real process, a real socket and the bundled model."""
from __future__ import annotations

import pytest
import zmq

from engine.client.calls import WorkerError
from engine.launch import spawn_local_worker, stop_worker
from engine.wire.protocol import CompleteRequest, Error, ErrorCode, Hole, decode
from engine.client.sync_client import WorkerClient
from infill.paths import bundled_model_dir

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

PREFIX = "def area(radius):\n    return 3.14159 * "


@pytest.fixture(scope="module")
def worker():
    assert (bundled_model_dir() / "config.json").exists(), "the bundled model is missing from models/"
    proc, address = spawn_local_worker(bundled_model_dir(), threads=2)
    yield address
    assert stop_worker(proc) == 0


def complete(address: str, rid: str):
    with WorkerClient(address, timeout_s=30) as client:
        return client.complete(CompleteRequest(rid, "fim", PREFIX, "\n\n\nprint(area(2))\n", mode="single_line",
                                               max_tokens=16, deadline_ms=30000))


def test_fim_request_returns_a_completion(worker):
    with WorkerClient(worker) as client:
        info = client.info()
    assert info.model == bundled_model_dir().name and info.vocab_size > 1000
    result = complete(worker, "fim-1")
    assert result.stop_reason == "done"
    item = result.items[0]
    assert item.text.strip() and item.forward_passes >= 1 and 0 < item.confidence <= 1
    assert result.timings.total_ms >= result.timings.prefill_ms > 0 and result.timings.decode_ms >= 0  # one pass may do


def test_malformed_frame_then_good_request(worker):
    ctx = zmq.Context.instance()
    sock = ctx.socket(zmq.DEALER)
    sock.linger = 0
    sock.connect(worker)
    try:
        sock.send(b"\x07\xc1not msgpack")
        assert sock.poll(10_000), "no reply to a malformed frame"
        reply = decode(sock.recv())
        assert isinstance(reply, Error) and reply.code == ErrorCode.MALFORMED
    finally:
        sock.close()
    assert complete(worker, "fim-2").items[0].text.strip()


def test_a_three_hole_edit_returns_three_texts_and_a_bad_one_its_error(worker):
    pieces = ["def area(radius):\n    return ", "\n\n\ndef perimeter(radius):\n    return ",
              "\n\n\ndef diameter(radius):\n    return ", "\n"]
    holes = [Hole("single_line", 12)] * 3
    with WorkerClient(worker, timeout_s=30) as client:
        result = client.complete(CompleteRequest("edit-1", "edit", pieces[0], pieces[-1], holes=holes,
                                                 pieces=pieces[1:-1], deadline_ms=30000))
        with pytest.raises(WorkerError) as refused:  # more tokens than the model's context
            client.complete(CompleteRequest("edit-2", "edit", "x", "y", holes=[Hole("multi_line", 1024)] * 12,
                                            pieces=["z"] * 11, deadline_ms=30000))
        after = client.complete(CompleteRequest("fim-3", "fim", PREFIX, "\n", deadline_ms=30000))
    assert result.stop_reason == "done" and [item.hole for item in result.items] == [0, 1, 2]
    assert all(item.text.strip() for item in result.items)
    assert refused.value.code == ErrorCode.INVALID_FIELD and "context" in str(refused.value)
    assert after.items[0].text.strip()
