"""`infill adapt`: a tiny model fine-tuned on a tiny repository for seconds (training.adapt)."""
from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

import training.adapt as adapt_module
from engine.worker.runner import ModelRunner
from infill.job import Job
from infill.paths import bundled_model_dir
from infill.tiny import write_tiny
from infill.tokenizer import CodeTokenizer
from training.adapt import AdaptConfig, adapt, add_figures, main, make_rows, run_dir
from training.noising import EDITOR_SHAPES, Special, cut_holes
from training.repo_files import RepoFile

GEOMETRY = '''"""Shapes and their areas."""


def rectangle_area(width, height):
    """The area of a width x height rectangle."""
    return width * height


def square_area(side):
    return rectangle_area(side, side)
'''
REPORT = '''from geometry import rectangle_area, square_area


def total_area(rectangles):
    """The summed area of (width, height) pairs."""
    return sum(rectangle_area(width, height) for width, height in rectangles)


def report(sides):
    for side in sides:
        print(side, square_area(side))
'''


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    (root / "geometry.py").write_text(GEOMETRY * 3)
    (root / "report.py").write_text(REPORT * 3)
    return root


def quick(base, out, repo=None, **overrides) -> AdaptConfig:
    settings = dict(base=base, out=out, repo=repo, minutes=5, steps=2, seq_len=128, batch=4, replay_share=0.0,
                    threads=1)  # a step budget: what a run trains never depends on the machine's speed
    return AdaptConfig(**(settings | overrides))


def weights(folder) -> dict[str, torch.Tensor]:
    return load_file(str(folder / "model.safetensors"))


def test_adapt_writes_a_servable_model_folder_that_learnt_something(tiny_model_dir, repo, tmp_path):
    out = adapt(quick(tiny_model_dir, tmp_path / "adapted", repo))
    assert sorted(p.name for p in out.iterdir()) == ["MODEL_CARD.md", "adapt.json", "config.json",
                                                     "model.safetensors", "tokenizer.json"]
    assert json.loads((out / "config.json").read_text())["snippet_context"] is True  # trained with snippet rows
    before, after = weights(tiny_model_dir), weights(out)
    assert any(not torch.equal(before[k].float(), after[k].float()) for k in before)
    record = json.loads((out / "adapt.json").read_text())
    assert record["data"]["files"] == 2 and record["steps"] == 2
    assert record["data"]["rows_per_step"] == {"repository": 3, "with_snippets": 1, "replay": 0}
    card = (out / "MODEL_CARD.md").read_text()
    assert str(repo) in card and f"{record['data']['tokens']:,}" in card
    runner = ModelRunner(out)
    [result] = runner.complete(Job.fim("def f(x):\n    return ", "\n", "single_line", 8), None)
    assert isinstance(result.text, str)


def test_snippet_rows_carry_definitions_from_the_other_file(repo):
    tok = CodeTokenizer(bundled_model_dir() / "tokenizer.json")  # the tiny one's lines leave no room for snippets
    files = [RepoFile(p.name, p.read_text()) for p in sorted(repo.iterdir())]
    rows, data = make_rows(tok, files, quick(bundled_model_dir(), None), None, np.random.default_rng(0))
    assert rows.snippets is not None and data["rows_per_step"]["with_snippets"] == 1
    texts = [tok.decode(rows.snippets.ids[a:b].tolist())
             for a, b in zip(rows.snippets.offsets[:-1], rows.snippets.offsets[1:])]
    assert any("def rectangle_area(width, height)" in text for text in texts)
    inputs, targets, weights_ = rows.batch(np.random.default_rng(1))
    assert inputs.shape == targets.shape == weights_.shape == (4, 128)


def test_a_second_run_resumes_and_a_changed_repository_starts_over(tiny_model_dir, repo, tmp_path):
    out = tmp_path / "adapted"
    adapt(quick(tiny_model_dir, out, repo))
    first = json.loads((out / "adapt.json").read_text())
    adapt(quick(tiny_model_dir, out, repo, steps=4))
    resumed = json.loads((out / "adapt.json").read_text())
    assert (first["sessions"], first["steps"]) == (1, 2) and (resumed["sessions"], resumed["steps"]) == (2, 4)
    (repo / "report.py").write_text(REPORT * 2)
    adapt(quick(tiny_model_dir, out, repo, steps=4))
    assert json.loads((out / "adapt.json").read_text())["sessions"] == 1


