"""Tests of completion.fim (an inline completion's pipeline: `plan`, `within`, `ask`, `finish`)
and of completion.requests."""
from __future__ import annotations

from completion import fim
from completion.context import Context
from completion.fim import (AUTOMATIC_DECODERS, INVOKED_DECODERS, decide_at, decoders_for, hole_at,
                            hole_in_text, requests_for)
from completion.requests import build_request
from completion.settings import Settings
from completion.sources import TextSources
from completion.syntax import ParsedDocument
from engine.wire.protocol import (MAX_PATH_CHARS, MAX_PREFIX_CHARS, MAX_SNIPPET_TEXT_CHARS,
                                    MAX_SNIPPETS_TOTAL_CHARS, MAX_SUFFIX_CHARS, Item, Mode, Result, Snippet,
                                    Timings, encode)

URI = "file:///w/m.py"
TEXT = 'def f(x):\n    return g(x\n\ndef h():\n    s = "ab"\n'


def result(*texts: str) -> Result:
    return Result("r", [Item(text, 0.9, 3) for text in texts], Timings(0.0, 1.0, 2.0, 3.0), "done")


def test_a_hole_uses_the_tree_only_while_it_matches_the_text():
    document = ParsedDocument.parse("python", TEXT)
    cut = TEXT.index("g(x") + 3
    hole = hole_at(URI, TEXT[:cut], TEXT[cut:], document)
    assert hole.document is document and hole.language == "python"
    stale = hole_at(URI, "x = 1", "", document)
    assert stale.document is None and stale.language == "python"


def test_a_hole_in_text_parses_it_in_its_language():
    hole = hole_in_text(URI, TEXT[:5], TEXT[5:])
    assert hole.language == "python" and hole.document.text == TEXT and hole.document.tree
    assert hole_in_text("file:///w/m.txt", "a", "b", "go").document.language == "go"
    plain = hole_in_text("file:///w/notes.txt", "a", "b")
    assert plain.language is None and plain.document is None


def test_decide_at_sees_strings_through_the_tree():
    cut = TEXT.index('"ab') + 2
    hole = hole_at(URI, TEXT[:cut], TEXT[cut:], ParsedDocument.parse("python", TEXT))
    assert decide_at(hole, invoked=False, setting="auto") == "none"
    assert decide_at(hole, invoked=True, setting="auto") == "single_line"


def test_one_request_per_candidate_each_with_its_own_id_and_document_key():
    hole = hole_at(URI, "x = ", "\n")
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
    hole = hole_at(URI, "x = ", "\n")
    window = Context("x = ", "\n", [])
    requests = requests_for(hole, window, "abc", "single_line", Settings(), 700, INVOKED_DECODERS,
                            "c1:inline:" + URI)
    assert [r.session for r in requests] == ["c1:inline:" + URI, "c1:inline:" + URI + "-1"]
    assert requests_for(hole, window, "abc", "single_line", Settings(), 700,
                        AUTOMATIC_DECODERS)[0].session == ""




def test_finish_cleans_drops_repeats_and_puts_texts_that_parse_first():
    prefix, suffix = "def f(x):\n    return ", "\n"
    hole = hole_in_text(URI, prefix, suffix)
    texts = fim.finish(fim.Plan(hole, "single_line", None, []),
                       [result("(x + 1\nmore", " "), result("x + 1")], Settings())
    assert texts == ["x + 1", "(x + 1"]  # cut to a line, the blank one dropped, the unclosed last
    stale = hole_at(URI, prefix, suffix)  # no tree: kept in their order
    assert fim.finish(fim.Plan(stale, "single_line", None, []), [result("(x + 1", "(x + 1")],
                      Settings()) == ["(x + 1"]


def test_build_request_clips_the_context_next_to_the_cursor():
    prefix, suffix = "p" * (MAX_PREFIX_CHARS + 5) + "<", ">" + "s" * (MAX_SUFFIX_CHARS + 5)
    uri = "file:///" + "d" * MAX_PATH_CHARS
    request = build_request("r1", prefix, suffix, "single_line", 8, 20000, uri)
    assert len(request.prefix) == MAX_PREFIX_CHARS and request.prefix.endswith("<")
    assert len(request.suffix) == MAX_SUFFIX_CHARS and request.suffix.startswith(">")
    assert (request.kind, request.mode, request.max_tokens, request.deadline_ms) == ("fim", "single_line", 8, 20000)
    assert len(request.document) == MAX_PATH_CHARS
    assert encode(request)  # a valid message that fits in a frame



