"""`python -m bench.load --gateway`: the same holes asked of the workers directly and through the
HTTP gateway, unstreamed and streamed, by 1 to N clients at once.

Over the workers `bench.load` started, it starts a gateway process (`python -m gateway --worker
...`) and, for each client count, runs three phases of S seconds: `worker` (each client plans the
hole with `completion.fim.plan` and sends the requests through `engine.client.pool`, as the gateway does:
the worker's own answer time), `gateway` (POST /v1/completions) and `stream` (the same with
`stream: true`: time to the first chunk with text, and to the end). Each client asks its holes
one after another, among the holes where the rules complete at all (the others are answered
"nothing" at once). Reported per phase: requests, p50 / p95 ms, the stream's first-chunk p50,
failed (an error answer) and lost (no answer at all; must be 0); and the targets' figures: what
the gateway adds to the worker's p50 at the fewest clients (ms) and at the most (a ratio), and
the first chunk's p50 over the full answer's p50.
"""
from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import httpx

from completion import fim
from bench.quality import percentile
from completion.requests import new_request_id
from completion.settings import Settings
from engine.client.calls import WorkerError, WorkerTimeout
from engine.client.pool import AsyncWorkerPool

PHASES = ("worker", "gateway", "stream")
HTTP_SLACK_S = 5.0  # past the deadline, an answer that has not come is lost


@dataclass(slots=True)
class Tally:
    """One phase's outcomes."""

    latencies_ms: list[float] = field(default_factory=list)
    first_chunk_ms: list[float] = field(default_factory=list)
    failed: int = 0
    lost: int = 0


async def ask_worker(pool: AsyncWorkerPool, task: dict, settings: Settings, tally: Tally) -> None:
    started = time.perf_counter()  # the rules' time too, as the gateway's answer includes it
    hole = fim.hole_in_text("bench:hole.py", task["prompt"], task["suffix"], "python")
    planned = fim.plan(hole, settings, None, new_request_id())
    try:
        await asyncio.gather(*(pool.complete(r) for r in planned.requests))
    except (WorkerError, WorkerTimeout):
        tally.failed += 1
        return
    tally.latencies_ms.append((time.perf_counter() - started) * 1e3)


async def ask_gateway(client: httpx.AsyncClient, task: dict, settings: Settings, tally: Tally,
                      stream: bool) -> None:
    body = {"prompt": task["prompt"], "suffix": task["suffix"], "max_tokens": settings.max_tokens,
            "stream": stream}
    started, errored = time.perf_counter(), False
    try:
        async with client.stream("POST", "/v1/completions", json=body) as response:
            async for line in response.aiter_lines():
                errored |= line.startswith('data: {"error"')  # a stream that failed once started
                if stream:
                    tally_first(line, started, tally)
            if response.status_code != 200 or errored:
                tally.failed += 1
                return
    except httpx.HTTPError:
        tally.lost += 1
        return
    tally.latencies_ms.append((time.perf_counter() - started) * 1e3)


def tally_first(line: str, started: float, tally: Tally) -> None:
    """Note the time of a stream chunk with text (`one_client` keeps each stream's first)."""
    if not line.startswith("data: {"):
        return
    choices = json.loads(line[6:]).get("choices") or [{}]
    if choices[0].get("text"):
        tally.first_chunk_ms.append((time.perf_counter() - started) * 1e3)


async def one_client(phase: str, tasks: Sequence[dict], seconds: float, settings: Settings,
                     pool: AsyncWorkerPool, client: httpx.AsyncClient, tally: Tally) -> None:
    end, turn = time.monotonic() + seconds, 0
    while time.monotonic() < end:
        task = tasks[turn % len(tasks)]
        turn += 1
        if phase == "worker":
            await ask_worker(pool, task, settings, tally)
        else:
            before = len(tally.first_chunk_ms)
            await ask_gateway(client, task, settings, tally, phase == "stream")
            del tally.first_chunk_ms[before + 1:]  # the first chunk of this stream only


