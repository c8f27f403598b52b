"""A worker on a fake model runner, for the worker's tests over real ipc:// sockets: the runner
(`FakeRunner`: what each prefix makes a request do), a worker serving it in a thread (`serving`),
a bare DEALER peer (`RawPeer`), and the fixtures the test files import: `ipc_address`, `served`
(a worker on a FakeRunner), `raw` (a peer of it) and `client` (a WorkerClient of it)."""
from __future__ import annotations

import contextlib
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass

import pytest
import zmq

from engine.client.sync_client import WorkerClient
from engine.wire.protocol import CompleteRequest, decode
from engine.worker.scheduler import SchedulerConfig
from engine.worker.worker import Worker

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


def wait_for_live_requests(client: WorkerClient, expected: int) -> None:
    """Returns once the worker holds `expected` live requests; fails after REPLY_WAIT_S."""
    deadline = time.monotonic() + REPLY_WAIT_S
    while client.health().live_requests != expected:
        assert time.monotonic() < deadline, f"the worker never held {expected} live requests"
        time.sleep(0.01)
