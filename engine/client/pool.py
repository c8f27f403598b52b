"""Client-side balancing over several workers, with retries when one goes down.

`AsyncWorkerPool` has the methods of `AsyncWorkerClient` (hello, info, health, complete, close)
over a list of worker addresses. Each call goes to the healthy worker with the fewest calls in
flight; a `WorkerWatch` per worker (`engine.client.watch`) says which are healthy. A worker that seems
hung (or does not answer its health checks) gets calls only when no healthy one is left, since
it may merely be slow. A call in flight leaves its worker, to be retried on another with what is
left of its deadline, when the worker's connection drops (the request went with it) or when the
worker seems hung while another is healthy; so does a call the worker refuses because it is
shutting down or overloaded. With nowhere left to go it fails with `WorkerUnavailable`: no call
waits on a dead worker. `stream` is `complete` with the Partial replies as they come: it moves on
the same way until the first Partial, and after one (what was sent cannot be taken back) a worker
that goes down ends the stream with `WorkerUnavailable`.
"""
from __future__ import annotations

import asyncio
import dataclasses
import itertools
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

from engine.client.async_client import AsyncWorkerClient
from engine.client.calls import DEFAULT_TIMEOUT_S, WorkerError
from engine.wire.deadline import Deadline
from engine.wire.keys import ClientKeys
from engine.wire.protocol import CompleteRequest, ErrorCode, HealthOk, Info, Partial, Result, Welcome
from engine.client.watch import HUNG_AFTER_S, LONGEST_STEP_S, PROBE_INTERVAL_S, PROBE_TIMEOUT_S, WorkerWatch

UNAVAILABLE = "unavailable"
_RETRIED_CODES = (ErrorCode.SHUTTING_DOWN, ErrorCode.OVERLOADED)  # another worker may answer


class WorkerUnavailable(WorkerError):
    """No worker could answer: all are down, or the one tried went down and time ran out."""

    def __init__(self, message: str) -> None:
        super().__init__(UNAVAILABLE, message)


class _WorkerWentDown(Exception):
    """The worker of a call in flight was marked down; the call may go elsewhere."""


@dataclasses.dataclass(eq=False)
class _Member:
    """One worker as the pool sees it."""

    client: AsyncWorkerClient
    watch: WorkerWatch
    in_flight: int = 0


