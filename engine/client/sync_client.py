"""The blocking worker client: `WorkerClient`, a thin face over the one client.

It runs an `AsyncWorkerClient` (`engine.client.async_client`) on an event loop of its own, in a
daemon thread, and waits for each call's answer: the same sockets, reply matching, timeouts and
cancels, for code that has no event loop (`infill complete`, the benchmarks' thread pools, tests).
It is safe to share between threads: every call runs on that one loop. A caller interrupted while
it waits (Ctrl-C) cancels its call, which cancels the request at the worker.
"""
from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, Self, TypeVar

from engine.client.async_client import AsyncWorkerClient
from engine.client.calls import DEFAULT_TIMEOUT_S
from engine.wire.keys import ClientKeys
from engine.wire.protocol import CompleteRequest, HealthOk, Info, Result, Welcome

T = TypeVar("T")


class WorkerClient:
    """`AsyncWorkerClient`'s calls, blocking; safe to call from many threads at once."""

    def __init__(self, address: str, timeout_s: float = DEFAULT_TIMEOUT_S,
                 client_name: str = "infill", keys: ClientKeys | None = None) -> None:
        self.client = AsyncWorkerClient(address, timeout_s, client_name, keys)
        self.address, self.client_name, self.keys = address, client_name, keys
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="infill-worker-client", daemon=True)
        self._thread.start()
        self._lock = threading.Lock()
        self._closed = False

    @property
    def timeout_s(self) -> float:
        """How long a call waits for its reply (a completion: its deadline plus this)."""
        return self.client.timeout_s

    @timeout_s.setter
    def timeout_s(self, value: float) -> None:
        self.client.timeout_s = value

    def hello(self) -> Welcome:
        return self._run(self.client.hello())

    def info(self) -> Info:
        return self._run(self.client.info())

    def health(self) -> HealthOk:
        return self._run(self.client.health())

    def complete(self, request: CompleteRequest) -> Result:
        """Waits for the request's deadline plus `timeout_s`."""
        return self._run(self.client.complete(request))

    def close(self) -> None:
        """Close the client's sockets and stop its loop; calls still in flight fail."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        asyncio.run_coroutine_threadsafe(self._close_on_loop(), self._loop).result()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def _close_on_loop(self) -> None:
        """Cancel the calls in flight (each cancels its request) and close the client."""
        calls = asyncio.all_tasks() - {asyncio.current_task()}
        for call in calls:
            call.cancel()
        await asyncio.gather(*calls, return_exceptions=True)
        self.client.close()

    def _run(self, call: Coroutine[Any, Any, T]) -> T:
        with self._lock:
            if self._closed:
                call.close()
                raise RuntimeError(f"the client of {self.address} is closed")
            answer = asyncio.run_coroutine_threadsafe(call, self._loop)
        try:
            return answer.result()
        except BaseException:
            answer.cancel()  # an interrupted wait: cancelling the call cancels the request
            raise
