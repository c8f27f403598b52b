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
from training.batches import Windows, product_batch
from training.noising import Special
from training.snippet_data import build
from training.snippet_windows import SnippetWindows
from training.train import main as train_main, parse_args
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


# What the GPU machine lacks (its Python has torch and numba, not the language server's parsers): the
# session runs there with these unimportable, so the rehearsal below runs with them unimportable too.
ABSENT_ON_THE_GPU = ("tree_sitter", "pygls", "lsprotocol")
GPU_LIKE_SITE = f"""import importlib.abc, sys
class Absent(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.startswith({ABSENT_ON_THE_GPU!r}):
            raise ModuleNotFoundError(f"No module named {{name!r}} (not on the GPU machine)", name=name)
sys.meta_path.insert(0, Absent())
"""


def gpu_like(env: dict[str, str], folder: Path) -> dict[str, str]:
    """env whose Pythons cannot import ABSENT_ON_THE_GPU (a sitecustomize first on PYTHONPATH), and
    whose pytest loads no plugin of this machine's (pytest-lsp, pytest-asyncio: none are there)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(GPU_LIKE_SITE)
    return {**env, "PYTHONPATH": os.pathsep.join(filter(None, [str(folder), env.get("PYTHONPATH")])),
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


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

    session = subprocess.run([str(script)], env=gpu_like(env, tmp_path / "gpu-like"), capture_output=True, text=True,
                             timeout=280)
    out = tmp_path / "out"
    log = (out / "session.log").read_text()
    assert session.returncode == 0, log[-3000:] + session.stderr[-2000:]
    returned = sorted(p.name for p in out.iterdir())
    assert returned == ["check.tar", "preflight.txt", "session.log", "summary.txt", "tiny-ar.tar.part-aa",
                        "tiny.tar.part-aa"]
    preflight = (out / "preflight.txt").read_text()
    assert "verdict: go" in preflight and "import torch:" in preflight and "commit on cpu: agrees" in preflight
    assert "import training.train: ok" in preflight and "import training.bundle: ok" in preflight
    assert log.index("preflight passed") < log.index("AR phase")
    assert "saved" in log and "at 90% of --minutes" in log
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


@pytest.mark.slow
def test_a_session_given_a_model_continues_it_with_no_ar_phase(corpus, tiny_model_dir, tmp_path):
    """INIT_MODEL at --prepare: the model travels int8, the session skips the AR phase and trains
    that model on (its config kept: 256 positions, where a new model gets the session's 64)."""
    env = session_env(tmp_path, WHEELS=str(corpus / "wheels"), INIT_MODEL=str(tiny_model_dir))
    prepared = run_script("--prepare", str(corpus), env=env)
    assert prepared.returncode == 0, prepared.stdout[-2000:] + prepared.stderr[-2000:]
    assert (tmp_path / "in" / "init" / "config.json").is_file()
    session = subprocess.run([str(REPO_ROOT / "scripts" / "gpu_session.sh")], env=gpu_like(env, tmp_path / "gpu-like"),
                             capture_output=True, text=True, timeout=280)
    out = tmp_path / "out"
    log = (out / "session.log").read_text()
    assert session.returncode == 0, log[-3000:] + session.stderr[-2000:]
    assert f"AR phase: skipped, continuing {tmp_path / 'in'}/init" in log
    assert "tiny.tar.part-aa" in {p.name for p in out.iterdir()} and not list(out.glob("*-ar.tar.part-*"))
    models = tmp_path / "models"
    assert run_script("--unpack", str(out), str(models), env=env).returncode == 0
    cfg = load_model(models / "tiny").cfg
    assert cfg.max_position_embeddings == 256 and not cfg.causal and cfg.snippet_context
    with safe_open(str(models / "tiny" / "model.safetensors"), framework="pt") as trained, \
            safe_open(str(tiny_model_dir / "model.safetensors"), framework="pt") as init:
        name = next(k for k in init.keys() if k.endswith("weight") and "embed" in k)
        assert trained.get_tensor(name).shape == init.get_tensor(name).shape


def run_script(*args: str, env: dict, timeout: int = 120) -> subprocess.CompletedProcess:
    return subprocess.run([str(REPO_ROOT / "scripts" / "gpu_session.sh"), *args], env=env, capture_output=True,
                          text=True, timeout=timeout)


def test_preflight_writes_its_verdict_line_by_line(tmp_path):
    out = tmp_path / "preflight.txt"
    done = subprocess.run([sys.executable, str(REPO_ROOT / "scripts" / "gpu_preflight.py"), str(out), "--cpu"],
                          capture_output=True, text=True, timeout=120)
    text = out.read_text()
    assert done.returncode == 0, text
    assert [line.split(" s  ", 1)[1].split(":")[0] for line in text.splitlines()][:3] == ["import torch",
                                                                                        "import numpy", "import numba"]
    assert "row_stats=" in text and text.splitlines()[-1].split(" s  ", 1)[1].startswith("verdict: go")


def test_preflight_stops_a_session_where_torch_has_no_cuda(tmp_path):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA: the stop is for machines without it")
    out = tmp_path / "preflight.txt"
    done = subprocess.run([sys.executable, str(REPO_ROOT / "scripts" / "gpu_preflight.py"), str(out)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "verdict: stop, torch sees no CUDA device" in out.read_text()


def test_prepare_checks_seq_len_and_refuses_tracked_models(tmp_path):
    bad = run_script("--prepare", str(tmp_path), env=session_env(tmp_path, SEQ_LEN="100"))
    assert bad.returncode == 1 and "SEQ_LEN=100: use a multiple of 64" in bad.stdout
    tracked = subprocess.run(["git", "ls-files", "models/"], cwd=REPO_ROOT, capture_output=True, text=True).stdout
    if not tracked:
        pytest.skip("models/ is untracked in this checkout (a GPU trip is being prepared)")
    env = {k: v for k, v in session_env(tmp_path).items() if k != "GPU_SESSION_TINY"}
    refused = run_script("--prepare", str(tmp_path), env=env)
    assert refused.returncode == 1 and "models/ is still tracked" in refused.stdout
    assert not (tmp_path / "in").exists()


def test_prepare_deletes_no_init_folder_it_did_not_write(corpus, tmp_path):
    foreign = tmp_path / "in" / "init"
    foreign.mkdir(parents=True)
    (foreign / "notes.txt").write_text("mine")
    refused = run_script("--prepare", str(corpus), env=session_env(tmp_path))
    assert refused.returncode == 1 and "--prepare did not write it" in refused.stdout
    assert (foreign / "notes.txt").read_text() == "mine"


def test_unpack_takes_what_a_cut_run_returned(tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    (results / "session.log").write_text("gpu session: cut\n")
    done = run_script("--unpack", str(results), str(tmp_path / "models"), env=session_env(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "summary.txt: not in" in done.stdout and (tmp_path / "back" / "session.log").exists()


@pytest.mark.slow
def test_a_session_killed_after_the_90_percent_save_leaves_log_and_model(corpus, tmp_path):
    """The session cut hard (SIGKILL of its group) once the diffusion model's 90% save is packed:
    the log, the preflight and both models come back and unpack."""
    import signal
    import time

    env = session_env(tmp_path, WHEELS=str(corpus / "wheels"), DIFFUSION_MINUTES="0.5")
    assert run_script("--prepare", str(corpus), env=env).returncode == 0
    session = subprocess.Popen([str(REPO_ROOT / "scripts" / "gpu_session.sh")], env=env, start_new_session=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out = tmp_path / "out"
    try:
        while not (out / "tiny.tar.part-aa").exists() and session.poll() is None:
            time.sleep(0.5)
        assert session.poll() is None, "the session ended before the 90% save was packed"
    finally:
        os.killpg(session.pid, signal.SIGKILL)
        session.wait()
    assert "verdict: go" in (out / "preflight.txt").read_text()
    assert "at 90% of --minutes" in (out / "session.log").read_text()
    assert not (out / "summary.txt").exists()  # cut before the end
    models = tmp_path / "models"
    done = run_script("--unpack", str(out), str(models), env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(p.name for p in models.iterdir()) == ["tiny", "tiny-ar"]
    assert load_model(models / "tiny").cfg.causal is False
