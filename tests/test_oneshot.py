"""Tests of `infill complete`: the real console script, a real local worker, a real model.

The model is the bundled one; a small model's completions may be poor, so the tests check the
report's shape, not its text, though where the model is known to write something (`s` after
`import o`, a comment in an empty file) the completion must not be empty. Bad input, and a place
where an editor would not complete, are answered before any worker starts. That it prints what
the language server shows is tests/test_completion_front_ends.py.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from infill.paths import REPO_ROOT

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

INFILL = str(Path(sys.executable).parent / "infill")  # the console script installed with the project
FAST = ["--max-tokens", "8", "--deadline-ms", "20000"]  # few tokens, a deadline the busy CPU can meet


def infill_complete(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([INFILL, "complete", *args], cwd=REPO_ROOT, env=env, capture_output=True,
                          text=True, timeout=150)


def test_json_report(tmp_path, model_env):
    source = tmp_path / "example.py"
    source.write_text("import o\n\n\ndef add(a, b):\n    return a + b\n")
    done = infill_complete(str(source), "--line", "0", "--col", "8", "--json", *FAST, env=model_env)
    assert done.returncode == 0, done.stderr[-3000:]
    answer = json.loads(done.stdout)
    assert answer["completion"] and "\n" not in answer["completion"]  # single line
    assert answer["mode"] == "single_line" and answer["stop_reason"] in ("done", "deadline")
    assert answer["completions"] == [answer["completion"]]
    assert 0.0 <= answer["confidence"] <= 1.0 and answer["forward_passes"] >= 1
    timings = answer["timings"]
    assert set(timings) == {"queue_ms", "prepare_ms", "prefill_ms", "decode_ms", "total_ms"}
    assert 0 <= timings["decode_ms"] <= timings["total_ms"]


def test_human_report_for_an_empty_file(tmp_path, model_env):
    empty = tmp_path / "empty.py"
    empty.write_bytes(b"")
    done = infill_complete(str(empty), "--line", "0", "--col", "0", *FAST, env=model_env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert not done.stdout.startswith("(no completion)")
    assert "-- multi_line, " in done.stdout and "forward passes" in done.stdout
    assert all(f"{part} " in done.stdout for part in ("queue", "layout", "first pass", "decode", "total"))


def test_no_place_to_complete_asks_no_worker(tmp_path):
    source = tmp_path / "mid.py"
    source.write_text("total = add(1, 2)\n")
    done = infill_complete(str(source), "--line", "0", "--col", "8", "--worker", "ipc:///nonexistent/w")
    assert done.returncode == 0, done.stderr[-3000:]  # a worker that does not exist was never asked
    assert done.stdout.startswith("(no completion)\n-- none: ") and "no worker asked" in done.stdout


def test_a_file_that_is_not_utf8_is_refused(tmp_path):
    latin1 = tmp_path / "latin1.py"
    latin1.write_bytes(b"name = '\xe9t\xe9'\n")
    done = infill_complete(str(latin1), "--line", "0", "--col", "0")
    assert done.returncode == 2 and done.stdout == ""
    assert "is not UTF-8" in done.stderr and "0xe9" in done.stderr


@pytest.mark.parametrize("line, col, bounds", [
    ("2", "0", "its lines are 0..1"), ("-1", "0", "its lines are 0..1"),
    ("0", "9", "the columns of line 0 are 0..5"),
])
def test_a_position_outside_the_file_is_refused(tmp_path, line, col, bounds):
    source = tmp_path / "short.py"
    source.write_text("x = 1\n")
    done = infill_complete(str(source), "--line", line, "--col", col)
    assert done.returncode == 2 and done.stdout == ""
    assert f"position {line}:{col} is outside" in done.stderr and bounds in done.stderr


def test_bad_flags_are_refused(tmp_path):
    done = infill_complete(str(tmp_path / "x.py"), "--line", "0", "--col", "0", "--max-tokens", "0")
    assert done.returncode == 2 and "--max-tokens must lie in 1..1024" in done.stderr
    assert infill_complete(str(tmp_path / "missing.py"), "--line", "0", "--col", "0").returncode == 2
