"""Tests of lsp_server.inline_edit's parts without a server: reading raw params, the ranges of
edits, and the jobs of the one-region-per-request setting (`jointRegions` false) against a stub."""
from __future__ import annotations

from types import SimpleNamespace

from completion.edit_events import EditEvent, LineSpan
from completion.edit_regions import RENAME, Region
from completion.next_edit import Edit, edits_from
from completion.syntax import ParsedDocument
from engine.client.protocol import Item
from lsp_server.inline_edit import edit_range, one_by_one, request_of
from lsp_server.settings import ServerSettings


def test_params_are_read_from_maps_and_bad_ones_give_none():
    good = {"textDocument": {"uri": "file:///a.py", "version": 3}, "position": {"line": 4, "character": 1}}
    assert request_of(good) == ("file:///a.py", 3, 4)
    assert request_of(None) is None
    assert request_of({}) is None
    assert request_of({**good, "position": {"line": "4", "character": 1}}) is None
    assert request_of({**good, "position": {"line": True, "character": 1}}) is None
    assert request_of({**good, "textDocument": {"uri": "file:///a.py"}}) is None


def test_ranges_cover_whole_lines_and_the_last_line_to_its_end_in_the_encoding():
    text = "a\nb\nc = '\U0001F600'"
    assert edit_range(text, Edit(1, 2, "B\n"), "utf-16") == {
        "start": {"line": 1, "character": 0}, "end": {"line": 2, "character": 0}}
    assert edit_range(text, Edit(2, 3, "c"), "utf-16")["end"] == {"line": 2, "character": 8}
    assert edit_range(text, Edit(2, 3, "c"), "utf-8")["end"] == {"line": 2, "character": 10}


class RenamingWorker:
    """Answers each job's one hole with its text renamed; the first job's answer gains a line."""

    def __init__(self) -> None:
        self.requests = []

    async def complete(self, request):
        self.requests.append(request)
        [hole] = request.holes
        extra = "    # moved\n" if len(self.requests) == 1 else ""
        return SimpleNamespace(items=[Item(extra + hole.replaces.replace("count", "total"), 0.9, 1)])


TEXT = "def f(total):\n    a = count\n    b = 2\n    c = 3\n    return count\n"


async def test_one_job_per_region_in_turn_each_seeing_the_edits_before_it():
    worker, ls = RenamingWorker(), SimpleNamespace(settings=ServerSettings(deadline_ms=700), client_id="c")
    regions = [Region(4, 5, RENAME), Region(1, 2, RENAME)]  # nearest the cursor first
    items = await one_by_one(ls, worker, TEXT, regions, "file:///f.py")
    assert [len(request.holes) for request in worker.requests] == [1, 1]
    assert [request.deadline_ms for request in worker.requests] == [700, 700]  # each its own deadline
    first, second = worker.requests
    assert first.holes[0].replaces == "    return count\n"
    assert second.holes[0].replaces == "    a = count\n" and "# moved" in second.suffix
    assert [(item.hole, item.text) for item in items] == [
        (1, "    # moved\n    return total\n"), (0, "    a = total\n")]  # holes in file order
    document = ParsedDocument.parse("python", TEXT)
    event = EditEvent("file:///f.py", TEXT.replace("f(total)", "f(count)"), TEXT, LineSpan(0, 1, 1), 0.0)
    edits = edits_from(document, sorted(regions, key=lambda r: r.start_line), items, event, 0)
    assert sorted((e.start_line, e.new_text) for e in edits) == [
        (1, "    a = total\n"), (4, "    # moved\n    return total\n")]


async def test_one_by_one_shifts_a_later_region_below_an_edit_that_added_lines():
    worker, ls = RenamingWorker(), SimpleNamespace(settings=ServerSettings(), client_id="c")
    await one_by_one(ls, worker, TEXT, [Region(1, 2, RENAME), Region(4, 5, RENAME)], "file:///f.py")
    first, second = worker.requests
    assert first.holes[0].replaces == "    a = count\n"
    assert second.holes[0].replaces == "    return count\n"  # found one line lower in the text
    assert second.prefix.count("\n") + "".join(second.pieces).count("\n") == 5
