"""What the upstream path adds to a vLLM server's own latency, per inline completion.

    python -m bench.upstream_overhead --backend URL --backend-model NAME [--backend-template qwen]
        [--tasks PATH] [--limit N] [--json]

Each held-out FIM task (default: HumanEval single-line infilling) is planned as `infill complete`
plans it (`completion.fim.plan`, one candidate), and its request goes, one at a time, through the
language server's upstream client (`upstream.backend.HttpBackend`, kind `openai`, streamed as the
editor asks) to the vLLM server at URL; then the same HTTP body goes once more with a bare `httpx`
POST. Around each, vLLM's `/metrics` histogram `vllm:e2e_request_latency_seconds` gives the
engine's own time for that request (from its arrival in vLLM's front end to its last token). Per
request: `infill_ms` (the client's call, from the request to the settled texts), `engine_ms`,
`overhead_ms` = infill_ms - engine_ms (HTTP on loopback, vLLM's request parsing and streaming,
our client's body, stream reading and answer checks); `bare_ms`, `bare_engine_ms` and
`bare_overhead_ms` the same for the bare POST; p50 and p90 of each, and `plan_ms` and `finish_ms`
(our own work on either side of the call). A request the engine did not count exactly once (a
retry, a failure) is left out and counted in `failed`. The server must serve nobody else meanwhile.

A human table goes to stdout; with `--json` its last line is one JSON object with the figures.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from bench.quality import load_tasks, percentile, select_tasks, set_name
from bench.upstream_check import DEFAULT_TASKS
from completion import fim
from completion.requests import new_request_id
from completion.settings import Settings
from upstream.backend import HttpBackend
from upstream.config import Upstream, base_url, checked_url
from upstream.dialects import call_for
from upstream.templates import NAMES

LATENCY = "vllm:e2e_request_latency_seconds"


@dataclass
class Samples:
    """Milliseconds per request (or per task, for plan and finish), by figure."""

    by_figure: dict[str, list[float]] = field(default_factory=dict)
    failed: int = 0

    def add(self, figure: str, value_ms: float) -> None:
        self.by_figure.setdefault(figure, []).append(value_ms)


async def engine_clock(client: httpx.AsyncClient, root: str) -> tuple[float, int]:
    """(seconds summed, requests counted) of vLLM's end-to-end latency histogram so far."""
    page = (await client.get(f"{root}/metrics")).text
    total = sum(float(v) for v in re.findall(rf"^{LATENCY}_sum{{[^}}]*}} (\S+)$", page, re.MULTILINE))
    count = sum(int(float(v)) for v in re.findall(rf"^{LATENCY}_count{{[^}}]*}} (\S+)$", page, re.MULTILINE))
    return total, count


async def timed_against_engine(client: httpx.AsyncClient, root: str, call) -> tuple[float, float] | None:
    """(wall ms of `call()`, the engine's ms for it), or None unless the engine counted one request."""
    before_s, before_count = await engine_clock(client, root)
    started = time.perf_counter()
    await call()
    wall_ms = (time.perf_counter() - started) * 1000.0
    after_s, after_count = await engine_clock(client, root)
    if after_count != before_count + 1:
        return None
    return wall_ms, (after_s - before_s) * 1000.0


async def measure_task(task: dict, number: int, args: argparse.Namespace, backend: HttpBackend,
                       client: httpx.AsyncClient, samples: Samples) -> None:
    """One task's plan, its request through our client and bare, and its finish."""
    settings = Settings(deadline_ms=args.deadline_ms, max_tokens=args.max_tokens)
    started = time.perf_counter()
    hole = fim.hole_in_text(f"file:///bench/task{number}.py", task["prompt"], task["suffix"])
    planned = fim.plan(hole, settings, None, new_request_id(), invoked=True)
    samples.add("plan_ms", (time.perf_counter() - started) * 1000.0)
    if not planned.requests:
        return
    request, results = planned.requests[0], []

    async def ours() -> None:
        results.extend(await fim.ask(backend, [request]))

    async def bare() -> None:
        sent = call_for(backend.upstream, request)
        async with client.stream("POST", f"{backend.upstream.url}{sent.path}", json=sent.body) as answer:
            await answer.aread()

    root = backend.upstream.url.removesuffix("/v1")
    for caller, call in (("infill", ours), ("bare", bare)):
        timed = await timed_against_engine(client, root, call)
        if timed is None or (caller == "infill" and backend.failures):
            samples.failed += 1
            backend.failures, backend.quiet_until = 0, 0.0
            return
        wall_ms, engine_ms = timed
        prefix = "" if caller == "infill" else "bare_"
        samples.add(f"{caller}_ms", wall_ms)
        samples.add(f"{prefix}engine_ms", engine_ms)
        samples.add(f"{prefix}overhead_ms", wall_ms - engine_ms)
    started = time.perf_counter()
    fim.finish(planned, results, settings)
    samples.add("finish_ms", (time.perf_counter() - started) * 1000.0)


async def measure(tasks: Sequence[dict], args: argparse.Namespace) -> Samples:
    upstream = Upstream("openai", base_url(args.backend), args.backend_model, args.backend_template)
    backend = HttpBackend(upstream, lambda message: None)
    samples = Samples()
    async with httpx.AsyncClient(timeout=args.deadline_ms / 1000.0) as client:
        try:
            for number, task in enumerate(tasks):
                await measure_task(task, number, args, backend, client, samples)
        finally:
            await backend.aclose()
    return samples


def figures_of(samples: Samples) -> dict:
    figures: dict = {"requests": len(samples.by_figure.get("infill_ms", [])), "failed": samples.failed}
    for figure, values in sorted(samples.by_figure.items()):
        stem = figure.removesuffix("_ms")
        figures[f"{stem}_p50_ms"] = round(percentile(values, 50), 2)
        figures[f"{stem}_p90_ms"] = round(percentile(values, 90), 2)
    return figures


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.upstream_overhead", description=__doc__.splitlines()[0])
    parser.add_argument("--backend", metavar="URL", required=True, type=checked_url,
                        help="the vLLM server's base URL, with or without /v1")
    parser.add_argument("--backend-model", metavar="NAME", default="", help="the served model's name")
    parser.add_argument("--backend-template", choices=NAMES, default="",
                        help="the model family's FIM template (vLLM takes `suffix` only for FIM models)")
    parser.add_argument("--tasks", type=Path, default=DEFAULT_TASKS, help="FIM tasks, .jsonl or .jsonl.gz")
    parser.add_argument("--limit", type=int, default=30, help="the first N tasks (default 30)")
    parser.add_argument("--deadline-ms", type=int, default=30_000, help="each request's deadline")
    parser.add_argument("--max-tokens", type=int, default=16, help="tokens per answer (default 16)")
    parser.add_argument("--json", action="store_true", help="end with one JSON line of the figures")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    tasks = select_tasks(load_tasks(args.tasks), limit=args.limit)
    figures = figures_of(asyncio.run(measure(tasks, args)))
    rows = [("set", set_name(args.tasks)), *figures.items()]
    print("\n".join(f"{label:<24}{value}" for label, value in rows))
    if args.json:
        print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
