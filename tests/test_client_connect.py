"""The front ends' one `connect` (`engine.client.connect`) and the blocking face of the client
(`engine.client.sync_client`), against a bare ROUTER socket that answers as this test says."""
from __future__ import annotations

import threading

import pytest
import zmq

from engine.client.calls import WorkerError
from engine.client.connect import addresses_of, connect
from engine.client.sync_client import WorkerClient
from engine.wire import transport
from engine.wire.protocol import Error, ErrorCode, Hello, Welcome, decode, encode

WAIT_S = 30.0  # a guard against a hang only: each step below ends on an event


class FakeWorker:
    """A ROUTER on `address` that answers each Hello with `reply(hello)` (None: no answer)."""

    def __init__(self, address: str, reply) -> None:
        self.address, self.reply = address, reply
        self.heard = threading.Event()
        self._ctx = zmq.Context()
        self._sock = self._ctx.socket(zmq.ROUTER)
        transport.configure(self._sock)
        self._sock.bind(address)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            if not self._sock.poll(50):
                continue
            peer, frame = self._sock.recv_multipart()
            message = decode(frame)
            self.heard.set()
            answer = self.reply(message) if isinstance(message, Hello) else None
            if answer is not None:
                self._sock.send_multipart([peer, encode(answer)])

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self._sock.close(linger=0)
        self._ctx.term()


@pytest.fixture
def address(tmp_path):
    return f"ipc://{tmp_path}/w.sock"


def test_addresses_of_reads_a_comma_list_and_drops_blanks():
    assert addresses_of(" ipc:///a , ,tcp://h:1,") == ["ipc:///a", "tcp://h:1"]
    assert addresses_of(" , ") == []


async def test_connect_greets_and_names_the_model(address):
    worker = FakeWorker(address, lambda hello: Welcome(hello.version, "tiny-model", 64, 128))
    try:
        connected = await connect([address], "test", greet_timeout_s=WAIT_S)
        assert (connected.model, connected.refused) == ("tiny-model", None)
        connected.pool.close()
    finally:
        worker.close()


async def test_a_refused_greeting_is_returned_for_the_front_end_to_read(address):
    worker = FakeWorker(address, lambda hello: Error(None, ErrorCode.VERSION_MISMATCH, "speak 99"))
    try:
        connected = await connect([address], "test", greet_timeout_s=WAIT_S)
        assert connected.model is None and isinstance(connected.refused, WorkerError)
        assert connected.refused.code == ErrorCode.VERSION_MISMATCH
        connected.pool.close()
    finally:
        worker.close()


async def test_a_silent_worker_gives_a_pool_without_a_model_nor_a_refusal(address):
    worker = FakeWorker(address, lambda hello: None)
    try:
        connected = await connect([address], "test", timeout_s=0.2, greet_timeout_s=0.5)
        assert worker.heard.is_set()  # it was asked
        assert (connected.model, connected.refused) == (None, None)
        connected.pool.close()
    finally:
        worker.close()


async def test_connect_refuses_no_address():
    with pytest.raises(ValueError, match="at least one worker address"):
        await connect([], "test")


def test_the_blocking_face_answers_from_its_own_loop_and_closing_ends_a_call_in_flight(address):
    holding = threading.Event()

    def reply(hello: Hello) -> Welcome | None:
        if hello.client_name == "hold":
            holding.set()
            return None
        return Welcome(hello.version, "tiny-model", 64, 128)

    worker = FakeWorker(address, reply)
    client = WorkerClient(address, timeout_s=WAIT_S)
    held = WorkerClient(address, timeout_s=WAIT_S, client_name="hold")
    ended: list[BaseException] = []

    def wait_forever() -> None:
        try:
            held.hello()
        except BaseException as exc:  # noqa: BLE001 - what ended the call is the assertion
            ended.append(exc)

    waiter = threading.Thread(target=wait_forever)
    try:
        assert client.hello().model == "tiny-model"
        waiter.start()
        assert holding.wait(WAIT_S)  # the held call is at the worker
        held.close()  # the call in flight ends now, not after WAIT_S
        waiter.join(WAIT_S)
        assert not waiter.is_alive() and ended and not isinstance(ended[0], TimeoutError)
        with pytest.raises(RuntimeError, match="closed"):
            held.hello()
    finally:
        client.close()
        held.close()
        worker.close()
