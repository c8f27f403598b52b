"""Tests of the engine worker and its clients over real ipc:// sockets, with a fake model runner."""
from __future__ import annotations

import asyncio
import contextlib
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

from engine.client.async_client import AsyncWorkerClient
from engine.client.calls import WorkerError, WorkerTimeout
from engine.launch import WorkerStartError, spawn_local_worker, start_worker_process, stop_worker
from engine.wire.protocol import (MAX_FRAME_BYTES, PROTOCOL_VERSION, Cancel, CompleteRequest, Error,
                                    ErrorCode, Health, HealthOk, Hello, Hole, MsgType, Result, decode,
                                    encode)
from engine.client.sync_client import WorkerClient
from engine.worker.cli import check_bind_address, main
from engine.worker.scheduler import SchedulerConfig
from engine.worker.worker import Worker

pytestmark = pytest.mark.timeout(120)

REPLY_WAIT_S = 30.0  # how long a test waits for a reply or a state: only a broken worker needs it
GATED_DEADLINE_MS = 60_000  # a gated request outlives any wait for it

INFO = {"model": "fake-tiny", "family": "fake", "vocab_size": 256, "max_context": 512}


@dataclass(slots=True)
class FakeCompletion:
    text: str
    confidence: float
    forward_passes: int
    stop_reason: str


@dataclass(slots=True, eq=False)
class FakeDecoding:
    pieces: tuple[str, ...]
    steps_left: int
    step_s: float  # how long a step that holds it sleeps
    gated: bool = False  # its steps count only once the runner's gate is open
    passes: int = 0
    stop_reason: str = "done"
    step_tokens: int = 4
    prepare_ms: float = 0.5
    prefill_ms: float = 1.5
    decode_ms: float = 2.5

    @property
    def prefix(self) -> str:
        return self.pieces[0]

    @property
    def done(self) -> bool:
        return self.steps_left == 0


class FakeRunner:
    """Echoes each hole's context (the text before it, "|", the text after it) after 3 steps.
    Prefixes: "boom" fails every step it is in, "sleep:S" takes 10 steps of S/10 seconds, "hold"
    never finishes before its deadline, "gated:S" takes steps of S seconds and finishes 3 steps
    after the test sets `gate` (so a test says when it ends, not a clock)."""

    def __init__(self) -> None:
        self.calls: list[dict] = []
        self.batches: list[int] = []  # the size of each step's batch
        self.gate = threading.Event()

    def info(self) -> dict:
        return dict(INFO)

    def start(self, job, deadline) -> FakeDecoding:
        hole = job.holes[0]
        self.calls.append(dict(prefix=job.prefix, suffix=job.suffix, mode=hole.mode, max_tokens=hole.max_tokens,
                               deadline=deadline, overrides=dict(job.decoder), holes=len(job.holes)))
        if job.prefix.startswith("sleep:"):
            return FakeDecoding(job.pieces, 10, float(job.prefix.split(":")[1]) / 10)
        if job.prefix.startswith("gated:"):
            return FakeDecoding(job.pieces, 3, float(job.prefix.split(":")[1]), gated=True)
        return FakeDecoding(job.pieces, 10**9 if job.prefix == "hold" else 3, 0.0)

    def step(self, decodings: list[FakeDecoding]) -> int:
        self.batches.append(len(decodings))
        if any(d.prefix == "boom" for d in decodings):
            raise RuntimeError("the fake model exploded")
        time.sleep(max(d.step_s for d in decodings))
        for d in decodings:
            counted = not d.gated or self.gate.is_set()
            d.steps_left, d.passes = d.steps_left - counted, d.passes + 1
        return 1

    def fill_rest(self, decoding: FakeDecoding) -> None:
        decoding.steps_left, decoding.stop_reason = 0, "deadline"

    def answers(self, d: FakeDecoding) -> list[FakeCompletion]:
        return [FakeCompletion(f"{before}|{after}", 0.75, d.passes, d.stop_reason)
                for before, after in zip(d.pieces, d.pieces[1:])]

    def typed_on(self, decoding: FakeDecoding, typed: str, deadline: float) -> None:
        return None  # never hands a decoding over: every request decodes its own


def request(rid: str, prefix: str = "x = ", deadline_ms: int = 2000, **fields) -> CompleteRequest:
    return CompleteRequest(rid, "fim", prefix, "\n", deadline_ms=deadline_ms, **fields)


@pytest.fixture
def ipc_address():
    """A fresh ipc:// address in a short private folder (socket paths are capped near 100 bytes)."""
    folder = tempfile.mkdtemp(prefix="iw-")
    yield f"ipc://{folder}/w.sock"
    shutil.rmtree(folder, ignore_errors=True)