def test_a_step_budget_stops_the_run_before_the_time_budget(tiny_model_dir, repo, tmp_path):
    out = adapt(quick(tiny_model_dir, tmp_path / "adapted", repo, steps=3))
    assert json.loads((out / "adapt.json").read_text())["steps"] == 3


def test_ctrl_c_still_saves_a_usable_model(tiny_model_dir, repo, tmp_path, monkeypatch):
    real, calls = adapt_module.batch_loss, []

    def interrupted(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(adapt_module, "batch_loss", interrupted)
    out = adapt(quick(tiny_model_dir, tmp_path / "adapted", repo, steps=5))
    assert json.loads((out / "adapt.json").read_text())["steps"] == 1
    assert (run_dir(out) / "state.safetensors").exists()
    ModelRunner(out)


def test_a_failed_write_leaves_the_previous_model_whole(tiny_model_dir, repo, tmp_path, monkeypatch):
    out = adapt(quick(tiny_model_dir, tmp_path / "adapted", repo))
    previous = weights(out)

    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(adapt_module, "save_model", disk_full)
    with pytest.raises(SystemExit, match="No space left on device"):
        adapt(quick(tiny_model_dir, out, repo, steps=3))
    assert all(torch.equal(previous[k], weights(out)[k]) for k in previous)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adapted", "adapted.partial", "repo"]


def test_add_figures_records_held_out_figures_once(tiny_model_dir, repo, tmp_path):
    out = adapt(quick(tiny_model_dir, tmp_path / "adapted", repo))
    add_figures(out, {"exact_match": 0.1})
    add_figures(out, {"exact_match": 0.2})
    card = (out / "MODEL_CARD.md").read_text()
    assert card.count("## Held-out figures") == 1 and '"exact_match": 0.2' in card
    assert json.loads((out / "adapt.json").read_text())["held_out"] == {"exact_match": 0.2}


def test_bad_input_gets_a_clear_error(tiny_model_dir, repo, tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "data.bin.py").write_bytes(b"\x00" * 64)
    cases = [([str(repo / "geometry.py")], "is not a folder"), ([str(empty)], "holds no source file"),
             ([str(repo), "--base", str(repo)], "is not a model folder"),
             ([str(repo), "--minutes", "0"], "--minutes must be above 0")]
    for argv, message in cases:
        assert main(argv + ["--out", str(tmp_path / "never")]) == 2
        assert message in capsys.readouterr().err
    assert not (tmp_path / "never").exists()


def test_editor_shaped_holes_end_at_line_ends():
    newline, rng = 3, np.random.default_rng(0)
    window = np.tile(np.array([10, 11, 12, 13, newline]), 40)
    sp = Special(mask=0, pad=1, newline=newline)
    lines_only = dataclasses.replace(EDITOR_SHAPES, span=0.0, tail=EDITOR_SHAPES.tail + EDITOR_SHAPES.span)
    tails = 0
    for _ in range(50):
        ids, is_hole = cut_holes(window, sp, rng, len(window), lines_only)
        holes = np.flatnonzero(is_hole & (ids != sp.pad))
        starts = holes[np.insert(np.diff(holes) > 1, 0, True)]
        ends = holes[np.append(np.diff(holes) > 1, True)]  # last real token of each hole
        if is_hole[-1]:  # a hole cut off by the window's end
            ends = ends[:-1]
        assert (ids[ends] == newline).all()
        tails += int((ids[starts - 1] != newline).sum())  # a hole that starts mid-line: a line's tail
    assert tails > 10


def test_a_public_checkpoint_gets_lora_adapters_that_serve(tmp_path, repo):
    pytest.importorskip("peft")
    base = write_tiny("dream", tmp_path / "dream")
    out = adapt(quick(base, tmp_path / "adapted", repo, lora_rank=4))
    assert (out / "adapter_model.safetensors").exists() and not (out / "model.safetensors").exists()
    record = json.loads((out / "adapt.json").read_text())
    assert record["steps"] == 2 and record["data"]["rows_per_step"]["with_snippets"] == 0  # no snippet token
    assert "LoRA adapters of rank 4" in (out / "MODEL_CARD.md").read_text()
    [result] = ModelRunner(out).complete(Job.fim("def f(x):\n    return ", "\n", "single_line", 4), None)
    assert isinstance(result.text, str)
