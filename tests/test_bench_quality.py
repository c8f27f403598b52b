"""Tests of bench.quality and bench.sandbox: the sandbox's limits, task loading, the text scores and
the summary, with a fake worker client; one slow test runs the benchmark on a real model."""
from __future__ import annotations

import builtins
import gzip
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench.quality import (Judge, Settings, TaskRecord, edit_similarity, exact_match, format_table,
                           judging_program, load_tasks, main, parse_override, percentile, run_tasks,
                           select_tasks, set_name, summarize, task_plan)
from bench.sandbox import NETWORK_DISABLED, run_program
from engine.client.calls import WorkerError
from engine.wire.protocol import Item, Result, Timings
from infill.paths import REPO_ROOT

pytestmark = pytest.mark.timeout(60)

CHILD_GONE_WAIT_S = 30  # only a child the sandbox did not kill (it sleeps 600 s) takes this long

TASK = {
    "task_id": "t/0",
    "prompt": "def add(a, b):\n",
    "suffix": "\n\nx = 1\n",
    "canonical_solution": "    return a + b",
    "test": "def check(candidate):\n    assert candidate(2, 3) == 5\n",
    "entry_point": "add",
}
REQUIRED_KEYS = {"tasks", "pass_at_1", "exact_match", "edit_similarity", "mean_latency_ms",
                 "forwards_per_token", "p50_latency_ms", "p95_latency_ms", "model", "tasks_path", "mode"}


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "wt", encoding="utf-8") as stream:
        for row in rows:
            stream.write(json.dumps(row) + "\n\n")
    return path


# --- the sandbox ---

def is_running(pid: int) -> bool:
    """Whether `pid` is a process that has not ended (a zombie has)."""
    try:
        return "State:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False


def test_sandbox_passes_a_correct_program():
    outcome = run_program(judging_program(TASK, "    return a + b"))
    assert outcome.passed and outcome.returncode == 0 and not outcome.timed_out


def test_sandbox_fails_a_wrong_program():
    outcome = run_program(judging_program(TASK, "    return a - b"))
    assert not outcome.passed and outcome.returncode == 1
    assert "AssertionError" in outcome.stderr


def test_sandbox_stops_a_program_at_its_time_limit():
    """A program that sleeps 600 s is cut at its 1 s limit, far sooner than it would end."""
    outcome = run_program("import time\ntime.sleep(600)\n", time_limit_s=1.0)
    assert outcome.timed_out and not outcome.passed
    assert 1.0 <= outcome.elapsed_s < CHILD_GONE_WAIT_S


def test_sandbox_bounds_a_program_s_cpu_time_by_itself():
    """An orphaned program (its caller killed before the timeout) still stops: its CPU time is capped."""
    outcome = run_program("import resource\nprint(resource.getrlimit(resource.RLIMIT_CPU))\n", time_limit_s=3.0)
    assert outcome.passed and outcome.stdout.strip() == "(7, 7)"


def test_sandbox_kills_the_children_a_program_leaves():
    """The child a program leaves sleeping is killed with its process group when the program ends
    (as when it is cut at its time limit)."""
    program = ("import subprocess, sys\n"
               "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
               "print(child.pid, flush=True)\n")
    outcome = run_program(program, time_limit_s=CHILD_GONE_WAIT_S)  # only a broken machine needs it
    assert outcome.passed
    child = int(outcome.stdout)
    deadline = time.monotonic() + CHILD_GONE_WAIT_S  # its reaper may take a moment to collect it
    while is_running(child):
        assert time.monotonic() < deadline, "the program's child outlived the sandbox"
        time.sleep(0.1)


def test_sandbox_blocks_socket_connections():
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        outcome = run_program(f"import socket\nsocket.create_connection(('127.0.0.1', {port}), 2)\n")
        listener.settimeout(0.2)
        with pytest.raises(TimeoutError):
            listener.accept()
    assert not outcome.passed and NETWORK_DISABLED in outcome.stderr


