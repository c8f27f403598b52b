"""Denoising of canvas holes: one forward pass per step, a commit rule decides what freezes.

Each step scores every still-masked hole position (top-1 probability, or the top-1 minus top-2
margin) and a commit rule (`infill.commit`) picks the positions to freeze. Rules that follow the
training layout keep the answer well formed: a committed `<pad>` ends the middle (the tail after it
becomes pad), and in single-line mode a committed newline ends the line. With `end_in_run` a
`left_run` run may end on such an end token, closing the hole in the pass that commits its text.
At the deadline the remaining masks are filled greedily from the last pass (`fill_rest`): the
anytime answer.

Decoding is step-wise so that many requests share each forward pass: `start` lays one request out
as a `DecodeState`, `step` advances any number of states by one pass each, `result` reads one back.
`infill.fim.run_job` is the one-job loop over the same `step`.

With `remask` set, a committed token that a later pass finds unlikely is masked again (once per
position) and the commit rule may fill it anew: a way back from an early commit (`remask`).

A multi-line hole that fills to its end with no pad wanted more room: it grows in place (more
masks after the committed tokens, the context re-encoded) up to its `grow_to` length.

Context cache: a full pass over the canvas stores the keys and values of every position outside
the active window (the hole, plus the position before it when logits are shifted); the steps in
between run the window alone against them, all cached windows of a step batched in one forward
(`infill.batch`). `refresh_every=1` is a full pass every step.

The `verify` rule guesses the positions after the leftmost mask (`infill.drafts`) and checks them in
the next pass: its cached step also runs the window with the first guess written in, with the
first two, ... (one window each, in the same forward). The window that saw the first v guesses
predicts position v after the leftmost exactly as left-to-right decoding would once those v were
committed, so while the guesses hold each such window commits one more position
(`confirm_drafts`). The answer is the left-to-right one; the pass count falls.

A sliding window (`window` > 0, one hole, rules that commit from the left) runs fewer positions:
each cached pass runs the positions committed in the pass before (still encoded as masks) and
`window` positions from the leftmost mask on, and scores only those; every other position's keys
and values come from the whole canvas's, as last encoded (`slide`). Committed tokens then stay as
they were encoded, and masks far to the right as the first pass saw them: an approximation, like
the context cache itself, that `bench.decode` measures.

Several holes in one canvas (`start_regions`) decode jointly: the window is the union of the holes'
windows (gathered positions, not one slice), each pass scores all holes, each hole keeps its own
rules (first token, end tokens, tail), and one commit rule ranks the confidences of all holes
(blocks and the left-to-right rule act per hole: `infill.commit.select`). The window shrinks as
holes finish (`shrink`): a hole done in one pass runs once more, then its keys/values join the
context; with `window` > 0 each hole's part of it also slides as the one-hole sliding window
does (`hole_windows`). Such a state never grows or verifies guesses: those apply to one-hole
jobs.
"""
from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from typing import NamedTuple

import torch

from infill.kernels import row_stats
from infill.batch import batch_window_pass
from infill.canvas import Canvas, RegionsCanvas
from infill.commit import DecoderConfig, select
from infill.drafts import guesses
from infill.model import KV, Transformer


@dataclass(frozen=True, slots=True)
class HoleRules:
    pad_id: int
    newline_id: int
    banned_ids: list[int]  # never proposed (mask and other special tokens)
    first_allowed: list[int] | None  # token healing: the hole's first token must be one of these
    first_banned: list[int]  # never the hole's first token (pad; newline or blanks in single-line mode)
    single_line: bool
    stop_ids: tuple[int, ...] = ()  # other tokens that end a middle (a family's eos, end-of-turn)
    line_ids: tuple[int, ...] = ()  # tokens that end a line (every newline-bearing one); () is the newline alone
    drafted: bool = False  # the hole holds a draft: an end token in its slots is an empty position

    @property
    def end_ids(self) -> torch.Tensor:
        """The tokens that end a middle: pad and the stop ids, and in single-line mode a line's end."""
        line = (self.line_ids or (self.newline_id,)) if self.single_line else ()
        return torch.tensor(list(dict.fromkeys([self.pad_id, *self.stop_ids, *line])))


