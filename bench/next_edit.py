"""Next-edit suggestions end to end: a real LSP client makes the user's edit and takes the server's.

    python -m bench.next_edit --tasks PATH [--limit N] [--worker ADDR] [--deadline-ms MS] [--json]

Each next-edit task (FORMATS.md) becomes a document. A pygls client, talking LSP over stdio to
`python -m lsp_server` (which starts its own worker on the bundled model, or uses `--worker`),
opens `original`, sends the user's edit to `edited` as one incremental `didChange` (the smallest
range that changed, as an editor sends a paste or a replacement), asks
`textDocument/copilotInlineEdit` at `cursor`, applies every returned edit and scores the file
against `expected` (`bench.next_edit_scores`: exact match, changed-line precision and recall,
false edits, region recall). Each task is asked three times on the same document, once per value
of the server's `nextEditDrafts` setting (`completion.next_edit.Drafting`), switched with
`workspace/didChangeConfiguration`:
- **rules**: the drafts the user's edit implies, alone (no model is asked);
- **model**: every region masked whole, the model writing each (the path before drafts);
- **drafted**: the drafts, checked and completed by the model (the product).
The order of the sides rotates from task to task, so no side always meets a warm cache. The
model's part is what `drafted` does that `rules` does not: the lines where their files differ,
and how many of those `drafted` got right (the line `expected` has). On the rename tasks (a kind
naming "rename") a **mechanical** baseline, a tree-sitter rename of the same name over the same
scope with no model, is scored the same way.

Latency p50/p95 per side: client-side (the request to its answer) and server-side (the server's
log line for each answer); and the share of answers in which the worker left a job unanswered
(late or failed: that job's regions then get their drafts alone). Region recall uses the regions the server found
(`completion.next_edit.plan` on the same texts and event, none where its gate refuses: no tree,
or a text that does not parse). Figures per kind, over all tasks and over the rename tasks.
A human table goes to stdout; with `--json` its last line is one JSON object.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import logging
import random
import re
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from lsprotocol import types

from bench.lsp_latency import URI_ROOT, WARM_UP_S, Replay, position_of, start_server, stop_server
from bench.next_edit_scores import Score, event_of, lines_of, mechanical_rename, region_recall, score
from bench.quality import jsonl_records, percentile, set_name
from completion import next_edit
from completion.next_edit import Drafting
from completion.edit_events import EditEvent, common_ends
from completion.edit_regions import Region
from completion.positions import offset_at
from completion.settings import DEFAULT_DEADLINE_MS
from completion.syntax import ParsedDocument, language_for
from lsp_server.edit_history import step_span
from lsp_server.protocol import INLINE_EDIT

logger = logging.getLogger("bench.next_edit")

RULES, MODEL, DRAFTED = str(Drafting.RULES), str(Drafting.MODEL), str(Drafting.DRAFTED)
MECHANICAL = "mechanical"
SIDES = (RULES, MODEL, DRAFTED)
ANSWER_MARGIN_S = 60.0  # beyond the deadline a request may use, before the bench gives up
SERVER_ANSWER = re.compile(r"\[(\w+)\] next edit: \d+ edits in ([0-9.]+) ms$")
WORKER_MISS = re.compile(r"WARNING completion\.next_edit \[(\w+)\] no next edit: ")  # a job unanswered (`run`)
TEXT_FIELDS = ("task_id", "path", "original", "edited", "expected")


@dataclass(slots=True)
class Reply:
    """One side's answer to one task."""

    predicted: str  # `edited` with the returned edits applied
    edits: int
    client_ms: float
    server_ms: float | None = None
    worker_misses: int = 0  # the jobs of this answer that the worker did not answer in time


@dataclass(slots=True)
class TaskResult:
    task_id: str
    kind: str
    edited: str
    expected: str
    sites_covered: int
    sites: int
    replies: dict[str, Reply] = field(default_factory=dict)  # by side
    mechanical: str | None = None  # the baseline's file, on rename tasks

    @property
    def negative(self) -> bool:
        return self.edited == self.expected

    def score(self, side: str) -> Score:
        predicted = self.mechanical if side == MECHANICAL else self.replies[side].predicted
        return score(self.edited, self.expected, predicted)


def load_edit_tasks(path: Path) -> list[dict]:
    """Every next-edit task of a `.jsonl` or `.jsonl.gz` file, checked for its fields."""
    tasks = []
    for number, task in jsonl_records(path):
        missing = [name for name in TEXT_FIELDS if not isinstance(task.get(name), str)]
        cursor = task.get("cursor")
        if missing or type(cursor) is not int or not 0 <= cursor <= len(task["edited"]):
            raise ValueError(f"{path}:{number}: not a next-edit task (string fields "
                             f"{', '.join(TEXT_FIELDS)} and a cursor offset in `edited`); "
                             f"see FORMATS.md")
        tasks.append(task)
    return tasks


