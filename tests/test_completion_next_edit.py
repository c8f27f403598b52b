"""Tests of completion.next_edit: regions to an edit job, the job's answer back to edits, without a
model."""
from __future__ import annotations

from completion.edit_events import EditEvent, diff_span
from completion import next_edit
from completion.edit_regions import CURSOR, RENAME, Region
from completion.next_edit import (MAX_HOLE_TOKENS, MIN_CONFIDENCE, MODE, Edit, applied, edit_request,
                                  edits_from, hole_tokens)
from completion.syntax import ParsedDocument
from engine.client.protocol import MAX_PREFIX_CHARS, MAX_SUFFIX_CHARS, Item

BEFORE = '''\
def total(items):
    count = 0
    for item in items:
        count += item
    return count
'''
AFTER = BEFORE.replace("    count = 0", "    acc = 0")  # the user renamed the local at line 1
EVENT = EditEvent("file:///t.py", BEFORE, AFTER, diff_span(BEFORE, AFTER), 0.0)
# the uses, given out of file order: the rule must sort them
REGIONS = [Region(4, 5, RENAME), Region(3, 4, RENAME)]


def document(text: str = AFTER) -> ParsedDocument:
    return ParsedDocument.parse("python", text)


def item(hole: int, text: str, confidence: float = 0.9) -> Item:
    return Item(text, confidence, 1, hole)


def test_request_holds_the_regions_in_file_order_with_their_text():
    request = edit_request("r1", AFTER, REGIONS, 500, "file:///t.py", "s")
    assert request.kind == "edit"
    assert [hole.replaces for hole in request.holes] == ["        count += item\n", "    return count\n"]
    assert all(hole.mode == MODE for hole in request.holes)
    assert request.prefix == "def total(items):\n    acc = 0\n    for item in items:\n"
    assert request.pieces == [""]  # the two regions touch
    assert request.suffix == ""
    pieces = [request.prefix, request.holes[0].replaces, *request.pieces,
              request.holes[1].replaces, request.suffix]
    assert "".join(pieces) == AFTER  # nothing lost or repeated between the regions
    assert (request.session, request.document, request.deadline_ms) == ("s", "file:///t.py", 500)


def test_pieces_between_separate_regions_and_budgets_from_the_region_size():
    request = edit_request("r1", AFTER, [Region(4, 5, RENAME), Region(0, 1, CURSOR)], 500)
    assert request.prefix == ""
    assert request.pieces == ["    acc = 0\n    for item in items:\n        count += item\n"]
    assert request.suffix == ""
    assert request.holes[0].max_tokens == hole_tokens("def total(items):\n")
    assert hole_tokens("x" * 100_000) == MAX_HOLE_TOKENS
    assert hole_tokens("a\n") < hole_tokens("a much longer line of code, with more tokens in it\n")


def test_no_request_without_regions_or_with_overlapping_ones():
    assert edit_request("r1", AFTER, [], 500) is None
    assert edit_request("r1", AFTER, [Region(1, 3, CURSOR), Region(2, 4, RENAME)], 500) is None