@dataclass(slots=True)
class Decoded:
    tokens: list[int]  # the hole, pad included
    confidence: float  # mean top-1 probability of the committed tokens
    forward_passes: int
    stop_reason: str  # "done" or "deadline"


def restrict(logits: torch.Tensor, still_masked: torch.Tensor, rules: HoleRules, first: int = 0) -> torch.Tensor:
    """Apply the hole rules in place to logits (S, V) of hole positions `first`, `first` + 1, ...
    (`still_masked` (S,) their flags) and return them: the first token's rules bind only row 0 of
    hole position 0."""
    logits[:, rules.banned_ids] = float("-inf")
    if first == 0 and still_masked[0]:
        if rules.first_allowed is not None:
            keep = logits[0, rules.first_allowed].clone()
            logits[0] = float("-inf")
            logits[0, rules.first_allowed] = keep
        logits[0, rules.first_banned] = float("-inf")  # an empty answer is never the best one
    return logits


def close_tail(hole: torch.Tensor, masked: torch.Tensor, rules: HoleRules) -> None:
    """After a committed pad (or newline in single-line mode), everything later is pad (tensor
    ops only: no sync with a GPU); not in a drafted hole, whose text goes on after a slot."""
    if rules.drafted:
        return
    ends = torch.isin(hole, rules.end_ids.to(hole.device)) & ~masked
    tail = (ends.cumsum(0) - ends.long()) > 0  # (L,) after the first committed end
    hole.copy_(torch.where(tail & masked, rules.pad_id, hole))
    masked &= ~tail


def eligible(best: torch.Tensor, masked: torch.Tensor, rules: HoleRules) -> torch.Tensor:
    """Masked positions that may commit now: end tokens wait their turn.

    A position whose best guess ends the middle (pad; a newline in single-line mode) commits only
    when it is the leftmost masked position. Otherwise a small model's confident pads eat the hole
    from its tail backwards (each pad makes the one before it likelier) and the answer comes back
    empty; content is decided first, and the end is placed once everything before it stands.
    """
    if rules.drafted:  # an end leaves one slot position empty, whenever it comes
        return masked.clone()
    ends = torch.isin(best, rules.end_ids.to(best.device))
    leftmost = masked & (masked.cumsum(0) == 1)  # none in a finished hole of a multi-hole canvas
    return masked & (~ends | leftmost)


def closers(state: DecodeState) -> torch.Tensor:
    """Masked positions (L,) whose last guess ends their hole's middle (none in a drafted hole, where
    an end is an empty slot): where a `left_run` run with `end_in_run` may end, closing the hole."""
    parts = []
    for part, rules in zip(state.parts, state.hole_rules):
        ends = torch.isin(state.last_best[part], rules.end_ids.to(state.ids.device))
        parts.append(state.masked[part] & ends & (not rules.drafted))
    return torch.cat(parts)


Window = slice | torch.Tensor  # canvas positions: a slice, or ascending indices (W,)
Reused = tuple[int, list[KV]]  # (first position S, keys/values per layer (1, nkv, N - S, hd) of positions S..N-1)


def full_pass(model: Transformer, ids: torch.Tensor, window: Window) -> tuple[torch.Tensor, list[KV]]:
    """Hidden states of the window (W, d) and the keys/values of every position outside it."""
    h, context, _ = encode(model, ids, window)
    return h, context


def joined(*parts: list[KV] | None) -> list[KV] | None:
    """Per layer, the keys/values of the given parts laid end to end (None parts skipped)."""
    given = [part for part in parts if part is not None]
    if len(given) < 2:
        return given[0] if given else None
    return [(torch.cat([k for k, _ in layer], dim=2), torch.cat([v for _, v in layer], dim=2))
            for layer in zip(*given)]


