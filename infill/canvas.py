"""The canvas: how a fill-in-the-middle request is laid out in token ids (pure functions).

    [<|file|>] [snippet tokens] [prefix tokens] [<|mask|> x L] [suffix tokens]

Context is cut to a token budget keeping the tokens nearest the hole: the end of the prefix and
the start of the suffix. The prefix's last piece is re-opened into the hole (token healing) and the
hole's first token is then restricted to tokens that start with it.
"""
from __future__ import annotations

from dataclasses import dataclass

from infill.tokenizer import CodeTokenizer


@dataclass(frozen=True, slots=True)
class Canvas:
    ids: list[int]  # the whole canvas, holes filled with the mask id
    hole_start: int  # index of the first hole position
    hole_len: int  # number of hole positions
    healed: str  # text the hole's first token must start with (removed from the prefix)


def budget_split(max_context: int, hole_len: int, n_prefix: int, n_suffix: int) -> tuple[int, int]:
    """How many prefix and suffix tokens fit: the prefix gets 3/4 of the room unless the suffix needs less."""
    room = max(0, max_context - hole_len - 1)
    suffix_room = min(n_suffix, room // 4)
    prefix_room = min(n_prefix, room - suffix_room)
    suffix_room = min(n_suffix, room - prefix_room)
    return prefix_room, suffix_room


def fim_canvas(tok: CodeTokenizer, prefix: str, suffix: str, hole_len: int, max_context: int,
               snippets: list[str] = ()) -> Canvas:
    """Lay out one FIM request; snippets fill what the prefix leaves of its budget, nearest last."""
    healed = tok.heal(prefix)
    suffix_ids = tok.encode(suffix)
    n_prefix, n_suffix = budget_split(max_context, hole_len, len(healed.ids), len(suffix_ids))
    prefix_ids = healed.ids[len(healed.ids) - n_prefix:]
    spare = max_context - hole_len - 1 - n_prefix - n_suffix
    snippet_ids: list[int] = []
    for text in reversed(list(snippets)):
        ids = [tok.snippet_id] + tok.encode(text)
        if len(ids) > spare - len(snippet_ids):
            break
        snippet_ids = ids + snippet_ids
    head = [tok.file_id] + snippet_ids + prefix_ids
    ids = head + [tok.mask_id] * hole_len + suffix_ids[:n_suffix]
    return Canvas(ids=ids, hole_start=len(head), hole_len=hole_len, healed=healed.text)
