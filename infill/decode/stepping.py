"""One decoding step over a batch of states: the passes, then each state's commits.

`step` runs one pass for every state given (full passes one by one, all cached windows in one
forward) and `advance`s each: restrict and score its logits, check drafted tokens (`veto`) and
looked-up ones (`check_lookup`), mask doubtful commits again (`remask`), let the commit rule
(`infill.commit.select`) freeze positions, and lay out its next pass (`shrink`, `slide`,
`plan_drafts`, `write_lookup`). A one-hole state that filled up with no pad grows (`grow`). At
the deadline `fill_rest` gives the anytime answer; at its budget of passes (`max_passes`)
`close_rest` keeps what they committed.
"""
from __future__ import annotations

import time
from typing import NamedTuple

import torch

from infill.commit import select
from infill.decode.holes import HoleRules, close_loop, eligible, restrict
from infill.decode.lookup import check_lookup, commit_refused, forget_refused, write_lookup
from infill.decode.passes import Encoded, Reuse, forward_count, score, window_hidden
from infill.decode.regions import confirm_drafts, leftmost_masks, logit_parts, plan_drafts, shrink, slide, veto
from infill.decode.state import DecodeState, Hole, commit_positions, layout
from infill.model import Transformer


class Stepped(NamedTuple):
    """What one `step` did: the forward passes it ran, and per state what its first full pass
    encoded (a canvas and its keys/values, for later requests to reuse; None for any other pass)."""

    forwards: int
    encoded: list[Encoded | None]


def closers(state: DecodeState) -> torch.Tensor:
    """Masked positions (L,) whose last guess ends their hole's middle (none in a drafted hole, where
    an end is an empty slot): where a `left_run` run with `end_in_run` may end, closing the hole."""
    parts = []
    for hole in state.holes:
        ends = torch.isin(state.last_best[hole.part], hole.rules.end_ids.to(state.ids.device))
        parts.append(state.masked[hole.part] & ends & (not hole.rules.drafted))
    return torch.cat(parts)


def remask(state: DecodeState, logits: torch.Tensor, lse: torch.Tensor) -> None:
    """Mask again each committed content token (not an end token, not a closed tail) whose
    probability under this pass's logits (L, V) (log-sum-exp `lse` (L,)) is below `cfg.remask`,
    once per position: the commit rule may then fill it anew from the same pass."""
    for hole in state.holes:
        part = hole.part
        ids, masked, kept = state.ids[0, hole.span], state.masked[part], state.committed_prob[part]  # (L_h,) views
        prob = (logits[part].gather(1, ids[:, None])[:, 0] - lse[part]).exp()  # of each position's token
        doubtful = (~masked & (kept > 0) & ~state.remasked[part] & ~torch.isin(ids, hole.rules.end_ids.to(ids.device))
                    & (prob < state.cfg.remask))
        ids[doubtful] = state.mask_id
        masked |= doubtful
        kept[doubtful] = 0.0
        state.remasked[part] |= doubtful


def room_to_grow(state: DecodeState) -> int:
    """Masks a finished hole may add: none unless it filled to its end with no pad and may grow."""
    if not state.grow_to:
        return 0
    hole = state.ids[0, state.span]
    length = len(hole)
    if state.stop_reason != "done" or length >= state.grow_to or bool((hole == state.rules.pad_id).any()):
        return 0
    suffix = state.ids.shape[1] - state.span.stop
    return min(length, state.grow_to - length, suffix + state.max_context - state.ids.shape[1])


def grow(state: DecodeState, mask_id: int) -> bool:
    """Give a hole that filled up with no pad more masks after its committed tokens, in place (the
    suffix's far end gives way when the canvas would outgrow the context). True if it grew."""
    extra = room_to_grow(state)
    if extra <= 0:
        return False
    ids = state.ids[0]
    suffix = ids[state.span.stop:]
    keep = min(len(suffix), state.max_context - state.span.stop - extra)
    masks = torch.full((extra,), mask_id, dtype=ids.dtype, device=ids.device)
    state.ids = torch.cat([ids[:state.span.stop], masks, suffix[:keep]])[None]
    [hole] = state.holes
    grown = slice(hole.span.start, hole.span.stop + extra)
    state.holes = [Hole(grown, slice(0, len(state.masked) + extra), hole.rules)]
    state.positions, state.rows = layout([state.span], state.shifted, ids.device)
    state.scored = slice(0, len(state.rows))
    state.last_best = state.last_prob = None  # the next pass scores every position afresh
    state.masked = torch.cat([state.masked, state.masked.new_ones(extra)])
    state.committed_prob = torch.cat([state.committed_prob, state.committed_prob.new_zeros(extra)])
    state.remasked = torch.cat([state.remasked, state.remasked.new_zeros(extra)])
    state.context, state.kv = [], None  # the canvas changed: the next pass re-encodes it
    return True