def user_change(original: str, edited: str) -> tuple[types.Range, str]:
    """The smallest range of `original` and its new text that make `edited`."""
    head, tail = common_ends(original, edited)
    where = types.Range(start=position_of(original[:head]), end=position_of(original[:len(original) - tail]))
    return where, edited[head:len(edited) - tail]


def apply_edits(text: str, edits: Sequence[dict]) -> str:
    """`text` with the LSP edits (`{range, text}`, UTF-16 columns, none overlapping) made."""
    spans = []
    for edit in edits:
        start, end = edit["range"]["start"], edit["range"]["end"]
        cut = (offset_at(text, start["line"], start["character"]), offset_at(text, end["line"], end["character"]))
        if None in cut or cut[0] > cut[1]:
            raise ValueError(f"the server sent an edit outside the document: {edit['range']}")
        spans.append((*cut, edit["text"]))
    for start, end, new_text in sorted(spans, reverse=True):
        text = text[:start] + new_text + text[end:]
    return text


def user_event(original: str, edited: str, where: types.Range, text: str) -> EditEvent:
    """The user's edit as the server's edit history records the one `didChange` that makes it."""
    change = types.TextDocumentContentChangePartial(range=where, text=text)
    return event_of(original, edited, step_span(original, edited, [change]))


def server_regions(event: EditEvent, language: str | None, cursor_line: int) -> list[Region]:
    """The regions the server rewrites after `event`: the next-edit pipeline's plan, none where
    its gate refuses (no tree, a text that does not parse)."""
    if language is None:
        return []
    planned = next_edit.plan(next_edit.EditAsk(ParsedDocument.parse(language, event.after), event, cursor_line,
                                               "bench", 1, settled=True))
    return [] if isinstance(planned, next_edit.Refused) else planned.regions


def mechanical_answer(event: EditEvent, language: str | None) -> str:
    """The file after the baseline's rename (the text after `event` where it has no grammar)."""
    if language is None:
        return event.after
    return mechanical_rename(event, ParsedDocument.parse(language, event.after))


def server_answers(log_text: str) -> list[tuple[float, int]]:
    """(the server's milliseconds, the jobs the worker did not answer in time or failed) for each
    next-edit answer, in the order of its log."""
    answers, misses = [], Counter()
    for line in log_text.splitlines():
        if found := WORKER_MISS.search(line):
            misses[found.group(1)] += 1
        elif found := SERVER_ANSWER.search(line):
            answers.append((float(found.group(2)), misses.pop(found.group(1), 0)))
    return answers


def plain(value):
    """A raw result as plain maps and lists (pygls hands back named tuples for unknown methods)."""
    if hasattr(value, "_asdict"):
        value = value._asdict()
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return value


class EditSession:
    """A client session against `python -m lsp_server` that makes each task's edit and asks."""

    def __init__(self, replay: Replay, answer_wait_s: float) -> None:
        self.replay, self.answer_wait_s = replay, answer_wait_s
        self.replies: list[Reply] = []  # in the order they were asked

    def configure(self, side: str) -> None:
        self.replay.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
            settings={"nextEditDrafts": side}))

    async def ask(self, uri: str, text: str, position: types.Position) -> Reply:
        params = {"textDocument": {"uri": uri, "version": 2},
                  "position": {"line": position.line, "character": position.character}}
        sent = time.monotonic()
        result = await asyncio.wait_for(self.replay.client.protocol.send_request_async(INLINE_EDIT, params),
                                        self.answer_wait_s)
        client_ms = (time.monotonic() - sent) * 1000.0
        edits = plain(result)["edits"]
        reply = Reply(apply_edits(text, edits), len(edits), client_ms)
        self.replies.append(reply)
        return reply

    async def run_task(self, number: int, task: dict) -> TaskResult:
        """Open the task's `original`, make its edit, ask on each side, close it."""
        language = language_for(task["path"])
        uri = f"{URI_ROOT}next-edit/{number}/{PurePosixPath(task['path']).name}"
        original, edited = task["original"], task["edited"]
        where, text = user_change(original, edited)
        event, cursor = user_event(original, edited, where, text), position_of(edited[:task["cursor"]])
        covered, sites = region_recall(edited, task["expected"], server_regions(event, language, cursor.line))
        result = TaskResult(task["task_id"], task.get("kind", ""), edited, task["expected"], covered, sites)
        self.replay.open(uri, original, language or "plaintext")
        self.replay.change(uri, 2, where, text)
        for side in SIDES[number % 3:] + SIDES[:number % 3]:
            self.configure(side)
            result.replies[side] = await self.ask(uri, edited, cursor)
        self.replay.close(uri)
        if "rename" in result.kind:
            result.mechanical = mechanical_answer(event, language)
        return result