def encode(model: Transformer, ids: torch.Tensor, window: Window, prefix: list[KV] | None = None,
           suffix: Reused | None = None) -> tuple[torch.Tensor, list[KV], list[KV]]:
    """A full pass: hidden states of the window (W, d), the keys/values outside it, and those of
    the whole canvas. With `prefix` (keys/values of the first P positions, P at most the window's
    first position) and `suffix` (from position S past the window to the end) only positions P..S
    run, attending to both: the cross-keystroke reuse."""
    skip = 0 if prefix is None else prefix[0][0].shape[2]
    stop, end = (ids.shape[1], None) if suffix is None else suffix
    positions = torch.arange(skip, stop, device=ids.device)[None]  # (1, S - P)
    inside = torch.arange(ids.shape[1], device=ids.device)[window] - skip  # (W,) the window's rows of this call
    h, kv = model.hidden(ids[:, skip:stop], positions=positions, cache=joined(prefix, end), rows=inside)
    kv = joined(prefix, kv, end)
    return h[0], without(kv, window), kv


def without(kv: list[KV], window: Window) -> list[KV]:
    """Per layer, the keys/values (1, nkv, N, hd) of every position outside the window. A window
    without gaps (a slice, or one hole's positions) keeps its two sides laid end to end: 3.5x
    faster than a boolean gather on a 1,024-token canvas."""
    if isinstance(window, torch.Tensor) and len(window) and int(window[-1]) - int(window[0]) + 1 == len(window):
        window = slice(int(window[0]), int(window[-1]) + 1)
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



@dataclass(slots=True, eq=False)
class DecodeState:
    """One request's denoising in progress: its canvas, which hole positions are still masked, and
    the cached keys/values of its context. The (L,) vectors run over all its holes, left to right."""

    ids: torch.Tensor  # (1, N) the canvas; hole positions are overwritten as they commit
    spans: list[slice]  # each hole's positions in `ids`, left to right; L counts them all, in this order
    positions: torch.Tensor  # (W,) sorted window of a cached step: each hole, and (if shifted) the position before it
    rows: torch.Tensor  # (L,) the window row whose output predicts each hole position (those it scores)
    scored: slice | torch.Tensor  # the hole positions (of the (L,) vectors) its next pass scores: all, a
    #   sliding window's slice, or the indices (S,) of the holes still in a shrinking window
    shifted: bool  # logits are shifted: the position before a hole predicts its first token
    hole_rules: list[HoleRules]  # per hole
    cfg: DecoderConfig
    deadline: float | None  # time.monotonic() after which the next pass is the last
    masked: torch.Tensor  # (L,) bool, True while a hole position is undecided
    committed_prob: torch.Tensor  # (L,) top-1 probability at commit time (0 for positions closed as pad)
    context: list[KV] = field(default_factory=list)  # per layer (1, nkv, N - W, hd): outside the window
    last_best: torch.Tensor | None = None  # (L,) the last pass's top-1 ids, for the anytime answer
    last_prob: torch.Tensor | None = None  # (L,) and their probabilities
    passes: int = 0
    stop_reason: str = "done"  # "done" or "deadline"
    grow_to: int = 0  # the hole may grow up to this many positions (multi-line, no pad yet)
    max_context: int = 0  # the model's context: a grown canvas must fit it
    prefix: list[KV] | None = None  # per layer (1, nkv, P, hd): an earlier request's keys/values of
    #   this canvas's first P tokens, which the first full pass reuses instead of encoding them
    suffix: Reused | None = None  # an earlier request's keys/values of this canvas's end, moved to its positions
    encoded: tuple[torch.Tensor, list[KV]] | None = None  # (canvas (N,), keys/values (1, nkv, N, hd)
    #   per layer) as the first full pass saw them, until the runner keeps them for later requests
    drafts: tuple[int, torch.Tensor] | None = None  # `verify`: (hole position i of the leftmost mask,
    #   guesses (V,) for positions i, i + 1, ...) that its next cached pass checks
    kv: list[KV] | None = None  # a sliding window's keys/values of the whole canvas, per layer (1, nkv, N, hd)
    remasked: torch.Tensor | None = None  # (L,) bool: positions masked again once already (`remask`)
    mask_id: int = 0  # the model's mask token, written over a position masked again
    windows: list[tuple[int, slice, slice]] | None = None  # a multi-hole window as `shrink` laid it
    #   out last: (hole, positions run, positions scored), hole-relative; None: every hole whole
    unchecked: torch.Tensor | None = None  # (L,) bool: drafted tokens no pass has scored yet (`veto`; None without one)

    @property
    def span(self) -> slice:
        """The hole of a one-hole canvas."""
        assert len(self.spans) == 1, "a multi-hole state has `spans`, not one span"
        return self.spans[0]

    @property
    def window(self) -> slice:
        """The window of a one-hole canvas, as a slice (it is contiguous)."""
        return slice(int(self.positions[0]), self.span.stop)

    @property
    def rules(self) -> HoleRules:
        """The rules of a one-hole canvas."""
        assert len(self.hole_rules) == 1, "a multi-hole state has `hole_rules`, one per hole"
        return self.hole_rules[0]

    @property
    def parts(self) -> list[slice]:
        """Each hole's slice of the (L,) vectors (`masked`, `rows`, `committed_prob`)."""
        bounds = [0, *itertools.accumulate(span.stop - span.start for span in self.spans)]
        return [slice(a, b) for a, b in zip(bounds, bounds[1:])]

    @property
    def done(self) -> bool:
        """Nothing masked, and every drafted token seen by a pass."""
        return not bool(self.masked.any()) and (self.unchecked is None or not bool(self.unchecked.any()))

    @property
    def needs_full_pass(self) -> bool:
        """A full pass encodes the context first and refreshes it every `refresh_every` steps."""
        return not self.context or self.passes % self.cfg.refresh_every == 0

    @property
    def slides(self) -> bool:
        """Its window slides along the hole (`window` > 0, one hole)."""
        return self.cfg.window > 0 and len(self.spans) == 1

    @property
    def active(self) -> list[tuple[int, slice]] | None:
        """A multi-hole window's scored holes, left to right: (hole, the positions of it scored);
        None while every hole is scored whole."""
        if self.windows is None:
            return None
        return [(h, scored) for h, _, scored in self.windows if scored.stop > scored.start]

    @property
    def shrinks(self) -> bool:
        """Its window drops the holes that are done (several holes; not with `remask`, which
        re-scores every committed token)."""
        return len(self.spans) > 1 and not self.cfg.remask

    @property
    def keeps_kv(self) -> bool:
        """It keeps the whole canvas's keys/values, updated by each pass's window."""
        return self.slides or self.shrinks

    @property
    def guess_windows(self) -> int:
        """Windows its next pass runs besides its own: one per guess checked (a cached pass only)."""
        return 0 if self.drafts is None or self.needs_full_pass else len(self.drafts[1])

    @property
    def step_tokens(self) -> int:
        """Positions its next step runs: for a full pass the canvas less the start and end it
        reuses, else the window, once more per guess checked."""
        if not self.needs_full_pass:
            return len(self.positions) * (1 + self.guess_windows)
        start = 0 if self.prefix is None else self.prefix[0][0].shape[2]
        stop = self.ids.shape[1] if self.suffix is None else self.suffix[0]
        return stop - start

    @property
    def filled_probs(self) -> torch.Tensor:
        """Top-1 probability of each token it committed (positions closed as pad excluded)."""
        return self.committed_prob[self.committed_prob > 0]

    @property
    def mean_log_prob(self) -> float:
        filled = self.filled_probs
        return float(filled.log().mean()) if len(filled) else float("-inf")


