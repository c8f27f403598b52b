"""The model passes of a decoding step: full passes, cached window passes, and their scores.

A full pass encodes the whole canvas and keeps the keys/values of every position outside the
window (`encode`; the first one of a request may reuse an earlier canvas's keys/values of its
start and end, given as a `Reuse`, and gives back what it encoded for later requests). A cached
pass runs the window alone against them (`window_pass`); all cached windows of a step, guess
windows included, run batched in one forward (`window_hidden`, `infill.batch`), or a lone window
in place in the canvas's keys/values its state keeps (`in_canvas_pass`). `score` turns
restricted logits into the confidences the commit rules rank.
"""
from __future__ import annotations

from typing import NamedTuple

import torch

from infill.batch import batch_window_pass
from infill.decode.lookup import hiding_mask
from infill.decode.state import DecodeState
from infill.kernels import row_stats
from infill.model import KV, Transformer

Window = slice | torch.Tensor  # canvas positions: a slice, or ascending indices (W,)
Suffix = tuple[int, list[KV]]  # (first position S, keys/values per layer (1, nkv, N - S, hd) of positions S..N-1)
Encoded = tuple[torch.Tensor, list[KV]]  # a canvas (N,) and its keys/values per layer (1, nkv, N, hd)


class Reuse(NamedTuple):
    """An earlier request's keys/values that a state's first full pass attends to instead of
    encoding them: of its canvas's first P positions, and of its end, moved to its positions."""

    prefix: list[KV] | None  # per layer (1, nkv, P, hd)
    suffix: Suffix | None


def full_pass(model: Transformer, ids: torch.Tensor, window: Window) -> tuple[torch.Tensor, list[KV]]:
    """Hidden states of the window (W, d) and the keys/values of every position outside it."""
    h, whole = encode_canvas(model, ids, window)
    return h, without(whole, window)


def joined(*parts: list[KV] | None) -> list[KV] | None:
    """Per layer, the keys/values of the given parts laid end to end (None parts skipped)."""
    given = [part for part in parts if part is not None]
    if len(given) < 2:
        return given[0] if given else None
    return [(torch.cat([k for k, _ in layer], dim=2), torch.cat([v for _, v in layer], dim=2))
            for layer in zip(*given)]


def encode(model: Transformer, ids: torch.Tensor, window: Window, prefix: list[KV] | None = None,
           suffix: Suffix | None = None) -> tuple[torch.Tensor, list[KV], list[KV]]:
    """A full pass (`encode_canvas`): hidden states of the window (W, d), the keys/values outside
    it, and those of the whole canvas."""
    h, whole = encode_canvas(model, ids, window, prefix, suffix)
    return h, without(whole, window), whole


def encode_canvas(model: Transformer, ids: torch.Tensor, window: Window, prefix: list[KV] | None = None,
                  suffix: Suffix | None = None) -> tuple[torch.Tensor, list[KV]]:
    """A full pass: hidden states of the window (W, d) and the keys/values of the whole canvas
    (1, nkv, N, hd) per layer. With `prefix` (keys/values of the first P positions, P at most the
    window's first position) and `suffix` (from position S past the window to the end) only positions
    P..S run, attending to both: the cross-keystroke reuse. The canvas's keys/values are laid out
    once, the reused ones copied in and each layer writing its own between them."""
    skip = 0 if prefix is None else prefix[0][0].shape[2]
    stop, end = (ids.shape[1], None) if suffix is None else suffix
    positions = torch.arange(skip, stop, device=ids.device)[None]  # (1, S - P)
    inside = torch.arange(ids.shape[1], device=ids.device)[window] - skip  # (W,) the window's rows of this call
    whole = canvas_kv(model, ids.shape[1], prefix, end)
    h, _ = model.hidden(ids[:, skip:stop], positions=positions, cache=whole, rows=inside, write_at=slice(skip, stop))
    return h[0], whole


def canvas_kv(model: Transformer, length: int, prefix: list[KV] | None, end: list[KV] | None) -> list[KV]:
    """Per layer, room for the keys/values (1, nkv, length, hd) of a canvas, `prefix`'s (P positions)
    written at its start and `end`'s at its end; a pass writes the positions between."""
    cfg, weight = model.cfg, model.model.embed_tokens.weight
    shape = (1, cfg.num_kv_heads, length, cfg.head_dim)
    whole = [(weight.new_empty(shape), weight.new_empty(shape)) for _ in range(cfg.num_layers)]
    for (k, v), (start_k, start_v) in zip(whole, prefix or []):
        k[:, :, :start_k.shape[2]], v[:, :, :start_v.shape[2]] = start_k, start_v
    for (k, v), (end_k, end_v) in zip(whole, end or []):
        k[:, :, length - end_k.shape[2]:], v[:, :, length - end_v.shape[2]:] = end_k, end_v
    return whole


