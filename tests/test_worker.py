"""Tests of engine.worker and engine.client over real ipc:// sockets, with a fake model runner."""
from __future__ import annotations

import asyncio
import functools
import shutil
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import msgpack
import pytest
import zmq

from engine.client import (AsyncWorkerClient, WorkerClient, WorkerError, WorkerStartError,
                           WorkerTimeout, spawn_local_worker, start_worker_process, stop_worker)
from engine.protocol import (MAX_FRAME_BYTES, Cancel, CompleteRequest, Error, ErrorCode, Hello,
                             MsgType, Result, decode, encode)
from engine.worker import Worker, check_bind_address, main

pytestmark = pytest.mark.timeout(20)

INFO = {"model": "fake-tiny", "family": "fake", "vocab_size": 256, "max_context": 512}


@dataclass(slots=True)
class FakeCompletion:
    text: str
    confidence: float
    forward_passes: int
    prefill_ms: float
    decode_ms: float
    stop_reason: str


class FakeRunner:
    """Echoes the hole's context; a prefix "boom" raises, "sleep:S" sleeps S seconds first."""

    def __init__(self) -> None:
        self.calls: list[dict] = []

    def info(self) -> dict:
        return dict(INFO)

    def complete(self, prefix, suffix, mode, max_tokens, deadline, overrides) -> FakeCompletion:
        self.calls.append(dict(prefix=prefix, suffix=suffix, mode=mode, max_tokens=max_tokens,
                               deadline=deadline, overrides=overrides))
        if prefix == "boom":
            raise RuntimeError("the fake model exploded")
        if prefix.startswith("sleep:"):
            time.sleep(float(prefix.split(":")[1]))
        return FakeCompletion(f"{prefix}|{suffix}", 0.75, 3, 1.5, 2.5, "done")


def request(rid: str, prefix: str = "x = ", deadline_ms: int = 2000, **fields) -> CompleteRequest:
    return CompleteRequest(rid, "fim", prefix, "\n", deadline_ms=deadline_ms, **fields)


@pytest.fixture
def ipc_address():
    """A fresh ipc:// address in a short private folder (socket paths are capped near 100 bytes)."""
    folder = tempfile.mkdtemp(prefix="iw-")
    yield f"ipc://{folder}/w.sock"
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def served(ipc_address):
    """A worker serving a FakeRunner on a private ipc:// socket, in a thread."""
    runner = FakeRunner()
    worker = Worker(runner, ipc_address)
    thread = threading.Thread(target=worker.serve, name="test-worker")
    thread.start()
    yield worker.address, runner
    worker.stop()
    thread.join(timeout=5)
    assert not thread.is_alive()


class RawPeer:
    """A bare DEALER socket, to send frames no client would and to pipeline requests."""

    def __init__(self, address: str) -> None:
        self._ctx = zmq.Context()
        self.sock = self._ctx.socket(zmq.DEALER)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.connect(address)

    def send(self, frame: bytes) -> None:
        self.sock.send(frame)

    def recv(self, timeout_ms: int = 2000):
        assert self.sock.poll(timeout_ms), "no reply from the worker"
        return decode(self.sock.recv())

    def __call__(self, frame: bytes):
        self.send(frame)
        return self.recv()

    def close(self) -> None:
        self.sock.close()
        self._ctx.term()


@pytest.fixture
def raw(served):
    peer = RawPeer(served[0])
    yield peer
    peer.close()


@pytest.fixture
def client(served):
    with WorkerClient(served[0], timeout_s=2.0) as c:
        yield c


def test_hello_info_health(client):
    welcome = client.hello()
    assert (welcome.version, welcome.model) == (1, "fake-tiny")
    assert (welcome.vocab_size, welcome.max_context) == (256, 512)
    info = client.info()
    assert (info.model, info.family, info.protocol_version) == ("fake-tiny", "fake", 1)
    health = client.health()
    assert health.uptime_s >= 0 and health.live_requests == 0 and health.served == 0