def model_device(model: Transformer) -> torch.device:
    """Where the model's weights live: every tensor of its decoding states lives there too."""
    return model.model.embed_tokens.weight.device


def hole_positions(spans: list[slice], device: torch.device) -> torch.Tensor:
    """The canvas positions of the holes, left to right (L,)."""
    return torch.cat([torch.arange(span.start, span.stop, device=device) for span in spans])


def layout(spans: list[slice], shifted: bool, device: torch.device | str = "cpu") -> tuple[torch.Tensor, torch.Tensor]:
    """The positions a cached step runs (W,), and the row of them predicting each hole position (L,)."""
    holes = hole_positions(spans, device)  # (L,)
    predictors = (holes - 1 if shifted else holes).clamp(min=0)  # (L,)
    positions = torch.unique(torch.cat([predictors, holes]))  # (W,) sorted
    return positions, torch.searchsorted(positions, predictors)


def new_state(model: Transformer, ids: list[int], spans: list[slice], rules: list[HoleRules], cfg: DecoderConfig,
              deadline: float | None, grow_to: int) -> DecodeState:
    """A canvas laid out for decoding, its hole positions masked where `ids` holds the mask
    token and drafted (committed, unchecked) elsewhere; no forward pass runs yet."""
    device = model_device(model)
    positions, rows = layout(spans, model.cfg.logits_shift, device)
    length = len(rows)
    canvas = torch.tensor(ids, dtype=torch.long, device=device)[None]
    masked = canvas[0, hole_positions(spans, device)] == model.cfg.mask_token_id  # (L,)
    return DecodeState(
        ids=canvas, spans=spans, positions=positions, rows=rows,
        scored=slice(0, length), shifted=model.cfg.logits_shift, hole_rules=rules, cfg=cfg, deadline=deadline,
        masked=masked, committed_prob=(~masked).float(), grow_to=grow_to,
        max_context=model.cfg.max_position_embeddings,
        remasked=torch.zeros(length, dtype=torch.bool, device=device),
        mask_id=model.cfg.mask_token_id, unchecked=None if bool(masked.all()) or not cfg.veto else ~masked,
    )  # without a veto no pass changes a drafted token: a job of whole drafts is done before any pass


