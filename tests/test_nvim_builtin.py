"""Neovim 0.12's built-in inline completion with no plugin, against `infill lsp` and the bundled
model: tests/nvim/test_builtin.lua sets it up as the README says (vim.lsp.config, vim.lsp.enable,
vim.lsp.inline_completion.enable, <Tab> mapped to vim.lsp.inline_completion.get()), types until the
ghost text shows, takes it with <Tab>, and checks the buffer and the server's stats log. On each
Neovim `run_nvim` finds; one before 0.12 (Debian's 0.7) has no built-in and is skipped, saying so."""
from __future__ import annotations

import sysconfig
from pathlib import Path

import pytest

from infill.paths import REPO_ROOT

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

SCRIPT = REPO_ROOT / "tests" / "nvim" / "test_builtin.lua"
SOURCE = ("import os\n\n\ndef add(a, b):\n    return a + b\n\n\n"
          "def read_lines(path):\n    with open(path) as handle:\n        return \n")


def test_neovim_built_in_inline_completion_shows_and_takes_infill_ghost_text(tmp_path, run_nvim):
    source, stats = tmp_path / "example.py", tmp_path / "stats.jsonl"
    source.write_text(SOURCE)
    command = Path(sysconfig.get_path("scripts")) / "infill"
    assert command.is_file(), f"no `infill` command in this environment ({command}): pip install -e ."
    outcome = run_nvim(SCRIPT, INFILL_COMMAND=str(command), INFILL_FILE=str(source), INFILL_STATS=str(stats))
    if "skipped" in outcome:
        pytest.skip(outcome["skipped"])
    assert outcome["suggestion"] and "accept" in outcome["events"]
