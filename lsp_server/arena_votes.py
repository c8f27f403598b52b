"""The arena's vote store: one SQLite file of the picks people made in the editor (sqlite3 only).

A vote is one shown pair: which backend was on top and which below, the pick ("top", "bottom"
or "neither" when the user typed on), both latencies, the context's size and the language. Each
vote is its own transaction, committed before `record` returns, so a failure later loses none
that was written. The store is in WAL mode, so readers never block the writer; several processes
(two editors' servers) write to one store in turn: a write waits up to `lock_wait_s` for another's
lock, and one that still finds the store locked is tried again after a short pause, up to
LOCKED_TRIES times. A store that stays locked, or a file that is not an SQLite database, raises
VoteStoreError saying so; the file is never rewritten or replaced to get past it.
"""
from __future__ import annotations

import random
import sqlite3
import time
from collections.abc import Callable
from dataclasses import astuple, dataclass, fields
from pathlib import Path
from typing import TypeVar

DEFAULT_VOTES_PATH = Path("~/.local/state/infill/arena.sqlite3")
LOCK_WAIT_S = 5.0  # how long one try waits for another process's lock (SQLite's busy timeout)
LOCKED_TRIES = 3  # tries of a statement that still finds the store locked after LOCK_WAIT_S
BACKOFF_S = 0.05  # the pause before the second try, doubled before each later one (plus jitter)
PICKS = ("top", "bottom", "neither")
T = TypeVar("T")

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
INSERT = f"INSERT INTO votes ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})"
SELECT = f"SELECT {', '.join(COLUMNS)} FROM votes ORDER BY id"


def is_locked(exc: sqlite3.Error) -> bool:
    """Whether `exc` is SQLite's "database is locked" (SQLITE_BUSY or SQLITE_LOCKED, any extended code)."""
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(exc, sqlite3.OperationalError) and code is not None and code & 0xFF in (
        sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def backoff(tries: int) -> None:
    """The pause after `tries` tries found the store locked: BACKOFF_S, doubled for each try after
    the first, plus jitter so that two writers that collided do not collide again."""
    time.sleep(BACKOFF_S * 2 ** (tries - 1) * (1.0 + random.random()))


class VoteStore:
    def __init__(self, path: str | Path = DEFAULT_VOTES_PATH, lock_wait_s: float = LOCK_WAIT_S):
        self.path = Path(path).expanduser()
        self.lock_wait_s = lock_wait_s  # how long one try waits for another process's lock

    def _connect(self) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            return sqlite3.connect(self.path, timeout=self.lock_wait_s, isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise VoteStoreError(f"the vote store {self.path} cannot be opened: {exc}; set the arena's "
                                 "votes path to a writable file") from None

    def _failure(self, exc: sqlite3.Error, doing: str) -> VoteStoreError:
        if is_locked(exc):
            return VoteStoreError(f"the vote store {self.path} is locked by another process (waited "
                                  f"{self.lock_wait_s:g} s, {LOCKED_TRIES} times); {doing} failed and the votes "
                                  "already in it are kept: close the other program, or point the arena's votes "
                                  "path elsewhere")
        return VoteStoreError(f"the vote store {self.path} is not a readable SQLite database ({exc}); "
                              f"{doing} failed and the file was left as it is: move it aside to start a new "
                              "store, or point the arena's votes path elsewhere")

    def _run(self, work: Callable[[sqlite3.Connection], T], doing: str) -> T:
        """`work` on a fresh connection to the store in WAL mode, tried again while the store is locked."""
        tries = 0
        while True:
            tries += 1
            connection = self._connect()
            try:
                connection.execute("PRAGMA journal_mode=WAL")
                connection.execute(SCHEMA)
                return work(connection)
            except sqlite3.Error as exc:
                if not is_locked(exc) or tries == LOCKED_TRIES:
                    raise self._failure(exc, doing) from None
            finally:
                connection.close()  # rolls back a transaction a failure left open
            backoff(tries)

    def record(self, vote: Vote) -> None:
        """Write one vote in a transaction of its own."""
        if vote.created == 0.0:
            vote = Vote(*astuple(vote)[:-1], created=time.time())

        def insert(connection: sqlite3.Connection) -> None:
            connection.execute("BEGIN IMMEDIATE")
            try:
                connection.execute(INSERT, astuple(vote))
            except sqlite3.IntegrityError:
                connection.execute("ROLLBACK")
                raise VoteStoreError(f"battle {vote.battle_id} already has a vote in {self.path}; "
                                     "a pair is voted on once") from None
            connection.execute("COMMIT")

        self._run(insert, "recording this vote")

    def votes(self) -> list[Vote]:
        """Every vote, oldest first (none when the file does not exist yet)."""
        if not self.path.exists():
            return []
        rows = self._run(lambda connection: connection.execute(SELECT).fetchall(), "reading the votes")
        return [Vote(*row) for row in rows]
