"""Tests of lsp_server.documents: trees follow edits at once, definitions once the edits pause."""
from __future__ import annotations

import asyncio

from lsprotocol import types

from lsp_server import documents as documents_module
from lsp_server.documents import Documents

URI = "file:///w/m.py"


def insert(line: int, character: int, text: str) -> types.TextDocumentContentChangePartial:
    here = types.Position(line=line, character=character)
    return types.TextDocumentContentChangePartial(range=types.Range(start=here, end=here), text=text)


async def test_definitions_are_reindexed_once_the_edits_pause(monkeypatch):
    monkeypatch.setattr(documents_module, "INDEX_DELAY_S", 0.05)
    documents = Documents()
    documents.open(URI, "python", "def alpha():\n    pass\n")
    assert [d.name for d in documents.index.by_uri[URI]] == ["alpha"]
    text = "def alpha():\n    pass\n"
    for index, char in enumerate("def beta(): pass\n"):
        text = text + char
        documents.change(URI, [insert(2, index, char)], "utf-16", text)
    assert documents.syntax.get(URI).text == text  # the tree follows every keystroke ...
    assert [d.name for d in documents.index.by_uri[URI]] == ["alpha"]  # ... the index waits
    await asyncio.sleep(0.2)
    assert [d.name for d in documents.index.by_uri[URI]] == ["alpha", "beta"]
    assert list(documents.recent_edits) == [(URI, 2)]


async def test_the_workspace_is_indexed_but_open_documents_keep_their_text(tmp_path):
    (tmp_path / "a.py").write_text("def from_disk():\n    pass\n")
    (tmp_path / "b.go").write_text("package b\n\nfunc Gamma() {}\n")
    documents = Documents()
    open_uri = (tmp_path / "a.py").resolve().as_uri()
    documents.open(open_uri, "python", "def from_editor():\n    pass\n")
    await documents.index_workspace(tmp_path)
    assert [d.name for d in documents.index.lookup("Gamma")] == ["Gamma"]
    assert documents.index.lookup("from_disk") == [] and documents.index.lookup("from_editor")
    documents.close(open_uri)
    assert documents.syntax.get(open_uri) is None and documents.index.lookup("from_editor")
