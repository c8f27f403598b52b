"""An `elif` after branches that all leave made `if`, carried to the file's other such `elif`s.

Ruff flags an `elif` whose chain's branches before it all end by leaving it (`return`, `raise`,
`continue`, `break`: RET505-RET508, pylint's no-else-return), and its fix is `if`: the branch
before has left already when the test runs, so nothing changes but the nesting. A user who makes
one such fix usually makes the chain's next ones and the file's others (on the tuning commits, every
`elif` so flagged in the files where the user made one changed with it, and none where the chain's
branches did not all leave). `elif_unchained` reads a line whose `elif` was made `if`, and
`unchained_sites` makes `if` of every other `elif` of the text whose chain's branches before it all
leave; a chain with a branch that falls through keeps its `elif`s (made `if`, a test after that
branch would run where it ran not). Work is bounded: the first `MAX_MATCHES` chains are looked at. Pure.
"""
from __future__ import annotations

import itertools
import re

from tree_sitter import Node

from completion.edit_events import EditEvent
from completion.edit_sites import MAX_MATCHES, Site, nearest_sites
from completion.positions import line_starts
from completion.syntax import ParsedDocument, point_offset
from completion.tree_names import captured

_LEAVING = frozenset({"return_statement", "raise_statement", "continue_statement", "break_statement"})
_ELIF = re.compile(r"([ \t]*)elif\b")


def elif_unchained(line_before: str, line_after: str) -> bool:
    """True when the rewrite's line, an `elif` test before, is the same test after with `if`."""
    found = _ELIF.match(line_before)
    return found is not None and line_after == found.group(1) + line_before[found.end() - 2:]


def unchained_sites(line: int, event: EditEvent, document: ParsedDocument) -> list[Site] | None:
    """For an `elif` made `if` on `line` of the text after `event` (`elif_unchained`): the other `elif`s
    whose chain's branches before them all leave, each made `if`, nearest first, `MAX_SITES` at most.
    None when the user's `if` follows no chain whose branches all leave (another change), or the text is
    no Python."""
    if document.language != "python" or document.tree is None:
        return None
    chains = captured(document.tree.root_node, "python", "(if_statement) @i")
    edited = next((chain for chain in chains if chain.start_point[0] == line), None)
    before = None if edited is None else edited.prev_named_sibling
    if before is None or before.type != "if_statement" or not _all_leave(_branches(before)):
        return None
    text, starts, found = event.after, line_starts(event.after), []
    for chain in itertools.islice(chains, MAX_MATCHES):
        branches = _branches(chain)
        for at, clause in enumerate(branches[1:], start=1):
            if clause.type != "elif_clause" or not _all_leave(branches[:at]):
                break
            number = clause.start_point[0]
            if not event.start_line <= number < event.after_end:
                start = point_offset(text, starts, clause.start_point)
                found.append(Site(start, start + len("elif"), "if", number, 1.0))
    return nearest_sites(found, line)


def _branches(chain: Node) -> list[Node]:
    """An `if` statement's branches in order: the statement itself (its own block), then its `elif`
    and `else` clauses."""
    return [chain] + [child for child in chain.named_children if child.type in ("elif_clause", "else_clause")]


def _all_leave(branches: list[Node]) -> bool:
    """True when each branch's block ends with a statement that leaves it."""
    for branch in branches:
        block = branch.child_by_field_name("consequence") if branch.type != "else_clause" \
            else branch.child_by_field_name("body")
        statements = [] if block is None else [node for node in block.named_children if node.type != "comment"]
        if not statements or statements[-1].type not in _LEAVING:
            return False
    return True
