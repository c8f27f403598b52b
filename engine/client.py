"""Clients of the engine worker, and a launcher for a worker on this machine.

`WorkerClient` blocks and may be shared by a thread pool; `AsyncWorkerClient` has the same methods
as coroutines on `zmq.asyncio` and never blocks its event loop. Both keep a pool of DEALER
sockets (at most `MAX_IDLE_SOCKETS` idle: a burst's extra ones are closed): a call takes one socket, sends its request and reads until the reply that matches it
(by request id and reply type; anything else is dropped). A call that times out or is cancelled
sends `Cancel` for its completion request and closes its socket, so no late reply can reach a
later call. An `Error` reply is raised as `WorkerError`; no reply in time as `WorkerTimeout`.
`AsyncWorkerClient.stream` sends a completion request with `stream` set and yields its `Partial`
replies as they come, then its `Result`; a consumer that stops early cancels the request.

Sockets carry ZMTP heartbeats (`engine.transport`) and, given `ClientKeys`, CURVE encryption
and authentication (`engine.keys`). `spawn_local_worker` starts `python -m engine` on a private
ipc:// socket and waits for its handshake; `stop_worker` ends it.
"""
from __future__ import annotations

import argparse
import asyncio
import collections
import dataclasses
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import IO, Any

import zmq
import zmq.asyncio

from engine import transport
from engine.keys import ClientKeys, make_curve_client
from engine.protocol import (PROTOCOL_VERSION, Cancel, CompleteRequest, Error,
                             Health, HealthOk, Hello, Info, InfoRequest, Message, Partial,
                             ProtocolError, Result, Welcome, decode, encode)
from infill.weights import DEVICE_HELP, DTYPES, check_device

logger = logging.getLogger(__name__)
_child_logger = logging.getLogger(__name__ + ".worker_stderr")

DEFAULT_TIMEOUT_S = 5.0  # for handshakes; a completion waits its deadline plus this much
DEFAULT_STARTUP_TIMEOUT_S = 60.0  # importing torch and loading a model takes seconds on a CPU
# Plus this much per GB of a model folder's weights: a 7B bf16 checkpoint (15 GB) read from a slow
# disk (100 MB/s) and moved to a GPU, then its kernels compiled in the warm-up.
STARTUP_S_PER_GB = 15.0
_CANCEL_LINGER_MS = 100  # time for a Cancel to leave a socket that is being closed
MAX_IDLE_SOCKETS = 8  # kept for reuse after a burst; the rest are closed (each costs fds at both
#   ends and its ZMTP heartbeats cost CPU while idle)
_READY_POLL_S = 0.25  # how often the launcher retries the handshake while a worker starts
_STDERR_TAIL_LINES = 30
_REPLY_TYPES: dict[type, type] = {Hello: Welcome, InfoRequest: Info, Health: HealthOk,
                                  CompleteRequest: Result}


