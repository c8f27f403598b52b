"""The load benchmark's fault mode: SIGKILL a worker and time the pool's recovery."""
from __future__ import annotations

import pytest

import fake_worker
from bench.faults import kill_and_time_recovery
from engine.launch import WorkerGroup, worker_addresses
from engine.client.pool import AsyncWorkerPool
from engine.wire.protocol import CompleteRequest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]  # real worker processes

RECOVERY_WAIT_S = 60.0  # only a pool that never recovers takes this long


@pytest.fixture
def group(short_tmp, request):
    """Supervised fake workers (their count is the test's parameter)."""
    workers = WorkerGroup(fake_worker.argv, worker_addresses(f"ipc://{short_tmp}/w.sock", request.param),
                          startup_timeout_s=20)
    workers.start()
    yield workers
    workers.stop()


@pytest.mark.parametrize("group", [1, 2], indirect=True)
async def test_recovery_after_a_killed_worker(group):
    """The pool answers again after a SIGKILL, and the recovery is measured (how fast is for
    bench.load); kill_and_time_recovery raises TimeoutError when it never does."""
    pool = AsyncWorkerPool(group.addresses, timeout_s=2.0)
    try:
        await pool.hello()
        victim = group.process(group.addresses[0])
        await kill_and_time_recovery(pool, victim.pid, timeout_s=RECOVERY_WAIT_S)
        assert victim.wait(timeout=30) != 0  # with one worker, the answer came from its restart
        result = await pool.complete(CompleteRequest("after", "fim", "x", "", deadline_ms=30_000))
        assert result.stop_reason == "done" and result.items
    finally:
        pool.close()
