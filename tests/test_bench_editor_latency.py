"""Tests of bench.editor_latency: a tiny run in headless Neovim (each binary `nvim_binary` finds, a
missing one skipped, saying why) against `infill lsp` on the fake worker, the outcome of each
keystroke from the server's log, and the planned typing."""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys

import pytest

from bench import keystroke_outcomes as ko
from bench.editor_typing import is_indent_end, plan_files, planned_keys
from infill.paths import REPO_ROOT

TASKS = [{"task_id": "t0", "prompt": "def add(a, b):\n", "canonical_solution": "    return a + b\n"},
         {"task_id": "t1", "prompt": "def neg(a):\n", "canonical_solution": "    return -a\n"}]


def run_bench(tmp_path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(json.dumps(task) + "\n" for task in TASKS))
    return subprocess.run([sys.executable, "-m", "bench.editor_latency", "--tasks", str(tasks), *args],
                          cwd=REPO_ROOT, env={**os.environ, **(env or {})}, capture_output=True, text=True,
                          timeout=240)


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_every_keystroke_of_a_tiny_run_has_one_outcome(tmp_path, nvim_binary, fake_worker_at):
    binary, binary_env = nvim_binary
    rows_path = tmp_path / "rows.jsonl"
    done = run_bench(tmp_path, "--nvim", binary, "--worker", fake_worker_at, "--keys", "100", "--pause-rate", "0.5",
                     "--rows", str(rows_path), "--json", env=binary_env)
    assert done.returncode == 0, done.stderr[-3000:]
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    rows = [json.loads(line) for line in rows_path.read_text().splitlines()]
    typed = sum(len(task["canonical_solution"]) for task in TASKS)
    assert figures["keystrokes"] == len(rows) == typed
    assert all(row["outcome"] in ko.OUTCOMES for row in rows)
    assert sum(figures["outcomes"].values()) == typed
    assert figures["files_typed_as_planned"] == figures["files"] == 2 and figures["unjoined_answers"] == 0
    shown = [row for row in rows if row["outcome"] == ko.SHOWN]
    assert shown and figures["model"]["count"] == len(shown)  # the fake worker answers everywhere
    assert all(row["latency_ms"] > 0 and set(row["split"]) == set(ko.SPLIT_PARTS) for row in shown)
    assert all(abs(sum(row["split"].values()) - row["latency_ms"]) <= 3.0 for row in shown)  # the log's ms clock
    assert set(figures["split_p50_ms"]) == set(figures["split_mean_ms"]) == set(ko.SPLIT_PARTS)
    assert figures["editor"].startswith("NVIM")


def test_a_missing_neovim_is_one_line(tmp_path):
    done = run_bench(tmp_path, "--nvim", str(tmp_path / "no-nvim"))
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip().count("\n") == 0 and "is not an executable" in done.stderr


LOG = """\
2026-01-01 10:00:00,080 INFO lsp_server.completer [r1] no completion at 3:4
2026-01-01 10:00:00,089 INFO lsp_server.completer [r1] none: 0 texts in 0.5 ms
2026-01-01 10:00:01,200 INFO lsp_server.completer [rx] single_line: 0 texts in 100.0 ms
2026-01-01 10:00:02,588 WARNING completion.fim [r2] no completion: no reply to CompleteRequest from the \
worker at ipc://w within 1.5 s; is it running?
2026-01-01 10:00:02,589 INFO lsp_server.completer [r2] single_line: 0 texts in 1500.2 ms
2026-01-01 10:00:02,184 INFO completion.fim [r3] r3: done, 1 items; queue 1.0, layout 2.0, first pass 30.0, \
decode 60.0, total 95.0 ms
2026-01-01 10:00:02,188 INFO lsp_server.completer [r3] single_line: 1 texts in 100.0 ms
2026-01-01 10:00:03,080 INFO lsp_server.completer [r4] typing through the answer to r3
2026-01-01 10:00:03,081 INFO lsp_server.completer [r4] single_line: 1 texts in 0.4 ms from the cache
2026-01-01 10:00:04,128 INFO completion.fim [r5] r5: done, 1 items; queue 1.0, layout 2.0, first pass 30.0, \
decode 0.0, total 35.0 ms
2026-01-01 10:00:04,129 INFO lsp_server.completer [r5] single_line: 0 texts in 40.0 ms
"""


