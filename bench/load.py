"""The worker under load: simulated editors typing at once, each in a process of its own.

    python -m bench.load [--clients 1,4,16] [--seconds S] [--workers N] [--model DIR]
                         [--threads T] [--kill-worker-every S] [--gateway] [--json]

It starts N workers on private ipc:// sockets (`engine.launch`, which restarts any that
dies) and warms each up. Then, for each client count, it runs that many editors
(`python -m bench.editor`) over the workers at once for S seconds: each types through FIM tasks
(FORMATS.md) and sends a single-line request per keystroke, every 100 to 300 ms, which supersedes
its previous one (see `bench.editor`). Every request's final outcome is counted.

Reported per client count:
- p50 / p95 / p99 latency (ms) of the requests that completed, from sending to the reply;
- how many requests completed, expired (the deadline stopped them), were cancelled (superseded),
  refused as overloaded, failed, or were lost (no final reply within deadline + 2 s; must be 0);
- forward passes and decoding steps per second, the mean batch size, and how many requests took
  over the running decoding they superseded (`carried`: the typed text was already committed),
  from the workers' Health counters before and after the run (a killed worker's counts die with
  it; its successor's count from its start).
With `--kill-worker-every S`, one worker (round robin) is SIGKILLed every S seconds during each
run (`bench.faults`), unless one is still restarting then: the recovery time is from the kill to
the next completion the pool answers. The p99 ratio is p99 at the most clients over p99 at the
fewest.

With `--gateway` it measures the HTTP gateway over the same workers instead (`bench.gateway_load`:
the worker directly, the gateway, the gateway streaming).

A human table goes to stdout; with `--json` its last line is one JSON object:
`{"runs": [{"clients", "p50_ms", ...}], "p99_ratio", "lost", "recoveries_s"}`.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import logging
import random
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench import gateway_load
from bench.editor import COMPLETED, OUTCOMES, Record
from bench.faults import kill_and_time_recovery, probe_request
from bench.quality import load_tasks, percentile, set_name
from completion.settings import DEFAULT_DEADLINE_MS, DEFAULT_MAX_TOKENS, Settings
from engine.client.calls import WorkerError, WorkerTimeout
from engine.launch import DEFAULT_STARTUP_TIMEOUT_S, WorkerGroup, start_local_workers
from engine.client.pool import AsyncWorkerPool
from engine.client.sync_client import WorkerClient
from gateway.launch import start_gateway, stop_gateway
from infill.paths import REPO_ROOT, bundled_model_dir

logger = logging.getLogger("bench.load")

DEFAULT_TASKS = (REPO_ROOT.parent / "shared" / "data" / "human-eval-infilling"
                 / "HumanEval-SingleLineInfilling.jsonl.gz")
TASKS_PER_EDITOR = 32  # a seeded sample each editor types through
EDITOR_READY_S = 120.0  # an editor imports zmq and connects while the CPU may be busy
DRAIN_S = 30.0  # past the run, for every editor's last requests to end (each within its deadline + 2 s)
TASK_FIELDS = ("task_id", "prompt", "canonical_solution", "suffix")


@dataclass(slots=True)
class Counters:
    """One worker's Health counters, and when they were read."""

    read_at: float
    uptime_s: float
    steps: int
    forward_passes: int
    step_requests: int
    carried: int


def read_counters(address: str, timeout_s: float = DEFAULT_STARTUP_TIMEOUT_S) -> Counters:
    """The counters of the worker at `address`, waiting for one that is restarting."""
    give_up = time.monotonic() + timeout_s
    with WorkerClient(address, timeout_s=1.0, client_name="bench-load") as client:
        while True:
            try:
                health = client.health()
                return Counters(time.monotonic(), health.uptime_s, health.steps,
                                health.forward_passes, health.step_requests, health.carried)
            except (WorkerTimeout, WorkerError):
                if time.monotonic() > give_up:
                    raise


COUNTED = ("steps", "forward_passes", "step_requests", "carried")


def counted_since(before: Counters, after: Counters) -> tuple[int, ...]:
    """The COUNTED counters between two reads; all of `after`'s when the worker restarted in
    between (its uptime did not advance with the clock)."""
    restarted = after.uptime_s < before.uptime_s + (after.read_at - before.read_at) - 1.0
    return tuple(getattr(after, name) - (0 if restarted else getattr(before, name)) for name in COUNTED)


def warm_up(addresses: Sequence[str]) -> None:
    """One completion per worker, so that no run pays for a first forward pass."""
    for address in addresses:
        with WorkerClient(address, client_name="bench-load") as client:
            client.complete(probe_request())