# The fake runner's steps take what a test says, so the load-shedding bounds (time per step, wait
# for room) stay off unless a test sets them: they have tests of their own.
NO_SHEDDING = SchedulerConfig(max_wait_s=None, max_slowdown=None)


@contextlib.contextmanager
def serving(runner, address: str, scheduler: SchedulerConfig = NO_SHEDDING):
    """A worker serving `runner` on `address` in a thread; yields its address."""
    worker = Worker(runner, address, scheduler=scheduler)
    thread = threading.Thread(target=worker.serve, name="test-worker")
    thread.start()
    try:
        yield worker.address
    finally:
        worker.stop()
        thread.join(timeout=5)
    assert not thread.is_alive()


@pytest.fixture
def served(ipc_address):
    """A worker serving a FakeRunner on a private ipc:// socket, in a thread."""
    runner = FakeRunner()
    with serving(runner, ipc_address) as address:
        yield address, runner


class RawPeer:
    """A bare DEALER socket, to send frames no client would and to pipeline requests."""

    def __init__(self, address: str) -> None:
        self._ctx = zmq.Context()
        self.sock = self._ctx.socket(zmq.DEALER)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.connect(address)

    def send(self, frame: bytes) -> None:
        self.sock.send(frame)

    def recv(self, timeout_ms: int = int(REPLY_WAIT_S * 1000)):
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
    with WorkerClient(served[0], timeout_s=REPLY_WAIT_S) as c:
        yield c


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


def test_cancel_answers_a_live_request_between_steps(served, raw):
    raw.send(encode(request("slow", prefix="gated:0.05", deadline_ms=GATED_DEADLINE_MS)))
    raw.send(encode(request("held", prefix="hold")))  # never finishes on its own
    raw.send(encode(Cancel("held")))
    raw.send(encode(Cancel("never-sent")))  # unknown ids are ignored
    cancelled = raw.recv()
    assert (cancelled.id, cancelled.stop_reason, cancelled.items) == ("held", "cancelled", [])
    served[1].gate.set()  # "slow" ran beside it all along
    assert raw.recv().id == "slow"
    assert not raw.sock.poll(200)  # one reply per request


def test_expired_work_is_dropped_if_it_never_ran_else_answered_anytime(ipc_address):
    runner = FakeRunner()
    with serving(runner, ipc_address, SchedulerConfig(max_live=1)) as address:
        peer = RawPeer(address)
        peer.send(encode(request("running", prefix="hold", deadline_ms=300)))
        peer.send(encode(request("waiting", deadline_ms=50)))  # no room beside "running"
        replies = {r.id: r for r in (peer.recv(), peer.recv())}
        assert not peer.sock.poll(200)
        peer.close()
    assert (replies["waiting"].stop_reason, replies["waiting"].items) == ("deadline", [])
    late = replies["running"]
    assert late.stop_reason == "deadline" and late.items[0].text == "hold|\n"
    assert late.items[0].forward_passes >= 1
    assert set(runner.batches) == {1}


def test_requests_in_flight_together_share_steps(served, raw, client):
    for i in range(4):
        raw.send(encode(request(f"r{i}", prefix="sleep:0.2")))
    replies = [raw.recv() for _ in range(4)]
    assert not raw.sock.poll(100)
    assert sorted(r.id for r in replies) == ["r0", "r1", "r2", "r3"]
    assert all(r.stop_reason == "done" and r.items[0].forward_passes == 10 for r in replies)
    health = client.health()
    assert health.step_requests == 40 and health.forward_passes == health.steps < 40
    assert max(served[1].batches) > 1


def test_a_newer_request_of_the_session_supersedes_the_older(served, raw):
    other = RawPeer(served[0])  # a client sends each call in flight on a socket of its own
    try:
        other.send(encode(request("old", prefix="hold", session="doc")))
        other.send(encode(Health()))  # answered once "old" is on its way to the main loop
        assert isinstance(other.recv(), HealthOk)
        raw.send(encode(request("elsewhere", prefix="hold", session="other-doc")))
        raw.send(encode(request("new", session="doc")))
        superseded, answered = other.recv(), raw.recv()
        assert (superseded.id, superseded.stop_reason, superseded.items) == ("old", "cancelled", [])
        assert (answered.id, answered.stop_reason) == ("new", "done")
        raw.send(encode(Cancel("elsewhere")))
        assert raw.recv().id == "elsewhere"
        assert not raw.sock.poll(100) and not other.sock.poll(100)
    finally:
        other.close()