def start(model: Transformer, canvas: Canvas, rules: HoleRules, cfg: DecoderConfig,
          deadline: float | None = None, grow_to: int = 0) -> DecodeState:
    """Lay one canvas out for decoding; no forward pass runs yet."""
    span = slice(canvas.hole_start, canvas.hole_start + canvas.hole_len)
    grow_to = grow_to if cfg.grow and not rules.single_line else 0
    return new_state(model, canvas.ids, [span], [rules], cfg, deadline, grow_to)


def start_regions(model: Transformer, canvas: RegionsCanvas, rules: list[HoleRules], cfg: DecoderConfig,
                  deadline: float | None = None) -> DecodeState:
    """Lay a multi-hole canvas out for joint decoding (one rules per hole); its holes never grow."""
    assert len(rules) == len(canvas.hole_lens), "one HoleRules per hole"
    return new_state(model, canvas.ids, canvas.spans, rules, cfg, deadline, grow_to=0)


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
    state.spans = [slice(state.span.start, state.span.stop + extra)]
    state.positions, state.rows = layout(state.spans, state.shifted, ids.device)
    state.scored = slice(0, len(state.rows))
    state.last_best = state.last_prob = None  # the next pass scores every position afresh
    state.masked = torch.cat([state.masked, state.masked.new_ones(extra)])
    state.committed_prob = torch.cat([state.committed_prob, state.committed_prob.new_zeros(extra)])
    state.remasked = torch.cat([state.remasked, state.remasked.new_zeros(extra)])
    state.context = []  # the canvas changed: the next pass re-encodes it
    return True


def commit_positions(state: DecodeState, commit: torch.Tensor) -> None:
    """Freeze the hole positions `commit` (L,) bool to the last pass's guesses; close each hole's tail."""
    state.committed_prob[commit] = state.last_prob[commit]
    for span, part, rules in zip(state.spans, state.parts, state.hole_rules):
        hole, masked = state.ids[0, span], state.masked[part]  # (L_h,) views: writes land in the state
        hole[commit[part]] = state.last_best[part][commit[part]]
        masked &= ~commit[part]
        close_tail(hole, masked, rules)


