"""The Neovim plugin (editors/nvim) in a real, headless Neovim: tests/nvim/test_plugin.lua types
into a Python buffer, waits for the ghost text, moves away, types again, accepts with <Tab>, and
checks the buffer and the server's stats log. Skipped where `nvim` is missing; `.ci/run` installs it."""
from __future__ import annotations

import shutil

import pytest

from infill.paths import REPO_ROOT

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300),
              pytest.mark.skipif(shutil.which("nvim") is None, reason="needs nvim (apt-get install neovim)")]

SCRIPT = REPO_ROOT / "tests" / "nvim" / "test_plugin.lua"
SOURCE = ("import os\n\n\ndef add(a, b):\n    return a + b\n\n\n"
          "def read_lines(path):\n    with open(path) as handle:\n        return \n")


def test_neovim_plugin_shows_ghost_text_and_accepts_it(tmp_path, run_nvim):
    source, stats = tmp_path / "example.py", tmp_path / "stats.jsonl"
    source.write_text(SOURCE)
    outcome = run_nvim(SCRIPT, INFILL_PLUGIN=str(REPO_ROOT / "editors" / "nvim"), INFILL_FILE=str(source),
                       INFILL_STATS=str(stats))
    assert outcome["suggestion"] and outcome["events"][:4] == ["show", "reject", "show", "accept"]
