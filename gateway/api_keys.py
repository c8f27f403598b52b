"""Bearer API keys: a file of keys, one a line, read again whenever it changes on disk.

Blank lines and lines starting with `#` are skipped. `KeyFile.allows` compares a presented key
with every key in constant time (`hmac.compare_digest`, all of them, so the time says nothing of
which matched or how far); the file's modification time and size are looked at on each check and
a changed file is read again, so keys are added or revoked without a restart. A file that cannot
be read keeps the keys last read (logged once, until it can be read again), never opens the
gateway.
"""
from __future__ import annotations

import hmac
import logging
import os
from pathlib import Path

logger = logging.getLogger(__name__)


def read_keys(path: Path) -> list[bytes]:
    """The keys in `path`; OSError when it cannot be read."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [line.strip().encode() for line in lines if line.strip() and not line.startswith("#")]


class KeyFile:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._stamp: tuple[int, int] | None = None
        self._keys: list[bytes] = []
        self._unreadable = False  # the last look failed (and was logged)
        self.reload()
        if not self._keys:
            raise ValueError(f"the key file {path} holds no key; write one key per line")

    def reload(self) -> None:
        """Read the file again if its modification time or size changed."""
        try:
            stat = os.stat(self.path)
            stamp = (stat.st_mtime_ns, stat.st_size)
            if stamp != self._stamp:
                self._keys, self._stamp = read_keys(self.path), stamp
                logger.info("read %d API keys from %s", len(self._keys), self.path)
            self._unreadable = False
        except (OSError, UnicodeDecodeError) as exc:
            if self._stamp is None:
                raise ValueError(f"cannot read the key file {self.path}: {exc}") from None
            if not self._unreadable:
                logger.error("cannot read the key file %s again (%s); keeping its last keys until "
                             "it can be read", self.path, exc)
            self._unreadable = True

    def allows(self, presented: str) -> bool:
        self.reload()
        given = presented.encode()
        matched = False
        for key in self._keys:
            matched |= hmac.compare_digest(given, key)
        return matched


def bearer_token(header: str | None) -> str | None:
    """The token of an `Authorization: Bearer TOKEN` header, or None."""
    if header is None:
        return None
    scheme, _, token = header.partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None
