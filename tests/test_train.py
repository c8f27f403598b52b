"""`infill train` and the prepared GPU run, end to end on the CPU at a tiny size."""
from __future__ import annotations

import json
import lzma
import os
import subprocess
import sys
import tarfile
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from infill.checkpoint import load_model
from infill.paths import REPO_ROOT
import torch

from infill.model import ModelConfig, Transformer
from training.train import batch_loss, causal_loss, lr_at, main as train_main
from tests.conftest import SAMPLE_CODE

TINY_SHAPE = ["--hidden", "32", "--layers", "2", "--heads", "4", "--kv-heads", "2", "--ffn", "64",
              "--seq-len", "64", "--batch", "2", "--threads", "1", "--device", "cpu"]


@pytest.fixture
def tiny_corpus(tmp_path, tiny_tokenizer) -> Path:
    """A corpus folder shaped like `infill corpus build`'s, made of the sample code."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    tiny_tokenizer.tok.save(str(corpus / "tokenizer.json"))
    ids = np.array(tiny_tokenizer.encode(SAMPLE_CODE * 20), dtype=np.uint16)
    ids.tofile(corpus / "train.bin")
    ids[: len(ids) // 2].tofile(corpus / "val.bin")
    (corpus / "val_files.jsonl").write_text(json.dumps({"path": "sample.py", "text": SAMPLE_CODE}) + "\n")
    return corpus


def read_log(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines()]


def test_schedule_anneals_by_the_time_budget():
    args = SimpleNamespace(lr=1.0, warmup=10)
    assert lr_at(0, 1000, args) == pytest.approx(0.1)  # warm-up
    assert lr_at(100, 1000, args, time_share=0.0) > 0.9
    assert lr_at(100, 1000, args, time_share=1.0) == pytest.approx(0.1)  # out of time: fully annealed
    assert lr_at(1000, 1000, args, time_share=0.2) == pytest.approx(0.1)  # out of tokens first


def test_ar_then_diffusion_then_resume(tiny_corpus, tmp_path):
    ar, diffusion = tmp_path / "ar", tmp_path / "diffusion"
    common = ["--corpus", str(tiny_corpus), *TINY_SHAPE, "--eval-every", "2", "--save-every", "2"]
    train_main(["--phase", "ar", "--out", str(ar), "--tokens", str(4 * 128), *common])
    assert [r["step"] for r in read_log(ar)] == [1, 2, 3, 4]
    assert load_model(ar / "model").cfg.causal

    train_main(["--phase", "diffusion", "--init", str(ar / "model"), "--out", str(diffusion),
                "--tokens", str(2 * 128), "--fim-tasks", "2", *common])
    model = load_model(diffusion / "model")
    assert not model.cfg.causal
    assert "fim_exact" in read_log(diffusion)[-1]

    train_main(["--phase", "diffusion", "--out", str(diffusion), "--tokens", str(4 * 128), "--fim-tasks", "0",
                *common])  # a larger budget resumes the same run from its state.pt
    assert [r["step"] for r in read_log(diffusion)] == [1, 2, 3, 4]


def test_causal_rows_of_a_bidirectional_model_are_its_autoregressive_loss():
    cfg = ModelConfig(vocab_size=64, hidden_size=32, num_layers=2, num_heads=4, num_kv_heads=2, head_dim=8,
                      intermediate_size=64, causal=False)
    model = Transformer(cfg).eval()
    windows = np.random.default_rng(0).integers(3, 64, size=(2, 17))
    joint = causal_loss(model, windows, "cpu")
    cfg.causal = True  # the same weights as an autoregressive model
    assert joint.item() == pytest.approx(batch_loss(model, (windows,), "ar", "cpu").item(), rel=1e-5)
    cfg.causal = False  # a bidirectional pass sees the future: the loss it would give is not the causal one
    with torch.no_grad():
        seen = batch_loss(model, (windows,), "ar", "cpu").item()
    assert seen != pytest.approx(joint.item(), rel=1e-5)


def test_joint_objective_trains_from_an_autoregressive_model(tiny_corpus, tmp_path):
    ar, joint = tmp_path / "ar", tmp_path / "joint"
    common = ["--corpus", str(tiny_corpus), *TINY_SHAPE, "--eval-every", "2", "--fim-tasks", "0"]
    with pytest.raises(SystemExit):  # a joint objective adapts a model; from nothing it is refused
        train_main(["--phase", "diffusion", "--out", str(joint), "--ar-share", "0.5", *common])
    train_main(["--phase", "ar", "--out", str(ar), "--tokens", str(2 * 128), *common])
    train_main(["--phase", "diffusion", "--init", str(ar / "model"), "--out", str(joint), "--ar-share", "0.5",
                "--tokens", str(2 * 128), *common])
    assert [r["step"] for r in read_log(joint)] == [1, 2]
    assert not load_model(joint / "model").cfg.causal


def test_time_budget_stops_and_still_evaluates(tiny_corpus, tmp_path):
    run = tmp_path / "timed"
    train_main(["--phase", "ar", "--out", str(run), "--corpus", str(tiny_corpus), *TINY_SHAPE,
                "--tokens", "1e12", "--minutes", "0.02", "--eval-every", "1000000"])
    log = read_log(run)
    assert log and "val_loss" in log[-1] and (run / "model" / "model.safetensors").exists()


def test_a_timed_run_saves_its_model_at_90_percent_then_at_its_end(tiny_corpus, tmp_path, monkeypatch):
    from training import train as training

    saved, real = [], training.save_model_folder

    def spy(model, tok, folder):
        saved.append(read_log(tmp_path / "timed")[-1]["step"] if (tmp_path / "timed" / "log.jsonl").exists() else 0)
        real(model, tok, folder)

    monkeypatch.setattr(training, "save_model_folder", spy)
    train_main(["--phase", "diffusion", "--out", str(tmp_path / "timed"), "--corpus", str(tiny_corpus), *TINY_SHAPE,
                "--tokens", "1e12", "--minutes", "0.03", "--eval-every", "1000000", "--fim-tasks", "0"])
    last = read_log(tmp_path / "timed")[-1]["step"]
    assert len(saved) == 2 and saved[0] <= last  # once at 90% of the minutes (the cut run's model), once at the end
    assert load_model(tmp_path / "timed" / "model").cfg.causal is False


def test_cuda_asked_without_cuda_fails_at_once(tiny_corpus, tmp_path, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(SystemExit, match="sees no CUDA device"):
        train_main(["--phase", "ar", "--out", str(tmp_path / "r"), "--corpus", str(tiny_corpus), *TINY_SHAPE[:-2],
                    "--device", "cuda", "--tokens", "1e3"])
    assert not (tmp_path / "r").exists()


@pytest.mark.slow
def test_prepared_gpu_run_end_to_end(tiny_corpus, tmp_path):
    """The exact script the GPU gets, with tiny sizes and a compressed token file, on the CPU."""
    train_bin = tiny_corpus / "train.bin"
    (tiny_corpus / "train.bin.xz").write_bytes(lzma.compress(train_bin.read_bytes()))
    train_bin.unlink()
    results = tmp_path / "results"
    env = {**os.environ, "PYTHON": sys.executable, "NAME": "tiny", "RUNS": str(tmp_path / "runs"),
           "MODELS": str(tmp_path / "models"), "HIDDEN": "32", "LAYERS": "2", "HEADS": "4", "FFN": "64",
           "SEQ_LEN": "64", "BATCH": "2", "AR_MINUTES": "0.03", "DIFFUSION_MINUTES": "0.03", "THREADS": "1",
           "EVAL_EVERY": "5", "DEVICE": "cpu"}
    subprocess.run(["bash", "scripts/train_gpu.sh", str(tiny_corpus), str(results)], cwd=REPO_ROOT, env=env,
                   check=True, capture_output=True, timeout=240)
    for name, causal in (("tiny-ar", True), ("tiny", False)):
        pieces = sorted(results.glob(f"{name}.tar.part-*"))
        joined = tmp_path / f"{name}.tar"
        joined.write_bytes(b"".join(p.read_bytes() for p in pieces))
        with tarfile.open(joined) as tar:
            tar.extractall(tmp_path / "home", filter="data")
        assert load_model(tmp_path / "home" / name).cfg.causal is causal
        assert (tmp_path / "home" / "log.jsonl").exists()
    assert "done:" in (results / "train.log").read_text()