def test_text_sources_are_the_definitions_of_the_text_alone():
    text = "def far(a):\n    \"\"\"Far away.\"\"\"\n    return a\n\n\nx = far(1)\n"
    sources = TextSources.of(URI, ParsedDocument.parse("python", text), text)
    assert [d.name for d in sources.index.lookup("far")] == ["far"]
    assert list(sources.open_uris) == [URI] and list(sources.recent_edits) == []
    assert sources.text_of(URI) == text and sources.text_of("file:///w/other.py") is None
    assert TextSources.of(URI, None, text).index.lookup("far") == []


def test_plan_decides_first_and_asks_nothing_where_there_is_no_completion():
    text = "x = f(1)\n"
    hole = hole_in_text(URI, text[:4], text[4:])  # mid-line: `f(1)` is right of the cursor
    planned = fim.plan(hole, Settings(), None, "r1")
    assert planned.mode == "none" and planned.requests == [] and planned.hole is hole
    invoked = fim.plan(hole, Settings(), None, "r1", invoked=True, candidates=2)
    assert invoked.mode == "single_line" and [r.id for r in invoked.requests] == ["r1", "r1-1"]
    assert [r.decoder for r in invoked.requests] == [dict(d) for d in decoders_for(True, 2)]


def test_plan_sends_the_windows_the_mode_and_the_texts_own_definitions():
    body = "".join(f"    v{i} = {i}\n" for i in range(30))
    text = (f"def far_away(a):\n    \"\"\"Far.\"\"\"\n    return a\n\n\ndef main():\n{body}"
            "    if far_away(v1):\n        \n")
    cut = len(text) - 1
    settings = Settings(prefix_tokens=60, max_tokens=7, deadline_ms=900)
    planned = fim.plan(hole_in_text(URI, text[:cut], text[cut:]), settings, None, "r2")
    [request] = planned.requests
    assert planned.mode == request.mode == "multi_line"  # a blank line in a block just opened
    assert text[:cut].endswith(request.prefix) and len(request.prefix) < cut
    assert (request.max_tokens, request.deadline_ms, request.document) == (7, 900, URI)
    assert [s.text for s in request.snippets] == ['def far_away(a):\n    """Far."""']
    single = fim.plan(hole_in_text(URI, text[:cut], text[cut:]), Settings(mode="single_line"),
                      None, "r3")
    assert single.mode == "single_line"


def test_build_request_keeps_the_snippets_within_the_caps_highest_priorities_first():
    quarter = MAX_SNIPPETS_TOTAL_CHARS // 4
    snippets = [Snippet("a" * quarter, "a.py", 1), Snippet("b" * (MAX_SNIPPET_TEXT_CHARS + 9), "b.py", 5),
                Snippet("c" * quarter, "c.py", 3), Snippet("d" * quarter, "d.py", 4)]
    request = build_request("r1", "x = ", "", "single_line", 8, 1000, snippets=snippets)
    assert [(s.path, len(s.text)) for s in request.snippets] == [("b.py", MAX_SNIPPET_TEXT_CHARS),
                                                                 ("c.py", quarter), ("d.py", quarter)]
    assert sum(len(s.text) for s in request.snippets) <= MAX_SNIPPETS_TOTAL_CHARS
    assert encode(request)


def test_the_mode_auto_is_a_setting_and_a_change_back_to_it_is_taken():
    """VS Code offers `auto`; it used to be refused as not one of the wire's two modes, and a
    change from single_line back to auto silently kept single_line."""
    single, problems = Settings.from_options({"mode": "single_line"})
    assert single.mode == Mode.SINGLE_LINE and problems == []
    back, problems = Settings.from_options({"mode": "auto"}, single)
    assert back.mode == Mode.AUTO and problems == []
    _, problems = Settings.from_options({"mode": "none"}, single)
    assert problems and "auto, single_line, multi_line" in problems[0]


def test_plan_leaves_out_languages_the_user_did_not_name():
    hole = hole_in_text(URI, "def f():\n", "")
    assert fim.plan(hole, Settings(), None, "r", languages=["go", "rust"]).mode == Mode.NONE
    assert fim.plan(hole, Settings(), None, "r", languages=["python"]).requests


def test_within_gives_every_request_what_is_left_of_the_deadline():
    hole = hole_in_text(URI, "def f():\n", "")
    planned = fim.plan(hole, Settings(deadline_ms=1500), None, "r", invoked=True, candidates=2)
    assert [r.deadline_ms for r in fim.within(planned, 700).requests] == [700, 700]
    assert [r.deadline_ms for r in planned.requests] == [1500, 1500]
