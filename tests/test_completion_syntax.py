"""Tests of completion.syntax: languages, incremental reparsing, and the queries at the cursor."""
from __future__ import annotations

import pytest
from lsprotocol import types
from pygls.workspace import TextDocument

from completion.syntax import (GRAMMARS, SyntaxStore, error_count, in_empty_block, language_for,
                               literal_at, new_parser, point_at)

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


def change(start: tuple[int, int], end: tuple[int, int], text: str):
    return types.TextDocumentContentChangePartial(
        range=types.Range(start=types.Position(*start), end=types.Position(*end)), text=text)


def test_incremental_changes_give_the_tree_of_a_fresh_parse(caplog):
    store, uri = SyntaxStore(), "file:///m.py"
    editor = TextDocument(uri, "def f(x):\n    return x\n")  # pygls's own document: the oracle
    store.open(uri, "python", editor.source)
    for edit in [change((1, 12), (1, 12), " + 'é'"), change((0, 0), (0, 0), "# 😀\n"),
                 change((2, 4), (2, 10), "yield")]:
        editor.apply_change(edit)
        store.change(uri, [edit], "utf-16", editor.source)
    document = store.get(uri)
    assert document.text == editor.source == "# 😀\ndef f(x):\n    yield x + 'é'\n"
    fresh = new_parser("python").parse(document.text.encode())
    assert str(document.tree.root_node) == str(fresh.root_node)
    assert "from scratch" not in caplog.text  # every change was applied to the old tree


def test_changes_that_do_not_fit_reparse_from_the_editor_text():
    store = SyntaxStore()
    store.open("file:///m.py", "python", "x = 1\n")
    store.change("file:///m.py", [change((5, 0), (5, 1), "y")], "utf-16", "y = 2\n")
    assert store.get("file:///m.py").text == "y = 2\n"
    full = types.TextDocumentContentChangeWholeDocument(text="z = 3\n")
    store.change("file:///m.py", [full], "utf-16", "z = 3\n")
    assert store.get("file:///m.py").tree.root_node.text == b"z = 3\n"


def test_documents_without_a_grammar_are_not_kept():
    store = SyntaxStore()
    assert store.open("file:///notes.txt", "plaintext", "hello") is None
    store.change("file:///notes.txt", [change((0, 0), (0, 0), "x")], "utf-16", "xhello")
    assert store.get("file:///notes.txt") is None
    store.open("file:///a.py", "python", "")
    store.close("file:///a.py")
    assert store.get("file:///a.py") is None


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
    store = SyntaxStore()
    document = store.open("file:///m.py", "python", "def f(x):\n    return \n")
    offset = document.text.index("return ") + len("return ")
    assert document.errors_added(offset, "x + 1") == 0
    assert document.errors_added(offset, "x + (1") > 0
    assert document.text == "def f(x):\n    return \n" and document.tree.root_node.text == document.text.encode()
