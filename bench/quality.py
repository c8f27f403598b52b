"""Completion quality and speed on a set of FIM tasks, through the real engine worker.

    python -m bench.quality --tasks PATH [--limit N | --sample N --seed S] [--json] [--out FILE.jsonl]

Tasks are read in the FIM task format of ../shared/data/FORMATS.md (`.jsonl` or `.jsonl.gz`).
Each task is asked as the product asks (`completion.fim`, as `infill complete` and the gateway
ask for one text): the hole decided as a completion the user asked for, the prefix and suffix
windows and the snippets of the task's own text that fit their budgets, one request; the answer
is the post-processed text an editor would show. It goes to a worker this command spawns on the
model folder (`--model`, default the bundled model) or a running one (`--worker ADDRESS`).
Requests go one at a time, so latencies are those of an idle worker. A request that fails (the
worker refuses it, or does not answer) is an error, counted apart (`errors`, `error_rate`) and
left out of the scores: the scores are those of the answers.

Each task is asked on three sides in one run (`SIDES`): the model alone (`completionDrafts`
off), the drafts alone (no model: the draft `completion.draft_sources` finds in the task's own
text, post-processed, is the answer; no draft, an empty one) and the drafts checked by the model
(the product's default, whose figures are the summary's top level; a task with no draft is asked
once, its answer the model-alone one). Each side's figures are under `sides` too, with the share
of non-empty answers, the answers whose request carried a draft (their share and exact match)
and forward passes per answer.

Scores, per task and then over the set:
- pass@1: for a task with `test` and `entry_point`, `prompt + completion + suffix`, the test and
  `check(entry_point)` run in `bench.sandbox` (a separate, limited process; never this one); it
  passes on exit code 0. Averaged over the tasks that have tests (null when none has).
- exact match: completion and `canonical_solution` are equal once each line has lost its trailing
  whitespace (lines as `str.splitlines` cuts them, so a missing final newline does not count).
- edit similarity: `difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()` of those two
  normalized texts, i.e. 2 * matched characters / total characters (Ratcliff/Obershelp), which
  stands in for 1 - Levenshtein distance / max length; 1.0 is identical.
- latency: client-side wall time of the request, in ms; the worker's own timings are kept per task.
- forwards per token: the model's forward passes over the completion tokens (counted with the
  model folder's tokenizer, so only when the folder is known); forwards per char is always given.

The table goes to stdout; with `--json`, its last line is one JSON object with the summary.
"""
from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import logging
import math
import random
import shlex
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from difflib import SequenceMatcher
from pathlib import Path
from statistics import fmean, median

from bench.sandbox import DEFAULT_MEMORY_BYTES, DEFAULT_TIME_LIMIT_S, SandboxResult, run_program
from completion import fim
from completion.settings import Settings as CompletionSettings
from engine.client.calls import WorkerError, WorkerTimeout
from engine.launch import spawn_local_worker, stop_worker
from engine.wire.protocol import SETTING_MODES, Item, Mode, ProtocolError, Result, Timings
from engine.client.sync_client import WorkerClient
from infill.paths import bundled_model_dir
from infill.tokenizer import CodeTokenizer
from infill.weights import WEIGHTS

logger = logging.getLogger("bench.quality")

REQUIRED_FIELDS = ("task_id", "prompt", "suffix", "canonical_solution")
MODEL, DRAFTS, DRAFTED = "model", "drafts", "drafted"
# the model alone; the drafts alone (no model); drafts checked by the model (the default)
SIDES = (MODEL, DRAFTS, DRAFTED)
PROGRESS_EVERY = 25  # tasks between progress lines on stderr
JUDGE_OUTPUT_CHARS = 1000  # how much of a failing program's stderr a per-task record keeps

TokenCounter = Callable[[str], int]


