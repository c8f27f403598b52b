"""The Neovim plugin (editors/nvim) in a real, headless Neovim: tests/nvim/test_plugin.lua types
into a Python buffer, waits for the ghost text, moves away, types again, accepts with <Tab>, and
checks the buffer and the server's stats log. Skipped where `nvim` is missing; `.ci/run` installs it."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from infill.paths import REPO_ROOT

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300),
              pytest.mark.skipif(shutil.which("nvim") is None, reason="needs nvim (apt-get install neovim)")]

SCRIPT = REPO_ROOT / "tests" / "nvim" / "test_plugin.lua"
SOURCE = ("import os\n\n\ndef add(a, b):\n    return a + b\n\n\n"
          "def read_lines(path):\n    with open(path) as handle:\n        return \n")


def test_neovim_plugin_shows_ghost_text_and_accepts_it(tmp_path, model_env):
    source, result = tmp_path / "example.py", tmp_path / "result.json"
    log, stats = tmp_path / "lsp.log", tmp_path / "stats.jsonl"
    source.write_text(SOURCE)
    env = {**model_env, "INFILL_PLUGIN": str(REPO_ROOT / "editors" / "nvim"), "INFILL_PYTHON": sys.executable,
           "INFILL_FILE": str(source), "INFILL_LOG": str(log), "INFILL_STATS": str(stats),
           "INFILL_RESULT": str(result)}
    process = subprocess.run(["nvim", "--headless", "-u", "NONE", "-c", f"luafile {SCRIPT}"],
                             env=env, cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True,
                             timeout=280)
    outcome = json.loads(result.read_text()) if result.exists() else {}
    server_log = log.read_text()[-3000:] if log.exists() else "(no server log)"
    assert process.returncode == 0 and outcome.get("ok"), (
        f"Neovim exited {process.returncode}: {outcome}\n{process.stderr.decode()[-2000:]}\n{server_log}")
    assert outcome["suggestion"] and outcome["events"][:4] == ["show", "reject", "show", "accept"]
