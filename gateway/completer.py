"""From an `Ask` to its choices, whole or streamed, with the rules every front end shares.

The hole is cut and parsed as `infill complete` cuts a file (`completion.fim.hole_in_text`, in
the gateway's language), and `completion.fim.plan` decides and builds the requests: one candidate,
decided as an editor completing while the user types; with `n` > 1, the candidates the language
server asks for when the user asks (an Invoked trigger). `completion.fim.run` asks the workers
within the deadline and post-processes; it raises a worker's failure here (`strict`: its docstring
says why the gateway differs), which the app answers with the HTTP error that says why. Stop
sequences cut last. A stream keeps its own loop, since `run` answers only when every reply is in:
it sends each candidate's settled text as the worker settles it (`gateway.settle`) and the rest
with the worker's Result, so its chunks add up to the unstreamed answer; candidates stream side by
side, each under its own choice index.
"""
from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass

from completion import fim
from completion.fim import Plan
from completion.requests import capped_snippets, new_request_id
from completion.settings import Settings
from engine.client.pool import AsyncWorkerPool
from engine.wire.deadline import Deadline
from engine.wire.protocol import CUT_SHORT, CompleteRequest, Partial, Result
from gateway.bodies import Ask
from gateway.settle import final_text, settled
from gateway.tasks import started

logger = logging.getLogger(__name__)


class StreamDiverged(RuntimeError):
    """The final text does not start with what was streamed (a rule of `gateway.settle` broke)."""


@dataclass(slots=True)
class Choice:
    text: str
    finish_reason: str  # "stop"; "length" when the worker answered at its deadline


@dataclass(slots=True)
class Delta:
    """A piece of one choice's text; `finish_reason` is set on the choice's last piece."""

    index: int
    text: str
    finish_reason: str | None = None


def finish_reason(results: list[Result]) -> str:
    return "length" if any(result.stop_reason in CUT_SHORT for result in results) else "stop"


class Completer:
    def __init__(self, pool: AsyncWorkerPool, settings: Settings, language: str | None) -> None:
        self.pool, self.settings, self.language = pool, settings, language

    def plan(self, ask: Ask) -> Plan:
        """The decision and the requests for `ask`, with the settings they follow."""
        settings = dataclasses.replace(self.settings, max_tokens=ask.max_tokens,
                                       deadline_ms=ask.deadline_ms or self.settings.deadline_ms)
        request_id = new_request_id()
        hole = fim.hole_in_text(f"gateway:{request_id}", ask.prefix, ask.suffix, self.language)
        planned = fim.plan(hole, settings, None, request_id, invoked=ask.n > 1, candidates=ask.n)
        if ask.warm_up:
            planned.requests = []
        elif ask.snippets:
            planned.requests = [_with_snippets(r, ask.snippets) for r in planned.requests]
        return planned

    async def complete(self, ask: Ask) -> list[Choice]:
        """`ask.n` choices: the distinct texts, best first (repeated when the candidates agree)."""
        planned = self.plan(ask)
        answered = await fim.run(planned, self.pool, Deadline.after_ms(planned.settings.deadline_ms), strict=True)
        texts = answered.texts or [""]
        reason = finish_reason(answered.results)
        choices = []
        for index in range(ask.n):
            text, stopped = final_text(texts[min(index, len(texts) - 1)], ask.stop)
            choices.append(Choice(text, "stop" if stopped else reason))
        return choices

    async def stream(self, ask: Ask) -> AsyncIterator[Delta]:
        """The choices as they settle: Deltas of each, its last one with its finish reason."""
        planned = self.plan(ask)
        if not planned.requests:
            for index in range(ask.n):
                yield Delta(index, "", "stop")
            return
        streams = [self._candidate(index, planned, request, ask.stop)
                   for index, request in enumerate(planned.requests)]
        async for delta in merged(streams):
            yield delta

    async def _candidate(self, index: int, planned: Plan, request: CompleteRequest,
                         stops: list[str]) -> AsyncIterator[Delta]:
        hole, settings, sent = planned.hole, planned.settings, ""
        async for reply in self.pool.stream(request):
            if isinstance(reply, Partial):
                ready = settled(reply.text, planned.mode, settings.max_lines, hole.prefix, hole.suffix,
                                hole.language, stops)
                if len(ready) > len(sent) and ready.startswith(sent):
                    yield Delta(index, ready[len(sent):])
                    sent = ready
                continue
            texts = fim.finish(planned, [reply], settings)
            final, stopped = final_text(texts[0] if texts else "", stops)
            if not final.startswith(sent):
                raise StreamDiverged(f"request {request.id}: streamed {sent!r}, answered {final!r}")
            yield Delta(index, final[len(sent):], "stop" if stopped else finish_reason([reply]))


def _with_snippets(request: CompleteRequest, extra: list) -> CompleteRequest:
    return dataclasses.replace(request, snippets=capped_snippets([*request.snippets, *extra]))


async def merged(streams: list[AsyncIterator[Delta]]) -> AsyncIterator[Delta]:
    """The items of several streams as each comes; the first failure ends all of them."""
    if len(streams) == 1:
        async for item in streams[0]:
            yield item
        return
    queue: asyncio.Queue = asyncio.Queue()

    async def pump(stream: AsyncIterator[Delta]) -> None:
        try:
            async for item in stream:
                await queue.put(item)
            await queue.put(None)
        except Exception as exc:  # handed to the consumer, which raises it
            await queue.put(exc)

    tasks = [started(pump(stream)) for stream in streams]
    try:
        ended = 0
        while ended < len(tasks):
            item = await queue.get()
            if isinstance(item, Exception):
                raise item
            if item is None:
                ended += 1
            else:
                yield item
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
