"""Keys and values of recent canvases, reused across keystrokes (the runner's prefix cache).

Between two keystrokes the canvas barely changes: the same file header, snippets and prefix, a hole
one character further, the same suffix. A new request whose canvas starts with the same tokens as a
recent one reuses that canvas's keys and values for the shared start; one that ends with the same
tokens reuses them for the shared end too, moved to the positions it has now (the prefix may have
grown by a token: rotary keys turn by the shift). Its first full pass encodes only what lies
between: the end of the prefix that changed, and the hole. It is an approximation of the same kind
as the decoder's context cache: the reused positions were encoded beside the earlier request's
prefix and hole; the next refresh (if the decoder makes one) encodes them afresh.
"""
from __future__ import annotations

from collections import OrderedDict

import torch

from infill.model import KV

MIN_REUSE_TOKENS = 32  # a shorter shared start is not worth the bookkeeping


def shared_start(a: torch.Tensor, b: torch.Tensor) -> int:
    """How many leading tokens two canvases (N,) and (M,) share."""
    n = min(len(a), len(b))
    differ = torch.nonzero(a[:n] != b[:n])
    return int(differ[0]) if len(differ) else n


def shared_end(a: torch.Tensor, b: torch.Tensor) -> int:
    """How many trailing tokens two canvases (N,) and (M,) share."""
    return shared_start(a.flip(0), b.flip(0))


class PrefixCache:
    """The last `capacity` encoded canvases, newest last."""

    def __init__(self, capacity: int = 16) -> None:  # ~25 MB each at 1,024 tokens (the bundled model)
        self.capacity = capacity
        self._entries: OrderedDict[int, tuple[torch.Tensor, list[KV]]] = OrderedDict()
        self._next_key = 0
        self.hits = self.misses = 0

    def store(self, canvas: torch.Tensor, kv: list[KV]) -> None:
        """Keep a canvas (N,) as its first full pass encoded it, with its keys/values (1, nkv, N, hd)."""
        self._entries[self._next_key] = (canvas, kv)
        self._next_key += 1
        while len(self._entries) > self.capacity:
            self._entries.popitem(last=False)

    def lookup(self, canvas: torch.Tensor, limit: int) -> list[KV] | None:
        """Keys/values of the longest start (at most `limit` tokens) this canvas shares with a
        kept one, or None when no kept canvas shares MIN_REUSE_TOKENS."""
        best_key, best_len = None, 0
        for key, (kept, _) in self._entries.items():
            shared = min(limit, shared_start(kept, canvas))
            if shared > best_len:
                best_key, best_len = key, shared
        if best_key is None or best_len < MIN_REUSE_TOKENS:
            self.misses += 1
            return None
        self.hits += 1
        self._entries.move_to_end(best_key)
        return [(k[:, :, :best_len], v[:, :, :best_len]) for k, v in self._entries[best_key][1]]

    def lookup_end(self, canvas: torch.Tensor, start: int) -> tuple[int, list[KV], int] | None:
        """For the longest end (from `start` or later) this canvas (N,) shares with a kept one:
        (its first position S, the kept keys/values of it, how far it moved: S minus its place in
        the kept canvas); None when no kept canvas shares MIN_REUSE_TOKENS."""
        best_key, best_len = None, 0
        for key, (kept, _) in self._entries.items():
            shared = min(len(canvas) - start, shared_end(kept, canvas))
            if shared > best_len:
                best_key, best_len = key, shared
        if best_key is None or best_len < MIN_REUSE_TOKENS:
            return None
        kept, kv = self._entries[best_key]
        first = len(canvas) - best_len
        return first, [(k[:, :, -best_len:], v[:, :, -best_len:]) for k, v in kv], first - (len(kept) - best_len)
