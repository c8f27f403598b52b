"""Neovim as a real client: tests/nvim/test_lsp.lua drives `infill lsp` through Neovim's built-in
LSP client (headless, `-u NONE`, as Debian's Neovim 0.7 allows). Skipped where `nvim` is missing;
`.ci/run` installs it."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from infill.paths import REPO_ROOT

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300),
              pytest.mark.skipif(shutil.which("nvim") is None, reason="needs nvim (apt-get install neovim)")]

SCRIPT = REPO_ROOT / "tests" / "nvim" / "test_lsp.lua"
SOURCE = "import o\n\n\ndef add(a, b):\n    return a + b\n"


def test_neovim_gets_inline_completions_and_completion_items(tmp_path, model_env):
    source, log, result = tmp_path / "example.py", tmp_path / "lsp.log", tmp_path / "result.json"
    source.write_text(SOURCE)
    env = {**model_env, "INFILL_PYTHON": sys.executable, "INFILL_FILE": str(source),
           "INFILL_LOG": str(log), "INFILL_RESULT": str(result)}
    process = subprocess.run(["nvim", "--headless", "-u", "NONE", "-c", f"luafile {SCRIPT}"],
                             env=env, cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True,
                             timeout=280)
    outcome = json.loads(result.read_text()) if result.exists() else {}
    server_log = log.read_text()[-3000:] if log.exists() else "(no server log)"
    assert process.returncode == 0 and outcome.get("ok"), (
        f"Neovim exited {process.returncode}: {outcome}\n{process.stderr.decode()[-2000:]}\n{server_log}")
    assert outcome["inline"] and outcome["completion"] and isinstance(outcome["after_typing"], list)
