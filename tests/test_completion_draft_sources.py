"""Completion drafts from the user's own code (issue 38): the token index and the lookup."""
from __future__ import annotations

import numpy as np

from completion import draft_sources
from completion.draft_corpus import DraftCorpus, Segment, key_tokens, token_bounds
from completion.draft_sources import Key, candidates, drafts_for, ranked, with_slots
from engine.client.protocol import Mode

SINGLE, MULTI = Mode.SINGLE_LINE, Mode.MULTI_LINE

MODULE = '''import json


def load_settings(path, defaults):
    with open(path, encoding="utf-8") as handle:
        values = json.load(handle)
    return {**defaults, **values}


def load_rules(path, defaults):
    with open(path, encoding="utf-8") as handle:
'''


def test_tokens_ignore_horizontal_space_and_keep_line_breaks():
    data = b"f(a,  b)\n\tx_1 = 2"
    starts, ends = token_bounds(data)
    assert [data[s:e] for s, e in zip(starts, ends)] == [b"f", b"(", b"a", b",", b"b", b")", b"\n",
                                                          b"x_1", b"=", b"2"]
    assert np.array_equal(key_tokens(b"f(a,b)"), key_tokens(b"f( a , b )"))


def test_a_line_start_drafts_what_followed_the_same_lines_in_the_document():
    drafts = drafts_for(MODULE, "\n    return values\n", SINGLE)
    assert drafts[0].text == "        values = json.load(handle)"
    assert drafts[0].source == "document" and drafts[0].distance > 0 and drafts[0].agreement == 1


def test_a_word_typed_is_continued_and_the_typed_indent_is_not_repeated():
    assert drafts_for(MODULE + "        values = json.lo", "\n", SINGLE)[0].text == "ad(handle)"
    assert drafts_for(MODULE + "        ", "\n", SINGLE)[0].text == "values = json.load(handle)"


def test_spacing_differences_still_match_and_the_text_is_copied_as_written():
    typed = MODULE.replace('open(path, encoding="utf-8")', 'open( path,encoding = "utf-8" )')
    assert drafts_for(typed, "", SINGLE)[0].text == "        values = json.load(handle)"


def test_a_multi_line_draft_is_the_block_and_stops_before_the_documents_next_line():
    module = MODULE.replace("json.load(handle)", "json.load(handle)\n        values.pop(None, None)")
    drafts = drafts_for(module, "\n", MULTI)
    assert drafts[0].text == ("        values = json.load(handle)\n        values.pop(None, None)\n"
                              "    return {**defaults, **values}")  # one level out is still the function
    stopped = drafts_for(module, "\n        values.pop(None, None)\n", MULTI)
    assert stopped[0].text == "        values = json.load(handle)"
    header = "    if value is not None and other_value is not None:\n"
    nested = "def a():\n" + header + "        y = 1\nz = 2\n\n\ndef b():\n" + header
    assert drafts_for(nested, "", MULTI)[0].text == "        y = 1"  # two levels out is not


def test_a_draft_that_repeats_the_rest_of_the_line_leaves_it_out():
    drafts = drafts_for(MODULE + "        values = json.load(", ")\n", SINGLE)
    assert drafts[0].text == "handle"


def test_a_short_key_drafts_nothing():
    assert drafts_for("x = 1\ny = 2\nx = ", "", SINGLE) == []
    assert drafts_for("", "", SINGLE) == []


