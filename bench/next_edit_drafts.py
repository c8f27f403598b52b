"""Drafted next edits in process: the rules alone, the model alone, and the drafts checked by the
model at each veto threshold, on the same tasks and the same model, in one run.

    python -m bench.next_edit_drafts --tasks PATH [--model DIR] [--veto 0 0.9 ...] [--site-judge [PATH]]
                                     [--limit N] [--json] [--per-task PATH] [--rules-only]

Each next-edit task (FORMATS.md) is planned as the language server plans it
(`completion.next_edit.plan` on the edited text, its event as one `didChange` makes it) and
decoded by the worker's own runner (`engine.worker.runner.ModelRunner`), no sockets: the figures
are the pipeline's and the decoder's, not the transport's (`bench.next_edit` measures the real
server). Sides:
- **rules**: the drafts alone (`Drafting.RULES`), no model;
- **model**: every region masked whole (`Drafting.MODEL`);
- **veto V**: the drafts with the model, its `veto` setting at V (0: drafts stand; the model only
  fills slots);
- **margin M** (with `--site-margin`): the drafts at veto 0, each region whose draft the model
  finds less likely than its current text by more than M (`infill.site_scores`: summed
  log-probability of the changed tokens, new less current) left as it is; the scores are read once
  per task, and what that costs is reported (ms p50, p95, over the tasks with a job and over those
  with a site judged); the veto 0 side is the same drafts unjudged;
- with `--site-judge`, every side's analogy sites are those the learned judge keeps
  (`completion.site_judge`) rather than the fixed cut's;
- **rules, last edit alone** (with `--two-edits`: each task after its first follow-up, made as
  the user's second edit, `bench.next_edit_second`): the rules reading the last edit without the
  first, where the other sides read both as the document's history (`completion.edit_patterns`).
Per side and kind (and the kinds that propagate a change together, `PROPAGATING`): exact match,
changed-line precision and recall, false edits on negatives and the share of tasks with a false
edit (a changed line `expected` keeps); per task group: its changed lines (those `expected` changes,
and their share of all: the most recall a group's answers could give) and region recall (the expected sites inside
the drafted plan's regions, `bench.next_edit_scores.region_recall`) and the plan's milliseconds
(plan and finish, no decode: the server's own work, p50 and p95); per
model side: decode milliseconds of the edit job (p50, p95), forward passes, and tokens per forward
pass (the tokens of the holes' answers over the job's passes). The model's part of each veto side
is what it does beyond the rules: the lines where its file differs from the rules' file and how
many of those are the expected line. Choose the threshold on one set and report on another.
With `--rules-only` the rules side alone is run, no model loaded (how a rule change is checked over
whole commit sets, task by task with `--per-task`). A human table goes to stdout; with `--json` its last
line is one JSON object; with `--per-task PATH` each task's id, kind and every side's score counts go to
PATH, a JSON line each (two runs compared task by task show which tasks a change moved).
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import torch

from bench.next_edit import load_edit_tasks, user_change, user_event
from bench.next_edit_second import earlier_events, second_edit
from bench.next_edit_scores import Score, lines_of, region_recall, score
from bench.lsp_latency import position_of
from bench.quality import percentile, set_name
from completion import next_edit
from completion.next_edit import Drafting
from completion.site_judge import JUDGE_PATH, SiteJudge, load
from completion.syntax import ParsedDocument, language_for
from engine.wire.protocol import Item
from engine.worker.runner import ModelRunner
from engine.worker.work import job_of
from infill.job import Job
from infill.paths import bundled_model_dir
from infill.site_scores import judged, site_scores

logger = logging.getLogger("bench.next_edit_drafts")

DEFAULT_VETOES = (0.0, 0.5, 0.8, 0.9, 0.95)
RULES, MODEL, LAST_EDIT = "rules", "model", "rules, last edit alone"
PROPAGATING = frozenset({"rename", "literal", "repeated_pattern", "call_sites"})


@dataclass(slots=True)
class Answer:
    """One side's answer to one task."""

    predicted: str
    decode_ms: float | None = None  # None: no job was decoded
    passes: int = 0
    tokens: int = 0  # tokens of the holes' answers