@dataclass(slots=True)
class Settings:
    """What every request of a run carries."""

    mode: str
    max_tokens: int
    deadline_ms: int
    decoder: dict[str, str | int | float | bool] = field(default_factory=dict)

    def rules(self, drafts: bool = True) -> CompletionSettings:
        """The completion rules' settings these stand for (their defaults otherwise), with drafts
        from the task's own text or without."""
        return CompletionSettings(deadline_ms=self.deadline_ms, max_tokens=self.max_tokens,
                                  mode=self.mode, drafts=drafts)


@dataclass(slots=True)
class Judge:
    """How test programs are run."""

    time_limit_s: float = DEFAULT_TIME_LIMIT_S
    memory_bytes: int = DEFAULT_MEMORY_BYTES
    jobs: int = 2  # sandbox processes at once, beside the sequential requests


@dataclass(slots=True)
class TaskRecord:
    """One task's outcome; `passed` is None for a task without tests."""

    task_id: str
    completion: str
    latency_ms: float
    forward_passes: int
    stop_reason: str  # the worker's ("done", "deadline", "budget", "cancelled"), or "error"
    timings: dict[str, float] | None  # the worker's queue/prefill/decode/total ms
    completion_tokens: int | None  # None when no tokenizer is at hand
    completion_chars: int
    exact: bool
    similarity: float
    passed: bool | None = None
    error: str | None = None  # why the request failed
    judge_output: str | None = None  # the end of a failing test program's stderr
    drafted: bool = False  # its request carried a draft (the drafts-alone side: it had one)


def jsonl_records(path: Path) -> Iterator[tuple[int, dict]]:
    """(line number, object) of every non-blank line of a `.jsonl` or `.jsonl.gz` file; ValueError
    naming the line for one that is not JSON."""
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as stream:
        for number, line in enumerate(stream, 1):
            if not line.strip():
                continue
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{number}: not a JSON object ({exc})") from None


def load_tasks(path: Path) -> list[dict]:
    """Every task in a `.jsonl` or `.jsonl.gz` file, checked for the required string fields."""
    tasks = []
    for number, task in jsonl_records(path):
        missing = [name for name in REQUIRED_FIELDS if not isinstance(task.get(name), str)]
        if missing:
            raise ValueError(f"{path}:{number}: the task lacks the string field(s) "
                             f"{', '.join(missing)}; see the FIM task format in FORMATS.md")
        tasks.append(task)
    return tasks


def select_tasks(tasks: list[dict], limit: int | None = None, sample: int | None = None,
                 seed: int = 0) -> list[dict]:
    """The first `limit` tasks, or a seeded random `sample` of them kept in file order."""
    if sample is not None:
        picked = sorted(random.Random(seed).sample(range(len(tasks)), min(sample, len(tasks))))
        return [tasks[i] for i in picked]
    return tasks if limit is None else tasks[:limit]


def parse_value(text: str) -> str | int | float | bool:
    """A decoder override's value: bool for true/false, else int, else float, else the text."""
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def parse_override(text: str) -> tuple[str, str | int | float | bool]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE (e.g. threshold=0.8), got {text!r}")
    return key, parse_value(value)


def normalize(text: str) -> str:
    """The text with each line's trailing whitespace removed, lines joined by one newline."""
    return "\n".join(line.rstrip() for line in text.splitlines())


def exact_match(completion: str, reference: str) -> bool:
    return normalize(completion) == normalize(reference)


def edit_similarity(completion: str, reference: str) -> float:
    """SequenceMatcher's ratio of the normalized texts (see the module docstring)."""
    return SequenceMatcher(None, normalize(completion), normalize(reference), autojunk=False).ratio()


def has_tests(task: dict) -> bool:
    return bool(task.get("test") and task.get("entry_point"))


def judging_program(task: dict, completion: str) -> str | None:
    """The program that judges `completion`, or None when the task has no tests."""
    if not has_tests(task):
        return None
    return (task["prompt"] + completion + task["suffix"] + "\n" + task["test"] + "\n"
            + f"check({task['entry_point']})\n")