def test_no_drafts_for_mode_none_or_a_document_over_the_size_cap():
    assert drafts_for(MODULE, "", Mode.NONE) == []
    huge = MODULE * (draft_sources.MAX_DOCUMENT_CHARS // len(MODULE) + 1)
    assert drafts_for(huge, "", SINGLE) == []


def test_other_files_through_the_corpus_with_their_source():
    corpus = DraftCorpus()
    corpus.put("file:///a.py", MODULE + "        values = yaml.safe_load(handle)\n", source="open")
    drafts = drafts_for("def load_rules(path, defaults):\n    with open(path, encoding=\"utf-8\") as handle:\n",
                        "", SINGLE, corpus)
    assert [(d.text, d.source, d.distance) for d in drafts] == [
        ("        values = yaml.safe_load(handle)", "open", 0), ("        values = json.load(handle)", "open", 0)]
    assert [(d.agreement, d.occurrences) for d in drafts] == [(1, 1), (1, 2)]  # the longer key first


def test_agreement_and_nearness_rank_drafts_of_the_same_key():
    line = "    result = compute_total(items, discount, rate)\n"
    corpus = DraftCorpus()
    corpus.put("b", "\n" + line.replace("rate", "tax") * 2)
    corpus.put("c", "\n" + line)
    typed = "def f():\n    result = compute_total(items, discount, "
    key = Key.of(typed)
    drafts = [draft for _, draft in ranked(candidates(typed, "", SINGLE, key, corpus, ()), key)]
    assert [(d.text, d.agreement, d.occurrences) for d in drafts] == [("tax)", 2, 3), ("rate)", 1, 3)]
    assert drafts_for(typed, "", SINGLE, corpus) == []  # they disagree on every token: no draft
    nearer = "def g():\n" + line + "\n" + typed
    key = Key.of(nearer)
    drafts = [draft for _, draft in ranked(candidates(nearer, "", SINGLE, key, corpus, ()), key)]
    assert [(d.text, d.source, d.agreement) for d in drafts] == [("rate)", "document", 1), ("tax)", "workspace", 2)]
    assert drafts[0].distance == len(nearer) - len("def g():\n" + line[:line.index(", rate") + 1])


def test_occurrences_that_differ_in_a_few_tokens_make_a_draft_with_slots():
    corpus = DraftCorpus()
    corpus.put("a", "def make_json(*args, **kwargs):\n    res = converter_for(Json, *args, **kwargs)\n")
    corpus.put("b", "def make_json(*args, **kwargs):\n    res = converter_for(Orjson, *args, **kwargs)\n")
    drafts = drafts_for("def make_json(*args, **kwargs):\n    res = ", "", SINGLE, corpus)
    assert len(drafts) == 1 and drafts[0].agreement == 1 and drafts[0].occurrences == 2
    assert drafts[0].pieces == ("converter_for(", ", *args, **kwargs)") and drafts[0].slots == (3,)
    assert with_slots("@wrap(MsgpackConverter)", "@wrap(Cbor2Converter)") == (("@wrap(", ")"), (6,))
    assert with_slots("f(a, b)", "f(a, b, c)") == (("f(a, b", ")"), (2,))
    assert with_slots("x = 1", "y = 1") is None  # masked from the start
    assert with_slots("f(a, b, c, d)", "g(w, x, y, z)") is None  # too many places


def test_accepted_completions_are_a_source():
    accepted = ["response = session.post(url, json=payload, timeout=timeout)"]
    typed = "def send(url, payload):\n    response = session.post(url, json=payload, timeout="
    drafts = drafts_for(typed, "", SINGLE, accepted=accepted)
    assert drafts[0].text == "timeout)" and drafts[0].source == "accepted"


def test_the_corpus_stays_within_its_caps_and_replaces_a_files_text():
    corpus = DraftCorpus(max_files=2, max_bytes=100)
    assert corpus.put("a", "x" * 40) and corpus.put("b", "y" * 40)
    assert not corpus.put("c", "z")  # a third file
    assert not corpus.put("a", "x" * 70)  # 110 bytes in all
    assert corpus.put("a", "x" * 50) and corpus.text_bytes == 90 and len(corpus) == 2
    corpus.remove("a")
    assert corpus.text_bytes == 40 and "a" not in corpus and corpus.put("c", "z")


def test_a_snapshot_excluding_a_name_does_not_see_later_changes():
    corpus = DraftCorpus()
    corpus.put("a", MODULE)
    corpus.put("b", MODULE)
    snapshot = corpus.excluding("a")
    corpus.put("c", MODULE)
    assert len(snapshot) == 1 and "b" in snapshot and "a" not in snapshot
    assert len(corpus) == 3


def test_segments_take_any_text():
    for text in ("", "\n", "\x00\x01", "é" * 3, "\ud800 lone surrogate", "a" * 10):
        segment = Segment.of(text)
        assert len(segment.tokens) == len(segment.ends)
    assert drafts_for("\x00\x01\x02 é \ud800", "\x00", SINGLE) == []
