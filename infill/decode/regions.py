"""Region rules: the window a cached pass runs, and drafted tokens checked or guessed.

Windows: several holes in one canvas run the union of their windows, dropping the holes that are
done (`shrink`, laid out by `hole_windows`: with `window` > 0 each hole's part slides as the
one-hole sliding window does, `slide`). Drafts: a drafted token the model is sure is wrong is
masked again (`veto`); the `verify` rule guesses the positions after the leftmost mask
(`plan_drafts`, `infill.drafts`) and confirms those a pass proves (`confirm_drafts`).
"""
from __future__ import annotations

import itertools

import torch

from infill.decode.holes import restrict
from infill.decode.passes import score
from infill.decode.state import DecodeState, canvas_positions, commit_positions
from infill.drafts import guesses


def veto(state: DecodeState, scored: slice | torch.Tensor) -> bool:
    """The draft rule: a drafted token that this pass scored is masked again, for the commit rule
    to fill anew, where the model puts at least `cfg.veto` on another token (0: never); every
    drafted token it scored is checked, once. With `veto_rule` "cut" the hole's drafted tokens
    from the first vetoed one on are masked too. True if it masked any."""
    checking = torch.zeros_like(state.masked)
    checking[scored] = True
    checking &= state.unchecked
    state.unchecked &= ~checking
    if not state.cfg.veto or not checking.any():
        return False
    where = canvas_positions(state)  # (L,)
    wrong = checking & (state.last_best != state.ids[0, where]) & (state.last_prob >= state.cfg.veto)
    if state.cfg.veto_rule == "cut":
        wrong = cut_from_first(wrong, state.masked, [hole.part for hole in state.holes])
    state.ids[0, where[wrong]] = state.mask_id
    state.masked |= wrong
    state.committed_prob[wrong] = 0.0
    return bool(wrong.any())


def cut_from_first(wrong: torch.Tensor, masked: torch.Tensor, parts: list[slice]) -> torch.Tensor:
    """Per hole, every unmasked position (L,) from its first `wrong` one on."""
    cut = torch.zeros_like(wrong)
    for part in parts:
        found = torch.nonzero(wrong[part])
        if len(found):
            cut[part.start + int(found[0]):part.stop] = True
    return cut & ~masked


def leftmost_masks(state: DecodeState) -> list[int | None]:
    """Each hole's leftmost masked position (hole-relative), or None when it has none."""
    firsts = []
    for hole in state.holes:
        masked = torch.nonzero(state.masked[hole.part])
        firsts.append(int(masked[0]) if len(masked) else None)
    return firsts


def logit_parts(state: DecodeState) -> list[slice]:
    """Each active hole's rows of a multi-hole window's logits (S, V), in order."""
    sizes = [part.stop - part.start for _, part in state.active]
    bounds = [0, *itertools.accumulate(sizes)]
    return [slice(a, b) for a, b in zip(bounds, bounds[1:])]


def hole_windows(state: DecodeState, firsts: list[int | None]) -> list[tuple[int, slice, slice]]:
    """Per hole the next pass runs: (hole, positions it runs, positions it scores), hole-relative.
    A hole done before the pass just run is out. A hole done in that pass runs once more (its
    keys/values become those of what it committed), scoring nothing. Without `window` a hole
    runs and scores whole; with it, from its leftmost mask before the pass just run (those
    positions were encoded as masks) to `window` positions past its leftmost mask now, scoring
    those from the leftmost mask on: the sliding window, hole by hole."""
    window, windows = state.cfg.window, []
    for h, (hole, first, now) in enumerate(zip(state.holes, firsts, leftmost_masks(state))):
        length = hole.part.stop - hole.part.start
        if first is None:
            continue
        if now is None:
            windows.append((h, slice(first if window else 0, length), slice(0, 0)))
        elif not window:
            windows.append((h, slice(0, length), slice(0, length)))
        else:
            stop = min(length, now + window)
            windows.append((h, slice(first, stop), slice(now, stop)))
    return windows


def hole_ranges(state: DecodeState, ranges: list[tuple[int, slice]], canvas: bool) -> torch.Tensor:
    """The positions of hole-relative `ranges` ((hole, positions) each), laid end to end: in the
    canvas if `canvas`, else in the (L,) vectors."""
    device = state.ids.device
    starts = [(state.holes[h].span if canvas else state.holes[h].part).start for h, _ in ranges]
    return torch.cat([torch.arange(start + r.start, start + r.stop, device=device)
                      for start, (_, r) in zip(starts, ranges)])


