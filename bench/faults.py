"""Fault injection for the load benchmark: kill a worker, time how long until the pool answers.

`bench.load --kill-worker-every S` calls `kill_and_time_recovery` with one of its workers' process
ids. Recovery is measured from the SIGKILL to the first completion the pool answers afterwards:
with several workers that is the time to notice the dead one and retry elsewhere, with one it is
the time its supervisor (`engine.launch.WorkerGroup`) takes to restart it.
"""
from __future__ import annotations

import asyncio
import os
import signal
import time
import uuid

from engine.client.calls import WorkerError, WorkerTimeout
from engine.client.pool import AsyncWorkerPool
from engine.wire.protocol import CompleteRequest

PROBE_DEADLINE_MS = 1000
_RETRY_S = 0.02  # between failed probes while nothing answers


def probe_request() -> CompleteRequest:
    """A one-token completion: the cheapest thing a worker can answer."""
    return CompleteRequest(uuid.uuid4().hex, "fim", "def f(x):\n    return ", "\n",
                           mode="single_line", max_tokens=1, deadline_ms=PROBE_DEADLINE_MS)


async def kill_and_time_recovery(pool: AsyncWorkerPool, pid: int, timeout_s: float = 60.0) -> float:
    """SIGKILL worker `pid` of `pool`; seconds until the pool answers a completion again.

    Raises TimeoutError when nothing answers within `timeout_s`.
    """
    os.kill(pid, signal.SIGKILL)
    killed = time.monotonic()
    while True:
        try:
            await pool.complete(probe_request())
            return time.monotonic() - killed
        except (WorkerError, WorkerTimeout):
            if time.monotonic() - killed > timeout_s:
                raise TimeoutError(f"no worker answered within {timeout_s:.0f} s of killing "
                                   f"pid {pid}") from None
            await asyncio.sleep(_RETRY_S)
