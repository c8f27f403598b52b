"""Worker processes on this machine: start them, restart any that dies, stop them all.

`infill serve --workers N` runs N `python -m engine` children on N addresses derived from
`--bind` and balances nothing itself: clients spread their requests over the addresses
(`engine.pool`). The language server keeps its embedded worker alive with the same `WorkerGroup`
(N = 1). A child that fails (a non-zero exit: a crash, a SIGKILL) is restarted, and so is one
whose main loop has not ticked for `hung_kill_s`, or that left `UNANSWERED_KILL` health checks in
a row unanswered (a process frozen by SIGSTOP, or wedged whole): it is killed first, with SIGKILL,
which reaches a stopped process too. One that exits with 0 was stopped on purpose (SIGTERM, or
Ctrl-C in a terminal) and stays stopped. A restarted worker binds the same address, so clients'
sockets reconnect to it unaided.
Stopping the group sends SIGTERM to every child and waits (SIGKILL after a grace period), so no
child outlives it. Local workers (`start_local_workers`) each get a private temp folder for their
ipc:// socket: the worker removes it on its way out (`--owned-dir`), the group makes it again
before a restart and removes it after stopping the worker, which covers one it had to kill.
"""
from __future__ import annotations

import logging
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from engine.client import (DEFAULT_STARTUP_TIMEOUT_S, WorkerClient, WorkerError, WorkerStartError,
                           WorkerTimeout, start_worker_process, startup_timeout_for, stop_worker,
                           weights_gb, worker_argv)
from engine.keys import ClientKeys, load_client_keys
from engine.private import make_private_dir
from engine.watch import LONGEST_STEP_S

logger = logging.getLogger(__name__)

_WATCH_S = 0.05  # how often the watcher looks for children that exited
_RESTART_BACKOFF_S = 1.0  # a child that fails to start is tried again after this long
_HEALTH_EVERY_S = 1.0  # how often the watcher asks each child how old its main loop's tick is
_HEALTH_TIMEOUT_S = 0.5  # its IO thread answers in milliseconds, whatever the main loop does
HUNG_KILL_S = LONGEST_STEP_S  # far above any one decoding step: a loop this still is stuck for good
HUNG_S_PER_GB = 10.0  # and this much more per GB of weights: a large model's first pass over a long
#   canvas on a CPU takes far longer than the bundled model's
UNANSWERED_KILL = 3  # health checks in a row without a reply (about 3 s): the process is frozen
_TCP_PORT = re.compile(r"(tcp://.+):(\d{1,5})")


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
        probes = {a: WorkerClient(connect_address(a), _HEALTH_TIMEOUT_S, "infill-supervisor",
                                  self._keys) for a in self.addresses}
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

    def _kill_if_hung(self, address: str, probe: WorkerClient) -> None:
        """SIGKILL the child on `address` if its main loop is stuck or the whole process is
        frozen (`UNANSWERED_KILL` health checks in a row unanswered); the watcher restarts it."""
        if self._processes[address].poll() is not None:
            return  # one that exited is the watcher's (restarted, or stopped on purpose)
        try:
            loop_age_s = probe.health().loop_age_s
        except WorkerTimeout:
            self._unanswered[address] += 1
            if self._unanswered[address] >= UNANSWERED_KILL:
                self._kill(address, f"it left {self._unanswered[address]} health checks in a row "
                                    "unanswered (frozen)")
            return
        except WorkerError:
            return  # it answered, so it is not frozen; an error reply says nothing of its loop
        self._unanswered[address] = 0
        if loop_age_s > self.hung_kill_s:
            self._kill(address, f"its main loop has not ticked for {loop_age_s:.0f} s")

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


def hung_kill_for(model_dir: str | Path | None) -> float:
    """How long a worker's main loop may stand still before it is killed as hung, for `model_dir`."""
    return HUNG_KILL_S + HUNG_S_PER_GB * weights_gb(model_dir)


def start_local_workers(model_dir: str | Path | None = None, threads: int | None = None,
                        count: int = 1, flags: Sequence[str] = (),
                        startup_timeout_s: float | None = None) -> WorkerGroup:
    """`count` workers, each on an ipc:// socket in a private temp folder of its own, kept alive
    until the group is stopped; each worker removes its folder when it stops, even when this
    process dies without stopping it. `flags` are further worker flags (`model_flags`); the
    start-up timeout and the hung-loop limit grow with the model's size unless given."""
    folders = {}
    for _ in range(count):
        folder = Path(tempfile.mkdtemp(prefix="infill-worker-"))
        folders[f"ipc://{folder}/worker.sock"] = folder
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
