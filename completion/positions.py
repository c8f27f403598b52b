"""Lines and positions as LSP counts them, and the cut of a text at a cursor.

Positions are LSP positions: a 0-based line and a 0-based column counted in the negotiated
position encoding's code units (UTF-16 unless the client chose otherwise). Lines end at `\\n`,
`\\r\\n` or `\\r`, as LSP defines them. A position outside the text, or text that cannot be sent as
UTF-8 (a lone surrogate), gives no hole at all: callers answer with nothing.
"""
from __future__ import annotations

import itertools
import re

LINE_BREAK = re.compile(r"\r\n|\r|\n")  # every line ending an editor may send


def _code_units(char: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(char.encode("utf-8", "surrogatepass"))
    if encoding == "utf-32":
        return 1
    return 2 if ord(char) > 0xFFFF else 1


def column_to_index(line_text: str, column: int, encoding: str = "utf-16") -> int | None:
    """The index in `line_text` of an LSP column, or None past the line's end or inside a character."""
    units = 0
    for index, char in enumerate(line_text):
        if units == column:
            return index
        if units > column:
            return None
        units += _code_units(char, encoding)
    return len(line_text) if units == column else None


def line_length(line_text: str, encoding: str = "utf-16") -> int:
    """The LSP column at the end of `line_text`."""
    return sum(_code_units(char, encoding) for char in line_text)


def split_lines(text: str) -> list[str]:
    """The lines as LSP counts them, without their breaks: an empty text has one, a final break
    opens one more."""
    return LINE_BREAK.split(text)


def line_starts(text: str) -> list[int]:
    """The offset where each line starts, plus `len(text)` last (without a `\r`, from the lengths of
    its `\n`-split lines: twice as fast as the regex on a 340 KB file)."""
    if "\r" in text:
        return [0, *(found.end() for found in LINE_BREAK.finditer(text)), len(text)]
    return [0, *itertools.accumulate(len(line) + 1 for line in text.split("\n")[:-1]), len(text)]


def _line_bounds(text: str, line: int) -> tuple[int, int] | None:
    """(start, end) offsets of line `line` of `text` without its break, or None past the last line."""
    start = 0
    if line > 0:
        found = next(itertools.islice(LINE_BREAK.finditer(text), line - 1, None), None)
        if found is None:
            return None
        start = found.end()
    found = LINE_BREAK.search(text, start)
    return start, found.start() if found else len(text)


def offset_at(text: str, line: int, column: int, encoding: str = "utf-16") -> int | None:
    """The string offset of an LSP position in `text`, or None when it lies outside the text."""
    bounds = None if line < 0 or column < 0 else _line_bounds(text, line)
    if bounds is None:
        return None
    start, end = bounds
    index = column_to_index(text[start:end], column, encoding)
    return None if index is None else start + index


def editor_offset(text: str, line: int, column: int, encoding: str = "utf-16") -> int:
    """The string offset where an editor's change at an LSP position applies: never outside the
    text. A line past the last means the text's end; a column past its line's end means that end
    (as LSP defines it); a column inside a character (half a surrogate pair) means its start."""
    bounds = _line_bounds(text, max(line, 0))
    if bounds is None:
        return len(text)
    start, end = bounds
    units, column = 0, max(column, 0)
    for index, char in enumerate(text[start:end]):
        units += _code_units(char, encoding)
        if units > column:
            return start + index
    return end


def is_sendable(text: str) -> bool:
    """True when `text` encodes to UTF-8 (no lone surrogates), as the wire protocol requires."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def split_at(text: str, line: int, column: int, encoding: str = "utf-16") -> tuple[str, str] | None:
    """(prefix, suffix) around an LSP position, or None outside the text or for unsendable text."""
    offset = offset_at(text, line, column, encoding)
    if offset is None or not is_sendable(text):
        return None
    return text[:offset], text[offset:]
