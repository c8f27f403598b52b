"""Two words of prose joined into one, carried to the file's other places where they stand apart.

A writer who mends `in to` into `into` (or `can not` into `cannot`, `any more` into `anymore`) in one
docstring mends the file's other sentences that split the same word: the rewrite took out the one
space between two words, and the word they make is a word of English, as each of them is
(`completion.english`; not two names run together). `words_joined` reads such a rewrite and
`apart_sites` proposes the same join wherever the two words stand side by side, one space apart, in a
string or a comment (never in code). Work is bounded: the first `MAX_MATCHES` places are read. Pure.
"""
from __future__ import annotations

import re
from collections.abc import Callable

from completion.edit_events import EditEvent
from completion.edit_sites import Site, matched_sites
from completion.english import english
from completion.positions import line_starts

_WORD_BEFORE = re.compile(r"(?<![\w.\-'])[A-Za-z]+$")  # a whole word of letters ending the text
_WORD_AFTER = re.compile(r"[A-Za-z]+(?![\w\-'])")  # a whole word of letters starting the text


def words_joined(removed: str, inserted: str, left: str, right: str) -> tuple[str, str] | None:
    """(the first word, the second) when the rewrite (`removed` -> `inserted` between `left` and
    `right`) took out the one space between two words of English that make one together (`in to` ->
    `into`); else None."""
    if removed != " " or inserted:
        return None
    first, second = _WORD_BEFORE.search(left), _WORD_AFTER.match(right)
    if first is None or second is None:
        return None
    words = first.group(), second.group()
    return words if english(words[0]) and english(words[1]) and english("".join(words)) else None


def apart_sites(first: str, second: str, line: int, column: int, event: EditEvent,
                prose: Callable[[int], bool] | None) -> list[Site] | None:
    """The other places of the text after `event` where `first` and `second` stand one space apart in
    a string or a comment (`prose`), each losing that space, nearest `line` first; None when the
    user's join, at `column` of `line`, stands in code or no tree says where prose is."""
    at = line_starts(event.after)[line] + column
    if prose is None or not (prose(at - 1) and prose(at)):
        return None
    pattern = re.compile(rf"(?<![\w.\-']){first}( ){second}(?![\w\-'])")
    return matched_sites(pattern, "", line, event, prose)