def task_plan(task: dict, settings: Settings, drafts: bool = True) -> fim.Plan:
    """The product's plan for the task's hole: decided as a completion the user asked for (never
    none), with the windows, snippets and draft the language server would send for the text alone."""
    hole = fim.hole_in_text(task.get("path") or "file:///task.py", task["prompt"], task["suffix"],
                            "python")
    return fim.plan(hole, settings.rules(drafts), None, uuid.uuid4().hex, invoked=True,
                    decoders=(dict(settings.decoder),))


def make_record(task: dict, completion: str, latency_ms: float, count_tokens: TokenCounter | None,
                **outcome) -> TaskRecord:
    """A record with the text scores filled in; `outcome` holds the request's other fields."""
    return TaskRecord(task_id=task["task_id"], completion=completion, latency_ms=latency_ms,
                      completion_tokens=count_tokens(completion) if count_tokens else None,
                      completion_chars=len(completion),
                      exact=exact_match(completion, task["canonical_solution"]),
                      similarity=edit_similarity(completion, task["canonical_solution"]), **outcome)


def complete_task(client: WorkerClient, task: dict, settings: Settings,
                  count_tokens: TokenCounter | None, drafts: bool = True) -> TaskRecord:
    """Ask the worker for one task's middle; a failed request becomes a record with `error` set."""
    started = time.perf_counter()
    return ask_worker(client, task, task_plan(task, settings, drafts), settings, count_tokens, started)


def ask_worker(client: WorkerClient, task: dict, planned: fim.Plan, settings: Settings,
               count_tokens: TokenCounter | None, started: float) -> TaskRecord:
    """The worker's answer to the plan's request, post-processed; latency counted from `started`."""
    drafted = bool(planned.requests[0].draft)
    try:
        result = client.complete(planned.requests[0])
    except (WorkerError, WorkerTimeout, ProtocolError) as exc:
        latency_ms = (time.perf_counter() - started) * 1e3
        return make_record(task, "", latency_ms, count_tokens, forward_passes=0, stop_reason="error",
                           timings=None, passed=False if has_tests(task) else None, error=str(exc),
                           drafted=drafted)
    texts = fim.finish(planned, [result], settings.rules(drafted))
    latency_ms = (time.perf_counter() - started) * 1e3
    item = result.items[0] if result.items else None
    return make_record(task, texts[0] if texts else "", latency_ms, count_tokens,
                       forward_passes=item.forward_passes if item else 0,
                       stop_reason=result.stop_reason, timings=asdict(result.timings), drafted=drafted)


def draft_record(task: dict, planned: fim.Plan, settings: Settings, count_tokens: TokenCounter | None,
                 latency_ms: float) -> TaskRecord:
    """The drafts-alone side: the plan's draft, post-processed as an answer is; empty without one."""
    text = ""
    if planned.draft is not None:
        result = Result(planned.requests[0].id, [Item(planned.draft.text, 1.0, 0)], Timings(0.0, 0.0, 0.0, 0.0),
                        "done")
        texts = fim.finish(planned, [result], settings.rules())
        text = texts[0] if texts else ""
    return make_record(task, text, latency_ms, count_tokens, forward_passes=0, stop_reason="done", timings=None,
                       drafted=planned.draft is not None)


def complete_sides(client: WorkerClient, task: dict, settings: Settings,
                   count_tokens: TokenCounter | None) -> dict[str, TaskRecord]:
    """One task's record on each of SIDES. A task with no draft asks the model once: its drafted
    request is the model-alone one, whose answer both sides share."""
    started = time.perf_counter()
    planned = task_plan(task, settings)
    plan_ms = (time.perf_counter() - started) * 1e3
    drafted = ask_worker(client, task, planned, settings, count_tokens, started)
    alone = complete_task(client, task, settings, count_tokens, drafts=False) if planned.draft else drafted
    return {MODEL: alone, DRAFTS: draft_record(task, planned, settings, count_tokens, plan_ms), DRAFTED: drafted}


def _record_verdict(record: TaskRecord, outcome: SandboxResult) -> None:
    record.passed = outcome.passed
    if not outcome.passed:
        reason = "timed out\n" if outcome.timed_out else ""
        record.judge_output = (reason + outcome.stderr)[-JUDGE_OUTPUT_CHARS:]


