"""A learned judge of the sites an edit is carried to by analogy: keep a site, or leave it be.

`completion.edit_analogy` finds the places that look like the user's edit and keeps those whose
line is alike enough by a fixed cut (`MIN_SCORE` and the rest, written by hand and tuned on a few
repositories). Here a logistic regression over a few dozen cheap features of each candidate site
(`FEATURES`: the kind of rewrite, the likeness and the cut, whether the site's line is the edited
line's twin, how many candidates there are, how far, how long the change is, in the same scope
and indentation, ...) says how likely the site is one of the user's real follow-ups; sites below
the judge's `threshold` are left out. The judge sees candidates down to its `floor` (below the
fixed cut too), so it may admit a site the cut refuses. Its weights were learned from real
commits replayed as next-edit tasks (`python -m bench.site_judge_fit`, which writes
`site_judge.json` beside this module) and are loaded by `load`. Everything but `load` is pure;
a request's features cost a pass over its candidates' lines.
"""
from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from completion.edit_analogy import analogy_sites, edit_in_prose, prose_at
from completion.edit_events import EditEvent
from completion.edit_patterns import memory_of
from completion.edit_rewrites import Rewrite, comment_dropped, rewrite_of
from completion.edit_sites import Site, shape
from completion.positions import line_starts
from completion.rewrite_kinds import spelled_alike
from completion.syntax import ParsedDocument

JUDGE_PATH = Path(__file__).with_name("site_judge.json")
SCOPE_LINES = 400  # lines walked up from a site to find its enclosing definition
_HEADER = re.compile(r"[ \t]*(?:async[ \t]+def|def|class)[ \t]")
_INDENT = re.compile(r"[ \t]*")
FEATURES = ("word_code", "word_prose", "pattern", "comment", "score", "margin", "cut_free", "above_cut",
            "twin_line", "log_candidates", "log_above", "rank", "log_distance", "removed_tokens",
            "inserted_tokens", "insertion", "deletion", "repeated", "scoped", "literal", "typo", "case_only",
            "inserted_known", "same_indent", "same_scope", "short_change")


@dataclass(frozen=True, slots=True)
class Candidate:
    """A site the edit could be carried to, and its features (`FEATURES`, in that order)."""

    site: Site
    features: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class SiteJudge:
    """A logistic regression over standardized features: p = sigmoid(w . (x - mean) / scale + bias);
    a site is kept at p >= `threshold`. `floor`: candidates below the fixed cut down to it are
    judged too (None: only the sites the cut keeps)."""

    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weights: tuple[float, ...]
    bias: float
    threshold: float
    floor: float | None = None

    def __post_init__(self) -> None:
        if not len(self.mean) == len(self.scale) == len(self.weights) == len(FEATURES):
            raise ValueError(f"a site judge needs {len(FEATURES)} means, scales and weights, one per feature")

    def probability(self, features: Sequence[float]) -> float:
        """How likely the site with these features is a real follow-up."""
        z = self.bias + sum(w * (x - m) / s for w, x, m, s in zip(self.weights, features, self.mean, self.scale))
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))

    def kept(self, candidates: Sequence[Candidate]) -> list[Site]:
        """The sites of the candidates the judge keeps, in their order."""
        return [c.site for c in candidates if self.probability(c.features) >= self.threshold]

    def to_json(self) -> dict:
        return {"features": list(FEATURES), "mean": list(self.mean), "scale": list(self.scale),
                "weights": list(self.weights), "bias": self.bias, "threshold": self.threshold, "floor": self.floor}

    @classmethod
    def from_json(cls, data: dict) -> SiteJudge:
        """The judge of a `to_json` object; ValueError when its features are not this module's."""
        if tuple(data.get("features", ())) != FEATURES:
            raise ValueError("the site judge's features differ from completion.site_judge.FEATURES: "
                             "rebuild it with python -m bench.site_judge_fit")
        return cls(tuple(data["mean"]), tuple(data["scale"]), tuple(data["weights"]), float(data["bias"]),
                   float(data["threshold"]), None if data.get("floor") is None else float(data["floor"]))


@cache
def load(path: Path = JUDGE_PATH) -> SiteJudge:
    """The judge stored at `path` (by default the one shipped beside this module)."""
    return SiteJudge.from_json(json.loads(path.read_text(encoding="utf-8")))