class AsyncWorkerPool:
    """Balances calls over `addresses`; use from one event loop, like `AsyncWorkerClient`."""

    def __init__(self, addresses: Sequence[str], timeout_s: float = DEFAULT_TIMEOUT_S,
                 client_name: str = "infill", keys: ClientKeys | None = None,
                 probe_interval_s: float = PROBE_INTERVAL_S, probe_timeout_s: float = PROBE_TIMEOUT_S,
                 hung_after_s: float = HUNG_AFTER_S, longest_step_s: float = LONGEST_STEP_S) -> None:
        if not addresses:
            raise ValueError("a worker pool needs at least one worker address")
        self.addresses = list(addresses)
        self._members = [_Member(AsyncWorkerClient(a, timeout_s, client_name, keys),
                                 WorkerWatch(a, keys, client_name, probe_interval_s,
                                             probe_timeout_s, hung_after_s, longest_step_s))
                         for a in self.addresses]
        self._turn = itertools.count()  # breaks ties between equally loaded workers

    @property
    def address(self) -> str:
        return ",".join(self.addresses)

    def healthy(self) -> list[str]:
        """The addresses of the workers that are up now."""
        return [m.client.address for m in self._members if m.watch.up]

    async def hello(self) -> Welcome:
        return await self._call(lambda client, budget: client.hello())

    async def info(self) -> Info:
        return await self._call(lambda client, budget: client.info())

    async def health(self) -> HealthOk:
        return await self._call(lambda client, budget: client.health())

    async def complete(self, request: CompleteRequest) -> Result:
        """Like `AsyncWorkerClient.complete`; a retry carries the rest of the deadline."""
        def send(client: AsyncWorkerClient, budget_ms: int) -> Awaitable[Result]:
            return client.complete(dataclasses.replace(request, deadline_ms=budget_ms))
        return await self._call(send, Deadline.after_ms(request.deadline_ms))

    async def stream(self, request: CompleteRequest) -> AsyncIterator[Partial | Result]:
        """Like `AsyncWorkerClient.stream` on the least busy healthy worker (see the module)."""
        for member in self._members:
            member.watch.start()
        deadline, tried, refusal = Deadline.after_ms(request.deadline_ms), [], None
        while (member := self._pick(tried)) is not None:
            tried.append(member)
            budget_ms = deadline.left_ms()
            if budget_ms < 1:
                break
            replies = member.client.stream(dataclasses.replace(request, deadline_ms=budget_ms))
            sent = False
            try:
                async for reply in self._watched(member, replies):
                    sent = True
                    yield reply
                return
            except _WorkerWentDown:
                if sent:
                    raise WorkerUnavailable(f"the worker at {member.client.address} went down in "
                                            "the middle of the stream") from None
            except WorkerError as exc:
                if sent or exc.code not in _RETRIED_CODES:
                    raise
                refusal = exc
        if refusal is not None:
            raise refusal
        raise WorkerUnavailable(f"no worker answered; tried {len(tried)} of {len(self._members)} "
                                f"({', '.join(self.healthy()) or 'none'} up)")

    async def _watched(self, member: _Member, replies: AsyncIterator[Any]) -> AsyncIterator[Any]:
        """The replies of a stream on `member`, or `_WorkerWentDown` when the stream should leave
        it; leaving closes the stream (which cancels its request)."""
        member.in_flight += 1
        pending: asyncio.Future | None = None
        try:
            while True:
                pending = asyncio.ensure_future(anext(replies))
                try:
                    reply = await self._await_on(member, pending)
                except StopAsyncIteration:
                    return
                yield reply
        finally:
            member.in_flight -= 1
            # A read still running was cancelled (a caller that is cancelled again at every await,
            # as under anyio's cancel scopes, may leave before it ends): its own cancellation
            # closes the stream, and closing it here too would find it running.
            if pending is None or pending.done():
                await replies.aclose()

    def close(self) -> None:
        for member in self._members:
            member.client.close()
            member.watch.close()

    async def _call(self, send: Callable[[AsyncWorkerClient, int], Awaitable[Any]],
                    deadline: Deadline | None = None) -> Any:
        """Try the workers in turn until one answers; `deadline` (None: none) bounds the retries,
        each sent with what is left of it (0 without one). When every worker refused, the last
        refusal (overloaded, shutting down) is raised."""
        for member in self._members:
            member.watch.start()
        tried, refusal = [], None
        while (member := self._pick(tried)) is not None:
            tried.append(member)
            budget_ms = 0 if deadline is None else deadline.left_ms()
            if deadline is not None and budget_ms < 1:
                break
            try:
                return await self._call_on(member, send(member.client, budget_ms))
            except _WorkerWentDown:
                continue
            except WorkerError as exc:
                if exc.code not in _RETRIED_CODES:
                    raise
                refusal = exc
        if refusal is not None:
            raise refusal
        raise WorkerUnavailable(f"no worker answered; tried {len(tried)} of {len(self._members)} "
                                f"({', '.join(self.healthy()) or 'none'} up)")

    def _pick(self, tried: list[_Member]) -> _Member | None:
        """The least busy worker not lost nor tried yet, healthy ones first; ties go round in turn."""
        turn, count = next(self._turn), len(self._members)
        ranked = [(not m.watch.up, m.in_flight, (i - turn) % count, i)
                  for i, m in enumerate(self._members) if not m.watch.lost and m not in tried]
        return self._members[min(ranked)[3]] if ranked else None

    def _should_leave(self, member: _Member) -> bool:
        """Whether a call waiting on `member` should go elsewhere (or fail)."""
        if member.watch.lost:
            return True
        return not member.watch.up and any(m.watch.up for m in self._members if m is not member)

    async def _call_on(self, member: _Member, call: Awaitable[Any]) -> Any:
        """Await `call`, or cancel it and raise `_WorkerWentDown` when it should leave `member`."""
        member.in_flight += 1
        try:
            return await self._await_on(member, asyncio.ensure_future(call))
        finally:
            member.in_flight -= 1

    async def _await_on(self, member: _Member, answer: asyncio.Future) -> Any:
        """The result of `answer`, or `_WorkerWentDown` when it should leave `member`; an answer
        left unfinished is cancelled, and awaited so that its own clean-up has run."""
        try:
            while not answer.done():
                changed = asyncio.ensure_future(member.watch.changed.wait())
                try:
                    await asyncio.wait((answer, changed), return_when=asyncio.FIRST_COMPLETED)
                finally:
                    changed.cancel()
                if not answer.done() and self._should_leave(member):
                    raise _WorkerWentDown()
            return answer.result()
        finally:
            answer.add_done_callback(_retrieved)  # an answer that ends as its caller is cancelled is looked at too
            if not answer.done():
                answer.cancel()
                await asyncio.wait((answer,))


def _retrieved(answer: asyncio.Future) -> None:
    """Look at how an abandoned answer ended, so that asyncio never logs its exception as never
    retrieved (a read that raced its cancel can end with the worker's reply, an error)."""
    if not answer.cancelled():
        answer.exception()
