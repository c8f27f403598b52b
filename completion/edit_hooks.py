"""A test class's nose-style hook renamed the way pytest asks, carried to the file's other classes.

pytest 7.2 deprecated calling nose-style `setup` and `teardown` methods of test classes, and pytest 8
calls them no more: each becomes `setup_method` or `teardown_method`, in every class of the file. The
rename rules leave a method's name alone when other classes define it too (each class's own), so
`hook_renamed` reads a rewrite that renamed such a method on its header the way pytest asks, and
`hook_sites` proposes the same name on the file's other methods of the old name. Work is bounded: the
first `MAX_MATCHES` definitions are looked at. Pure.
"""
from __future__ import annotations

import itertools
import re

from completion.edit_events import EditEvent
from completion.edit_sites import MAX_MATCHES, Site, nearest_sites
from completion.positions import line_starts
from completion.syntax import ParsedDocument, point_offset
from completion.tree_names import captured, node_text

PYTEST_HOOKS = {"setup": "setup_method", "teardown": "teardown_method"}  # nose's name -> pytest's
_METHODS = "(class_definition body: (block (function_definition) @f))"  # a decorated one is no hook
_HEADER = re.compile(r"(?<!\w)def[ \t]+$")  # a definition's header up to its name


def hook_renamed(removed: str, inserted: str, left: str, right: str) -> bool:
    """True when the rewrite (`removed` -> `inserted` between `left` and `right`) renamed a method on its
    header from a nose-style hook's name to pytest's (`def setup(` -> `def setup_method(`)."""
    return PYTEST_HOOKS.get(removed) == inserted and _HEADER.search(left) is not None and right.startswith("(")


def hook_sites(line: int, removed: str, inserted: str, event: EditEvent, document: ParsedDocument) -> list[Site]:
    """The file's other methods named `removed` (in a class's body, off the event's lines), each
    renamed `inserted`, nearest `line` first, `MAX_SITES` at most."""
    if document.language != "python" or document.tree is None:
        return []
    text, starts = event.after, line_starts(event.after)
    found = []
    definitions = captured(document.tree.root_node, "python", _METHODS)
    for function in itertools.islice(definitions, MAX_MATCHES):
        name = function.child_by_field_name("name")
        if name is None or node_text(name) != removed or event.start_line <= name.start_point[0] < event.after_end:
            continue
        found.append(Site(point_offset(text, starts, name.start_point), point_offset(text, starts, name.end_point),
                          inserted, name.start_point[0], 1.0))
    return nearest_sites(found, line)
