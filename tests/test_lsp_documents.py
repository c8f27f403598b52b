"""Tests of lsp_server.documents: trees follow edits at once, definitions once the edits pause;
the documents as the sources of a completion's context."""
from __future__ import annotations

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types

from completion.definitions import Definition
from completion import fim
from completion.fim import AUTOMATIC_DECODERS, context_for, decide_at, hole_at, requests_for
from completion.settings import Settings
from lsp_server import documents as documents_module
from lsp_server.documents import Documents

URI = "file:///w/m.py"
REINDEX_WAIT_S = 30  # only an index that never runs takes this long


def insert(line: int, character: int, text: str) -> types.TextDocumentContentChangePartial:
    here = types.Position(line=line, character=character)
    return types.TextDocumentContentChangePartial(range=types.Range(start=here, end=here), text=text)


async def test_definitions_are_reindexed_once_the_edits_pause(monkeypatch):
    """Seventeen keystrokes, one re-index: it runs once they pause, not per keystroke."""
    monkeypatch.setattr(documents_module, "INDEX_DELAY_S", 0.05)
    documents = Documents()
    documents.open(URI, "python", "def alpha():\n    pass\n")
    assert [d.name for d in documents.index.by_uri[URI]] == ["alpha"]
    reindexed, reindex = asyncio.Event(), documents.reindex
    calls = []

    def counted_reindex(uri: str) -> None:
        reindex(uri)
        calls.append(uri)
        reindexed.set()

    monkeypatch.setattr(documents, "reindex", counted_reindex)
    text = "def alpha():\n    pass\n"
    for index, char in enumerate("def beta(): pass\n"):
        text = text + char
        documents.change(URI, [insert(2, index, char)], "utf-16", index + 2)
    assert documents.syntax.get(URI).text == text == documents.opened(URI)[0]  # the tree follows every keystroke ...
    assert [d.name for d in documents.index.by_uri[URI]] == ["alpha"]  # ... the index waits
    await asyncio.wait_for(reindexed.wait(), REINDEX_WAIT_S)
    assert calls == [URI]
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


def test_edits_are_remembered_by_place_newest_last():
    documents = Documents()
    for uri, line in [("u", 10), ("v", 3), ("u", 12), ("u", 40)]:
        documents.note_edit(uri, line)
    assert list(documents.recent_edits) == [("v", 3), ("u", 12), ("u", 40)]


def test_context_for_cuts_windows_at_statements_and_adds_definitions_edits_and_imports():
    body = "".join(f"    v{i} = helper_{i}(a)\n" for i in range(40))
    text = ("import os\n\n\ndef far_away(a, b):\n    \"\"\"Add two things.\"\"\"\n    return a\n\n\n"
            f"def main(a):\n{body}    x = far_away(v1, a)\n    far_\n\n\ndef tail():\n    pass\n")
    documents = Documents()
    documents.open(URI, "python", text)
    other = "file:///w/other.py"
    documents.index.update(other, [Definition("helper_30", "def helper_30(a):", other, 0)])
    edited = "file:///w/edited.py"
    documents.open(edited, "python", "".join(f"e{i} = {i}\n" for i in range(20)))
    documents.note_edit(edited, 10)
    documents.note_edit(URI, 50)  # in the window: the model sees it already
    cut = text.index("far_\n") + 4
    hole = hole_at(URI, text[:cut], text[cut:], documents.syntax.get(URI))
    window = context_for(hole, Settings(prefix_tokens=120, suffix_tokens=6, snippet_tokens=200),
                         documents)
    assert window.prefix.startswith("    v") and text[:cut].endswith(window.prefix)
    assert window.suffix == "\n\n\ndef tail():"  # whole lines, within 6 tokens (19 chars)
    texts = [snippet.text for snippet in window.snippets]
    assert texts[-1] == "import os"  # the most important sits last, next to the prefix
    assert texts[-2] == 'def far_away(a, b):\n    """Add two things."""'
    assert "e7 = 7\ne8 = 8\ne9 = 9\ne10 = 10\ne11 = 11\ne12 = 12\ne13 = 13" in texts
    assert "def helper_30(a):" in texts and "def main(a):" not in texts  # main is in the window
    assert len(texts) == 4


