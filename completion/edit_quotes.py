"""A Python string over several lines whose quotes the user spelled anew at one end (`'''` ->
`\"\"\"`): its other end follows.

Until both ends match, the document does not parse, so no other rule may run (`next_edit.gate`);
this is the one next edit such a document gets. The string is read off the text before the event,
where it stood whole: the event changed one line, and only three quotes of it for the other three,
at one end of a string that ends on another line. Pure functions of the event.
"""
from __future__ import annotations

from tree_sitter import Node

from completion.edit_events import EditEvent, common_ends
from completion.edit_sites import Site
from completion.node_lines import first_line
from completion.positions import line_starts
from completion.syntax import ParsedDocument, encode

TRIPLE_QUOTES = ("'''", '"""')


def other_end(event: EditEvent, language: str) -> Site | None:
    """The site that spells the other end of the event's string as the user spelled one end; None
    when the event did something else, or the string ends on the event's line."""
    if language != "python" or not (event.before_end == event.after_end == event.start_line + 1):
        return None
    removed, inserted = event.removed, event.inserted
    head, tail = common_ends(removed, inserted)
    old, new = removed[head:len(removed) - tail], inserted[head:len(inserted) - tail]
    if {old, new} != set(TRIPLE_QUOTES):
        return None
    at = line_starts(event.before)[event.start_line] + head  # the quotes' offset, before and after alike
    before = ParsedDocument.parse(language, event.before)
    if before.tree is None:
        return None
    end = _other_quotes(before, len(encode(event.before[:at])))
    if end is None or not end.text.endswith(old.encode()) or first_line(before, end) == event.start_line:
        return None
    start = len(encode(event.before)[:end.end_byte - 3].decode("utf-8", "surrogatepass"))
    return Site(start, start + 3, new, first_line(before, end), 1.0)


def _other_quotes(document: ParsedDocument, at: int) -> Node | None:
    """The node of the other end of the string one of whose ends has its quotes at byte `at`
    (`string_start`, with any prefix before its quotes, or `string_end`); None when none does."""
    node = document.tree.root_node.descendant_for_byte_range(at, at + 3)
    string = None if node is None else node.parent
    if string is None or string.type != "string":
        return None
    ends = {child.type: child for child in string.children if child.type in ("string_start", "string_end")}
    if node.type == "string_start" and node.end_byte == at + 3:
        return ends.get("string_end")
    if node.type == "string_end" and node.start_byte == at:
        return ends.get("string_start")
    return None
