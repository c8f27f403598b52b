"""The one launcher of worker processes on this machine: start, greet, restart and stop them.

A worker is `python -m engine` (`worker_argv`), started by `start_worker_process`, which returns
once `greet` has greeted it (Hello answered); a worker that exits or refuses first is a
`WorkerStartError` carrying the end of its stderr, which is forwarded to this process's log
(`engine.worker_stderr`) line by line. `stop_worker` ends one. Two ways to start local
workers share that path and the private ipc:// socket folder each gets (the worker removes it on
its way out: `--owned-dir`):

- `spawn_local_worker`: one worker, no restarts (`infill complete`, the benchmarks, tests);
- `start_local_workers`: a `WorkerGroup` that restarts any worker that dies (the language server,
  the gateway): the group makes the folder again before a restart and removes it after stopping
  the worker, which covers one it had to kill.

`infill serve --workers N` (`serve_workers`) runs a group of N children on N addresses derived
from `--bind` and balances nothing itself: clients spread their requests over the addresses
(`engine.client.pool`). A child that fails (a non-zero exit: a crash, a SIGKILL) is restarted,
and so is one whose main loop has not ticked for `hung_kill_s`, or that left `UNANSWERED_KILL`
health checks in a row unanswered (a process frozen by SIGSTOP, or wedged whole): it is killed
first, with SIGKILL, which reaches a stopped process too. One that exits with 0 was stopped on
purpose (SIGTERM, or Ctrl-C in a terminal) and stays stopped. A restarted worker binds the same
address, so clients' sockets reconnect to it unaided. Stopping the group sends SIGTERM to every
child and waits (SIGKILL after a grace period), so no child outlives it.
"""
from __future__ import annotations

import collections
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO

from engine.wire.flags import DEFAULT_STARTUP_TIMEOUT_S, LONGEST_STEP_S, STARTUP_S_PER_GB
from engine.wire.keys import ClientKeys, load_client_keys
from engine.wire.private import make_private_dir
from engine.wire.probe import Probe
from engine.wire.protocol import PROTOCOL_VERSION, Error, Health, HealthOk, Hello, Welcome

logger = logging.getLogger(__name__)
_child_logger = logging.getLogger(__package__ + ".worker_stderr")

HUNG_KILL_S = LONGEST_STEP_S  # far above any one decoding step: a loop this still is stuck for good
HUNG_S_PER_GB = 10.0  # and this much more per GB of weights: a large model's first pass over a long
#   canvas on a CPU takes far longer than the bundled model's
UNANSWERED_KILL = 3  # health checks in a row without a reply (about 3 s): the process is frozen
_READY_POLL_S = 0.25  # how often the launcher retries the handshake while a worker starts
_STDERR_TAIL_LINES = 30
_WATCH_S = 0.05  # how often the watcher looks for children that exited
_RESTART_BACKOFF_S = 1.0  # a child that fails to start is tried again after this long
_HEALTH_EVERY_S = 1.0  # how often the watcher asks each child how old its main loop's tick is
_HEALTH_TIMEOUT_S = 0.5  # its IO thread answers in milliseconds, whatever the main loop does
_TCP_PORT = re.compile(r"(tcp://.+):(\d{1,5})")


class WorkerStartError(RuntimeError):
    """A local worker process did not come up; the message carries its stderr tail."""


def weights_gb(model_dir: str | Path | None, depth: int = 0) -> float:
    """Gigabytes of safetensors in a model folder, and in its base's when it holds LoRA adapters
    (`adapter_config.json` names the base, which the worker reads too); 0 for the bundled model
    or an unreadable folder."""
    if model_dir is None or depth > 8:
        return 0.0
    try:
        own = sum(f.stat().st_size for f in Path(model_dir).glob("*.safetensors")) / 1e9
        adapters = Path(model_dir) / "adapter_config.json"
        if not adapters.is_file():
            return own
        base = Path(model_dir) / json.loads(adapters.read_text()).get("base_model_name_or_path", "")
        return own + weights_gb(base, depth + 1)
    except (OSError, ValueError, AttributeError):
        return 0.0


