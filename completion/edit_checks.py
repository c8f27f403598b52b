"""A next edit (`Edit`: whole lines of a document and their new text) and the checks it passes
before it is shown, beside those of `completion.next_edit`.

- Lines: a proposal may remove no more lines than its region's draft changes (`removed_lines`,
  `draft_changed_lines`): a model asked to rewrite a function after a comment edit must not delete it.
- Python: tree-sitter-python takes an unexpected indent, an unindent that matches no outer level
  and a mix of tabs and spaces that CPython refuses as sound, so the edits of each group of
  top-level statements they touch are kept only when those statements, edited, compile as far as
  they did (`compiling_edits`, `compiles_as_far`): if they compiled, they still compile; if CPython
  stopped at line N, it stops no earlier than where line N went. Only the touched statements are
  compiled, each group at most `MAX_COMPILE_CHARS`, so a big file costs what its edited part does
  (a class over it: the statements of its body that the edits touch, under an `if True:` that makes
  their indent a block; a function's body alone would not compile); CPython reports one error, so an
  edit below a line the user left broken is judged by that line.
Lines are counted as the LSP counts them, as CPython does (`\\n`, `\\r\\n`, `\\r`). Everything here is pure.
"""
from __future__ import annotations

import bisect
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

from tree_sitter import Node

from completion.edit_drafts import Draft
from completion.edit_events import diff_span, line_breaks
from completion.node_lines import first_lines
from completion.positions import line_starts
from completion.syntax import ParsedDocument

# The Python text one group of edits' top-level statements may hold to be compiled (60 KB compiles
# in about 25 ms here, twice per group); a group over it shows nothing rather than an edit it
# cannot check.
MAX_COMPILE_CHARS = 64 * 1024


@dataclass(slots=True, frozen=True)
class Edit:
    """Lines `start_line .. end_line - 1` of the document become `new_text`."""

    start_line: int
    end_line: int  # exclusive
    new_text: str


def applied(text: str, edits: Sequence[Edit]) -> str:
    """`text` with every edit made (none may overlap)."""
    starts = line_starts(text)
    for edit in sorted(edits, key=lambda e: e.start_line, reverse=True):
        text = text[:starts[edit.start_line]] + edit.new_text + text[starts[edit.end_line]:]
    return text


def _line_count(text: str) -> int:
    """How many lines `text` covers: a final line break ends its last line, not opens another."""
    return line_breaks(text) + (0 if text == "" or text[-1] in "\r\n" else 1)


def removed_lines(current: str, proposal: str) -> int:
    """How many lines fewer than `current` `proposal` has, the proposal ending as its edit will
    (`completion.next_edit._with_tail_of`: its trailing blank lines made `current`'s)."""
    return max(0, _line_count(current) - _line_count(proposal))


def draft_changed_lines(current: str, draft: Draft) -> int:
    """How many lines of a region's `current` text its draft changes."""
    span = diff_span(current, draft.text)
    return span.before_end - span.start_line if draft.changes else 0


def failure_line(source: str) -> int | None:
    """The 0-based line where CPython first refuses `source` (indentation included), or None
    when it compiles; compiler warnings are not shown."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(source, "<doc>", "exec", dont_inherit=True)
        except SyntaxError as exc:  # IndentationError and TabError too
            return max((exc.lineno or 1) - 1, 0)
        except (ValueError, RecursionError, MemoryError):  # a null byte, nesting too deep
            return 0
    return None


def _line_after(line: int, edits: Sequence[Edit]) -> int:
    """Where line `line` of a text lies once `edits` are made (the first line of an edit that
    covers it)."""
    shift = 0
    for edit in sorted(edits, key=lambda e: e.start_line):
        if edit.end_line <= line:
            shift += _line_count(edit.new_text) - (edit.end_line - edit.start_line)
        elif edit.start_line <= line:
            return edit.start_line + shift
    return line + shift


def compiles_as_far(before: str, edits: Sequence[Edit]) -> bool:
    """True when Python `before` with `edits` made compiles, or fails no earlier than `before`
    does (an edit below a line the user left broken is judged as far as CPython reads)."""
    failed_before = failure_line(before)
    failed_after = failure_line(applied(before, edits))
    if failed_before is None or failed_after is None:
        return failed_after is None
    return failed_after >= _line_after(failed_before, edits)


def statement_lines(document: ParsedDocument) -> list[int]:
    """The lines where the document's top-level statements start, with 0, in order."""
    return sorted({*first_lines(document, document.tree.root_node.children), 0})