def test_complete_gets_a_result(served, client):
    started = time.monotonic()
    result = client.complete(request("r1", mode="multi_line", max_tokens=9, decoder={"steps": 2}))
    assert result.id == "r1" and result.stop_reason == "done"
    assert [(i.text, i.confidence, i.forward_passes) for i in result.items] == [("x = |\n", 0.75, 3)]
    t = result.timings
    assert (t.prefill_ms, t.decode_ms) == (1.5, 2.5) and 0 <= t.queue_ms <= t.total_ms
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


def test_edit_kind_is_unsupported_for_now(client):
    with pytest.raises(WorkerError) as info:
        client.complete(CompleteRequest("e1", "edit", "a", "b"))
    assert info.value.code == ErrorCode.UNSUPPORTED


def test_duplicate_id_in_flight(raw):
    raw.send(encode(request("dup", prefix="sleep:0.3")))
    raw.send(encode(request("dup")))
    first, second = raw.recv(), raw.recv()
    assert (first.id, first.code) == ("dup", ErrorCode.INVALID_FIELD) and "in flight" in first.message
    assert isinstance(second, Result) and second.items[0].text == "sleep:0.3|\n"


def test_cancel_answers_a_queued_request_at_once(served, raw):
    raw.send(encode(request("slow", prefix="sleep:0.5")))
    raw.send(encode(request("queued")))
    raw.send(encode(Cancel("queued")))
    raw.send(encode(Cancel("never-sent")))  # unknown ids are ignored
    cancelled = raw.recv()
    assert (cancelled.id, cancelled.stop_reason, cancelled.items) == ("queued", "cancelled", [])
    assert cancelled.timings.total_ms < 400  # not held behind the slow request
    assert raw.recv().id == "slow"
    assert not raw.sock.poll(200)  # one reply per request
    assert [c["prefix"] for c in served[1].calls] == ["sleep:0.5"]


def test_expired_requests_are_dropped_not_run(served, raw):
    raw.send(encode(request("slow", prefix="sleep:0.3")))
    raw.send(encode(request("late", deadline_ms=50)))
    replies = {r.id: r for r in (raw.recv(), raw.recv())}
    assert replies["late"].stop_reason == "deadline" and replies["late"].items == []
    assert replies["slow"].stop_reason == "done"
    assert [c["prefix"] for c in served[1].calls] == ["sleep:0.3"]


def test_multipart_messages_are_malformed(raw):
    raw.sock.send_multipart([encode(request("a")), b"extra"])
    reply = raw.recv()
    assert reply.code == ErrorCode.MALFORMED and "one frame" in reply.message


def test_oversized_frames_are_refused_by_the_socket(served, raw):
    raw.send(bytes([MsgType.HEALTH]) + b"\x00" * MAX_FRAME_BYTES)
    assert not raw.sock.poll(200)  # the worker dropped the connection instead of reading it
    with WorkerClient(served[0], timeout_s=2.0) as fresh:
        assert fresh.health().live_requests == 0


def test_concurrent_calls_from_a_thread_pool(client):
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda i: client.complete(request(f"r{i}", prefix=f"p{i}")), range(12)))
    assert [r.items[0].text for r in results] == [f"p{i}|\n" for i in range(12)]


def wait_for_live_requests(client: WorkerClient, expected: int, within_s: float = 0.3) -> int:
    deadline = time.monotonic() + within_s
    while (live := client.health().live_requests) != expected and time.monotonic() < deadline:
        time.sleep(0.01)
    return live


def test_client_timeout_cancels_the_request(served, raw, client):
    raw.send(encode(request("slow", prefix="sleep:0.6")))
    assert wait_for_live_requests(client, 1) == 1  # "slow" is in before "queued"
    client.timeout_s = 0.05
    with pytest.raises(WorkerTimeout):
        client.complete(request("queued", deadline_ms=1))
    client.timeout_s = 2.0
    assert wait_for_live_requests(client, 1) == 1  # the Cancel took "queued" off at once
    assert client.complete(request("next")).id == "next"
    assert [c["prefix"] for c in served[1].calls] == ["sleep:0.6", "x = "]