def test_sandbox_enforces_the_memory_limit():
    outcome = run_program("block = bytearray(512 << 20)\n", memory_bytes=256 << 20)
    assert not outcome.passed and "MemoryError" in outcome.stderr
    assert run_program("block = bytearray(16 << 20)\n", memory_bytes=256 << 20).passed


def test_sandbox_never_runs_code_in_process():
    program = ("import builtins, os\nbuiltins.SANDBOX_RAN = True\n"
               "open('left.txt', 'w').write('x')\nprint(os.getpid(), os.getcwd())\n")
    here = os.getcwd()
    outcome = run_program(program)
    pid, folder = outcome.stdout.split()
    assert outcome.passed and int(pid) != os.getpid()
    assert not hasattr(builtins, "SANDBOX_RAN")
    assert os.getcwd() == here and not Path(folder).exists()


# --- tasks and scores ---

@pytest.mark.parametrize("name", ["tasks.jsonl", "tasks.jsonl.gz"])
def test_load_tasks_reads_jsonl_and_gzip(tmp_path, name):
    rows = [dict(TASK, task_id=f"t/{i}") for i in range(3)]
    assert load_tasks(write_jsonl(tmp_path / name, rows)) == rows
    assert set_name(tmp_path / name) == "tasks"


def test_load_tasks_names_the_line_of_a_bad_task(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(TASK) + "\n" + json.dumps({"task_id": "x", "prompt": ""}) + "\n")
    with pytest.raises(ValueError, match=r"bad.jsonl:2: .*suffix, canonical_solution"):
        load_tasks(path)


def test_select_tasks_takes_a_prefix_or_a_seeded_sample():
    tasks = [{"task_id": str(i)} for i in range(20)]
    assert select_tasks(tasks, limit=3) == tasks[:3]
    sample = select_tasks(tasks, sample=5, seed=7)
    assert sample == select_tasks(tasks, sample=5, seed=7) != tasks[:5]
    assert sample == sorted(sample, key=lambda t: int(t["task_id"])) and len(sample) == 5
    assert select_tasks(tasks, sample=50) == tasks


def test_exact_match_ignores_trailing_whitespace_only():
    assert exact_match("    return a + b  \n", "    return a + b")
    assert exact_match("x = 1\t\ny = 2\n", "x = 1\ny = 2")
    assert not exact_match("return a + b", "    return a + b")
    assert not exact_match("x = 1\n\ny = 2", "x = 1\ny = 2")


def test_edit_similarity_on_crafted_pairs():
    assert edit_similarity("abcd", "abcd   ") == 1.0
    assert edit_similarity("abcd", "abce") == pytest.approx(0.75)
    assert edit_similarity("", "") == 1.0
    assert edit_similarity("", "abc") == 0.0


def test_parse_override_types_values():
    assert parse_override("threshold=0.8") == ("threshold", 0.8)
    assert parse_override("steps=4") == ("steps", 4)
    assert parse_override("greedy=True") == ("greedy", True)
    assert parse_override("order=left=right") == ("order", "left=right")
    with pytest.raises(Exception, match="KEY=VALUE"):
        parse_override("threshold")


# --- the summary ---

def record(task_id: str, passed: bool | None, exact: bool, latency_ms: float, tokens: int | None = 4,
           **changes) -> TaskRecord:
    fields = dict(task_id=task_id, completion="x", latency_ms=latency_ms, forward_passes=2,
                  stop_reason="done", timings={"total_ms": latency_ms / 2}, completion_tokens=tokens,
                  completion_chars=8, exact=exact, similarity=1.0 if exact else 0.5, passed=passed)
    return TaskRecord(**(fields | changes))