def advance(state: DecodeState, logits: torch.Tensor, expired: bool, guessed: list[torch.Tensor] = (),
            head: torch.nn.Module | None = None) -> None:
    """Commit from one pass's logits (S, V) for the positions it scored (`state.scored`); when
    `expired`, commit everything left. `guessed`: the same pass's hidden states (W, d) of the
    windows with the first 1, 2, ... of the state's guesses written in, which `head` turns into
    logits (`confirm_drafts`)."""
    scored, length = state.scored, len(state.masked)
    if isinstance(scored, torch.Tensor):  # a multi-hole window: the holes still in it, in order
        for rows, (h, part) in zip(logit_parts(state), state.active):
            restrict(logits[rows], state.masked[state.parts[h]][part], state.hole_rules[h], first=part.start)
    elif scored == slice(0, length):
        for part, rules in zip(state.parts, state.hole_rules):
            restrict(logits[part], state.masked[part], rules)  # in place, hole by hole
    else:  # a sliding window (one hole)
        restrict(logits, state.masked[scored], state.rules, first=scored.start)
    scores = score(logits, state.cfg.confidence)
    if state.last_best is None:
        state.last_best, state.last_prob = state.ids.new_zeros(length), state.committed_prob.new_zeros(length)
    state.last_best[scored], state.last_prob[scored] = scores.best, scores.prob  # unscored positions keep older guesses
    conf = state.committed_prob.new_zeros(length)
    conf[scored] = scores.confidence
    steps_done, state.passes = state.passes, state.passes + 1
    vetoed = state.unchecked is not None and veto(state, scored)
    if expired:
        fill_rest(state)
        return
    if vetoed and state.cfg.veto_rule == "cut":  # this pass saw the draft's wrong tail: the next one fills
        return
    if not state.masked.any():  # a draft that stood: nothing left to fill
        return
    if state.cfg.remask:
        remask(state, logits, scores.lse)
    first = int(torch.nonzero(state.masked)[0])
    firsts = leftmost_masks(state) if state.shrinks else None  # before this pass's commits
    may_commit = torch.cat([eligible(state.last_best[part], state.masked[part], rules)
                            for part, rules in zip(state.parts, state.hole_rules)])  # (L,)
    commit_positions(state, select(state.cfg, conf, may_commit, steps_done, state.parts, closers(state)))
    if state.shrinks and not state.done:
        shrink(state, firsts)
    if guessed:
        confirm_drafts(state, guessed, head)
    if state.slides and not state.done:
        slide(state, first)
    plan_drafts(state)


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
    where = hole_positions(state.spans, state.ids.device)  # (L,) canvas positions
    wrong = checking & (state.last_best != state.ids[0, where]) & (state.last_prob >= state.cfg.veto)
    if state.cfg.veto_rule == "cut":
        wrong = cut_from_first(wrong, state.masked, state.parts)
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
    for part in state.parts:
        masked = torch.nonzero(state.masked[part])
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
    for h, (part, first, now) in enumerate(zip(state.parts, firsts, leftmost_masks(state))):
        length = part.stop - part.start
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


def shrink(state: DecodeState, firsts: list[int | None]) -> None:
    """Lay out the next pass of a multi-hole state over each hole's window (`hole_windows`);
    positions out of it take their keys/values from `state.kv`, as last encoded. Without a
    `window` the layout changes only when a hole leaves."""
    windows = hole_windows(state, firsts)
    whole = [(h, slice(0, n), slice(0, n)) for h, n in enumerate(p.stop - p.start for p in state.parts)]
    if windows == (state.windows or whole):  # the layout it has (without `window`: until a hole leaves)
        return
    state.windows = windows
    active = state.active
    device, spans = state.ids.device, state.spans
    run = torch.cat([torch.arange(spans[h].start + r.start, spans[h].start + r.stop, device=device)
                     for h, r, _ in windows])
    scored = torch.cat([torch.arange(spans[h].start + s.start, spans[h].start + s.stop, device=device)
                        for h, s in active])  # canvas positions of the scored ones
    predictors = (scored - 1 if state.shifted else scored).clamp(min=0)
    state.positions = torch.unique(torch.cat([run, predictors]))  # (W,) sorted
    holes = hole_positions(spans, device)  # (L,)
    every_predictor = (holes - 1 if state.shifted else holes).clamp(min=0)
    state.rows = torch.searchsorted(state.positions, every_predictor).clamp(max=len(state.positions) - 1)
    #   (L,); rows of positions out of the window are never read
    state.scored = torch.cat([torch.arange(state.parts[h].start + s.start, state.parts[h].start + s.stop,
                                           device=device) for h, s in active])
    state.context = without(state.kv, state.positions)


def remask(state: DecodeState, logits: torch.Tensor, lse: torch.Tensor) -> None:
    """Mask again each committed content token (not an end token, not a closed tail) whose
    probability under this pass's logits (L, V) (log-sum-exp `lse` (L,)) is below `cfg.remask`,
    once per position: the commit rule may then fill it anew from the same pass."""
    for span, part, rules in zip(state.spans, state.parts, state.hole_rules):
        hole, masked, kept = state.ids[0, span], state.masked[part], state.committed_prob[part]  # (L_h,) views
        prob = (logits[part].gather(1, hole[:, None])[:, 0] - lse[part]).exp()  # of each position's token
        doubtful = (~masked & (kept > 0) & ~state.remasked[part] & ~torch.isin(hole, rules.end_ids.to(hole.device))
                    & (prob < state.cfg.remask))
        hole[doubtful] = state.mask_id
        masked |= doubtful
        kept[doubtful] = 0.0
        state.remasked[part] |= doubtful


