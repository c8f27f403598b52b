"""Learn the judge of analogy sites (`completion.site_judge`) from real commits replayed as next-edit tasks.

    python -m bench.site_judge_fit --tasks A.jsonl B.jsonl ... --out completion/site_judge.json [--floor F]

Each task (`training.commit_tasks`; the repository is the file's name up to its first `-`) is
planned as the language server plans it (`bench.next_edit_drafts.planned_for`: the user's one
`didChange`, the task's earlier edits as history). Every candidate site of its edit
(`completion.site_judge.candidates`, down to `--floor`; without one, only the sites the fixed cut
keeps) is labelled 1 when the commit made its line what the site makes of it (the site alone, or
all the candidates on that line), else 0 (a negative task's every site is 0). A logistic
regression over the standardized features with an L2 penalty (`--l2`, Newton steps) is fitted.

The threshold is chosen by repository: for each repository, the judge fitted on the others
answers its tasks (the rules side: drafts alone, `Drafting.RULES`) at each threshold of `--grid`,
pooled over the repositories. `--rule keep-exact` (the default) keeps the threshold with the
fewest tasks with a false edit (a line the commit kept, changed) among those that make as many
carrying tasks (`PROPAGATING`) exact as the fixed cut does (none does: the one that makes most
exact); `objective` the one with the most carrying tasks exact less tasks with a false edit. The
table of every threshold, and the fixed cut's row, goes to stdout; the judge fitted on every
repository with that threshold is written to `--out`. With `--json` the last line is one JSON
object of the figures.

It lives beside the next-edit benches because it is fitted to their own scoring of a task
(`bench.next_edit_scores.score`) and plans tasks as they do.
"""
from __future__ import annotations

import argparse
import json
import logging
import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bench.next_edit import load_edit_tasks, user_change, user_event
from bench.next_edit_drafts import PROPAGATING, planned_for
from bench.next_edit_scores import line_changes, score
from bench.next_edit_second import earlier_events
from completion import next_edit
from completion.edit_sites import Site
from completion.next_edit import Drafting
from completion.positions import line_starts
from completion.site_judge import FEATURES, Candidate, SiteJudge, candidates
from completion.syntax import ParsedDocument, language_for

logger = logging.getLogger("bench.site_judge_fit")

DEFAULT_GRID = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7)
FIXED_CUT = "fixed cut"


@dataclass(slots=True)
class Example:
    """One task's candidates, their labels and what the rules answer at each kept set of
    candidates (a task without candidates answers the same whatever the judge: its text is not kept)."""

    repository: str
    kind: str
    task: dict | None
    candidates: list[Candidate]
    labels: list[int]
    answers: dict[tuple[bool | None, ...], tuple[bool, bool, bool]] = field(default_factory=dict)


def repository_of(path: Path) -> str:
    return path.name.split("-")[0].split(".")[0]


def task_candidates(task: dict, floor: float | None) -> list[Candidate]:
    """The candidate sites of the task's edit as the plan sees them (none where the gate refuses)."""
    language = language_for(task["path"])
    if language is None:
        return []
    where, text = user_change(task["original"], task["edited"])
    event = user_event(task["original"], task["edited"], where, text)
    document = ParsedDocument.parse(language, task["edited"])
    inputs = None if next_edit.gate(document, event) is not None else next_edit.site_inputs(event, document)
    if inputs is None:
        return []
    return candidates(event, [*earlier_events(task), event], *inputs, document, floor)


def labels_of(task: dict, found: Sequence[Candidate]) -> list[int]:
    """1 for each candidate whose line the commit made what the site alone, or every candidate on
    that line, makes of it."""
    wanted = line_changes(task["edited"], task["expected"])
    starts = line_starts(task["edited"])
    by_line: dict[int, list[Site]] = defaultdict(list)
    for candidate in found:
        by_line[candidate.site.line].append(candidate.site)
    labels = []
    for candidate in found:
        site = candidate.site
        fate = wanted.get((site.line, False))
        made = {_applied(task["edited"], starts, [site]), _applied(task["edited"], starts, by_line[site.line])}
        labels.append(int(fate is not None and len(fate) == 1 and fate[0] in made))
    return labels