class WorkerError(Exception):
    """The worker answered with an Error reply."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class WorkerTimeout(TimeoutError):
    """No reply from the worker in time."""


class WorkerStartError(RuntimeError):
    """A local worker process did not come up; the message carries its stderr tail."""


def _is_reply_to(request: Message, reply: Message) -> bool:
    request_id = getattr(request, "id", None)
    if isinstance(reply, Error):
        return reply.id is None or reply.id == request_id
    if isinstance(reply, Partial):
        return isinstance(request, CompleteRequest) and request.stream and reply.id == request_id
    return isinstance(reply, _REPLY_TYPES[type(request)]) and getattr(reply, "id", None) == request_id


def _read_reply(frame: bytes, request: Message) -> Message | None:
    """The decoded reply if it answers `request`, else None (logged and dropped)."""
    try:
        reply = decode(frame)
    except ProtocolError as exc:
        logger.warning("dropped an unreadable reply: %s: %s", exc.code, exc.message)
        return None
    if not _is_reply_to(request, reply):
        logger.debug("dropped a stray %s", type(reply).__name__)
        return None
    return reply


def _unwrap(reply: Message) -> Any:
    if isinstance(reply, Error):
        raise WorkerError(reply.code, reply.message)
    return reply


def _timeout_for(request: Message, timeout_s: float) -> float:
    if isinstance(request, CompleteRequest):
        return request.deadline_ms / 1000.0 + timeout_s
    return timeout_s


def _connect(sock: zmq.Socket, address: str, keys: ClientKeys | None) -> None:
    transport.configure(sock)
    if keys is not None:
        make_curve_client(sock, keys)
    sock.connect(address)


def _abandon(sock: zmq.Socket, request: Message) -> None:
    """Close a socket whose call did not finish, cancelling its completion request first."""
    if sock.closed:
        return
    linger = 0
    if isinstance(request, CompleteRequest):
        try:
            zmq.Socket.shadow(sock.underlying).send(encode(Cancel(request.id)), zmq.NOBLOCK)
            linger = _CANCEL_LINGER_MS
        except zmq.ZMQError as exc:
            logger.debug("could not cancel request %s: %s", request.id, exc)
    sock.close(linger=linger)


class WorkerClient:
    """A blocking client; safe to call from many threads at once (one socket per call in flight)."""

    def __init__(self, address: str, timeout_s: float = DEFAULT_TIMEOUT_S,
                 client_name: str = "infill", keys: ClientKeys | None = None) -> None:
        self.address = address
        self.timeout_s = timeout_s
        self.client_name = client_name
        self.keys = keys  # CURVE keys, for a worker started with --keys
        self._ctx = zmq.Context()
        self._idle: list[zmq.Socket] = []
        self._lock = threading.Lock()
        self._closed = False

    def hello(self) -> Welcome:
        return self._call(Hello(PROTOCOL_VERSION, self.client_name))

    def info(self) -> Info:
        return self._call(InfoRequest())

    def health(self) -> HealthOk:
        return self._call(Health())

    def complete(self, request: CompleteRequest) -> Result:
        """Waits for the request's deadline plus `timeout_s`."""
        return self._call(request)

    def close(self) -> None:
        """Close the idle sockets and the context; calls still in flight fail."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for sock in idle:
            sock.close(linger=0)
        self._ctx.term()

    def __enter__(self) -> WorkerClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _acquire(self) -> zmq.Socket:
        with self._lock:
            if self._closed:
                raise RuntimeError(f"the client of {self.address} is closed")
            if self._idle:
                return self._idle.pop()
        sock = self._ctx.socket(zmq.DEALER)
        _connect(sock, self.address, self.keys)
        return sock

    def _release(self, sock: zmq.Socket) -> None:
        with self._lock:
            if not self._closed and len(self._idle) < MAX_IDLE_SOCKETS:
                self._idle.append(sock)
                return
        sock.close(linger=0)

    def _call(self, request: Message) -> Any:
        frame = encode(request)
        sock = self._acquire()
        try:
            reply = self._exchange(sock, request, frame, _timeout_for(request, self.timeout_s))
        except BaseException:
            _abandon(sock, request)
            raise
        self._release(sock)
        return _unwrap(reply)

    def _exchange(self, sock: zmq.Socket, request: Message, frame: bytes, timeout_s: float) -> Message:
        deadline = time.monotonic() + timeout_s
        sock.send(frame, zmq.NOBLOCK)
        while (remaining := deadline - time.monotonic()) > 0:
            if not sock.poll(max(1, int(remaining * 1000)), zmq.POLLIN):
                break
            reply = _read_reply(sock.recv(), request)
            if reply is not None:
                return reply
        raise WorkerTimeout(f"no reply to {type(request).__name__} from the worker at "
                            f"{self.address} within {timeout_s:.1f} s; is it running?")


class AsyncWorkerClient:
    """The asyncio twin of `WorkerClient`; cancelling a `complete` call cancels the request."""

    def __init__(self, address: str, timeout_s: float = DEFAULT_TIMEOUT_S,
                 client_name: str = "infill", keys: ClientKeys | None = None) -> None:
        self.address = address
        self.timeout_s = timeout_s
        self.client_name = client_name
        self.keys = keys  # CURVE keys, for a worker started with --keys
        self._ctx = zmq.asyncio.Context()
        self._idle: list[zmq.asyncio.Socket] = []
        self._closed = False

    async def hello(self) -> Welcome:
        return await self._call(Hello(PROTOCOL_VERSION, self.client_name))

    async def info(self) -> Info:
        return await self._call(InfoRequest())

    async def health(self) -> HealthOk:
        return await self._call(Health())

    async def complete(self, request: CompleteRequest) -> Result:
        """Waits for the request's deadline plus `timeout_s`."""
        return await self._call(request)

    async def stream(self, request: CompleteRequest) -> AsyncIterator[Partial | Result]:
        """`request` with `stream` set: its Partial replies as they come, then its Result (an
        Error reply raises WorkerError). The whole exchange waits at most the deadline plus
        `timeout_s`; closing the iterator before the Result cancels the request at the worker."""
        request = dataclasses.replace(request, stream=True)
        frame, sock = encode(request), self._acquire()
        timeout_s = _timeout_for(request, self.timeout_s)
        deadline = asyncio.get_running_loop().time() + timeout_s
        answered = False
        try:
            await sock.send(frame)
            while not answered:
                reply = await self._next_reply(sock, request, deadline, timeout_s)
                answered = not isinstance(reply, Partial)
                yield _unwrap(reply)
        finally:
            if answered:
                self._release(sock)
            else:
                _abandon(sock, request)

    async def _next_reply(self, sock: zmq.asyncio.Socket, request: CompleteRequest, deadline: float,
                          timeout_s: float) -> Message:
        """The next reply to `request` on `sock`, or WorkerTimeout once `deadline` has passed."""
        loop = asyncio.get_running_loop()
        while (remaining := deadline - loop.time()) > 0:
            try:
                raw = await asyncio.wait_for(sock.recv(), remaining)
            except TimeoutError:
                break
            reply = _read_reply(raw, request)
            if reply is not None:
                return reply
        raise WorkerTimeout(f"no reply to the streamed request {request.id} from the worker at "
                            f"{self.address} within {timeout_s:.1f} s; is it running?")

    def close(self) -> None:
        """Close every socket, in flight or idle, and the context."""
        self._closed = True
        self._idle.clear()
        self._ctx.destroy(linger=0)

    def _acquire(self) -> zmq.asyncio.Socket:
        if self._closed:
            raise RuntimeError(f"the client of {self.address} is closed")
        if self._idle:
            return self._idle.pop()
        sock = self._ctx.socket(zmq.DEALER)
        _connect(sock, self.address, self.keys)
        return sock

    async def _call(self, request: Message) -> Any:
        frame = encode(request)
        sock = self._acquire()
        timeout_s = _timeout_for(request, self.timeout_s)
        try:
            async with asyncio.timeout(timeout_s):
                reply = await self._exchange(sock, request, frame)
        except TimeoutError:
            _abandon(sock, request)
            raise WorkerTimeout(f"no reply to {type(request).__name__} from the worker at "
                                f"{self.address} within {timeout_s:.1f} s; is it running?") from None
        except BaseException:
            _abandon(sock, request)
            raise
        self._release(sock)
        return _unwrap(reply)

    def _release(self, sock: zmq.asyncio.Socket) -> None:
        if not self._closed and len(self._idle) < MAX_IDLE_SOCKETS:
            self._idle.append(sock)
        elif not sock.closed:
            sock.close(linger=0)

    @staticmethod
    async def _exchange(sock: zmq.asyncio.Socket, request: Message, frame: bytes) -> Message:
        await sock.send(frame)
        while True:
            reply = _read_reply(await sock.recv(), request)
            if reply is not None:
                return reply


