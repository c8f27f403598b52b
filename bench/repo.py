"""Completions on a repository the model never saw: the base model and the model adapted to the
repository, each with and without snippets and with drafts from the repository, and the drafts
alone, on the same held-out holes, in one run.

    python -m bench.repo --repo DIR [--held-out 0.25] [--seed S] [--minutes N] [--tasks N]
                         [--base MODEL] [--adapted DIR] [--no-plain] [--json]

The repository's source files (`training.repo_files.gather`, of the languages `infill adapt`
learns with the base) are split by file: a share `--held-out` of them, chosen by a hash of the
seed and each path (so the split does not depend on the order files are listed in), is never
seen by adaptation nor by the snippet index; the rest is the train split. Holes are cut in the
held-out files, half single lines and half 3-line blocks, each starting on a line worth
predicting (`training.heldout.MIN_LINE_CHARS`): the lines are removed, leaving the cursor at the
start of an empty line, and the whole file around it is the hole's text, so the product's own
path cuts the windows. Each hole is asked as the language server asks (`completion.fim.plan`,
then `fim.finish`) with the completion mode set to the hole's shape (single line, or multi-line
for a block) and sources that hold the definitions of every train-split file (the workspace) and
of the held-out file as it stands with the hole (open). "Without snippets" is a snippet budget
of 0; "with snippets" the server's default budget, laid into the canvas even when the model was
not trained with them (the output says which was).

Drafts (issue 38) come from `completion.draft_sources` through the same `plan`: the held-out
document around the hole and a draft corpus of the train split's files (the workspace index).
Side `MODEL+snippets+drafts` is the product's default, each draft checked by the model (a hole
with no draft asks the very request of `MODEL+snippets`, whose answer it takes); side `drafts` is
the drafts alone, no model: the draft's text post-processed is the answer, no draft an empty one
(its latency is the plan's, the lookup included). Per side, beside the scores: the share of holes
answered, the answers whose request carried a draft (their share and exact match) and forward
passes per answer.

The adapted model is `--adapted DIR`, or the base adapted here on the train split
(`training.adapt`) for `--minutes` (0: no adapted model, the base's sides only); the run's
figures go into its card (`add_figures`) when it was adapted here or is an `infill adapt` folder
(never into a plain model folder). Every job is
decoded in process by the worker's own runner (`engine.worker.runner.ModelRunner`), one at a
time and with no keys/values kept from an earlier job, so latencies are the decoder's on a cold
canvas. Per side: exact match and edit similarity (as `bench.quality`), decode latency p50/p95
and tokens per forward pass, overall, for single lines, for blocks and for the cross-file holes
(whose expected text uses a name that the index says a train-split file defines and the hole's
own file does not); and tokens per forward pass of the `verify` rule on the same holes. pass@1
is not judged (see `PASS_AT_1_REASON`). The table goes to stdout; with `--json` the last line is
one JSON object.
"""
from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import logging
import math
import random
import re
import shlex
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from statistics import fmean

import torch

from bench.quality import edit_similarity, exact_match, percentile
from completion import fim
from completion.definitions import Definition, DefinitionIndex, definitions
from completion.draft_corpus import DraftCorpus
from completion.settings import DEFAULT_SNIPPET_TOKENS, Settings
from completion.sources import TextSources
from completion.syntax import GRAMMARS, ParsedDocument, language_for
from engine.wire.protocol import Item, Mode, Result, Timings
from engine.worker.runner import ModelRunner
from engine.worker.work import job_of
from infill.paths import bundled_model_dir, work_dir
from training.adapt import AdaptConfig, adapt, add_figures, source_languages
from training.heldout import MIN_LINE_CHARS
from training.repo_files import RepoError, RepoFile, gather

logger = logging.getLogger("bench.repo")

