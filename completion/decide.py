"""The decision to complete, made before any context is built: none, single line or multi-line.

The rules, in order:
1. Inside a string or a comment: none, unless the user asked (an Invoked trigger).
2. Text right of the cursor on its line that is more than closing brackets, quotes, punctuation and
   whitespace: none for an automatic trigger (the user is editing inside a line, where ghost text
   gets in the way); single line when invoked (the model sees the suffix and fills the gap).
3. Multi-line where a block's body is to be written: the cursor ends a line that opens a block
   (`:` in Python, `{` elsewhere) with only closers after it; or it stands on a blank line right
   after a line that opens a block or a bracketed list (`(`, `[`, `{`), or in a block that is empty
   (from the tree), or at the top of the document.
4. Otherwise single line: mid-line, or on a blank line among statements.

A mode other than `auto` in the settings replaces the outcome of 3 and 4, never a "none".
Everything here is a pure function of strings and flags, tested without a parser or a model.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from completion.languages import rules_for
from completion.positions import LINE_BREAK
from engine.wire.protocol import Mode

_ONLY_CLOSERS = re.compile(r"[\s)\]}>;:,.'\"`]*")
_LIST_OPENERS = ("(", "[", "{")


@dataclass(slots=True, frozen=True)
class Cursor:
    """What the decision looks at around the cursor."""

    left: str  # the cursor's line, left of the cursor
    right: str  # the cursor's line, right of the cursor
    previous: str  # the nearest line above that has code, not just a comment ("" at the top)
    language: str | None = None
    literal: str | None = None  # "string" or "comment" when the cursor is inside one
    empty_block: bool = False  # the innermost block around the cursor holds nothing


def cursor_at(prefix: str, suffix: str, language: str | None = None,
              literal: str | None = None, empty_block: bool = False) -> Cursor:
    """The `Cursor` for a hole between `prefix` and `suffix`."""
    lines = LINE_BREAK.split(prefix)
    comments = rules_for(language).comment_lines
    code = (line for line in reversed(lines[:-1])
            if line.strip() and not line.lstrip().startswith(comments))
    previous = next(code, "")
    right = LINE_BREAK.split(suffix, maxsplit=1)[0]
    return Cursor(lines[-1], right, previous, language, literal, empty_block)


def opens_block(line: str, language: str | None) -> bool:
    """True when `line` ends with what opens a block in `language`."""
    return line.rstrip().endswith(rules_for(language).block_openers)


def opens_lines(line: str, language: str | None) -> bool:
    """True when the lines after `line` belong to a block or a bracketed list it opens."""
    return opens_block(line, language) or line.rstrip().endswith(_LIST_OPENERS)


def only_closers(text: str) -> bool:
    """True when `text` holds only closing brackets, quotes, punctuation and whitespace."""
    return _ONLY_CLOSERS.fullmatch(text) is not None


def decide(cursor: Cursor, invoked: bool = False, setting: Mode = Mode.AUTO) -> Mode:
    """none, single_line or multi_line for `cursor` (see the module's rules)."""
    if cursor.literal is not None and not invoked:
        return Mode.NONE
    if not only_closers(cursor.right):
        return Mode.SINGLE_LINE if invoked else Mode.NONE
    shape = _shape(cursor)
    return shape if setting == Mode.AUTO else Mode(setting)


def _shape(cursor: Cursor) -> Mode:
    if cursor.literal is not None:
        return Mode.SINGLE_LINE
    if cursor.left.strip():
        return Mode.MULTI_LINE if opens_block(cursor.left, cursor.language) else Mode.SINGLE_LINE
    if cursor.empty_block or opens_lines(cursor.previous, cursor.language):
        return Mode.MULTI_LINE
    if not cursor.previous:  # an empty document, or the top of one
        return Mode.MULTI_LINE
    return Mode.SINGLE_LINE
