"""A string made raw, carried to the file's other strings like it: for an invalid escape sequence,
or as a regex a call takes.

pycodestyle flags a backslash that starts no escape Python knows (W605: `\\*` in `:param \\*\\*kwargs:`,
`\\d` in a regex) and the fix is a raw string. A user who makes one docstring raw for it usually
makes the file's others raw too: `made_raw` reads a rewrite that put `r` before a string's quote,
and `raw_sites`, when that string holds an invalid escape, proposes `r` before every other string
of the text with no prefix that holds one (not one with a prefix: `b"\\d"`, `f"{x}\\d"` are other
fixes). A string with no such escape made raw where a call takes a regex (`match=` of
`pytest.raises(`, ruff's RUF043; the pattern of `re.compile(`) goes to the strings the same callee
takes in the same place (`regex_sites`): those that hold a regex's marks when it held some, else all,
never one with a backslash (`"\\b"` raw is another regex). Work is bounded: the first `MAX_MATCHES`
invalid escapes, or calls of the callee, are looked at. Pure.
"""
from __future__ import annotations

import bisect
import itertools
import re

from tree_sitter import Node

from completion.edit_events import EditEvent
from completion.edit_sites import MAX_MATCHES, Site, nearest_sites
from completion.positions import line_starts
from completion.syntax import ParsedDocument, byte_offsets, enclosing_at, point_offset

STRING_NODES = frozenset({"string"})  # Python's string literal, its prefix and quotes included
_INVALID = re.compile(r"(?<!\\)(?:\\\\)*(\\[^\n\\'\"abfnrtv0-7xNuU])")  # group 1: a backslash that escapes nothing
_PREFIX = re.compile(r"[A-Za-z]*")  # a string's prefix, before its first quote
_REGEX_MARKS = re.compile(r"[.^$*+?()\[\]{}|]")  # what a regex reads as more than itself (RUF043)


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
        at = point_offset(text, starts, string.start_point)
        number = bisect.bisect_right(starts, at) - 1
        if not event.start_line <= number < event.after_end:
            found.append(Site(at, at, "r", number, 1.0))
    return nearest_sites(found, line)


def regex_sites(line: int, column: int, event: EditEvent, document: ParsedDocument) -> list[Site] | None:
    """For a string made raw at (`line`, `column`) of the text after `event` (`made_raw`) where a call
    takes it (`_slot`: `match=` of `pytest.raises(`, the first argument of `re.compile(`): the strings
    with no prefix and no backslash that the calls of the same callee take there, each made raw,
    nearest first, `MAX_SITES` at most; only those that hold a regex's marks (`_REGEX_MARKS`) when the
    string made raw holds some. None when the string stands in no call's slot, or the text is no Python."""
    string_at = enclosing_at(document, STRING_NODES) if document.language == "python" else None
    starts = line_starts(event.after)
    edited = string_at(starts[line] + column) if string_at is not None else None
    slot = _slot(edited) if edited is not None else None
    if slot is None:
        return None
    callee, place = slot
    marked = _REGEX_MARKS.search(_body(edited)) is not None
    text, byte_at, found = event.after, byte_offsets(event.after), []
    for call in itertools.islice(re.finditer(re.escape(callee) + r"\s*(\()", text), MAX_MATCHES):
        byte = byte_at(call.start(1))
        arguments = document.tree.root_node.descendant_for_byte_range(byte, byte + 1).parent
        string = _taken(arguments, callee, place)
        if string is None or string.start_byte == edited.start_byte or "\\" in _text(string) \
                or _PREFIX.match(_text(string)).group() or (marked and not _REGEX_MARKS.search(_body(string))):
            continue
        at = point_offset(text, starts, string.start_point)
        number = bisect.bisect_right(starts, at) - 1
        if not event.start_line <= number < event.after_end:
            found.append(Site(at, at, "r", number, 1.0))
    return nearest_sites(found, line)


def _slot(string: Node) -> tuple[str, str | int] | None:
    """(the callee's text, the keyword or 0 for the first argument) of the call that takes `string`,
    or None where no call takes it."""
    parent = string.parent
    if parent is None:
        return None
    if parent.type == "keyword_argument" and parent.child_by_field_name("value") == string:
        name = parent.child_by_field_name("name")
        arguments, place = parent.parent, None if name is None else _text(name)
    else:
        arguments, place = parent, 0 if parent.named_children[:1] == [string] else None
    callee = _callee(arguments)
    return None if callee is None or place is None else (callee, place)


def _taken(arguments: Node | None, callee: str, place: str | int) -> Node | None:
    """The string that `arguments`, the argument list of a call of `callee`, hold at `place`, or None."""
    if _callee(arguments) != callee:
        return None
    for index, argument in enumerate(arguments.named_children):
        if place == index == 0 and argument.type == "string":
            return argument
        name = argument.child_by_field_name("name") if argument.type == "keyword_argument" else None
        if name is not None and _text(name) == place:
            value = argument.child_by_field_name("value")
            return value if value is not None and value.type == "string" else None
    return None


def _callee(arguments: Node | None) -> str | None:
    """The callee's text of the call whose argument list is `arguments`, or None when they are none."""
    call = arguments.parent if arguments is not None and arguments.type == "argument_list" else None
    function = call.child_by_field_name("function") if call is not None and call.type == "call" else None
    return None if function is None else _text(function)


def _text(string: Node) -> str:
    return (string.text or b"").decode("utf-8", errors="replace")


def _body(string: Node) -> str:
    """The string's text after its prefix (its quotes and what they hold)."""
    text = _text(string)
    return text[_PREFIX.match(text).end():]