BASE, ADAPTED = "base", "adapted"
WITH_SNIPPETS = "+snippets"
WITH_DRAFTS = "+drafts"  # the product's default: drafts from the repository checked by the model
DRAFTS = "drafts"  # the drafts alone, no model: the draft's text is the answer, no draft an empty one
BLOCK_LINES = 3  # lines of a block hole (the other holes hide one line)
VERIFY = {"rule": "verify"}
VERIFY_CHOICES = ("snippets", "all", "none")  # the sides whose holes are decoded again with `verify`
URI_ROOT = "file:///repo/"  # held-out and train files are indexed under this made-up root
PASS_AT_1_REASON = ("not judged: a hole's file would have to run the repository's own tests, which a "
                    "wheel does not ship and a source checkout may not run without its dependencies")
GROUPS = ("overall", "single_line", "three_line", "cross_file")  # the holes each side is scored on
ADAPT_RECORD = "adapt.json"  # an `infill adapt` folder's record: the folders whose card gets the figures
PROGRESS_EVERY = 10  # holes between progress lines on stderr
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(slots=True)
class Split:
    """The repository's files by split, each in path order."""

    held_out: list[RepoFile]
    train: list[RepoFile]


@dataclass(slots=True)
class Answer:
    """One side's answer to one hole."""

    text: str  # what the editor would show
    decode_ms: float
    passes: int
    tokens: int  # tokens of the model's raw answer
    drafted: bool = False  # its request carried a draft (the drafts-alone side: it had one)


@dataclass(slots=True)
class RepoHole:
    """Lines hidden in a held-out file: `prefix + expected + suffix` is the file."""

    path: str
    line: int  # 0-based, the first hidden line
    lines: int
    prefix: str
    expected: str
    suffix: str
    cross_file: bool = False
    answers: dict[str, Answer] = field(default_factory=dict)
    verified: dict[str, Answer] = field(default_factory=dict)  # the `verify` rule's, by side


def split_rank(path: str, seed: int) -> str:
    """A file's place in the seed's shuffle: a hash of the seed and its path alone."""
    return hashlib.sha256(f"{seed}\0{path}".encode()).hexdigest()


def split_files(files: Sequence[RepoFile], held_out_share: float, seed: int) -> Split:
    """The first ceil(share * files) of the seed's shuffle held out, the rest the train split."""
    shuffled = sorted(files, key=lambda f: split_rank(f.path, seed))
    count = math.ceil(held_out_share * len(files))
    held_out, train = shuffled[:count], shuffled[count:]
    return Split(sorted(held_out, key=path_of), sorted(train, key=path_of))


def path_of(file: RepoFile) -> str:
    return file.path


def uri_of(path: str) -> str:
    return URI_ROOT + path


def hole_starts(text: str, lines: int) -> list[int]:
    """The lines that can start a hole of `lines` lines: worth predicting, and the hole's last
    line ends with a line break (so an empty line stays where the hole was)."""
    found = text.splitlines(keepends=True)
    return [i for i in range(len(found) - lines + 1)
            if len(found[i].strip()) >= MIN_LINE_CHARS and found[i + lines - 1].endswith(("\n", "\r"))]


def hole_at(file: RepoFile, line: int, lines: int) -> RepoHole:
    """The hole hiding `lines` lines from `line` on, up to (not including) the last one's break."""
    found = file.text.splitlines(keepends=True)
    start = sum(map(len, found[:line]))
    last = found[line + lines - 1]
    end = start + sum(map(len, found[line:line + lines])) - len(last) + len(last.rstrip("\r\n"))
    return RepoHole(file.path, line, lines, file.text[:start], file.text[start:end], file.text[end:])


