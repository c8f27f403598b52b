"""Tests of completion.next_edit: regions to an edit job with their drafts, the job's answer (or
the drafts alone) back to edits, and the gate, without a model."""
from __future__ import annotations

import pytest

from completion import edit_checks, next_edit
from completion.edit_checks import compiles_as_far, failure_line
from completion.edit_events import EditEvent, diff_span
from completion.edit_regions import CURSOR, RENAME, Region
from completion.next_edit import (MAX_HOLE_TOKENS, MIN_CONFIDENCE, MODE, Drafting, Edit, EditAsk, Refused, answered,
                                  applied, edit_request, edits_from, hole_tokens)
from completion.positions import split_lines
from completion.syntax import ParsedDocument, error_count
from engine.wire.protocol import MAX_PREFIX_CHARS, MAX_SUFFIX_CHARS, Item

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


def edits_of(document: ParsedDocument, regions, items, event: EditEvent, cursor_line: int) -> list[Edit]:
    """The edits for a job's items over `regions` (no drafts)."""
    return edits_from(document, answered(regions, items), event, cursor_line)


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
    edits = edits_of(document(), REGIONS, items, EVENT, cursor_line=5)
    assert edits == [Edit(4, 5, "    return acc\n"), Edit(3, 4, "        acc += item\n")]
    assert applied(AFTER, edits) == BEFORE.replace("count", "acc")
    edits = edits_of(document(), REGIONS, items, EVENT, cursor_line=1)
    assert [edit.start_line for edit in edits] == [3, 4]


def test_unchanged_regions_are_dropped_up_to_trailing_whitespace():
    items = [item(0, "        count += item   \n\n"), item(1, "    return acc\n")]
    assert edits_of(document(), REGIONS, items, EVENT, 1) == [Edit(4, 5, "    return acc\n")]


def test_a_hole_below_the_confidence_gate_is_dropped():
    items = [item(0, "        acc += item\n", MIN_CONFIDENCE / 2), item(1, "    return acc\n")]
    assert edits_of(document(), REGIONS, items, EVENT, 1) == [Edit(4, 5, "    return acc\n")]


def test_an_edit_that_undoes_the_last_event_is_dropped():
    regions = [Region(1, 2, CURSOR), Region(4, 5, RENAME)]  # a region over the event's own line
    items = [item(0, "    count = 0\n"), item(1, "    return acc\n")]
    assert edits_of(document(), regions, items, EVENT, 1) == [Edit(4, 5, "    return acc\n")]


def test_an_edit_that_renames_the_new_name_back_is_dropped():
    after = AFTER + "    print(acc)\n"
    event = EditEvent("file:///t.py", BEFORE + "    print(acc)\n", after, diff_span(BEFORE, AFTER), 0.0)
    regions = [Region(4, 5, RENAME), Region(5, 6, CURSOR)]
    items = [item(0, "    return acc\n"), item(1, "    print(count)\n")]
    assert edits_of(document(after), regions, items, event, 1) == [Edit(4, 5, "    return acc\n")]


def test_a_set_of_edits_that_breaks_the_parse_is_dropped_whole():
    items = [item(0, "        acc += item\n"), item(1, "    return (acc\n")]
    assert edits_of(document(), REGIONS, items, EVENT, 1) == []


def test_a_document_without_a_tree_gets_no_edits():
    unparsed = document()
    unparsed.tree = None
    assert edits_of(unparsed, REGIONS, [item(1, "    return acc\n")], EVENT, 1) == []


def test_a_region_at_the_end_of_a_text_without_a_final_break_keeps_none():
    text = "a = 1\nb = a"
    event = EditEvent("file:///t.py", "a = 0\nb = a", text, diff_span("a = 0\nb = a", text), 0.0)
    request = edit_request("r1", text, [Region(1, 2, CURSOR)], 500)
    assert (request.prefix, request.holes[0].replaces, request.suffix) == ("a = 1\n", "b = a", "")
    edits = edits_of(document(text), [Region(1, 2, CURSOR)], [item(0, "b = a + 1\n")], event, 0)
    assert edits == [Edit(1, 2, "b = a + 1")]


def test_an_edit_keeps_the_blank_lines_that_end_its_region():
    text = AFTER + "\n\nprint(total([1]))\n"
    edits = edits_of(document(text), [Region(4, 7, CURSOR)], [item(0, "    return acc\n")], EVENT, 1)
    assert edits == [Edit(4, 7, "    return acc\n\n\n")]


def test_the_pipeline_plans_the_regions_job_and_finishes_with_the_edits():
    planned = next_edit.plan(EditAsk(document(), EVENT, 1, "r", 800, "file:///t.py", "s", [EVENT], Drafting.MODEL))
    assert planned.request is not None and not planned.drafts
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
    refused = next_edit.plan(EditAsk(document(broken), broken_event, 1, "r", 800))
    assert refused == Refused("the document does not parse")  # the gate's reason, for the caller to log
    assert next_edit.gate(document(), EVENT) is None


