"""Tests of completion.decide: whether and how much to complete at a cursor."""
from __future__ import annotations

import pytest

from completion.decide import Cursor, cursor_at, decide, only_closers
from completion.syntax import byte_offset, in_empty_block, literal_at, new_parser


def cursor(text: str, language: str = "python") -> Cursor:
    """The cursor at the `|` in `text`, with the tree's answers for `language`."""
    prefix, suffix = text.split("|")
    tree = new_parser(language).parse((prefix + suffix).encode())
    offset = byte_offset(prefix + suffix, len(prefix))
    return cursor_at(prefix, suffix, language, literal_at(tree, offset), in_empty_block(tree, offset))


@pytest.mark.parametrize("text, language, mode", [
    ("def f(a, b):\n    return a +|\n", "python", "single_line"),
    ("import o|\n", "python", "single_line"),
    ("def f(a, b):\n    |\n", "python", "multi_line"),
    ("def f(a, b):|\n", "python", "multi_line"),
    ("class A:\n    # fields\n    |", "python", "multi_line"),
    ("x = 1\ny = 2\n|\n", "python", "single_line"),
    ("|", "python", "multi_line"),
    ("print(|)\n", "python", "single_line"),
    ("items = [\n    |\n]\n", "python", "multi_line"),
    ("function f() {|}\n", "javascript", "multi_line"),
    ("function f() {\n  |\n}\n", "javascript", "multi_line"),
    ("function f() {\n  g();\n  // more\n  |\n}\n", "javascript", "single_line"),
    ("fn main() {\n    let x = |;\n}\n", "rust", "single_line"),
    ("int main(void) {\n    |\n}\n", "c", "multi_line"),
    ("func f() {\n\tx := |\n}\n", "go", "single_line"),
])
def test_automatic_decisions(text, language, mode):
    assert decide(cursor(text, language)) == mode


@pytest.mark.parametrize("text", [
    'x = "ab|c"\n', "# a comment|\n", 'def f():\n    """Docs|"""\n',
    "x = fo|o + 1\n", "return |value\n",
])
def test_no_automatic_completion_inside_literals_or_words(text):
    assert decide(cursor(text)) == "none"


@pytest.mark.parametrize("text", ['x = "ab|c"\n', "# a comment|\n", "x = fo|o + 1\n"])
def test_an_invoked_request_completes_a_single_line_anywhere(text):
    assert decide(cursor(text), invoked=True) == "single_line"


def test_a_mode_setting_replaces_the_shape_but_never_none():
    assert decide(cursor("x = |\n"), setting="multi_line") == "multi_line"
    assert decide(cursor("def f():\n    |\n"), setting="single_line") == "single_line"
    assert decide(cursor("x = fo|o\n"), setting="multi_line") == "none"


@pytest.mark.parametrize("text, closers", [
    ("", True), (")", True), ("  ]);", True), ("\"}", True), ("`)", True),
    ("x)", False), (") + 1", False), ("foo", False),
])
def test_only_closers(text, closers):
    assert only_closers(text) is closers


def test_cursor_at_reads_the_lines_around_the_cursor():
    assert cursor_at("a:\r\n\r\n  b = ", "1\nc") == Cursor("  b = ", "1", "a:")
    assert cursor_at("", "") == Cursor("", "", "")