@dataclass(slots=True)
class Task:
    kind: str
    edited: str
    expected: str
    answers: dict[str, Answer] = field(default_factory=dict)
    sites_covered: int = 0  # the sites of edited -> expected inside the drafted plan's regions
    sites: int = 0
    plan_ms: float = 0.0  # the drafted plan, and the rules' finish: the server's own work
    score_ms: float | None = None  # the model's site scores (`--site-margin`; None: no job to read them in)
    judged: bool = False  # some hole of the job was judged (a whole draft that changes its region)
    scores: dict[str, Score] = field(default_factory=dict)  # each side's, once: groups share tasks
    task_id: str = ""

    def score(self, side: str) -> Score:
        if side not in self.scores:
            self.scores[side] = score(self.edited, self.expected, self.answers[side].predicted)
        return self.scores[side]


def veto_side(veto: float) -> str:
    return f"veto {veto:g}"


def margin_side(margin: float) -> str:
    return f"margin {margin:g}"


def planned_for(task: dict, drafting: Drafting, history: bool = True,
                judge: SiteJudge | None = None) -> next_edit.EditPlan | None:
    """The task's plan as the language server makes it after the user's one `didChange` and the pause that
    ends it (`EditAsk.settled`: the edit replayed is whole; None where the gate refuses), with the
    task's earlier edits as the document's history when `history` (`bench.next_edit_second`), its
    analogy sites chosen by `judge` when given (`completion.site_judge`)."""
    language = language_for(task["path"])
    if language is None:
        return None
    original, edited = task["original"], task["edited"]
    where, text = user_change(original, edited)
    event = user_event(original, edited, where, text)
    cursor = position_of(edited[:task["cursor"]])
    planned = next_edit.plan(next_edit.EditAsk(ParsedDocument.parse(language, edited), event, cursor.line, "bench",
                                               60_000, PurePosixPath(task["path"]).name,
                                               events=[*(earlier_events(task) if history else ()), event],
                                               drafting=drafting, judge=judge, settled=True))
    return None if isinstance(planned, next_edit.Refused) else planned


def answer(runner: ModelRunner | None, planned: next_edit.EditPlan | None, edited: str,
           decoder: dict, judge: Callable[[Job], Job] | None = None) -> Answer:
    """The file after the plan's edits, with the job (passed through `judge` when given) decoded
    by `runner` (with `decoder`; None for a plan with no job: the rules')."""
    if planned is None:
        return Answer(edited)
    items, decoded = [], None
    if planned.request is not None:
        job = dataclasses.replace(job_of(planned.request), decoder=decoder)
        job = job if judge is None else judge(job)
        started = time.perf_counter()
        completions = runner.complete(job, None)
        decoded = (time.perf_counter() - started) * 1e3
        items = [Item(c.text, c.confidence, c.forward_passes, hole) for hole, c in enumerate(completions)]
    edits = next_edit.finish(planned, items)
    tokens = sum(len(runner.tok.encode(item.text)) for item in items)
    return Answer(next_edit.applied(edited, edits), decoded, max((i.forward_passes for i in items), default=0), tokens)