def _applied(text: str, starts: list[int], sites: Sequence[Site]) -> str:
    """The line of the sites (all on one line of `text`, whose lines start at `starts`) with them
    made, trailing space stripped."""
    line = sites[0].line
    start = starts[line]
    current = text[start:starts[line + 1]].rstrip("\r\n")
    for site in sorted(sites, key=lambda s: -s.start):
        begin, end = site.start - start, site.end - start
        if not 0 <= begin <= end <= len(current):
            return ""
        current = current[:begin] + site.new + current[end:]
    return current.rstrip()


def fit(x: np.ndarray, y: np.ndarray, l2: float, steps: int = 30) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """(mean, scale, weights, bias) of a logistic regression of `y` (n,) on `x` (n, features),
    standardized, with an L2 penalty on the weights, by Newton steps."""
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale == 0] = 1.0
    z = np.hstack([(x - mean) / scale, np.ones((len(x), 1))])  # (n, features + 1): the bias last
    theta = np.zeros(z.shape[1])
    penalty = np.full(z.shape[1], l2)
    penalty[-1] = 0.0
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-np.clip(z @ theta, -60, 60)))
        gradient = z.T @ (p - y) + penalty * theta
        hessian = (z * (p * (1 - p))[:, None]).T @ z + np.diag(penalty) + 1e-9 * np.eye(z.shape[1])
        step = np.linalg.solve(hessian, gradient)
        theta -= step
        if np.abs(step).max() < 1e-8:
            break
    return mean, scale, theta[:-1], float(theta[-1])


def judge_of(examples: Sequence[Example], l2: float, threshold: float, floor: float | None) -> SiteJudge:
    """The judge fitted on the examples' candidates."""
    rows = [c.features for e in examples for c in e.candidates]
    labels = [label for e in examples for label in e.labels]
    mean, scale, weights, bias = fit(np.array(rows, dtype=float), np.array(labels, dtype=float), l2)
    return SiteJudge(tuple(map(float, mean)), tuple(map(float, scale)), tuple(map(float, weights)), bias,
                     threshold, floor)


def outcome(example: Example, judge: SiteJudge | None) -> tuple[bool, bool, bool]:
    """(exact, a false edit, the answer changed something) of the rules' answer with `judge`
    (None: the fixed cut), remembered per kept set of candidates."""
    key = (None,) if judge is None or not example.candidates else \
        tuple(judge.probability(c.features) >= judge.threshold for c in example.candidates)
    if key not in example.answers:
        task = example.task
        planned = planned_for(task, Drafting.RULES, judge=judge)
        predicted = task["edited"] if planned is None else \
            next_edit.applied(task["edited"], next_edit.finish(planned, []))
        found = score(task["edited"], task["expected"], predicted)
        example.answers[key] = (found.exact, found.false_lines > 0, found.changed)
    return example.answers[key]


def figures(examples: Sequence[Example], judges: dict[str, SiteJudge | None]) -> dict:
    """Carrying exact, negatives with a false edit and tasks with a false edit, each a count, of
    the examples answered with their repository's judge (`judges`)."""
    counts = {"carrying": 0, "carrying_exact": 0, "negatives": 0, "negatives_false": 0, "false_tasks": 0}
    for example in examples:
        exact, false, changed = outcome(example, judges[example.repository])
        kind = example.kind
        carrying = kind in PROPAGATING
        counts["carrying"] += carrying
        counts["carrying_exact"] += carrying and exact
        counts["negatives"] += kind == "negative"
        counts["negatives_false"] += kind == "negative" and changed
        counts["false_tasks"] += false
    counts["objective"] = counts["carrying_exact"] - counts["false_tasks"]
    return counts


def cross_validated(examples: list[Example], l2: float, grid: Sequence[float], floor: float | None) -> dict:
    """Each threshold's pooled figures, each repository answered by the judge fitted on the others."""
    repositories = sorted({e.repository for e in examples})
    folds = {r: judge_of([e for e in examples if e.repository != r], l2, 0.5, floor) for r in repositories}
    table = {FIXED_CUT: figures(examples, dict.fromkeys(repositories))}
    for threshold in grid:
        judges = {r: SiteJudge(j.mean, j.scale, j.weights, j.bias, threshold, floor) for r, j in folds.items()}
        table[f"{threshold:g}"] = figures(examples, judges)
        logger.info("threshold %g: %s", threshold, table[f"{threshold:g}"])
    return table


