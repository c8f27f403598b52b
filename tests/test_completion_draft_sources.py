"""Completion drafts from the user's own code (issue 38): the token index and the lookup."""
from __future__ import annotations

import numpy as np

from completion import draft_sources
from completion.draft_corpus import DraftCorpus, Segment, key_tokens, token_bounds
from completion.draft_sources import Key, candidates, drafts_for, ranked, with_slots
from engine.wire.protocol import Mode

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
        assert len(segment.sorted_windows) == len(segment.checks) == len(segment.order)
        assert all(segment.token_end(t, 0) <= len(segment.data) for t in range(len(segment.order)))
    assert drafts_for("\x00\x01\x02 é \ud800", "\x00", SINGLE) == []


def test_packed_texts_are_found_as_loose_ones_are_and_replaced_or_removed_ones_are_not():
    corpus = DraftCorpus()
    corpus.put("a", "x = 1\n" + MODULE)
    corpus.put("b", "values = yaml.safe_load(handle)\n" + MODULE.replace("json.load", "json.loads"))
    corpus.put("c", MODULE + "        values = toml.load(handle)\n")
    typed = "def load_rules(path, defaults):\n    with open(path, encoding=\"utf-8\") as handle:\n"
    key = key_tokens(typed.encode())
    loose = sorted((o.name, o.after(40), o.key_tokens) for o in corpus.occurrences(key))
    corpus.join_all()
    assert sorted((o.name, o.after(40), o.key_tokens) for o in corpus.occurrences(key)) == loose
    assert corpus.held("b")[0].startswith("values = yaml") and len(corpus) == 3
    corpus.put("c", "nothing alike\n")
    corpus.remove("a")
    assert {o.name for o in corpus.occurrences(key)} == {"b"}
    assert {o.name for o in corpus.excluding("b").occurrences(key)} == set()
    assert corpus.held("a") is None and corpus.held("c") == ("nothing alike\n", "workspace")


def test_a_key_is_not_extended_into_the_text_packed_before_it():
    corpus = DraftCorpus()
    corpus.put("a", "alpha beta gamma delta\n")
    corpus.put("b", "epsilon zeta eta theta iota\n")
    corpus.join_all()
    found = list(corpus.occurrences(key_tokens(b"gamma delta\nepsilon zeta eta theta")))
    assert [(o.name, o.key_tokens, o.after(10), o.before(100)) for o in found] == [
        ("b", 4, b" iota\n", b"epsilon zeta eta theta")]


def test_many_puts_are_packed_and_the_caps_still_hold():
    corpus = DraftCorpus(max_files=500, max_bytes=1 << 20)
    for index in range(300):
        assert corpus.put(f"f{index}", MODULE.replace("load_rules", f"load_{index}"))
    assert len(corpus._segments) <= 40  # joined as they came, not 300 segments to search
    for index in range(0, 300, 7):
        corpus.put(f"f{index}", "replaced\n")
    assert corpus.held("f7") == ("replaced\n", "workspace") and corpus.held("f8")[0].startswith("import json")
    found = list(corpus.occurrences(key_tokens(b"def load_8(path, defaults):\n    with")))
    assert max(found, key=lambda o: o.key_tokens).name == "f8" and {o.name for o in found} <= set(corpus.names)
    assert "f7" not in {o.name for o in corpus.occurrences(key_tokens(b"def load_7(path, defaults):\n    with"))}
    sizes = [len("replaced\n") if i % 7 == 0 else len(MODULE.replace("load_rules", f"load_{i}")) for i in range(300)]
    assert len(corpus) == 300 and corpus.text_bytes == sum(sizes)


def test_a_tokens_end_is_found_again_from_its_anchor_in_packed_texts():
    texts = [("a", "", ("word " * 40).encode()), ("b", "", b"tail"), ("c", "", "é(x, y)\n  z".encode() * 9)]
    pack = Segment.joined([Segment.of(data.decode(), name) for name, _, data in texts], lambda s, i: True)
    offset = 0
    for index, (_, _, data) in enumerate(texts):
        _, ends = token_bounds(data)
        first = int(pack.first_tokens[index])
        assert [pack.token_end(first + t, index) for t in range(len(ends))] == [offset + int(e) for e in ends]
        offset += len(data)
