"""The load benchmark: its typing, outcome and counter rules, and one tiny run on the bundled model."""
from __future__ import annotations

import itertools
import json
import random
import subprocess
import sys

import pytest

from bench.editor import OUTCOMES, keystrokes, outcome_of
from bench.load import Counters, counted_since, report, summarize
from engine.client.calls import WorkerError, WorkerTimeout
from engine.client.pool import WorkerUnavailable
from engine.wire.protocol import ErrorCode, Result, Timings
from infill.paths import REPO_ROOT

TASK = {"task_id": "t/0", "prompt": "def f(x):\n    return x\n", "canonical_solution": "    pass\n",
        "suffix": "\n"}
TWO_LINES = {"task_id": "t/1", "prompt": "import math\n\n\ndef area(r):\n", "suffix": "\n",
             "canonical_solution": "    return math.pi * r * r\n"}


def result(stop_reason: str) -> Result:
    return Result("r", [], Timings(0.0, 0.0, 0.0, 0.0), stop_reason)


def test_an_editor_types_the_rest_of_a_line_a_character_at_a_time():
    holes = list(itertools.islice(keystrokes([TASK], random.Random(3)), 40))
    text = TASK["prompt"] + TASK["canonical_solution"] + TASK["suffix"]
    for task_id, prefix, suffix in holes:
        assert task_id == "t/0" and TASK["prompt"].startswith(prefix) and prefix[-1] != "\n"
        assert suffix.startswith("\n") and text.endswith(suffix)
    runs = [b[1].startswith(a[1]) and len(b[1]) == len(a[1]) + 1 for a, b in itertools.pairwise(holes)]
    assert sum(runs) > len(runs) / 2  # most keystrokes add one character to the previous prefix


def test_each_final_reply_has_one_outcome():
    assert [outcome_of(result(r)) for r in ("done", "deadline", "cancelled")] == [
        "completed", "expired", "cancelled"]
    assert outcome_of(WorkerError(ErrorCode.OVERLOADED, "full")) == "overloaded"
    assert outcome_of(WorkerUnavailable("none up")) == "failed"
    assert outcome_of(WorkerTimeout("no reply")) == "lost"
    assert outcome_of(TimeoutError()) == "lost"


def test_counters_of_a_restarted_worker_count_from_its_start():
    before = Counters(read_at=100.0, uptime_s=50.0, steps=10, forward_passes=20, step_requests=30, carried=2)
    assert counted_since(before, Counters(110.0, 60.0, 15, 26, 40, 5)) == (5, 6, 10, 3)
    assert counted_since(before, Counters(110.0, 4.0, 3, 3, 9, 1)) == (3, 3, 9, 1)


def test_the_report_has_the_ratio_of_p99s_and_the_lost_total():
    one = summarize(1, [("completed", 100.0), ("cancelled", 5.0)], [(10, 12, 10, 0)], 2.0, [])
    many = summarize(4, [("completed", 150.0), ("lost", 3000.0)], [(10, 12, 40, 3)], 2.0, [0.5])
    assert (one["p99_ms"], one["completed"], one["cancelled"], one["mean_batch"]) == (100.0, 1, 1, 1.0)
    assert (many["forward_passes_per_s"], many["steps_per_s"], many["mean_batch"], many["lost"], many["carried"]) == (
        6.0, 5.0, 4.0, 1, 3)
    assert report([one, many]) | {"runs": None} == {"runs": None, "p99_ratio": 1.5, "lost": 1,
                                                      "recoveries_s": [0.5]}


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_a_tiny_run_on_the_bundled_model_loses_nothing(tmp_path):
    tasks = tmp_path / "tasks.jsonl"  # its own tasks: the run needs no ../shared/data
    tasks.write_text("".join(json.dumps(task) + "\n" for task in (TASK, TWO_LINES)))
    done = subprocess.run([sys.executable, "-m", "bench.load", "--clients", "1,2", "--seconds", "3",
                           "--threads", "1", "--tasks", str(tasks), "--json"], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=110)
    assert done.returncode == 0, done.stderr[-3000:]
    figures = json.loads(done.stdout.splitlines()[-1])
    assert set(figures) == {"runs", "p99_ratio", "lost", "recoveries_s"}
    assert [run["clients"] for run in figures["runs"]] == [1, 2]
    for run in figures["runs"]:
        assert {"p50_ms", "p95_ms", "p99_ms", "forward_passes_per_s", "mean_batch",
                *OUTCOMES} <= set(run)
        assert sum(run[outcome] for outcome in OUTCOMES) == run["requests"] > 0
    assert figures["lost"] == 0
    assert sum(run["completed"] for run in figures["runs"]) > 0
    # whether a keystroke supersedes the one before depends on how fast this machine answers:
    # supersession itself is tested in tests/test_scheduler.py and tests/test_worker.py
