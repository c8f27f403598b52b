"""Tests of the keystroke benchmarks' pure parts: the VS Code record's outcomes (bench.vscode_keystrokes),
the typing of bench.keystroke_order, and bench.worker_threads' holes and flags."""
from __future__ import annotations

import argparse
import json

import pytest

from bench import keystroke_outcomes as ko
from bench import keystroke_order, vscode_keystrokes, worker_threads
from engine.wire.protocol import Error, ErrorCode, Item, Result, Timings

LOG = """\
2026-01-01 10:00:00,080 INFO lsp_server.completer [r1] no completion at 3:4
2026-01-01 10:00:00,080 INFO lsp_server.completer [r1] none: 0 texts in 70.0 ms
2026-01-01 10:00:02,599 WARNING completion.fim [r2] no completion: no reply to CompleteRequest from the \
worker at ipc://w within 1.5 s; is it running?
2026-01-01 10:00:02,600 INFO lsp_server.completer [r2] single_line: 0 texts in 1500.0 ms
2026-01-01 10:00:03,196 INFO completion.fim [r3] r3: done, 1 items; queue 1.0, layout 2.0, first pass 30.0, \
decode 60.0, total 95.0 ms
2026-01-01 10:00:03,200 INFO lsp_server.completer [r3] single_line: 1 texts in 150.0 ms
2026-01-01 10:00:04,002 INFO lsp_server.completer [r4] single_line: 1 texts in 1.0 ms from the cache
2026-01-01 10:00:06,300 INFO lsp_server.completer [r5] single_line: 1 texts in 250.0 ms
2026-01-01 10:00:07,099 INFO completion.fim [r6] r6: done, 0 items; queue 1.0, layout 2.0, first pass 30.0, \
decode 0.0, total 35.0 ms
2026-01-01 10:00:07,100 INFO lsp_server.completer [r6] single_line: 0 texts in 50.0 ms
"""


def test_each_vscode_keystroke_gets_its_outcome_from_the_page_and_the_server_log(tmp_path):
    log = tmp_path / "lsp.log"
    log.write_text(LOG)
    base = ko._log_time("2026-01-01 10:00:00,000") * 1000.0
    fed_shown = [(0, None), (1000, None), (3000, 3210), (4000, 4005), (5000, 5003), (6000, None), (6100, None),
                 (7000, None)]
    keys = [{"file": "task_0.py", "key": "x", "fed_ms": base + fed,
             "shown_ms": None if shown is None else base + shown} for fed, shown in fed_shown]
    rows = vscode_keystrokes.outcomes(keys, ko.server_requests(log))
    assert [row["outcome"] for row in rows] == [ko.NO_COMPLETION, ko.DEADLINE, ko.SHOWN, ko.TYPED_THROUGH,
                                                ko.TYPED_THROUGH, ko.SUPERSEDED, ko.SUPERSEDED, ko.EMPTY]
    assert [row["requested"] for row in rows] == [True, True, True, True, False, True, False, True]
    assert rows[2]["latency_ms"] == 210.0 and rows[4]["latency_ms"] == 3.0
    assert rows[2]["split"] == {"editor": 60.0, "transport": 0.0, "plan_and_worker_transport": 51.0,
                                "queue": 1.0, "layout": 2.0, "first_pass": 30.0, "further_passes": 60.0,
                                "worker_other": 2.0, "post_processing": 4.0}
    assert sum(rows[2]["split"].values()) == pytest.approx(rows[2]["latency_ms"])


def test_a_vscode_answer_too_late_to_draw_is_superseded_and_one_that_left_kept_ghost_text_is_kept(tmp_path):
    log = tmp_path / "lsp.log"
    log.write_text("".join(f"2026-01-01 10:00:0{second},100 INFO lsp_server.completer [r{second}] single_line: "
                           "1 texts in 90.0 ms\n" for second in range(4))
                   + "2026-01-01 10:00:04,100 INFO lsp_server.completer [r4] none: 0 texts in 90.0 ms\n")
    base = ko._log_time("2026-01-01 10:00:00,000") * 1000.0
    # (fed, shown, ghost text at the keydown): the first answer takes 20 ms from its log line to the screen, the
    # second is logged 10 ms before the next key (too late), the third leaves the ghost text kept through its key;
    # the last answer, logged 5 ms before the next key, has nothing to draw
    keys_at = [(0, 120, None), (1000, None, None), (1110, None, "x = 1"), (2000, None, "x = 1"),
               (3000, None, "x = 1"), (4000, None, None), (4105, None, None)]
    keys = [{"file": "a.py", "key": "x", "fed_ms": base + fed, "shown_ms": None if shown is None else base + shown,
             "before": before} for fed, shown, before in keys_at]
    rows = vscode_keystrokes.outcomes(keys, ko.server_requests(log))
    assert [row["outcome"] for row in rows] == [ko.SHOWN, ko.SUPERSEDED, ko.SUPERSEDED, ko.KEPT, ko.ERROR,
                                                ko.NO_COMPLETION, ko.SUPERSEDED]


