"""The canvas: how a fill-in-the-middle request is laid out in token ids (pure functions).

    [head] [snippet tokens] [prefix tokens] [<|mask|> x L] [suffix tokens]

The head is the tokenizer's `head_ids`: the bundled model's `<|file|>`, a public family's begin
token (LLaDA's `<|startoftext|>`), or nothing (Open-dCoder: prefix + masks + suffix).

Context is cut to a token budget keeping the tokens nearest the hole: the end of the prefix and
the start of the suffix. A cut prefix starts at a multiple of PREFIX_ALIGN tokens, so that the
canvas's start stays the same over many keystrokes. The prefix's last piece is re-opened into
the hole (token healing) and the hole's first token is then restricted to tokens that start
with it.

A multi-region canvas lays out several holes between text pieces the same way
(`[head] piece0 [<|mask|> x L0] piece1 [<|mask|> x L1] ... pieceH`), each hole healed into
the piece before it, and cut to the budget keeping the tokens nearest any hole. An edit job's
canvas (`edit_canvas`, for models trained on it) opens with the user's edits and may show each
region's current text beside its masks.
"""
from __future__ import annotations

from dataclasses import dataclass

from infill.tokenizer import ModelTokenizer


PREFIX_ALIGN = 64  # tokens: a cut prefix loses at most this many more than the budget asks
SNIPPET_SHARE = 4  # snippets take at most a quarter of the context (for models trained with them)


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


