"""The newest keystroke first on a busy worker: arrival order against newest first, in one run.

    python -m bench.keystroke_order [--editors 4] [--seconds 20] [--rounds 2] [--threads T]
                                    [--busy N] [--tasks FILE] [--json]

The engine core (`engine.worker.core`) runs the bundled model in this process, and E simulated
editors type at once, each a character every 100 to 300 ms (seeded, `bench.editor.keystrokes`)
and after 15% of them a pause of 1 to 4 s where a typist stops to look. Each keystroke is a
single-line request of the editor's own session (its newer one supersedes it, as the language
server's do). Each round runs the same keystrokes twice, once with the scheduler admitting in
arrival order and once newest first (`SchedulerConfig.newest_first`), the two taking turns at
going first. For each order it reports:

- `fresh`: the share of keystrokes answered with text before the editor's next keystroke, the ghost
  text the user could still see; `paused_fresh`: the same over the keystrokes followed by a pause,
  where the user waits for it; `answered`: answered with text at all;
- p50 / p90 of the answered keystrokes' latency (arrival at the core to the answer);
- how many were superseded, refused as overloaded, or expired without text;
- p50 / p90 of a decoding step's time: a client's Cancel reaching the worker during a step waits
  for its end, so this bounds how long a cancelled request's batch keeps the CPU (a request
  superseded by its session's newer one leaves the moment that one arrives).

The ratios newest first / arrival order come from the same run. The model runs with the worker's
OpenMP settings (`engine.worker.cli.openmp_defaults`) unless the environment sets its own. `--busy N` runs N
`while True: pass` loops beside it. A human table goes to stdout; with `--json` its last line is
one JSON object.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench.editor import keystrokes
from bench.editor_latency import busy_loops
from bench.quality import load_tasks, percentile
from completion.requests import build_request
from completion.settings import DEFAULT_DEADLINE_MS, DEFAULT_MAX_TOKENS
from engine.wire.protocol import Mode, Result
from engine.worker.cli import openmp_defaults
from engine.worker.core import EngineCore
from engine.worker.scheduler import SchedulerConfig
from engine.worker.worker import Arrival
from infill.paths import REPO_ROOT

DEFAULT_TASKS = REPO_ROOT.parent / "shared" / "data" / "human-eval-infilling" / "HumanEval-SingleLineInfilling.jsonl.gz"
INTERVAL_S = (0.1, 0.3)  # between one editor's keystrokes
PAUSE_RATE, PAUSE_S = 0.15, (1.0, 4.0)  # the share of keystrokes after which the typist stops, and for how long
ORDERS = {"arrival": False, "newest": True}  # the name of an order: SchedulerConfig.newest_first


@dataclass(frozen=True, slots=True)
class Key:
    """One keystroke: when it is sent, by which editor, the hole, and when that editor's next comes."""

    at: float
    editor: int
    prefix: str
    suffix: str
    next_at: float


@dataclass(slots=True)
class Tally:
    """One order's outcomes over its keystrokes."""

    sent: int = 0
    paused: int = 0
    fresh: int = 0
    paused_fresh: int = 0
    latencies_ms: list[float] = field(default_factory=list)
    outcomes: Counter = field(default_factory=Counter)
    step_ms: list[float] = field(default_factory=list)


def typing_plan(tasks: Sequence[dict], editors: int, seconds: float, seed: int) -> list[Key]:
    """Every editor's keystrokes for `seconds`, merged in time order."""
    keys = []
    for editor in range(editors):
        rng = random.Random(seed * 1000 + editor)
        holes, at, own = keystrokes(tasks, rng), rng.uniform(*INTERVAL_S), []
        while at < seconds:
            _, prefix, suffix = next(holes)
            own.append((at, prefix, suffix))
            at += rng.uniform(*PAUSE_S) if rng.random() < PAUSE_RATE else rng.uniform(*INTERVAL_S)
        nexts = [later for later, _, _ in own[1:]] + [float("inf")]
        keys += [Key(at, editor, prefix, suffix, next_at) for (at, prefix, suffix), next_at in zip(own, nexts)]
    return sorted(keys, key=lambda key: key.at)


def arrival_of(key: Key, index: int, now: float) -> Arrival:
    request = build_request(f"k{index}", key.prefix, key.suffix, Mode.SINGLE_LINE, DEFAULT_MAX_TOKENS,
                            DEFAULT_DEADLINE_MS, session=f"editor {key.editor}")
    return Arrival(f"editor {key.editor}".encode(), request, now)


def outcome_of(message: object) -> str:
    if isinstance(message, Result):
        if message.stop_reason == "cancelled":
            return "superseded"
        return "answered" if any(item.text.strip() for item in message.items) else f"empty ({message.stop_reason})"
    return f"error ({getattr(message, 'code', type(message).__name__)})"


def paused(key: Key) -> bool:
    """Whether the typist stops after this keystroke."""
    return key.next_at - key.at > INTERVAL_S[1]


def type_through(core: EngineCore, plan: Sequence[Key]) -> Tally:
    """Send the plan's keystrokes on time, stepping the core in between, until every one is answered."""
    tally, pending, keys = Tally(sent=len(plan), paused=sum(map(paused, plan))), {}, iter(enumerate(plan))
    upcoming = next(keys, None)
    start = time.monotonic()
    while upcoming is not None or pending:
        now = time.monotonic()
        while upcoming is not None and start + upcoming[1].at <= now:
            index, key = upcoming
            pending[f"k{index}"] = (key, now)
            replies = core.add(arrival_of(key, index, now))
            _record(tally, replies, pending, start)
            upcoming = next(keys, None)
        if core.is_idle and upcoming is not None:
            time.sleep(max(0.0, start + upcoming[1].at - time.monotonic()))
            continue
        began = time.perf_counter()
        replies = core.step()
        tally.step_ms.append((time.perf_counter() - began) * 1000.0)
        _record(tally, replies, pending, start)
    return tally


