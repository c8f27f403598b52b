"""`-> None` put on one function that returns nothing, carried to the file's others that return nothing.

Ruff flags a function with no return annotation (ANN201, ANN202; ANN204 for `__init__`), and for one
that returns no value its fix is `-> None`. A user who annotates one such function usually annotates
the file's others: `none_annotated` reads a rewrite that put `-> None` after a definition's
parameters, and `none_return_sites` proposes it after the parameters of every other function of the
text with no return annotation that returns no value, yields nothing and does more than raise (a
nested function's `return x` counts: the whole body is read), as ruff's fix would; a test's annotation
(`test_...`) goes to tests only, and no dunder but `__init__` takes it (`__exit__` may answer a bool).
Work is bounded: the first `MAX_MATCHES` definitions are looked at. Pure.
"""
from __future__ import annotations

import itertools
import re

from tree_sitter import Node

from completion.edit_events import EditEvent
from completion.edit_sites import MAX_MATCHES, Site, nearest_sites
from completion.positions import line_starts
from completion.syntax import ParsedDocument, ancestors, byte_offsets, point_offset
from completion.tree_names import captured, node_text

_NONE = re.compile(r"[ \t]*->[ \t]*None[ \t]*")  # the annotation as the user typed it, alone
_VALUED = '[(return_statement (_)) (yield)] @v'  # what gives a function a value: `return x`, `yield`


def none_annotated(removed: str, inserted: str, left: str, right: str) -> bool:
    """True when the rewrite (`removed` -> `inserted` between `left` and `right`) put `-> None`
    alone after a definition's parameters, before its colon."""
    return not removed and _NONE.fullmatch(inserted) is not None and left.rstrip().endswith(")") \
        and right.lstrip().startswith(":")


def none_return_sites(line: int, column: int, event: EditEvent, document: ParsedDocument) -> list[Site] | None:
    """For `-> None` put at (`line`, `column`) of the text after `event` (`none_annotated`): the other
    functions with no return annotation that return no value (`_returns_nothing`), each given ` ->
    None` after its parameters, nearest first, `MAX_SITES` at most; for a test (`test_...`), tests
    only. None when the annotation stands on no function's header, or the text is no Python."""
    if document.language != "python" or document.tree is None:
        return None
    text, starts = event.after, line_starts(event.after)
    byte = byte_offsets(text)(starts[line] + column)
    node = document.tree.root_node.descendant_for_byte_range(byte, byte + 1)
    edited = next((found for found in ancestors(node) if found.type == "function_definition"), None)
    if edited is None or edited.child_by_field_name("return_type") is None:
        return None
    tests = _name(edited).startswith("test_")
    found = []
    definitions = captured(document.tree.root_node, "python", "(function_definition) @f")
    for function in itertools.islice(definitions, MAX_MATCHES):
        name, parameters = _name(function), function.child_by_field_name("parameters")
        if function == edited or parameters is None or function.child_by_field_name("return_type") is not None \
                or (tests and not name.startswith("test_")) or (name.startswith("__") and name != "__init__") \
                or not _returns_nothing(function):
            continue
        number = parameters.end_point[0]
        if not event.start_line <= number < event.after_end:
            at = point_offset(text, starts, parameters.end_point)
            found.append(Site(at, at, " -> None", number, 1.0))
    return nearest_sites(found, line)


def _name(function: Node) -> str:
    name = function.child_by_field_name("name")
    return "" if name is None else node_text(name)


def _returns_nothing(function: Node) -> bool:
    """True when no `return` in the function's body gives a value, nothing in it yields, and it does
    more than raise (a body that only raises, an abstract method's, never returns: ruff writes
    `NoReturn` there)."""
    body = function.child_by_field_name("body")
    if body is None:
        return True
    statements = [statement for statement in body.named_children
                  if statement.type != "comment" and not _docstring(statement)]
    if statements and all(statement.type == "raise_statement" for statement in statements):
        return False
    return not captured(body, "python", _VALUED)


def _docstring(statement: Node) -> bool:
    return statement.type == "expression_statement" and [child.type for child in statement.named_children] == ["string"]
