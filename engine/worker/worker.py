"""The engine worker: a ZeroMQ ROUTER socket in front of a model runner, in one process.

Two threads. The IO thread owns every socket that faces clients: it receives frames, decodes and
validates them (`engine.wire.protocol`), answers protocol errors, Hello, InfoRequest and Health
itself, and hands each valid CompleteRequest (as an `Arrival`) and each Cancel (as a `CancelOrder`) to
the main loop through a queue. The main loop drains the queue into the engine core
(`engine.worker.core`: the scheduler and the model runner), runs one batched decoding step, and
passes each encoded reply back over an inproc PAIR pipe; the IO thread sends it. Every
CompleteRequest gets exactly one reply: a Result (done, deadline, cancelled) or an Error
(overloaded, internal, shutting down).

The intake is bounded: the IO thread keeps at most `max_in_flight` requests in flight (queued for
the main loop or held by the scheduler) and answers one more `overloaded` at once, without
queueing it; a request's first Cancel is queued, later ones are not, so the queue holds at most two
orders per request in flight. Rejected frames are logged at a bounded rate (`RateLimitedLog`).

A job is answered by whoever claims it first: the main loop when its reply is ready, or the IO
thread when the worker shuts down with it still live. The runner meets `engine.worker.work.Runner`
(see `engine.worker.runner.ModelRunner`). The process around it (flags, model loading, signals,
its parent) is `engine.worker.cli`.
"""
from __future__ import annotations

import logging
import queue
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import zmq

from engine.wire import transport
from engine.wire.keys import ServerKeys, make_curve_server, start_authenticator
from engine.wire.protocol import (PROTOCOL_VERSION, Cancel, CompleteRequest, Error, ErrorCode, Health,
                                    HealthOk, Hello, Info, InfoRequest, Message, ProtocolError, Welcome,
                                    decode, encode)
from engine.wire.ratelimit import RateLimitedLog
from engine.worker.core import EngineCore, EngineStats, Reply, internal_error
from engine.worker.scheduler import SchedulerConfig
from engine.worker.work import Runner

logger = logging.getLogger(__name__)

_POLL_S = 0.1  # how often the main loop looks at the stop flag while idle
_PIPE_SEND_TIMEOUT_MS = 2000  # the IO thread drains the pipe at once; longer means it has died
_LOG_FLUSH_MS = 1000  # how often an idle IO thread sums up the rejected frames it did not log one by one
# Requests in flight at the worker (queued for the main loop, or live in the scheduler) per request
# the scheduler holds (max_live + max_waiting): one more is refused as overloaded at once. Twice lets
# a burst reach the scheduler, which sheds by its own rules, while a flood cannot grow the queue.
IN_FLIGHT_PER_SCHEDULER_SLOT = 2
_STOP = b""  # the one-frame pipe message that tells the IO thread to finish
_PARTIAL = b"partial"  # the fourth frame of a pipe message that carries a Partial, not a final reply


@dataclass(slots=True)
class Arrival:
    """A validated CompleteRequest on its way from the IO thread to the main loop."""

    peer: bytes
    request: CompleteRequest
    arrival: float  # time.monotonic() when the frame was received
    cancel_queued: bool = False  # a Cancel of it is on its way to the main loop (IO thread only)
    _claimed: threading.Lock = field(default_factory=threading.Lock)

    @property
    def deadline(self) -> float:
        return self.arrival + self.request.deadline_ms / 1000.0

    def claim(self) -> bool:
        """True for the one caller that will answer this job."""
        return self._claimed.acquire(blocking=False)


@dataclass(slots=True)
class CancelOrder:
    """A client's Cancel of its live request, on its way to the main loop."""

    peer: bytes
    request_id: str


