"""Whether a word changed in prose (a docstring, a comment) keeps its sense at another place.

Two reasons, seen in real commits, why the same word elsewhere must stay as it is:
- a capital put on the first word of a sentence (`check a password` -> `Check a password`) is that
  sentence's grammar: mid-sentence, the same word stays lower case (`sentence_start`, `capitalized`);
- a docstring made to name its own definition (`max` -> `min` in `do_min`'s docstring, copied from
  `do_max`'s) is that definition's: the word in another definition's prose still names that one
  (`owner_at`, `names`); likewise prose made to speak of what its place names, a class around it or
  the code a comment stands over (`decoder` -> `encoder` in the comment over `json_encoder = None`):
  where the place names the old word, the prose speaks of that already (`subject_at`).
Pure functions of text and a parsed tree.
"""
from __future__ import annotations

import re
from collections.abc import Callable

from completion.definitions import DEFINITION_TYPES, definition_name
from completion.syntax import ParsedDocument, ancestors, enclosing_at

_SENTENCE_START = re.compile(r"""(?:^[ \t]*(?:[rRbBuUfF]?(?:\"\"\"|'''|"|')|#+:?)?|[.!?][ \t]+)[ \t]*$""")
_BARE_START = re.compile(r"[ \t]*(?:#+:?)?[ \t]*")  # a line's start with no quote: the line may go on a sentence
_SENTENCE_END = re.compile(r"""[.!?:]["')\]]*$""")
_NAME_PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
COMMENT_REACH = 6  # lines under a comment searched for the code it stands over


def sentence_start(before: str) -> bool:
    """True when `before` (a line's text up to a word) leaves the word first in its sentence:
    nothing before it but indentation and an opening quote or a comment mark, or a sentence's end."""
    return _SENTENCE_START.search(before) is not None


def opens_sentence(text: str, at: int) -> bool:
    """True when the word at offset `at` of `text` is first in its sentence (`sentence_start`), but
    for one first on a line that goes on with the line above's sentence: a comment line under a
    comment, a docstring's line under a line of it, that ends without a sentence's end."""
    line_start = text.rfind("\n", 0, at) + 1
    before = text[line_start:at]
    first = sentence_start(before)
    if not first or line_start == 0 or _BARE_START.fullmatch(before) is None:
        return first
    above = text[text.rfind("\n", 0, line_start - 1) + 1:line_start - 1].strip()
    if above.startswith("#") != before.lstrip().startswith("#"):
        return True
    words = above.lstrip("#").strip()
    return re.search(r"\w", words) is None or _SENTENCE_END.search(words) is not None  # `"""` alone: a start


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
    each answer costs the text since the offset asked before (`byte_offsets`)."""
    enclosing = enclosing_at(document, DEFINITION_TYPES)
    if enclosing is None:
        return None

    def owner(offset: int) -> str:
        node = enclosing(offset)
        return "" if node is None else definition_name(node) or ""
    return owner


def subject_at(document: ParsedDocument) -> Callable[[int], set[str]] | None:
    """The name parts, in lower case, of what prose at a character offset of the document's text
    speaks of: every definition around it (`command` for a docstring of `Command.__call__`), and
    for a comment the names of the first line of code under it, `COMMENT_REACH` lines at most
    (`json`, `decoder` under `#: JSON decoder class`); None without a tree."""
    enclosing = enclosing_at(document, DEFINITION_TYPES)
    if enclosing is None:
        return None
    text = document.text

    def subject(offset: int) -> set[str]:
        names = [definition_name(node) or "" for node in ancestors(enclosing(offset))
                 if node.type in DEFINITION_TYPES]
        if text[text.rfind("\n", 0, offset) + 1:offset].lstrip().startswith("#"):
            names += _IDENTIFIER.findall(_code_under(text, offset).partition("#")[0])
        return {part.lower() for name in names for part in _NAME_PART.findall(name)}
    return subject


def _code_under(text: str, offset: int) -> str:
    """The first line of `text` after the one holding `offset` that is neither blank nor a comment,
    `COMMENT_REACH` lines down at most ('' when none)."""
    end = text.find("\n", offset)
    for _ in range(COMMENT_REACH):
        if end < 0:
            return ""
        start, end = end + 1, text.find("\n", end + 1)
        line = text[start:] if end < 0 else text[start:end]
        if line.strip() and not line.lstrip().startswith("#"):
            return line
    return ""
