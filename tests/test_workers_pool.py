"""Several workers behind one `AsyncWorkerPool`: balancing, dead and hung workers, retries.

Every worker is a real process (`tests/fake_worker.py`) on a real ipc:// socket.
"""
from __future__ import annotations

import asyncio
import os
import signal
import time

import pytest
import zmq

import fake_worker
from engine.wire import transport
from engine.client.calls import WorkerError
from engine.launch import start_worker_process, stop_worker
from engine.client.pool import AsyncWorkerPool, WorkerUnavailable
from engine.wire.protocol import CompleteRequest, HealthOk
from engine.client.sync_client import WorkerClient
from engine.client.watch import (HUNG_AFTER_S, LONGEST_STEP_S, PROBE_INTERVAL_S, PROBE_TIMEOUT_S,
                                 WorkerWatch, hung_verdict)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]  # real worker processes


def request(rid: str, prefix: str = "x", deadline_ms: int = 5000) -> CompleteRequest:
    return CompleteRequest(rid, "fim", prefix, "", deadline_ms=deadline_ms)


@pytest.fixture
def workers(short_tmp):
    """Two fake worker processes; yields their processes and addresses."""
    addresses = [f"ipc://{short_tmp}/w{i}.sock" for i in range(2)]
    procs = [start_worker_process(fake_worker.argv(a), a, timeout_s=20) for a in addresses]
    yield procs, addresses
    for proc in procs:
        stop_worker(proc, timeout_s=2)


HANG_STEP_S = 2.0  # the fake "hang" sleeps 30 s in its step: far past this, so certainly hung


@pytest.fixture
async def pool(workers):
    pool = AsyncWorkerPool(workers[1], timeout_s=2.0, longest_step_s=HANG_STEP_S)
    yield pool
    pool.close()


def served_by(result) -> int:
    return int(result.items[0].text.split(":")[0])


async def wait_until(condition, within_s: float = 30.0) -> None:
    """Returns once `condition()` holds; fails after `within_s`, which only a broken pool reaches."""
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < within_s, "the condition never held"
        await asyncio.sleep(0.02)


def test_detection_bounds_are_under_two_seconds():
    # The mechanism behind "a dead or hung worker is noticed within 2 s": a probe every
    # PROBE_INTERVAL_S, dead when it goes unanswered for PROBE_TIMEOUT_S, hung when the main loop's
    # tick is older than HUNG_AFTER_S; ZMTP heartbeats drop a silent connection just as fast.
    assert PROBE_INTERVAL_S + max(PROBE_TIMEOUT_S, HUNG_AFTER_S) <= 2.0
    assert transport.HEARTBEAT_IVL_MS + transport.HEARTBEAT_TIMEOUT_MS <= 2000


async def test_requests_are_spread_over_the_workers(pool, workers):
    results = await asyncio.gather(*(pool.complete(request(f"r{i}")) for i in range(12)))
    pids = [served_by(r) for r in results]
    assert set(pids) == {p.pid for p in workers[0]}
    assert all(r.items[0].text.endswith(":x") for r in results)


async def test_a_dead_worker_is_noticed_and_avoided(pool, workers):
    procs, addresses = workers
    await pool.hello()
    os.kill(procs[0].pid, signal.SIGKILL)
    # How fast is the configured bound, checked above; here only that it happens.
    await wait_until(lambda: pool.healthy() == [addresses[1]])
    results = await asyncio.gather(*(pool.complete(request(f"r{i}")) for i in range(4)))
    assert {served_by(r) for r in results} == {procs[1].pid}


async def test_a_request_on_a_dying_worker_is_retried_on_another(pool, workers, tmp_path):
    marker = tmp_path / "died"
    result = await asyncio.wait_for(pool.complete(request("r", f"once:{marker}:die")), 30.0)
    assert marker.exists()
    dead = [p for p in workers[0] if p.poll() is not None]
    assert len(dead) == 1 and served_by(result) != dead[0].pid


async def test_a_request_on_a_hung_worker_is_retried_on_another(pool, workers, tmp_path):
    marker = tmp_path / "hung"
    result = await asyncio.wait_for(pool.complete(request("r", f"once:{marker}:hang")), 30.0)
    procs, addresses = workers
    serving = next(a for a, p in zip(addresses, procs) if p.pid == served_by(result))
    assert marker.exists() and pool.healthy() == [serving]
    with WorkerClient(next(a for a in addresses if a != serving)) as probe:
        assert probe.health().loop_age_s > HUNG_AFTER_S  # its IO thread answers, its loop does not


async def test_a_model_error_fails_that_request_alone(pool):
    results = await asyncio.gather(pool.complete(request("bad", "boom")),
                                   *(pool.complete(request(f"ok{i}")) for i in range(3)),
                                   return_exceptions=True)
    assert isinstance(results[0], WorkerError) and "exploded" in results[0].message
    assert all(r.items[0].text.endswith(":x") for r in results[1:])
    assert len(pool.healthy()) == 2