def test_a_document_just_opened_gets_the_requests_that_plan_makes_from_its_text():
    text = ("import os\n\n\ndef far_away(a, b):\n    \"\"\"Add two things.\"\"\"\n    return a\n\n\n"
            + "".join(f"v{i} = far_away({i}, os)\n" for i in range(60)) + "x = far_\n")
    cut = len(text) - 1
    settings = Settings(prefix_tokens=100, snippet_tokens=200)
    documents = Documents()
    documents.open(URI, "python", text)
    hole = hole_at(URI, text[:cut], text[cut:], documents.syntax.get(URI))
    mode = decide_at(hole, False, settings.mode)
    window = context_for(hole, settings, documents)
    served = requests_for(hole, window, "r", mode, settings, settings.deadline_ms, AUTOMATIC_DECODERS)
    planned = fim.plan(fim.hole_in_text(URI, text[:cut], text[cut:]), settings, None, "r")
    assert planned.mode == mode == "single_line" and planned.requests == served
    assert [s.text for s in served[0].snippets] == ['def far_away(a, b):\n    """Add two things."""',
                                                    "import os"]


# Characters that end a line for `str.splitlines` but not for LSP, beside LSP's own line ends and
# characters of one, two (UTF-16) and more code units.
NOT_LSP_LINE_ENDS = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
EDIT_ALPHABET = NOT_LSP_LINE_ENDS + "\r\n" + "ax é\U0001F600"
HIGH_SURROGATES = range(0xD800, 0xDC00)


def lsp_line_starts(units: list[int]) -> list[int]:
    """The code-unit index where each line starts: LSP ends a line at CR LF, CR or LF only."""
    starts, index = [0], 0
    while index < len(units):
        unit = units[index]
        index += 1
        if unit == 0x0D and index < len(units) and units[index] == 0x0A:
            index += 1
        if unit in (0x0A, 0x0D):
            starts.append(index)
    return starts


def lsp_offset(units: list[int], line: int, character: int) -> int:
    """A position in UTF-16 code units: a line past the last is the end; a character past its line's
    end is the line's end; half a surrogate pair is the pair's start."""
    starts = lsp_line_starts(units)
    if line >= len(starts):
        return len(units)
    end = starts[line + 1] if line + 1 < len(starts) else len(units)
    while end > starts[line] and units[end - 1] in (0x0A, 0x0D):
        end -= 1
    offset = min(starts[line] + character, end)
    return offset - 1 if offset > starts[line] and units[offset - 1] in HIGH_SURROGATES else offset


def lsp_apply(text: str, start: tuple[int, int], end: tuple[int, int], new_text: str) -> str:
    """The LSP specification's incremental change, done on the text's UTF-16 code units."""
    data = text.encode("utf-16-le", "surrogatepass")
    units = [int.from_bytes(data[i:i + 2], "little") for i in range(0, len(data), 2)]
    first, last = sorted((lsp_offset(units, *start), lsp_offset(units, *end)))
    return data[:2 * first].decode("utf-16-le") + new_text + data[2 * last:].decode("utf-16-le")


positions = st.tuples(st.integers(0, 12), st.integers(0, 12))


@settings(max_examples=300, deadline=None)
@given(st.text(EDIT_ALPHABET, max_size=40),
       st.lists(st.tuples(positions, positions, st.text(EDIT_ALPHABET, max_size=6)), max_size=8))
def test_the_server_text_follows_the_editor_through_any_incremental_edits(text, edits):
    """Random edits, applied by the LSP rules in UTF-16 code units, give the server the very text
    the editor has (and its tree the same text), whatever characters `str.splitlines` would split."""
    async def follow(text: str) -> None:  # a change schedules its re-index on the running loop
        documents = Documents()
        documents.open(URI, "python", text, 1)
        for version, (start, end, new_text) in enumerate(edits, 2):
            text = lsp_apply(text, start, end, new_text)
            change = types.TextDocumentContentChangePartial(
                range=types.Range(start=types.Position(*start), end=types.Position(*end)), text=new_text)
            documents.change(URI, [change], "utf-16", version)
            assert documents.opened(URI) == (text, version)
            assert documents.syntax.get(URI).text == text
        documents.close(URI)
    asyncio.run(follow(text))
