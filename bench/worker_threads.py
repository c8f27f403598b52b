"""The worker's torch threads and OpenMP wait policy, measured idle and beside busy loops.

    python -m bench.worker_threads [--threads 1,2] [--policies default,passive,active,spin-1k,...]
                                   [--busy 0,2] [--answers 12] [--rounds 2] [--json]

Each setting runs in a fresh process (`OMP_WAIT_POLICY` and `GOMP_SPINCOUNT` are read once, when
torch's OpenMP starts; `default` leaves both unset: OpenMP's own default, where the worker sets
`passive`, `engine.worker.cli.OMP_WAIT_POLICY`; `POLICIES`): the bundled model, in int8 as the
worker runs it (`engine.worker.runner.ModelRunner`), loads, answers one request to warm up, then
answers `--answers` single-line HumanEval holes (the first line of each task's missing text, the
rest of the file as suffix) one after another, each to its end. A setting's figures are the
median milliseconds per answer and per forward pass (over the rounds, of each round's median).
Settings take turns within a round, a round's order the reverse of the last one's; `--busy N` runs
N `while True: pass` loops beside the whole of that round (0: idle). Each figure's ratio to the
fastest setting of the same load is given beside it. A human table goes to stdout; with `--json`
its last line is one JSON object.
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from bench.editor_latency import busy_loops
from bench.keystroke_order import DEFAULT_TASKS
from bench.quality import load_tasks

# name: the OpenMP environment; spin-N: libgomp's own policy with a spin of N turns at a barrier before
# the thread sleeps (`GOMP_SPINCOUNT`; passive is 0, the default 300,000, active unbounded)
POLICIES = {"default": {}, "passive": {"OMP_WAIT_POLICY": "PASSIVE"}, "active": {"OMP_WAIT_POLICY": "ACTIVE"},
            "spin-1k": {"GOMP_SPINCOUNT": "1000"}, "spin-10k": {"GOMP_SPINCOUNT": "10000"},
            "spin-100k": {"GOMP_SPINCOUNT": "100000"}}


def holes(tasks: Sequence[dict], count: int) -> list[tuple[str, str]]:
    """(prefix, suffix) of the first line of each task's missing text (after its indent), for the first
    `count` tasks that have one."""
    found = []
    for task in tasks:
        body = task["canonical_solution"]
        head, _, rest = body.partition("\n")
        indent = len(head) - len(head.lstrip())
        if head.strip():
            found.append((task["prompt"] + head[:indent], "\n" + rest + task.get("suffix", "")))
        if len(found) == count:
            break
    return found


def time_answers(threads: int, answers: int, tasks_file: Path) -> dict:
    """In this process: ms per answer and per forward pass over `answers` holes, after one to warm up."""
    import torch

    from completion.requests import build_request
    from completion.settings import DEFAULT_MAX_TOKENS
    from engine.wire.protocol import Mode
    from engine.worker.runner import ModelRunner
    from engine.worker.work import job_of
    from infill.paths import bundled_model_dir

    torch.set_num_threads(threads)
    runner = ModelRunner(bundled_model_dir(), weights="int8")
    per_answer, per_pass = [], []
    for index, (prefix, suffix) in enumerate(holes(load_tasks(tasks_file), answers + 1)):
        request = build_request(f"t{index}", prefix, suffix, Mode.SINGLE_LINE, DEFAULT_MAX_TOKENS, 60_000)
        began = time.perf_counter()
        decoding, passes = runner.start(job_of(request), None), 0
        while not decoding.done:
            passes += runner.step([decoding])
        seconds = time.perf_counter() - began
        if index:  # the first one warms up
            per_answer.append(seconds * 1000.0)
            per_pass.append(seconds * 1000.0 / max(1, passes))
    return {"answer_ms": statistics.median(per_answer), "pass_ms": statistics.median(per_pass),
            "answers": len(per_answer)}


def run_setting(threads: int, policy: str, args: argparse.Namespace) -> dict:
    """One setting in a fresh process, its figures read from the last line it prints."""
    env = {key: value for key, value in os.environ.items() if key not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    env.update(POLICIES[policy])
    cmd = [sys.executable, "-m", "bench.worker_threads", "--one", str(threads), "--answers", str(args.answers),
           "--tasks", str(args.tasks)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout)
    if done.returncode != 0:
        raise RuntimeError(f"threads {threads}, policy {policy} failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(args: argparse.Namespace) -> list[dict]:
    settings = list(itertools.product(args.threads, args.policies))
    found: dict[tuple[int, int, str], list[dict]] = {}
    for round_ in range(args.rounds):
        for busy in args.busy:
            with busy_loops(busy):
                for threads, policy in settings if round_ % 2 == 0 else settings[::-1]:
                    figures = run_setting(threads, policy, args)
                    found.setdefault((busy, threads, policy), []).append(figures)
                    print(f"round {round_ + 1} busy {busy} threads {threads} {policy}: {figures}", file=sys.stderr)
    rows = [{"busy": busy, "threads": threads, "policy": policy,
             "answer_ms": round(statistics.median(f["answer_ms"] for f in runs), 1),
             "pass_ms": round(statistics.median(f["pass_ms"] for f in runs), 1)}
            for (busy, threads, policy), runs in found.items()]
    for row in rows:
        fastest = min(other["answer_ms"] for other in rows if other["busy"] == row["busy"])
        row["answer_ratio"] = round(row["answer_ms"] / fastest, 2)
    return sorted(rows, key=lambda row: (row["busy"], row["answer_ms"]))


def format_table(rows: Sequence[dict]) -> str:
    lines = [f"{'busy':>4} {'threads':>7} {'policy':8} {'ms/answer':>9} {'ms/pass':>8} {'x fastest':>9}"]
    lines += [f"{row['busy']:>4} {row['threads']:>7} {row['policy']:8} {row['answer_ms']:>9} {row['pass_ms']:>8} "
              f"{row['answer_ratio']:>9}" for row in rows]
    return "\n".join(lines)


def numbers(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a comma-separated list of whole numbers: {text!r}") from None
    if not values or min(values) < 0:
        raise argparse.ArgumentTypeError(f"not a list of whole numbers at least 0: {text!r}")
    return values


def policies(text: str) -> list[str]:
    names = text.split(",")
    unknown = [name for name in names if name not in POLICIES]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown policies {unknown}; known: {', '.join(POLICIES)}")
    return names


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.worker_threads",
                                     description="Torch threads and OpenMP wait policy, idle and busy.")
    parser.add_argument("--threads", type=numbers, default=[1, 2], help="thread counts (default 1,2)")
    parser.add_argument("--policies", type=policies, default=list(POLICIES), help="OpenMP wait settings (POLICIES)")
    parser.add_argument("--busy", type=numbers, default=[0, 2], help="busy loops beside each load (default 0,2)")
    parser.add_argument("--answers", type=int, default=12, help="timed answers per setting and round")
    parser.add_argument("--rounds", type=int, default=2, help="rounds, each in the reverse order of the last")
    parser.add_argument("--tasks", type=Path, default=DEFAULT_TASKS, help="HumanEval infilling tasks (FORMATS.md)")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds one setting may take")
    parser.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)  # a setting's own process
    parser.add_argument("--json", action="store_true", help="end with one JSON line of the figures")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.answers < 1 or args.rounds < 1 or 0 in args.threads:
        parser.error("--answers and --rounds must be at least 1, and every thread count at least 1")
    if not args.tasks.is_file():
        parser.error(f"no tasks file at {args.tasks}")
    if args.one is not None:
        print(json.dumps(time_answers(args.one, args.answers, args.tasks)))
        return 0
    rows = measure(args)
    print(format_table(rows))
    if args.json:
        print(json.dumps({"rows": rows, "answers": args.answers, "rounds": args.rounds, "cpus": os.cpu_count()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