def test_summary_from_crafted_records():
    records = [record("a", True, True, 10.0), record("b", False, False, 20.0),
               record("c", None, True, 30.0), record("d", False, False, 40.0, stop_reason="error",
                                                     timings=None, error="boom")]
    summary = summarize(records, {"set": "s", "model": "m", "tasks_path": "p", "mode": "auto"})
    assert REQUIRED_KEYS <= summary.keys()
    # the failed request is counted apart, not scored as a wrong answer
    assert summary["tasks"] == 4 and summary["answered"] == 3 and summary["tasks_with_tests"] == 2
    assert summary["errors"] == 1 and summary["error_rate"] == 0.25
    assert summary["pass_at_1"] == 0.5
    assert summary["exact_match"] == pytest.approx(2 / 3, abs=1e-4)
    assert summary["edit_similarity"] == pytest.approx(5 / 6, abs=1e-4)
    assert summary["mean_latency_ms"] == 20.0 and summary["p50_latency_ms"] == 20.0
    assert summary["p95_latency_ms"] == pytest.approx(29.0)
    assert summary["forwards_per_token"] == 0.5 and summary["forwards_per_char"] == 0.25
    assert summary["mean_worker_ms"] == 10.0
    assert summary["stop_reasons"] == {"done": 3, "error": 1}
    assert json.loads(json.dumps(summary)) == summary
    assert "pass@1" in format_table([summary]).splitlines()[0]


def test_summary_without_tests_or_tokens_reports_null():
    summary = summarize([record("a", None, True, 5.0, tokens=None)], {})
    assert summary["pass_at_1"] is None and summary["forwards_per_token"] is None
    assert summary["p95_latency_ms"] == 5.0
    assert "  -  " in format_table([dict(summary, set="s")])


def test_percentile_interpolates_between_ranks():
    assert percentile([], 50) is None
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0
    assert percentile([0.0, 10.0], 95) == pytest.approx(9.5)


# --- the benchmark loop, with a fake worker ---

class FakeClient:
    """Answers each task's prompt with a fixed middle, or raises the exception given for it."""

    def __init__(self, answers: dict[str, str | Exception]) -> None:
        self.answers = answers

    def complete(self, request) -> Result:
        answer = self.answers[request.prefix]
        if isinstance(answer, Exception):
            raise answer
        item = Item(answer, 0.5, 3)
        return Result(request.id, [item], Timings(0.0, 1.0, 2.0, 3.0), "done")


def test_run_tasks_judges_completions_out_of_process():
    escape = "    import builtins; builtins.SANDBOX_RAN = True\n    return a + b"
    tasks = [TASK, dict(TASK, task_id="t/1", prompt="def add(a, b):  \n"),
             dict(TASK, task_id="t/2", prompt="y = ", suffix="\n", test="", canonical_solution="2")]
    client = FakeClient({TASK["prompt"]: escape, tasks[1]["prompt"]: "    return a * b", "y = ": "2"})
    sides = run_tasks(client, tasks, Settings("auto", 16, 1000), Judge(jobs=2),
                      lambda text: len(text.split()), worker=None)
    records = sides["drafted"]
    assert sides["model"] == records and [r.completion for r in sides["drafts"]] == ["", "", ""]  # nothing repeats
    assert [r.passed for r in records] == [True, False, None]
    assert not hasattr(builtins, "SANDBOX_RAN")
    assert "AssertionError" in records[1].judge_output
    assert records[2].exact and records[2].completion_tokens == 1 and records[0].forward_passes == 3


def test_run_tasks_records_a_failed_request_as_an_error():
    tasks = [TASK, dict(TASK, task_id="t/1", prompt="z = ", test="")]
    failure = WorkerError("internal", "the model failed")
    client = FakeClient({TASK["prompt"]: failure, "z = ": failure})
    records = run_tasks(client, tasks, Settings("auto", 16, 1000), Judge(), None, worker=None)["drafted"]
    assert [r.passed for r in records] == [False, None]
    assert all(r.stop_reason == "error" and "the model failed" in r.error for r in records)
    assert summarize(records, {})["errors"] == 2


class DraftEchoClient:
    """Answers a request that carries a draft with the draft (it stood), any other with `alone`."""

    def __init__(self, alone: str) -> None:
        self.alone, self.requests = alone, []

    def complete(self, request) -> Result:
        self.requests.append(request)
        text, passes = ("".join(request.draft), 1) if request.draft else (self.alone, 5)
        return Result(request.id, [Item(text, 0.9, passes)], Timings(0.0, 1.0, 2.0, 3.0), "done")