def rate(count: int, total: int) -> float | None:
    return round(count / total, 4) if total else None


def ms(values: list[float], q: float) -> float | None:
    found = percentile(values, q)
    return None if found is None else round(found, 1)


def side_figures(results: Sequence[TaskResult], side: str) -> dict:
    """One side's figures over `results`."""
    scores = [result.score(side) for result in results]
    negatives = [s for s, result in zip(scores, results) if result.negative]
    figures = {"exact": rate(sum(s.exact for s in scores), len(scores)),
               "precision": rate(sum(s.correct_lines for s in scores), sum(s.predicted_lines for s in scores)),
               "recall": rate(sum(s.correct_lines for s in scores), sum(s.expected_lines for s in scores)),
               "false_edit_tasks": rate(sum(s.false_lines > 0 for s in scores), len(scores)),
               "false_edits_negatives": rate(sum(s.changed for s in negatives), len(negatives))}
    if side == MECHANICAL:
        return figures
    replies = [result.replies[side] for result in results]
    client = [reply.client_ms for reply in replies]
    server = [reply.server_ms for reply in replies if reply.server_ms is not None]
    return {**figures, "answers_with_edits": sum(reply.edits > 0 for reply in replies),
            "answers_missing_a_job": rate(sum(reply.worker_misses > 0 for reply in replies), len(replies)),
            "client_p50_ms": ms(client, 50), "client_p95_ms": ms(client, 95),
            "server_p50_ms": ms(server, 50), "server_p95_ms": ms(server, 95),
            "server_mean_ms": round(sum(server) / len(server), 1) if server else None}


def row(results: Sequence[TaskResult]) -> dict:
    """The figures of a group of tasks: every side, the model's part, and the baseline
    where the group holds rename tasks."""
    figures = {"tasks": len(results), "negatives": sum(result.negative for result in results),
               "region_recall": rate(sum(r.sites_covered for r in results), sum(r.sites for r in results)),
               "regions_cover_all": rate(sum(r.sites_covered == r.sites for r in results if r.sites),
                                         sum(bool(r.sites) for r in results))}
    figures.update({side: side_figures(results, side) for side in SIDES})
    changed, right = map(sum, zip((0, 0), *(model_part(r) for r in results)))
    figures["model_part"] = {"lines_changed": changed, "right": right, "right_rate": rate(right, changed)}
    renames = [result for result in results if result.mechanical is not None]
    figures[MECHANICAL] = side_figures(renames, MECHANICAL) if renames else None
    return figures


def model_part(result: TaskResult) -> tuple[int, int]:
    """(lines where `drafted`'s file differs from `rules`', those of them `expected` has), on
    files of one line count (a changed count is one line changed, never right)."""
    rules, drafted = lines_of(result.replies[RULES].predicted), lines_of(result.replies[DRAFTED].predicted)
    expected = lines_of(result.expected)
    if len(rules) != len(drafted):
        return 1, 0
    differ = [i for i, (a, b) in enumerate(zip(rules, drafted)) if a != b]
    right = sum(len(drafted) == len(expected) and drafted[i] == expected[i] for i in differ)
    return len(differ), right


def summarize(results: Sequence[TaskResult]) -> dict:
    kinds = sorted({result.kind for result in results})
    renames = [result for result in results if result.mechanical is not None]
    return {"overall": row(results), "renames": row(renames) if renames else None,
            "by_kind": {kind: row([r for r in results if r.kind == kind]) for kind in kinds}}


def _cell(value) -> str:
    return "-" if value is None else str(value)