def editor_settings(addresses: Sequence[str], tasks: Sequence[dict], seed: int,
                    args: argparse.Namespace) -> dict:
    """The JSON line that starts one `bench.editor`."""
    sample = random.Random(seed).sample(list(tasks), min(TASKS_PER_EDITOR, len(tasks)))
    return {"addresses": list(addresses), "seconds": args.seconds, "seed": seed,
            "deadline_ms": args.deadline_ms, "max_tokens": args.max_tokens,
            "tasks": [{name: task.get(name, "") for name in TASK_FIELDS} for task in sample]}


def start_editors(settings: Sequence[dict]) -> list[subprocess.Popen]:
    """One `python -m bench.editor` per settings, each connected and waiting for `go`."""
    editors = []
    try:
        for one in settings:
            editor = subprocess.Popen([sys.executable, "-m", "bench.editor"], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, text=True, cwd=REPO_ROOT)
            editors.append(editor)
            editor.stdin.write(json.dumps(one) + "\n")
            editor.stdin.flush()
        for editor in editors:
            if editor.stdout.readline().strip() != "ready":
                raise RuntimeError(f"editor pid {editor.pid} did not get ready; see its stderr above")
    except BaseException:
        for editor in editors:
            editor.kill()
        raise
    return editors


def collect(editors: Sequence[subprocess.Popen], timeout_s: float) -> list[Record]:
    """Wait for every editor's records."""
    records: list[Record] = []
    for editor in editors:
        out, _ = editor.communicate(timeout=timeout_s)
        if editor.returncode != 0:
            raise RuntimeError(f"editor pid {editor.pid} exited with code {editor.returncode}; "
                               "see its stderr above")
        records += [tuple(r) for r in json.loads(out.splitlines()[-1])["records"]]
    return records


def victim(group: WorkerGroup, turn: int) -> int | None:
    """The pid of the worker whose `turn` it is to die (round robin), or None while any worker
    is still restarting: a kill then would take down more than one worker at once."""
    processes = [group.process(address) for address in group.addresses]
    if any(process.poll() is not None for process in processes):
        return None
    return processes[turn % len(processes)].pid


async def kill_workers(group: WorkerGroup, every_s: float, seconds: float) -> list[float]:
    """SIGKILL a worker every `every_s` for `seconds`; each kill's recovery time in seconds."""
    pool = AsyncWorkerPool(group.addresses, client_name="bench-faults")
    recoveries: list[float] = []
    until = time.monotonic() + seconds
    try:
        while time.monotonic() + every_s < until:
            await asyncio.sleep(every_s)
            pid = victim(group, len(recoveries))
            if pid is None:
                logger.info("no kill this time: a worker is still restarting")
                continue
            recoveries.append(await kill_and_time_recovery(pool, pid))
            logger.info("killed worker pid %d: the pool answered again %.2f s later", pid,
                        recoveries[-1])
    finally:
        pool.close()
    return recoveries


def run_clients(group: WorkerGroup, clients: int, tasks: Sequence[dict],
                args: argparse.Namespace) -> dict:
    """One run of `clients` editors; its figures."""
    settings = [editor_settings(group.addresses, tasks, seed, args) for seed in range(clients)]
    editors = start_editors(settings)
    try:
        before = [read_counters(a) for a in group.addresses]
        started = time.monotonic()
        for editor in editors:
            editor.stdin.write("go\n")
            editor.stdin.flush()
        recoveries = (asyncio.run(kill_workers(group, args.kill_worker_every, args.seconds))
                      if args.kill_worker_every else [])
        records = collect(editors, args.seconds + DRAIN_S)
        elapsed = time.monotonic() - started
    finally:
        for editor in editors:
            if editor.poll() is None:
                editor.kill()
    counted = [counted_since(b, read_counters(a)) for a, b in zip(group.addresses, before)]
    return summarize(clients, records, counted, elapsed, recoveries)


def summarize(clients: int, records: Sequence[Record], counted: Sequence[tuple[int, ...]],
              elapsed_s: float, recoveries: Sequence[float]) -> dict:
    """The figures of one run (see the module docstring)."""
    outcomes = Counter(outcome for outcome, _ in records)
    latencies = [ms for outcome, ms in records if outcome == COMPLETED]
    steps, forwards, step_requests, carried = (sum(c[i] for c in counted) for i in range(len(COUNTED)))
    run: dict = {"clients": clients, "requests": len(records)}
    for q in (50, 95, 99):
        value = percentile(latencies, q)
        run[f"p{q}_ms"] = None if value is None else round(value, 1)
    run |= {outcome: outcomes[outcome] for outcome in OUTCOMES}
    run["forward_passes_per_s"] = round(forwards / elapsed_s, 1)
    run["steps_per_s"] = round(steps / elapsed_s, 1)  # a worker busy throughout: 1 / step duration
    run["mean_batch"] = round(step_requests / steps, 2) if steps else None
    run["carried"] = carried
    run["recoveries_s"] = [round(r, 3) for r in recoveries]
    return run