REPEATS = dict(TASK, task_id="t/r", canonical_solution="    total = scale(width) + scale(height) + margin",
               prompt="def area(width, height):\n    margin = read_margin(width)\n"
                      "    total = scale(width) + scale(height) + margin\n    return total\n\n\n"
                      "def size(width, height):\n    margin = read_margin(width)\n",
               suffix="\n    return total\n", test="")


def test_each_side_is_scored_on_the_same_tasks_and_a_drafted_task_asks_the_model_twice():
    """The model alone is asked without the draft, the default with it; the drafts alone need no
    model; a task with no draft is asked once and both model sides share its answer."""
    client = DraftEchoClient("    return 0")
    tasks = [REPEATS, dict(TASK, test="")]
    sides = run_tasks(client, tasks, Settings("auto", 16, 1000), Judge(), None, worker=None)
    assert [bool(r.draft) for r in client.requests] == [True, False, False]
    drafted, alone, drafts = sides["drafted"], sides["model"], sides["drafts"]
    assert drafted[0].exact and drafted[0].drafted and not alone[0].exact and drafts[0].exact
    assert drafted[1] is alone[1] and drafts[1].completion == ""
    figures = {side: summarize(records, {}) for side, records in sides.items()}
    assert figures["drafted"]["drafted_share"] == 0.5 and figures["drafted"]["drafted_exact_match"] == 1.0
    assert figures["drafts"]["answered_share"] == 0.5 and figures["model"]["drafted_answers"] == 0
    assert figures["drafted"]["passes_per_answer"] == 3.0 and figures["model"]["passes_per_answer"] == 5.0
    assert figures["model"]["median_passes_per_answer"] == 5


def test_main_rejects_bad_flags_before_starting_a_worker(tmp_path, capsys):
    tasks = write_jsonl(tmp_path / "t.jsonl", [TASK])
    with pytest.raises(SystemExit):
        main(["--tasks", str(tasks), "--deadline-ms", "999999"])
    assert "deadline_ms" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--tasks", str(tasks), "--model", str(tmp_path / "none")])
    assert "is not a folder" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_benchmark_runs_end_to_end_on_a_real_model(tmp_path, model_env):
    tasks = write_jsonl(tmp_path / "two.jsonl", [TASK, dict(TASK, task_id="t/1", test="")])
    env = model_env
    proc = subprocess.run([sys.executable, "-m", "bench.quality", "--tasks", str(tasks), "--limit", "2",
                           "--json", "--max-tokens", "8", "--out", str(tmp_path / "records.jsonl")],
                          cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=280)
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert REQUIRED_KEYS <= summary.keys()
    assert summary["tasks"] == 2 and summary["tasks_with_tests"] == 1
    assert summary["completion_tokens"] > 0 and summary["forwards_per_token"] > 0  # the model writes here
    lines = (tmp_path / "records.jsonl").read_text().splitlines()
    assert [json.loads(line)["task_id"] for line in lines] == ["t/0", "t/1"]


def test_a_real_sized_file_is_asked_as_the_language_server_asks():
    """A 200 KB file's hole is cut to the product's windows (it used to go whole, and the worker
    answered too_large); the request is the one `infill complete` would send for that text."""
    body = "".join(f"def helper_{i}(x):\n    return x + {i}\n\n" for i in range(6000))
    task = {"task_id": "big", "prompt": body + "def area(r):\n    return ", "suffix": "\n\n" + body,
            "canonical_solution": "3.14 * r * r"}
    assert len(task["prompt"]) > 100_000
    planned = task_plan(task, Settings("auto", 32, 5000))
    [request] = planned.requests
    assert task["prompt"].endswith(request.prefix) and task["suffix"].startswith(request.suffix)
    assert len(request.prefix) < 10_000 and len(request.suffix) < 5_000
    assert request.mode == "single_line" and request.deadline_ms == 5000