def test_drafted_regions_carry_their_drafts_and_stand_without_an_answer():
    planned = next_edit.plan(EditAsk(document(), EVENT, 1, "r", 800, "file:///t.py", "s", [EVENT]))
    assert planned.drafting == Drafting.DRAFTED and planned.request is not None
    drafted = [hole for hole in planned.request.holes if hole.draft]
    assert drafted and all("acc" in "".join(hole.draft) for hole in drafted if "count" in hole.replaces)
    renamed = BEFORE.replace("count", "acc")
    assert applied(AFTER, next_edit.finish(planned, [])) == renamed  # the worker gave nothing: drafts stand
    wrong = [item(index, hole.replaces.replace("count", "total_x")) for index, hole in enumerate(planned.request.holes)]
    assert applied(AFTER, next_edit.finish(planned, wrong)) != renamed  # an answer wins over its draft


def test_the_rules_alone_ask_nothing_and_give_the_drafts():
    planned = next_edit.plan(EditAsk(document(), EVENT, 1, "r", 800, drafting=Drafting.RULES))
    assert planned.request is None and planned.sent == []
    assert applied(AFTER, next_edit.finish(planned, [])) == BEFORE.replace("count", "acc")


def test_drafts_that_change_something_go_first_within_the_token_budget(monkeypatch):
    planned = next_edit.plan(EditAsk(document(), EVENT, 1, "r", 800))
    changing = [r for r in planned.regions if planned.drafts[r].changes]
    [region] = changing
    monkeypatch.setattr(next_edit, "DRAFT_TOKENS", next_edit.hole_tokens(planned.drafts[region].text))
    assert next_edit.draft_budget(planned.regions, planned.drafts) == [region]  # the nearer cursor region waits


def test_the_gate_waits_while_a_new_name_is_typed_but_not_for_a_rename_or_a_new_parameter():
    typing = AFTER.replace("    return count", "    ret = coun\n    return count")
    event = EditEvent("file:///t.py", AFTER, typing, diff_span(AFTER, typing), 0.0)
    assert next_edit.gate(document(typing), event) == "a name is still being typed"
    assert next_edit.gate(document(typing), event, settled=True) is None  # the user stopped: the word is whole
    assert next_edit.gate(document(), EVENT) is None  # a rename's new name is new by nature
    added = AFTER.replace("def total(items):", "def total(items, scale):")
    event = EditEvent("file:///t.py", AFTER, added, diff_span(AFTER, added), 0.0)
    assert next_edit.gate(document(added), event) is None


def test_a_builtin_or_a_keyword_ending_the_change_is_whole_as_typed():
    source = "def check(value):\n    if value < 0:\n        return 1 // 0\n"
    for new, wanted in (("        raise ZeroDivisionError", None), ("        raise ZeroDivisionErr",
                                                                    "a name is still being typed")):
        typed = source.replace("        return 1 // 0", new)
        event = EditEvent("file:///t.py", source, typed, diff_span(source, typed), 0.0)
        assert next_edit.gate(document(typed), event) == wanted


def test_a_linters_directive_ending_the_change_is_whole_as_typed_but_not_its_code_half_typed():
    source = "import os\nprint(os)\nimport sys\n"
    typing = "a name is still being typed"
    for new, wanted in (("import sys  # noqa: E402", None), ("import sys  # noqa: E40", typing),
                        ("import sys  # type: ignore", None), ("import sys  # type: ign", typing),
                        ("import sys  # nope", typing)):
        typed = source.replace("import sys", new)
        event = EditEvent("file:///t.py", source, typed, diff_span(source, typed), 0.0)
        assert next_edit.gate(document(typed), event) == wanted, new


def test_common_ends_bound_the_smallest_change():
    from completion.edit_events import common_ends
    assert common_ends("count = 0", "total = 0") == (0, 4)
    assert common_ends("aXa", "aa") == (1, 1)  # the shared end never overlaps the shared start
    assert common_ends("same", "same") == (4, 0)


def model_plan(text: str, event: EditEvent, cursor_line: int) -> next_edit.EditPlan:
    """The plan of a `model` next edit: every region masked whole, the model writes each."""
    planned = next_edit.plan(EditAsk(document(text), event, cursor_line, "r", 800, drafting=Drafting.MODEL))
    assert isinstance(planned, next_edit.EditPlan) and planned.request is not None
    return planned