def chosen_threshold(table: dict, rule: str) -> str | None:
    """The threshold (a key of `table`) the `rule` picks (see the module); None for an empty table."""
    rows = [key for key in table if key != FIXED_CUT]
    if rule == "keep-exact":
        kept = [key for key in rows if table[key]["carrying_exact"] >= table[FIXED_CUT]["carrying_exact"]]
        if not kept:  # none keeps it: the one that loses least
            return max(rows, key=lambda key: (table[key]["carrying_exact"], -table[key]["false_tasks"]), default=None)
        return min(kept, key=lambda key: (table[key]["false_tasks"], -table[key]["carrying_exact"]))
    return max(rows, key=lambda key: table[key]["objective"], default=None)


def load_examples(paths: Sequence[Path], floor: float | None) -> list[Example]:
    examples = []
    for path in paths:
        for task in load_edit_tasks(path):
            found = task_candidates(task, floor)
            example = Example(repository_of(path), task.get("kind", ""), task, found, labels_of(task, found))
            if not found:
                outcome(example, None)
                example.task = None
            examples.append(example)
        logger.info("%s: %d tasks read", path.name, len(examples))
    return examples


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.site_judge_fit", description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=Path, nargs="+", required=True,
                        help="next-edit task files of real commits, one or more per repository (NAME-....jsonl)")
    parser.add_argument("--out", type=Path, required=True, help="the judge's JSON to write")
    parser.add_argument("--floor", type=float, default=None,
                        help="judge candidates down to this likeness, below the fixed cut (default: the cut's sites)")
    parser.add_argument("--l2", type=float, default=1.0, help="L2 penalty on the standardized weights (default 1)")
    parser.add_argument("--grid", type=float, nargs="+", default=list(DEFAULT_GRID), help="thresholds to compare")
    parser.add_argument("--rule", choices=("keep-exact", "objective"), default="keep-exact",
                        help="how the threshold is chosen from the cross-validated table (see the module)")
    parser.add_argument("--json", action="store_true", help="end with one JSON line of the figures")
    return parser


def replaceable(path: Path) -> bool:
    """`--out` may be written: a new file, or a site judge's JSON (one this script wrote), not a link."""
    if path.is_symlink() or (path.exists() and not path.is_file()):
        return False
    if not path.exists():
        return True
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    return isinstance(data, dict) and "features" in data and "weights" in data


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(message)s")
    missing = [str(path) for path in args.tasks if not path.is_file()]
    if missing:
        parser.error(f"--tasks: no such file: {', '.join(missing)}")
    if not replaceable(args.out):
        parser.error(f"--out {args.out} exists and is not a site judge's JSON: refusing to overwrite it")
    examples = load_examples(args.tasks, args.floor)
    positives = sum(sum(e.labels) for e in examples)
    if positives == 0 or positives == sum(len(e.labels) for e in examples):
        parser.error("the tasks give candidates of one label only: nothing to learn")
    table = cross_validated(examples, args.l2, args.grid, args.floor) \
        if len({e.repository for e in examples}) > 1 else {}
    chosen = chosen_threshold(table, args.rule) or f"{args.grid[len(args.grid) // 2]:g}"
    judge = judge_of(examples, args.l2, float(chosen), args.floor)
    args.out.write_text(json.dumps(judge.to_json(), indent=1) + "\n", encoding="utf-8")
    print(" | ".join(("threshold", "carrying exact", "negatives with a false edit", "tasks with a false edit",
                      "objective")))
    for key, row in table.items():
        print(f"{key} | {row['carrying_exact']}/{row['carrying']} | {row['negatives_false']}/{row['negatives']} | "
              f"{row['false_tasks']} | {row['objective']}")
    print(f"chosen threshold {chosen}; {sum(len(e.labels) for e in examples)} candidates, {positives} real; "
          f"weights: " + ", ".join(f"{n} {w:+.2f}" for n, w in zip(FEATURES, judge.weights)))
    if args.json:
        print(json.dumps({"threshold": float(chosen), "floor": args.floor, "rule": args.rule, "candidates":
                          sum(len(e.labels) for e in examples), "positives": positives, "cross_validated": table}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
