"""The arena's SQLite vote store: votes survive, two processes writing at once lose none, a write
that finds the store locked is tried again, a store that stays locked or is corrupt says so and
loses nothing."""
from __future__ import annotations

import sqlite3
import subprocess
import sys

import pytest

from infill.paths import REPO_ROOT
from lsp_server import arena_votes
from lsp_server.arena_votes import Vote, VoteStore, VoteStoreError

WRITER = """import sys
from lsp_server.arena_votes import Vote, VoteStore
store, name, count = VoteStore(sys.argv[1]), sys.argv[2], int(sys.argv[3])
print("ready", flush=True)
sys.stdin.readline()
for i in range(count):
    store.record(Vote(f"{name}-{i}", "diffusion", "twin", "top", 120.0, 80.0, 900, "python", 12, 9))
"""


def vote(battle_id: str, pick: str = "top") -> Vote:
    return Vote(battle_id, "diffusion", "twin", pick, 120.0, 80.0, 900, "python", 12, 9)


def test_votes_are_kept_in_order_with_their_fields(tmp_path):
    store = VoteStore(tmp_path / "state" / "arena.sqlite3")
    assert store.votes() == []
    store.record(vote("b1"))
    store.record(vote("b2", "bottom"))
    kept = store.votes()
    assert [(v.battle_id, v.pick, v.top, v.bottom) for v in kept] == [("b1", "top", "diffusion", "twin"),
                                                                      ("b2", "bottom", "diffusion", "twin")]
    assert kept[0].top_latency_ms == 120.0 and kept[0].context_chars == 900 and kept[0].created > 0


def test_a_battle_is_voted_on_once(tmp_path):
    store = VoteStore(tmp_path / "arena.sqlite3")
    store.record(vote("b1"))
    with pytest.raises(VoteStoreError, match="already has a vote"):
        store.record(vote("b1", "bottom"))
    assert [v.pick for v in store.votes()] == ["top"]


def test_a_locked_store_gives_a_clear_error_and_keeps_the_votes_written(tmp_path):
    path = tmp_path / "arena.sqlite3"
    store = VoteStore(path, lock_wait_s=0.05)
    store.record(vote("b1"))
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(VoteStoreError, match="locked by another process.*3 times.*votes already in it are kept"):
            store.record(vote("b2"))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    store.record(vote("b3"))
    assert [v.battle_id for v in store.votes()] == ["b1", "b3"]


def test_the_store_is_in_wal_mode(tmp_path):
    path = tmp_path / "arena.sqlite3"
    VoteStore(path).record(vote("b1"))
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_a_write_that_finds_the_store_locked_is_tried_again(tmp_path, monkeypatch):
    path = tmp_path / "arena.sqlite3"
    store = VoteStore(path, lock_wait_s=0.05)
    store.record(vote("b1"))
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    pauses = []

    def release(tries: int) -> None:  # the other process lets go while this one backs off
        pauses.append(tries)
        holder.execute("ROLLBACK")

    monkeypatch.setattr(arena_votes, "backoff", release)
    try:
        store.record(vote("b2"))
    finally:
        holder.close()
    assert pauses == [1] and [v.battle_id for v in store.votes()] == ["b1", "b2"]


def test_two_processes_writing_at_once_lose_no_vote(tmp_path):
    path = tmp_path / "arena.sqlite3"
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), name, "300"], cwd=REPO_ROOT,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for name in ("a", "b")]
    try:
        for writer in writers:  # both are up before either writes
            assert writer.stdout.readline() == "ready\n", writer.stderr.read()
        for writer in writers:
            writer.stdin.write("go\n")
            writer.stdin.flush()
        for writer in writers:
            _, errors = writer.communicate(timeout=120)
            assert writer.returncode == 0, errors
    finally:
        for writer in writers:
            writer.kill()
            writer.wait()
    kept = VoteStore(path).votes()
    assert len(kept) == 600
    assert {v.battle_id for v in kept} == {f"{name}-{i}" for name in ("a", "b") for i in range(300)}


def test_a_corrupt_store_gives_a_clear_error_and_is_left_as_it_is(tmp_path):
    path = tmp_path / "arena.sqlite3"
    garbage = b"this is not a database, " * 100
    path.write_bytes(garbage)
    store = VoteStore(path)
    with pytest.raises(VoteStoreError, match="not a readable SQLite database.*move it aside"):
        store.record(vote("b1"))
    with pytest.raises(VoteStoreError, match="not a readable SQLite database"):
        store.votes()
    assert path.read_bytes() == garbage


def test_a_bad_pick_is_refused():
    with pytest.raises(ValueError, match="top, bottom, neither"):
        vote("b1", "left")