async def run_phase(phase: str, clients: int, tasks: Sequence[dict], url: str, addresses: Sequence[str],
                    seconds: float, settings: Settings) -> dict:
    tally = Tally()
    pool = AsyncWorkerPool(addresses, timeout_s=HTTP_SLACK_S, client_name="bench-gateway")
    timeout = httpx.Timeout(settings.deadline_ms / 1000.0 + HTTP_SLACK_S)
    limits = httpx.Limits(max_connections=clients)
    try:
        async with httpx.AsyncClient(base_url=url, timeout=timeout, limits=limits) as client:
            samples = [random.Random(seed).sample(list(tasks), min(32, len(tasks))) for seed in range(clients)]
            await asyncio.gather(*(one_client(phase, s, seconds, settings, pool, client, tally)
                                   for s in samples))
    finally:
        pool.close()
    return summarize(phase, clients, tally)


def summarize(phase: str, clients: int, tally: Tally) -> dict:
    def rounded(values: list[float], q: float) -> float | None:
        value = percentile(values, q)
        return None if value is None else round(value, 1)

    return {"phase": phase, "clients": clients, "requests": len(tally.latencies_ms),
            "p50_ms": rounded(tally.latencies_ms, 50), "p95_ms": rounded(tally.latencies_ms, 95),
            "first_chunk_p50_ms": rounded(tally.first_chunk_ms, 50),
            "failed": tally.failed, "lost": tally.lost}


def targets(runs: Sequence[dict]) -> dict:
    """The issue's figures: gateway p50 minus worker p50 at the fewest clients, their ratio at
    the most, and the stream's first-chunk p50 over its full p50 (at each count)."""
    by = {(r["phase"], r["clients"]): r for r in runs}
    counts = sorted({r["clients"] for r in runs})
    fewest, most = counts[0], counts[-1]

    def p50(phase: str, clients: int) -> float | None:
        return by[(phase, clients)]["p50_ms"]

    added = (round(p50("gateway", fewest) - p50("worker", fewest), 1)
             if p50("gateway", fewest) is not None and p50("worker", fewest) is not None else None)
    ratio = (round(p50("gateway", most) / p50("worker", most), 3)
             if p50("gateway", most) and p50("worker", most) else None)
    first = {c: round(by[("stream", c)]["first_chunk_p50_ms"] / by[("stream", c)]["p50_ms"], 3)
             for c in counts if by[("stream", c)]["first_chunk_p50_ms"] and by[("stream", c)]["p50_ms"]}
    return {"gateway_added_p50_ms_at_fewest": added, "gateway_p50_ratio_at_most": ratio,
            "first_chunk_over_full_p50": first, "lost": sum(r["lost"] for r in runs)}


def format_table(runs: Sequence[dict], header: str) -> str:
    columns = ("phase", "clients", "requests", "p50_ms", "p95_ms", "first_chunk_p50_ms", "failed", "lost")
    rows = [columns] + [tuple("-" if r[c] is None else str(r[c]) for c in columns) for r in runs]
    widths = [max(len(row[i]) for row in rows) for i in range(len(columns))]
    return "\n".join([header] + ["  ".join(cell.rjust(w) for cell, w in zip(row, widths)) for row in rows])


def completed_holes(tasks: Sequence[dict], settings: Settings) -> list[dict]:
    """The tasks whose hole the rules complete (an editor typing there would get a completion)."""
    return [task for task in tasks
            if fim.plan(fim.hole_in_text("bench:hole.py", task["prompt"], task["suffix"], "python"),
                        settings, None, "probe").requests]


def run(url: str, addresses: Sequence[str], counts: Sequence[int], tasks: Sequence[dict],
        seconds: float, settings: Settings) -> tuple[list[dict], dict]:
    tasks = completed_holes(tasks, settings)
    runs = [asyncio.run(run_phase(phase, clients, tasks, url, addresses, seconds, settings))
            for clients in counts for phase in PHASES]
    return runs, targets(runs)
