"""A docstring's summary put in the imperative mood, carried to the file's other docstrings.

pydocstyle's D401 (ruff's too) asks a docstring's first line to command, not describe: `Returns the
body.` -> `Return the body.` A project that adopts the check rewrites every summary of a file at
once, each with its own verb. `mood_fixed` reads a rewrite that took the third person's ending off a
docstring's first word (`Returns` -> `Return`, `Matches` -> `Match`, `Applies` -> `Apply`), and
`mood_sites` proposes the same at the other functions' docstrings whose first word is a verb in the
third person: a word of English (`completion.english`) once its ending is off, followed by what a verb
takes (`MOOD_OBJECTS`: `Formats an ETag`, `Determines whether`), so that a plural noun keeps its `s`
(`Tests for the parser`, `Errors raised by`). Work is bounded: the first `MAX_MATCHES` places are
read. Pure.
"""
from __future__ import annotations

import re

from completion.definitions import DEFINITION_TYPES
from completion.edit_events import EditEvent
from completion.edit_sites import Site, matches_off_event, nearest_sites
from completion.english import english
from completion.positions import line_starts
from completion.syntax import ParsedDocument, enclosing_at
from completion.tree_names import FUNCTION_TYPES

MOOD_OBJECTS = frozenset({"a", "an", "the", "this", "its", "their", "all", "any", "each", "every", "whether", "if",
                          "true", "false", "none", "one", "some", "given", "current", "new"})
_OPENING = r"^[ \t]*[rRuUbB]{0,2}(?:\"\"\"|''')"  # a docstring's opening quotes, first on their line
_SUMMARY = re.compile(_OPENING + r"([A-Z][a-z]+)[ \t]+([A-Za-z]+)", re.MULTILINE)  # a first word (group 1), the next
_OPENED = re.compile(_OPENING + "$")


def imperative(word: str) -> str | None:
    """`word` (capitalized) without the third person's ending when that leaves a word of English:
    `Returns` -> `Return`, `Matches` -> `Match`, `Applies` -> `Apply`, `Does` -> `Do`; None for a word
    with no such ending (`Process`, `Access`) or none left (`Is`)."""
    stems = []
    if word.endswith("s") and not word.endswith("ss"):
        stems.append(word[:-1])
    if word.endswith("es"):
        stems.append(word[:-2])
    if word.endswith("ies"):
        stems.append(word[:-3] + "y")
    return next((stem for stem in stems if len(stem) >= 2 and english(stem)), None)


def mood_fixed(removed: str, inserted: str, left: str) -> bool:
    """True when the rewrite (`removed` -> `inserted` after `left`) put a docstring's first word in
    the imperative (`imperative(removed) == inserted`, right after the opening quotes)."""
    return _OPENED.fullmatch(left) is not None and imperative(removed) == inserted


def mood_sites(line: int, event: EditEvent, document: ParsedDocument) -> list[Site]:
    """The other functions' docstrings of the event's text after (off its lines; none without a tree)
    whose first word is a verb in the third person (`imperative`) followed by one of `MOOD_OBJECTS`,
    each made imperative, nearest `line` first. A class's docstring describes what it is (`Represents a
    parsed header`): D401 reads functions' only."""
    enclosing = enclosing_at(document, DEFINITION_TYPES)
    if enclosing is None:
        return []
    text, found = event.after, []
    for match, at, _ in matches_off_event(_SUMMARY, text, line_starts(text), event):
        verb = imperative(match.group(1))
        if verb is None or match.group(2).lower() not in MOOD_OBJECTS:
            continue
        owner = enclosing(match.start(1))
        if owner is not None and owner.type in FUNCTION_TYPES:
            found.append(Site(match.start(1), match.end(1), verb, at, 1.0))
    return nearest_sites(found, line)