async def test_async_client(served):
    client = AsyncWorkerClient(served[0], timeout_s=2.0)
    try:
        assert (await client.hello()).model == "fake-tiny"
        assert (await client.health()).served == 0
        results = await asyncio.gather(*(client.complete(request(f"a{i}", prefix=f"p{i}")) for i in range(3)))
        assert [r.id for r in results] == ["a0", "a1", "a2"]
        with pytest.raises(WorkerError):
            await client.complete(request("a-boom", prefix="boom"))
        assert (await client.info()).family == "fake"
    finally:
        client.close()


async def test_cancelling_an_async_call_cancels_the_request(served, client):
    live = functools.partial(asyncio.to_thread, wait_for_live_requests, client)  # probes the worker
    async_client = AsyncWorkerClient(served[0], timeout_s=2.0)
    try:
        slow = asyncio.create_task(async_client.complete(request("slow", prefix="sleep:0.6")))
        assert await live(1) == 1
        queued = asyncio.create_task(async_client.complete(request("queued")))
        assert await live(2) == 2
        queued.cancel()
        with pytest.raises(asyncio.CancelledError):
            await queued
        assert await live(1) == 1  # "queued" is gone while "slow" still runs
        assert (await slow).id == "slow"
        assert [c["prefix"] for c in served[1].calls] == ["sleep:0.6"]
    finally:
        async_client.close()


FAKE_WORKER = """
import sys
from engine.worker import Worker, serve_until_signal
class Runner:
    def info(self):
        return {"model": "fake", "family": "fake", "vocab_size": 8, "max_context": 8}
worker = Worker(Runner(), sys.argv[1])
sys.stderr.write("fake worker ready\\n")
serve_until_signal(worker)
"""


def test_sigterm_stops_a_subprocess_worker_cleanly(ipc_address):
    proc = start_worker_process([sys.executable, "-c", FAKE_WORKER, ipc_address], ipc_address,
                                timeout_s=10)
    with WorkerClient(ipc_address, timeout_s=2.0) as client:
        assert client.hello().model == "fake"
    assert stop_worker(proc, timeout_s=5) == 0


def test_a_worker_that_dies_at_startup_reports_its_stderr(ipc_address):
    script = "import sys; sys.stderr.write('no model in /nowhere\\n'); sys.exit(3)"
    with pytest.raises(WorkerStartError, match=r"code 3(.|\n)*no model in /nowhere"):
        start_worker_process([sys.executable, "-c", script], ipc_address, timeout_s=10)


def test_spawn_local_worker_reports_a_bad_model_folder():
    with pytest.raises(WorkerStartError, match=r"code 2(.|\n)*--model /nonexistent/model is not a folder"):
        spawn_local_worker(model_dir="/nonexistent/model", startup_timeout_s=20)


@pytest.mark.parametrize("address", ["ipc:///tmp/w.sock", "tcp://127.0.0.1:5555", "tcp://127.0.0.1:*"])
def test_loopback_binds_are_accepted(address):
    assert check_bind_address(address) == address


@pytest.mark.parametrize("address", ["tcp://0.0.0.0:5555", "tcp://*:5555", "tcp://10.0.0.2:5555",
                                     "tcp://127.0.0.1:70000", "inproc://x", "ipc://", "5555"])
def test_other_binds_are_refused(address):
    with pytest.raises(ValueError, match="CURVE"):
        check_bind_address(address)


def test_main_refuses_a_public_bind(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--bind", "tcp://0.0.0.0:5555"])
    assert info.value.code == 2 and "CURVE" in capsys.readouterr().err


def test_main_help_describes_every_flag(capsys):
    with pytest.raises(SystemExit):
        main(["--help"], prog="infill serve")
    out = capsys.readouterr().out
    assert all(flag in out for flag in ("infill serve", "--bind", "--model", "--threads"))