def test_a_request_that_waits_too_long_for_room_is_refused_at_once(ipc_address):
    with serving(FakeRunner(), ipc_address, SchedulerConfig(max_live=1, max_wait_s=0.2, shed_queue=1)) as address:
        peer = RawPeer(address)
        peer.send(encode(request("a", prefix="hold")))
        peer.send(encode(request("b", deadline_ms=5000)))
        refused = peer.recv()
        assert (refused.id, refused.code) == ("b", ErrorCode.OVERLOADED) and "waited" in refused.message
        peer.send(encode(Cancel("a")))
        assert peer.recv().stop_reason == "cancelled"
        peer.close()


def test_beyond_its_bounds_the_worker_answers_overloaded(ipc_address):
    with serving(FakeRunner(), ipc_address, SchedulerConfig(max_live=1, max_waiting=1, max_wait_s=None)) as address:
        peer = RawPeer(address)
        peer.send(encode(request("a", prefix="hold")))
        peer.send(encode(request("b", prefix="hold", session="s")))
        peer.send(encode(request("c")))
        refused = peer.recv()
        assert (refused.id, refused.code) == ("c", ErrorCode.OVERLOADED) and "retry" in refused.message
        peer.send(encode(request("d", session="s", deadline_ms=100)))  # supersedes "b": room for it
        superseded, waited = peer.recv(), peer.recv()
        assert (superseded.id, superseded.stop_reason) == ("b", "cancelled")
        assert (waited.id, waited.stop_reason, waited.items) == ("d", "deadline", [])  # "a" holds the batch
        peer.send(encode(Cancel("a")))
        assert peer.recv().stop_reason == "cancelled"
        assert not peer.sock.poll(100)
        peer.close()


def test_multipart_messages_are_malformed(raw):
    raw.sock.send_multipart([encode(request("a")), b"extra"])
    reply = raw.recv()
    assert reply.code == ErrorCode.MALFORMED and "one frame" in reply.message


def test_oversized_frames_are_refused_by_the_socket(served, raw):
    raw.send(bytes([MsgType.HEALTH]) + b"\x00" * MAX_FRAME_BYTES)
    assert not raw.sock.poll(200)  # the worker dropped the connection instead of reading it
    with WorkerClient(served[0], timeout_s=REPLY_WAIT_S) as fresh:
        assert fresh.health().live_requests == 0


def test_concurrent_calls_from_a_thread_pool(client):
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda i: client.complete(request(f"r{i}", prefix=f"p{i}")), range(12)))
    assert [r.items[0].text for r in results] == [f"p{i}|\n" for i in range(12)]


def wait_for_live_requests(client: WorkerClient, expected: int) -> None:
    """Returns once the worker holds `expected` live requests; fails after REPLY_WAIT_S."""
    deadline = time.monotonic() + REPLY_WAIT_S
    while client.health().live_requests != expected:
        assert time.monotonic() < deadline, f"the worker never held {expected} live requests"
        time.sleep(0.01)


def test_client_timeout_cancels_the_request(served, raw, client):
    # "slow" runs in steps of 0.3 s until the gate opens: "queued" arrives during a step
    raw.send(encode(request("slow", prefix="gated:0.3", deadline_ms=GATED_DEADLINE_MS)))
    wait_for_live_requests(client, 1)  # "slow" is in before "queued"
    client.timeout_s = 0.05
    with pytest.raises(WorkerTimeout):
        client.complete(request("queued", prefix="hold", deadline_ms=1))
    client.timeout_s = REPLY_WAIT_S
    wait_for_live_requests(client, 1)  # "queued" is off, "slow" still runs
    served[1].gate.set()
    assert raw.recv().id == "slow"
    assert client.complete(request("next")).id == "next"
    assert [c["prefix"] for c in served[1].calls] == ["gated:0.3", "x = "]  # "queued" was never laid out


async def test_async_client(served):
    client = AsyncWorkerClient(served[0], timeout_s=REPLY_WAIT_S)
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
    async_client = AsyncWorkerClient(served[0], timeout_s=REPLY_WAIT_S)
    try:
        slow = asyncio.create_task(async_client.complete(
            request("slow", prefix="gated:0.06", deadline_ms=GATED_DEADLINE_MS)))
        await live(1)
        queued = asyncio.create_task(async_client.complete(  # only its Cancel ends it
            request("queued", prefix="hold", deadline_ms=GATED_DEADLINE_MS)))
        await live(2)
        queued.cancel()
        with pytest.raises(asyncio.CancelledError):
            await queued
        await live(1)  # "queued" is gone while "slow" still runs
        served[1].gate.set()
        assert (await slow).id == "slow"
        laid_out = [c["prefix"] for c in served[1].calls]  # "queued" only if a step began before its cancel
        assert laid_out in (["gated:0.06"], ["gated:0.06", "hold"])
    finally:
        async_client.close()


FAKE_WORKER = """
import sys
from engine.worker.worker import Worker, serve_until_signal
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
    with WorkerClient(ipc_address, timeout_s=REPLY_WAIT_S) as client:
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
