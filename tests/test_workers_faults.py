"""Faults with real worker processes: SIGTERM with work in flight, restarts of dead, hung and
frozen (SIGSTOP) workers, and supervisors and language servers that stop or die leaving no
process and no temp folder behind."""
from __future__ import annotations

import asyncio
import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import zmq

import fake_worker
from engine.launch import (WorkerGroup, start_local_workers, start_worker_process, stop_worker,
                                  worker_addresses)
from engine.client.pool import AsyncWorkerPool, WorkerUnavailable
from engine.wire.protocol import CompleteRequest, ErrorCode, Result, decode, encode
from engine.client.sync_client import WorkerClient
from engine.worker.cli import main as serve_main

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]  # real worker processes

FAILURE_WAIT_S = 30  # how long a test waits for what must happen: only a broken system needs it


async def until(condition: Callable[[], bool], what: str) -> None:
    """Returns once `condition()` holds; fails saying `what` did not happen after FAILURE_WAIT_S."""
    deadline = time.monotonic() + FAILURE_WAIT_S
    while not condition():
        assert time.monotonic() < deadline, f"{what} within {FAILURE_WAIT_S} s"
        await asyncio.sleep(0.05)


def children_of(pid: int) -> list[int]:
    """The live child processes of `pid`, from /proc."""
    found = []
    for stat_file in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat_file.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(stat_file.parent.name))
    return found


def test_sigterm_answers_every_request_in_flight(short_tmp):
    address = f"ipc://{short_tmp}/w.sock"
    proc = start_worker_process(fake_worker.argv(address), address, timeout_s=20)
    ctx = zmq.Context()
    peer = ctx.socket(zmq.DEALER)
    peer.connect(address)
    ids = [f"r{i}" for i in range(6)]
    for rid in ids:
        peer.send(encode(CompleteRequest(rid, "fim", "sleep:0.2", "", deadline_ms=10_000)))
    deadline = time.monotonic() + FAILURE_WAIT_S
    with WorkerClient(address, timeout_s=FAILURE_WAIT_S) as probe:
        while probe.health().live_requests < len(ids):  # all in before the signal
            assert time.monotonic() < deadline, "the worker never held every request"
    proc.send_signal(signal.SIGTERM)
    replies = []
    while len(replies) < len(ids) and peer.poll(FAILURE_WAIT_S * 1000):
        replies.append(decode(peer.recv()))
    assert proc.wait(timeout=10) == 0
    assert sorted(r.id for r in replies) == ids  # exactly one reply each
    assert all(isinstance(r, Result) or r.code == ErrorCode.SHUTTING_DOWN for r in replies)
    assert not peer.poll(200)
    peer.close(linger=0)
    ctx.term()


def test_worker_addresses():
    assert worker_addresses("tcp://127.0.0.1:5555", 3) == [
        "tcp://127.0.0.1:5555", "tcp://127.0.0.1:5556", "tcp://127.0.0.1:5557"]
    assert worker_addresses("ipc:///tmp/w.sock", 2) == ["ipc:///tmp/w.sock.0", "ipc:///tmp/w.sock.1"]
    assert worker_addresses("tcp://127.0.0.1:*", 1) == ["tcp://127.0.0.1:*"]
    with pytest.raises(ValueError, match="fixed port"):
        worker_addresses("tcp://127.0.0.1:*", 2)


@pytest.mark.parametrize("flags, message", [(["--workers", "0"], "at least 1"),
                                            (["--workers", "2", "--bind", "tcp://127.0.0.1:*"],
                                             "fixed port")])
def test_serve_refuses_bad_worker_counts(flags, message, capsys):
    with pytest.raises(SystemExit) as info:
        serve_main(flags)
    assert info.value.code == 2 and message in capsys.readouterr().err


def test_serve_refuses_an_owned_dir_it_should_not_remove(tmp_path, capsys):
    open_to_all = tmp_path / "open"
    open_to_all.mkdir()
    open_to_all.chmod(0o777)
    for folder, message in ((tmp_path / "none", "is not a folder"), (open_to_all, "chmod 700")):
        with pytest.raises(SystemExit) as info:
            serve_main(["--owned-dir", str(folder)])
        assert info.value.code == 2 and message in capsys.readouterr().err
    assert open_to_all.is_dir()


