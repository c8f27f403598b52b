"""Neovim as a real client: tests/nvim/test_lsp.lua drives `infill lsp` through Neovim's built-in
LSP client (headless, `-u NONE`, as Debian's Neovim 0.7 allows). Skipped where `nvim` is missing;
`.ci/run` installs it."""
from __future__ import annotations

import shutil

import pytest

from infill.paths import REPO_ROOT

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300),
              pytest.mark.skipif(shutil.which("nvim") is None, reason="needs nvim (apt-get install neovim)")]

SCRIPT = REPO_ROOT / "tests" / "nvim" / "test_lsp.lua"
SOURCE = "import o\n\n\ndef add(a, b):\n    return a + b\n"


def test_neovim_gets_inline_completions_and_completion_items(tmp_path, run_nvim):
    source = tmp_path / "example.py"
    source.write_text(SOURCE)
    outcome = run_nvim(SCRIPT, INFILL_FILE=str(source))
    assert outcome["inline"] and outcome["completion"] and isinstance(outcome["after_typing"], list)
