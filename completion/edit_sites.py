"""A site of an edit by analogy (`Site`: characters of the text after the user's edit and their new
text), the bounds every rule that finds sites keeps, and the sites as byte replacements
(`completion.edit_drafts`' shape). Pure data and functions."""
from __future__ import annotations

from dataclasses import dataclass

MAX_SITES = 24  # sites one edit proposes at most
MAX_MATCHES = 2000  # occurrences looked at, whatever the text's size
MAX_SCORED = 400  # of those, scored by how alike their line is: the nearest the edit
MAX_LINE_CHARS = 400  # a longer line is no event's line and no site's


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


def byte_replacements(text: str, found: list[Site]) -> list[tuple[int, int, tuple[str, ...]]]:
    """The sites as (start byte, end byte, (new text,)) of `text`'s UTF-8 bytes, in text order."""
    replacements = []
    for site in sorted(found, key=lambda s: s.start):
        start = len(text[:site.start].encode("utf-8", "surrogatepass"))
        end = start + len(text[site.start:site.end].encode("utf-8", "surrogatepass"))
        replacements.append((start, end, (site.new,)))
    return replacements
