"""The upstream path checked against the worker path: the same answers, and cancels that arrive.

    python -m bench.upstream_check --worker ADDRESS --backend URL [--tasks PATH] [--limit N] [--json]

Parity: each held-out FIM task (FORMATS.md; the default is HumanEval single-line infilling, which
never enters training) is planned once (`completion.fim.plan`, as `infill complete` plans a file),
asked of the worker at ADDRESS (`engine.client.pool`), then of the upstream at URL
(`upstream.backend`, kind `--backend-kind`: e.g. this project's gateway over the same worker), then
of the worker again, and finished the same way. The worker's first answer to a text can differ from
its later ones (its prefix cache is cold the first time): `worker_same_as_itself` is the share of
tasks whose first and second worker answers agree, and `same` the share whose upstream answer is
the worker's second, over the tasks all answered (`failed` counts those where one failed or was late).

Cancel: a loopback HTTP server made here takes the request and never answers; the request's task
is cancelled, and the time from the cancel to the server reading the end of its connection is one
sample (`cancel_p50_ms`, `cancel_max_ms`), so a superseded keystroke is seen to leave the upstream.

A human table goes to stdout; with `--json` its last line is one JSON object with those figures.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from bench.quality import load_tasks, percentile, select_tasks, set_name
from completion import fim
from completion.requests import new_request_id
from completion.settings import Settings
from engine.client.calls import REPLY_SLACK_S, WorkerError, WorkerTimeout
from engine.client.pool import AsyncWorkerPool
from engine.wire.protocol import CompleteRequest
from infill.paths import REPO_ROOT
from upstream.backend import HttpBackend
from upstream.config import Upstream, base_url, checked_url

DEFAULT_TASKS = (REPO_ROOT.parent / "shared" / "data" / "human-eval-infilling"
                 / "HumanEval-SingleLineInfilling.jsonl.gz")


async def parity(tasks: Sequence[dict], args: argparse.Namespace) -> tuple[list[tuple[list[str], ...]], int]:
    """(worker's first texts, its texts asked again, upstream's texts) per task all answered, and
    how many tasks one failed."""
    settings = Settings(deadline_ms=args.deadline_ms, max_tokens=args.max_tokens)
    pool = AsyncWorkerPool([args.worker], timeout_s=REPLY_SLACK_S, client_name="bench.upstream_check")
    backend = HttpBackend(Upstream(args.backend_kind, base_url(args.backend), stream=not args.no_stream),
                          lambda m: None)
    pairs, failed = [], 0
    try:
        for number, task in enumerate(tasks):
            hole = fim.hole_in_text(f"file:///bench/task{number}.py", task["prompt"], task["suffix"])
            planned = fim.plan(hole, settings, None, new_request_id())  # automatic: as the gateway decides
            if not planned.requests:
                continue
            cold = await fim.ask(pool, planned.requests, (WorkerError, WorkerTimeout))
            upstream = await fim.ask(backend, planned.requests)
            worker = await fim.ask(pool, planned.requests, (WorkerError, WorkerTimeout))
            if backend.failures or len(worker) < len(planned.requests) or len(cold) < len(planned.requests):
                failed += 1  # a slow machine, not a difference: counted apart, and asked on
                backend.failures, backend.quiet_until = 0, 0.0
                continue
            pairs.append((fim.finish(planned, cold, settings), fim.finish(planned, worker, settings),
                          fim.finish(planned, upstream, settings)))
    finally:
        pool.close()
        await backend.aclose()
    return pairs, failed


async def cancel_samples(count: int) -> list[float]:
    """Milliseconds from cancelling a request's task to its server seeing the connection end."""
    arrived, ended = asyncio.Event(), asyncio.Event()
    ended_at = [0.0]

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        arrived.set()
        await reader.read()  # b"" once the client closes
        ended_at[0] = time.perf_counter()
        ended.set()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    backend = HttpBackend(Upstream("openai", f"http://127.0.0.1:{port}"), lambda m: None)
    samples = []
    for index in range(count):
        arrived.clear()
        ended.clear()
        request = CompleteRequest(f"c{index}", "fim", "def f():\n    ", "\n", deadline_ms=30_000)
        task = asyncio.ensure_future(backend.complete(request))
        await asyncio.wait_for(arrived.wait(), 10)
        cancelled_at = time.perf_counter()
        task.cancel()
        await asyncio.wait_for(ended.wait(), 10)
        samples.append((ended_at[0] - cancelled_at) * 1000.0)
    await backend.aclose()
    server.close()
    return samples


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.upstream_check", description=__doc__.splitlines()[0])
    parser.add_argument("--worker", metavar="ADDRESS", required=True, help="the worker to compare with")
    parser.add_argument("--backend", metavar="URL", required=True, type=checked_url,
                        help="the upstream over the same model, e.g. `infill gateway --worker ADDRESS`")
    parser.add_argument("--backend-kind", default="openai", choices=("openai", "fim", "llama.cpp"),
                        help="the upstream's dialect (default openai)")
    parser.add_argument("--tasks", type=Path, default=DEFAULT_TASKS, help="FIM tasks, .jsonl or .jsonl.gz")
    parser.add_argument("--limit", type=int, default=36, help="the first N tasks (default 36)")
    parser.add_argument("--deadline-ms", type=int, default=20_000,
                        help="each request's deadline: long, so that no answer is cut by the clock")
    parser.add_argument("--max-tokens", type=int, default=48, help="tokens per answer (default 48)")
    parser.add_argument("--no-stream", action="store_true",
                        help="ask the upstream for whole answers rather than event streams")
    parser.add_argument("--cancels", type=int, default=20, help="cancel samples (default 20)")
    parser.add_argument("--json", action="store_true", help="end with one JSON line of the figures")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    tasks = select_tasks(load_tasks(args.tasks), limit=args.limit)
    pairs, failed = asyncio.run(parity(tasks, args))
    samples = asyncio.run(cancel_samples(args.cancels))
    differing = [(worker, upstream) for _, worker, upstream in pairs if worker != upstream]
    unsteady = sum(cold != worker for cold, worker, _ in pairs)
    figures = {"tasks": len(pairs), "same": round(1 - len(differing) / len(pairs), 4) if pairs else 0.0,
               "worker_same_as_itself": round(1 - unsteady / len(pairs), 4) if pairs else 0.0,
               "answered": sum(bool(worker) for _, worker, _ in pairs), "failed": failed,
               "cancel_p50_ms": round(percentile(samples, 50), 2), "cancel_max_ms": round(max(samples), 2)}
    rows = [("set", set_name(args.tasks)), *figures.items()]
    print("\n".join(f"{label:<24}{value}" for label, value in rows))
    for worker, upstream in differing[:3]:
        print(f"differs: worker {worker!r} upstream {upstream!r}")
    if args.json:
        print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
