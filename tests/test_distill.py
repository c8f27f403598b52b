"""Self-distillation: the teacher's records (`training.distill`) and the `distill` training phase."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from infill.checkpoint import load_model
from training.distill import main as distill_main, teacher_middle, training_texts
from training.train import certainty_loss, main as train_main
from tests.test_train import TINY_SHAPE, read_log, tiny_corpus  # noqa: F401 (a fixture)

PAD, NL = 1, 9


def test_teacher_middle_ends_at_pad_loop_or_line_count():
    assert teacher_middle([5, 6, NL, 7, PAD, 8], lines=3, pad_id=PAD, newline_id=NL) == [5, 6, NL, 7, PAD, PAD]
    assert teacher_middle([5, NL, 6, NL, 7, NL], lines=2, pad_id=PAD, newline_id=NL) == [5, NL, 6, NL, PAD, PAD]
    looped = [4, 5] * 8  # a loop is cut back to its first copy
    assert teacher_middle(looped, lines=1, pad_id=PAD, newline_id=NL) == [4, 5] + [PAD] * 14


def test_training_texts_are_whole_files_of_the_training_split(tiny_tokenizer, tmp_path):
    files = ["def a():\n    return 1\n", "x = [i for i in range(3)]\n", "class C:\n    pass\n"]
    ids = [i for text in files * 5 for i in [tiny_tokenizer.file_id] + tiny_tokenizer.encode(text)]
    np.array(ids, dtype=np.uint16).tofile(tmp_path / "train.bin")
    texts = training_texts(tmp_path / "train.bin", tiny_tokenizer, np.random.default_rng(0))
    seen = [next(texts) for _ in range(20)]
    assert set(seen) <= set(files) and len(set(seen)) > 1


def test_certainty_loss_counts_only_positions_already_right():
    logits = torch.tensor([[2.0, 0.0, 0.0], [0.0, 2.0, 0.0]])
    wanted = torch.tensor([0, 0])  # the first is right, the second wrong
    only_first = certainty_loss(logits, wanted, torch.tensor([1.0, 0.0]))
    both = certainty_loss(logits, wanted, torch.tensor([1.0, 1.0]))
    assert only_first > 0 and both == only_first / 2  # the wrong one adds no entropy, only weight
    sharper = certainty_loss(logits * 3, wanted, torch.tensor([1.0, 0.0]))
    assert sharper < only_first


def test_teacher_records_then_a_distill_run(tiny_model_dir, tiny_tokenizer, tiny_corpus, tmp_path):  # noqa: F811
    corpus_ids = np.fromfile(tiny_corpus / "train.bin", dtype=np.uint16)  # one file: its marker first
    np.concatenate([[tiny_tokenizer.file_id], corpus_ids]).astype(np.uint16).tofile(tiny_corpus / "train.bin")
    records = tmp_path / "teacher.jsonl"
    distill_main(["--corpus", str(tiny_corpus), "--model", str(tiny_model_dir), "--count", "4",
                  "--weights", "fp32", "--out", str(records)])
    rows = [json.loads(line) for line in records.read_text().splitlines()]
    assert len(rows) == 4
    for row in rows:
        start, stop = row["hole"]
        assert 0 < start < stop <= len(row["ids"]) and 0 not in row["ids"][start:stop]  # no mask left
        assert row["ids"][:start] != [] and row["mode"] in ("single_line", "multi_line")

    run = tmp_path / "distilled"
    train_main(["--phase", "distill", "--init", str(tiny_model_dir), "--teacher", str(records),
                "--corpus", str(tiny_corpus), "--out", str(run), *TINY_SHAPE, "--tokens", str(2 * 128),
                "--eval-every", "2", "--fim-tasks", "1"])
    log = read_log(run)
    assert [r["step"] for r in log] == [1, 2] and "val_loss" in log[-1] and "fim_exact" in log[-1]
    model = load_model(run / "model")
    assert not model.cfg.causal
    assert model.cfg.max_position_embeddings == load_model(tiny_model_dir).cfg.max_position_embeddings



def test_distill_needs_a_model_and_its_teachers_answers(tiny_corpus, tmp_path):  # noqa: F811
    with pytest.raises(SystemExit):
        train_main(["--phase", "distill", "--corpus", str(tiny_corpus), "--out", str(tmp_path / "run")])