def test_each_keystroke_gets_its_outcome_from_the_editor_and_the_server_log(tmp_path):
    """rx: a request cancelled as it was answered (in the log, an error in the editor) shifts nothing."""
    log = tmp_path / "lsp.log"
    log.write_text(LOG)
    keys = [{"file": 1, "key": char, "fed_ms": 1000.0 * number} for number, char in enumerate("abcdefgh")]
    requests = [{"key": 1, "sent_ms": 80.0, "response_ms": 90.0, "items": 0},
                {"key": 2, "sent_ms": 1080.0, "response_ms": 1201.0, "error": "Request cancelled"},
                {"key": 2, "sent_ms": 1280.0, "response_ms": 2590.0, "items": 0},
                {"key": 3, "sent_ms": 2080.0, "response_ms": 2190.0, "items": 1, "request_id": "r3",
                 "shown_ms": 2192.0},
                {"key": 4, "sent_ms": 3080.0, "response_ms": 3082.0, "items": 1, "request_id": "r4",
                 "shown_ms": 3083.0},
                {"key": 5, "sent_ms": 4080.0, "response_ms": 4130.0, "items": 0},
                {"key": 6, "sent_ms": 5080.0, "cancelled_ms": 5090.0},
                {"key": 8, "sent_ms": 7080.0, "response_ms": 7090.0, "error": "boom"}]
    assert ko.join(requests, ko.server_requests(log)) == 0
    rows = ko.outcomes(keys, requests)
    assert [row["outcome"] for row in rows] == [ko.NO_COMPLETION, ko.DEADLINE, ko.SHOWN, ko.TYPED_THROUGH,
                                                ko.EMPTY, ko.SUPERSEDED, ko.SUPERSEDED, ko.ERROR]
    assert rows[2]["latency_ms"] == 192.0 and rows[3]["latency_ms"] == 83.0
    assert [row["requested"] for row in rows] == [True] * 6 + [False, True]
    assert rows[2]["split"] == {"editor": 82.0, "transport": 10.0, "plan_and_worker_transport": 1.0,
                                "queue": 1.0, "layout": 2.0, "first_pass": 30.0, "further_passes": 60.0,
                                "worker_other": 2.0, "post_processing": 4.0}


def test_without_a_named_answer_the_join_goes_in_order_and_counts_what_is_left():
    server = [ko.ServerRequest("r1"), ko.ServerRequest("r2")]
    requests = [{"response_ms": 1.0}, {"response_ms": 2.0}, {"response_ms": 3.0}]
    assert ko.join(requests, server) == 1
    assert [request.get("server") for request in requests] == server + [None]


def test_the_planned_typing_is_seeded_paced_and_pauses_where_a_typist_stops(tmp_path):
    body = "    x = 1\n    return x\n"
    keys = planned_keys(body, random.Random(3), 0.0, 900)
    assert keys == planned_keys(body, random.Random(3), 0.0, 900)
    assert "".join(key["key"] for key in keys) == body.replace("\n", "\r")
    assert all(80.0 <= key["gap_ms"] <= 120.0 for key in keys)
    paused = [index for index, key in enumerate(keys) if key["pause_ms"]]
    assert paused == [3, 13, len(body) - 1]  # each line's indentation typed, and the last key
    assert is_indent_end("\nx", 0) and not is_indent_end("a b", 0)
    files = plan_files([{"prompt": "no line break", "canonical_solution": "x"}] + TASKS, tmp_path, 20,
                       random.Random(0), 0.1, 900)
    assert [len(file["keys"]) for file in files] == [17, 3]  # a prompt without a line break skipped, cut at 20
    assert files[0]["text"] == TASKS[0]["prompt"] + TASKS[0]["canonical_solution"]
