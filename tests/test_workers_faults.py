"""Faults with real worker processes: SIGTERM with work in flight, restarts of dead workers, and
`infill serve --workers N` stopping without orphans."""
from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import zmq

import fake_worker
from engine.client import WorkerClient, start_worker_process, stop_worker
from engine.pool import AsyncWorkerPool, WorkerUnavailable
from engine.protocol import CompleteRequest, ErrorCode, Result, decode, encode
from engine.supervisor import WorkerGroup, worker_addresses
from engine.worker import main as serve_main

pytestmark = [pytest.mark.slow, pytest.mark.timeout(30)]  # real worker processes


def children_of(pid: int) -> list[int]:
    """The live child processes of `pid`, from /proc."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(stat.parent.name))
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
    with WorkerClient(address, timeout_s=2.0) as probe:
        while probe.health().live_requests < len(ids):  # all in before the signal
            continue
    proc.send_signal(signal.SIGTERM)
    replies = []
    while len(replies) < len(ids) and peer.poll(5000):
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


def test_a_group_restarts_a_killed_worker_on_its_address(short_tmp):
    group = WorkerGroup(fake_worker.argv, worker_addresses(f"ipc://{short_tmp}/w.sock", 2),
                        startup_timeout_s=20)
    group.start()
    started = [group.process(a) for a in group.addresses]
    try:
        os.kill(started[0].pid, signal.SIGKILL)
        with WorkerClient(group.addresses[0], timeout_s=15.0) as client:
            answer = client.complete(CompleteRequest("r", "fim", "x", "", deadline_ms=1000))
        deadline = time.monotonic() + 5  # the group records the new child once it answered
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
        until = time.monotonic() + 10
        while any(running(pid) for pid in children) and time.monotonic() < until:
            time.sleep(0.1)
        assert not [pid for pid in children if running(pid)]
    finally:
        stop_worker(supervisor, timeout_s=2)
        for pid in children:  # orphans left by a failure here
            if running(pid):
                os.kill(pid, signal.SIGKILL)


async def test_a_group_restarts_a_hung_worker(short_tmp):
    address = f"ipc://{short_tmp}/w.sock"
    group = WorkerGroup(fake_worker.argv, [address], startup_timeout_s=20, hung_kill_s=1.0)
    group.start()
    hung = group.process(address)
    pool = AsyncWorkerPool([address], timeout_s=2.0)
    try:
        with pytest.raises(WorkerUnavailable):  # answered as failed once the pool sees the hang
            await pool.complete(CompleteRequest("stuck", "fim", "sleep:30", "", deadline_ms=10_000))
        assert await asyncio.to_thread(hung.wait, 10) == -signal.SIGKILL
        while not pool.healthy():  # until its restart answers a probe
            await asyncio.sleep(0.05)
        assert (await pool.complete(CompleteRequest("next", "fim", "x", ""))).id == "next"
        assert group.process(address).pid != hung.pid
    finally:
        pool.close()
        group.stop()