def run_task(runner: ModelRunner | None, task: dict, vetoes: Sequence[float], model_side: bool = True,
             margins: Sequence[float] = (), judge: SiteJudge | None = None) -> Task:
    found = Task(task.get("kind", ""), task["edited"], task["expected"], task_id=task.get("task_id", ""))
    found.answers[RULES] = answer(runner, planned_for(task, Drafting.RULES, judge=judge), task["edited"], {})
    if "earlier" in task:
        found.answers[LAST_EDIT] = answer(runner, planned_for(task, Drafting.RULES, False, judge), task["edited"], {})
    if model_side:
        found.answers[MODEL] = answer(runner, planned_for(task, Drafting.MODEL, judge=judge), task["edited"], {})
    started = time.perf_counter()
    drafted = planned_for(task, Drafting.DRAFTED, judge=judge)
    if drafted is not None:
        next_edit.finish(drafted, [])
    found.plan_ms = (time.perf_counter() - started) * 1e3
    found.sites_covered, found.sites = region_recall(task["edited"], task["expected"],
                                                     [] if drafted is None else drafted.regions)
    for veto in vetoes:
        found.answers[veto_side(veto)] = answer(runner, drafted, task["edited"], {"veto": veto})
    if margins:
        add_margin_sides(runner, found, drafted, margins)
    return found


def add_margin_sides(runner: ModelRunner, found: Task, drafted: next_edit.EditPlan | None,
                     margins: Sequence[float]) -> None:
    """The task's answer at veto 0 with the drafted job judged at each of `margins`, its site
    scores read once (and timed)."""
    scores = None
    if drafted is not None and drafted.request is not None:
        started = time.perf_counter()
        scores = site_scores(runner.model, runner.tok, job_of(drafted.request))
        found.score_ms = (time.perf_counter() - started) * 1e3
        found.judged = any(score is not None for score in scores)
    for margin in margins:
        judge = None if scores is None else (lambda job, m=margin: judged(job, scores, m))
        found.answers[margin_side(margin)] = answer(runner, drafted, found.edited, {"veto": 0.0}, judge)


def rate(count: int, total: int) -> float | None:
    return round(count / total, 4) if total else None


def model_part(task: Task, side: str) -> tuple[int, int]:
    """(lines where `side`'s file differs from the rules' file, those that are the expected line)."""
    rules, mine, expected = (lines_of(text) for text in (task.answers[RULES].predicted,
                                                          task.answers[side].predicted, task.expected))
    if len(rules) != len(mine):
        return 1, 0
    differ = [i for i, (a, b) in enumerate(zip(rules, mine)) if a != b]
    return len(differ), sum(len(mine) == len(expected) and mine[i] == expected[i] for i in differ)


def side_figures(tasks: Sequence[Task], side: str) -> dict:
    scores = [task.score(side) for task in tasks]
    negatives = [s for s, task in zip(scores, tasks) if task.edited == task.expected]
    figures = {"exact": rate(sum(s.exact for s in scores), len(scores)),
               "precision": rate(sum(s.correct_lines for s in scores), sum(s.predicted_lines for s in scores)),
               "recall": rate(sum(s.correct_lines for s in scores), sum(s.expected_lines for s in scores)),
               "false_edits_negatives": rate(sum(s.changed for s in negatives), len(negatives)),
               "tasks_with_false_edit": rate(sum(s.false_lines > 0 for s in scores), len(scores))}
    answers = [task.answers[side] for task in tasks if task.answers[side].decode_ms is not None]
    if answers:
        times = [a.decode_ms for a in answers]
        passes = sum(a.passes for a in answers)
        figures.update({"jobs": len(answers), "decode_p50_ms": round(percentile(times, 50), 1),
                        "decode_p95_ms": round(percentile(times, 95), 1),
                        "passes_per_job": round(passes / len(answers), 2),
                        "tokens_per_pass": round(sum(a.tokens for a in answers) / passes, 1) if passes else None})
    if side not in (RULES, MODEL, LAST_EDIT) and "margin" not in side:
        changed, right = map(sum, zip((0, 0), *(model_part(task, side) for task in tasks)))
        figures["model_part"] = {"lines_changed": changed, "right": right}
    return figures


