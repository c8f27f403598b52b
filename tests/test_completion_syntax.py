"""Tests of completion.syntax: languages, parsing, and the queries at the cursor."""
from __future__ import annotations

import pytest

from completion.syntax import (GRAMMARS, ParsedDocument, byte_offset, byte_offsets, error_count, in_empty_block,
                               language_for, literal_at, new_parser, point_at)

SAMPLES = {
    "python": "def f(x):\n    return x\n",
    "javascript": "function f(x) { return x; }\n",
    "typescript": "function f(x: number): number { return x; }\n",
    "tsx": "const a = <div>{x}</div>;\n",
    "go": "package main\n\nfunc f(x int) int { return x }\n",
    "rust": "fn f(x: i32) -> i32 { x }\n",
    "java": "class A { int f(int x) { return x; } }\n",
    "c": "int f(int x) { return x; }\n",
    "cpp": "template <typename T> T f(T x) { return x; }\n",
}


@pytest.mark.parametrize("language", sorted(GRAMMARS))
def test_every_grammar_parses_its_language_without_errors(language):
    tree = new_parser(language).parse(SAMPLES[language].encode())
    assert error_count(tree) == 0 and tree.root_node.child_count > 0


@pytest.mark.parametrize("uri, language_id, language", [
    ("file:///a/b.py", "python", "python"),
    ("file:///a/b.txt", "typescriptreact", "tsx"),
    ("file:///a/b.RS", None, "rust"),
    ("file:///a/b.hpp", "", "cpp"),
    ("file:///a/b.go", "plaintext", "go"),
    ("file:///a/README", "markdown", None),
])
def test_language_for(uri, language_id, language):
    assert language_for(uri, language_id) == language


def test_points_count_rows_in_newlines_and_columns_in_utf8_bytes():
    text = "ab\né=1\n"
    assert point_at(text, 0) == (0, 0) and point_at(text, 3) == (1, 0) and point_at(text, 4) == (1, 2)


def at(language: str, text: str) -> tuple[object, int]:
    """The tree of `text` without its `|`, and the byte offset of the `|`."""
    offset = len(text[:text.index("|")].encode())
    return new_parser(language).parse(text.replace("|", "", 1).encode()), offset


@pytest.mark.parametrize("language, text, literal", [
    ("python", 'x = "ab|c"\n', "string"),
    ("python", 'x = "|"\n', "string"),
    ("python", 'x = "abc"|\n', None),
    ("python", 'x = f"a{b|}c"\n', None),
    ("python", "# note|\nx = 1\n", "comment"),
    ("python", "# note\n|x = 1\n", None),
    ("python", 'def f():\n    """Doc|."""\n', "string"),
    ("javascript", "let s = `a${x|}b`;\n", None),
    ("javascript", "let s = `a|b`;\n", "string"),
    ("c", "/* a| */ int x;\n", "comment"),
    ("c", "/* a */| int x;\n", None),
    ("rust", "// a|\nfn f() {}\n", "comment"),
    ("go", 'package m\nvar s = "a|"\n', "string"),
    ("python", "|x = 1\n", None),
])
def test_literal_at(language, text, literal):
    assert literal_at(*at(language, text)) == literal


@pytest.mark.parametrize("language, text, empty", [
    ("javascript", "function f() {\n  |\n}\n", True),
    ("javascript", "function f() {\n  // todo\n  |\n}\n", True),
    ("javascript", "function f() {\n  g();\n  |\n}\n", False),
    ("c", "int f() {|}\n", True),
    ("java", "class A {\n  |\n}\n", True),
    ("python", "x = 1\n|", False),
])
def test_in_empty_block(language, text, empty):
    assert in_empty_block(*at(language, text)) is empty


def test_error_count():
    assert error_count(new_parser("python").parse(b"x = (1,\n")) >= 1
    assert error_count(new_parser("python").parse(b"x = (1,)\n")) == 0


def test_errors_added_by_an_insertion_leave_the_document_as_it_was():
    document = ParsedDocument.parse("python", "def f(x):\n    return \n")
    offset = document.text.index("return ") + len("return ")
    assert document.errors_added(offset, "x + 1") == 0
    assert document.errors_added(offset, "x + (1") > 0
    assert document.text == "def f(x):\n    return \n" and document.tree.root_node.text == document.text.encode()


def test_byte_offsets_asked_in_order_or_not_match_the_bytes_before():
    text = "a = 'é'\nb = '日本'  # ✓\nc = 1\n"
    byte_at = byte_offsets(text)
    offsets = [0, 5, 9, 14, 3, 21, len(text)]  # ascending, then one back, then on again
    offsets += [14, 9, 21, 5, len(text) - 1, 0]  # nearest first around one place (`analogy_sites`)
    assert [byte_at(offset) for offset in offsets] == [byte_offset(text, offset) for offset in offsets]
    assert byte_offsets("plain")(4) == 4