def statement_groups(edits: Sequence[Edit], bounds: list[int], line_count: int) -> list[tuple[int, int, list[Edit]]]:
    """(first line, end line, edits) of the top-level statements each group of `edits` touches;
    `bounds` are the lines where statements start."""
    groups: list[tuple[int, int, list[Edit]]] = []
    for edit in sorted(edits, key=lambda e: e.start_line):
        first = bounds[bisect.bisect_right(bounds, edit.start_line) - 1]
        after = bisect.bisect_left(bounds, edit.end_line)
        end = bounds[after] if after < len(bounds) else line_count
        if groups and first < groups[-1][1]:
            start, last_end, grouped = groups.pop()
            groups.append((start, max(end, last_end), [*grouped, edit]))
        else:
            groups.append((first, end, [edit]))
    return groups


def compiling_edits(document: ParsedDocument, edits: Sequence[Edit], starts: list[int] | None = None) -> list[Edit]:
    """The edits of each group of top-level statements that, edited, still compile as far as
    they did (`compiles_as_far`); a group over `MAX_COMPILE_CHARS` that is one class is judged by
    the statements of its body the same way (its methods), and none of a group over it otherwise.
    `starts` are the text's `line_starts`, when the caller has them."""
    starts = line_starts(document.text) if starts is None else starts
    statements = document.tree.root_node.children
    return _compiling(document, edits, statements, statement_lines(document), starts, len(starts) - 1)


def _compiling(document: ParsedDocument, edits: Sequence[Edit], statements: Sequence[Node], bounds: list[int],
               starts: list[int], stop: int) -> list[Edit]:
    """`compiling_edits` over sibling `statements` that start at lines `bounds` (in order) and end
    by line `stop`; an edit outside them is none of theirs and is not kept."""
    if not bounds:
        return []
    inside = [edit for edit in edits if bounds[0] <= edit.start_line and edit.end_line <= stop]
    kept: list[Edit] = []
    for first, end, grouped in statement_groups(inside, bounds, stop):
        before = document.text[starts[first]:starts[end]]
        if len(before) > MAX_COMPILE_CHARS:
            alone = _starting_at(document, statements, first) if end == _next_bound(bounds, first, stop) else None
            body = [] if alone is None else class_body(alone)
            kept += _compiling(document, grouped, body, first_lines(document, body), starts, end)
            continue
        shift = 1 if before[:1] in (" ", "\t") else 0  # a body's statements are indented: one block of them
        moved = [Edit(e.start_line - first + shift, e.end_line - first + shift, e.new_text) for e in grouped]
        if compiles_as_far("if True:\n" * shift + before, moved):
            kept.extend(grouped)
    return kept


def _starting_at(document: ParsedDocument, statements: Sequence[Node], line: int) -> Node | None:
    """The one statement of `statements` that starts at `line`; None when none or several do."""
    found = [node for node, first in zip(statements, first_lines(document, statements)) if first == line]
    return found[0] if len(found) == 1 else None


def _next_bound(bounds: list[int], first: int, stop: int) -> int:
    """The line after the statement starting at `first`: the next statement's first line, or `stop`."""
    after = bisect.bisect_right(bounds, first)
    return bounds[after] if after < len(bounds) else stop


def class_body(statement: Node) -> list[Node]:
    """The statements of a class's body (decorated or not); none for another statement (a
    function's body alone would not compile: its `return`, `yield`, `nonlocal`)."""
    if statement.type == "decorated_definition":
        statement = statement.child_by_field_name("definition")
    if statement is None or statement.type != "class_definition":
        return []
    body = statement.child_by_field_name("body")
    return [] if body is None else [child for child in body.children if child.is_named]
