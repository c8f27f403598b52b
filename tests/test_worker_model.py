"""The worker as shipped: a real process, a real socket and the bundled model."""
from __future__ import annotations

import pytest
import zmq

from engine.client import WorkerClient, spawn_local_worker, stop_worker
from engine.protocol import CompleteRequest, Error, ErrorCode, decode
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
    assert result.timings.total_ms >= result.timings.decode_ms > 0


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