def run_tasks(client: WorkerClient, tasks: list[dict], settings: Settings, judge: Judge,
              count_tokens: TokenCounter | None, worker: subprocess.Popen | None) -> dict[str, list[TaskRecord]]:
    """Complete the tasks one by one on every side (SIDES) while a small pool runs their test
    programs (once per distinct record)."""
    records: dict[str, list[TaskRecord]] = {side: [] for side in SIDES}
    verdicts: list[tuple[TaskRecord, Future[SandboxResult]]] = []
    with ThreadPoolExecutor(max_workers=judge.jobs, thread_name_prefix="sandbox") as pool:
        for number, task in enumerate(tasks, 1):
            sides = complete_sides(client, task, settings, count_tokens)
            if any(r.error for r in sides.values()) and worker is not None and worker.poll() is not None:
                raise RuntimeError(f"the worker exited with code {worker.returncode}; "
                                   f"its log is above on stderr")
            for record in {id(r): r for r in sides.values()}.values():
                program = judging_program(task, record.completion)
                if program is not None and record.error is None:
                    future = pool.submit(run_program, program, judge.time_limit_s, judge.memory_bytes)
                    verdicts.append((record, future))
            for side, record in sides.items():
                records[side].append(record)
            if number % PROGRESS_EVERY == 0 or number == len(tasks):
                logger.info("completed %d/%d tasks", number, len(tasks))
        for record, future in verdicts:
            _record_verdict(record, future.result())
    return records


def percentile(values: list[float], q: float) -> float | None:
    """The q-th percentile with linear interpolation between ranks; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100.0
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _rounded(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def summarize(records: list[TaskRecord], meta: dict) -> dict:
    """The set's summary (the --json line): `meta` (set, model, settings, command) and the scores.
    Failed requests are counted apart and scored as nothing: the scores are the answers'."""
    answered = [r for r in records if r.error is None]
    tested = [r for r in answered if r.passed is not None]
    latencies = [r.latency_ms for r in answered]
    worker_ms = [r.timings["total_ms"] for r in answered if r.timings is not None]
    forwards = sum(r.forward_passes for r in answered)
    counted = [r.completion_tokens for r in answered]
    tokens = sum(counted) if answered and None not in counted else None
    chars = sum(r.completion_chars for r in answered)
    return {
        **meta,
        "tasks": len(records),
        "answered": len(answered),
        "errors": len(records) - len(answered),
        "error_rate": _rounded((len(records) - len(answered)) / len(records), 4) if records else None,
        "tasks_with_tests": len(tested),
        "pass_at_1": _rounded(fmean(r.passed for r in tested), 4) if tested else None,
        "exact_match": _rounded(fmean(r.exact for r in answered), 4) if answered else None,
        "edit_similarity": _rounded(fmean(r.similarity for r in answered), 4) if answered else None,
        "mean_latency_ms": _rounded(fmean(latencies), 1) if answered else None,
        "p50_latency_ms": _rounded(percentile(latencies, 50), 1),
        "p95_latency_ms": _rounded(percentile(latencies, 95), 1),
        "mean_worker_ms": _rounded(fmean(worker_ms), 1) if worker_ms else None,
        "forward_passes": forwards,
        "completion_tokens": tokens,
        "forwards_per_token": _rounded(forwards / tokens, 4) if tokens else None,
        "tokens_per_forward": _rounded(tokens / forwards, 3) if forwards and tokens else None,
        "forwards_per_char": _rounded(forwards / chars, 4) if chars else None,
        "stop_reasons": dict(Counter(r.stop_reason for r in records)),
        **draft_figures(answered),
    }