def plan_figures(tasks: Sequence[Task]) -> dict:
    """Region recall (the expected sites inside the drafted plan's regions) and the plan's time."""
    times = [task.plan_ms for task in tasks]
    scored = [task.score_ms for task in tasks if task.score_ms is not None]
    judged = [task.score_ms for task in tasks if task.judged]
    return {"region_recall": rate(sum(t.sites_covered for t in tasks), sum(t.sites for t in tasks)),
            "plan_p50_ms": round(percentile(times, 50), 1), "plan_p95_ms": round(percentile(times, 95), 1),
            **({"scored_tasks": len(scored), "score_p50_ms": round(percentile(scored, 50), 1),
                "score_p95_ms": round(percentile(scored, 95), 1)} if scored else {}),
            **({"judged_tasks": len(judged), "judged_score_p50_ms": round(percentile(judged, 50), 1),
                "judged_score_p95_ms": round(percentile(judged, 95), 1)} if judged else {})}


def summarize(tasks: Sequence[Task], sides: Sequence[str]) -> dict:
    """Each side's figures over all tasks, the renames, the kinds that propagate a change
    (`PROPAGATING`, those of `training.commit_tasks`) and each kind."""
    kinds = sorted({task.kind for task in tasks})
    renames = [t for t in tasks if "rename" in t.kind and not t.kind.startswith("negative")]
    groups = {"overall": list(tasks), "renames": renames, "propagating": [t for t in tasks if t.kind in PROPAGATING],
              **{kind: [t for t in tasks if t.kind == kind] for kind in kinds}}
    changed = {name: sum(task.score(RULES).expected_lines for task in group) for name, group in groups.items()}
    return {name: {"tasks": len(group), "changed_lines": changed[name],
                   "share_of_changed_lines": rate(changed[name], changed["overall"]),
                   **plan_figures(group), **{side: side_figures(group, side) for side in sides}}
            for name, group in groups.items() if group}


def per_task_rows(tasks: Sequence[Task], sides: Sequence[str]) -> list[dict]:
    """One row per task (`--per-task`): its id and kind, and each side's score counts
    (`bench.next_edit_scores.Score`), to compare two runs task by task."""
    return [{"task_id": task.task_id, "kind": task.kind,
             **{side: dataclasses.asdict(task.score(side)) for side in sides}} for task in tasks]


