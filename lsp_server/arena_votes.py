"""The arena's vote store: one SQLite file of the picks people made in the editor (sqlite3 only).

A vote is one shown pair: which backend was on top and which below, the pick ("top", "bottom"
or "neither" when the user typed on), both latencies, the context's size and the language. Each
vote is its own transaction, committed before `record` returns, so a failure later loses none
that was written. A store another process holds locked, or a file that is not an SQLite database,
raises VoteStoreError saying so; the file is never rewritten or replaced to get past it.
"""
from __future__ import annotations

import sqlite3
import time
from dataclasses import astuple, dataclass, fields
from pathlib import Path

DEFAULT_VOTES_PATH = Path("~/.local/state/infill/arena.sqlite3")
LOCK_WAIT_S = 1.0  # how long a write waits for another process's lock
PICKS = ("top", "bottom", "neither")

SCHEMA = """CREATE TABLE IF NOT EXISTS votes (
    id INTEGER PRIMARY KEY,
    battle_id TEXT NOT NULL UNIQUE,
    created REAL NOT NULL,
    top TEXT NOT NULL,
    bottom TEXT NOT NULL,
    pick TEXT NOT NULL CHECK (pick IN ('top', 'bottom', 'neither')),
    top_latency_ms REAL NOT NULL,
    bottom_latency_ms REAL NOT NULL,
    context_chars INTEGER NOT NULL,
    language TEXT NOT NULL,
    top_chars INTEGER NOT NULL,
    bottom_chars INTEGER NOT NULL
)"""


class VoteStoreError(RuntimeError):
    """The vote store cannot be written or read; the message says which file and what to do."""


@dataclass(frozen=True, slots=True)
class Vote:
    battle_id: str
    top: str  # the backend shown first
    bottom: str  # the backend shown below the separator
    pick: str  # "top", "bottom" or "neither"
    top_latency_ms: float
    bottom_latency_ms: float
    context_chars: int  # prefix + suffix sent
    language: str
    top_chars: int
    bottom_chars: int
    created: float = 0.0  # seconds since the epoch; 0 stamps it when recorded

    def __post_init__(self) -> None:
        if self.pick not in PICKS:
            raise ValueError(f"a pick is one of {', '.join(PICKS)}, got {self.pick!r}")


COLUMNS = [f.name for f in fields(Vote)]


class VoteStore:
    def __init__(self, path: str | Path = DEFAULT_VOTES_PATH):
        self.path = Path(path).expanduser()

    def _connect(self) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            return sqlite3.connect(self.path, timeout=LOCK_WAIT_S, isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise VoteStoreError(f"the vote store {self.path} cannot be opened: {exc}; set the arena's "
                                 "votes path to a writable file") from None

    def _failure(self, exc: sqlite3.Error, doing: str) -> VoteStoreError:
        if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
            return VoteStoreError(f"the vote store {self.path} is locked by another process (waited "
                                  f"{LOCK_WAIT_S:.0f} s); {doing} failed and the votes already in it are "
                                  "kept: close the other program, or point the arena's votes path elsewhere")
        return VoteStoreError(f"the vote store {self.path} is not a readable SQLite database ({exc}); "
                              f"{doing} failed and the file was left as it is: move it aside to start a new "
                              "store, or point the arena's votes path elsewhere")

    def record(self, vote: Vote) -> None:
        """Write one vote in a transaction of its own."""
        if vote.created == 0.0:
            vote = Vote(*astuple(vote)[:-1], created=time.time())
        connection = self._connect()
        try:
            connection.execute(SCHEMA)
            connection.execute("BEGIN IMMEDIATE")
            connection.execute(f"INSERT INTO votes ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})",
                               astuple(vote))
            connection.execute("COMMIT")
        except sqlite3.IntegrityError:
            connection.execute("ROLLBACK")
            raise VoteStoreError(f"battle {vote.battle_id} already has a vote in {self.path}; "
                                 "a pair is voted on once") from None
        except sqlite3.Error as exc:
            raise self._failure(exc, "recording this vote") from None
        finally:
            connection.close()

    def votes(self) -> list[Vote]:
        """Every vote, oldest first (none when the file does not exist yet)."""
        if not self.path.exists():
            return []
        connection = self._connect()
        try:
            connection.execute(SCHEMA)
            rows = connection.execute(f"SELECT {', '.join(COLUMNS)} FROM votes ORDER BY id").fetchall()
        except sqlite3.Error as exc:
            raise self._failure(exc, "reading the votes") from None
        finally:
            connection.close()
        return [Vote(*row) for row in rows]