class _StderrPump(threading.Thread):
    """Forwards a child's stderr lines to our log and keeps the last ones for error messages."""

    def __init__(self, stream: IO[bytes]) -> None:
        super().__init__(name="engine-worker-stderr", daemon=True)
        self._stream = stream
        self._tail: collections.deque[str] = collections.deque(maxlen=_STDERR_TAIL_LINES)

    def run(self) -> None:
        with self._stream:
            for raw in self._stream:
                line = raw.decode(errors="replace").rstrip()
                self._tail.append(line)
                _child_logger.info("%s", line)

    def tail(self) -> str:
        return "\n".join(self._tail) or "(nothing)"


def _wait_until_ready(proc: subprocess.Popen, address: str, timeout_s: float,
                      pump: _StderrPump, keys: ClientKeys | None) -> None:
    deadline = time.monotonic() + timeout_s
    with WorkerClient(address, timeout_s=_READY_POLL_S, client_name="infill-launcher",
                      keys=keys) as client:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                pump.join(timeout=1.0)
                raise WorkerStartError(f"the worker exited with code {proc.returncode} before it "
                                       f"was ready; its stderr ended with:\n{pump.tail()}")
            try:
                client.hello()
                return
            except WorkerTimeout:
                continue
            except WorkerError as exc:
                raise WorkerStartError(f"the worker refused the handshake: {exc}") from exc
    raise WorkerStartError(f"the worker did not answer within {timeout_s:.0f} s; its stderr "
                           f"ended with:\n{pump.tail()}")


