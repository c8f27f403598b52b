"""Tests of completion.pipeline: the steps of one completion around the worker call."""
from __future__ import annotations

from engine.protocol import Item, Result, Snippet, Timings, encode
from completion.context import Context
from lsp_server.documents import Documents
from completion.definitions import Definition
from completion.pipeline import (AUTOMATIC_DECODERS, INVOKED_DECODERS, context_for, decide_at,
                                 hole_at, requests_for)
from completion.requests import Settings
from completion.syntax import SyntaxStore

URI = "file:///w/m.py"
TEXT = 'def f(x):\n    return g(x\n\ndef h():\n    s = "ab"\n'


def result(*texts: str) -> Result:
    return Result("r", [Item(text, 0.9, 3) for text in texts], Timings(0.0, 1.0, 2.0, 3.0), "done")


def test_a_hole_uses_the_tree_only_while_it_matches_the_text():
    store = SyntaxStore()
    store.open(URI, "python", TEXT)
    cut = TEXT.index("g(x") + 3
    hole = hole_at(store, URI, TEXT[:cut], TEXT[cut:])
    assert hole.document is store.get(URI) and hole.language == "python"
    stale = hole_at(store, URI, "x = 1", "")
    assert stale.document is None and stale.language == "python"


def test_decide_at_sees_strings_through_the_tree():
    store = SyntaxStore()
    store.open(URI, "python", TEXT)
    cut = TEXT.index('"ab') + 2
    hole = hole_at(store, URI, TEXT[:cut], TEXT[cut:])
    assert decide_at(hole, invoked=False, setting="auto") == "none"
    assert decide_at(hole, invoked=True, setting="auto") == "single_line"


def test_one_request_per_candidate_each_with_its_own_id_and_document_key():
    hole = hole_at(SyntaxStore(), URI, "x = ", "\n")
    window = Context("x = ", "\n", [Snippet("def g(): ...", "/w/g.py", 200)])
    requests = requests_for(hole, window, "abc", "single_line", Settings(max_tokens=9), 700,
                            INVOKED_DECODERS)
    assert [r.id for r in requests] == ["abc", "abc-1"]
    assert [r.document for r in requests] == [URI, URI + "-1"]
    assert [r.decoder for r in requests] == [dict(d) for d in INVOKED_DECODERS]
    assert all(r.max_tokens == 9 and r.deadline_ms == 700 and r.snippets == window.snippets
               and encode(r) for r in requests)
    assert len(requests_for(hole, window, "abc", "single_line", Settings(), 700,
                            AUTOMATIC_DECODERS)) == 1


def test_each_candidate_has_a_session_of_its_own():
    hole = hole_at(SyntaxStore(), URI, "x = ", "\n")
    window = Context("x = ", "\n", [])
    requests = requests_for(hole, window, "abc", "single_line", Settings(), 700, INVOKED_DECODERS,
                            "c1:inline:" + URI)
    assert [r.session for r in requests] == ["c1:inline:" + URI, "c1:inline:" + URI + "-1"]
    assert requests_for(hole, window, "abc", "single_line", Settings(), 700,
                        AUTOMATIC_DECODERS)[0].session == ""


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
    hole = hole_at(documents.syntax, URI, text[:cut], text[cut:])
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