def test_a_group_restarts_a_killed_worker_on_its_address(short_tmp):
    group = WorkerGroup(fake_worker.argv, worker_addresses(f"ipc://{short_tmp}/w.sock", 2),
                        startup_timeout_s=20)
    group.start()
    started = [group.process(a) for a in group.addresses]
    try:
        os.kill(started[0].pid, signal.SIGKILL)
        with WorkerClient(group.addresses[0], timeout_s=15.0) as client:
            answer = client.complete(CompleteRequest("r", "fim", "x", "", deadline_ms=1000))
        deadline = time.monotonic() + FAILURE_WAIT_S  # the group records the new child once it answered
        while group.restarts == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert group.restarts == 1 and group.process(group.addresses[0]).pid != started[0].pid
        assert answer.items[0].text == f"{group.process(group.addresses[0]).pid}:x"
    finally:
        group.stop()
    assert children_of(os.getpid()) == []  # every child, the restarted one too, has exited


def start_supervisor(first: str, model_dir: Path) -> subprocess.Popen:
    """`python -m engine --workers 2` on the tiny model, its stderr piped."""
    return subprocess.Popen(
        [sys.executable, "-m", "engine", "--workers", "2", "--bind", first, "--threads", "1",
         "--model", str(model_dir)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True)


def test_serve_workers_stops_its_children_on_sigterm(short_tmp, tiny_model_dir):
    first = f"ipc://{short_tmp}/w.sock"
    supervisor = start_supervisor(first, tiny_model_dir)
    try:
        lines = iter(supervisor.stderr.readline, "")
        ready = next((line for line in lines if "workers ready" in line), "")
        assert ready.split("ready on ")[1].split() == worker_addresses(first, 2)
        children = children_of(supervisor.pid)
        assert len(children) == 2
        for address in worker_addresses(first, 2):
            with WorkerClient(address, timeout_s=5.0) as client:
                assert client.hello().model == tiny_model_dir.name
        supervisor.send_signal(signal.SIGTERM)
        assert supervisor.wait(timeout=15) == 0
        assert not [pid for pid in children if Path(f"/proc/{pid}").exists()]
    finally:
        stop_worker(supervisor, timeout_s=2)


def running(pid: int) -> bool:
    """Whether `pid` is a process that has not exited (a zombie has)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_workers_exit_when_their_supervisor_is_killed(short_tmp, tiny_model_dir):
    supervisor = start_supervisor(f"ipc://{short_tmp}/w.sock", tiny_model_dir)
    children: list[int] = []
    try:
        assert any("workers ready" in line for line in iter(supervisor.stderr.readline, ""))
        children = children_of(supervisor.pid)
        assert len(children) == 2
        supervisor.kill()  # SIGKILL: it cannot stop its children itself
        supervisor.wait(timeout=5)
        until = time.monotonic() + FAILURE_WAIT_S
        while any(running(pid) for pid in children) and time.monotonic() < until:
            time.sleep(0.1)
        assert not [pid for pid in children if running(pid)]
    finally:
        stop_worker(supervisor, timeout_s=2)
        for pid in children:  # orphans left by a failure here
            if running(pid):
                os.kill(pid, signal.SIGKILL)


async def test_a_group_restarts_a_hung_worker(short_tmp):
    """A step of 30 s is a hang to a group that allows a loop 1 s still and to a pool that allows a
    step 2 s: the call fails as unavailable, and the group kills and restarts the worker."""
    address = f"ipc://{short_tmp}/w.sock"
    group = WorkerGroup(fake_worker.argv, [address], startup_timeout_s=20, hung_kill_s=1.0)
    group.start()
    hung = group.process(address)
    pool = AsyncWorkerPool([address], timeout_s=2.0, longest_step_s=2.0)
    try:
        with pytest.raises(WorkerUnavailable):  # answered as failed once the pool sees the hang
            await pool.complete(CompleteRequest("stuck", "fim", "sleep:30", "", deadline_ms=10_000))
        assert await asyncio.to_thread(hung.wait, 10) == -signal.SIGKILL
        await until(pool.healthy, "the restarted worker answered no probe")
        assert (await pool.complete(CompleteRequest("next", "fim", "x", ""))).id == "next"
        assert group.process(address).pid != hung.pid
    finally:
        pool.close()
        group.stop()


def steps_run(address: str) -> int:
    """How many decoding steps the worker at `address` has run."""
    with WorkerClient(address, timeout_s=FAILURE_WAIT_S) as probe:
        return probe.health().steps


async def test_a_long_step_is_work_not_a_hang(short_tmp):
    """With the default thresholds a decoding step of 3 s (twice what a loop still between steps
    may take) is answered by the worker that took it: every probe made while the call is in flight
    finds both workers healthy, the other worker runs no step, and the group restarts none. The
    pool waits for each probe's reply however long it takes (a busy machine answers slowly): what
    is judged is what each probe answered (a step in progress), not how fast."""
    group = WorkerGroup(fake_worker.argv, worker_addresses(f"ipc://{short_tmp}/w.sock", 2),
                        startup_timeout_s=20)
    group.start()
    pool = AsyncWorkerPool(group.addresses, probe_timeout_s=FAILURE_WAIT_S)
    pids = [group.process(a).pid for a in group.addresses]
    try:
        await pool.hello()
        call = asyncio.ensure_future(pool.complete(CompleteRequest("r", "fim", "sleep:3", "",
                                                                   deadline_ms=20_000)))
        healthy = []  # what the pool says, sampled while the call is in flight
        deadline = time.monotonic() + FAILURE_WAIT_S
        while not call.done():
            assert time.monotonic() < deadline, f"no answer within {FAILURE_WAIT_S} s"
            healthy.append(pool.healthy())
            await asyncio.sleep(0.05)
        answered_by = int(call.result().items[0].text.split(":")[0])
        assert answered_by in pids and all(up == group.addresses for up in healthy)
        steps = [await asyncio.to_thread(steps_run, a) for a in group.addresses]
        assert steps[pids.index(answered_by)] == 1 and sum(steps) == 1  # never sent elsewhere
        assert group.restarts == 0 and [group.process(a).pid for a in group.addresses] == pids
    finally:
        pool.close()
        group.stop()
    assert children_of(os.getpid()) == []


async def wait_for_pid(proc: subprocess.Popen, timeout_s: float = 20.0) -> int:
    """`proc`'s exit code, waited for off the event loop."""
    return await asyncio.to_thread(proc.wait, timeout_s)


async def holder_of_a_request(addresses: list[str]) -> int:
    """The index of the first of `addresses` whose worker holds a request, once one does."""
    probes = [WorkerClient(a, timeout_s=2.0) for a in addresses]
    try:
        while True:
            for index, probe in enumerate(probes):
                if (await asyncio.to_thread(probe.health)).live_requests:
                    return index
            await asyncio.sleep(0.02)
    finally:
        for probe in probes:
            probe.close()


async def test_a_frozen_worker_is_replaced_and_its_request_retried(short_tmp):
    group = WorkerGroup(fake_worker.argv, worker_addresses(f"ipc://{short_tmp}/w.sock", 2),
                        startup_timeout_s=20)
    group.start()
    pool = AsyncWorkerPool(group.addresses, timeout_s=2.0)
    frozen: subprocess.Popen | None = None
    started = short_tmp / "started"  # made by the first step: it then sleeps 30 s; a retry answers
    try:
        await pool.hello()
        call = asyncio.ensure_future(pool.complete(CompleteRequest("r", "fim", f"once:{started}:hang", "",
                                                                   deadline_ms=20_000)))
        await until(started.exists, "no worker started the request's step")
        frozen_at = await asyncio.wait_for(holder_of_a_request(group.addresses), FAILURE_WAIT_S)
        frozen = group.process(group.addresses[frozen_at])
        other = group.process(group.addresses[1 - frozen_at])
        frozen.send_signal(signal.SIGSTOP)  # with the call in its decoding step
        result = await asyncio.wait_for(call, FAILURE_WAIT_S)
        assert int(result.items[0].text.split(":")[0]) == other.pid  # retried there
        assert await wait_for_pid(frozen) == -signal.SIGKILL  # SIGTERM would not reach it
        await until(lambda: len(pool.healthy()) == 2, "the replacement answered no probe")
        # the pool's probe may reach the replacement before its launcher's greeting returns
        await until(lambda: group.restarts == 1, "the group never recorded the replacement")
        results = await asyncio.gather(*(pool.complete(CompleteRequest(f"n{i}", "fim", "x", ""))
                                         for i in range(8)))
        replacement = group.process(group.addresses[frozen_at])
        assert replacement.pid != frozen.pid and group.restarts == 1
        assert replacement.pid in {int(r.items[0].text.split(":")[0]) for r in results}
    finally:
        if frozen is not None:
            frozen.send_signal(signal.SIGCONT)  # a no-op once it was killed and reaped
        pool.close()
        group.stop()
    assert children_of(os.getpid()) == []


async def test_a_frozen_lone_worker_fails_its_call_then_completions_resume(short_tmp):
    folder = short_tmp / "w"  # made by the group before each start, removed when it stops
    address = f"ipc://{folder}/w.sock"
    group = WorkerGroup(fake_worker.argv, [address], startup_timeout_s=20, folders={address: folder})
    group.start()
    pool = AsyncWorkerPool([address], timeout_s=2.0)
    frozen = group.process(address)
    started = short_tmp / "started"  # made by the step, which then sleeps 30 s
    try:
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
        call = asyncio.ensure_future(pool.complete(CompleteRequest("r", "fim", f"once:{started}:hang", "",
                                                                   deadline_ms=60_000)))
        await until(started.exists, "the worker did not start the request's step")
        frozen.send_signal(signal.SIGSTOP)
        # its connection drops: the call fails as unavailable, long before its deadline
        with pytest.raises(WorkerUnavailable):
            await asyncio.wait_for(call, FAILURE_WAIT_S)
        assert await wait_for_pid(frozen) == -signal.SIGKILL
        await until(pool.healthy, "the restarted worker answered no probe")
        result = await pool.complete(CompleteRequest("next", "fim", "x", ""))
        assert result.items[0].text == f"{group.process(address).pid}:x"
    finally:
        frozen.send_signal(signal.SIGCONT)
        pool.close()
        group.stop()
    assert children_of(os.getpid()) == [] and not folder.exists()


LANGUAGE_SERVER = """
import sys, time
from engine.launch import start_local_workers
group = start_local_workers(sys.argv[1], threads=1)
print(group.process(group.addresses[0]).pid, group.addresses[0], flush=True)
time.sleep(120)
"""


@pytest.mark.timeout(180)  # a worker on the tiny model imports torch
def test_a_local_worker_removes_its_folder_when_its_parent_is_killed(tiny_model_dir):
    parent = subprocess.Popen([sys.executable, "-c", LANGUAGE_SERVER, str(tiny_model_dir)],
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True)
    worker_pid = None
    try:
        pid, address = parent.stdout.readline().split()
        worker_pid, folder = int(pid), Path(address.removeprefix("ipc://")).parent
        assert folder.is_dir() and running(worker_pid)
        parent.kill()  # as a language server SIGKILLed: it cannot stop its worker
        parent.wait(timeout=5)
        until = time.monotonic() + FAILURE_WAIT_S
        while (running(worker_pid) or folder.exists()) and time.monotonic() < until:
            time.sleep(0.1)
        assert not running(worker_pid) and not folder.exists()
    finally:
        parent.kill()
        if worker_pid is not None and running(worker_pid):  # an orphan left by a failure here
            os.kill(worker_pid, signal.SIGKILL)


def test_a_group_of_local_workers_removes_their_folders(tiny_model_dir):
    group = start_local_workers(tiny_model_dir, threads=1)
    folder = Path(group.addresses[0].removeprefix("ipc://")).parent
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    group.stop()
    assert not folder.exists()