def without(kv: list[KV], window: Window) -> list[KV]:
    """Per layer, the keys/values (1, nkv, N, hd) of every position outside the window. A window
    without gaps (a slice, or one hole's positions) keeps its two sides laid end to end: 3.5x
    faster than a boolean gather on a 1,024-token canvas."""
    if isinstance(window, torch.Tensor):
        window = contiguous(window)
    if isinstance(window, slice):
        return [(torch.cat([k[:, :, :window.start], k[:, :, window.stop:]], dim=2),
                 torch.cat([v[:, :, :window.start], v[:, :, window.stop:]], dim=2)) for k, v in kv]
    outside = torch.ones(kv[0][0].shape[2], dtype=torch.bool, device=kv[0][0].device)
    outside[window] = False
    return [(k[:, :, outside], v[:, :, outside]) for k, v in kv]


def window_pass(model: Transformer, ids: torch.Tensor, window: Window, context: list[KV]) -> torch.Tensor:
    """Hidden states of the window (W, d), attending to the cached context and to itself."""
    positions = torch.arange(ids.shape[1], device=ids.device)[window][None]  # (1, W)
    h, _ = model.hidden(ids[:, window], positions=positions, cache=context)
    return h[0]


class Scores(NamedTuple):
    confidence: torch.Tensor  # (L,) what the commit rules rank: the top-1 probability or margin
    prob: torch.Tensor  # (L,) top-1 probability
    best: torch.Tensor  # (L,) top-1 id
    lse: torch.Tensor  # (L,) log-sum-exp of the row


def score(logits: torch.Tensor, kind: str) -> Scores:
    """The scores of restricted logits (L, V): one fused pass per row (infill.kernels.row_stats),
    no softmax materialised."""
    stats = row_stats(logits.contiguous())
    conf = stats.margin if kind == "margin" else stats.top1_prob
    return Scores(conf, stats.top1_prob, stats.top1_id, stats.lse)


def window_bounds(state: DecodeState) -> tuple[int, int]:
    """The first canvas position a step runs and one past the last: outside them, a canvas's
    keys/values may come from an earlier request's (a `Reuse`)."""
    return int(state.positions[0]), int(state.positions[-1]) + 1


def step_tokens(state: DecodeState, reuse: Reuse | None = None) -> int:
    """Positions its next step runs: for a full pass the canvas less the start and end it
    reuses, else the window, once more per guess checked."""
    if not state.needs_full_pass:
        return len(state.positions) * (1 + state.guess_windows)
    start = 0 if reuse is None or reuse.prefix is None else reuse.prefix[0][0].shape[2]
    stop = state.ids.shape[1] if reuse is None or reuse.suffix is None else reuse.suffix[0]
    return stop - start


def pass_windows(state: DecodeState) -> list[torch.Tensor]:
    """The windows (W,) a cached pass of `state` runs: its own, then one per guess count v with
    the first v guesses written over the masks they guess."""
    window = state.ids[0, state.positions]
    if not state.guess_windows:
        return [window]
    first, tokens = state.drafts
    guessed_at = state.span.start + first + torch.arange(len(tokens), device=window.device)
    at = torch.searchsorted(state.positions, guessed_at)  # (V,)
    windows = [window]
    for v in range(1, len(tokens) + 1):
        guessed = window.clone()
        guessed[at[:v]] = tokens[:v]
        windows.append(guessed)
    return windows


def first_full_pass(model: Transformer, state: DecodeState, reuse: Reuse | None) -> tuple[torch.Tensor, Encoded]:
    """A state's first full pass (reusing `reuse`): its window's hidden states, and the canvas
    and keys/values it encoded, for later requests to reuse."""
    canvas = state.ids[0].clone()
    prefix, suffix = reuse if reuse is not None else (None, None)
    h, whole = encode_canvas(model, state.ids, state.positions, prefix, suffix)
    keep_canvas(state, [(k.clone(), v.clone()) for k, v in whole] if state.keeps_kv else whole)
    #   its own copy: the kept canvas's keys/values stay as encoded
    return h, (canvas, whole)


def keep_canvas(state: DecodeState, whole: list[KV]) -> None:
    """After a full pass, what later cached passes attend to: the whole canvas's keys/values
    (`keeps_kv`; each cached window writes its own into them), else those outside the window."""
    if state.keeps_kv:
        state.kv = whole
    else:
        state.context = without(whole, state.positions)
    keep_encoded(state, whole)


