"""Keep evaluation data out of training: fingerprints of every evaluation text, checked per file.

A fingerprint is the hash of three consecutive non-blank lines (whitespace-stripped, at least 40
characters together). A corpus file that shares any fingerprint with an evaluation set overlaps it.
"""
from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

WINDOW_LINES = 3
MIN_WINDOW_CHARS = 40
TEXT_FIELDS = ("prompt", "canonical_solution", "suffix", "input", "output", "original", "edited", "expected")


def fingerprints(text: str) -> Iterator[bytes]:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for i in range(len(lines) - WINDOW_LINES + 1):
        window = "\n".join(lines[i:i + WINDOW_LINES])
        if len(window) >= MIN_WINDOW_CHARS:
            yield hashlib.blake2b(window.encode(), digest_size=8).digest()


def _rows(path: Path) -> Iterator[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def _texts(row: dict) -> Iterator[str]:
    """Each task's texts, and the whole program a FIM task makes when its hole is filled."""
    yield from (row[k] for k in TEXT_FIELDS if isinstance(row.get(k), str))
    if all(isinstance(row.get(k), str) for k in ("prompt", "canonical_solution")):
        yield row["prompt"] + row["canonical_solution"] + row.get("suffix", "")


class EvalGuard:
    def __init__(self, prints: set[bytes]):
        self.prints = prints

    @classmethod
    def from_data_dir(cls, data_dir: Path) -> "EvalGuard":
        if not data_dir.is_dir():
            raise FileNotFoundError(f"evaluation data not found at {data_dir}: the overlap check needs shared/data")
        prints: set[bytes] = set()
        for path in sorted(data_dir.rglob("*.jsonl*")):
            for row in _rows(path):
                for text in _texts(row):
                    prints.update(fingerprints(text))
        return cls(prints)

    def __len__(self) -> int:
        return len(self.prints)

    def overlaps(self, text: str) -> bool:
        return any(p in self.prints for p in fingerprints(text))