def slide(state: DecodeState, first: int) -> None:
    """Lay out the next pass of a sliding window. Hole positions from `first` (the leftmost mask
    of the pass just run) were encoded as masks, so the window starts there, and it runs `window`
    positions from the new leftmost mask on; the rest of the canvas is context."""
    start, length = state.span.start, len(state.masked)
    leftmost = int(torch.nonzero(state.masked)[0])
    stop = min(length, leftmost + state.cfg.window)
    a, b = start + first, start + stop  # canvas positions of the window
    device = state.ids.device
    state.positions = torch.arange(a, b, device=device)
    predictors = torch.arange(start, start + length, device=device) - int(state.shifted)  # (L,)
    state.rows = (predictors - a).clamp(0, b - a - 1)  # rows outside the scored positions are never read
    state.scored = slice(leftmost, stop)
    state.context = without(state.kv, slice(a, b))


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
        state.last_best[ahead], state.last_prob[ahead] = scores.best, scores.prob  # the next guesses, and the anytime answer
        commit = torch.zeros_like(state.masked)
        commit[at] = True
        commit_positions(state, commit)


def plan_drafts(state: DecodeState) -> None:
    """The guesses the next pass of a one-hole `verify` state checks: at most `drafts`, and none
    for the last masked position of the run that starts at the leftmost mask (nothing after it
    to predict)."""
    state.drafts = None
    if state.cfg.rule != "verify" or len(state.spans) != 1 or state.done:
        return
    masked = state.masked
    first = int(torch.nonzero(masked)[0])
    gap = torch.nonzero(~masked[first:]).flatten()
    run = int(gap[0]) if len(gap) else len(masked) - first  # masked positions from `first` on, without a gap
    count = min(state.cfg.drafts, run - 1, state.scored.stop - first - 1)  # each guess predicts a scored position
    tokens = guesses(state.last_best, state.ids[0], state.span, first, count, state.rules.end_ids.to(state.ids.device))
    if len(tokens):
        state.drafts = (first, tokens)


def fill_rest(state: DecodeState) -> None:
    """The anytime answer: fill every position still masked greedily from the last pass."""
    assert state.passes > 0, "fill_rest needs at least one pass; a request that never ran has no answer"
    commit_positions(state, state.masked.clone())
    state.stop_reason = "deadline"


def pass_windows(state: DecodeState) -> list[torch.Tensor]:
    """The windows (W,) a cached pass of `state` runs: its own, then one per guess count v with
    the first v guesses written over the masks they guess."""
    window = state.ids[0, state.positions]
    if not state.guess_windows:
        return [window]
    first, tokens = state.drafts
    at = torch.searchsorted(state.positions, state.span.start + first + torch.arange(len(tokens), device=window.device))  # (V,)
    windows = [window]
    for v in range(1, len(tokens) + 1):
        guessed = window.clone()
        guessed[at[:v]] = tokens[:v]
        windows.append(guessed)
    return windows