def format_table(summary: dict, meta: dict) -> str:
    figures = (f"{side} {figure}" for side in SIDES for figure in ("exact", "prec", "recall"))
    header = ("group", "n", "regions", *figures, "false", "missed", "p50 ms", "p95 ms", "model lines", "right",
              "mech exact")
    rows = [("overall", summary["overall"]), ("renames", summary["renames"]),
            *summary["by_kind"].items()]
    lines = [f"set {meta['set']}, {meta['tasks']} tasks, deadline {meta['deadline_ms']} ms, "
             f"worker {meta['worker']}", " | ".join(header)]
    for name, figures in rows:
        if figures is None:
            continue
        product, mech, part = figures[DRAFTED], figures[MECHANICAL] or {}, figures["model_part"]
        cells = (name, figures["tasks"], figures["region_recall"],
                 *(figures[side][figure] for side in SIDES for figure in ("exact", "precision", "recall")),
                 product["false_edit_tasks"], product["answers_missing_a_job"], product["server_p50_ms"],
                 product["server_p95_ms"], part["lines_changed"], part["right"], mech.get("exact"))
        lines.append(" | ".join(_cell(cell) for cell in cells))
    overall = summary["overall"]
    lines.append("regions: region recall; false, missed, ms: of drafted (false: tasks with a false edit; "
                 "missed: answers with a job the worker left unanswered; ms: server-side); model lines: "
                 "lines drafted changed beyond the rules, right: of them as expected; mech: the mechanical rename")
    lines.append("false edits on negatives: " + ", ".join(
        f"{side} {_cell(overall[side]['false_edits_negatives'])}" for side in SIDES)
        + f" ({overall['negatives']} negatives)")
    return "\n".join(lines)


async def run(tasks: Sequence[dict], args: argparse.Namespace, folder: Path) -> list[TaskResult]:
    """Start the server, warm it up, make and score every task, stop it; then give each reply
    the server's own latency from its log."""
    flags = ["--worker", args.worker] if args.worker else []
    client = await start_server(folder, {"deadlineMs": args.deadline_ms, "statsLog": ""}, *flags)
    session = EditSession(Replay(client, random.Random(0)), args.deadline_ms / 1000.0 + ANSWER_MARGIN_S)
    results = []
    try:
        if not await session.replay.warm_up():
            raise RuntimeError(f"the server's worker gave no completion within {WARM_UP_S:.0f} s; "
                               f"see {folder / 'lsp.log'}")
        for number, task in enumerate(tasks):
            results.append(await session.run_task(number, task))
            logger.info("task %d of %d (%s) done", number + 1, len(tasks), results[-1].kind)
    finally:
        await stop_server(client)
    answers = server_answers((folder / "lsp.log").read_text())
    if len(answers) == len(session.replies):
        for reply, (latency, misses) in zip(session.replies, answers):
            reply.server_ms, reply.worker_misses = latency, misses
    else:
        logger.warning("the server logged %d next-edit answers for %d requests: no server-side latency",
                       len(answers), len(session.replies))
    return results


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.next_edit", description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=Path, required=True,
                        help="next-edit tasks, .jsonl or .jsonl.gz (e.g. work/next_edit_heldout.jsonl "
                             "from `python -m training.edit_synth`)")
    parser.add_argument("--limit", type=int, default=None, help="the first N tasks (default all)")
    parser.add_argument("--worker", metavar="ADDR", default=None,
                        help="a running worker for the server (default: it starts its own on the bundled model)")
    parser.add_argument("--deadline-ms", type=int, default=DEFAULT_DEADLINE_MS,
                        help=f"the server's deadline setting, per job (default {DEFAULT_DEADLINE_MS})")
    parser.add_argument("--server-log", type=Path, default=None, metavar="PATH",
                        help="keep the server's log there (default: dropped with the run's temporary folder)")
    parser.add_argument("--json", action="store_true",
                        help="end with one JSON line: overall, renames and by_kind figures and the run's settings")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(message)s")
    logging.getLogger("pygls").setLevel(logging.WARNING)  # at INFO it logs every message
    if not args.tasks.is_file():
        parser.error(f"--tasks {args.tasks} is not a file")
    try:
        tasks = load_edit_tasks(args.tasks)[:args.limit]
    except (ValueError, OSError) as exc:
        parser.error(str(exc))
    if not tasks:
        parser.error(f"--tasks {args.tasks} holds no tasks")
    with tempfile.TemporaryDirectory(prefix="infill-next-edit-bench-") as folder:
        try:
            results = asyncio.run(run(tasks, args, Path(folder)))
        finally:
            if args.server_log is not None and (Path(folder) / "lsp.log").exists():
                shutil.copyfile(Path(folder) / "lsp.log", args.server_log)
    summary = summarize(results)
    meta = {"set": set_name(args.tasks), "tasks": len(tasks), "deadline_ms": args.deadline_ms,
            "worker": args.worker or "local (bundled model)"}
    print(format_table(summary, meta))
    if args.json:
        print(json.dumps({**meta, **summary}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
