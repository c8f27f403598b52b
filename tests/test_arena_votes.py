"""The arena's SQLite vote store: votes survive, a locked or corrupt store says so and loses nothing."""
from __future__ import annotations

import sqlite3

import pytest

from lsp_server.arena_votes import Vote, VoteStore, VoteStoreError


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
    store = VoteStore(path)
    store.record(vote("b1"))
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(VoteStoreError, match="locked by another process.*votes already in it are kept"):
            store.record(vote("b2"))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    store.record(vote("b3"))
    assert [v.battle_id for v in store.votes()] == ["b1", "b3"]


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
