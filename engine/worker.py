"""The engine worker process: a ZeroMQ ROUTER socket in front of a model runner.

Two threads. The IO thread owns every socket that faces clients: it receives frames, decodes and
validates them (`engine.protocol`), answers protocol errors, Hello, InfoRequest, Health and Cancel
itself, and hands each valid CompleteRequest to the main loop as a `Job` through a queue. The main
loop takes jobs, runs the model and passes each encoded reply back over an inproc PAIR pipe; the IO
thread sends it. Every CompleteRequest gets exactly one reply: a Result or an Error.

A job is answered by whoever claims it first: the main loop when it starts it, or the IO thread
when a Cancel arrives while it is still queued (the reply then goes out at once). The runner is
any object with `info()` and `complete(...)` (see `engine.runner.ModelRunner`).
"""
from __future__ import annotations

import argparse
import logging
import queue
import re
import signal
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import zmq

from engine.protocol import (MAX_ERROR_CHARS, MAX_FRAME_BYTES, PROTOCOL_VERSION, Cancel,
                             CompleteRequest, Error, ErrorCode, Health, HealthOk, Hello, Info,
                             InfoRequest, Item, Message, ProtocolError, Result, Timings, Welcome,
                             decode, encode)

logger = logging.getLogger(__name__)

DEFAULT_BIND = "tcp://127.0.0.1:5555"
_POLL_S = 0.1  # how often the main loop looks at the stop flag while idle
_PIPE_SEND_TIMEOUT_MS = 2000  # the IO thread drains the pipe at once; longer means it has died
_STOP = b""  # the one-frame pipe message that tells the IO thread to finish
_LOOPBACK_TCP = re.compile(r"tcp://127\.0\.0\.1:(\d{1,5}|\*)")


@dataclass(slots=True)
class Job:
    """A validated CompleteRequest on its way from the IO thread to the main loop."""

    peer: bytes
    request: CompleteRequest
    arrival: float  # time.monotonic() when the frame was received
    _claimed: threading.Lock = field(default_factory=threading.Lock)

    @property
    def deadline(self) -> float:
        return self.arrival + self.request.deadline_ms / 1000.0

    def claim(self) -> bool:
        """True for the one caller that will answer this job."""
        return self._claimed.acquire(blocking=False)


def _elapsed_ms(since: float, until: float) -> float:
    return max(0.0, (until - since) * 1000.0)


def _empty_result(job: Job, stop_reason: str) -> Result:
    """The answer to a job dropped before it ran (cancelled or past its deadline)."""
    waited = _elapsed_ms(job.arrival, time.monotonic())
    return Result(job.request.id, [], Timings(waited, 0.0, 0.0, waited), stop_reason)


def _internal_error(request_id: str | None, exc: Exception) -> Error:
    message = f"the worker failed on this request: {type(exc).__name__}: {exc}"
    return Error(request_id, ErrorCode.INTERNAL, message[:MAX_ERROR_CHARS])


class _IOThread(threading.Thread):
    """Owns the ROUTER socket and the IO end of the reply pipe; nothing else touches them."""

    def __init__(self, router: zmq.Socket, pipe: zmq.Socket, jobs: queue.Queue, info: Info) -> None:
        super().__init__(name="engine-io", daemon=True)
        self._router, self._pipe, self._jobs, self._info = router, pipe, jobs, info
        self._live: dict[tuple[bytes, str], Job] = {}
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
            events = dict(poller.poll())
            if self._pipe in events and not self._forward_reply(self._pipe.recv_multipart()):
                self._refuse_live()
                return
            if self._router in events:
                parts = self._router.recv_multipart()
                try:
                    self._on_frames(parts)
                except Exception as exc:  # a bug met by one frame must not stop the worker
                    logger.exception("failed on a frame from peer %s", parts[0].hex())
                    self._send(parts[0], _internal_error(None, exc))

    def _send(self, peer: bytes, msg: Message) -> None:
        self._router.send_multipart([peer, encode(msg)])

    def _forward_reply(self, parts: list[bytes]) -> bool:
        """Send a reply from the main loop; False when the main loop asks the thread to stop."""
        if parts == [_STOP]:
            return False
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
            logger.warning("rejected a frame from peer %s: %s: %s", peer.hex(), exc.code, exc.message)
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
        self._send(peer, HealthOk(time.monotonic() - self._start_time, len(self._live), self._served))

    def _on_complete(self, peer: bytes, msg: CompleteRequest, arrival: float) -> None:
        if msg.kind != "fim":
            self._send(peer, Error(msg.id, ErrorCode.UNSUPPORTED,
                                   f"kind '{msg.kind}' is not served by this worker yet; send 'fim'"))
            return
        key = (peer, msg.id)
        if key in self._live:
            self._send(peer, Error(msg.id, ErrorCode.INVALID_FIELD,
                                   f"field 'id' {msg.id!r} is already in flight; use a fresh id"))
            return
        job = Job(peer, msg, arrival)
        self._live[key] = job
        self._jobs.put(job)

    def _on_cancel(self, peer: bytes, msg: Cancel, arrival: float) -> None:
        job = self._live.get((peer, msg.id))
        if job is not None and job.claim():
            del self._live[(peer, msg.id)]
            self._served += 1
            self._send(peer, _empty_result(job, "cancelled"))


