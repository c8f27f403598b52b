"""The Python half of the VS Code keystroke benchmark (`npm run bench` in editors/vscode/e2e).

    python -m bench.vscode_keystrokes plan --out PLAN [--keys N] [--seed S] [--pause-rate R] [--pause-ms MS]
    python -m bench.vscode_keystrokes report --record RECORD --log LSP_LOG [--busy N] [--json]

`plan` writes the typing the workbench does, the same as Neovim's (`bench.editor_typing.plan_files`
over the HumanEval problems, held out from training): files named by their number, each with its
prompt, the text it ends with, and its keys with their gaps and pauses.

`report` gives every keystroke of the workbench's record one outcome of
`bench.keystroke_outcomes.OUTCOMES` and prints the figures of `bench.editor_latency`. The page
saw each key's keydown, the ghost text on screen then, and the first frame after it that showed
other ghost text (epoch ms); the extension's requests are not visible there, so each key is
matched to the last inline completion the server's log (`server_requests`) began between that key
and the next: ghost text shown after the key is the model's answer (`shown`) unless the server
answered from its typing-through cache or no request was made for the key (VS Code kept the ghost
text as the user typed through it). Without new ghost text, a key with no request, or whose answer
was logged too late to be drawn before the next key (later than the record's fastest drawing of
an answer, `fastest_draw_ms`), is `superseded`; an answer in time that left the key's ghost text
as it was (VS Code keeps a suggestion that a typed space does not contradict, and the answer
proposed it again: the same text at this keydown and the next) is `kept`; else the server's log
says why (no completion, empty, deadline, error). A shown
answer's split has the worker's parts from the log; its `editor` part is the rest of the key's
latency outside the server (key handling, the extension, VS Code's drawing and the LSP transport,
which the page cannot tell apart: `transport` is 0 here).
"""
from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Sequence
from pathlib import Path

from bench import keystroke_outcomes as ko
from bench.editor_latency import DEFAULT_TASKS, format_table, load_tasks, summarize
from bench.editor_typing import plan_files


def write_plan(args: argparse.Namespace) -> dict:
    files = plan_files(load_tasks(args.tasks), Path("."), args.keys, random.Random(args.seed), args.pause_rate,
                       args.pause_ms)
    plan = {"files": [{**file, "path": Path(file["path"]).name} for file in files]}
    args.out.write_text(json.dumps(plan))
    return plan


def request_for(key: dict, next_fed_ms: float, answered: Sequence[ko.ServerRequest]) -> ko.ServerRequest | None:
    """The last request the server began between this key and the next (its clock is the page's:
    epoch time, to the log's millisecond)."""
    began = [server for server in answered
             if key["fed_ms"] <= server.answered_at * 1000.0 - server.latency_ms < next_fed_ms]
    return began[-1] if began else None


def unshown(server: ko.ServerRequest | None, next_fed_ms: float, draw_ms: float, kept: bool) -> str:
    """Why a key whose request is `server` drew no ghost text before the next key: an answer with
    text logged less than `draw_ms` before it could not be drawn in time; one that came in time left
    the ghost text as it was when VS Code had `kept` the key's (the same text at this key and the next)."""
    drawing = draw_ms if server is not None and server.texts > 0 else 0.0
    if server is None or server.superseded or server.answered_at * 1000.0 + drawing >= next_fed_ms:
        return ko.SUPERSEDED
    if server.texts > 0:
        return ko.KEPT if kept else ko.ERROR  # else an answer VS Code did not draw
    if server.no_completion or server.mode in ("none", "no mode"):
        return ko.NO_COMPLETION
    if server.worker_failure:
        return ko.DEADLINE if "within" in server.worker_failure else ko.ERROR
    if server.stop_reason == "deadline" or not server.worker:
        return ko.DEADLINE
    return ko.EMPTY


def fastest_draw_ms(keys: Sequence[dict], servers: Sequence[ko.ServerRequest | None]) -> float:
    """The shortest time (ms) from a model answer's log line to its ghost text drawn, over the
    record's shown keys (0 when none): VS Code's part after the server's, which no answer skips. A
    key drawn before its answer was logged (VS Code drew a suggestion it kept) says nothing of it."""
    drawn = [key["shown_ms"] - server.answered_at * 1000.0 for key, server in zip(keys, servers)
             if key.get("shown_ms") is not None and server is not None and not server.cache_hit]
    return min((ms for ms in drawn if ms > 0), default=0.0)


