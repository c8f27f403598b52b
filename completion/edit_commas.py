"""A trailing comma put after a definition's last parameter, alone on its line above the closing
parenthesis, carried to the file's other definitions written alike.

A formatter that puts a definition's parameters one per line ends them with a comma (Black's and
ruff's "magic trailing comma"); code laid out before, or by an older formatter (none after
`**kwargs`, for old Pythons), has none, and ruff's COM812 fixes it one definition at a time. A user
who puts the comma after one such parameter usually does the file's others: `comma_put` reads a
rewrite that put a comma at a line's end, and `parameter_comma_sites` proposes it after every other
definition's last parameter that starts a line of its own with the closing parenthesis on a later
line, of the user's sort (a splat, `*args` or `**kwargs`, or not; the definition's only parameter
or one of several). Calls are left be: a formatter joins and splits arguments for other reasons
(two strings on lines of their own are one message). Work is bounded: the first `MAX_MATCHES`
definitions are looked at. Pure.
"""
from __future__ import annotations

import itertools

from tree_sitter import Node

from completion.edit_events import EditEvent
from completion.edit_sites import MAX_MATCHES, Site, nearest_sites
from completion.positions import line_starts
from completion.syntax import ParsedDocument, point_offset
from completion.tree_names import captured, node_text


def comma_put(removed: str, inserted: str, right: str) -> bool:
    """True when the rewrite (`removed` -> `inserted`, `right` after it) put one comma at a line's end."""
    return not removed and inserted == "," and not right.strip()


def parameter_comma_sites(line: int, event: EditEvent, document: ParsedDocument) -> list[Site] | None:
    """For a comma put at the end of `line` of the text after `event` (`comma_put`): the other
    definitions whose last parameter stands alone as the user's did (`_alone_last`) with no comma
    after it, of the user's sort (`_sort`), each given the comma, nearest first, `MAX_SITES` at most.
    None when the comma follows no definition's last parameter alone on its line, or the text is
    no Python."""
    if document.language != "python" or document.tree is None:
        return None
    lasts = [(parameters, last) for function in itertools.islice(
                 captured(document.tree.root_node, "python", "(function_definition) @f"), MAX_MATCHES)
             if (parameters := function.child_by_field_name("parameters")) is not None
             and (last := _alone_last(parameters)) is not None]
    edited = next((found for found in lasts if found[1].end_point[0] == line and _comma_after(*found)), None)
    if edited is None:
        return None
    text, starts, sort = event.after, line_starts(event.after), _sort(*edited)
    found = []
    for parameters, last in lasts:
        number = last.end_point[0]
        if not _comma_after(parameters, last) and _sort(parameters, last) == sort \
                and not event.start_line <= number < event.after_end:
            at = point_offset(text, starts, last.end_point)
            found.append(Site(at, at, ",", number, 1.0))
    return nearest_sites(found, line)


def _alone_last(parameters: Node) -> Node | None:
    """The last parameter of a definition's `parameters` when it starts a line below the opening
    parenthesis with no other parameter before it on that line, and the closing parenthesis
    stands on a later line; None otherwise."""
    named = [child for child in parameters.named_children if child.type != "comment"]
    closing = parameters.children[-1] if parameters.children else None
    if not named or closing is None or closing.type != ")":
        return None
    last = named[-1]
    start = last.start_point[0]
    if start == parameters.start_point[0] or closing.start_point[0] == last.end_point[0] \
            or (len(named) > 1 and named[-2].end_point[0] == start):
        return None
    return last


def _comma_after(parameters: Node, last: Node) -> bool:
    return any(child.type == "," and child.start_byte >= last.end_byte for child in parameters.children)


def _sort(parameters: Node, last: Node) -> tuple[bool, bool]:
    """(a splat, the only parameter)."""
    return node_text(last).startswith("*"), sum(child.type != "comment" for child in parameters.named_children) == 1
