"""`python -m bench.arena leaderboard`: the editor's votes (or a run's battles) as a markdown table,
a PNG and one JSON object; a corrupt store is a clear error, not a traceback."""
from __future__ import annotations

import json

from bench.arena.cli import main
from lsp_server.arena_votes import Vote, VoteStore


def test_the_leaderboard_ranks_the_votes_and_draws_them(tmp_path, capsys):
    store = VoteStore(tmp_path / "arena.sqlite3")
    for i in range(40):
        winner_on_top = i % 2 == 0
        top, bottom = ("diffusion", "twin") if winner_on_top else ("twin", "diffusion")
        pick = "top" if winner_on_top else ("bottom" if i % 4 == 1 else "neither")
        store.record(Vote(f"b{i}", top, bottom, pick, 120.0, 90.0, 800, "python", 10, 12))
    plot = tmp_path / "board.png"
    assert main(["leaderboard", "--votes", str(store.path), "--plot", str(plot), "--json", "--rounds", "100"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("| rank | backend |") and "| 1 | diffusion |" in out[2]
    summary = json.loads(out[-1])
    assert summary["ranking"]["battles"] == 30  # "neither" is no battle
    assert summary["ranking"]["scores"]["diffusion"]["rank"] == 1
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_corrupt_store_is_a_clear_error(tmp_path, capsys):
    path = tmp_path / "arena.sqlite3"
    path.write_bytes(b"garbage" * 100)
    assert main(["leaderboard", "--votes", str(path)]) == 1
    assert "not a readable SQLite database" in capsys.readouterr().err