def _record(tally: Tally, replies: list, pending: dict, start: float) -> None:
    now = time.monotonic()
    for job, message in replies:
        key, sent = pending.pop(job.request.id)
        outcome = outcome_of(message)
        tally.outcomes[outcome] += 1
        if outcome == "answered":
            tally.latencies_ms.append((now - sent) * 1000.0)
            tally.fresh += now < start + key.next_at
            tally.paused_fresh += now < start + key.next_at and paused(key)


def summarize(tally: Tally) -> dict:
    def ms(values: list[float], q: float) -> float | None:
        value = percentile(values, q)
        return None if value is None else round(value, 1)

    return {"sent": tally.sent, "fresh": round(tally.fresh / max(1, tally.sent), 3),
            "paused_fresh": round(tally.paused_fresh / max(1, tally.paused), 3),
            "answered": round(len(tally.latencies_ms) / max(1, tally.sent), 3),
            "p50_ms": ms(tally.latencies_ms, 50), "p90_ms": ms(tally.latencies_ms, 90),
            "step_p50_ms": ms(tally.step_ms, 50), "step_p90_ms": ms(tally.step_ms, 90),
            "outcomes": dict(sorted(tally.outcomes.items()))}


def ratio(new: float | None, old: float | None) -> float | None:
    return None if new is None or not old else round(new / old, 2)


def measure(args: argparse.Namespace, runner: object) -> dict:
    tasks = [task for task in load_tasks(args.tasks) if isinstance(task.get("prompt"), str)]
    tallies = {name: Tally() for name in ORDERS}
    with busy_loops(args.busy):
        type_through(EngineCore(runner), typing_plan(tasks, 1, 1.0, args.seed - 1))  # warm up, untimed
        for round_ in range(args.rounds):
            plan = typing_plan(tasks, args.editors, args.seconds, args.seed + round_)
            names = list(ORDERS) if round_ % 2 == 0 else list(ORDERS)[::-1]
            for name in names:
                core = EngineCore(runner, SchedulerConfig(newest_first=ORDERS[name]))
                _merge(tallies[name], type_through(core, plan))
                print(f"round {round_ + 1}/{args.rounds} {name}: {summarize(tallies[name])}", file=sys.stderr)
    figures = {name: summarize(tally) for name, tally in tallies.items()}
    new, old = figures["newest"], figures["arrival"]
    figures["ratios_newest_over_arrival"] = {key: ratio(new[key], old[key])
                                             for key in ("fresh", "paused_fresh", "answered", "p50_ms", "p90_ms")}
    figures.update(editors=args.editors, seconds=args.seconds, rounds=args.rounds, busy=args.busy,
                   threads=args.threads, seed=args.seed, tasks=args.tasks.name)
    return figures


def _merge(into: Tally, tally: Tally) -> None:
    into.sent += tally.sent
    into.paused += tally.paused
    into.fresh += tally.fresh
    into.paused_fresh += tally.paused_fresh
    into.latencies_ms += tally.latencies_ms
    into.outcomes += tally.outcomes
    into.step_ms += tally.step_ms


def format_table(figures: dict) -> str:
    lines = [f"{figures['editors']} editors, {figures['seconds']} s x {figures['rounds']} rounds, "
             f"busy loops {figures['busy']}, threads {figures['threads']}",
             "order     sent  fresh paused answered  p50 ms  p90 ms step p50 step p90  outcomes"]
    for name in ORDERS:
        row = figures[name]
        cells = [row[key] for key in ("sent", "fresh", "paused_fresh", "answered", "p50_ms", "p90_ms",
                                      "step_p50_ms", "step_p90_ms")]
        widths = (5, 6, 6, 8, 7, 7, 8, 8)
        lines.append(f"{name:8} " + " ".join(f"{cell!s:>{width}}" for cell, width in zip(cells, widths))
                     + f"  {row['outcomes']}")
    lines.append(f"newest / arrival: {figures['ratios_newest_over_arrival']}")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.keystroke_order",
                                     description="Arrival order against newest first on a busy worker.")
    parser.add_argument("--editors", type=int, default=4, help="editors typing at once (default 4)")
    parser.add_argument("--seconds", type=float, default=20.0, help="typing time per order and round (default 20)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds, the orders taking turns at going first")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's own choice)")
    parser.add_argument("--busy", type=int, default=0, help="run this many busy loops beside it")
    parser.add_argument("--seed", type=int, default=0, help="the typing's seed")
    parser.add_argument("--tasks", type=Path, default=DEFAULT_TASKS, help="FIM or HumanEval tasks (FORMATS.md)")
    parser.add_argument("--json", action="store_true", help="end with one JSON line of the figures")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.editors < 1 or args.seconds <= 0 or args.rounds < 1 or args.busy < 0:
        parser.error("--editors and --rounds must be at least 1, --seconds positive, --busy at least 0")
    if args.threads is not None and args.threads < 1:
        parser.error(f"--threads must be at least 1, got {args.threads}")
    if not args.tasks.is_file():
        parser.error(f"no tasks file at {args.tasks}")
    openmp_defaults(os.environ)  # as a worker process does, before torch loads
    import torch

    from engine.worker.runner import ModelRunner
    from infill.paths import bundled_model_dir

    if args.threads is not None:
        torch.set_num_threads(args.threads)
    figures = measure(args, ModelRunner(bundled_model_dir()))
    print(format_table(figures))
    if args.json:
        print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
