"""Next edits region by region, in this process: what the model writes into each region of a task.

    python -m bench.next_edit_regions --tasks PATH [--model DIR] [--limit N] [--decoder JSON] [--json]

`bench.next_edit` scores whole files through a real LSP client; this looks one level down, to
judge a model being trained for edits. Each next-edit task (FORMATS.md) goes the server's way
without the LSP: its edit as one event, the regions and the edit job of the next-edit pipeline
(`completion.next_edit.plan`) with the event, decoded to the end by the worker's runner
(`engine.worker.runner.ModelRunner`, no deadline), and each region's answer is compared with the lines
`expected` has there (`training.edit_canvases.region_targets`), before any gate. Counted per kind
and overall:
- regions **to change** and those written right; regions **to keep** and those copied exactly;
- **tasks right**: every region of the task right (what the gates then let through decides the
  file; `bench.next_edit` scores that);
- **runs on**: answers that are right only when cut to the region's line count (the model wrote
  the region, then went on past it);
- p50 milliseconds and mean forward passes per job.
Tasks without a job (no region, a change across a region's edge) are counted apart. A human
table goes to stdout; with `--json` its last line is one JSON object.
"""
from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import torch

from bench.next_edit import load_edit_tasks
from bench.quality import percentile
from completion import next_edit
from completion.syntax import ParsedDocument
from engine.worker.runner import ModelRunner
from engine.worker.work import job_of
from infill.paths import bundled_model_dir
from infill.weights import WEIGHTS
from training.edit_canvases import event_of, region_targets

LANGUAGE = "python"  # the held-out next-edit sets are Python


def same(answer: str, target: str) -> bool:
    return answer.rstrip() == target.rstrip()


def cut_to_lines(answer: str, target: str) -> str:
    """`answer` cut to as many lines as `target` has."""
    return "\n".join(answer.split("\n")[:target.rstrip("\n").count("\n") + 1])


def region_counts(currents: Sequence[str], answers: Sequence[str], targets: Sequence[str]) -> Counter:
    """The counts of one task's regions (their current texts, the model's answers, the expected texts)."""
    counts = Counter(tasks=1)
    right = [same(answer, target) for answer, target in zip(answers, targets)]
    for current, answer, target, ok in zip(currents, answers, targets, right):
        side = "change" if not same(current, target) else "keep"
        counts[f"to_{side}"] += 1
        counts[f"{side}_right"] += ok
        counts["runs_on"] += not ok and same(cut_to_lines(answer, target), target)
    counts["tasks_right"] += all(right)
    return counts


def run_task(runner: ModelRunner, task: dict, decoder: dict) -> tuple[Counter, float, int] | None:
    """The task's region counts, the job's milliseconds and forward passes; None without a job."""
    edited, event = task["edited"], event_of(task)
    planned = next_edit.plan(next_edit.EditAsk(ParsedDocument.parse(LANGUAGE, edited), event,
                                               edited[:task["cursor"]].count("\n"), "bench", 60_000, events=[event],
                                               drafting=next_edit.Drafting.MODEL))
    if isinstance(planned, next_edit.Refused) or planned.request is None:
        return None
    request = planned.request
    targets = region_targets(edited, task["expected"], planned.regions)  # any order: both sort them
    if targets is None:
        return None
    started = time.perf_counter()
    completions = runner.complete(replace(job_of(request), decoder=decoder), None)
    ms = (time.perf_counter() - started) * 1000.0
    counts = region_counts([hole.replaces for hole in request.holes], [c.text for c in completions], targets)
    return counts, ms, max(c.forward_passes for c in completions)


def figures(counts: Counter, ms: list[float], passes: list[int]) -> dict:
    rate = lambda a, b: round(counts[a] / counts[b], 4) if counts[b] else None  # noqa: E731
    return {"tasks": counts["tasks"], "without_job": counts["without_job"],
            "to_change": counts["to_change"], "change_right": rate("change_right", "to_change"),
            "to_keep": counts["to_keep"], "keep_right": rate("keep_right", "to_keep"),
            "tasks_right": rate("tasks_right", "tasks"), "runs_on": counts["runs_on"],
            "p50_ms": round(percentile(ms, 50), 1) if ms else None,
            "mean_passes": round(sum(passes) / len(passes), 1) if passes else None}


def bench(runner: ModelRunner, tasks: list[dict], decoder: dict) -> dict:
    by_kind: dict[str, tuple[Counter, list[float], list[int]]] = {}
    for task in tasks:
        counts, ms, passes = by_kind.setdefault(task.get("kind", ""), (Counter(), [], []))
        result = run_task(runner, task, decoder)
        if result is None:
            counts["without_job"] += 1
            continue
        counts.update(result[0])
        ms.append(result[1])
        passes.append(result[2])
    total = (sum((c for c, _, _ in by_kind.values()), Counter()),
             [m for _, ms, _ in by_kind.values() for m in ms], [p for _, _, ps in by_kind.values() for p in ps])
    return {"overall": figures(*total), "kinds": {kind: figures(*v) for kind, v in sorted(by_kind.items())}}


def print_table(result: dict) -> None:
    columns = ("tasks", "without_job", "to_change", "change_right", "to_keep", "keep_right", "tasks_right",
               "runs_on", "p50_ms", "mean_passes")
    print("| kind | " + " | ".join(columns) + " |")
    print("|---" * (len(columns) + 1) + "|")
    for kind, row in [*result["kinds"].items(), ("overall", result["overall"])]:
        print(f"| {kind} | " + " | ".join("-" if row[c] is None else str(row[c]) for c in columns) + " |")


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.next_edit_regions", description=__doc__.splitlines()[0])
    p.add_argument("--tasks", type=Path, required=True, help="next-edit task file (.jsonl or .jsonl.gz)")
    p.add_argument("--model", type=Path, default=bundled_model_dir(), help="model folder (default: the bundled model)")
    p.add_argument("--limit", type=int, help="the first N tasks")
    p.add_argument("--decoder", type=json.loads, default={},
                   help='decoder override for every job, as a request sends it, e.g. \'{"rule": "left_to_right"}\'')
    p.add_argument("--weights", default="int8", choices=WEIGHTS,
                   help="the model's linear layers (the worker's on a CPU: int8)")
    p.add_argument("--threads", type=int, default=1, help="torch threads")
    p.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    tasks = load_edit_tasks(args.tasks)[:args.limit]
    result = bench(ModelRunner(args.model, weights=args.weights), tasks, args.decoder)
    result |= {"tasks_path": str(args.tasks), "model": args.model.name, "decoder": args.decoder}
    print_table(result)
    if args.json:
        print(json.dumps(result))


if __name__ == "__main__":
    main()