def start_worker_process(argv: Sequence[str], address: str,
                         timeout_s: float = DEFAULT_STARTUP_TIMEOUT_S,
                         keys: ClientKeys | None = None) -> subprocess.Popen:
    """Run `argv` (a worker that binds `address`) and return once it answers Hello (sent with
    `keys` to a worker started with --keys)."""
    proc = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    pump = _StderrPump(proc.stderr)
    pump.start()
    try:
        _wait_until_ready(proc, address, timeout_s, pump, keys)
    except BaseException:
        stop_worker(proc)
        raise
    logger.info("worker pid %d is serving on %s", proc.pid, address)
    return proc


def weights_gb(model_dir: str | Path | None) -> float:
    """Gigabytes of safetensors in a model folder (0 for the bundled model or an unreadable folder)."""
    if model_dir is None:
        return 0.0
    try:
        return sum(f.stat().st_size for f in Path(model_dir).glob("*.safetensors")) / 1e9
    except OSError:
        return 0.0


def startup_timeout_for(model_dir: str | Path | None) -> float:
    """How long a worker loading `model_dir` may take to answer: longer for a larger model."""
    return DEFAULT_STARTUP_TIMEOUT_S + STARTUP_S_PER_GB * weights_gb(model_dir)


def model_flags(device: str | None = None, dtype: str | None = None) -> list[str]:
    """The worker flags for a device and dtype (None: the worker's default, auto)."""
    return [*(["--device", device] if device else []), *(["--dtype", dtype] if dtype else [])]


def add_local_worker_flags(parser: argparse.ArgumentParser) -> None:
    """The flags of a command that starts its own worker (`infill lsp`, `infill run`), passed on to it."""
    parser.add_argument("--device", default=None, metavar="DEVICE",
                        help=f"where the worker it starts runs the model: {DEVICE_HELP} (default auto)")
    parser.add_argument("--dtype", default=None, choices=DTYPES,
                        help="that worker's model dtype (default auto: bf16 on CUDA, fp32 on the CPU)")
    parser.add_argument("--startup-timeout", type=float, default=None, metavar="SECONDS",
                        help=f"how long that worker may take to load its model (default "
                             f"{DEFAULT_STARTUP_TIMEOUT_S:.0f} s plus {STARTUP_S_PER_GB:.0f} s per GB of weights)")
    parser.add_argument("--max-context", type=int, default=None, metavar="TOKENS",
                        help="that worker's canvas length at most (default: the model's trained context)")
    parser.add_argument("--prefix-cache-mb", type=int, default=None, metavar="MB",
                        help="that worker's cross-keystroke key/value cache in MiB (default: the worker's)")


