"""A site of an edit by analogy (`Site`: characters of the text after the user's edit and their new
text), the bounds every rule that finds sites keeps, how alike a site's line is to the edited one
(`alike`), the matches of a site's pattern off the edit (`matches_off_event`) and the sites they make
(`matched_sites`), and the sites as byte
replacements (`completion.edit_drafts`' shape). Pure data and functions."""
from __future__ import annotations

import bisect
import difflib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from completion.edit_events import EditEvent
from completion.positions import line_starts

MAX_SITES = 24  # sites one edit proposes at most
MAX_MATCHES = 2000  # occurrences looked at, whatever the text's size
MAX_SCORED = 400  # of those, scored by how alike their line is: the nearest the edit
MAX_LINE_CHARS = 400  # a longer line is no event's line and no site's
TOKEN = re.compile(r"""[^\W\d]\w*|\d[\w.]*|"[^"\n]*"|'[^'\n]*'|\S""")  # a name, a number, a one-line string, a mark
_PROSE_TOKEN = re.compile(r"\w+|\S")


@dataclass(frozen=True, slots=True)
class Site:
    """Characters `start .. end - 1` of the text become `new`; `score` says how alike its line is,
    `needed` the score the fixed cut asked of it (`min_score`)."""

    start: int
    end: int
    new: str
    line: int
    score: float
    needed: float = 0.0
    lines: int = 1  # lines of the text it spans from `line` on (a block's, `block_sites`)


def shape(line: str) -> list[str]:
    """The line's tokens, each string as `"s"` and each number as `0`."""
    return ['"s"' if token[0] in "\"'" else "0" if token[0].isdigit() else token for token in TOKEN.findall(line)]


def alike(a: str, b: str, prose: bool = False) -> float:
    """The share of the two lines' shaped tokens that a diff keeps (1.0: the same shape); for
    `prose` (a change in a string or a comment) their words and marks as they are."""
    tokens = _PROSE_TOKEN.findall if prose else shape
    return difflib.SequenceMatcher(None, tokens(a), tokens(b), autojunk=False).ratio()


def byte_replacements(text: str, found: list[Site]) -> list[tuple[int, int, tuple[str, ...]]]:
    """The sites as (start byte, end byte, (new text,)) of `text`'s UTF-8 bytes, in text order."""
    replacements = []
    for site in sorted(found, key=lambda s: s.start):
        start = len(text[:site.start].encode("utf-8", "surrogatepass"))
        end = start + len(text[site.start:site.end].encode("utf-8", "surrogatepass"))
        replacements.append((start, end, (site.new,)))
    return replacements


def nearest_sites(found: list[Site], line: int) -> list[Site]:
    """The `MAX_SITES` sites of `found` nearest `line`, nearest first (ties in their order)."""
    return sorted(found, key=lambda site: abs(site.line - line))[:MAX_SITES]


def matches_off_event(pattern: re.Pattern, text: str, starts: list[int],
                      event: EditEvent) -> Iterator[tuple[re.Match, int, str]]:
    """(match, its line, that line's text) for the pattern's first `MAX_MATCHES` matches in `text`
    (lines starting at `starts`; group 1 is what is replaced) outside the event's lines and on
    lines of `MAX_LINE_CHARS` at most."""
    for count, match in enumerate(pattern.finditer(text)):
        if count == MAX_MATCHES:
            return
        line = bisect.bisect_right(starts, match.start(1)) - 1
        if not event.start_line <= line < event.after_end and starts[line + 1] - starts[line] <= MAX_LINE_CHARS:
            yield match, line, text[starts[line]:starts[line + 1]].rstrip("\r\n")


def matched_sites(pattern: re.Pattern, new: str, line: int, event: EditEvent,
                  keep: Callable[[int], bool] | None = None) -> list[Site]:
    """The matches of `pattern` in the text after `event` (`matches_off_event`; group 1 is replaced)
    whose start `keep` keeps (all without one), each made `new` and scoring 1: the `MAX_SITES` nearest
    `line`, nearest first."""
    text = event.after
    found = [Site(match.start(1), match.end(1), new, at, 1.0)
             for match, at, _ in matches_off_event(pattern, text, line_starts(text), event)
             if keep is None or keep(match.start(1))]
    return nearest_sites(found, line)
