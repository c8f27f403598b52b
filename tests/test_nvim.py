"""Neovim as a real client: tests/nvim/test_lsp.lua drives `infill lsp` through Neovim's built-in
LSP client (headless, `-u NONE`, as Debian's Neovim 0.7 allows), on each Neovim `run_nvim` finds (0.7 on
PATH, which `.ci/run` installs, and the dev extra's 0.12); a missing one is skipped, saying why."""
from __future__ import annotations


import pytest

from infill.paths import REPO_ROOT

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

SCRIPT = REPO_ROOT / "tests" / "nvim" / "test_lsp.lua"
SOURCE = "from os import pa\n\n\ndef add(a, b):\n    return a + b\n"  # the model writes `th`


def test_neovim_gets_inline_completions_and_completion_items(tmp_path, run_nvim):
    """Items of both kinds, and after typing the inline item's first character, the rest of it."""
    source = tmp_path / "example.py"
    source.write_text(SOURCE)
    outcome = run_nvim(SCRIPT, INFILL_FILE=str(source))
    shown = outcome["inline"][0]
    assert len(shown) >= 2, f"the model wrote {shown!r}: too short to type through"
    assert outcome["completion"] and outcome["after_typing"] == [shown[1:]]  # the rest, typed through
