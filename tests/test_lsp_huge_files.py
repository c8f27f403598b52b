"""Tests of the size cap of lsp_server.documents: a document over it has no tree, no edit history
and no edited places, is logged once, and gets its features back under the cap.

The cap is lowered to `CAP` characters, so that the texts stay small; tests/test_lsp_hostile.py
opens a 3.5 MB document in a real server.
"""
from __future__ import annotations

import logging

import pytest
from lsprotocol import types

from lsp_server import documents as documents_module
from lsp_server.documents import Documents

URI = "file:///w/big.py"
CAP = 1000
SMALL = "def alpha():\n    return 1\n"
LARGE = SMALL + "x = 1\n" * (CAP // 6)


@pytest.fixture(autouse=True)
def small_cap(monkeypatch):
    monkeypatch.setattr(documents_module, "MAX_DOCUMENT_CHARS", CAP)


def whole(text: str) -> types.TextDocumentContentChangeWholeDocument:
    return types.TextDocumentContentChangeWholeDocument(text=text)


def append_line(text: str, line: str) -> tuple[list[types.TextDocumentContentChangePartial], str]:
    """The change that adds `line` at the end of `text`, and the text after it."""
    end = types.Position(line=text.count("\n"), character=0)
    change = types.TextDocumentContentChangePartial(range=types.Range(start=end, end=end), text=line)
    return [change], text + line


def features_off(documents: Documents, uri: str = URI) -> bool:
    return (documents.is_too_large(uri) and documents.syntax.get(uri) is None
            and documents.history.latest(uri) is None and documents.text_of(uri) is None)


def size_warnings(caplog) -> list[str]:
    """The lines that say a document's features are off for its size."""
    return [record.getMessage() for record in caplog.records
            if record.levelno == logging.WARNING and "characters" in record.getMessage()]


async def test_a_document_over_the_cap_has_no_tree_no_history_and_one_log_line(caplog):
    assert len(LARGE) > CAP
    documents = Documents()
    documents.open(URI, "python", LARGE)
    assert features_off(documents)
    text = LARGE
    for line in ["y = 2\n", "z = 3\n", "w = 4\n"]:
        changes, text = append_line(text, line)
        documents.change(URI, changes, "utf-16")
    documents.change(URI, [whole(text + "# full\n")], "utf-16")
    assert features_off(documents)
    assert list(documents.recent_edits) == []  # its edited places are not remembered
    assert documents.index.by_uri.get(URI) is None  # nor is its text read for definitions
    assert len(size_warnings(caplog)) == 1


async def test_a_document_that_shrinks_under_the_cap_gets_its_features_back():
    documents = Documents()
    documents.open(URI, "python", LARGE)
    documents.change(URI, [whole(SMALL)], "utf-16")
    assert not documents.is_too_large(URI)
    document = documents.syntax.get(URI)
    assert document is not None and document.tree is not None and document.text == SMALL
    assert [d.name for d in documents.index.by_uri[URI]] == ["alpha"]
    changes, text = append_line(SMALL, "beta = 2\n")
    documents.change(URI, changes, "utf-16")
    assert documents.history.latest(URI).after == text  # the history starts again
    assert list(documents.recent_edits) == [(URI, 2)]


async def test_a_document_that_grows_over_the_cap_loses_them_and_is_logged_again_after_a_reopen(caplog):
    documents = Documents()
    documents.open(URI, "python", SMALL)
    documents.change(URI, [whole(LARGE)], "utf-16")
    assert features_off(documents)
    assert [d.name for d in documents.index.by_uri[URI]] == ["alpha"]  # its last known definitions
    documents.close(URI)
    assert not documents.is_too_large(URI)
    documents.open(URI, "python", LARGE)
    assert features_off(documents)
    assert len(size_warnings(caplog)) == 2  # once per document opened, not per change


def test_a_document_at_the_cap_keeps_its_features():
    documents = Documents()
    text = SMALL + "#" * (CAP - len(SMALL))
    documents.open(URI, "python", text)
    assert not documents.is_too_large(URI) and documents.syntax.get(URI).tree is not None
