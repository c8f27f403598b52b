"""Typing replays: what cross-keystroke reuse of keys and values saves, and what it changes.

    python -m bench.replay --tasks PATH [--sample N] [--seed S] [--model DIR] [--weights W]
                           [--threads T] [--json]

Each task's middle is typed two characters at a time after its prompt; after each keystroke the
rest of the middle's first line is asked for (single-line mode, 32 tokens) through one
`ModelRunner`, with `reuse_prefix` on (the worker's default: the previous keystroke's canvas lends
its keys and values) and off, each side with a prefix cache of its own. Reported per side: exact
match and edit similarity against the rest of the line, the share of answers equal to those
without reuse, p50 / p90 milliseconds per request, and the cache's hits and misses (a task's
first keystroke has nothing to reuse). With `--json` the last line is one JSON object:
`{"tasks", "requests", "sides": [{"reuse", "exact_match", "edit_similarity", "same_as_without",
"p50_ms", "p90_ms", "hits", "misses"}]}`.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import torch

from bench.quality import edit_similarity, load_tasks, percentile, select_tasks
from engine.worker.prefix_cache import PrefixCache
from engine.worker.runner import ModelRunner
from infill.job import Job
from infill.paths import bundled_model_dir
from infill.weights import DEFAULT_WEIGHTS, WEIGHTS

STRIDE = 2  # characters typed between two requests
MAX_TOKENS = 32


def keystrokes(task: dict) -> Iterator[tuple[str, str, str]]:
    """(prefix, suffix, the rest of the line to complete) after every STRIDE characters of the middle."""
    middle = task["canonical_solution"].rstrip("\n")
    for typed in range(0, len(middle), STRIDE):
        yield task["prompt"] + middle[:typed], "\n" + task["suffix"], middle[typed:].split("\n")[0]


def replay(runner: ModelRunner, tasks: list[dict]) -> list[dict]:
    """Both sides over every keystroke of every task, interleaved so that drift in the machine's
    speed falls on both alike."""
    sides = {reuse: {"cache": PrefixCache(), "answers": [], "ms": []} for reuse in (True, False)}
    references = []
    for task in tasks:
        for prefix, suffix, reference in keystrokes(task):
            references.append(reference)
            for reuse, side in sides.items():
                runner.prefixes = side["cache"]
                started = time.perf_counter()
                [done] = runner.complete(Job.fim(prefix, suffix, "single_line", MAX_TOKENS,
                                                 decoder={"reuse_prefix": reuse}), None)
                side["ms"].append((time.perf_counter() - started) * 1e3)
                side["answers"].append(done.text.rstrip("\n"))
    without = sides[False]["answers"]
    n = len(references)
    return [{"reuse": reuse,
             "exact_match": round(sum(a == r for a, r in zip(side["answers"], references)) / n, 4),
             "edit_similarity": round(sum(map(edit_similarity, side["answers"], references)) / n, 4),
             "same_as_without": round(sum(a == b for a, b in zip(side["answers"], without)) / n, 4),
             "p50_ms": round(percentile(side["ms"], 50), 1), "p90_ms": round(percentile(side["ms"], 90), 1),
             "hits": side["cache"].hits, "misses": side["cache"].misses}
            for reuse, side in sides.items()]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.replay", description=__doc__.split("\n\n")[0])
    p.add_argument("--tasks", type=Path, required=True, help="FIM task file (.jsonl or .jsonl.gz)")
    p.add_argument("--sample", type=int, default=12, help="a seeded random subset of N tasks (default 12)")
    p.add_argument("--seed", type=int, default=0, help="seed of --sample")
    p.add_argument("--model", type=Path, default=None, help="model folder (default: the bundled model)")
    p.add_argument("--weights", default=DEFAULT_WEIGHTS, choices=WEIGHTS, help=f"(default {DEFAULT_WEIGHTS})")
    p.add_argument("--threads", type=int, default=2, help="torch threads")
    p.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    tasks = select_tasks(load_tasks(args.tasks), sample=args.sample, seed=args.seed)
    runner = ModelRunner(args.model or bundled_model_dir(), weights=args.weights)
    sides = replay(runner, tasks)
    requests = sum(1 for task in tasks for _ in keystrokes(task))
    print(f"{len(tasks)} tasks, {requests} requests")
    for side in sides:
        print(f"reuse {'on ' if side['reuse'] else 'off'}: exact {side['exact_match']:.3f}  edit sim. "
              f"{side['edit_similarity']:.3f}  same as without {side['same_as_without']:.3f}  p50 "
              f"{side['p50_ms']:.0f} ms  p90 {side['p90_ms']:.0f} ms  hits {side['hits']}  "
              f"misses {side['misses']}")
    if args.json:
        print(json.dumps({"tasks": len(tasks), "requests": requests, "sides": sides}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