def startup_timeout_for(model_dir: str | Path | None) -> float:
    """How long a worker loading `model_dir` may take to answer: longer for a larger model."""
    return DEFAULT_STARTUP_TIMEOUT_S + STARTUP_S_PER_GB * weights_gb(model_dir)


def hung_kill_for(model_dir: str | Path | None) -> float:
    """How long a worker's main loop may stand still before it is killed as hung, for `model_dir`."""
    return HUNG_KILL_S + HUNG_S_PER_GB * weights_gb(model_dir)


def worker_addresses(first: str, count: int) -> list[str]:
    """`count` addresses from `first`: consecutive TCP ports, or ipc paths with .0, .1, ..."""
    if count == 1:
        return [first]
    if first.startswith("ipc://"):
        return [f"{first}.{i}" for i in range(count)]
    tcp = _TCP_PORT.fullmatch(first)
    if tcp is None or int(tcp.group(2)) + count - 1 > 65535:
        raise ValueError(f"cannot derive {count} addresses from {first!r}: give ipc://PATH or "
                         "tcp://HOST:PORT with a fixed port and room for the ports after it")
    host, port = tcp.group(1), int(tcp.group(2))
    return [f"{host}:{port + i}" for i in range(count)]


def connect_address(bind: str) -> str:
    """Where this machine reaches a worker bound to `bind` (a wildcard host means loopback)."""
    tcp = _TCP_PORT.fullmatch(bind)
    if tcp is not None and tcp.group(1) in ("tcp://*", "tcp://0.0.0.0"):
        return f"tcp://127.0.0.1:{tcp.group(2)}"
    return bind


def _private_socket() -> tuple[Path, str]:
    """A new private temp folder (0700) and the ipc:// address of a worker socket inside it."""
    folder = Path(tempfile.mkdtemp(prefix="infill-worker-"))
    return folder, f"ipc://{folder}/worker.sock"


def worker_argv(address: str, model_dir: str | Path | None = None, threads: int | None = None,
                keys_dir: str | Path | None = None, weights: str | None = None,
                owned_dir: str | Path | None = None, flags: Sequence[str] = ()) -> list[str]:
    """The command line of one `python -m engine` worker process on `address`; `owned_dir` is a
    private folder made for it (its ipc:// socket's), which it removes on its way out; `flags`
    are further worker flags (`engine.wire.flags.model_flags`: --device, --dtype, ...)."""
    argv = [sys.executable, "-m", __package__, "--bind", address, "--parent-pid", str(os.getpid())]
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


def greet(proc: subprocess.Popen, address: str, timeout_s: float, pump: _StderrPump,
          keys: ClientKeys | None = None) -> Welcome:
    """Greet the worker `proc` is starting on `address` (with `keys` if it was started with
    --keys), asking again every `_READY_POLL_S` until it answers Hello; its Welcome. A
    WorkerStartError says why not: it refused the handshake, or it exited or did not answer
    within `timeout_s` (with the end of its stderr, which `pump` keeps). The launcher asks with
    the wire's `Probe`, never a client: the worker's own command line runs this too."""
    deadline = time.monotonic() + timeout_s
    with Probe(address, _READY_POLL_S, keys) as probe:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                pump.join(timeout=1.0)
                raise WorkerStartError(f"the worker exited with code {proc.returncode} before it "
                                       f"was ready; its stderr ended with:\n{pump.tail()}")
            reply = probe.ask(Hello(PROTOCOL_VERSION, "infill-launcher"))
            if isinstance(reply, Error):
                raise WorkerStartError(f"the worker refused the handshake: {reply.code}: {reply.message}")
            if isinstance(reply, Welcome):
                return reply
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
        greet(proc, address, timeout_s, pump, keys)
    except BaseException:
        stop_worker(proc)
        raise
    logger.info("worker pid %d is serving on %s", proc.pid, address)
    return proc


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