@pytest.mark.parametrize("old, new", [
    ("    return count\n", "      return acc\n"),  # an unindent that matches no outer level
    ("        count += item\n", "\tacc += item\n"),  # a tab where the block indents with spaces
    ("    return count\n", "    acc += 0\n        return acc\n"),  # an unexpected indent
])
def test_a_model_edit_that_breaks_python_indentation_is_not_shown(old, new):
    """tree-sitter-python finds no error in these texts; CPython refuses them, and so does the guard."""
    planned = model_plan(AFTER, EVENT, 1)
    answers = [hole.replaces.replace(old, new).replace("count", "acc") for hole in planned.request.holes]
    assert any(old in hole.replaces for hole in planned.request.holes)
    items = [item(index, text) for index, text in enumerate(answers)]
    proposed = applied(AFTER, [Edit(r.start_line, r.end_line, text) for r, text in
                               zip(sorted(planned.sent, key=lambda r: r.start_line), answers)])
    assert error_count(document(proposed).tree) == 0 and failure_line(proposed) is not None
    assert next_edit.finish(planned, items) == []
    sound = [item(index, hole.replaces.replace("count", "acc")) for index, hole in enumerate(planned.request.holes)]
    assert applied(AFTER, next_edit.finish(planned, sound)) == BEFORE.replace("count", "acc")


def test_a_model_edit_may_not_delete_lines_that_its_draft_keeps():
    """After a comment edit, an answer that drops a whole function is no edit; one that changes
    the lines in place still is."""
    before = "# helpers for totals\ndef total(items):\n    return sum(items)\n\n\ndef mean(items):\n    return 0\n"
    after = before.replace("totals", "sums")
    event = EditEvent("file:///t.py", before, after, diff_span(before, after), 0.0)
    planned = model_plan(after, event, 0)
    [hole] = planned.request.holes
    assert hole.replaces.startswith("def total(items):\n") and hole.replaces.endswith("def mean(items):\n")
    assert next_edit.finish(planned, [item(0, "def mean(items):\n")]) == []
    rewritten = hole.replaces.replace("sum(items)", "sum(items, 0)")
    edits = next_edit.finish(planned, [item(0, rewritten)])
    assert applied(after, edits) == after.replace("sum(items)", "sum(items, 0)")


def test_python_that_already_fails_keeps_edits_that_fail_no_earlier():
    text = "x = 1\ny = 2\nz = 3\n  w = 4\n"  # CPython stops at line 3 (an unexpected indent)
    assert failure_line(text) == 3
    assert compiles_as_far(text, [Edit(0, 1, "x = 10\n")])  # above the failure, sound
    assert compiles_as_far(text, [Edit(0, 1, "x = 10\nv = 0\n")])  # the failure moves down with it
    assert not compiles_as_far(text, [Edit(1, 2, "  y = 2\n")])  # a new failure above it
    assert compiles_as_far(text, [Edit(3, 4, "w = 4\n")])  # the user's own error mended
    assert not compiles_as_far("a = 1\n", [Edit(0, 1, "a = (\n")])


@pytest.mark.parametrize("docstring", ["", '    """One\rline\rat a time."""\n'])  # a lone CR: rows are not lines
def test_only_the_top_level_statements_an_edit_touches_are_compiled(monkeypatch, docstring):
    """A big file costs what its edited statements do; a statement over the cap shows nothing."""
    functions = "".join(f"def f{i}(a):\n{docstring}    return a + {i}\n\n\n" for i in range(5000))
    text = functions + "def total(items):\n    acc = 0\n    return acc\n"
    compiled = []
    monkeypatch.setattr(edit_checks, "failure_line", lambda source: compiled.append(source) or None)
    last_line = len(split_lines(text)) - 2
    edit = Edit(last_line, last_line + 1, "    return acc + 1\n")
    assert edit_checks.compiling_edits(document(text), [edit]) == [edit]
    assert compiled == ["def total(items):\n    acc = 0\n    return acc\n",
                        "def total(items):\n    acc = 0\n    return acc + 1\n"]
    monkeypatch.setattr(edit_checks, "MAX_COMPILE_CHARS", 20)
    assert edit_checks.compiling_edits(document(text), [edit]) == []  # a function: its body alone would not compile


def test_a_class_over_the_cap_is_judged_by_the_methods_an_edit_touches(monkeypatch):
    methods = "".join(f"    def m{i}(self, a):\n        return a + {i}\n\n" for i in range(3000))
    text = f"class Big:\n{methods}    def total(self, items):\n        return sum(items)\n"
    line = len(split_lines(text)) - 2  # `return sum(items)`
    sound = Edit(line, line + 1, "        return sum(items) + 1\n")
    broken = Edit(line, line + 1, "        return sum(\n")
    compiled = []
    real = edit_checks.failure_line
    monkeypatch.setattr(edit_checks, "failure_line", lambda source: compiled.append(source) or real(source))
    assert len(text) > edit_checks.MAX_COMPILE_CHARS
    assert edit_checks.compiling_edits(document(text), [sound]) == [sound]
    assert compiled[0] == "if True:\n    def total(self, items):\n        return sum(items)\n"
    assert edit_checks.compiling_edits(document(text), [broken]) == []
    header = Edit(0, 1, "class Big(Base):\n")  # the class's own line: no statement of its body holds it
    assert edit_checks.compiling_edits(document(text), [header]) == []
