"""The engine worker process: a ZeroMQ ROUTER socket in front of a model runner.

Two threads. The IO thread owns every socket that faces clients: it receives frames, decodes and
validates them (`engine.protocol`), answers protocol errors, Hello, InfoRequest and Health itself,
and hands each valid CompleteRequest (as a `Job`) and each Cancel (as a `CancelOrder`) to the main
loop through a queue. The main loop drains the queue into the engine core (`engine.core`: the
scheduler and the model runner), runs one batched decoding step, and passes each encoded reply
back over an inproc PAIR pipe; the IO thread sends it. Every CompleteRequest gets exactly one
reply: a Result (done, deadline, cancelled) or an Error (overloaded, internal, shutting down).

The intake is bounded: the IO thread keeps at most `max_in_flight` requests in flight (queued for
the main loop or held by the scheduler) and answers one more `overloaded` at once, without
queueing it; a request's first Cancel is queued, later ones are not, so the queue holds at most two
orders per request in flight. Rejected frames are logged at a bounded rate (`RateLimitedLog`).

A job is answered by whoever claims it first: the main loop when its reply is ready, or the IO
thread when the worker shuts down with it still live. The runner meets `engine.work.Runner`
(see `engine.runner.ModelRunner`).
"""
from __future__ import annotations

import argparse
import logging
import os
import queue
import re
import shutil
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import zmq

from engine import transport
from engine.core import EngineCore, EngineStats, Reply, internal_error
from engine.keys import ServerKeys, load_server_keys, make_curve_server, start_authenticator
from engine.private import check_private
from engine.protocol import (PROTOCOL_VERSION, Cancel, CompleteRequest, Error, ErrorCode, Health,
                             HealthOk, Hello, Info, InfoRequest, Message, ProtocolError, Welcome,
                             decode, encode)
from engine.scheduler import SchedulerConfig
from engine.supervisor import serve_workers, worker_addresses
from engine.ratelimit import RateLimitedLog
from infill.weights import DEFAULT_PREFIX_CACHE_MB, DEVICE_HELP, DTYPES, WEIGHTS, check_device, placement

logger = logging.getLogger(__name__)

DEFAULT_BIND = "tcp://127.0.0.1:5555"
_POLL_S = 0.1  # how often the main loop looks at the stop flag while idle
_PARENT_CHECK_S = 0.5  # how often a worker started by another process looks whether it is still there
_ORPHAN_EXIT_S = 10.0  # an orphan whose main loop has not stopped this long after being asked exits
_PIPE_SEND_TIMEOUT_MS = 2000  # the IO thread drains the pipe at once; longer means it has died
_LOG_FLUSH_MS = 1000  # how often an idle IO thread sums up the rejected frames it did not log one by one
# Requests in flight at the worker (queued for the main loop, or live in the scheduler) per request
# the scheduler holds (max_live + max_waiting): one more is refused as overloaded at once. Twice lets
# a burst reach the scheduler, which sheds by its own rules, while a flood cannot grow the queue.
IN_FLIGHT_PER_SCHEDULER_SLOT = 2
_STOP = b""  # the one-frame pipe message that tells the IO thread to finish
_PARTIAL = b"partial"  # the fourth frame of a pipe message that carries a Partial, not a final reply
_LOOPBACK_TCP = re.compile(r"tcp://127\.0\.0\.1:(\d{1,5}|\*)")
_ANY_TCP = re.compile(r"tcp://([^\s:/]+|\[[0-9a-fA-F:.]+\]):(\d{1,5}|\*)")


