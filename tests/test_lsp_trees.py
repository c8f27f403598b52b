"""Tests of lsp_server.trees: the trees of the open documents follow the editor's changes."""
from __future__ import annotations

from lsprotocol import types
from pygls.workspace import TextDocument

from completion.syntax import new_parser
from lsp_server.trees import SyntaxStore


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
