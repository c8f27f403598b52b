"""A linter's directive added to one line, carried to the lines the same rule flags.

Most directives say nothing of where else they belong (`# type: ignore` excuses one line's types).
One does: `# noqa: E402` (pycodestyle's "module level import not at top of file") excuses an import
that stands below code, and every other import below that code is flagged the same. So
`import_directive_sites` reads a rewrite that put `# noqa: E402` alone at the end of a module-level
import of a Python file, and puts the same text at the end of the first line of each other
module-level import below the file's first statement of code (anything but the docstring, imports,
comments, `__dunder__` assignments and the compound statements pycodestyle lets stand above imports)
whose line has no comment yet.

The unused-argument checks say it too: flake8-unused-arguments' `U100` (`U101` for a name that starts
with `_`) and ruff's `ARG001`-`ARG004` (a function's, a method's, a class method's, a static method's)
flag every parameter its function never reads. So `unused_directive_sites` reads such a directive put
alone at the end of the line of a parameter that is flagged, and puts it at the end of the line of each
other parameter of the file the same code flags (not `self` nor `cls` first in a method's list) whose
line has no comment yet.

A linter's codes renamed in a directive (`# noqa: T001, T002` -> `# noqa: T201` when flake8-print's codes
became ruff's, `# noqa: PLC0415` -> `# ruff:ignore[import-outside-top-level]`) are renamed for the whole
file: `renamed_directive_sites` puts the new comment for each other comment of the file that reads as the
old one did. A type checker's `# type: ignore[code]` is no such directive: its code names that line's error.
A `# noqa` with its codes put on a line says it of that line's copies, however short (`noqa_put`: `1 / 0  #
noqa: B018` in each test; `completion.edit_blocks.line_copy` carries it). Pure.
"""
from __future__ import annotations

import itertools
import re
from collections.abc import Iterator

from tree_sitter import Node

from completion.edit_events import EditEvent
from completion.edit_sites import MAX_MATCHES, MAX_SITES, Site, matches_off_event
from completion.node_lines import first_line
from completion.positions import line_starts, split_lines
from completion.syntax import ParsedDocument, byte_offsets
from completion.tree_names import captured, first_identifier, identifiers_in, node_text

E402 = re.compile(r"\s*#\s*noqa:\s*E402\s*")  # the directive, alone, as the user typed it
IMPORT_TYPES = frozenset({"import_statement", "import_from_statement"})
# module-level statements that leave the top of the file open (pycodestyle's E402)
_ABOVE_IMPORTS = IMPORT_TYPES | {"future_import_statement", "comment", "if_statement", "try_statement",
                                 "with_statement"}
_DUNDER = re.compile(r"__\w+__\s*(?::[^=]*)?=")
UNUSED = re.compile(r"\s*#\s*noqa:\s*(U10[01]|ARG00[1-4])\s*")  # an unused argument excused, alone
_SUPPRESSION = re.compile(r"#[ \t]*(?:noqa\b|ruff[ \t]*:[ \t]*(?:ignore|noqa)\b)[^\r\n]*$")  # a line's last comment
_CODES = r"[A-Z]+[0-9]{3,4}(?:[ \t]*,[ \t]*[A-Z]+[0-9]{3,4})*"
_WHOLE = re.compile(rf"#[ \t]*(?:noqa(?::[ \t]*{_CODES})?|ruff[ \t]*:[ \t]*(?:ignore|noqa)\[[\w, -]+\])[ \t]*(?:#.*)?")
_CODED_NOQA = re.compile(rf"[ \t]+#[ \t]*noqa:[ \t]*{_CODES}[ \t]*")  # a noqa with its codes, alone at a line's end
_FUNCTION_KIND = {"ARG001": "function", "ARG002": "method", "ARG003": "classmethod", "ARG004": "staticmethod"}


def noqa_put(line_before: str, line_after: str) -> bool:
    """True when a line with no comment was given a `# noqa` with its codes at its end, and nothing
    else: the check those codes name flags the line's copies alike, however short (`1 / 0  # noqa:
    B018` in each test that raises; on the tuning commits all 11 copies of such short lines took it)."""
    code = line_before.rstrip()
    return "#" not in code and line_after.startswith(code) and _CODED_NOQA.fullmatch(line_after[len(code):]) is not None


def import_directive_sites(edited: int, inserted: str, right: str, document: ParsedDocument,
                           event: EditEvent) -> list[Site] | None:
    """The sites of `inserted` (`# noqa: E402`, put at the end of line `edited`: nothing on its
    `right`) at the ends of the other imports below code; None when the rewrite is no such
    directive on a module-level import (the other rules read it then)."""
    if right.strip() or not E402.fullmatch(inserted) or document.tree is None or document.language != "python":
        return None
    below = _imports_below_code(document)
    if edited not in below:
        return None
    lines, starts = split_lines(document.text), line_starts(document.text)
    found = [_line_end(lines, starts, line, inserted)
             for line in below if not event.start_line <= line < event.after_end and "#" not in lines[line]]
    return found[:MAX_SITES]


def _line_end(lines: list[str], starts: list[int], line: int, inserted: str) -> Site:
    """`inserted` put at the end of `line`, after its text (its trailing blanks replaced)."""
    return Site(starts[line] + len(lines[line].rstrip()), starts[line] + len(lines[line]), inserted, line, 1.0)


