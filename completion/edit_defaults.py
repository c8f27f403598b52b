"""A parameter's default put for another in a function's header, carried to where the function's own
docstring states that default.

`smoothing=0.3` made `smoothing=0.1` leaves `[default: 0.3]` in the docstring's entry for `smoothing`
wrong; people who change the one change the other in the same commit (tqdm's `smoothing` and
`leave`, falcon's ``(default ``True``)``). `default_changed` reads a rewrite inside the value of one
parameter's default in a Python function's header, and `default_mentions` proposes the new value where
the function's docstring says the old one is the default, in that parameter's entry only: its header
line (numpydoc's `smoothing : float`, Google's `smoothing (float):`, Sphinx's `:param smoothing:`)
and the lines indented under it. A docstring elsewhere (the class's, for `__init__`) is not read.
Pure.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from tree_sitter import Node

from completion.edit_events import EditEvent
from completion.edit_rewrites import Rewrite
from completion.edit_sites import Site
from completion.positions import line_starts
from completion.syntax import ParsedDocument, ancestors, byte_offsets
from completion.tree_names import node_text

DEFAULT_REACH = 16  # characters from the word "default" to the value it states, at most
_DEFAULT_PARAMETERS = frozenset({"default_parameter", "typed_default_parameter"})
_INDENT = re.compile(r"[ \t]*")


@dataclass(frozen=True, slots=True)
class DefaultChange:
    """Parameter `name` of `function` had the default `old` and has `new`."""

    name: str
    old: str
    new: str
    function: Node


def default_changed(rewrite: Rewrite, event: EditEvent, document: ParsedDocument) -> DefaultChange | None:
    """The change when the rewrite lies inside one parameter's default value in a Python function's
    header (`smoothing=0.3` -> `0.1`, `leave=False` -> `True`); None otherwise, and for a default
    made `None`: a sentinel, whose stated default is the value it stands for."""
    if document.language != "python" or document.tree is None:
        return None
    byte_at, starts = byte_offsets(event.after), line_starts(event.after)
    at = starts[rewrite.line] + len(rewrite.left)
    start, end = byte_at(at), byte_at(at + len(rewrite.inserted))
    node = document.tree.root_node.descendant_for_byte_range(start, max(start, end - 1))
    parameter = next((found for found in ancestors(node) if found.type in _DEFAULT_PARAMETERS), None)
    value = None if parameter is None else parameter.child_by_field_name("value")
    name = None if parameter is None else parameter.child_by_field_name("name")
    function = None if parameter is None or parameter.parent is None else parameter.parent.parent
    if value is None or name is None or function is None or function.type != "function_definition" \
            or not value.start_byte <= start <= end <= value.end_byte:
        return None
    new = node_text(value)
    head = (value.text or b"")[:start - value.start_byte].decode("utf-8", "surrogatepass")
    old = head + rewrite.removed + new[len(head) + len(rewrite.inserted):]
    sentinel = new == "None"  # what the docstring states is what `None` stands for (requests' `stream`)
    return DefaultChange(node_text(name), old, new, function) if old != new and not sentinel else None


def default_mentions(change: DefaultChange, event: EditEvent) -> list[Site]:
    """The places in the function's docstring, in the entry of the changed parameter, where the old
    default is stated (`[default: 0.3]`, `Defaults to 0.3`), each to become the new one."""
    docstring = _docstring(change.function)
    if docstring is None:
        return []
    text, starts = event.after, line_starts(event.after)
    stated = re.compile(rf"(?i)\bdefaults?\b.{{0,{DEFAULT_REACH}}}?(?<![\w.])({re.escape(change.old)})(?![\w.])")
    found = []
    for line in _entry_lines(change.name, docstring.start_point[0], docstring.end_point[0], text, starts):
        line_text = text[starts[line]:starts[line + 1]]
        match = stated.search(line_text)
        if match is not None:
            at = starts[line] + match.start(1)
            found.append(Site(at, at + len(change.old), change.new, line, 1.0))
    return found


def _docstring(function: Node) -> Node | None:
    """The string that opens the function's body, None when its body opens with anything else."""
    body = function.child_by_field_name("body")
    first = body.named_children[0] if body is not None and body.named_children else None
    if first is None or first.type != "expression_statement" or not first.named_children:
        return None
    string = first.named_children[0]
    return string if string.type == "string" else None


def _entry_lines(name: str, first: int, last: int, text: str, starts: list[int]) -> list[int]:
    """The lines `first .. last` of the entry of parameter `name`: its header line and those indented
    deeper under it, up to the first line with text that is not."""
    header = re.compile(rf"[ \t]*(?:{re.escape(name)}[ \t]*(?::(?!:)|\()|:param[ \t]+(?:[^:\n]*[ \t])?"
                        rf"{re.escape(name)}[ \t]*:)")
    lines: list[int] = []
    indent = -1
    for line in range(first, min(last, len(starts) - 2) + 1):
        line_text = text[starts[line]:starts[line + 1]]
        depth = _INDENT.match(line_text).end()
        if lines and line_text.strip() and depth > indent:
            lines.append(line)
        elif header.match(line_text):
            lines, indent = [line], depth
        elif lines:
            break
    return lines
