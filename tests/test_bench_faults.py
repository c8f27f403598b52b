"""The load benchmark's fault mode: SIGKILL a worker and time the pool's recovery."""
from __future__ import annotations

import pytest

import fake_worker
from bench.faults import kill_and_time_recovery
from engine.pool import AsyncWorkerPool
from engine.supervisor import WorkerGroup, worker_addresses

pytestmark = [pytest.mark.slow, pytest.mark.timeout(30)]  # real worker processes


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
    pool = AsyncWorkerPool(group.addresses, timeout_s=2.0)
    try:
        await pool.hello()
        victim = group.process(group.addresses[0])
        recovery_s = await kill_and_time_recovery(pool, victim.pid, timeout_s=20.0)
        assert 0 < recovery_s < 20.0
        assert victim.wait(timeout=5) != 0  # with one worker, the answer came from its restart
    finally:
        pool.close()
