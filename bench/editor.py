"""One simulated editor of the load benchmark (`bench.load`), in a process of its own.

    python -m bench.editor   (driven by bench.load over stdin and stdout)

It reads one JSON line of settings from stdin (worker addresses, tasks, seed, seconds, deadline),
connects an `AsyncWorkerPool`, prints `ready`, and waits for a `go` line. Then it types for the
given seconds: at a random point of a task's prompt it types the rest of that line, a character
every 100 to 300 ms (seeded), and after each character sends a single-line CompleteRequest
without waiting for the previous one. The requests of one task share a session, so the worker
cancels the one still in flight when the next arrives. When the time is up it waits for every
request's final reply and prints one JSON line: `{"records": [[outcome, latency_ms], ...]}`.

Outcomes: `completed` (a Result the decoder finished), `expired` (a Result its deadline stopped),
`cancelled` (a Result for a superseded request), `overloaded` (the worker refused it), `failed`
(any other error, or no worker to take it), `lost` (no final reply within the deadline plus
`GRACE_S`). The latency runs from the request's sending to its final reply.
"""
from __future__ import annotations

import asyncio
import json
import random
import sys
import time
import uuid
from collections.abc import Iterator, Sequence

from engine.client.calls import WorkerError
from engine.client.pool import AsyncWorkerPool
from engine.wire.protocol import CompleteRequest, ErrorCode, Result

INTERVAL_S = (0.1, 0.3)  # between keystrokes, each of which sends a request
GRACE_S = 2.0  # past its deadline, a request without a final reply is lost
COMPLETED, EXPIRED, CANCELLED, OVERLOADED, FAILED, LOST = (
    "completed", "expired", "cancelled", "overloaded", "failed", "lost")
OUTCOMES = (COMPLETED, EXPIRED, CANCELLED, OVERLOADED, FAILED, LOST)
_BY_STOP_REASON = {"done": COMPLETED, "budget": COMPLETED, "deadline": EXPIRED, "cancelled": CANCELLED}

Record = tuple[str, float]  # (outcome, latency in ms)


def typing_start(prompt: str, rng: random.Random) -> int:
    """A random offset in `prompt` with a character of its line still to type there."""
    starts = [i for i, char in enumerate(prompt) if char != "\n"]
    return rng.choice(starts) if starts else len(prompt)


def keystrokes(tasks: Sequence[dict], rng: random.Random) -> Iterator[tuple[str, str, str]]:
    """Endless (task id, prefix, suffix) holes: each task's rest of a line, typed a character at
    a time; the document holds the task's whole text without what is still to type."""
    while True:
        task = rng.choice(tasks)
        prompt = task["prompt"]
        start = typing_start(prompt, rng)
        line_end = prompt.find("\n", start)
        line_end = len(prompt) if line_end < 0 else line_end
        suffix = prompt[line_end:] + task["canonical_solution"] + task["suffix"]
        for typed in range(start + 1, line_end + 1):
            yield task["task_id"], prompt[:typed], suffix


def outcome_of(reply: Result | BaseException) -> str:
    """The final outcome of a request whose call ended with `reply` (a Result or the error)."""
    if isinstance(reply, Result):
        return _BY_STOP_REASON[reply.stop_reason]
    if isinstance(reply, TimeoutError):
        return LOST
    if isinstance(reply, WorkerError) and reply.code == ErrorCode.OVERLOADED:
        return OVERLOADED
    return FAILED


async def ask(pool: AsyncWorkerPool, request: CompleteRequest) -> Record:
    """Send `request` and wait for its one final reply, at most its deadline plus GRACE_S."""
    sent = time.monotonic()
    try:
        async with asyncio.timeout(request.deadline_ms / 1000.0 + GRACE_S):
            reply: Result | BaseException = await pool.complete(request)
    except (TimeoutError, WorkerError) as exc:
        reply = exc
    return outcome_of(reply), (time.monotonic() - sent) * 1000.0


async def type_for(pool: AsyncWorkerPool, settings: dict, rng: random.Random) -> list[Record]:
    """Type for `settings["seconds"]`, a request per keystroke; every request's record."""
    editor = uuid.uuid4().hex
    calls = []
    until = time.monotonic() + settings["seconds"]
    for task_id, prefix, suffix in keystrokes(settings["tasks"], rng):
        if time.monotonic() >= until:
            break
        request = CompleteRequest(uuid.uuid4().hex, "fim", prefix, suffix, mode="single_line",
                                  max_tokens=settings["max_tokens"],
                                  deadline_ms=settings["deadline_ms"],
                                  document=task_id, session=f"{editor}:{task_id}")
        calls.append(asyncio.ensure_future(ask(pool, request)))
        await asyncio.sleep(rng.uniform(*INTERVAL_S))
    return list(await asyncio.gather(*calls))


async def run(settings: dict) -> list[Record]:
    """Connect, say ready, wait for go, type; the records of every request sent."""
    pool = AsyncWorkerPool(settings["addresses"], timeout_s=GRACE_S, client_name="bench-editor")
    try:
        await pool.hello()
        print("ready", flush=True)
        if (await asyncio.to_thread(sys.stdin.readline)).strip() != "go":
            raise SystemExit("bench.editor: expected 'go' on stdin; run it through bench.load")
        return await type_for(pool, settings, random.Random(settings["seed"]))
    finally:
        pool.close()


def main() -> int:
    settings = json.loads(sys.stdin.readline())
    records = asyncio.run(run(settings))
    print(json.dumps({"records": records}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
