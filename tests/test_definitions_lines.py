"""A definition's line is the LSP's line, which a lone `\\r` ends too (tree-sitter's rows do not)."""
from __future__ import annotations

from completion.definitions import definitions
from completion.syntax import ParsedDocument


def lines_of(text: str) -> dict[str, int]:
    document = ParsedDocument.parse("python", text)
    return {found.name: found.line for found in definitions(document.tree, text, "file:///a.py")}


def test_a_lone_carriage_return_ends_a_line_above_a_definition():
    assert lines_of("x = 1\r\r\rdef f():\n    pass\n") == {"f": 3}
    assert lines_of("x = 1\r\ny = 2\n\nclass C:\r\n    def g(self):\r\n        pass\r\n") == {"C": 3, "g": 4}
