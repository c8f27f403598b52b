"""Edits by analogy of string literals joined: `"... met, " "please refer"` made one literal,
`"... met, please refer"` (a formatter's or a linter's implicit concatenation taken out), goes to
the other two literals side by side on one line in the file.

`joined_quote` says whether a one-line rewrite joined two literals (it took out a closing quote,
the space after it and the opening quote of the next literal, and put nothing in) and with which
quote; `joined_sites` finds the other such joints in code: a closing quote, spaces, an opening
quote of the same kind with no prefix, between two one-line literals (from the tree), neither of
them triple-quoted or raw, and not an f-string before a literal with braces (joined, its braces
would become fields). Each site deletes its joint and scores 1.
A blank put at the start of a literal that follows another ending with none (`'exclude.'` then
`'(Default: %default)'` made `' (Default: %default)'`), or at the end of one before another that
opens with none, mends that one joint: it goes to literals joined alike (`joined_before`,
`joined_after`), not to one whose neighbour has the blank already. Pure.
"""
from __future__ import annotations

import re
from collections.abc import Callable

from tree_sitter import Node

from completion.edit_events import EditEvent
from completion.edit_sites import Site, matches_off_event, nearest_sites
from completion.positions import line_starts
from completion.syntax import ParsedDocument, enclosing_at

_JOINT = re.compile(r"""(["'])[ \t]+\1""")  # a closing quote, spaces, the next literal's opening quote
_STRING = frozenset({"string"})
_PREFIX = re.compile(r"[A-Za-z]*")
_PREFIXED_QUOTE = re.compile(r"[bBrRuUfF]{0,2}['\"]")  # a literal's prefix and opening quote
REACH = 200  # characters looked across, back or on, for the literal joined to another


def joined_quote(removed: str, inserted: str) -> str | None:
    """The quote of the two literals the rewrite joined (it took out `" "` and put nothing in), else None."""
    found = _JOINT.fullmatch(removed)
    return None if found is None or inserted else found.group(1)


def joined_sites(quote: str, event: EditEvent, document: ParsedDocument) -> list[Site]:
    """The other joints of two `quote` literals side by side on one line in the document's code
    (the text after the event), each taken out: nearest the edit first, `MAX_SITES` at most."""
    string_at = enclosing_at(document, _STRING)
    if string_at is None:
        return []
    text, starts = document.text, line_starts(document.text)
    pattern = re.compile(rf"({re.escape(quote)}[ \t]+{re.escape(quote)})")
    found = [Site(match.start(1), match.end(1), "", line, 1.0)
             for match, line, _ in matches_off_event(pattern, text, starts, event)
             if _a_joint(string_at, match.start(1), match.end(1) - 1)]
    return nearest_sites(found, event.start_line)


def _a_joint(string_at: Callable[[int], Node | None], closing: int, opening: int) -> bool:
    """True when the quotes at `closing` and `opening` end one literal and open the next (side by side,
    with spaces only between them: one implicit concatenation), both of one line, and joining them
    keeps their text."""
    first, second = string_at(closing), string_at(opening)
    if first is None or second is None or first == second:
        return False  # in code, or both quotes in one literal (`'say " " here'`)
    head, tail = _literal(first), _literal(second)
    if head is None or tail is None or tail[0] or head[0].lower() not in ("", "f"):
        return False  # a prefix on the next literal (`b"`, `f"`) or another than `f` on the first (`r"`)
    return head[0] == "" or not re.search(r"[{}]", tail[1])


def _literal(node: Node) -> tuple[str, str] | None:
    """(a one-line literal's prefix, its text between its quotes), or None for a triple-quoted one."""
    return _parts(node.text.decode("utf-8", "replace"))


def _parts(literal: str) -> tuple[str, str] | None:
    """`_literal` of a literal's text; None for a triple-quoted one or another piece of code."""
    prefix = _PREFIX.match(literal).group()
    body = literal[len(prefix):]
    if body[:3] in ('"""', "'''") or "\n" in body or len(body) < 2 or body[0] not in "'\"" or body[-1] != body[0]:
        return None
    return prefix, body[1:-1]


def blanked_end(old: str, new: str) -> str | None:
    """Which end of a one-line literal's text a change put blanks at, the rest kept (`'(Default)'` ->
    `' (Default)'`: "start"; "end"), else None."""
    old_parts, new_parts = _parts(old), _parts(new)
    if old_parts is None or new_parts is None or new_parts[1] == old_parts[1]:
        return None
    old_body, new_body = old_parts[1], new_parts[1]
    if new_body.lstrip(" ") == old_body and new_body.endswith(old_body):
        return "start"
    return "end" if new_body.rstrip(" ") == old_body and new_body.startswith(old_body) else None


def joined_before(before: str) -> bool:
    """True when `before`, the text up to a literal's opening quote, ends with another literal (blanks
    between) whose text ends with no blank: the two are joined with nothing between their words."""
    head = before.rstrip()
    return head[-1:] in ("'", '"') and not head[-2:-1].isspace()


def joined_after(after: str) -> bool:
    """True when `after`, the text from a literal's closing quote on (that quote excluded), opens
    (blanks aside) with another literal whose text opens with no blank."""
    tail = after.lstrip()
    quote = _PREFIXED_QUOTE.match(tail)
    return quote is not None and not tail[quote.end():quote.end() + 1].isspace()

