"""The worker's clients against a worker on a fake model runner: calls from a thread pool, a
blocking call's timeout that cancels its request, the asynchronous client, and an asynchronous
call cancelled, which cancels its request at the worker."""
# The fixtures imported from worker_fakes are the tests' parameters: not redefinitions.
# ruff: noqa: F811
from __future__ import annotations

import asyncio
import functools
from concurrent.futures import ThreadPoolExecutor

import pytest

from engine.client.async_client import AsyncWorkerClient
from engine.client.calls import WorkerError, WorkerTimeout
from engine.wire.protocol import encode
from worker_fakes import GATED_DEADLINE_MS, REPLY_WAIT_S, request, wait_for_live_requests
from worker_fakes import client, ipc_address, raw, served  # noqa: F401 (fixtures)

pytestmark = pytest.mark.timeout(120)


def test_concurrent_calls_from_a_thread_pool(client):
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda i: client.complete(request(f"r{i}", prefix=f"p{i}")), range(12)))
    assert [r.items[0].text for r in results] == [f"p{i}|\n" for i in range(12)]


def test_client_timeout_cancels_the_request(served, raw, client):
    # "slow" runs in steps of 0.3 s until the gate opens: "queued" arrives during a step
    raw.send(encode(request("slow", prefix="gated:0.3", deadline_ms=GATED_DEADLINE_MS)))
    wait_for_live_requests(client, 1)  # "slow" is in before "queued"
    client.timeout_s = 0.05
    with pytest.raises(WorkerTimeout):
        client.complete(request("queued", prefix="hold", deadline_ms=1))
    client.timeout_s = REPLY_WAIT_S
    wait_for_live_requests(client, 1)  # "queued" is off, "slow" still runs
    served[1].gate.set()
    assert raw.recv().id == "slow"
    assert client.complete(request("next")).id == "next"
    assert [c["prefix"] for c in served[1].calls] == ["gated:0.3", "x = "]  # "queued" was never laid out


async def test_async_client(served):
    client = AsyncWorkerClient(served[0], timeout_s=REPLY_WAIT_S)
    try:
        assert (await client.hello()).model == "fake-tiny"
        assert (await client.health()).served == 0
        results = await asyncio.gather(*(client.complete(request(f"a{i}", prefix=f"p{i}")) for i in range(3)))
        assert [r.id for r in results] == ["a0", "a1", "a2"]
        with pytest.raises(WorkerError):
            await client.complete(request("a-boom", prefix="boom"))
        assert (await client.info()).family == "fake"
    finally:
        client.close()


async def test_cancelling_an_async_call_cancels_the_request(served, client):
    live = functools.partial(asyncio.to_thread, wait_for_live_requests, client)  # probes the worker
    async_client = AsyncWorkerClient(served[0], timeout_s=REPLY_WAIT_S)
    try:
        slow = asyncio.create_task(async_client.complete(
            request("slow", prefix="gated:0.06", deadline_ms=GATED_DEADLINE_MS)))
        await live(1)
        queued = asyncio.create_task(async_client.complete(  # only its Cancel ends it
            request("queued", prefix="hold", deadline_ms=GATED_DEADLINE_MS)))
        await live(2)
        queued.cancel()
        with pytest.raises(asyncio.CancelledError):
            await queued
        await live(1)  # "queued" is gone while "slow" still runs
        served[1].gate.set()
        assert (await slow).id == "slow"
        laid_out = [c["prefix"] for c in served[1].calls]  # "queued" only if a step began before its cancel
        assert laid_out in (["gated:0.06"], ["gated:0.06", "hold"])
    finally:
        async_client.close()