def prefix_cut(n_tokens: int, room: int) -> int:
    """Where a prefix of `n_tokens` starts in a canvas with `room` for it: a cut prefix starts at a
    multiple of PREFIX_ALIGN, so that the canvas's start stays put while typing goes on (and the
    worker reuses its keys/values) instead of sliding a token at a time."""
    cut = max(0, n_tokens - room)
    return -(-cut // PREFIX_ALIGN) * PREFIX_ALIGN


def snippet_tokens(tok: ModelTokenizer, snippets: list[str], room: int) -> list[int]:
    """Snippets laid out as `<|snippet|> text` each, the last ones (the most important) kept
    whole while they fit in `room` tokens, in their order."""
    laid: list[int] = []
    for text in reversed(list(snippets)):
        ids = [tok.snippet_id] + tok.encode(text)
        if len(ids) > room - len(laid):
            break
        laid = ids + laid
    return laid


def fim_canvas(tok: ModelTokenizer, prefix: str, suffix: str, hole_len: int, max_context: int,
               snippets: list[str] = ()) -> Canvas:
    """Lay out one FIM request; snippets take at most 1/SNIPPET_SHARE of the context, most
    important last, and the prefix and suffix share the rest."""
    healed = tok.heal(prefix)
    suffix_ids = tok.encode(suffix)
    snippet_ids = snippet_tokens(tok, snippets, max_context // SNIPPET_SHARE) if snippets else []
    n_prefix, n_suffix = budget_split(max_context - len(snippet_ids), hole_len, len(healed.ids), len(suffix_ids))
    prefix_ids = healed.ids[prefix_cut(len(healed.ids), n_prefix):]
    head = list(tok.head_ids) + snippet_ids + prefix_ids
    ids = head + [tok.mask_id] * hole_len + suffix_ids[:n_suffix]
    return Canvas(ids=ids, hole_start=len(head), hole_len=hole_len, healed=healed.text)


@dataclass(frozen=True, slots=True)
class RegionsCanvas:
    """Several holes in one canvas: `[head] piece0 [MASK x L0] piece1 [MASK x L1] ... pieceH`."""

    ids: list[int]  # the whole canvas, holes filled with the mask id
    hole_starts: list[int]  # index of each hole's first position, left to right
    hole_lens: list[int]  # number of positions of each hole
    healed: list[str]  # per hole: text its first token must start with (removed from the piece before it)

    @property
    def spans(self) -> list[slice]:
        return [slice(start, start + n) for start, n in zip(self.hole_starts, self.hole_lens)]


def kept_ends(lengths: list[int], reach: int) -> list[tuple[int, int]]:
    """Per piece, tokens kept at its start (after a hole) and at its end (before a hole), `reach`
    tokens after each hole and three times as many before it (the prefix's 3/4, as in `budget_split`)."""
    kept = []
    for i, n in enumerate(lengths):
        head = min(n, reach) if i > 0 else 0
        tail = min(n - head, 3 * reach) if i < len(lengths) - 1 else 0
        kept.append((head, tail))
    return kept


def widest_reach(lengths: list[int], room: int) -> int:
    """The largest reach whose kept tokens fit in `room` (binary search: kept grows with reach)."""
    lo, hi = 0, max(lengths, default=0)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if sum(head + tail for head, tail in kept_ends(lengths, mid)) <= room:
            lo = mid
        else:
            hi = mid - 1
    return lo


def regions_canvas(tok: ModelTokenizer, pieces: list[str], hole_lens: list[int], max_context: int,
                   head: list[int] = (), beside: list[str] | None = None) -> RegionsCanvas:
    """Lay out text pieces around holes (len(pieces) == len(hole_lens) + 1), each piece before a hole
    healed into it; context is cut to the budget keeping the tokens nearest the holes. `head` goes
    after the tokenizer's own head; `beside` (an edit's current texts, one per hole) shows each
    hole's text as `<|before|> text <|after|>` right before its masks, healed as the hole is."""
    assert len(pieces) == len(hole_lens) + 1, "one more text piece than holes: text, hole, text, ..., text"
    healed = [tok.heal(text) for text in pieces[:-1]]
    piece_ids = [h.ids for h in healed] + [tok.encode(pieces[-1])]
    shown = ([[] for _ in hole_lens] if beside is None
             else [shown_tokens(tok, h.text + text) for h, text in zip(healed, beside)])
    room = max(0, max_context - 1 - len(head) - sum(hole_lens) - sum(map(len, shown)))  # 1: the head token
    kept = kept_ends([len(ids) for ids in piece_ids], widest_reach([len(ids) for ids in piece_ids], room))
    ids, starts = list(tok.head_ids) + list(head), []
    for i, (piece, (first, last)) in enumerate(zip(piece_ids, kept)):
        ids += piece[:first] + piece[len(piece) - last:]
        if i < len(hole_lens):
            ids += shown[i]
            starts.append(len(ids))
            ids += [tok.mask_id] * hole_lens[i]
    return RegionsCanvas(ids=ids, hole_starts=starts, hole_lens=list(hole_lens), healed=[h.text for h in healed])


EDIT_LAYOUTS = ("shown", "masked")  # each region's current text beside its masks, or the masks alone
EVENT_SHARE = 4  # the user's edits take at most a quarter of an edit canvas


def shown_tokens(tok: ModelTokenizer, text: str) -> list[int]:
    """A region's current text as the edit canvas shows it: `<|before|> text <|after|>`."""
    _, before, after = tok.edit_ids
    return [before, *tok.encode(text), after]


def event_tokens(tok: ModelTokenizer, events: list[tuple[str, str]], room: int) -> list[int]:
    """The user's edits as `<|edit|> <|before|> lines <|after|> lines` each, oldest first, the
    newest kept whole while they fit in `room` tokens."""
    edit, before, after = tok.edit_ids
    laid: list[int] = []
    for old, new in reversed(list(events)):
        ids = [edit, before, *tok.encode(old), after, *tok.encode(new)]
        if len(ids) > room - len(laid):
            break
        laid = ids + laid
    return laid


def edit_canvas(tok: ModelTokenizer, pieces: list[str], hole_lens: list[int], max_context: int,
                events: list[tuple[str, str]], currents: list[str], layout: str) -> RegionsCanvas:
    """An edit job's canvas for a model trained on `layout` (one of EDIT_LAYOUTS):

        [head] (<|edit|> <|before|> old <|after|> new)*  piece0 [<|before|> current0 <|after|>] [MASK x L0] piece1 ...

    The events take at most 1/EVENT_SHARE of the context; with "masked" the current texts are
    left out and each region is written from its context alone."""
    assert layout in EDIT_LAYOUTS, f"an edit canvas's layout is one of {EDIT_LAYOUTS}, got {layout!r}"
    head = event_tokens(tok, events, max_context // EVENT_SHARE)
    return regions_canvas(tok, pieces, hole_lens, max_context, head, currents if layout == "shown" else None)
