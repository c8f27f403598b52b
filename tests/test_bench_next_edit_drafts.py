"""bench.next_edit_drafts' figures on tasks made here, with no model (the rules side only): a task
whose follow-ups are the same change carried by analogy, a negative, and a task whose follow-up no
rule could know; region recall, false-edit tasks, changed lines and the propagating group."""
import json

import pytest

from bench.next_edit_drafts import RULES, build_parser, main, per_task_rows, run_task, summarize
from infill.paths import bundled_model_dir


class NoModel:
    """The runner the rules side never asks (no job is decoded)."""

    tok = None


def test_figures_count_region_recall_false_edits_and_the_propagating_kinds():
    original = 'def f():\n    """Read a dateime."""\n\n\ndef g():\n    """Write a dateime."""\n'
    edited = original.replace("Read a dateime", "Read a datetime")
    typo = {"path": "t.py", "original": original, "edited": edited, "cursor": edited.index("ime.") + 3,
            "expected": edited.replace("dateime", "datetime"), "kind": "rename", "task_id": "typo"}
    negative = {**typo, "expected": edited, "kind": "negative"}
    unknowable = {**typo, "expected": edited.replace("def g", "def h"), "kind": "other"}
    tasks = [run_task(NoModel(), json.loads(json.dumps(task)), [], model_side=False)
             for task in (typo, negative, unknowable)]
    summary = summarize(tasks, [RULES])
    assert summary["propagating"]["tasks"] == 1 and summary["propagating"][RULES]["exact"] == 1.0
    assert summary["propagating"]["region_recall"] == 1.0
    assert summary["negative"][RULES]["false_edits_negatives"] == 1.0
    assert summary["other"][RULES]["tasks_with_false_edit"] == 1.0
    assert summary["overall"]["plan_p50_ms"] >= 0
    assert (summary["overall"]["changed_lines"], summary["propagating"]["changed_lines"]) == (2, 1)
    assert summary["propagating"]["share_of_changed_lines"] == 0.5 and summary["negative"]["changed_lines"] == 0
    rows = per_task_rows(tasks, [RULES])
    assert [(row["task_id"], row["kind"], row[RULES]["exact"], row[RULES]["false_lines"]) for row in rows] == [
        ("typo", "rename", True, 0), ("typo", "negative", False, 1), ("typo", "other", False, 1)]


def test_the_default_model_is_the_bundled_one_and_follows_infill_model(monkeypatch, tmp_path):
    monkeypatch.delenv("INFILL_MODEL", raising=False)
    assert build_parser().parse_args(["--tasks", "t.jsonl"]).model == bundled_model_dir()
    monkeypatch.setenv("INFILL_MODEL", str(tmp_path))
    assert build_parser().parse_args(["--tasks", "t.jsonl"]).model == tmp_path


def test_per_task_refuses_a_file_that_exists(tmp_path):
    tasks, kept = tmp_path / "t.jsonl", tmp_path / "kept.jsonl"
    tasks.write_text("")
    kept.write_text("mine\n")
    with pytest.raises(SystemExit):
        main(["--tasks", str(tasks), "--per-task", str(kept)])
    assert kept.read_text() == "mine\n"


def test_rules_only_loads_no_model_and_writes_the_rules_rows(monkeypatch, tmp_path, capsys):
    def no_model(*args, **kwargs):
        raise AssertionError("--rules-only loaded a model")
    monkeypatch.setattr("bench.next_edit_drafts.ModelRunner", no_model)
    original = 'def f():\n    """Read a dateime."""\n\n\ndef g():\n    """Write a dateime."""\n'
    edited = original.replace("Read a dateime", "Read a datetime")
    task = {"path": "t.py", "original": original, "edited": edited, "cursor": edited.index("ime.") + 3,
            "expected": edited.replace("dateime", "datetime"), "kind": "rename", "task_id": "typo"}
    tasks, rows = tmp_path / "t.jsonl", tmp_path / "rows.jsonl"
    tasks.write_text(json.dumps(task) + "\n")
    assert main(["--tasks", str(tasks), "--rules-only", "--per-task", str(rows), "--json"]) == 0
    figures = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert figures["vetoes"] == [] and set(figures["overall"]) >= {RULES} and "model" not in figures["overall"]
    [row] = [json.loads(line) for line in rows.read_text().splitlines()]
    assert set(row) == {"task_id", "kind", RULES} and row[RULES]["exact"]
    with pytest.raises(SystemExit):
        main(["--tasks", str(tasks), "--rules-only", "--site-margin", "9"])
