"""bench.next_edit_drafts' margin sides (`--site-margin`): the drafted job judged by the bundled
model at each margin, its scores read once (their cost is recorded; the bench reports it)."""
import pytest

from bench.next_edit_drafts import build_parser, margin_side, run_task, summarize, veto_side
from engine.worker.runner import ModelRunner
from infill.paths import bundled_model_dir

ORIGINAL = 'def f():\n    """Read a dateime."""\n\n\ndef g():\n    """Write a dateime."""\n'
EDITED = ORIGINAL.replace("Read a dateime", "Read a datetime")
TYPO = {"path": "t.py", "original": ORIGINAL, "edited": EDITED, "cursor": EDITED.index("ime.") + 3,
        "expected": EDITED.replace("dateime", "datetime"), "kind": "rename"}


@pytest.fixture(scope="module")
def runner():
    return ModelRunner(bundled_model_dir())


def test_a_margin_side_keeps_a_typo_fixed_again_and_records_the_scores_cost(runner):
    task = run_task(runner, dict(TYPO), [0.0], model_side=False, margins=[9.0])
    assert task.judged and task.score_ms is not None  # recorded, not judged: speed is the bench's
    assert task.answers[margin_side(9.0)].predicted == TYPO["expected"]
    assert task.answers[veto_side(0.0)].predicted == TYPO["expected"]
    summary = summarize([task], [veto_side(0.0), margin_side(9.0)])
    assert summary["overall"]["judged_tasks"] == 1
    assert summary["overall"][margin_side(9.0)]["exact"] == 1.0


def test_no_margin_side_unless_asked():
    assert build_parser().parse_args(["--tasks", "t.jsonl"]).site_margin == []
    assert build_parser().parse_args(["--tasks", "t.jsonl", "--site-margin", "9", "3"]).site_margin == [9.0, 3.0]