def candidates(event: EditEvent, events: Sequence[EditEvent], scoped: bool, literal: bool,
               document: ParsedDocument, floor: float | None) -> list[Candidate]:
    """The analogy sites of `event` down to `floor` (`completion.edit_analogy.analogy_sites`, read
    with the document's `events` as `completion.edit_patterns.pattern_sites` reads them), each
    with its features; none for a refused pattern."""
    memory = memory_of(event, events)
    rewrite = rewrite_of(event)
    if memory.refused or rewrite is None:
        return []
    found = analogy_sites(event, scoped, literal, document, memory.repeats > 0, floor)
    if not found:
        return []
    in_prose = bool(edit_in_prose(rewrite, line_starts(event.after), prose_at(document)))
    lines = _lines(event.after)
    edit = edit_features(rewrite, found, lines, (memory.repeats > 0, scoped, literal, in_prose))
    return [Candidate(site, site_features(rewrite, site, found, lines, edit)) for site in found]


def edit_features(rewrite: Rewrite, found: Sequence[Site], lines: Sequence[str],
                  flags: tuple[bool, bool, bool, bool]) -> tuple[float, ...]:
    """The features the candidates of one edit share (`FEATURES` but the site's own, in order);
    `flags`: (the rewrite repeated, its word scoped, the literal rule owns it, edited in prose)."""
    repeated, scoped, literal, in_prose = flags
    comment = comment_dropped(rewrite)
    word, pattern = rewrite.word and not comment, not rewrite.word and not comment
    above = sum(s.score >= s.needed for s in found)
    return tuple(float(value) for value in (
        word and not in_prose, word and in_prose, pattern, comment, math.log1p(len(found)), math.log1p(above),
        math.log1p(len(shape(rewrite.removed))), math.log1p(len(shape(rewrite.inserted))),
        not rewrite.removed, not rewrite.inserted, repeated, scoped, literal,
        rewrite.word and spelled_alike(rewrite.removed, rewrite.inserted),
        rewrite.word and rewrite.removed.lower() == rewrite.inserted.lower(),
        _known_elsewhere(rewrite, lines), len(rewrite.removed.strip()) + len(rewrite.inserted.strip()) <= 2,
        _scope(lines, rewrite.line)))


def site_features(rewrite: Rewrite, site: Site, found: Sequence[Site], lines: Sequence[str],
                  edit: tuple[float, ...]) -> tuple[float, ...]:
    """The features of `site` among the candidates `found` for `rewrite` in the text after the
    edit (its `lines`), with the edit's own (`edit_features`), in `FEATURES` order."""
    (word_code, word_prose, pattern, comment, log_candidates, log_above, removed_tokens, inserted_tokens,
     insertion, deletion, repeated, scoped, literal, is_typo, case_only, known, short, edit_scope) = edit
    rank = sum(other.score > site.score for other in found) / len(found)
    return (word_code, word_prose, pattern, comment, site.score, site.score - site.needed,
            float(site.needed == 0.0), float(site.score >= site.needed),
            float(lines[site.line].strip() == rewrite.line_before.strip()),
            log_candidates, log_above, rank, math.log1p(abs(site.line - rewrite.line)), removed_tokens,
            inserted_tokens, insertion, deletion, repeated, scoped, literal, is_typo, case_only, known,
            float(_indent(lines[site.line]) == _indent(rewrite.line_before)),
            float(_scope(lines, site.line) == edit_scope), short)


def _lines(text: str) -> list[str]:
    """The text's lines as `line_starts` counts them (an empty last line included)."""
    starts = line_starts(text)
    return [text[a:b].rstrip("\r\n") for a, b in zip(starts, starts[1:])]


def _known_elsewhere(rewrite: Rewrite, lines: Sequence[str]) -> bool:
    """True when the inserted text (stripped; none for a deletion) stands on another line than the edited one."""
    inserted = rewrite.inserted.strip()
    return bool(inserted) and any(inserted in line for index, line in enumerate(lines) if index != rewrite.line)


def _indent(line: str) -> str:
    return _INDENT.match(line).group()


def _scope(lines: Sequence[str], line: int) -> int:
    """The line of the nearest definition header above `line` indented less than it (-1: none
    within `SCOPE_LINES`, the module)."""
    width = len(_indent(lines[line]))
    for index in range(line - 1, max(-1, line - SCOPE_LINES - 1), -1):
        if _HEADER.match(lines[index]) and len(_indent(lines[index])) < width:
            return index
    return -1