def local_worker_flags(args: argparse.Namespace) -> list[str]:
    """The worker flags of `add_local_worker_flags`'s options (those left unset are the worker's defaults)."""
    limits = [(flag, value) for flag, value in (("--max-context", args.max_context),
                                                ("--prefix-cache-mb", args.prefix_cache_mb)) if value is not None]
    return model_flags(args.device, args.dtype) + [item for flag, value in limits for item in (flag, str(value))]


def check_local_worker_flags(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """A usage error for a device that is no device, a start-up timeout that is not positive, or a
    context or cache size out of range."""
    try:
        if args.device is not None:
            check_device(args.device)
    except ValueError as exc:
        parser.error(str(exc))
    if args.startup_timeout is not None and args.startup_timeout <= 0:
        parser.error(f"--startup-timeout must be positive, got {args.startup_timeout}")
    if args.max_context is not None and args.max_context < 1:
        parser.error(f"--max-context must be at least 1 token, got {args.max_context}")
    if args.prefix_cache_mb is not None and args.prefix_cache_mb < 0:
        parser.error(f"--prefix-cache-mb must be 0 or more, got {args.prefix_cache_mb}")


def worker_argv(address: str, model_dir: str | Path | None = None, threads: int | None = None,
                keys_dir: str | Path | None = None, weights: str | None = None,
                owned_dir: str | Path | None = None, flags: Sequence[str] = ()) -> list[str]:
    """The command line of one `python -m engine` worker process on `address`; `owned_dir` is a
    private folder made for it (its ipc:// socket's), which it removes on its way out; `flags`
    are further worker flags (`model_flags`: --device, --dtype, ...)."""
    argv = [sys.executable, "-m", "engine", "--bind", address, "--parent-pid", str(os.getpid())]
    if owned_dir is not None:
        argv += ["--owned-dir", str(owned_dir)]
    if model_dir is not None:
        argv += ["--model", str(model_dir)]
    if threads is not None:
        argv += ["--threads", str(threads)]
    if keys_dir is not None:
        argv += ["--keys", str(keys_dir)]
    if weights is not None:
        argv += ["--weights", weights]
    return argv + list(flags)


def spawn_local_worker(model_dir: str | Path | None = None, threads: int | None = None,
                       startup_timeout_s: float | None = None, weights: str | None = None,
                       flags: Sequence[str] = ()) -> tuple[subprocess.Popen, str]:
    """Start `python -m engine` on a private ipc:// socket; returns the process and its address.
    The worker removes the socket's temp folder when it stops; this process removes it too once
    the returned process object is collected (a worker stopped by SIGKILL could not). The start-up
    timeout defaults to one that grows with the model (`startup_timeout_for`)."""
    if startup_timeout_s is None:
        startup_timeout_s = startup_timeout_for(model_dir)
    folder = tempfile.mkdtemp(prefix="infill-worker-")
    address = f"ipc://{folder}/worker.sock"
    try:
        proc = start_worker_process(worker_argv(address, model_dir, threads, weights=weights,
                                                owned_dir=folder, flags=flags), address, startup_timeout_s)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    weakref.finalize(proc, shutil.rmtree, folder, ignore_errors=True)
    return proc, address


def stop_worker(proc: subprocess.Popen, timeout_s: float = 5.0) -> int:
    """SIGTERM, wait up to `timeout_s`, then SIGKILL; returns the exit code."""
    if proc.poll() is None:
        proc.terminate()
        try:
            return proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            logger.warning("worker pid %d ignored SIGTERM for %.0f s; killing it", proc.pid, timeout_s)
            proc.kill()
    return proc.wait()
