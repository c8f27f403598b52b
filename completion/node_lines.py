"""The LSP lines of tree-sitter nodes.

Tree-sitter counts rows at `\\n` only; the LSP, the editor and every line number of the next-edit
rules count `\\n`, `\\r\\n` and a lone `\\r`. Where a text holds a lone `\\r` (a docstring written
on an old Mac, a pasted log), a node's row is short of its line by the lone `\\r`s above it, so its
lines are read from its bytes instead; elsewhere rows are lines, and cost nothing to read.
"""
from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterable

from tree_sitter import Node

from completion.positions import LINE_BREAK
from completion.syntax import ParsedDocument, encode

_LONE_CR = re.compile(r"\r(?!\n)")


@functools.lru_cache(maxsize=8)  # the rules ask for the lines of one text many times
def byte_line_starts(text: str) -> tuple[int, ...] | None:
    """The UTF-8 offset where each LSP line of `text` starts, or None when tree-sitter's rows are
    its lines already (no lone `\\r`: LSP ends a line there, tree-sitter does not)."""
    if _LONE_CR.search(text) is None:
        return None
    starts, at, byte = [0], 0, 0
    for found in LINE_BREAK.finditer(text):
        byte += len(encode(text[at:found.end()]))
        at = found.end()
        starts.append(byte)
    return tuple(starts)


def start_line(text: str, node: Node) -> int:
    """The LSP line where `node` of the tree of `text` starts."""
    starts = byte_line_starts(text)
    return node.start_point.row if starts is None else bisect.bisect_right(starts, node.start_byte) - 1


def first_line(document: ParsedDocument, node: Node) -> int:
    """The LSP line where `node` of the document's tree starts."""
    return start_line(document.text, node)


def first_lines(document: ParsedDocument, nodes: Iterable[Node]) -> list[int]:
    """The LSP lines where `nodes` of the document's tree start, in their order."""
    starts = byte_line_starts(document.text)
    if starts is None:
        return [node.start_point.row for node in nodes]
    return [bisect.bisect_right(starts, node.start_byte) - 1 for node in nodes]


def last_line(document: ParsedDocument, node: Node) -> int:
    """The LSP line where `node` of the document's tree ends."""
    starts = byte_line_starts(document.text)
    return node.end_point.row if starts is None else bisect.bisect_right(starts, node.end_byte) - 1
