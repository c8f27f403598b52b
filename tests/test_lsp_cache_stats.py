"""Tests of lsp_server.cache (typing-through) and lsp_server.stats (the completion events log)."""
from __future__ import annotations

import json

from lsp_server.cache import CompletionCache, remaining
from lsp_server.protocol import completion_event
from lsp_server.stats import ACCEPTED, REJECTED, SHOWN, Answer, StatsLog, default_stats_path


def test_typing_the_shown_completion_answers_with_its_rest():
    cache = CompletionCache()
    cache.put("u", "x = ", "\n", ["foo(1)", "far"], "single_line", "r1")
    hit = cache.get("u", "x = f", "\n")
    assert hit.texts == ["oo(1)", "ar"] and hit.mode == "single_line" and hit.request_id == "r1"
    assert cache.get("u", "x = foo(", "\n").texts == ["1)"]
    assert cache.get("u", "x = ", "\n").texts == ["foo(1)", "far"]  # the same place again


def test_other_typing_documents_or_suffixes_miss():
    cache = CompletionCache()
    cache.put("u", "x = ", "\n", ["foo"], "single_line", "r1")
    assert cache.get("u", "x = g", "\n") is None
    assert cache.get("u", "x = foo", "\n") is None  # typed it all: nothing is left to show
    assert cache.get("v", "x = f", "\n") is None
    assert cache.get("u", "x = f", ")\n") is None
    assert cache.get("u", "x", "\n") is None  # deleted back past the cursor
    cache.forget("u")
    assert cache.get("u", "x = f", "\n") is None


def test_the_cache_keeps_the_most_recent_entries():
    cache = CompletionCache(capacity=2)
    for n in range(3):
        cache.put("u", f"p{n}", "", ["text"], "single_line", f"r{n}")
    assert cache.get("u", "p0", "") is None and cache.get("u", "p2t", "").texts == ["ext"]
    cache.put("u", "empty", "", [], "single_line", "r9")
    assert cache.get("u", "empty", "") is None
    assert remaining(("ab", "ac", "b"), "a") == ["b", "c"]


def test_events_about_known_requests_are_logged_as_json_lines(tmp_path):
    log = StatsLog(tmp_path / "deep" / "stats.jsonl")
    log.record(Answer("r1", "file:///a.py", "single_line", ("foo(1)", "far"), 42.25, False))
    assert log.report(SHOWN, completion_event({"requestId": "r1", "index": 1}))["shown_chars"] == 3
    assert log.report(ACCEPTED, completion_event({"requestId": "r1", "acceptedChars": 4}))["accepted_chars"] == 4
    assert log.report(REJECTED, completion_event({"requestId": "nope"})) is None
    lines = [json.loads(line) for line in (tmp_path / "deep" / "stats.jsonl").read_text().splitlines()]
    assert [(line["event"], line["index"], line["latency_ms"]) for line in lines] == [
        ("show", 1, 42.2), ("accept", 0, 42.2)]
    assert lines[1]["shown_chars"] == 6 and lines[1]["cache_hit"] is False


def test_without_a_path_nothing_is_written_and_the_default_path_follows_xdg(tmp_path, monkeypatch):
    log = StatsLog(None)
    log.record(Answer("r1", "u", "single_line", ("x",), 1.0, True))
    assert log.report(ACCEPTED, completion_event({"requestId": "r1"}))["accepted_chars"] == 1
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert default_stats_path() == tmp_path / "infill" / "stats.jsonl"