@dataclass(slots=True)
class Job:
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
        self._live: dict[tuple[bytes, str], Job] = {}
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
        job = Job(peer, msg, arrival)
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
    from one inside a long step (`engine.watch`).
    """

    def __init__(self, runner: Any, address: str, keys: ServerKeys | None = None,
                 scheduler: SchedulerConfig | None = None) -> None:
        cfg = scheduler or SchedulerConfig()
        self._core = EngineCore(runner, cfg)
        self.max_in_flight = IN_FLIGHT_PER_SCHEDULER_SLOT * (cfg.max_live + cfg.max_waiting)
        described = runner.info()
        info = Info(described["model"], described["family"], described["vocab_size"],
                    described["max_context"], PROTOCOL_VERSION)  # validated here, before binding
        self.model_name = info.model
        self._jobs: queue.Queue[Job | CancelOrder] = queue.Queue()
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
    def _encode(job: Job, msg: Message) -> bytes:
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


def remove_owned_dir(folder: Path | None) -> None:
    """Remove the folder this worker was given with --owned-dir (its ipc:// socket's), if any."""
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


def stop_with_parent(worker: Worker, parent_pid: int, owned_dir: Path | None = None,
                     ) -> threading.Thread:
    """A daemon thread that stops `worker` once `parent_pid` is no longer its parent: a supervisor
    or language server killed with SIGKILL (no chance to stop its children) leaves no orphan.
    Should the worker not be done `_ORPHAN_EXIT_S` later (a step that never ends), the thread
    removes `owned_dir` and ends the process itself."""
    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(_PARENT_CHECK_S)
        logger.warning("the parent process %d is gone; stopping", parent_pid)
        worker.stop()
        time.sleep(_ORPHAN_EXIT_S)  # a worker that stops in time ends this thread with it
        logger.error("the worker did not stop within %.0f s of its parent's end; exiting now",
                     _ORPHAN_EXIT_S)
        remove_owned_dir(owned_dir)
        os._exit(1)

    thread = threading.Thread(target=watch, name="engine-parent-watch", daemon=True)
    thread.start()
    return thread


def check_bind_address(address: str, curve: bool = False) -> str:
    """Return `address` if the worker may bind it, else raise ValueError saying what to use.

    Loopback (ipc:// or tcp://127.0.0.1) is always allowed; any other TCP address only with
    CURVE keys (`curve`), because whoever reaches it could otherwise use the worker.
    """
    if address.startswith("ipc://") and len(address) > len("ipc://"):
        return address
    tcp = _ANY_TCP.fullmatch(address)
    if tcp is None or (tcp.group(2) != "*" and int(tcp.group(2)) > 65535):
        raise ValueError(f"cannot bind {address!r}: use ipc://PATH, tcp://127.0.0.1:PORT, or "
                         "tcp://HOST:PORT with CURVE keys (--keys)")
    if not curve and not _LOOPBACK_TCP.fullmatch(address):
        raise ValueError(f"cannot bind {address!r} without CURVE keys: a non-loopback worker must "
                         "authenticate its clients; create keys with `infill keys` and pass "
                         "--keys DIR, or bind tcp://127.0.0.1:PORT")
    return address


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description="Serve code completions over ZeroMQ.")
    parser.add_argument("--bind", default=DEFAULT_BIND,
                        help=f"address to listen on: ipc://PATH, tcp://127.0.0.1:PORT, or with "
                             f"--keys tcp://HOST:PORT (default {DEFAULT_BIND}); with --workers N, "
                             f"the first of N (ports PORT..PORT+N-1, paths PATH.0..PATH.N-1)")
    parser.add_argument("--keys", type=Path, default=None, metavar="DIR",
                        help="CURVE key folder from `infill keys`: encrypt, and admit only the "
                             "clients in DIR/authorized (required for non-loopback --bind)")
    parser.add_argument("--workers", type=int, default=1,
                        help="worker processes to run, each on its own address, restarted if "
                             "they die (default 1)")
    parser.add_argument("--model", type=Path, default=None,
                        help="model folder (config.json, *.safetensors, tokenizer.json); "
                             "default: the bundled model")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch CPU threads (default: torch's own choice)")
    parser.add_argument("--parent-pid", type=int, default=None, metavar="PID",
                        help="stop when process PID is no longer this worker's parent (set by the "
                             "supervisors and servers that start workers)")
    parser.add_argument("--owned-dir", type=Path, default=None, metavar="DIR",
                        help="a private folder made for this worker (its ipc:// socket's), removed "
                             "when it stops, however it stops short of a SIGKILL (set by the "
                             "servers that start local workers)")
    add_model_flags(parser)
    return parser


def add_model_flags(parser: argparse.ArgumentParser) -> None:
    """The flags that say how a worker holds its model (`infill.weights` combines them)."""
    parser.add_argument("--device", default="auto", metavar="DEVICE",
                        help=f"where the model runs: {DEVICE_HELP} (default auto: the first CUDA "
                             "device if there is one, else the CPU)")
    parser.add_argument("--dtype", default="auto", choices=DTYPES,
                        help="the weights' dtype (default auto: bf16 on CUDA, fp32 on the CPU)")
    parser.add_argument("--weights", default="auto", choices=("auto", *WEIGHTS),
                        help="int8: int8 linear layers, a CPU path (faster there; see the model card "
                             "for the quality); fp32: fp32 weights (default auto: int8 on the CPU "
                             "when --dtype is auto, else the dtype's own weights)")
    parser.add_argument("--max-context", type=int, default=None, metavar="TOKENS",
                        help="the longest canvas a request may have (default: the model's trained "
                             "context; lower it to bound a large model's memory)")
    parser.add_argument("--prefix-cache-mb", type=int, default=DEFAULT_PREFIX_CACHE_MB, metavar="MB",
                        help="memory for the keys/values of recent canvases reused across keystrokes "
                             f"(default {DEFAULT_PREFIX_CACHE_MB}; 0 keeps none)")


def _load_runner(args: argparse.Namespace) -> Any:
    """The model runner the flags ask for; a ValueError when the flags or the model folder will not do."""
    # Imported here so that importing this module (and testing it with a fake runner) needs no torch.
    import torch

    from engine.causal_runner import CausalRunner, is_causal
    from engine.runner import ModelRunner
    from infill.paths import bundled_model_dir

    if args.threads is not None:
        torch.set_num_threads(args.threads)
    where = placement(args.device, args.dtype, args.weights, torch.cuda.device_count())
    logger.info("loading the model on %s in %s%s", where.device, where.dtype, " (int8 linear layers)" * where.int8)
    model_dir = args.model if args.model is not None else bundled_model_dir()
    if is_causal(model_dir):  # an autoregressive checkpoint: left to right, prefix only
        logger.info("%s is autoregressive: decoding left to right from the prefix alone", model_dir)
        return CausalRunner(model_dir, device=where.device, weights=where.weights, dtype=where.dtype,
                            max_context=args.max_context)
    return ModelRunner(model_dir, device=where.device, weights=where.weights, dtype=where.dtype,
                       max_context=args.max_context, prefix_cache_bytes=args.prefix_cache_mb * 2**20)


def _check_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> ServerKeys | None:
    """Validate the flags (exiting with a usage error); returns the CURVE keys, if any."""
    if args.owned_dir is not None and not args.owned_dir.is_dir():
        parser.error(f"--owned-dir {args.owned_dir} is not a folder; make it first, or omit the flag")
    try:
        keys = None if args.keys is None else load_server_keys(args.keys.expanduser())
        check_bind_address(args.bind, curve=keys is not None)
        worker_addresses(args.bind, args.workers)
        if args.owned_dir is not None:
            check_private(args.owned_dir)  # never remove a folder that others could have made
    except ValueError as exc:
        parser.error(str(exc))
    if args.threads is not None and args.threads < 1:
        parser.error(f"--threads must be at least 1, got {args.threads}")
    if args.workers < 1:
        parser.error(f"--workers must be at least 1, got {args.workers}")
    if args.model is not None and not args.model.is_dir():
        parser.error(f"--model {args.model} is not a folder; pass a model folder or omit --model")
    check_model_flags(parser, args)
    return keys


def check_model_flags(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse (with a usage error) model flags that are wrong on any machine; whether a CUDA
    device is there is known once torch is imported (`_load_runner`)."""
    try:
        check_device(args.device)  # then as if the machine had the CUDA device asked for, or none
        placement(args.device, args.dtype, args.weights, 1000 if args.device.startswith("cuda") else 0)
    except ValueError as exc:
        parser.error(str(exc))
    if args.max_context is not None and args.max_context < 1:
        parser.error(f"--max-context must be at least 1 token, got {args.max_context}")
    if args.prefix_cache_mb < 0:
        parser.error(f"--prefix-cache-mb must be 0 or more, got {args.prefix_cache_mb}")


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    """Entry point of `python -m engine` and `infill serve`."""
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    keys = _check_args(parser, args)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        if args.workers > 1:  # this process supervises, it loads no model
            return serve_workers(args.bind, args.workers, args.model, args.threads, args.keys,
                                 model_argv(args))
        return _serve_one(parser, args, keys)
    finally:
        remove_owned_dir(args.owned_dir)


def model_argv(args: argparse.Namespace) -> list[str]:
    """The model flags of `args` as a child worker's command line takes them (defaults left out)."""
    argv = []
    for flag in ("device", "dtype", "weights", "max_context", "prefix_cache_mb"):
        value = getattr(args, flag)
        if value is not None and value != build_parser().get_default(flag):
            argv += [f"--{flag.replace('_', '-')}", str(value)]
    return argv


def _serve_one(parser: argparse.ArgumentParser, args: argparse.Namespace, keys: ServerKeys | None) -> int:
    """One worker in this process, served until a signal or its parent's end."""
    try:
        runner = _load_runner(args)
    except ValueError as exc:  # the flags meet this machine, or the model folder is no checkpoint
        parser.error(str(exc))
    try:
        worker = Worker(runner, args.bind, keys)
    except zmq.ZMQError as exc:
        logger.error("cannot bind %s: %s; pick another address with --bind", args.bind, exc)
        return 1
    sys.stderr.write(f"infill worker ready on {worker.address} (model {worker.model_name})\n")
    sys.stderr.flush()
    if args.parent_pid is not None:
        stop_with_parent(worker, args.parent_pid, args.owned_dir)
    serve_until_signal(worker)
    return 0
