"""Tests of lsp_server.inline_edit's parts without a server: reading raw params and the ranges of
edits."""
from __future__ import annotations

from completion.next_edit import Edit
from lsp_server.inline_edit import edit_range, request_of


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
