"""Lines and positions as LSP counts them, and the cut of a text at a cursor.

Positions are LSP positions: a 0-based line and a 0-based column counted in the negotiated
position encoding's code units (UTF-16 unless the client chose otherwise). Lines end at `\\n`,
`\\r\\n` or `\\r`, as LSP defines them. A position outside the text, or text that cannot be sent as
UTF-8 (a lone surrogate), gives no hole at all: callers answer with nothing.
"""
from __future__ import annotations

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


def offset_at(text: str, line: int, column: int, encoding: str = "utf-16") -> int | None:
    """The string offset of an LSP position in `text`, or None when it lies outside the text."""
    if line < 0 or column < 0:
        return None
    start = 0
    for _ in range(line):
        found = LINE_BREAK.search(text, start)
        if found is None:
            return None
        start = found.end()
    found = LINE_BREAK.search(text, start)
    end = found.start() if found else len(text)
    index = column_to_index(text[start:end], column, encoding)
    return None if index is None else start + index


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
