"""Whether a word changed in prose (a docstring, a comment) keeps its sense at another place.

Two reasons, seen in real commits, why the same word elsewhere must stay as it is:
- a capital put on the first word of a sentence (`check a password` -> `Check a password`) is that
  sentence's grammar: mid-sentence, the same word stays lower case (`sentence_start`, `capitalized`);
- a docstring made to name its own definition (`max` -> `min` in `do_min`'s docstring, copied from
  `do_max`'s) is that definition's: the word in another definition's prose still names that one
  (`owner_at`, `names`).
Pure functions of text and a parsed tree.
"""
from __future__ import annotations

import re
from collections.abc import Callable

from completion.definitions import DEFINITION_TYPES, definition_name
from completion.syntax import ParsedDocument, enclosing_at

_SENTENCE_START = re.compile(r"""(?:^[ \t]*(?:[rRbBuUfF]?(?:\"\"\"|'''|"|')|#+:?)?|[.!?][ \t]+)[ \t]*$""")
_NAME_PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def sentence_start(before: str) -> bool:
    """True when `before` (a line's text up to a word) leaves the word first in its sentence:
    nothing before it but indentation and an opening quote or a comment mark, or a sentence's end."""
    return _SENTENCE_START.search(before) is not None


def capitalized(removed: str, inserted: str) -> bool:
    """True when `inserted` is `removed` with its first letter made a capital (`check` -> `Check`)."""
    return removed[:1].islower() and inserted == removed[:1].upper() + removed[1:]


def names(word: str, owner: str) -> bool:
    """True when `word` is a part of the name `owner`, or parts of it run together, in any case
    (`min` in `do_min`, `asdict` in `TestAsDict`, `loads` in `loads`)."""
    parts = [part.lower() for part in _NAME_PART.findall(owner)]
    word = word.lower()
    return any("".join(parts[start:stop]) == word
               for start in range(len(parts)) for stop in range(start + 1, len(parts) + 1))


def owner_at(document: ParsedDocument) -> Callable[[int], str] | None:
    """The name of the innermost definition (`completion.definitions`: a function, a class) around a
    character offset of the document's text ('' outside any), from its tree (None without one);
    asked in text order, each answer costs the text since the last one."""
    enclosing = enclosing_at(document, DEFINITION_TYPES)
    if enclosing is None:
        return None

    def owner(offset: int) -> str:
        node = enclosing(offset)
        return "" if node is None else definition_name(node) or ""
    return owner
