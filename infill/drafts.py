"""Guesses for the hole positions after the leftmost mask (pure functions).

The `verify` rule's guesses: the last pass's top-1 tokens by default (Jacobi iteration). Code
repeats itself, so where the tokens just before the leftmost mask also occur in the canvas outside
the hole, the tokens that followed them there are guessed instead (prompt-lookup decoding). A guess
costs a window of the next pass, and the pass confirms or refutes it exactly, so a bad guess costs
time, never quality. The `lookup` setting writes such a continuation (`lookup_draft`) into the
masks themselves instead: no extra window, and the next pass keeps what it finds likely
(`infill.decode.lookup`).
"""
from __future__ import annotations

from typing import NamedTuple

import torch

NGRAMS = (3, 2)  # lengths of the key looked up, longest first


def follower_of(side: torch.Tensor, key: torch.Tensor, last: bool) -> int | None:
    """Index in `side` (S,) right after an occurrence of `key` (n,) that a token follows: of the
    last such occurrence if `last`, else of the first; None if there is none."""
    n = len(key)
    if len(side) <= n:
        return None
    found = torch.nonzero((side.unfold(0, n, 1)[:-1] == key).all(dim=1)).flatten()  # starts with a follower
    if not len(found):
        return None
    return int(found[-1 if last else 0]) + n


class Lookup(NamedTuple):
    """A continuation found outside the hole, and whether it was found before it (in the prefix)."""

    tokens: torch.Tensor  # (D,)
    before: bool


def context_match(ids: torch.Tensor, span: slice, first: int, count: int,
                  ngrams: tuple[int, ...] = NGRAMS) -> Lookup:
    """Up to `count` tokens that followed, outside the hole, the tokens before hole position
    `first` of the canvas `ids` (N,) (the longest key of `ngrams` that occurs): the nearest
    occurrence before the hole, else the nearest after it; a continuation stops at the hole's
    edge. Empty (0,) when nothing matches."""
    before, after = ids[:span.start], ids[span.stop:]
    end = span.start + first  # the key ends just before the leftmost mask
    for n in ngrams:
        if end < n or count <= 0:
            break
        key = ids[end - n:end]
        for side, last in ((before, True), (after, False)):
            at = follower_of(side, key, last)
            if at is not None:
                return Lookup(side[at:at + count].clone(), before=last)
    return Lookup(ids.new_empty(0), before=False)


def context_drafts(ids: torch.Tensor, span: slice, first: int, count: int,
                   ngrams: tuple[int, ...] = NGRAMS) -> torch.Tensor:
    """The tokens (D,) of `context_match`."""
    return context_match(ids, span, first, count, ngrams).tokens


def guesses(last_best: torch.Tensor, ids: torch.Tensor, span: slice, first: int, count: int,
            end_ids: torch.Tensor) -> torch.Tensor:
    """At most `count` guesses (V,) for hole positions first, first + 1, ...: context lookup where
    it has them, else the last pass's top-1 ids `last_best` (L,). They stop before the first end
    token (`end_ids`): a confirmed end closes the hole, so nothing after it needs checking."""
    tokens = last_best[first:first + count].clone()
    looked = context_drafts(ids, span, first, len(tokens))
    tokens[:len(looked)] = looked
    stop = torch.nonzero(torch.isin(tokens, end_ids)).flatten()
    return tokens[:int(stop[0])] if len(stop) else tokens


def lookup_draft(ids: torch.Tensor, span: slice, first: int, count: int, key: int,
                 banned: torch.Tensor, end_ids: torch.Tensor) -> Lookup:
    """The `lookup` setting's draft for hole positions first, first + 1, ...: `context_match`
    with keys of 8 tokens down to `key`, cut before the first `banned` token (a special token of
    the canvas's layout) and after the first of `end_ids` (the hole's end: its middle, its line)."""
    tokens, before = context_match(ids, span, first, count, tuple(range(max(8, key), key - 1, -1)))
    stop = torch.nonzero(torch.isin(tokens, banned)).flatten()
    tokens = tokens[:int(stop[0])] if len(stop) else tokens
    end = torch.nonzero(torch.isin(tokens, end_ids)).flatten()
    return Lookup(tokens[:int(end[0]) + 1] if len(end) else tokens, before)