def format_table(summary: dict, sides: Sequence[str], meta: dict) -> str:
    lines = [f"set {meta['set']}, {meta['tasks']} tasks, model {meta['model']}",
             " | ".join(("group", "n", "changed lines (share)", "region recall",
                         *(f"{side} exact/prec/recall/false-edit tasks" for side in sides)))]
    for name, figures in summary.items():
        cells = [f"{figures[s]['exact']}/{figures[s]['precision']}/{figures[s]['recall']}/"
                 f"{figures[s]['tasks_with_false_edit']}" for s in sides]
        lines.append(" | ".join((name, str(figures["tasks"]),
                                 f"{figures['changed_lines']} ({figures['share_of_changed_lines']})",
                                 str(figures["region_recall"]), *cells)))
    overall = summary["overall"]
    lines.append(f"plan (drafted, no decode) p50 {overall['plan_p50_ms']} ms p95 {overall['plan_p95_ms']} ms")
    if "score_p50_ms" in overall:
        lines.append(f"site scores ({overall['scored_tasks']} tasks with a job) p50 {overall['score_p50_ms']} ms "
                     f"p95 {overall['score_p95_ms']} ms; of the {overall.get('judged_tasks', 0)} with a site judged "
                     f"p50 {overall.get('judged_score_p50_ms')} ms p95 {overall.get('judged_score_p95_ms')} ms")
    for side in sides:
        f = overall[side]
        lines.append(f"{side}: false edits on negatives {f['false_edits_negatives']}, decode p50 "
                     f"{f.get('decode_p50_ms')} ms p95 {f.get('decode_p95_ms')} ms, passes/job "
                     f"{f.get('passes_per_job')}, tokens/pass {f.get('tokens_per_pass')}, model part "
                     f"{f.get('model_part')}")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.next_edit_drafts", description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=Path, required=True, help="next-edit tasks, .jsonl or .jsonl.gz")
    parser.add_argument("--model", type=Path, default=bundled_model_dir(),
                        help="model folder (default: the bundled model)")
    parser.add_argument("--veto", type=float, nargs="+", default=list(DEFAULT_VETOES),
                        help=f"veto thresholds to compare (default {' '.join(map(str, DEFAULT_VETOES))})")
    parser.add_argument("--site-margin", type=float, nargs="+", default=[],
                        help="margins of the model's site scores to compare, each a side at veto 0: a site "
                             "whose draft scores below -M is left as it is (infill.site_scores; default none)")
    parser.add_argument("--site-judge", type=Path, nargs="?", const=JUDGE_PATH, default=None,
                        help="choose every side's analogy sites by the learned judge stored at this path "
                             "(no path: the shipped completion/site_judge.json; default: the fixed cut)")
    parser.add_argument("--limit", type=int, default=None, help="the first N tasks (default all)")
    parser.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
    parser.add_argument("--model-side", action=argparse.BooleanOptionalAction, default=True,
                        help="decode the model side (every region masked: the slowest; default on)")
    parser.add_argument("--rules-only", action="store_true",
                        help="the rules side alone: no model loaded, no model or veto side (a rule change "
                             "checked over whole commit sets, with --per-task)")
    parser.add_argument("--two-edits", action="store_true",
                        help="each task after its first follow-up, made as the user's second edit "
                             "(bench.next_edit_second), with the side of the rules reading the last edit alone")
    parser.add_argument("--json", action="store_true", help="end with one JSON line of every figure")
    parser.add_argument("--per-task", type=Path, default=None, metavar="PATH",
                        help="write each task's id, kind and every side's score counts to this new file, "
                             "a JSON line each")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(message)s")
    if not args.tasks.is_file():
        parser.error(f"--tasks {args.tasks} is not a file")
    if args.per_task is not None and args.per_task.exists():
        parser.error(f"--per-task {args.per_task} exists: name a new file (this bench overwrites nothing)")
    if any(not 0.0 <= veto <= 1.0 for veto in args.veto):
        parser.error("--veto thresholds lie in [0, 1]")
    if any(margin < 0 for margin in args.site_margin):
        parser.error("--site-margin values are at least 0")
    if args.rules_only and args.site_margin:
        parser.error("--site-margin reads the model's scores: not with --rules-only")
    vetoes, model_side = ([], False) if args.rules_only else (args.veto, args.model_side)
    try:
        tasks = load_edit_tasks(args.tasks)[:args.limit]
    except (ValueError, OSError) as exc:
        parser.error(str(exc))
    if args.two_edits:
        tasks = [later for later in map(second_edit, tasks) if later is not None]
    try:
        judge = None if args.site_judge is None else load(args.site_judge)
    except (ValueError, OSError, KeyError) as exc:
        parser.error(f"--site-judge {args.site_judge}: {exc}")
    torch.set_num_threads(args.threads)
    runner = None if args.rules_only else ModelRunner(args.model)
    results = []
    for number, task in enumerate(tasks):
        results.append(run_task(runner, task, vetoes, model_side, args.site_margin, judge))
        logger.info("task %d of %d (%s) done", number + 1, len(tasks), results[-1].kind)
    sides = [RULES, *([LAST_EDIT] if args.two_edits else []), *([MODEL] if model_side else []),
             *map(veto_side, vetoes), *map(margin_side, args.site_margin)]
    summary = summarize(results, sides)
    meta = {"set": set_name(args.tasks), "tasks": len(tasks), "model": None if runner is None else args.model.name,
            "vetoes": vetoes,
            "site_margins": args.site_margin, "site_judge": None if args.site_judge is None else str(args.site_judge)}
    print(format_table(summary, sides, meta))
    if args.per_task is not None:
        args.per_task.write_text("".join(json.dumps(row) + "\n" for row in per_task_rows(results, sides)))
    if args.json:
        print(json.dumps({**meta, **summary}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