class _IOThread(threading.Thread):
    """Owns the ROUTER socket and the IO end of the reply pipe; nothing else touches them."""

    def __init__(self, router: zmq.Socket, pipe: zmq.Socket, jobs: queue.Queue, info: Info,
                 loop_state: Callable[[], tuple[bool, float]], stats: EngineStats,
                 max_in_flight: int) -> None:
        super().__init__(name="engine-io", daemon=True)
        self._router, self._pipe, self._jobs, self._info = router, pipe, jobs, info
        self._loop_state = loop_state  # (in a step, the age of the main loop's last tick)
        self._stats = stats  # the main loop's counters, read (never written) here
        self._max_in_flight = max_in_flight
        self._live: dict[tuple[bytes, str], Arrival] = {}
        self._rejections = RateLimitedLog(logger, what="rejected frames")
        self._start_time = time.monotonic()
        self._served = 0
        self._handlers = {Hello: self._on_hello, InfoRequest: self._on_info, Health: self._on_health,
                          CompleteRequest: self._on_complete, Cancel: self._on_cancel}

    def run(self) -> None:
        try:
            self._loop()
        except Exception:
            logger.exception("the IO thread failed; the worker stops")
        finally:
            self._router.close(linger=0)
            self._pipe.close(linger=0)

    def _loop(self) -> None:
        poller = zmq.Poller()
        poller.register(self._router, zmq.POLLIN)
        poller.register(self._pipe, zmq.POLLIN)
        while True:
            events = dict(poller.poll(_LOG_FLUSH_MS))
            self._rejections.tick()
            if self._pipe in events and not self._forward_reply(self._pipe.recv_multipart()):
                self._refuse_live()
                return
            if self._router in events:
                parts = self._router.recv_multipart()
                try:
                    self._on_frames(parts)
                except Exception as exc:  # a bug met by one frame must not stop the worker
                    logger.exception("failed on a frame from peer %s", parts[0].hex())
                    self._send(parts[0], internal_error(None, exc))

    def _send(self, peer: bytes, msg: Message) -> None:
        self._router.send_multipart([peer, encode(msg)])

    def _forward_reply(self, parts: list[bytes]) -> bool:
        """Send a reply from the main loop; False when the main loop asks the thread to stop. A
        Partial (a fourth frame, `_PARTIAL`) goes out only while its request is live and keeps it so."""
        if parts == [_STOP]:
            return False
        if len(parts) == 4:
            peer, request_id, frame, _ = parts
            if (peer, request_id.decode()) in self._live:
                self._router.send_multipart([peer, frame])
            return True
        peer, request_id, frame = parts
        self._live.pop((peer, request_id.decode()), None)
        self._served += 1
        self._router.send_multipart([peer, frame])
        return True

    def _refuse_live(self) -> None:
        for job in self._live.values():
            if job.claim():
                self._send(job.peer, Error(job.request.id, ErrorCode.SHUTTING_DOWN,
                                           "the worker is shutting down; retry on another worker"))
        self._live.clear()

    def _on_frames(self, parts: list[bytes]) -> None:
        arrival = time.monotonic()
        peer, frames = parts[0], parts[1:]
        if len(frames) != 1:
            self._send(peer, Error(None, ErrorCode.MALFORMED,
                                   f"expected one frame per message, got {len(frames)}"))
            return
        try:
            msg = decode(frames[0])
        except ProtocolError as exc:
            self._rejections.log("rejected a frame from peer %s: %s: %s", peer.hex(), exc.code, exc.message)
            self._send(peer, Error(exc.request_id, exc.code, exc.message))
            return
        handler = self._handlers.get(type(msg))
        if handler is None:
            self._send(peer, Error(getattr(msg, "id", None), ErrorCode.UNKNOWN_TYPE,
                                   f"the worker does not accept {type(msg).__name__} messages"))
            return
        handler(peer, msg, arrival)

    def _on_hello(self, peer: bytes, msg: Hello, arrival: float) -> None:
        if msg.version != PROTOCOL_VERSION:
            self._send(peer, Error(None, ErrorCode.VERSION_MISMATCH,
                                   f"the client speaks protocol version {msg.version}, this worker "
                                   f"speaks {PROTOCOL_VERSION}; upgrade the older side"))
            return
        logger.info("hello from %s (peer %s)", msg.client_name or "a client", peer.hex())
        info = self._info
        self._send(peer, Welcome(PROTOCOL_VERSION, info.model, info.vocab_size, info.max_context))

    def _on_info(self, peer: bytes, msg: InfoRequest, arrival: float) -> None:
        self._send(peer, self._info)

    def _on_health(self, peer: bytes, msg: Health, arrival: float) -> None:
        stats = self._stats
        in_step, loop_age_s = self._loop_state()
        self._send(peer, HealthOk(time.monotonic() - self._start_time, len(self._live), self._served,
                                  loop_age_s, stats.steps, stats.forward_passes, stats.step_requests,
                                  stats.carried, in_step))

    def _on_complete(self, peer: bytes, msg: CompleteRequest, arrival: float) -> None:
        key = (peer, msg.id)
        if key in self._live:
            self._send(peer, Error(msg.id, ErrorCode.INVALID_FIELD,
                                   f"field 'id' {msg.id!r} is already in flight; use a fresh id"))
            return
        if len(self._live) >= self._max_in_flight:
            self._send(peer, Error(msg.id, ErrorCode.OVERLOADED,
                                   f"the worker has {len(self._live)} requests in flight, its intake limit; "
                                   "retry later or on another worker"))
            return
        job = Arrival(peer, msg, arrival)
        self._live[key] = job
        self._jobs.put(job)

    def _on_cancel(self, peer: bytes, msg: Cancel, arrival: float) -> None:
        job = self._live.get((peer, msg.id))  # unknown ids are ignored: their one reply went out already
        if job is not None and not job.cancel_queued:
            job.cancel_queued = True
            self._jobs.put(CancelOrder(peer, msg.id))


