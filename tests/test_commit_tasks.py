"""Next-edit tasks replayed from a tiny git history made here: the user's edit and the follow-ups,
negatives, each kind's rule, the caps, a file over the cap, and a repository that asks git to run
its own code (fsmonitor) without it running."""
import json
import shutil
import subprocess
import sys

import pytest

from training.commit_tasks import (CALL_SITES, LITERAL, NEGATIVE, OTHER, RENAME, REPEATED, SIGNATURE, Change,
                                   kind_of, line_changes, main)

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

BASE = '''"""Dates."""


def parse(text, strict):
    """Read a dateime from text."""
    return load(text, strict)


def show(value):
    """Write a dateime as text."""
    return dump(value, "utf-8")


def both(text):
    first = parse(text, True)
    second = parse(text, False)
    return dump(first, "utf-8"), second
'''


def git(root, *arguments):
    subprocess.run(["git", "-c", "core.fsmonitor=false", *arguments], cwd=root, check=True, capture_output=True)


def commit(root, files, message):
    for name, text in files.items():
        (root / name).write_text(text)
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", message)


@pytest.fixture
def history(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    commit(root, {"dates.py": BASE, "notes.txt": "a\n"}, "start")
    commit(root, {"dates.py": BASE.replace("dateime", "datetime")}, "typo in two docstrings")
    text = BASE.replace("dateime", "datetime")
    commit(root, {"dates.py": text.replace('"utf-8"', '"ascii"')}, "literal at two places")
    text = text.replace('"utf-8"', '"ascii"')
    commit(root, {"dates.py": text.replace("return load(text, strict)", "return load(text, strict, 1)")},
           "one change alone: a negative")
    return root


def run_builder(tmp_path, git_dir, *extra):
    out = tmp_path / "tasks.jsonl"
    assert main(["--git-dir", str(git_dir), "--out", str(out), *extra]) == 0
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_tasks_replay_the_first_change_as_the_edit_and_the_rest_as_expected(tmp_path, history):
    tasks = run_builder(tmp_path, history / ".git")
    kinds = {task["kind"]: task for task in tasks}
    assert sorted(kinds) == [LITERAL, NEGATIVE, RENAME]
    typo = kinds[RENAME]
    assert typo["original"] == BASE and typo["expected"] == BASE.replace("dateime", "datetime")
    assert typo["edited"].count("datetime") == 1 and typo["edited"].count("dateime") == 1
    assert typo["edited"][:typo["cursor"]].endswith('"""Read a datetime from text."""')
    assert typo["task_id"].startswith("repo/") and typo["path"] == "dates.py"
    negative = kinds[NEGATIVE]
    assert negative["expected"] == negative["edited"] != negative["original"]


def test_a_file_over_the_cap_and_a_diff_over_the_cap_are_skipped(tmp_path, history, capsys):
    assert run_builder(tmp_path, history / ".git", "--max-file-chars", "100") == []
    assert run_builder(tmp_path, history / ".git", "--max-changes", "1") == [
        task for task in run_builder(tmp_path, history / ".git") if task["kind"] == NEGATIVE]
    assert "diff too big" in capsys.readouterr().err


def test_kinds_follow_their_rules():
    def change(old, new, line=0):
        return Change(line, line + 1, (old,), (new,))

    first = change("def f(a):\n", "def f(a, b):\n")
    assert kind_of(first, [change("f(1)\n", "f(1, 2)\n")]) == CALL_SITES
    assert kind_of(first, [change("x = 1\n", "x = 2\n")]) == SIGNATURE
    keyword = change("g(1)\n", "g(1, strict=True)\n")
    assert kind_of(keyword, [change("g(2)\n", "g(2, strict=True)\n")]) == REPEATED
    assert kind_of(keyword, [change("h = 2\n", "h = 3\n")]) == OTHER
    assert kind_of(change("x = 1\n", "x = 2\n"), []) == NEGATIVE
    escaped = change('s = "a"\n', 's = "\\x00"\n')  # a new literal holding a backslash is text, not an escape
    assert kind_of(escaped, [change('t = "a"\n', 't = "\\x00"\n')]) == LITERAL


def test_one_for_one_replacements_count_a_change_per_line():
    changes = line_changes("a\nb\nc\n", "A\nB\nc\nd\n")
    assert [(c.start, c.end, c.new) for c in changes] == [(0, 1, ("A\n",)), (1, 2, ("B\n",)), (3, 3, ("d\n",))]


def test_the_repositorys_own_fsmonitor_never_runs(tmp_path, history):
    planted = tmp_path / "ran"
    hook = tmp_path / "hook.sh"
    hook.write_text(f"#!/bin/sh\ntouch {planted}\n")
    hook.chmod(0o755)
    git(history, "config", "core.fsmonitor", str(hook))
    assert run_builder(tmp_path, history / ".git")
    assert not planted.exists()


def test_a_missing_git_dir_is_one_line(tmp_path):
    done = subprocess.run([sys.executable, "-m", "training.commit_tasks", "--git-dir", str(tmp_path / "none")],
                          capture_output=True, text=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
