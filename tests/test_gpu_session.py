"""The prepared GPU session (scripts/gpu_session.sh): its training layouts in `infill train`, and
the script end to end on the CPU at a tiny size, the returned files unpacked into a models folder."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from safetensors import safe_open

from infill.checkpoint import load_model
from infill.fim_ar import Sentinels
from infill.paths import REPO_ROOT
from training.noising import Special
from training.snippet_data import SnippetWindows, build
from training.train import Windows, main as train_main, parse_args, product_batch
from tests.package_corpus import write_corpus

TINY_SHAPE = ["--hidden", "32", "--layers", "2", "--heads", "4", "--kv-heads", "2", "--ffn", "64",
              "--seq-len", "64", "--batch", "4", "--threads", "1", "--device", "cpu"]
LIMIT_BYTES, LIMIT_FILES, PIECE_BYTES = 64 * 1024 * 1024, 8, 16 * 1024 * 1024


@pytest.fixture
def corpus(tmp_path, tiny_tokenizer) -> Path:
    folder = write_corpus(tmp_path / "corpus", tiny_tokenizer, repeats=20)
    arrays, _ = build(folder, folder / "wheels", seq_len=64, seed=0)
    np.savez(folder / "snippets.npz", **arrays)
    return folder


def read_log(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines()]


def test_batches_rearrange_ar_rows_and_keep_snippets_out_of_the_holes(corpus, tiny_tokenizer):
    tok = tiny_tokenizer
    sp, st = Special(tok.mask_id, tok.pad_id, tok.newline_id), Sentinels.of(tok)
    snippets = SnippetWindows(corpus / "snippets.npz", tok.file_id, tok.snippet_id)
    rng = np.random.default_rng(0)
    args = SimpleNamespace(snippet_share=0.5, fim_rate=1.0, fim_spm=0.5, phase="ar")
    (ar,) = product_batch(Windows(corpus / "train.bin", 65), snippets, 8, args, sp, st, rng)
    assert ar.shape == (8, 65)
    assert (ar[:4, 0] == tok.file_id).all() and (ar[:4, 1] == st.prefix).all()  # corpus rows: all rearranged
    assert ((ar[:4] == st.end).sum(1) == 1).all()
    assert (ar[4:, 0] == tok.file_id).all() and (ar[4:] == st.prefix).sum(1).min() == 1  # after the snippets
    args.phase = "diffusion"
    inputs, targets, weights = product_batch(Windows(corpus / "train.bin", 64), snippets, 8, args, sp, st, rng)
    assert inputs.shape == targets.shape == weights.shape == (8, 64)
    assert (inputs[4:, 0] == tok.file_id).all() and not weights[4:, 0].any()
    for row in range(4, 8):
        context = np.flatnonzero(targets[row] == tok.snippet_id)
        assert not weights[row, :context.max() + 1 if len(context) else 1].any()


def test_ar_with_fim_and_snippets_then_diffusion_records_the_layouts(corpus, tmp_path):
    common = ["--corpus", str(corpus), *TINY_SHAPE, "--eval-every", "2", "--save-every", "2",
              "--snippets", str(corpus / "snippets.npz")]
    train_main(["--phase", "ar", "--out", str(tmp_path / "ar"), "--tokens", str(4 * 256), "--fim-rate", "0.5",
                *common])
    ar = load_model(tmp_path / "ar" / "model").cfg
    assert ar.causal and ar.fim_sentinels and ar.snippet_context
    train_main(["--phase", "diffusion", "--init", str(tmp_path / "ar" / "model"), "--out", str(tmp_path / "d"),
                "--tokens", str(2 * 256), "--fim-tasks", "1", *common])
    diffusion = load_model(tmp_path / "d" / "model").cfg
    assert not diffusion.causal and not diffusion.fim_sentinels and diffusion.snippet_context
    assert [r["step"] for r in read_log(tmp_path / "d")] == [1, 2] and "fim_exact" in read_log(tmp_path / "d")[-1]


def test_plain_runs_stay_as_they_were():
    args = parse_args(["--phase", "ar", "--out", "x"])
    assert args.fim_rate == 0 and args.snippets is None


def write_canvases(path: Path, corpus: Path, count: int = 6) -> Path:
    """Edit-training canvases as `training.edit_canvases` writes them: ids with the answers in, hole spans."""
    ids = np.fromfile(corpus / "train.bin", dtype=np.uint16)
    path.write_text("".join(json.dumps({"ids": ids[i * 40:i * 40 + 60].tolist(), "holes": [[20, 30]],
                                        "kind": "rename", "layout": "shown"}) + "\n" for i in range(count)))
    return path


def test_edit_canvases_and_snippets_mix_into_one_diffusion_batch(corpus, tmp_path):
    canvases = write_canvases(tmp_path / "canvases.jsonl", corpus)
    train_main(["--phase", "diffusion", "--out", str(tmp_path / "d"), "--corpus", str(corpus), *TINY_SHAPE,
                "--tokens", str(2 * 256), "--fim-tasks", "0", "--canvases", str(canvases), "--canvas-share", "0.25",
                "--snippets", str(corpus / "snippets.npz"), "--snippet-share", "0.5"])
    cfg = load_model(tmp_path / "d" / "model").cfg
    assert [r["step"] for r in read_log(tmp_path / "d")] == [1, 2]
    assert cfg.edit_canvas == "shown" and cfg.snippet_context


def session_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHON": sys.executable, "GPU_SESSION_TINY": "1", "IN": str(tmp_path / "in"),
            "OUT": str(tmp_path / "out"), "RUNS": str(tmp_path / "runs"), "BACK": str(tmp_path / "back"), **extra}


@pytest.mark.slow
def test_session_end_to_end_and_back_into_models(corpus, tmp_path):
    """--prepare here, the session as the GPU gets it, --unpack of what came back: tiny, on the CPU."""
    script = REPO_ROOT / "scripts" / "gpu_session.sh"
    env = session_env(tmp_path, WHEELS=str(corpus / "wheels"),
                      CANVASES=str(write_canvases(tmp_path / "canvases.jsonl", corpus)))
    prepared = subprocess.run([str(script), "--prepare", str(corpus)], env=env, capture_output=True, text=True,
                              timeout=120)
    assert prepared.returncode == 0, prepared.stdout[-2000:] + prepared.stderr[-2000:]
    inputs = {p.name for p in (tmp_path / "in").iterdir()}
    assert {"train.bin.xz", "snippets.npz", "tokenizer.json", "val.bin", "canvases.jsonl.xz"} <= inputs
    assert "train.bin" not in inputs and "to the GPU machine" in prepared.stdout

    session = subprocess.run([str(script)], env=env, capture_output=True, text=True, timeout=280)
    out = tmp_path / "out"
    log = (out / "session.log").read_text()
    assert session.returncode == 0, log[-3000:] + session.stderr[-2000:]
    returned = sorted(p.name for p in out.iterdir())
    assert returned == ["check.tar", "session.log", "summary.txt", "tiny-ar.tar.part-aa", "tiny.tar.part-aa"]
    sizes = [p.stat().st_size for p in out.iterdir()]
    assert len(sizes) <= LIMIT_FILES and sum(sizes) <= LIMIT_BYTES and max(sizes) <= PIECE_BYTES
    assert "gpu tests: rc 0" in log and "bench.gpu: rc 0" in log and "OVER THE LIMITS" not in log
    assert f"edit canvases: {tmp_path / 'in'}/canvases.jsonl at share 0.15" in log

    models = tmp_path / "models"
    unpacked = subprocess.run([str(script), "--unpack", str(out), str(models)], env=env, capture_output=True,
                              text=True, timeout=120)
    assert unpacked.returncode == 0, unpacked.stdout + unpacked.stderr
    assert sorted(p.name for p in models.iterdir()) == ["tiny", "tiny-ar"]
    for name, causal in (("tiny-ar", True), ("tiny", False)):
        with safe_open(str(models / name / "model.safetensors"), framework="pt") as f:
            assert (f.metadata() or {}).get("weights") == "int8-per-channel"
        cfg = load_model(models / name).cfg
        assert cfg.causal is causal and cfg.fim_sentinels is causal and cfg.snippet_context
        assert cfg.edit_canvas == ("" if causal else "shown")
        assert (tmp_path / "back" / f"{name}.log.jsonl").exists()
    assert (models / "tiny" / "decoder.json").exists() and (tmp_path / "back" / "check" / "bench.json").exists()