def _imports_below_code(document: ParsedDocument) -> list[int]:
    """The first lines of the module-level imports that stand below the file's first statement of code."""
    below_code, found = False, []
    for node in document.tree.root_node.named_children:
        below_code = below_code or not _above_imports(node)
        if below_code and node.type in IMPORT_TYPES:
            found.append(first_line(document, node))
    return found


def _above_imports(node: Node) -> bool:
    """True for a module-level statement that may stand above imports: a docstring, an import, a
    comment, a `__dunder__` assignment, a compound statement pycodestyle lets pass."""
    if node.type in _ABOVE_IMPORTS:
        return True
    if node.type != "expression_statement":
        return False
    text = node_text(node)
    return text.startswith(("'", '"')) or _DUNDER.match(text) is not None


def unused_directive_sites(edited: int, inserted: str, right: str, document: ParsedDocument,
                           event: EditEvent) -> list[Site] | None:
    """The sites of `inserted` (`# noqa: U100`, put at the end of line `edited`: nothing on its
    `right`) at the ends of the lines of the file's other parameters its code flags, nearest first;
    None when the rewrite is no such directive on a flagged parameter's line (the other rules read it then)."""
    directive = UNUSED.fullmatch(inserted) if not right.strip() else None
    if directive is None or document.tree is None or document.language != "python":
        return None
    lines, starts = split_lines(document.text), line_starts(document.text)
    found, taken, flagged = [], set(), False
    for line in _flagged_lines(document, directive.group(1), edited):
        flagged = flagged or line == edited
        if line in taken or event.start_line <= line < event.after_end or "#" in lines[line]:
            continue
        taken.add(line)
        found.append(_line_end(lines, starts, line, inserted))
        if len(found) == MAX_SITES:
            break
    return found if flagged else None


def _flagged_lines(document: ParsedDocument, code: str, near: int) -> Iterator[int]:
    """The lines of the parameters that `code` flags, function by function from the innermost around
    line `near` outwards (`MAX_MATCHES` functions at most): of the functions of its kind (any for
    `U10x`), those their body never reads, `_`-named for `U101` only, but a method's `self` or `cls`."""
    root, kind = document.tree.root_node, _FUNCTION_KIND.get(code)

    def distance(function: Node) -> tuple[int, int]:
        first, last = function.start_point.row, function.end_point.row
        return max(first - near, near - last, 0), last - first
    functions = sorted(captured(root, "python", "(function_definition) @f"), key=distance)
    for function in itertools.islice(functions, MAX_MATCHES):
        parameters, body = function.child_by_field_name("parameters"), function.child_by_field_name("body")
        own = _kind_of(function)
        if parameters is None or body is None or (kind is not None and own != kind):
            continue
        read = identifiers_in(root, body.start_byte, body.end_byte)[0]
        for index, parameter in enumerate(parameters.named_children):
            name = first_identifier(parameter)
            text = "" if name is None else node_text(name)
            if text and text not in read and (code == "U101") == text.startswith("_") \
                    and not (index == 0 and own != "function" and text in ("self", "cls")):
                yield first_line(document, name)


def _kind_of(function: Node) -> str:
    """`function`, `method`, `classmethod` or `staticmethod`: where a definition stands and how it is decorated."""
    outer = function.parent
    decorators = []
    if outer is not None and outer.type == "decorated_definition":
        decorators = [node_text(child).lstrip("@").strip() for child in outer.children if child.type == "decorator"]
        outer = outer.parent
    in_class = outer is not None and outer.type == "block" and outer.parent is not None \
        and outer.parent.type == "class_definition"
    if not in_class:
        return "function"
    return next((kind for kind in ("staticmethod", "classmethod") if kind in decorators), "method")


def renamed_directive_sites(before: str, after: str, event: EditEvent, document: ParsedDocument) -> list[Site] | None:
    """The sites of the suppression comment that ends the event's line (`before` -> `after`: the same
    code, the comment rewritten, not only added to or cut short) at the other comments of the file that
    read as the old one, in code; None when the rewrite is no such change (the other rules read it then)."""
    old, new = _SUPPRESSION.search(before), _SUPPRESSION.search(after)
    if old is None or new is None or before[:old.start()] != after[:new.start()] or document.tree is None:
        return None
    was, now = old.group().rstrip(), new.group().rstrip()
    if now.startswith(was) or was.startswith(now) or _WHOLE.fullmatch(now) is None:
        return None  # a code added or taken off: that line's own; or one still being typed (`T2`)
    byte_at, root = byte_offsets(document.text), document.tree.root_node
    pattern = re.compile("(" + re.escape(was) + r")[ \t]*(?=\r|\n|\Z)")

    def a_comment(match: re.Match) -> bool:  # in code, not in a string that reads alike
        node = root.descendant_for_byte_range(byte_at(match.start(1)), byte_at(match.start(1)) + 1)
        return node is not None and node.type == "comment"
    found = (Site(match.start(1), match.end(1), now, line, 1.0)
             for match, line, _ in matches_off_event(pattern, document.text, line_starts(document.text), event)
             if a_comment(match))
    return list(itertools.islice(found, MAX_SITES))