def window_hidden(model: Transformer, states: list[DecodeState], reuse: list[Reuse | None],
                  ) -> tuple[list[list[torch.Tensor]], list[Encoded | None]]:
    """Per state, the hidden states (W_i, d) of its window and then of each of its guess windows,
    and what its first full pass encoded (None for any other pass): full passes one by one, all
    cached windows batched, or a lone window in place (`in_canvas_pass`). `reuse`: per state, what
    its first full pass may reuse."""
    hidden: dict[int, list[torch.Tensor]] = {}
    encoded: list[Encoded | None] = [None] * len(states)
    owners, windows = [], []
    for i, state in enumerate(states):
        if state.needs_full_pass and state.passes == 0:
            h, encoded[i] = first_full_pass(model, state, reuse[i])
            hidden[i] = [h]
        elif state.needs_full_pass:
            h, whole = encode_canvas(model, state.ids, state.positions)
            hidden[i] = [h]
            keep_canvas(state, whole)
        else:
            own = pass_windows(state)
            owners += [i] * len(own)
            windows += own
    if len(windows) == 1 and in_canvas(states[owners[0]]):
        hidden[owners[0]] = [in_canvas_pass(model, states[owners[0]], windows[0])]
    elif windows:
        positions = [states[i].positions for i in owners]
        contexts, masks = zip(*(window_context(states[i]) for i in owners))
        batched, window_kv = batch_window_pass(model, windows, positions, list(contexts), list(masks))
        for row, (i, h) in enumerate(zip(owners, batched)):
            state = states[i]
            if i not in hidden:  # its own window (not a guess): keep its keys/values
                keep_window_kv(state, [(wk[row:row + 1], wv[row:row + 1]) for wk, wv in window_kv])
            hidden.setdefault(i, []).append(h)
    return [hidden[i] for i in range(len(states))], encoded


def in_canvas(state: DecodeState) -> bool:
    """Its cached window may run in place in the canvas's keys/values it keeps: the window's keys
    and values written over their positions, every row attending to the whole canvas (the same keys
    as its context and its window; no hidden check, which also sees the window as it was)."""
    return state.keeps_kv and not state.checks_hidden


def in_canvas_pass(model: Transformer, state: DecodeState, window: torch.Tensor) -> torch.Tensor:
    """A lone cached window (W,) run in place in `state.kv`: its hidden states (W, d). No copy of
    the canvas's keys/values, where a context of the positions outside the window costs two."""
    at = contiguous(state.positions)
    h, window_kv = model.hidden(window[None], positions=state.positions[None], cache=state.kv, write_at=at)
    keep_window_kv(state, window_kv, written=True)
    return h[0]


def contiguous(positions: torch.Tensor) -> Window:
    """Ascending positions (W,) as a slice when they have no gap (a slice's writes are cheaper)."""
    if len(positions) and int(positions[-1]) - int(positions[0]) + 1 == len(positions):
        return slice(int(positions[0]), int(positions[-1]) + 1)
    return positions


def window_context(state: DecodeState) -> tuple[list[KV], torch.Tensor | None]:
    """The keys/values a state's cached window attends to besides its own, and which of them each
    row may see (None: all): for a hidden lookup check, the cached context, then the window as the
    pass before encoded it (`hiding_mask`). A state that keeps the canvas's keys/values takes those
    outside its window."""
    context = without(state.kv, state.positions) if state.keeps_kv else state.context
    if not state.checks_hidden:
        return context, None
    assert state.window_kv is not None, "a hidden check needs the pass before's keys/values of the window"
    return joined(context, state.window_kv), hiding_mask(state, context[0][0].shape[2])


def keep_encoded(state: DecodeState, kv: list[KV]) -> None:
    """After a full pass, keep its window's part of what it encoded, per layer (1, nkv, N, hd), for
    a hidden lookup check (`hides_lookups`)."""
    if state.hides_lookups:
        state.window_kv = [(k[:, :, state.positions], v[:, :, state.positions]) for k, v in kv]


def keep_window_kv(state: DecodeState, window_kv: list[KV], written: bool = False) -> None:
    """Keep what a state's own cached window encoded, per layer (1, nkv, >= W, hd), its first W
    positions: into the whole canvas's keys/values (`keeps_kv`; unless the pass `written` them
    there), or for a hidden lookup check."""
    n = len(state.positions)
    if state.keeps_kv and not written:
        for (k, v), (wk, wv) in zip(state.kv, window_kv):
            k[:, :, state.positions], v[:, :, state.positions] = wk[:, :, :n], wv[:, :, :n]
    if state.hides_lookups:
        state.masks_kv = state.window_kv if state.checks_hidden else None
        state.window_kv = [(wk[:, :, :n], wv[:, :, :n]) for wk, wv in window_kv]


def forward_count(states: list[DecodeState]) -> int:
    """Forward passes one `step` over `states` runs: one per full pass, one for all cached windows."""
    full = sum(state.needs_full_pass for state in states)
    return full + (1 if full < len(states) else 0)
