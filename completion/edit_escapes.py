"""A string made raw for an invalid escape sequence, carried to the file's other strings that hold one.

pycodestyle flags a backslash that starts no escape Python knows (W605: `\\*` in `:param \\*\\*kwargs:`,
`\\d` in a regex) and the fix is a raw string. A user who makes one docstring raw for it usually
makes the file's others raw too: `made_raw` reads a rewrite that put `r` before a string's quote,
and `raw_sites`, when that string holds an invalid escape, proposes `r` before every other string
of the text with no prefix that holds one (not one with a prefix: `b"\\d"`, `f"{x}\\d"` are other
fixes). Work is bounded: the first `MAX_MATCHES` invalid escapes are looked at. Pure.
"""
from __future__ import annotations

import bisect
import itertools
import re

from tree_sitter import Node

from completion.edit_events import EditEvent
from completion.edit_sites import MAX_MATCHES, Site, nearest_sites
from completion.positions import line_starts
from completion.syntax import ParsedDocument, enclosing_at

STRING_NODES = frozenset({"string"})  # Python's string literal, its prefix and quotes included
_INVALID = re.compile(r"(?<!\\)(?:\\\\)*(\\[^\n\\'\"abfnrtv0-7xNuU])")  # group 1: a backslash that escapes nothing
_PREFIX = re.compile(r"[A-Za-z]*")  # a string's prefix, before its first quote


def made_raw(removed: str, inserted: str, left: str, right: str) -> bool:
    """True when the rewrite (`removed` -> `inserted` between `left` and `right`) put `r` before a
    string with no prefix: `\"\"\"Sends` -> `r\"\"\"Sends`."""
    return not removed and inserted in ("r", "R") and right[:1] in ("'", '"') \
        and not (left[-1:].isalnum() or left[-1:] == "_")


def raw_sites(line: int, column: int, event: EditEvent, document: ParsedDocument) -> list[Site] | None:
    """For a string made raw at (`line`, `column`) of the text after `event` (`made_raw`): the other
    strings of the text with no prefix that hold an invalid escape, each made raw, nearest first,
    `MAX_SITES` at most; None when the string made raw holds no invalid escape (another change) or the
    text is no Python."""
    if document.language != "python":
        return None  # W605 and raw strings are Python's
    string_at, text, starts = enclosing_at(document, STRING_NODES), event.after, line_starts(event.after)
    edited = enclosing_at(document, STRING_NODES)(starts[line] + column) if string_at is not None else None
    if edited is None or not _INVALID.search(_body(edited)):
        return None
    found, seen = [], {edited.start_byte}
    for match in itertools.islice(_INVALID.finditer(text), MAX_MATCHES):
        string = string_at(match.start(1))
        if string is None or string.start_byte in seen:
            continue
        seen.add(string.start_byte)
        if _PREFIX.match(_text(string)).group():
            continue  # prefixed: raw already, bytes or formatted
        at = _offset(text, starts, string)
        number = bisect.bisect_right(starts, at) - 1
        if not event.start_line <= number < event.after_end:
            found.append(Site(at, at, "r", number, 1.0))
    return nearest_sites(found, line)


def _text(string: Node) -> str:
    return (string.text or b"").decode("utf-8", errors="replace")


def _body(string: Node) -> str:
    """The string's text after its prefix (its quotes and what they hold)."""
    text = _text(string)
    return text[_PREFIX.match(text).end():]


def _offset(text: str, starts: list[int], node: Node) -> int:
    """The character offset in `text` (lines starting at `starts`) where `node` starts."""
    row, byte_column = node.start_point
    line = text[starts[row]:starts[row + 1]]
    return starts[row] + len(line.encode("utf-8")[:byte_column].decode("utf-8", errors="ignore"))