def draft_figures(answered: list[TaskRecord]) -> dict:
    """The share of answers that are not empty, of those the ones whose request carried a draft
    and how often those were exact, and forward passes per non-empty answer (mean and median)."""
    shown = [r for r in answered if r.completion.strip()]
    drafted = [r for r in shown if r.drafted]
    return {"answered_share": _rounded(len(shown) / len(answered), 4) if answered else None,
            "drafted_answers": len(drafted),
            "drafted_share": _rounded(len(drafted) / len(shown), 4) if shown else None,
            "drafted_exact_match": _rounded(fmean(r.exact for r in drafted), 4) if drafted else None,
            "passes_per_answer": _rounded(sum(r.forward_passes for r in shown) / len(shown), 3) if shown else None,
            "median_passes_per_answer": median(r.forward_passes for r in shown) if shown else None}


def format_table(summaries: list[dict]) -> str:
    """One row per set: its size, scores and speed; '-' where a value does not apply."""
    header = ("set", "tasks", "errors", "pass@1", "exact", "edit sim", "mean ms", "p50 ms", "p95 ms",
              "fwd/token")
    keys = ("set", "tasks", "errors", "pass_at_1", "exact_match", "edit_similarity", "mean_latency_ms",
            "p50_latency_ms", "p95_latency_ms", "forwards_per_token")
    rows = [header] + [tuple("-" if s.get(k) is None else str(s[k]) for k in keys) for s in summaries]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in
                       enumerate(zip(row, widths))) for row in rows]
    return "\n".join(lines[:1] + ["-" * len(lines[0])] + lines[1:])


def set_name(path: Path) -> str:
    """The file's name without `.jsonl` / `.jsonl.gz`."""
    name = path.name.removesuffix(".gz")
    return name.removesuffix(".jsonl")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.quality", description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", type=Path, required=True, help="FIM tasks, .jsonl or .jsonl.gz")
    pick = parser.add_mutually_exclusive_group()
    pick.add_argument("--limit", type=int, help="run only the first N tasks")
    pick.add_argument("--sample", type=int, help="run a seeded random subset of N tasks")
    parser.add_argument("--seed", type=int, default=0, help="seed of --sample (default 0)")
    parser.add_argument("--model", type=Path, default=None,
                        help="model folder to serve (and whose tokenizer counts tokens); "
                             "default: the bundled model (INFILL_MODEL overrides it)")
    parser.add_argument("--worker", default=None,
                        help="address of a running worker (e.g. ipc:///tmp/w.sock); default: spawn one")
    parser.add_argument("--threads", type=int, default=None, help="torch threads of a spawned worker")
    parser.add_argument("--max-context", type=int, default=None,
                        help="a spawned worker's context in tokens (default: the model's trained context)")
    parser.add_argument("--weights", default=None, choices=WEIGHTS,
                        help="linear-layer weights of a spawned worker (default: the worker's)")
    parser.add_argument("--mode", choices=SETTING_MODES, default=Mode.AUTO,
                        help="completion mode (default auto: the language server's decision at each hole)")
    parser.add_argument("--max-tokens", type=int, default=64, help="tokens per completion (default 64)")
    parser.add_argument("--deadline-ms", type=int, default=30000,
                        help="each request's deadline at the worker (default 30000)")
    parser.add_argument("--decoder", type=parse_override, action="append", default=[],
                        metavar="KEY=VALUE", help="decoder override, repeatable (e.g. threshold=0.8)")
    parser.add_argument("--time-limit-s", type=float, default=DEFAULT_TIME_LIMIT_S,
                        help=f"time limit of each test program (default {DEFAULT_TIME_LIMIT_S:g})")
    parser.add_argument("--memory-mb", type=int, default=DEFAULT_MEMORY_BYTES >> 20,
                        help=f"address-space cap of each test program (default {DEFAULT_MEMORY_BYTES >> 20})")
    parser.add_argument("--jobs", type=int, default=2, help="test programs run at once (default 2)")
    parser.add_argument("--out", type=Path, default=None, help="write per-task records to this .jsonl")
    parser.add_argument("--json", action="store_true", help="end with the summary as one JSON line")
    return parser