def spawn_local_worker(model_dir: str | Path | None = None, threads: int | None = None,
                       startup_timeout_s: float | None = None, weights: str | None = None,
                       flags: Sequence[str] = ()) -> tuple[subprocess.Popen, str]:
    """Start `python -m engine` on a private ipc:// socket; returns the process and its address.
    The worker removes the socket's temp folder when it stops; this process removes it too once
    the returned process object is collected (a worker stopped by SIGKILL could not). The start-up
    timeout defaults to one that grows with the model (`startup_timeout_for`)."""
    if startup_timeout_s is None:
        startup_timeout_s = startup_timeout_for(model_dir)
    folder, address = _private_socket()
    try:
        proc = start_worker_process(worker_argv(address, model_dir, threads, weights=weights,
                                                owned_dir=folder, flags=flags), address, startup_timeout_s)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    weakref.finalize(proc, shutil.rmtree, folder, ignore_errors=True)
    return proc, address


class WorkerGroup:
    """Child workers, one per bind address; `start()` returns once all answer (greeted with
    `keys` if they were started with CURVE keys), then a watcher thread restarts any that fails
    until `stop()`. `folders` maps an address to the private folder its worker needs (made 0700
    before each start, removed after `stop()`)."""

    def __init__(self, argv_for: Callable[[str], list[str]], addresses: list[str],
                 keys: ClientKeys | None = None,
                 startup_timeout_s: float = DEFAULT_STARTUP_TIMEOUT_S,
                 hung_kill_s: float = HUNG_KILL_S, folders: Mapping[str, Path] | None = None) -> None:
        self.addresses = list(addresses)
        self.restarts = 0
        self.hung_kill_s = hung_kill_s
        self._argv_for, self._keys, self._startup_timeout_s = argv_for, keys, startup_timeout_s
        self._folders = dict(folders or {})
        self._processes: dict[str, subprocess.Popen] = {}
        self._unanswered = dict.fromkeys(self.addresses, 0)  # health checks in a row, per address
        self._stopping = threading.Event()
        self._watcher = threading.Thread(target=self._watch, name="engine-supervisor", daemon=True)

    def process(self, address: str) -> subprocess.Popen:
        """The child serving `address` now (a new one after a restart)."""
        return self._processes[address]

    def start(self) -> None:
        try:
            for address in self.addresses:
                self._processes[address] = self._launch(address)
        except BaseException:
            self.stop()
            raise
        self._watcher.start()

    def stop(self) -> None:
        """Stop restarting, then SIGTERM every child and wait for it, and remove the folders;
        blocks a few seconds."""
        self._stopping.set()
        if self._watcher.is_alive():
            self._watcher.join()
        for address, proc in self._processes.items():
            code = stop_worker(proc)
            logger.info("worker pid %d on %s stopped with code %d", proc.pid, address, code)
        for folder in self._folders.values():  # a worker that was killed could not remove its own
            shutil.rmtree(folder, ignore_errors=True)

    def _launch(self, address: str) -> subprocess.Popen:
        if address in self._folders:
            try:
                make_private_dir(self._folders[address])
            except (OSError, ValueError) as exc:
                raise WorkerStartError(f"cannot prepare the folder of the worker on {address}: "
                                       f"{exc}") from exc
        return start_worker_process(self._argv_for(address), connect_address(address),
                                    self._startup_timeout_s, self._keys)

    def _watch(self) -> None:
        probes = {a: Probe(connect_address(a), _HEALTH_TIMEOUT_S, self._keys) for a in self.addresses}
        checked = time.monotonic()
        try:
            while not self._stopping.wait(_WATCH_S):
                for address, proc in list(self._processes.items()):
                    if proc.poll() not in (None, 0) and not self._stopping.is_set():
                        self._restart(address, proc.returncode)
                if time.monotonic() - checked >= _HEALTH_EVERY_S:
                    checked = time.monotonic()
                    for address, probe in probes.items():
                        self._kill_if_hung(address, probe)
        finally:
            for probe in probes.values():
                probe.close()

    def _kill_if_hung(self, address: str, probe: Probe) -> None:
        """SIGKILL the child on `address` if its main loop is stuck or the whole process is
        frozen (`UNANSWERED_KILL` health checks in a row unanswered); the watcher restarts it."""
        if self._processes[address].poll() is not None:
            return  # one that exited is the watcher's (restarted, or stopped on purpose)
        reply = probe.ask(Health())
        if reply is None:
            self._unanswered[address] += 1
            if self._unanswered[address] >= UNANSWERED_KILL:
                self._kill(address, f"it left {self._unanswered[address]} health checks in a row "
                                    "unanswered (frozen)")
            return
        if not isinstance(reply, HealthOk):
            return  # it answered, so it is not frozen; an Error reply says nothing of its loop
        self._unanswered[address] = 0
        if reply.loop_age_s > self.hung_kill_s:
            self._kill(address, f"its main loop has not ticked for {reply.loop_age_s:.0f} s")

    def _kill(self, address: str, why: str) -> None:
        logger.error("killing the worker on %s: %s", address, why)
        self._unanswered[address] = 0
        self._processes[address].kill()

    def _restart(self, address: str, code: int) -> None:
        logger.warning("the worker on %s exited with code %d; restarting it", address, code)
        try:
            self._processes[address] = self._launch(address)
            self._unanswered[address] = 0
            self.restarts += 1
        except WorkerStartError as exc:
            logger.error("could not restart the worker on %s: %s", address, exc)
            self._stopping.wait(_RESTART_BACKOFF_S)