def window_hidden(model: Transformer, states: list[DecodeState]) -> list[list[torch.Tensor]]:
    """Per state, the hidden states (W_i, d) of its window and then of each of its guess windows:
    full passes one by one, all cached windows batched."""
    hidden: dict[int, list[torch.Tensor]] = {}
    owners, windows = [], []
    for i, state in enumerate(states):
        if state.needs_full_pass and state.passes == 0:
            canvas = state.ids[0].clone()
            h, state.context, whole = encode(model, state.ids, state.positions, state.prefix, state.suffix)
            hidden[i] = [h]
            state.prefix, state.suffix, state.encoded = None, None, (canvas, whole)
            if state.keeps_kv:  # its own copy: the kept canvas's keys/values stay as encoded
                state.kv = [(k.clone(), v.clone()) for k, v in whole]
        elif state.needs_full_pass:
            h, state.context, whole = encode(model, state.ids, state.positions)
            hidden[i] = [h]
            state.kv = whole if state.keeps_kv else None
        else:
            own = pass_windows(state)
            owners += [i] * len(own)
            windows += own
    if windows:
        positions = [states[i].positions for i in owners]
        batched, window_kv = batch_window_pass(model, windows, positions, [states[i].context for i in owners])
        for row, (i, h) in enumerate(zip(owners, batched)):
            state = states[i]
            if i not in hidden and state.keeps_kv:  # its own window (not a guess): keep its keys/values
                n = len(state.positions)
                for (k, v), (wk, wv) in zip(state.kv, window_kv):
                    k[:, :, state.positions], v[:, :, state.positions] = wk[row:row + 1, :, :n], wv[row:row + 1, :, :n]
            hidden.setdefault(i, []).append(h)
    return [hidden[i] for i in range(len(states))]


def forward_count(states: list[DecodeState]) -> int:
    """Forward passes one `step` over `states` runs: one per full pass, one for all cached windows."""
    full = sum(state.needs_full_pass for state in states)
    return full + (1 if full < len(states) else 0)


@torch.no_grad()
def step(model: Transformer, states: list[DecodeState]) -> int:
    """Advance every unfinished state by one pass; returns the number of forward passes run."""
    assert all(not state.done for state in states), "step only states that are still decoding"
    forwards = forward_count(states)
    hidden = window_hidden(model, states)
    rows = [h[0][state.rows[state.scored]] for state, h in zip(states, hidden)]  # (S_i, d) each
    logits = model.lm_head(torch.cat(rows)).float().split([len(r) for r in rows])  # (S_i, V) each
    now = time.monotonic()
    for state, hole_logits, h in zip(states, logits, hidden):
        expired = state.deadline is not None and now >= state.deadline
        advance(state, hole_logits, expired, guessed=h[1:], head=model.lm_head)
        if state.done:
            grow(state, model.cfg.mask_token_id)
    return forwards


def best(states: list[DecodeState]) -> DecodeState:
    """Of one request's candidate holes (several lengths), the one the model finds likeliest."""
    return max(states, key=lambda state: state.mean_log_prob)


def hole_tokens(state: DecodeState) -> list[list[int]]:
    """Each hole's tokens, pad included, left to right."""
    return [state.ids[0, span].tolist() for span in state.spans]


def window_bounds(state: DecodeState) -> tuple[int, int]:
    """The first canvas position a step runs and one past the last: outside them, a canvas's
    keys/values may come from an earlier request's (`reuse_context`)."""
    return int(state.positions[0]), int(state.positions[-1]) + 1


def reuse_context(state: DecodeState, prefix: list[KV] | None, suffix: Reused | None) -> None:
    """Give a state that has not run the keys/values of its canvas's start (`prefix`) and end
    (`suffix`) from an earlier request, for its first full pass to attend to instead of encoding."""
    assert state.passes == 0, "only a state that has not run reuses an earlier canvas"
    state.prefix, state.suffix = prefix, suffix


def take_encoded(state: DecodeState) -> tuple[torch.Tensor, list[KV]] | None:
    """The canvas (N,) and keys/values its first full pass made, once (None before or after)."""
    encoded, state.encoded = state.encoded, None
    return encoded


def committed_run(state: DecodeState) -> list[int]:
    """A one-hole state's committed tokens from the hole's start up to its first mask."""
    hole, masked = state.ids[0, state.span], state.masked
    run = int(torch.nonzero(masked)[0]) if masked.any() else len(masked)
    return hole[:run].tolist()


def results(state: DecodeState) -> list[Decoded]:
    """Each hole's decoding, left to right: its tokens, the mean top-1 probability of the tokens
    it committed, and the passes and stop reason of the whole state (its holes share them)."""
    decoded = []
    for span, part in zip(state.spans, state.parts):
        kept = state.committed_prob[part]
        filled = kept[kept > 0]
        confidence = float(filled.mean()) if len(filled) else 0.0
        decoded.append(Decoded(state.ids[0, span].tolist(), confidence, state.passes, state.stop_reason))
    return decoded