class Worker:
    """Binds `address` at construction (errors surface there); `serve()` blocks until `stop()`.

    With `keys` the ROUTER is a CURVE server and a ZAP authenticator admits only the clients in
    the keys' allow-list; without, any local peer may connect (bind loopback addresses only).
    The main loop ticks once per iteration and on both sides of each decoding step; Health reports
    the age of its last tick and whether a step is in progress, so that clients tell a stuck loop
    from one inside a long step (`engine.client.watch`).
    """

    def __init__(self, runner: Runner, address: str, keys: ServerKeys | None = None,
                 scheduler: SchedulerConfig | None = None) -> None:
        cfg = scheduler or SchedulerConfig()
        self._core = EngineCore(runner, cfg)
        self.max_in_flight = IN_FLIGHT_PER_SCHEDULER_SLOT * (cfg.max_live + cfg.max_waiting)
        described = runner.info()
        info = Info(described["model"], described["family"], described["vocab_size"],
                    described["max_context"], PROTOCOL_VERSION)  # validated here, before binding
        self.model_name = info.model
        self._jobs: queue.Queue[Arrival | CancelOrder] = queue.Queue()
        self._stopping = False
        self._last_tick = time.monotonic()  # the main loop's; read by the IO thread for Health
        self._in_step = False  # set around each decoding step; read by the IO thread for Health
        self._ctx = zmq.Context()
        self._auth = None if keys is None else start_authenticator(self._ctx, keys)
        try:
            router = self._bind_router(address, keys)
            self._pipe = self._ctx.socket(zmq.PAIR)
            self._pipe.setsockopt(zmq.LINGER, 0)
            self._pipe.setsockopt(zmq.SNDTIMEO, _PIPE_SEND_TIMEOUT_MS)
            self._pipe.bind("inproc://engine-replies")
            io_pipe = self._ctx.socket(zmq.PAIR)
            io_pipe.setsockopt(zmq.LINGER, 0)
            io_pipe.connect("inproc://engine-replies")
        except zmq.ZMQError:
            self._close_context()
            raise
        # The sockets move to the IO thread; starting a thread is the memory barrier ZeroMQ asks for.
        self._io = _IOThread(router, io_pipe, self._jobs, info, self._loop_state, self._core.stats,
                             self.max_in_flight)

    def _bind_router(self, address: str, keys: ServerKeys | None) -> zmq.Socket:
        router = self._ctx.socket(zmq.ROUTER)
        transport.configure(router)
        if keys is not None:
            make_curve_server(router, keys)
        router.bind(address)
        self.address: str = router.getsockopt_string(zmq.LAST_ENDPOINT)
        return router

    def _loop_state(self) -> tuple[bool, float]:
        """(inside a step, seconds since the last tick), read in that order: the loop ticks before
        it clears `_in_step`, so a step seen ended is never reported with its old tick."""
        in_step = self._in_step
        return in_step, max(0.0, time.monotonic() - self._last_tick)

    def _step(self) -> list[Reply]:
        self._in_step = True
        self._last_tick = time.monotonic()
        try:
            return self._core.step()
        finally:
            self._last_tick = time.monotonic()
            self._in_step = False

    def _close_context(self) -> None:
        """Stop the authenticator (it owns sockets of its own), then the context."""
        if self._auth is not None:
            self._auth.stop()
        self._ctx.destroy(linger=0)

    def stop(self) -> None:
        """Ask `serve()` to return; only sets a flag, so it is safe in a signal handler."""
        self._stopping = True

    def serve(self) -> None:
        self._io.start()
        try:
            while not self._stopping and self._io.is_alive():
                self._last_tick = time.monotonic()
                self._send_replies(self._take_orders())
                self._send_replies(self._step())
                self._send_partials(self._core.take_partials())
        finally:
            self._shutdown()

    def _take_orders(self) -> list[Reply]:
        """Hand every queued job and cancel to the core; waits up to _POLL_S only when nothing is live."""
        replies: list[Reply] = []
        wait = self._core.is_idle
        while True:
            try:
                order = self._jobs.get(timeout=_POLL_S) if wait else self._jobs.get_nowait()
            except queue.Empty:
                return replies
            wait = False
            if isinstance(order, CancelOrder):
                replies += self._core.cancel(order.peer, order.request_id)
            else:
                replies += self._core.add(order)

    def _send_replies(self, replies: list[Reply]) -> None:
        for job, msg in replies:
            if job.claim():
                self._pipe.send_multipart([job.peer, job.request.id.encode(), self._encode(job, msg)])

    def _send_partials(self, partials: list[Reply]) -> None:
        for job, msg in partials:
            self._pipe.send_multipart([job.peer, job.request.id.encode(), encode(msg), _PARTIAL])

    @staticmethod
    def _encode(job: Arrival, msg: Message) -> bytes:
        try:
            return encode(msg)
        except Exception as exc:  # a reply that cannot be sent fails this request alone
            logger.exception("request %s: the reply failed to encode", job.request.id)
            return encode(internal_error(job.request.id, exc))

    def _shutdown(self) -> None:
        failed = not self._io.is_alive()
        try:
            self._pipe.send(_STOP, zmq.NOBLOCK)
        except zmq.Again:
            logger.error("the IO thread stopped reading replies")
        self._io.join()
        self._pipe.close(linger=0)
        self._close_context()
        logger.info("worker on %s stopped", self.address)
        if failed and not self._stopping:
            raise RuntimeError("the worker's IO thread failed; see the log above")


def serve_until_signal(worker: Worker) -> None:
    """Serve until SIGTERM or SIGINT; the handlers only set the worker's stop flag."""
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    for sig in previous:
        signal.signal(sig, lambda signum, frame: worker.stop())
    try:
        worker.serve()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
