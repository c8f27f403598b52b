"""Edits by analogy of a line's exact copies: the user's change to one line, carried to the other
lines that stood the same, under any indent.

A line repeated word for word (`handler = c._structure_func.dispatch(type)` in three branches,
`.. versionadded:: 1.0` under several methods, `with pytest.raises(Exception):` twice in a test) is
one thing written several times: on the tuning commits, of the edited lines with such copies whose
commit changed more of the file, the copies were changed alike in most, whatever the rules for the
change's kind say (a local renamed in its scope, a keyword, a literal). `copy_sites` finds them;
`completion.edit_analogy` decides which changes go to them (`copied`). A copy must hold
`MIN_COPY_CHARS` characters of text: a short line (`self._meta,`, `return x`) repeats by chance.
Everything here is pure.
"""
from __future__ import annotations

import bisect
import itertools
import re

from completion.edit_events import EditEvent
from completion.edit_sites import MAX_LINE_CHARS, MAX_MATCHES, MAX_SITES, Site
from completion.postprocess import indent_of

MIN_COPY_CHARS = 20  # a line's text (without its indent) at least this long to be carried to its copies


def copy_sites(line_before: str, column: int, removed: str, inserted: str, text: str,
               event: EditEvent, starts: list[int]) -> list[Site]:
    """The places of `text` (the text after `event`, its lines starting at `starts`) outside the
    event's lines where the edited line stood as it did before the change (`line_before`, its change
    at `column`, `removed` made `inserted`) under any indent: each gets the same change at the same
    place in its text. Every site scores 1; the `MAX_SITES` nearest the edit, among the first
    `MAX_MATCHES` places that hold the line's text."""
    indent = indent_of(line_before)
    key = line_before[len(indent):].rstrip()
    if len(key) < MIN_COPY_CHARS or len(line_before) > MAX_LINE_CHARS or column < len(indent):
        return []
    at_key = column - len(indent)  # where the change stands in the line's text
    found: list[Site] = []
    for place in itertools.islice(re.finditer(re.escape(key), text), MAX_MATCHES):
        line = bisect.bisect_right(starts, place.start()) - 1
        if event.start_line <= line < event.after_end:
            continue
        line_text = text[starts[line]:starts[line + 1]].rstrip("\r\n")
        own_indent = indent_of(line_text)
        if place.start() == starts[line] + len(own_indent) and line_text[len(own_indent):].rstrip() == key:
            start = place.start() + at_key
            found.append(Site(start, start + len(removed), inserted, line, 1.0))
    return sorted(found, key=lambda site: abs(site.line - event.start_line))[:MAX_SITES]