def start_local_workers(model_dir: str | Path | None = None, threads: int | None = None,
                        count: int = 1, flags: Sequence[str] = (),
                        startup_timeout_s: float | None = None) -> WorkerGroup:
    """`count` workers, each on an ipc:// socket in a private temp folder of its own, kept alive
    until the group is stopped; each worker removes its folder when it stops, even when this
    process dies without stopping it. `flags` are further worker flags (`flags.model_flags`); the
    start-up timeout and the hung-loop limit grow with the model's size unless given."""
    folders = {address: folder for folder, address in (_private_socket() for _ in range(count))}
    group = WorkerGroup(lambda address: worker_argv(address, model_dir, threads,
                                                    owned_dir=folders[address], flags=flags),
                        list(folders), folders=folders,
                        startup_timeout_s=startup_timeout_s or startup_timeout_for(model_dir),
                        hung_kill_s=hung_kill_for(model_dir))
    group.start()  # a group that fails to start stops itself, removing the folders
    return group


def serve_workers(first: str, count: int, model_dir: Path | None, threads: int | None,
                  keys_dir: Path | None, flags: Sequence[str] = ()) -> int:
    """`infill serve --workers N`: run the group until SIGTERM or SIGINT; 1 if it cannot start."""
    keys_dir = None if keys_dir is None else keys_dir.expanduser()
    try:
        addresses = worker_addresses(first, count)
        keys = None if keys_dir is None else load_client_keys(keys_dir)
    except ValueError as exc:
        logger.error("%s", exc)
        return 1
    group = WorkerGroup(lambda address: worker_argv(address, model_dir, threads, keys_dir, flags=flags),
                        addresses, keys, startup_timeout_for(model_dir), hung_kill_for(model_dir))
    signals: list[int] = []  # the handlers only append: nothing they could deadlock on
    previous = {sig: signal.signal(sig, lambda signum, frame: signals.append(signum))
                for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        group.start()
        sys.stderr.write(f"infill workers ready on {' '.join(addresses)}\n")
        sys.stderr.flush()
        while not signals:
            time.sleep(_WATCH_S)
    except WorkerStartError as exc:
        logger.error("%s", exc)
        return 1
    finally:
        group.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0