def report(runs: Sequence[dict]) -> dict:
    """The JSON object of the whole benchmark."""
    fewest, most = runs[0], runs[-1]
    ratio = (round(most["p99_ms"] / fewest["p99_ms"], 2)
             if most["p99_ms"] is not None and fewest["p99_ms"] else None)
    return {"runs": list(runs), "p99_ratio": ratio, "lost": sum(r["lost"] for r in runs),
            "recoveries_s": [s for r in runs for s in r["recoveries_s"]]}


def format_table(runs: Sequence[dict], header: str) -> str:
    columns = ("clients", "requests", "p50_ms", "p95_ms", "p99_ms", *OUTCOMES,
               "forward_passes_per_s", "steps_per_s", "mean_batch", "carried")
    rows = [columns] + [tuple("-" if r[c] is None else str(r[c]) for c in columns) for r in runs]
    widths = [max(len(row[i]) for row in rows) for i in range(len(columns))]
    lines = [header] + ["  ".join(cell.rjust(w) for cell, w in zip(row, widths)) for row in rows]
    lines += [f"recovery after a kill (clients={r['clients']}): "
              + ", ".join(f"{s:.2f} s" for s in r["recoveries_s"]) for r in runs if r["recoveries_s"]]
    return "\n".join(lines)


def client_counts(text: str) -> list[int]:
    counts = sorted({int(part) for part in text.split(",") if part.strip()})
    if not counts or counts[0] < 1:
        raise argparse.ArgumentTypeError(f"--clients {text!r}: give positive counts, e.g. 1,4,16")
    return counts


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.load", description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=client_counts, default=[1, 4, 16],
                        help="simulated editors per run, comma-separated (default 1,4,16)")
    parser.add_argument("--seconds", type=float, default=20.0, help="typing time per run (default 20)")
    parser.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--model", type=Path, default=None,
                        help="model folder (default: the bundled model, or $INFILL_MODEL)")
    parser.add_argument("--threads", type=int, default=None, help="torch threads per worker")
    parser.add_argument("--kill-worker-every", type=float, default=None, metavar="S",
                        help="SIGKILL a worker every S seconds during each run (fault mode)")
    parser.add_argument("--tasks", type=Path, default=DEFAULT_TASKS,
                        help=f"FIM tasks, .jsonl or .jsonl.gz (default {DEFAULT_TASKS})")
    parser.add_argument("--deadline-ms", type=int, default=DEFAULT_DEADLINE_MS,
                        help=f"each request's deadline (default {DEFAULT_DEADLINE_MS}, the server's)")
    parser.add_argument("--max-tokens", type=int, default=DEFAULT_MAX_TOKENS,
                        help=f"each request's token bound (default {DEFAULT_MAX_TOKENS}, the server's)")
    parser.add_argument("--gateway", action="store_true",
                        help="measure the HTTP gateway (a process started over the workers) against "
                             "the workers asked directly, unstreamed and streamed (bench.gateway_load)")
    parser.add_argument("--json", action="store_true",
                        help="end with one JSON line: runs, p99_ratio, lost, recoveries_s")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(message)s")
    if not args.tasks.is_file():
        parser.error(f"--tasks {args.tasks} is not a file")
    if args.workers < 1 or (args.kill_worker_every is not None and args.kill_worker_every <= 0):
        parser.error("--workers must be at least 1 and --kill-worker-every above 0")
    tasks = load_tasks(args.tasks)
    model = args.model or bundled_model_dir()
    group = start_local_workers(model, args.threads, args.workers)
    try:
        warm_up(group.addresses)
        if args.gateway:
            return gateway_mode(group, tasks, args, model)
        runs = [run_clients(group, clients, tasks, args) for clients in args.clients]
    finally:
        group.stop()
    print(format_table(runs, f"{set_name(args.tasks)}, {args.workers} worker(s) on {model}, "
                             f"{args.seconds:g} s per run"))
    if args.json:
        print(json.dumps(report(runs)))
    return 0


def gateway_mode(group: WorkerGroup, tasks: Sequence[dict], args: argparse.Namespace, model: Path) -> int:
    """`--gateway`: a gateway process over the workers, then `bench.gateway_load`'s phases."""
    logging.getLogger("httpx").setLevel(logging.WARNING)  # a line per request otherwise
    process, url = start_gateway(group.addresses, flags=["--deadline-ms", str(args.deadline_ms)])
    try:
        settings = Settings(deadline_ms=args.deadline_ms, max_tokens=args.max_tokens)
        runs, figures = gateway_load.run(url, group.addresses, args.clients, tasks, args.seconds, settings)
    finally:
        stop_gateway(process)
    print(gateway_load.format_table(runs, f"{set_name(args.tasks)} through the gateway at {url}, "
                                          f"{args.workers} worker(s) on {model}, {args.seconds:g} s per phase"))
    print(json.dumps(figures) if not args.json else json.dumps({"runs": runs, **figures}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