def cut_holes(files: Sequence[RepoFile], count: int, seed: int) -> list[RepoHole]:
    """`count` distinct holes (half of them blocks), drawn by the seed from every place a hole can
    start in `files`; fewer where the files have fewer places. In file and line order."""
    rng, holes = random.Random(seed), []
    for lines, wanted in ((1, count - count // 2), (BLOCK_LINES, count // 2)):
        places = [(file, line) for file in files for line in hole_starts(file.text, lines)]
        holes += [hole_at(file, line, lines) for file, line in rng.sample(places, min(wanted, len(places)))]
    return sorted(holes, key=lambda h: (h.path, h.line, h.lines))


def file_definitions(uri: str, text: str) -> list[Definition]:
    """What a text defines, per its tree; none for a language without a grammar."""
    language = language_for(uri)
    if language not in GRAMMARS:
        return []
    document = ParsedDocument.parse(language, text)
    return definitions(document.tree, document.text, uri) if document.tree is not None else []


def train_index(files: Sequence[RepoFile]) -> DefinitionIndex:
    """The definitions of the train split: the workspace the language server would have scanned."""
    index = DefinitionIndex()
    for file in files:
        index.update(uri_of(file.path), file_definitions(uri_of(file.path), file.text))
    return index


def mark_cross_file(holes: Sequence[RepoHole], held_out: Sequence[RepoFile], index: DefinitionIndex) -> None:
    """Set `cross_file` on the holes whose expected text uses a name the train split defines and
    the hole's own file does not."""
    elsewhere = set(index.by_name)
    own = {f.path: {d.name for d in file_definitions(uri_of(f.path), f.text)} for f in held_out}
    for hole in holes:
        used = set(_IDENTIFIER.findall(hole.expected))
        hole.cross_file = bool((used & elsewhere) - own[hole.path])


@dataclass(slots=True)
class RepoSources(TextSources):
    """One held-out document open in the workspace of the train split: its definitions' index
    and its draft corpus (the train split's files)."""

    corpus: DraftCorpus | None = None

    def draft_corpus(self) -> DraftCorpus | None:
        return self.corpus


def train_sources(files: Sequence[RepoFile]) -> RepoSources:
    """The train split as the language server's workspace: definitions and draft corpus."""
    corpus = DraftCorpus()
    for file in files:
        corpus.put(uri_of(file.path), file.text)
    return RepoSources("", "", train_index(files), corpus=corpus)


@contextmanager
def opened(workspace: RepoSources, hole: fim.Hole) -> Iterator[RepoSources]:
    """The sources of one completion: the train split's index plus the held-out document as it
    stands with the hole, open; its definitions leave the index afterwards."""
    text = hole.prefix + hole.suffix
    document = hole.document
    found = definitions(document.tree, document.text, hole.uri) if document and document.tree else []
    index = workspace.index
    index.update(hole.uri, found)
    try:
        yield RepoSources(hole.uri, text, index, corpus=workspace.corpus)
    finally:
        index.remove(hole.uri)


def settings_for(lines: int, snippets: bool, drafts: bool = False) -> Settings:
    """The completion settings of a hole of `lines` lines: its shape as the mode, the server's
    snippet budget or none, and drafts from the repository or none."""
    mode = Mode.SINGLE_LINE if lines == 1 else Mode.MULTI_LINE
    return Settings(mode=mode, snippet_tokens=DEFAULT_SNIPPET_TOKENS if snippets else 0, drafts=drafts)


@dataclass(slots=True)
class Model:
    """A model under test, whether its own config says it was trained with snippets, and whether
    its canvas gets them here (not without a snippet token: a public family's tokenizer)."""

    name: str
    path: Path
    runner: ModelRunner
    trained_with_snippets: bool
    snippets_in_canvas: bool


def load_model(name: str, path: Path) -> Model:
    """The model in `path`, set to lay snippets into its canvas where its tokenizer can (a job
    without snippets is laid out as before)."""
    runner = ModelRunner(path, prefix_cache_bytes=0)  # every job a cold canvas: no kept keys/values
    trained = bool(runner.model.cfg.snippet_context)
    runner.model.cfg.snippet_context = runner.tok.snippet_id is not None
    return Model(name, path, runner, trained, runner.model.cfg.snippet_context)


def answer(runner: ModelRunner, planned: fim.Plan, settings: Settings, decoder: dict) -> Answer:
    """The plan's one request decoded by `runner` with `decoder`, post-processed as the product does."""
    request = planned.requests[0]
    job = dataclasses.replace(job_of(request), decoder=decoder)
    started = time.perf_counter()
    [completion] = runner.complete(job, None)
    decode_ms = (time.perf_counter() - started) * 1e3
    item = Item(completion.text, completion.confidence, completion.forward_passes)
    result = Result(request.id, [item], Timings(0.0, 0.0, decode_ms, decode_ms), completion.stop_reason)
    texts = fim.finish(planned, [result], settings)
    return Answer(texts[0] if texts else "", decode_ms, completion.forward_passes,
                  len(runner.tok.encode(completion.text)), bool(request.draft))


def draft_answer(planned: fim.Plan, settings: Settings, lookup_ms: float) -> Answer:
    """The drafts-alone side: the plan's draft, post-processed as an answer is; empty without one."""
    if planned.draft is None:
        return Answer("", lookup_ms, 0, 0)
    item = Item(planned.draft.text, 1.0, 0)
    result = Result(planned.requests[0].id, [item], Timings(0.0, 0.0, 0.0, 0.0), "done")
    texts = fim.finish(planned, [result], settings)
    return Answer(texts[0] if texts else "", lookup_ms, 0, 0, True)


def verifies(side: str, verify: str) -> bool:
    """Whether `side`'s holes are decoded again with the `verify` rule under the --verify choice."""
    return verify == "all" or (verify == "snippets" and side.endswith(WITH_SNIPPETS))


def side_settings(plain: bool) -> tuple[tuple[bool, bool], ...]:
    """(snippets, drafts) of the sides asked: without snippets (if `plain`), with them, with
    snippets and drafts."""
    return ((False, False),) * plain + ((True, False), (True, True))


def run_hole(hole: RepoHole, models: Sequence[Model], sources: RepoSources, verify: str, plain: bool = True) -> None:
    """Every side's answer to one hole (and the `verify` rule's where asked). A hole with no
    draft asks the drafted side the very request of the side with snippets alone, whose answer
    it takes (decoding is deterministic); the drafts alone answer nothing there."""
    asked = fim.hole_in_text(uri_of(hole.path), hole.prefix, hole.suffix)
    with opened(sources, asked) as hole_sources:
        for snippets, drafts in side_settings(plain):
            settings = settings_for(hole.lines, snippets, drafts)
            started = time.perf_counter()
            planned = fim.plan(asked, settings, hole_sources, uuid.uuid4().hex, invoked=True, decoders=({},))
            plan_ms = (time.perf_counter() - started) * 1e3
            for model in models:
                side = model.name + (WITH_SNIPPETS if snippets else "") + (WITH_DRAFTS if drafts else "")
                if drafts and planned.draft is None:
                    hole.answers[side] = hole.answers[model.name + WITH_SNIPPETS]
                    continue
                hole.answers[side] = answer(model.runner, planned, settings, {})
                if verifies(side, verify):
                    hole.verified[side] = answer(model.runner, planned, settings, VERIFY)
            if drafts:
                hole.answers[DRAFTS] = draft_answer(planned, settings, plan_ms)


def run_holes(holes: Sequence[RepoHole], models: Sequence[Model], sources: RepoSources, verify: str,
              plain: bool = True) -> None:
    for number, hole in enumerate(holes, 1):
        run_hole(hole, models, sources, verify, plain)
        if number % PROGRESS_EVERY == 0 or number == len(holes):
            logger.info("holes %d/%d done", number, len(holes))


def _rounded(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def mean_score(scores: Sequence[float]) -> float | None:
    return round(fmean(scores), 4) if scores else None


def answer_figures(pairs: Sequence[tuple[RepoHole, Answer]]) -> dict:
    """Scores and speed of some answers, each beside its hole; null scores for none."""
    times = [a.decode_ms for _, a in pairs]
    passes, tokens = sum(a.passes for _, a in pairs), sum(a.tokens for _, a in pairs)
    return {"tasks": len(pairs),
            "exact_match": mean_score([exact_match(a.text, h.expected) for h, a in pairs]),
            "edit_similarity": mean_score([edit_similarity(a.text, h.expected) for h, a in pairs]),
            "p50_ms": _rounded(percentile(times, 50), 1), "p95_ms": _rounded(percentile(times, 95), 1),
            "forward_passes": passes, "tokens": tokens,
            "tokens_per_pass": _rounded(tokens / passes, 3) if passes else None, **draft_figures(pairs)}


def draft_figures(pairs: Sequence[tuple[RepoHole, Answer]]) -> dict:
    """How many holes got an answer, how many answers came from a draft (its request carried
    one) and how often those were exact, and forward passes per answer."""
    answered = [(h, a) for h, a in pairs if a.text.strip()]
    drafted = [(h, a) for h, a in answered if a.drafted]
    return {"answered": mean_score([1.0 if a.text.strip() else 0.0 for _, a in pairs]),
            "drafted_answers": len(drafted),
            "drafted_share": mean_score([1.0 if a.drafted else 0.0 for _, a in answered]),
            "drafted_exact_match": mean_score([exact_match(a.text, h.expected) for h, a in drafted]),
            "drafted_edit_similarity": mean_score([edit_similarity(a.text, h.expected) for h, a in drafted]),
            "passes_per_answer": _rounded(sum(a.passes for _, a in answered) / len(answered), 3) if answered else None}


def hole_groups(holes: Sequence[RepoHole]) -> dict[str, list[RepoHole]]:
    """The holes of each of GROUPS."""
    return dict(zip(GROUPS, (list(holes), [h for h in holes if h.lines == 1],
                             [h for h in holes if h.lines == BLOCK_LINES], [h for h in holes if h.cross_file])))


def side_figures(holes: Sequence[RepoHole], side: str) -> dict:
    """One side's figures per group of holes, and its `verify` decoding's over every hole."""
    figures = {name: answer_figures([(h, h.answers[side]) for h in group])
               for name, group in hole_groups(holes).items()}
    verified = [(h, h.verified[side]) for h in holes if side in h.verified]
    figures["verify"] = answer_figures(verified) if verified else None
    return figures


def summarize(holes: Sequence[RepoHole], meta: dict) -> dict:
    """The run's JSON object: `meta`, the hole counts, every side's figures."""
    groups = hole_groups(holes)
    return {**meta, "tasks": len(holes), "single_line_tasks": len(groups["single_line"]),
            "three_line_tasks": len(groups["three_line"]), "cross_file_tasks": len(groups["cross_file"]),
            "pass_at_1": None, "pass_at_1_reason": PASS_AT_1_REASON,
            "sides": {side: side_figures(holes, side) for side in sides_in(holes)}}


def sides_in(holes: Sequence[RepoHole]) -> list[str]:
    """The sides every hole was answered on, in the order they answered."""
    return list(holes[0].answers) if holes else []


def _pair(figures: dict | None, first: str, second: str) -> str:
    if figures is None or figures[first] is None:
        return "-"
    return f"{figures[first]}/{figures[second]}"


def run_lines(summary: dict) -> list[str]:
    """The split, the holes and each model, one line each."""
    split = summary["split"]
    holes = (f"{summary['tasks']} holes ({summary['single_line_tasks']} lines, {summary['three_line_tasks']} "
             f"blocks, {summary['cross_file_tasks']} cross-file)")
    repo = (f"repo {summary['repo']}: {split['held_out_count']} files held out, {split['train_count']} "
            f"trained (seed {split['seed']}); {holes}")
    said = {True: "yes", False: "no"}
    return [repo] + [f"{name}: {m['path']} (trained with snippets: {said[m['trained_with_snippets']]}; "
                     f"snippets laid in its canvas here: {said[m['snippets_in_canvas']]})"
                     for name, m in summary["models"].items()]


def side_row(side: str, figures: dict) -> tuple[str, ...]:
    """exact/similarity per group, then the overall latency and tokens per pass (default, verify)."""
    verify, overall = figures["verify"], figures["overall"]
    return (side, *(_pair(figures[g], "exact_match", "edit_similarity") for g in GROUPS),
            _pair(overall, "p50_ms", "p95_ms"), str(overall["tokens_per_pass"]),
            "-" if verify is None else str(verify["tokens_per_pass"]), str(overall["answered"]),
            _pair(overall, "drafted_share", "drafted_exact_match"), str(overall["passes_per_answer"]))


def format_table(summary: dict) -> str:
    """The run's lines, then one row per side; '-' where a figure does not apply."""
    rows = [("side", "exact/sim", "line", "block", "cross-file", "p50/p95 ms", "tok/pass", "verify tok/pass",
             "answered", "drafted/exact", "passes/answer")]
    rows += [side_row(side, figures) for side, figures in summary["sides"].items()]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    table = ["  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths)))
             for row in rows]
    return "\n".join(run_lines(summary) + table[:1] + ["-" * len(table[0])] + table[1:])


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.repo", description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, required=True, help="the repository's root folder")
    parser.add_argument("--held-out", type=float, default=0.25,
                        help="share of the files held out, in (0, 1) (default 0.25)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the split, the holes and adaptation (default 0)")
    parser.add_argument("--tasks", type=int, default=200, help="holes to cut in the held-out files (default 200)")
    parser.add_argument("--minutes", type=float, default=10.0,
                        help="adaptation's time budget (default 10; 0: no adaptation, the base model's sides only)")
    parser.add_argument("--steps", type=int, default=0,
                        help="adaptation's step budget as well, for runs a busy machine must not "
                             "move (default 0: none)")
    parser.add_argument("--base", type=Path, default=None,
                        help="the base model folder (default: the bundled model; INFILL_MODEL overrides it)")
    parser.add_argument("--adapted", type=Path, default=None,
                        help="an adapted model folder to test instead of adapting the base here")
    parser.add_argument("--out", type=Path, default=None,
                        help="where adaptation writes its model (default: work/bench_repo/REPO-seedS)")
    parser.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                        help="leave out the files this gitignore-style glob matches, repeatable")
    parser.add_argument("--verify", choices=VERIFY_CHOICES, default="snippets",
                        help="sides whose holes are decoded again with the verify rule (default: the "
                             "with-snippets sides)")
    parser.add_argument("--plain", action=argparse.BooleanOptionalAction, default=True,
                        help="also the sides without snippets (default; --no-plain: the sides with snippets, "
                             "with drafts and the drafts alone)")
    parser.add_argument("--threads", type=int, default=2, help="torch threads, and adaptation's (default 2)")
    parser.add_argument("--json", action="store_true", help="end with one JSON line of every figure")
    return parser


def check_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Every flag's value; errors say which flag to change (exit 2)."""
    if not 0.0 < args.held_out < 1.0:
        parser.error(f"--held-out must lie in (0, 1), got {args.held_out}")
    for flag, value in (("--tasks", args.tasks), ("--threads", args.threads)):
        if value < 1:
            parser.error(f"{flag} must be at least 1, got {value}")
    if args.minutes < 0 or args.steps < 0:
        parser.error(f"--minutes and --steps must be at least 0, got {args.minutes} and {args.steps}")
    for flag, folder in (("--base", args.base), ("--adapted", args.adapted)):
        if folder is not None and not (folder / "config.json").is_file():
            parser.error(f"{flag} {folder} is not a model folder (no config.json in it)")


def split_of(parser: argparse.ArgumentParser, args: argparse.Namespace, base: Path) -> tuple[Split, dict]:
    """The repository's split of the files `infill adapt` would learn from with `base`, and what
    was skipped; a repository that cannot be split is an error."""
    try:
        gathered = gather(args.repo, args.exclude, source_languages(base))
    except RepoError as exc:
        parser.error(str(exc))
    split = split_files(gathered.files, args.held_out, args.seed)
    if not split.held_out or not split.train:
        parser.error(f"--held-out {args.held_out} of {len(gathered.files)} source file(s) leaves "
                     f"{len(split.held_out)} held out and {len(split.train)} to train on: each needs "
                     f"one (change --held-out, or give a repository with more files)")
    return split, dict(gathered.skipped)


def adapted_dir(args: argparse.Namespace, base: Path, split: Split) -> Path:
    """--adapted, or the base adapted here on the train split."""
    if args.adapted is not None:
        return args.adapted
    out = args.out or work_dir() / "bench_repo" / f"{args.repo.resolve().name}-seed{args.seed}"
    config = AdaptConfig(base=base, out=out, repo=args.repo, minutes=args.minutes, steps=args.steps,
                         exclude=tuple(args.exclude), seed=args.seed, threads=args.threads)
    return adapt(config, files=split.train)


def split_meta(split: Split, args: argparse.Namespace, skipped: dict) -> dict:
    return {"seed": args.seed, "held_out_share": args.held_out, "held_out_count": len(split.held_out),
            "train_count": len(split.train), "held_out_files": [f.path for f in split.held_out],
            "skipped": skipped}


def models_meta(models: Sequence[Model], args: argparse.Namespace) -> dict:
    meta = {m.name: {"path": str(m.path), "trained_with_snippets": m.trained_with_snippets,
                     "snippets_in_canvas": m.snippets_in_canvas} for m in models}
    if ADAPTED in meta:
        meta[ADAPTED]["adapted_here"] = args.adapted is None
        meta[ADAPTED]["adapt_minutes"] = None if args.adapted is not None else args.minutes
    return meta


def adapts(args: argparse.Namespace) -> bool:
    """Whether the run has an adapted model: given, or adapted here for --minutes > 0."""
    return args.adapted is not None or args.minutes > 0


def card_figures(summary: dict) -> dict:
    """What the adapted model's card keeps of a run: the split, the holes and each side's scores."""
    scores = {side: {group: {k: f[group][k] for k in ("tasks", "exact_match", "edit_similarity")}
                     for group in ("overall", "cross_file")} for side, f in summary["sides"].items()}
    keep = ("repo", "tasks", "cross_file_tasks", "command")
    return {**{k: summary[k] for k in keep}, "held_out_files": summary["split"]["held_out_files"],
            "seed": summary["split"]["seed"], "sides": scores}


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    check_args(parser, args)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(message)s")
    base = args.base or bundled_model_dir()
    split, skipped = split_of(parser, args, base)
    holes = cut_holes(split.held_out, args.tasks, args.seed)
    if not holes:
        parser.error(f"the held-out files have no line of {MIN_LINE_CHARS}+ characters to hide")
    sources = train_sources(split.train)
    mark_cross_file(holes, split.held_out, sources.index)
    torch.set_num_threads(args.threads)
    models = [load_model(BASE, base)]
    if adapts(args):
        models.append(load_model(ADAPTED, adapted_dir(args, base, split)))
    run_holes(holes, models, sources, args.verify, args.plain)
    meta = {"repo": args.repo.resolve().name, "split": split_meta(split, args, skipped),
            "models": models_meta(models, args), "verify": args.verify,
            "command": shlex.join(["python", "-m", "bench.repo", *argv])}
    summary = summarize(holes, meta)
    if adapts(args) and (args.adapted is None or (args.adapted / ADAPT_RECORD).is_file()):
        add_figures(models[1].path, card_figures(summary))
    print(format_table(summary))
    if args.json:
        print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
