"""Tests of bench.lsp_latency: its figures from recorded keystrokes, and one short real replay."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
from lsprotocol import types

from bench.lsp_latency import (Keystroke, advance, common_start, count_cache_hits, mark_superseded,
                               position_of, summarize, typed_middle)
from infill.paths import REPO_ROOT


def keystroke(sent: float, answered: float, text: str = "", rest: str = "") -> Keystroke:
    return Keystroke(sent=sent, rest=rest, answered=answered, text=text)


def test_summarize_reports_what_the_user_would_see():
    keystrokes = [keystroke(0.0, 0.05, "abc", "abx"), keystroke(0.1, 0.12), keystroke(0.2, 2.2, "zz", "q")]
    keystrokes[1].superseded = True
    figures = summarize(keystrokes, cache_hits=1, deadline_ms=1500)
    assert figures == {"p50_ms": 1025.0, "p99_ms": 1980.5, "within_deadline": 0.6667,
                       "cache_hit_rate": 0.3333, "accepted_chars_per_shown": 0.4, "by_mode": {}}
    assert summarize([], 0, 100)["within_deadline"] == 0.0


def test_latency_by_mode_counts_the_shown_answers_the_stats_log_names():
    keystrokes = [keystroke(0.0, 0.05, "abc"), keystroke(0.1, 0.12, "d"), keystroke(0.2, 0.9, "e\nf"),
                  keystroke(0.3, 0.31)]  # the last shows nothing
    for k, request_id in zip(keystrokes, ("r1", "r2", "r3", "")):
        k.request_id = request_id
    modes = {"r1": "single_line", "r2": "single_line", "r3": "multi_line"}
    assert summarize(keystrokes, 0, 1500, modes)["by_mode"] == {
        "multi_line": {"answers": 1, "p50_ms": 700.0, "p99_ms": 700.0},
        "single_line": {"answers": 2, "p50_ms": 35.0, "p99_ms": 49.7}}


def test_an_empty_answer_after_the_next_keystroke_was_superseded():
    keystrokes = [keystroke(0.0, 0.3), keystroke(0.1, 0.15), keystroke(0.2, 0.5, "x"), keystroke(0.3, 0.4)]
    mark_superseded(keystrokes)
    assert [k.superseded for k in keystrokes] == [True, False, False, False]


def test_typing_helpers():
    assert common_start("abc", "abd") == 2 and common_start("", "a") == 0
    assert typed_middle("    return x\n") == ("    return x", "\n")
    assert typed_middle("x + 1") == ("x + 1", "")
    assert position_of("def f():\n    ") == types.Position(line=1, character=4)
    assert advance(types.Position(line=1, character=4), "\n") == types.Position(line=2, character=0)
    assert advance(types.Position(line=0, character=1), "\U0001F600") == types.Position(line=0, character=3)


def test_cache_hits_are_counted_from_the_stats_log(tmp_path):
    log = tmp_path / "stats.jsonl"
    assert count_cache_hits(log) == 0
    events = [{"event": "show", "cache_hit": True}, {"event": "show", "cache_hit": False},
              {"event": "accept", "cache_hit": True}]
    log.write_text("".join(json.dumps(event) + "\n" for event in events))
    assert count_cache_hits(log) == 1


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_short_replay_prints_the_table_and_the_json_line(tmp_path, model_env):
    tasks = tmp_path / "tasks.jsonl"
    task = {"task_id": "t0", "prompt": "def add(a, b):\n", "canonical_solution": "    return a + b\n",
            "suffix": "\n\nprint(add(1, 2))\n"}
    tasks.write_text(json.dumps(task) + "\n")
    process = subprocess.run([sys.executable, "-m", "bench.lsp_latency", "--tasks", str(tasks),
                              "--max-chars", "6", "--deadline-ms", "20000", "--json"],
                             env=model_env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=280)
    assert process.returncode == 0, process.stderr[-3000:]
    lines = process.stdout.strip().splitlines()
    figures = json.loads(lines[-1])
    assert set(figures) == {"p50_ms", "p99_ms", "within_deadline", "cache_hit_rate",
                            "accepted_chars_per_shown", "by_mode"}
    assert "keystrokes              6" in process.stdout and 0.0 <= figures["within_deadline"] <= 1.0