def check_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Settings:
    """The request settings, after every flag is checked; errors say which flag to change."""
    for flag, value in (("--limit", args.limit), ("--sample", args.sample), ("--jobs", args.jobs),
                        ("--memory-mb", args.memory_mb), ("--threads", args.threads)):
        if value is not None and value < 1:
            parser.error(f"{flag} must be at least 1, got {value}")
    if args.time_limit_s <= 0:
        parser.error(f"--time-limit-s must be positive, got {args.time_limit_s}")
    if not args.tasks.is_file():
        parser.error(f"--tasks {args.tasks} is not a file")
    if args.model is not None and not args.model.is_dir():
        parser.error(f"--model {args.model} is not a folder")
    settings = Settings(args.mode, args.max_tokens, args.deadline_ms, dict(args.decoder))
    try:
        task_plan({"prompt": "", "suffix": ""}, settings)
    except ProtocolError as exc:
        parser.error(f"these flags make an invalid request: {exc.message}")
    return settings


def resolve_model_dir(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Path | None:
    """The model folder: --model, else the bundled one when spawning; None for a bare --worker."""
    if args.worker is not None:
        return args.model
    model_dir = args.model if args.model is not None else bundled_model_dir()
    if not (model_dir / "config.json").is_file():
        parser.error(f"no model at {model_dir} (config.json is missing): pass --model DIR, "
                     f"set INFILL_MODEL, or use --worker ADDRESS")
    return model_dir


def token_counter(model_dir: Path | None) -> TokenCounter | None:
    if model_dir is None:
        return None
    tokenizer = CodeTokenizer(model_dir / "tokenizer.json")
    return lambda text: len(tokenizer.encode(text))


@contextlib.contextmanager
def connect(address: str | None, model_dir: Path | None, threads: int | None,
            weights: str | None = None, max_context: int | None = None,
            ) -> Iterator[tuple[WorkerClient, subprocess.Popen | None]]:
    """A client of the worker at `address`, or of one spawned on `model_dir` (its context cut to
    `max_context` tokens when given) and stopped after."""
    worker = None
    if address is None:
        flags = ("--max-context", str(max_context)) if max_context else ()
        worker, address = spawn_local_worker(model_dir, threads=threads, weights=weights, flags=flags)
    try:
        with WorkerClient(address, client_name="bench.quality") as client:
            yield client, worker
    finally:
        if worker is not None:
            stop_worker(worker)


def write_records(path: Path, records: list[TaskRecord]) -> None:
    with path.open("w", encoding="utf-8") as stream:
        for record in records:
            stream.write(json.dumps(asdict(record)) + "\n")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser()
    args = parser.parse_args(argv)
    settings = check_args(parser, args)
    model_dir = resolve_model_dir(parser, args)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(name)s: %(message)s")
    try:
        tasks = select_tasks(load_tasks(args.tasks), args.limit, args.sample, args.seed)
    except ValueError as exc:
        parser.error(str(exc))
    if not tasks:
        parser.error(f"--tasks {args.tasks} holds no tasks")
    judge = Judge(args.time_limit_s, args.memory_mb << 20, args.jobs)
    with connect(args.worker, model_dir, args.threads, args.weights, args.max_context) as (client, worker):
        model = client.info().model
        sides = run_tasks(client, tasks, settings, judge, token_counter(model_dir), worker)
    records = sides[DRAFTED]
    meta = {"set": set_name(args.tasks), "tasks_path": str(args.tasks), "model": model,
            "model_dir": None if model_dir is None else str(model_dir), "mode": settings.mode,
            "max_tokens": settings.max_tokens, "deadline_ms": settings.deadline_ms,
            "decoder": settings.decoder, "command": shlex.join(["python", "-m", "bench.quality", *argv])}
    summary = summarize(records, meta)
    summary["sides"] = {side: summarize(side_records, {"set": f"{meta['set']} ({side})"})
                        for side, side_records in sides.items()}
    if args.out is not None:
        write_records(args.out, records)
    print(format_table([summary, *summary["sides"].values()]))
    if args.json:
        print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