def test_the_vscode_report_ends_with_the_editor_latency_figures(tmp_path, capsys):
    log, record = tmp_path / "lsp.log", tmp_path / "record.json"
    log.write_text(LOG)
    base = ko._log_time("2026-01-01 10:00:03,000") * 1000.0
    record.write_text(json.dumps({"keys": [{"file": "a.py", "key": "r", "fed_ms": base, "shown_ms": base + 210}],
                                  "files": [{"path": "a.py", "typed_as_planned": True}], "editor": "VS Code"}))
    assert vscode_keystrokes.main(["report", "--record", str(record), "--log", str(log), "--busy", "2", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert figures["outcomes"][ko.SHOWN] == 1 and figures["model"]["p50_ms"] == 210.0
    assert figures["busy"] == 2 and figures["files_typed_as_planned"] == 1


def test_the_vscode_plan_names_its_files_and_types_bodies_from_a_fresh_line(tmp_path):
    tasks = tmp_path / "tasks.jsonl"
    task = {"task_id": "t", "prompt": "def f():\n", "canonical_solution": "    return 1\n"}
    tasks.write_text(json.dumps(task) + "\n")
    out = tmp_path / "plan.json"
    assert vscode_keystrokes.main(["plan", "--out", str(out), "--tasks", str(tasks), "--keys", "5"]) == 0
    [file] = json.loads(out.read_text())["files"]
    assert file["path"] == "task_0.py" and file["text"] == "def f():\n    r" and len(file["keys"]) == 5


def test_keystroke_order_plans_seeded_typing_with_pauses_per_editor():
    tasks = [{"task_id": "t", "prompt": "def f(x):\n    return x + 1\n", "canonical_solution": "", "suffix": ""}]
    plan = keystroke_order.typing_plan(tasks, editors=2, seconds=30.0, seed=3)
    assert plan == keystroke_order.typing_plan(tasks, editors=2, seconds=30.0, seed=3)
    assert [key.at for key in plan] == sorted(key.at for key in plan) and {key.editor for key in plan} == {0, 1}
    for editor in (0, 1):
        own = [key for key in plan if key.editor == editor]
        assert all(key.next_at == later.at for key, later in zip(own, own[1:])) and own[-1].next_at == float("inf")
    assert any(keystroke_order.paused(key) for key in plan)
    assert keystroke_order.arrival_of(plan[0], 7, 1.0).request.session == f"editor {plan[0].editor}"


def test_keystroke_order_names_each_reply():
    timings = Timings(0.0, 0.0, 0.0, 0.0)
    assert keystroke_order.outcome_of(Result("a", [Item("x + 1", 0.9, 2, 0)], timings, "done")) == "answered"
    assert keystroke_order.outcome_of(Result("a", [Item(" ", 0.9, 2, 0)], timings, "done")) == "empty (done)"
    assert keystroke_order.outcome_of(Result("a", [], timings, "cancelled")) == "superseded"
    assert keystroke_order.outcome_of(Error("a", ErrorCode.OVERLOADED, "full")) == "error (overloaded)"
    assert keystroke_order.ratio(2.0, 4.0) == 0.5 and keystroke_order.ratio(1.0, 0.0) is None


def test_worker_threads_holes_and_flags():
    tasks = [{"prompt": "def f():\n", "canonical_solution": "    return 1\n", "suffix": "\nprint(f())\n"},
             {"prompt": "x = (\n", "canonical_solution": "\n", "suffix": ")\n"},
             {"prompt": "def g():\n", "canonical_solution": "    a = 1\n    return a\n"}]
    assert worker_threads.holes(tasks, 5) == [("def f():\n    ", "\n\nprint(f())\n"),
                                              ("def g():\n    ", "\n    return a\n")]
    assert worker_threads.holes(tasks, 1) == [("def f():\n    ", "\n\nprint(f())\n")]
    assert worker_threads.numbers("1,2") == [1, 2] and worker_threads.policies("passive") == ["passive"]
    for bad in ("", "1,x", "-1"):
        with pytest.raises(argparse.ArgumentTypeError):
            worker_threads.numbers(bad)
    with pytest.raises(argparse.ArgumentTypeError, match="unknown policies"):
        worker_threads.policies("spin")