def shrink(state: DecodeState, firsts: list[int | None]) -> None:
    """Lay out the next pass of a multi-hole state over each hole's window (`hole_windows`);
    positions out of it take their keys/values from `state.kv`, as last encoded. Without a
    `window` the layout changes only when a hole leaves."""
    windows = hole_windows(state, firsts)
    whole = [(h, slice(0, hole.part.stop - hole.part.start), slice(0, hole.part.stop - hole.part.start))
             for h, hole in enumerate(state.holes)]
    if windows == (state.windows or whole):  # the layout it has (without `window`: until a hole leaves)
        return
    state.windows = windows
    active = state.active
    run = hole_ranges(state, [(h, r) for h, r, _ in windows], canvas=True)
    scored = hole_ranges(state, active, canvas=True)  # canvas positions of the scored ones
    predictors = (scored - 1 if state.shifted else scored).clamp(min=0)
    state.positions = torch.unique(torch.cat([run, predictors]))  # (W,) sorted
    holes = canvas_positions(state)  # (L,)
    every_predictor = (holes - 1 if state.shifted else holes).clamp(min=0)
    state.rows = torch.searchsorted(state.positions, every_predictor).clamp(max=len(state.positions) - 1)
    #   (L,); rows of positions out of the window are never read
    state.scored = hole_ranges(state, active, canvas=False)


def slide(state: DecodeState, first: int) -> None:
    """Lay out the next pass of a sliding window. Hole positions from `first` (the leftmost mask
    of the pass just run) were encoded as masks, so the window starts there; it scores from the
    first position still undecided (a mask, or a lookup draft to check) and runs `window` positions
    past the leftmost mask; the rest of the canvas is context. A window that checks a draft hidden
    keeps the canvas's keys/values of its positions as they stand (`window_kv`)."""
    start, length = state.span.start, len(state.masked)
    looked = state.looked if state.looked is not None else torch.zeros_like(state.masked)
    leftmost = int(torch.nonzero(state.masked | looked)[0])
    masks = torch.nonzero(state.masked).flatten()
    stop = min(length, (int(masks[0]) if len(masks) else length) + state.cfg.window)
    a, b = start + first, start + stop  # canvas positions of the window
    device = state.ids.device
    state.positions = torch.arange(a, b, device=device)
    predictors = torch.arange(start, start + length, device=device) - int(state.shifted)  # (L,)
    state.rows = (predictors - a).clamp(0, b - a - 1)  # rows outside the scored positions are never read
    state.scored = slice(leftmost, stop)
    if state.hides_lookups:  # a copy: this window's pass writes its own into `kv`
        state.window_kv = [(k[:, :, a:b].clone(), v[:, :, a:b].clone()) for k, v in state.kv]


def confirm_drafts(state: DecodeState, guessed: list[torch.Tensor], head: torch.nn.Module) -> None:
    """The `verify` rule's further commits in one pass. The window with the first v guesses
    written in, hidden states `guessed[v - 1]` (W, d), predicts the position v after the leftmost
    mask from exactly the canvas left-to-right decoding would see, as long as those v guesses are
    what was committed: then its top-1 commits, and the next window is checked."""
    first, tokens = state.drafts
    hole = state.ids[0, state.span]
    for v, hidden in enumerate(guessed, start=1):
        at = first + v
        if not state.masked[at] or int(hole[at - 1]) != int(tokens[v - 1]):
            return
        ahead = slice(at, min(at + 1 + state.cfg.drafts, state.scored.stop))  # it, and those the next pass may guess
        logits = head(hidden[state.rows[ahead]]).float()  # (G, V)
        restrict(logits, state.masked[ahead], state.rules, first=ahead.start)
        scores = score(logits, state.cfg.confidence)
        state.last_best[ahead], state.last_prob[ahead] = scores.best, scores.prob  # next guesses; anytime answer
        commit = torch.zeros_like(state.masked)
        commit[at] = True
        commit_positions(state, commit)


def plan_drafts(state: DecodeState) -> None:
    """The guesses the next pass of a one-hole `verify` state checks: at most `drafts`, and none
    for the last masked position of the run that starts at the leftmost mask (nothing after it
    to predict)."""
    state.drafts = None
    if state.cfg.rule != "verify" or len(state.holes) != 1 or state.done:
        return
    masked = state.masked
    first = int(torch.nonzero(masked)[0])
    gap = torch.nonzero(~masked[first:]).flatten()
    run = int(gap[0]) if len(gap) else len(masked) - first  # masked positions from `first` on, without a gap
    count = min(state.cfg.drafts, run - 1, state.scored.stop - first - 1)  # each guess predicts a scored position
    tokens = guesses(state.last_best, state.ids[0], state.span, first, count, state.rules.end_ids.to(state.ids.device))
    if len(tokens):
        state.drafts = (first, tokens)