def fill_rest(state: DecodeState) -> None:
    """The anytime answer: fill every position still masked greedily from the last pass."""
    assert state.passes > 0, "fill_rest needs at least one pass; a request that never ran has no answer"
    commit_positions(state, state.masked.clone())
    if state.looked is not None:  # a lookup draft no pass checked stands as drafted
        state.looked[:] = False
    state.stop_reason = "deadline"


def close_rest(state: DecodeState) -> None:
    """The answer of a state that ran its passes (`max_passes`): what they committed, then the line
    it was writing finished from the last pass's guesses (`finish_line`), then nothing. Lines after
    it would be guesses at positions the model was not sure of: on 3-line holes shown without them
    the answers come closer to the code, and a single line's closing bracket, guessed, keeps
    HumanEval tasks passing that the committed text alone fails (model card)."""
    undecided = state.masked if state.looked is None else state.masked | state.looked  # (L,)
    for hole in state.holes:
        written = finish_line(state.ids[0, hole.span], undecided[hole.part], state.last_best[hole.part], hole.rules)
        state.committed_prob[hole.part][written] = state.last_prob[hole.part][written]  # in the answer's confidence
    for flags in (state.masked, state.looked, state.unchecked):
        if flags is not None:
            flags[:] = False
    state.stop_reason = "budget"


def finish_line(hole: torch.Tensor, undecided: torch.Tensor, guesses: torch.Tensor, rules: HoleRules) -> torch.Tensor:
    """Write into a hole's undecided positions (L,) its guesses (L,) from the first undecided one
    up to the first that ends a line or the middle, and pad after it (in place); returns the
    positions (L,) given a guess."""
    if not bool(undecided.any()):
        return undecided.clone()
    ends = torch.isin(guesses, torch.tensor([*rules.line_ends, *rules.end_ids.tolist()], device=guesses.device))
    first = int(torch.nonzero(undecided)[0])
    after = torch.nonzero(ends[first:] & undecided[first:]).flatten()
    stop = first + int(after[0]) + 1 if len(after) else len(hole)  # one past the line's end
    written = undecided.clone()
    written[stop:] = False
    hole.copy_(torch.where(written, guesses, torch.where(undecided, rules.pad_id, hole)))
    return written


def stop_reason(state: DecodeState, now: float) -> str | None:
    """Why the pass a state has just run is its last ("deadline": its time is up; "budget": it ran its
    `max_passes`), or None while it may go on."""
    if state.deadline is not None and now >= state.deadline:
        return "deadline"
    if state.cfg.max_passes and state.passes + 1 >= state.cfg.max_passes:
        return "budget"
    return None


def stop_loops(state: DecodeState) -> None:
    """Close each hole whose committed start already loops (`stop_loops`, with `cut_loops`)."""
    if state.cfg.cut_loops and state.cfg.stop_loops:
        for hole in state.holes:
            close_loop(state.ids[0, hole.span], state.masked[hole.part], hole.rules)


def restrict_scored(state: DecodeState, logits: torch.Tensor) -> None:
    """Apply each scored hole's rules in place to a pass's logits (S, V) of the positions it
    scored (`state.scored`)."""
    scored = state.scored
    if isinstance(scored, torch.Tensor):  # a multi-hole window: the holes still in it, in order
        for rows, (h, part) in zip(logit_parts(state), state.active):
            hole = state.holes[h]
            restrict(logits[rows], state.masked[hole.part][part], hole.rules, first=part.start)
    elif scored == slice(0, len(state.masked)):
        for hole in state.holes:
            restrict(logits[hole.part], state.masked[hole.part], hole.rules)  # in place, hole by hole
    else:  # a sliding window (one hole)
        restrict(logits, state.masked[scored], state.rules, first=scored.start)


