"""The repetition check: where a decoded hole starts looping, so the loop can be cut (pure function).

A small model under a parallel commit rule can fill a hole with one short pattern over and over
(`x = x = x = x =`, the same call on every line). A run counts as a loop when a block of at most
`MAX_PERIOD` tokens repeats back to back at least three times and the run spans at least
`MIN_LOOP_TOKENS` tokens, so `)))` or two equal lines are left alone.
"""
from __future__ import annotations

from collections.abc import Sequence

MAX_PERIOD = 12  # longest repeated block looked for, in tokens
MIN_REPEATS = 3  # copies back to back
MIN_LOOP_TOKENS = 8  # a loop spans at least this many tokens
LOOP_SPAN = max(MIN_LOOP_TOKENS, MIN_REPEATS * MAX_PERIOD)  # tokens from its start that decide a loop


def _copies(ids: Sequence[int], start: int, period: int) -> int:
    """How many times ids[start:start+period] occurs back to back from `start`."""
    block, copies = ids[start:start + period], 1
    while ids[start + copies * period:start + (copies + 1) * period] == block:
        copies += 1
    return copies


def loop_start(ids: Sequence[int]) -> int | None:
    """Index just after the first copy of the earliest loop in `ids`, or None when there is none."""
    ids = list(ids)
    for start in range(len(ids)):
        for period in range(1, MAX_PERIOD + 1):
            if start + period * MIN_REPEATS > len(ids):
                break
            copies = _copies(ids, start, period)
            if copies >= MIN_REPEATS and copies * period >= MIN_LOOP_TOKENS:
                return start + period
    return None


def cut_loop(ids: Sequence[int]) -> list[int]:
    """`ids` with any loop cut back to its first copy."""
    end = loop_start(ids)
    return list(ids if end is None else ids[:end])


def settled_length(ids: Sequence[int]) -> int:
    """How many first tokens of `ids` `cut_loop` keeps whatever tokens come after them (for a
    hole whose text is streamed while it is decoded). A loop starting `LOOP_SPAN` tokens or more
    before the end is decided by `ids` alone (all its copies are there); one starting later may
    still form, and is cut no earlier than its second token."""
    ids = list(ids)
    decided = len(ids) - LOOP_SPAN  # the last start whose loop `ids` decides
    end = loop_start(ids)
    if end is not None and end - 1 <= decided:
        return end
    return max(0, decided + 1)
