"""Typing-through: answer from the completions already shown while the user types them.

When a completion `T` was shown at a cursor with prefix `P` and suffix `S`, and the user then types
characters that begin `T`, the new request has prefix `P + typed` and the same suffix: the answer
is the rest of `T`, with no worker call. Entries live in a small LRU keyed by document and prefix;
typing past the end of a completion, or anything it does not start with, misses.
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

DEFAULT_CAPACITY = 32


@dataclass(slots=True, frozen=True)
class Entry:
    prefix: str
    suffix: str
    texts: tuple[str, ...]
    mode: str
    request_id: str  # the request that computed the texts


@dataclass(slots=True, frozen=True)
class Hit:
    texts: list[str]  # what is left of each text that matched the typing
    mode: str
    request_id: str


def remaining(texts: tuple[str, ...], typed: str) -> list[str]:
    """The rest of each text that starts with `typed` and goes on after it."""
    return [text[len(typed):] for text in texts if text.startswith(typed) and len(text) > len(typed)]


class CompletionCache:
    """An LRU of the completions shown, by (document, prefix)."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self.capacity = capacity
        self.entries: OrderedDict[tuple[str, str], Entry] = OrderedDict()

    def put(self, uri: str, prefix: str, suffix: str, texts: list[str], mode: str,
            request_id: str) -> None:
        if not texts:
            return
        key = (uri, prefix)
        self.entries[key] = Entry(prefix, suffix, tuple(texts), mode, request_id)
        self.entries.move_to_end(key)
        while len(self.entries) > self.capacity:
            self.entries.popitem(last=False)

    def get(self, uri: str, prefix: str, suffix: str) -> Hit | None:
        """The rest of a cached completion that the typing since it was shown matches, if any."""
        for key in reversed(self.entries):
            entry = self.entries[key]
            if key[0] != uri or entry.suffix != suffix or not prefix.startswith(entry.prefix):
                continue
            texts = remaining(entry.texts, prefix[len(entry.prefix):])
            if texts:
                self.entries.move_to_end(key)
                return Hit(texts, entry.mode, entry.request_id)
        return None

    def forget(self, uri: str) -> None:
        """Drop a document's entries (it was closed)."""
        for key in [key for key in self.entries if key[0] == uri]:
            del self.entries[key]