def advance(state: DecodeState, logits: torch.Tensor, expired: bool, guessed: list[torch.Tensor] = (),
            head: torch.nn.Module | None = None) -> None:
    """Commit from one pass's logits (S, V) for the positions it scored (`state.scored`); when
    `expired`, commit everything left. `guessed`: the same pass's hidden states (W, d) of the
    windows with the first 1, 2, ... of the state's guesses written in, which `head` turns into
    logits (`confirm_drafts`)."""
    scored, length = state.scored, len(state.masked)
    restrict_scored(state, logits)
    scores = score(logits, state.cfg.confidence)
    if state.last_best is None:
        state.last_best, state.last_prob = state.ids.new_zeros(length), state.committed_prob.new_zeros(length)
    state.last_best[scored], state.last_prob[scored] = scores.best, scores.prob  # unscored positions keep older guesses
    conf = state.committed_prob.new_zeros(length)
    conf[scored] = scores.confidence
    steps_done, state.passes = state.passes, state.passes + 1
    vetoed = state.unchecked is not None and veto(state, scored)
    missed = check_lookup(state, logits, scores.lse)
    if expired:
        fill_rest(state)
        return
    if vetoed and state.cfg.veto_rule == "cut":  # this pass saw the draft's wrong tail: the next one fills
        return
    if missed is not None:  # what this pass predicted after the refused token leaned on it
        retry_refused(state, missed, logits, scores.lse)
        return
    if not state.masked.any():  # a draft that stood: nothing left to fill
        return
    if state.cfg.remask:
        remask(state, logits, scores.lse)
    first = int(torch.nonzero(state.masked)[0])
    firsts = leftmost_masks(state) if state.shrinks else None  # before this pass's commits
    may_commit = torch.cat([eligible(state.last_best[hole.part], state.masked[hole.part], hole.rules)
                            for hole in state.holes])  # (L,)
    parts = [hole.part for hole in state.holes]
    commit_positions(state, select(state.cfg, conf, may_commit, steps_done, parts, closers(state)))
    stop_loops(state)
    if state.shrinks and not state.done:
        shrink(state, firsts)
    if guessed:
        confirm_drafts(state, guessed, head)
    write_lookup(state, logits, scores.lse)
    if state.slides and not state.done:
        slide(state, first)
    plan_drafts(state)


def retry_refused(state: DecodeState, refused: tuple[int, int], logits: torch.Tensor, lse: torch.Tensor) -> None:
    """After a check refused a lookup draft from hole position `at` (`refused`: it and the token it
    held), commit that position alone (`commit_refused`), then look up again from the new key (a
    draft unlike the one refused) with this pass's logits (S, V) (log-sum-exp `lse` (S,))."""
    commit = commit_refused(state, refused)
    if not commit.any():
        return
    at = refused[0]
    commit_positions(state, commit)
    stop_loops(state)
    forget_refused(state, at)
    write_lookup(state, logits, lse)
    if state.slides and not state.done:
        slide(state, at)  # this pass encoded the refused draft from there on


@torch.no_grad()
def step(model: Transformer, states: list[DecodeState], reuse: list[Reuse | None] | None = None) -> Stepped:
    """Advance every unfinished state by one pass. `reuse`: per state, an earlier request's
    keys/values its first full pass attends to instead of encoding them (None: none)."""
    assert all(not state.done for state in states), "step only states that are still decoding"
    forwards = forward_count(states)
    hidden, encoded = window_hidden(model, states, reuse or [None] * len(states))
    rows = [h[0][state.rows[state.scored]] for state, h in zip(states, hidden)]  # (S_i, d) each
    logits = model.lm_head(torch.cat(rows)).float().split([len(r) for r in rows])  # (S_i, V) each
    now = time.monotonic()
    for state, hole_logits, h in zip(states, logits, hidden):
        why = stop_reason(state, now)
        advance(state, hole_logits, why == "deadline", guessed=h[1:], head=model.lm_head)
        if why == "budget" and not state.done:
            close_rest(state)
        if state.done:
            grow(state, model.cfg.mask_token_id)
    return Stepped(forwards, encoded)