def split_of(key: dict, server: ko.ServerRequest) -> dict[str, float]:
    """Where a shown answer's time went (ms), as `ko.split_of` with the editor and transport as one."""
    worker = server.worker
    post = max(0.0, (server.answered_at - server.ask_at) * 1000.0) if server.ask_at is not None else 0.0
    inner = worker["queue"] + worker["layout"] + worker["first"] + worker["further"]
    return {"editor": round(key["shown_ms"] - key["fed_ms"] - server.latency_ms, 1), "transport": 0.0,
            "plan_and_worker_transport": round(max(0.0, server.latency_ms - post - worker["total"]), 1),
            "queue": worker["queue"], "layout": worker["layout"], "first_pass": worker["first"],
            "further_passes": worker["further"], "worker_other": round(max(0.0, worker["total"] - inner), 1),
            "post_processing": round(post, 1)}


def outcomes(keys: Sequence[dict], answered: Sequence[ko.ServerRequest]) -> list[dict]:
    """One row per key of the record (`file`, `key`, `fed_ms`, `shown_ms` or None, `before`: the
    ghost text on screen at its keydown or None), as `ko.outcomes`'s."""
    next_fed = [key["fed_ms"] for key in keys[1:]] + [float("inf")]
    servers = [request_for(key, fed, answered) for key, fed in zip(keys, next_fed)]
    draw_ms = fastest_draw_ms(keys, servers)
    rows = []
    for index, (key, server) in enumerate(zip(keys, servers)):
        row = {"file": key["file"], "key": key["key"], "requested": server is not None}
        if key.get("shown_ms") is None:
            after = keys[index + 1] if index + 1 < len(keys) else {}
            kept = key.get("before") is not None and after.get("before") == key["before"]
            row["outcome"] = unshown(server, next_fed[index], draw_ms, kept)
        else:
            row["outcome"] = ko.TYPED_THROUGH if server is None or server.cache_hit else ko.SHOWN
            row["latency_ms"] = round(key["shown_ms"] - key["fed_ms"], 1)
            if row["outcome"] == ko.SHOWN and server.worker:
                row["split"] = split_of(key, server)
        rows.append(row)
    return rows


def report(args: argparse.Namespace) -> dict:
    record = json.loads(args.record.read_text())
    rows = outcomes(record["keys"], ko.server_requests(args.log))
    figures = summarize(rows, 0, record["files"])
    del figures["unjoined_answers"]  # matched by time alone: no answer is left unjoined
    figures.update(editor=record.get("editor", "VS Code"), busy=args.busy, load_before=record.get("load_before"),
                   load_after=record.get("load_after"), seed=record.get("seed"), deadline_ms=record.get("deadline_ms"),
                   early_requests=record.get("early_requests", True))
    return figures


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.vscode_keystrokes",
                                     description="The plan and the report of the VS Code keystroke benchmark.")
    commands = parser.add_subparsers(dest="command", required=True)
    plan = commands.add_parser("plan", help="write the typing plan")
    plan.add_argument("--out", type=Path, required=True, help="where the plan goes (JSON)")
    plan.add_argument("--tasks", type=Path, default=DEFAULT_TASKS, help="FIM or HumanEval tasks (FORMATS.md)")
    plan.add_argument("--keys", type=int, default=300, help="type problems in order until this many keys")
    plan.add_argument("--seed", type=int, default=0, help="the pace's and the pauses' seed")
    plan.add_argument("--pause-rate", type=float, default=0.15, help="the share of keys followed by a pause")
    plan.add_argument("--pause-ms", type=int, default=4000, help="the longest pause, ended by the ghost text")
    done = commands.add_parser("report", help="the figures of a workbench's record")
    done.add_argument("--record", type=Path, required=True, help="the workbench's record (JSON)")
    done.add_argument("--log", type=Path, required=True, help="the language server's log")
    done.add_argument("--busy", type=int, default=0, help="the busy loops that ran beside it")
    done.add_argument("--json", action="store_true", help="end with one JSON line of the figures")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "plan":
        if args.keys < 1 or not 0.0 <= args.pause_rate <= 1.0 or args.pause_ms < 0:
            parser.error("--keys must be at least 1, --pause-rate in 0..1, --pause-ms at least 0")
        if not args.tasks.is_file():
            parser.error(f"no tasks file at {args.tasks}")
        plan = write_plan(args)
        print(f"{sum(len(file['keys']) for file in plan['files'])} keys in {len(plan['files'])} files",
              file=sys.stderr)
        return 0
    for path in (args.record, args.log):
        if not path.is_file():
            parser.error(f"no file at {path}")
    figures = report(args)
    print(format_table(figures))
    if args.json:
        print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