async def test_with_every_worker_down_calls_fail_at_once(pool, workers):
    """At once: the call is sent to no worker, so it waits on none."""
    await pool.hello()
    for proc in workers[0]:
        os.kill(proc.pid, signal.SIGKILL)
    await wait_until(lambda: not pool.healthy())
    with pytest.raises(WorkerUnavailable, match="tried 0 of 2"):
        await pool.complete(request("r"))


async def test_a_restarted_worker_is_used_again(pool, workers):
    procs, addresses = workers
    await pool.hello()
    os.kill(procs[0].pid, signal.SIGKILL)
    await wait_until(lambda: len(pool.healthy()) == 1)
    procs[0] = start_worker_process(fake_worker.argv(addresses[0]), addresses[0], timeout_s=20)
    await wait_until(lambda: len(pool.healthy()) == 2)
    results = await asyncio.gather(*(pool.complete(request(f"r{i}")) for i in range(8)))
    assert procs[0].pid in {served_by(r) for r in results}


async def test_a_worker_inside_a_long_step_stays_healthy(workers):
    """A 3 s step (twice the hang threshold between steps) is work, not a hang: the worker is
    never marked down while it runs, and its answer comes."""
    pool = AsyncWorkerPool(workers[1][:1], timeout_s=2.0)
    try:
        await pool.hello()
        slow = asyncio.ensure_future(pool.complete(request("slow", "sleep:3")))
        with WorkerClient(workers[1][0], timeout_s=5.0) as probe:
            await wait_until(lambda: probe.health().in_step)
        verdicts = []
        while not slow.done():
            verdicts.append(pool.healthy() == workers[1][:1])
            await asyncio.sleep(0.05)
        assert (await slow).items[0].text.endswith(":sleep:3")
        assert verdicts and all(verdicts)
    finally:
        pool.close()


def health(in_step: bool, loop_age_s: float) -> HealthOk:
    return HealthOk(10.0, 1, 0, loop_age_s, in_step=in_step)


@pytest.mark.parametrize("in_step, loop_age_s, healthy", [
    (False, 0.1, True), (False, HUNG_AFTER_S + 0.1, False),
    (True, HUNG_AFTER_S + 2.0, True), (True, LONGEST_STEP_S + 0.1, False)])
def test_a_step_in_progress_is_not_a_hang_until_it_is_past_the_longest_step(in_step, loop_age_s,
                                                                             healthy):
    verdict, why = hung_verdict(health(in_step, loop_age_s), HUNG_AFTER_S, LONGEST_STEP_S)
    assert verdict is healthy and (why == "") is healthy


async def test_heartbeats_drop_a_frozen_worker(workers):
    procs, addresses = workers
    watch = WorkerWatch(addresses[0])
    watch.start()
    await asyncio.sleep(0.5)  # let its connection finish the handshake
    os.kill(procs[0].pid, signal.SIGSTOP)  # nothing in it runs, not even ZeroMQ's own threads
    try:
        # The ZMTP heartbeat times out and drops the connection (a connection still in its
        # handshake is dropped by the handshake timeout).
        await wait_until(lambda: watch.lost)
        assert not watch.up
    finally:
        os.kill(procs[0].pid, signal.SIGCONT)
        watch.close()


def test_both_ends_set_heartbeats():
    ctx = zmq.Context()
    try:
        for kind in (zmq.ROUTER, zmq.DEALER):
            sock = ctx.socket(kind)
            transport.configure(sock)
            assert sock.getsockopt(zmq.HEARTBEAT_IVL) == transport.HEARTBEAT_IVL_MS
            assert sock.getsockopt(zmq.HEARTBEAT_TIMEOUT) == transport.HEARTBEAT_TIMEOUT_MS
            sock.close()
    finally:
        ctx.term()


async def test_requests_on_a_worker_stopped_with_sigterm_are_all_answered(pool, workers):
    procs, addresses = workers
    calls = [asyncio.ensure_future(pool.complete(request(f"r{i}", "sleep:0.2"))) for i in range(8)]
    with WorkerClient(addresses[0], timeout_s=2.0) as probe:
        await wait_until(lambda: probe.health().live_requests > 1)
    procs[0].send_signal(signal.SIGTERM)  # it answers what it holds (done, or shutting down)
    results = await asyncio.wait_for(asyncio.gather(*calls), 30.0)
    assert sorted(r.id for r in results) == [f"r{i}" for i in range(8)]
    assert all(r.items for r in results)  # the refused ones were retried on the other worker
    assert await asyncio.to_thread(procs[0].wait, 30) == 0
