"""Tests of bench.next_edit and its scores: exact match, changed-line precision and recall, false
edits and region recall on small hand-made tasks; the mechanical rename; the client's change and
edits; the figures over tasks; and one short real run against a fake worker that renames."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
from lsprotocol import types

import fake_worker
from bench.next_edit import (DRAFTED, MECHANICAL, MODEL, RULES, Reply, TaskResult, apply_edits,
                             load_edit_tasks, row, server_answers, server_regions, user_change,
                             user_event)
from bench.next_edit_scores import (covered, event_of, line_changes, mechanical_rename, region_recall,
                                    score, sites)
from completion.edit_events import diff_span
from completion.edit_regions import CURSOR, RENAME, Region
from completion.syntax import ParsedDocument
from infill.paths import REPO_ROOT

EDITED = "a\nb\nc\nd\ne\n"
EXPECTED = "a\nB\nc\nD\ne\n"  # lines 1 and 3 must change


def test_an_answer_that_makes_expected_is_exact_up_to_trailing_whitespace():
    right = score(EDITED, EXPECTED, "a\nB  \nc\nD\ne\n")
    assert right.exact and right.changed
    assert (right.predicted_lines, right.expected_lines, right.correct_lines, right.false_lines) == (2, 2, 2, 0)
    assert not score(EDITED, EXPECTED, "a\nB\nc\nd\ne\n").exact


def test_changed_lines_count_right_wrong_and_false_edits():
    found = score(EDITED, EXPECTED, "A\nB\nc\nX\ne\n")  # line 0 is a false edit, line 3 is wrong
    assert not found.exact
    assert (found.predicted_lines, found.expected_lines, found.correct_lines, found.false_lines) == (3, 2, 1, 1)
    missed = score(EDITED, EXPECTED, EDITED)  # no edit at all: nothing right, nothing false
    assert (missed.changed, missed.predicted_lines, missed.correct_lines, missed.false_lines) == (False, 0, 0, 0)


def test_on_a_negative_any_change_is_a_false_edit():
    assert score(EDITED, EDITED, EDITED).exact
    found = score(EDITED, EDITED, "a\nb\nc\nd\nE\n")
    assert found.changed and found.false_lines == 1 and found.expected_lines == 0 and not found.exact


def test_insertions_and_uneven_hunks_are_changed_lines_of_their_own():
    assert line_changes("a\nb\n", "a\nx\nb\n") == {(1, True): (1, 1, ("x",))}
    assert line_changes("a\nb\nc\n", "a\nbc\n") == {(1, False): (1, 3, ("bc",)), (2, False): (1, 3, ("bc",))}
    inserted = score("a\nb\n", "a\nx\nb\n", "a\nx\nb\n")
    assert inserted.exact and inserted.correct_lines == inserted.expected_lines == 1
    elsewhere = score("a\nb\n", "a\nx\nb\n", "x\na\nb\n")  # the right line at the wrong place
    assert (elsewhere.correct_lines, elsewhere.false_lines) == (0, 1)


def test_region_recall_counts_the_sites_inside_the_regions():
    assert sites(EDITED, EXPECTED) == [(1, 2), (3, 4)]
    assert region_recall(EDITED, EXPECTED, [Region(0, 3, CURSOR)]) == (1, 2)
    assert region_recall(EDITED, EXPECTED, [Region(0, 2, CURSOR), Region(3, 4, RENAME)]) == (2, 2)
    assert region_recall(EDITED, EDITED, [Region(0, 3, CURSOR)]) == (0, 0)
    assert not covered((1, 3), [Region(0, 2, CURSOR)])  # a site must lie wholly inside
    assert covered((2, 2), [Region(1, 2, RENAME)]) and covered((2, 2), [Region(2, 3, RENAME)])
    assert not covered((2, 2), [Region(3, 5, RENAME)])


SOURCE = '''\
def tally(items):
    count = 0
    for item in items:
        count += item
    return count


def other():
    count = 1
    return count


class Box:
    def fill(self):
        self.count = 2
'''


def test_the_mechanical_rename_follows_the_scope_of_the_name():
    edited = SOURCE.replace("    count = 0", "    total = 0")
    event = event_of(SOURCE, edited, diff_span(SOURCE, edited))
    renamed = mechanical_rename(event, ParsedDocument.parse("python", edited))
    head, tail = SOURCE.split("def other")
    assert renamed == head.replace("count", "total") + "def other" + tail  # not other's, not the attribute
    comment = SOURCE.replace("def tally(items):", "def tally(items):  # sums")
    nothing = event_of(SOURCE, comment, diff_span(SOURCE, comment))
    assert mechanical_rename(nothing, ParsedDocument.parse("python", comment)) == comment


def test_the_regions_are_the_servers_after_the_users_change_and_none_where_it_does_not_parse():
    edited = SOURCE.replace("    count = 0", "    total = 0")
    event = user_event(SOURCE, edited, *user_change(SOURCE, edited))
    assert (event.start_line, event.before_end, event.after_end) == (1, 2, 2)
    regions = server_regions(event, "python", 1)
    assert {line for region in regions for line in range(region.start_line, region.end_line)} >= {3, 4}
    assert all(not region.start_line <= 1 < region.end_line for region in regions)  # not the edit's own line
    broken = edited + "def (\n"
    assert server_regions(user_event(SOURCE, broken, *user_change(SOURCE, broken)), "python", 1) == []
    assert server_regions(event, None, 1) == []


def test_the_users_change_is_the_smallest_range_and_edits_apply_in_utf16():
    original, edited = "x = 1\ns = '\U0001F600a'\ny = 2\n", "x = 1\ns = '\U0001F600bc'\ny = 2\n"
    where, text = user_change(original, edited)
    assert (where.start, where.end, text) == (types.Position(line=1, character=7),
                                              types.Position(line=1, character=8), "bc")
    as_lsp = {"line": where.start.line, "character": where.start.character}
    edit = {"range": {"start": as_lsp, "end": {"line": 1, "character": 8}}, "text": text}
    assert apply_edits(original, [edit]) == edited
    whole_lines = [{"range": {"start": {"line": 2, "character": 0}, "end": {"line": 3, "character": 0}},
                    "text": "y = 3\n"},
                   {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}},
                    "text": "x = 0\n"}]
    assert apply_edits(original, whole_lines) == "x = 0\ns = '\U0001F600a'\ny = 3\n"
    with pytest.raises(ValueError, match="outside the document"):
        apply_edits(original, [{"range": {"start": {"line": 9, "character": 0},
                                          "end": {"line": 9, "character": 0}}, "text": "z"}])


def test_the_servers_answers_come_from_its_log_with_the_jobs_the_worker_missed():
    log = ("2025-01-01 10:00:00,000 WARNING completion.next_edit [a1] no next edit: no reply within 2.0 s\n"
           "2025-01-01 10:00:00,010 INFO lsp_server.inline_edit [a1] next edit: 2 edits in 812.5 ms\n"
           "2025-01-01 10:00:00,100 INFO lsp_server.server [-] settings: ...\n"
           "2025-01-01 10:00:00,200 INFO lsp_server.inline_edit [a2] no next edit in file:///a.py: the "
           "document does not parse\n"
           "2025-01-01 10:00:01,000 INFO lsp_server.inline_edit [a2] next edit: 0 edits in 3.0 ms\n")
    assert server_answers(log) == [(812.5, 1), (3.0, 0)]


def result(kind: str, edited: str, expected: str, drafted: str, model: str, ms: tuple[float, float],
           mechanical: str | None = None, rules: str | None = None) -> TaskResult:
    found = TaskResult(kind, kind, edited, expected, *region_recall(edited, expected, [Region(0, 2, CURSOR)]))
    found.replies = {DRAFTED: Reply(drafted, 1, ms[0] + 1, ms[0]), MODEL: Reply(model, 1, ms[1] + 1, ms[1]),
                     RULES: Reply(edited if rules is None else rules, 0, 1.0, 0.5)}
    found.mechanical = mechanical
    return found


def test_a_row_scores_every_side_the_models_part_and_the_baseline():
    results = [result("rename_local", EDITED, EXPECTED, EXPECTED, EDITED, (100.0, 300.0), EXPECTED),
               result("negative_literal", EDITED, EDITED, "a\nb\nc\nd\nE\n", EDITED, (100.0, 100.0))]
    figures = row(results)
    assert (figures["tasks"], figures["negatives"]) == (2, 1)
    assert (figures["region_recall"], figures["regions_cover_all"]) == (0.5, 0.0)
    drafted, model, rules = figures[DRAFTED], figures[MODEL], figures[RULES]
    assert (drafted["exact"], drafted["precision"], drafted["recall"]) == (0.5, 0.6667, 1.0)
    assert (drafted["false_edit_tasks"], drafted["false_edits_negatives"]) == (0.5, 1.0)
    assert (model["exact"], model["precision"]) == (0.5, None)
    assert (model["recall"], model["false_edits_negatives"]) == (0.0, 0.0)
    assert (rules["exact"], rules["recall"]) == (0.5, 0.0)
    assert (drafted["server_p50_ms"], model["server_p95_ms"], drafted["client_p50_ms"]) == (100.0, 290.0, 101.0)
    # drafted changed the rename task's changed lines (right) and the negative's last line (wrong)
    lines = sum(a != b for a, b in zip(EDITED.splitlines(), EXPECTED.splitlines()))
    assert figures["model_part"] == {"lines_changed": lines + 1, "right": lines,
                                     "right_rate": round(lines / (lines + 1), 4)}
    assert figures[MECHANICAL] == {"exact": 1.0, "precision": 1.0, "recall": 1.0, "false_edit_tasks": 0.0,
                                   "false_edits_negatives": None}  # over the rename task alone


def test_tasks_are_checked_for_the_next_edit_format(tmp_path):
    good = {"task_id": "t", "path": "a.py", "original": "a\n", "edited": "b\n", "cursor": 1,
            "expected": "b\n", "kind": "negative_literal"}
    path = tmp_path / "tasks.jsonl"
    path.write_text(json.dumps(good) + "\n\n")
    assert load_edit_tasks(path) == [good]
    for bad in ({**good, "cursor": 5}, {**good, "cursor": "1"}, {k: v for k, v in good.items() if k != "edited"}):
        path.write_text(json.dumps(bad) + "\n")
        with pytest.raises(ValueError, match="not a next-edit task"):
            load_edit_tasks(path)


MARKED = '''\
# fake-rename: count total
import os


def tally(items):
    count = 0
    for item in items:
        count += item
    a = 1
    b = 2
    c = 3
    d = 4
    return count
'''


def fake_tasks(noted: bool = False) -> list[dict]:
    """A rename made at every use, and a negative whose regions the fake worker keeps. `noted`:
    the rename expected as the fake worker makes it, each line noted (`fake_worker.WORKER_NOTE`,
    which the drafts never write: only a side that asks the worker can be exact); else as the
    drafts make it."""
    edited = MARKED.replace("    count = 0", "    total = 0")
    marker, code = edited.split("\n", 1)
    renamed = fake_worker.renamed(code, "count", "total") if noted else code.replace("count", "total")
    expected = marker + "\n" + renamed
    rename = {"task_id": "rename", "path": "pkg/tally.py", "original": MARKED, "edited": edited,
              "cursor": edited.index("total = 0") + 5, "expected": expected, "kind": "rename_local"}
    kept = MARKED.replace("count total", "zzz yyy")
    negative = kept.replace("    a = 1", "    a = 10")
    return [rename, {"task_id": "negative", "path": "pkg/tally.py", "original": kept, "edited": negative,
                     "cursor": negative.index("a = 10") + 6, "expected": negative, "kind": "negative_literal"}]


@pytest.mark.slow
@pytest.mark.timeout(200)
def test_a_short_run_against_a_fake_worker_scores_both_sides(tmp_path, fake_worker_at):
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(json.dumps(task) + "\n" for task in fake_tasks(noted=True)))
    process = subprocess.run([sys.executable, "-m", "bench.next_edit", "--tasks", str(tasks),
                              "--worker", fake_worker_at, "--deadline-ms", "20000", "--json"],
                             cwd=REPO_ROOT, capture_output=True, text=True, timeout=180)
    assert process.returncode == 0, process.stderr[-3000:]
    figures = json.loads(process.stdout.strip().splitlines()[-1])
    assert "overall | 2 |" in process.stdout and figures["tasks"] == 2
    overall = figures["overall"]
    assert (overall["region_recall"], overall["negatives"]) == (1.0, 1)
    for side in (RULES, MODEL, DRAFTED):
        assert overall[side]["exact"] == (0.5 if side == RULES else 1.0)  # the drafts lack the worker's note
        assert overall[side]["false_edits_negatives"] == 0.0
        assert overall[side]["answers_with_edits"] == 1 and overall[side]["server_p50_ms"] is not None
        assert overall[side]["answers_missing_a_job"] == 0.0
    assert overall["model_part"] == {"lines_changed": 2, "right": 2, "right_rate": 1.0}  # the two renamed uses
    assert figures["renames"][MECHANICAL]["exact"] == 0.0 and figures["renames"][DRAFTED]["exact"] == 1.0
    assert set(figures["by_kind"]) == {"rename_local", "negative_literal"}