def test_no_request_when_the_text_between_two_regions_is_over_a_piece_cap():
    filler = "x = 1\n" * (MAX_PREFIX_CHARS // 6 + 1)  # one piece over its cap, the whole within the total's
    text = "a = 1\n" + filler + "b = 2\n"
    assert len(filler) > MAX_PREFIX_CHARS and len(text) < MAX_PREFIX_CHARS + MAX_SUFFIX_CHARS
    last = text.count("\n") - 1
    assert edit_request("r1", text, [Region(0, 1, CURSOR), Region(last, last + 1, RENAME)], 500) is None
    assert edit_request("r1", text, [Region(last, last + 1, RENAME)], 500) is not None  # the prefix is cut to its cap


def test_renamed_uses_become_edits_nearest_the_cursor_first():
    items = [item(0, "        acc += item\n"), item(1, "    return acc")]
    edits = edits_from(document(), REGIONS, items, EVENT, cursor_line=5)
    assert edits == [Edit(4, 5, "    return acc\n"), Edit(3, 4, "        acc += item\n")]
    assert applied(AFTER, edits) == BEFORE.replace("count", "acc")
    edits = edits_from(document(), REGIONS, items, EVENT, cursor_line=1)
    assert [edit.start_line for edit in edits] == [3, 4]


def test_unchanged_regions_are_dropped_up_to_trailing_whitespace():
    items = [item(0, "        count += item   \n\n"), item(1, "    return acc\n")]
    assert edits_from(document(), REGIONS, items, EVENT, 1) == [Edit(4, 5, "    return acc\n")]


def test_a_hole_below_the_confidence_gate_is_dropped():
    items = [item(0, "        acc += item\n", MIN_CONFIDENCE / 2), item(1, "    return acc\n")]
    assert edits_from(document(), REGIONS, items, EVENT, 1) == [Edit(4, 5, "    return acc\n")]


def test_an_edit_that_undoes_the_last_event_is_dropped():
    regions = [Region(1, 2, CURSOR), Region(4, 5, RENAME)]  # a region over the event's own line
    items = [item(0, "    count = 0\n"), item(1, "    return acc\n")]
    assert edits_from(document(), regions, items, EVENT, 1) == [Edit(4, 5, "    return acc\n")]


def test_an_edit_that_renames_the_new_name_back_is_dropped():
    after = AFTER + "    print(acc)\n"
    event = EditEvent("file:///t.py", BEFORE + "    print(acc)\n", after, diff_span(BEFORE, AFTER), 0.0)
    regions = [Region(4, 5, RENAME), Region(5, 6, CURSOR)]
    items = [item(0, "    return acc\n"), item(1, "    print(count)\n")]
    assert edits_from(document(after), regions, items, event, 1) == [Edit(4, 5, "    return acc\n")]


def test_a_set_of_edits_that_breaks_the_parse_is_dropped_whole():
    items = [item(0, "        acc += item\n"), item(1, "    return (acc\n")]
    assert edits_from(document(), REGIONS, items, EVENT, 1) == []


def test_a_document_without_a_tree_gets_no_edits():
    unparsed = document()
    unparsed.tree = None
    assert edits_from(unparsed, REGIONS, [item(1, "    return acc\n")], EVENT, 1) == []


def test_a_region_at_the_end_of_a_text_without_a_final_break_keeps_none():
    text = "a = 1\nb = a"
    event = EditEvent("file:///t.py", "a = 0\nb = a", text, diff_span("a = 0\nb = a", text), 0.0)
    request = edit_request("r1", text, [Region(1, 2, CURSOR)], 500)
    assert (request.prefix, request.holes[0].replaces, request.suffix) == ("a = 1\n", "b = a", "")
    edits = edits_from(document(text), [Region(1, 2, CURSOR)], [item(0, "b = a + 1\n")], event, 0)
    assert edits == [Edit(1, 2, "b = a + 1")]


def test_an_edit_keeps_the_blank_lines_that_end_its_region():
    text = AFTER + "\n\nprint(total([1]))\n"
    edits = edits_from(document(text), [Region(4, 7, CURSOR)], [item(0, "    return acc\n")], EVENT, 1)
    assert edits == [Edit(4, 7, "    return acc\n\n\n")]


def test_the_pipeline_plans_the_regions_job_and_finishes_with_the_edits():
    planned = next_edit.plan(document(), EVENT, 1, "r", 800, "file:///t.py", "s", [EVENT])
    assert planned is not None and planned.request is not None
    assert any(r.start_line <= 3 and 4 < r.end_line for r in planned.regions)  # both old uses
    assert planned.request.events and planned.request.deadline_ms == 800
    assert next_edit.within(planned, 120).request.deadline_ms == 120
    items = [item(index, hole.replaces.replace("count", "acc"))
             for index, hole in enumerate(planned.request.holes)]
    assert applied(AFTER, next_edit.finish(planned, items)) == BEFORE.replace("count", "acc")


def test_the_gate_refuses_a_text_that_does_not_parse_an_old_event_or_no_tree():
    broken = AFTER.replace("for item in items:", "for item in items")
    assert next_edit.gate(document(broken), EVENT) == "no edit event of this text yet"
    broken_event = EditEvent("file:///t.py", BEFORE, broken, diff_span(BEFORE, broken), 0.0)
    assert next_edit.gate(document(broken), broken_event) == "the document does not parse"
    assert next_edit.gate(None, EVENT) and next_edit.gate(document(), None)
    unparsed = document()
    unparsed.tree = None
    assert next_edit.gate(unparsed, EVENT) == "the document has no tree"
    assert next_edit.plan(document(broken), broken_event, 1, "r", 800) is None
    assert next_edit.gate(document(), EVENT) is None