class Worker:
    """Binds `address` at construction (errors surface there); `serve()` blocks until `stop()`."""

    def __init__(self, runner: Any, address: str) -> None:
        self._runner = runner
        described = runner.info()
        info = Info(described["model"], described["family"], described["vocab_size"],
                    described["max_context"], PROTOCOL_VERSION)  # validated here, before binding
        self.model_name = info.model
        self._jobs: queue.Queue[Job] = queue.Queue()
        self._stopping = False
        self._ctx = zmq.Context()
        try:
            router = self._ctx.socket(zmq.ROUTER)
            router.setsockopt(zmq.LINGER, 0)
            router.setsockopt(zmq.MAXMSGSIZE, MAX_FRAME_BYTES)
            router.bind(address)
            self.address: str = router.getsockopt_string(zmq.LAST_ENDPOINT)
            self._pipe = self._ctx.socket(zmq.PAIR)
            self._pipe.setsockopt(zmq.LINGER, 0)
            self._pipe.setsockopt(zmq.SNDTIMEO, _PIPE_SEND_TIMEOUT_MS)
            self._pipe.bind("inproc://engine-replies")
            io_pipe = self._ctx.socket(zmq.PAIR)
            io_pipe.setsockopt(zmq.LINGER, 0)
            io_pipe.connect("inproc://engine-replies")
        except zmq.ZMQError:
            self._ctx.destroy(linger=0)
            raise
        # The sockets move to the IO thread; starting a thread is the memory barrier ZeroMQ asks for.
        self._io = _IOThread(router, io_pipe, self._jobs, info)

    def stop(self) -> None:
        """Ask `serve()` to return; only sets a flag, so it is safe in a signal handler."""
        self._stopping = True

    def serve(self) -> None:
        self._io.start()
        try:
            while not self._stopping and self._io.is_alive():
                try:
                    job = self._jobs.get(timeout=_POLL_S)
                except queue.Empty:
                    continue
                if job.claim():
                    self._pipe.send_multipart([job.peer, job.request.id.encode(), self._reply(job)])
        finally:
            self._shutdown()

    def _shutdown(self) -> None:
        failed = not self._io.is_alive()
        try:
            self._pipe.send(_STOP, zmq.NOBLOCK)
        except zmq.Again:
            logger.error("the IO thread stopped reading replies")
        self._io.join()
        self._pipe.close(linger=0)
        self._ctx.term()
        logger.info("worker on %s stopped", self.address)
        if failed and not self._stopping:
            raise RuntimeError("the worker's IO thread failed; see the log above")

    def _reply(self, job: Job) -> bytes:
        try:
            return encode(self._answer(job))
        except Exception as exc:  # a failure fails this request alone
            logger.exception("request %s failed", job.request.id)
            return encode(_internal_error(job.request.id, exc))

    def _answer(self, job: Job) -> Result:
        if time.monotonic() >= job.deadline:
            return _empty_result(job, "deadline")
        req, started = job.request, time.monotonic()
        completion = self._runner.complete(req.prefix, req.suffix, req.mode, req.max_tokens,
                                           job.deadline, dict(req.decoder))
        finished = time.monotonic()
        timings = Timings(_elapsed_ms(job.arrival, started), completion.prefill_ms,
                          completion.decode_ms, _elapsed_ms(job.arrival, finished))
        item = Item(completion.text, completion.confidence, completion.forward_passes)
        logger.debug("request %s: %s in %.1f ms", req.id, completion.stop_reason, timings.total_ms)
        return Result(req.id, [item], timings, completion.stop_reason)


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


def check_bind_address(address: str) -> str:
    """Return `address` if the worker may bind it, else raise ValueError saying what to use."""
    if address.startswith("ipc://") and len(address) > len("ipc://"):
        return address
    if _LOOPBACK_TCP.fullmatch(address):
        port = address.rsplit(":", 1)[1]
        if port == "*" or int(port) <= 65535:
            return address
    raise ValueError(f"cannot bind {address!r}: use ipc://PATH or tcp://127.0.0.1:PORT; a remote "
                     "(non-loopback) worker needs CURVE keys, which this version does not support")


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description="Serve code completions over ZeroMQ.")
    parser.add_argument("--bind", default=DEFAULT_BIND,
                        help=f"address to listen on: ipc://PATH or tcp://127.0.0.1:PORT "
                             f"(default {DEFAULT_BIND})")
    parser.add_argument("--model", type=Path, default=None,
                        help="model folder (config.json, *.safetensors, tokenizer.json); "
                             "default: the bundled model")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch CPU threads (default: torch's own choice)")
    return parser


def _load_runner(model: Path | None, threads: int | None) -> Any:
    # Imported here so that importing this module (and testing it with a fake runner) needs no torch.
    import torch

    from engine.runner import ModelRunner
    from infill.paths import bundled_model_dir

    if threads is not None:
        torch.set_num_threads(threads)
    return ModelRunner(model if model is not None else bundled_model_dir(), device="cpu")


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    """Entry point of `python -m engine` and `infill serve`."""
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    try:
        address = check_bind_address(args.bind)
    except ValueError as exc:
        parser.error(str(exc))
    if args.threads is not None and args.threads < 1:
        parser.error(f"--threads must be at least 1, got {args.threads}")
    if args.model is not None and not args.model.is_dir():
        parser.error(f"--model {args.model} is not a folder; pass a model folder or omit --model")
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    runner = _load_runner(args.model, args.threads)
    try:
        worker = Worker(runner, address)
    except zmq.ZMQError as exc:
        logger.error("cannot bind %s: %s; pick another address with --bind", address, exc)
        return 1
    sys.stderr.write(f"infill worker ready on {worker.address} (model {worker.model_name})\n")
    sys.stderr.flush()
    serve_until_signal(worker)
    return 0
