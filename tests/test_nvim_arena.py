"""The arena in a real, headless Neovim against the real language server and two fake workers (each
answers its own pid, so the pair differs): tests/nvim/test_arena.lua sees both answers in one ghost
text, takes the bottom one with <S-Tab> and types on past a second pair; the votes land in SQLite.
On each Neovim `run_nvim` finds (0.7 on PATH, the dev extra's 0.12); a missing one is skipped."""
from __future__ import annotations

import sqlite3

import pytest

import fake_worker
from engine.launch import start_worker_process, stop_worker
from infill.paths import REPO_ROOT

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

SCRIPT = REPO_ROOT / "tests" / "nvim" / "test_arena.lua"


@pytest.fixture
def two_workers(short_tmp):
    addresses = [f"ipc://{short_tmp}/a.sock", f"ipc://{short_tmp}/b.sock"]
    processes = [start_worker_process(fake_worker.argv(a), a, timeout_s=20) for a in addresses]
    yield addresses
    for process in processes:
        stop_worker(process)


def test_neovim_shows_an_arena_pair_and_shift_tab_votes_for_the_bottom(tmp_path, run_nvim, two_workers):
    source, votes = tmp_path / "example.py", tmp_path / "arena.sqlite3"
    source.write_text("def add(a, b):\n    return a + b\n\n\ndef area(r):\n    \n")
    outcome = run_nvim(SCRIPT, INFILL_PLUGIN=str(REPO_ROOT / "editors" / "nvim"), INFILL_FILE=str(source),
                       INFILL_WORKER_A=two_workers[0], INFILL_WORKER_B=two_workers[1], INFILL_VOTES=str(votes))
    assert outcome["bottom"]
    with sqlite3.connect(votes) as connection:
        picks = [row[0] for row in connection.execute("SELECT pick FROM votes ORDER BY id")]
    assert picks[:2] == ["bottom", "neither"] and set(picks[2:]) <= {"neither"}
