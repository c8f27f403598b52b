"""The decoding record: one request's canvas being denoised, its holes, and how it is laid out.

`DecodeState` holds the canvas, one `Hole` record per hole (its positions, its slice of the
per-position vectors, its rules), the per-position vectors that run over all holes left to right
(still masked, committed probability, the last pass's guesses), the window a cached pass runs and
the cached keys/values of the rest. `start` (one hole) and `start_regions` (several) lay a canvas
out; `commit_positions` is the one write that freezes positions.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import torch

from infill.canvas import Canvas, RegionsCanvas
from infill.commit import DecoderConfig
from infill.decode.holes import HoleRules, close_tail
from infill.model import KV, Transformer


@dataclass(frozen=True, slots=True)
class Hole:
    """One hole of a canvas being decoded."""

    span: slice  # its positions in the canvas `ids`
    part: slice  # its positions in the state's (L,) vectors (`masked`, `rows`, `committed_prob`, ...)
    rules: HoleRules


def holes_of(spans: list[slice], rules: list[HoleRules]) -> list[Hole]:
    """The hole records of canvas `spans` (left to right) with their rules, each given its part of
    the (L,) vectors."""
    bounds = [0, *itertools.accumulate(span.stop - span.start for span in spans)]
    return [Hole(span, slice(a, b), hole_rules) for span, a, b, hole_rules in zip(spans, bounds, bounds[1:], rules)]


@dataclass(slots=True, eq=False)
class DecodeState:
    """One request's denoising in progress: its canvas, which hole positions are still masked, and
    the cached keys/values of its context. The (L,) vectors run over all its holes, left to right."""

    ids: torch.Tensor  # (1, N) the canvas; hole positions are overwritten as they commit
    holes: list[Hole]  # left to right; L counts their positions, in this order
    positions: torch.Tensor  # (W,) sorted window of a cached step: each hole, and (if shifted) the position before it
    rows: torch.Tensor  # (L,) the window row whose output predicts each hole position (those it scores)
    scored: slice | torch.Tensor  # the hole positions (of the (L,) vectors) its next pass scores: all, a
    #   sliding window's slice, or the indices (S,) of the holes still in a shrinking window
    shifted: bool  # logits are shifted: the position before a hole predicts its first token
    cfg: DecoderConfig
    deadline: float | None  # time.monotonic() after which the next pass is the last
    masked: torch.Tensor  # (L,) bool, True while a hole position is undecided
    committed_prob: torch.Tensor  # (L,) top-1 probability at commit time (0 for positions closed as pad)
    context: list[KV] = field(default_factory=list)  # per layer (1, nkv, N - W, hd): outside the window
    #   (a state that keeps `kv` has none: its window runs against those)
    last_best: torch.Tensor | None = None  # (L,) the last pass's top-1 ids, for the anytime answer
    last_prob: torch.Tensor | None = None  # (L,) and their probabilities
    passes: int = 0
    stop_reason: str = "done"  # "done", "deadline" or "budget" (`infill.decode.stepping.stop_reason`)
    grow_to: int = 0  # the hole may grow up to this many positions (multi-line, no pad yet)
    max_context: int = 0  # the model's context: a grown canvas must fit it
    drafts: tuple[int, torch.Tensor] | None = None  # `verify`: (hole position i of the leftmost mask,
    #   guesses (V,) for positions i, i + 1, ...) that its next cached pass checks
    kv: list[KV] | None = None  # a sliding window's keys/values of the whole canvas, per layer (1, nkv, N, hd)
    remasked: torch.Tensor | None = None  # (L,) bool: positions masked again once already (`remask`)
    mask_id: int = 0  # the model's mask token, written over a position masked again
    windows: list[tuple[int, slice, slice]] | None = None  # a multi-hole window as `shrink` laid it
    #   out last: (hole, positions run, positions scored), hole-relative; None: every hole whole
    unchecked: torch.Tensor | None = None  # (L,) bool: drafted tokens no pass has scored yet (`veto`; None without one)
    looked: torch.Tensor | None = None  # (L,) bool: tokens of a `lookup` draft the next pass checks (None: none yet)
    looked_keep: float = 1.0  # the probability its looked-up tokens need to stand (`lookup_keep`, `lookup_keep_before`)
    window_kv: list[KV] | None = None  # `lookup_hide`: its last pass's keys/values of the window, per layer
    #   (1, nkv, W, hd): what the rows checking a draft see of the positions after them
    masks_kv: list[KV] | None = None  # `lookup_hide`: those its last pass's hidden check saw (the pass before's),
    #   until the check is read: the positions of a refused draft take them back

    @property
    def span(self) -> slice:
        """The hole of a one-hole canvas."""
        assert len(self.holes) == 1, "a multi-hole state has `holes`, not one span"
        return self.holes[0].span

    @property
    def rules(self) -> HoleRules:
        """The rules of a one-hole canvas."""
        assert len(self.holes) == 1, "a multi-hole state has `holes`, each with its rules"
        return self.holes[0].rules

    @property
    def done(self) -> bool:
        """Nothing masked, and every drafted or looked-up token seen by a pass."""
        return not bool(self.masked.any()) and not any(
            flags is not None and bool(flags.any()) for flags in (self.unchecked, self.looked))

    @property
    def needs_full_pass(self) -> bool:
        """A full pass encodes the context first and refreshes it every `refresh_every` steps."""
        return (not self.context and self.kv is None) or self.passes % self.cfg.refresh_every == 0

    @property
    def slides(self) -> bool:
        """Its window slides along the hole (`window` > 0, one hole)."""
        return self.cfg.window > 0 and len(self.holes) == 1

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
        return len(self.holes) > 1 and not self.cfg.remask

    @property
    def keeps_kv(self) -> bool:
        """It keeps the whole canvas's keys/values, updated by each pass's window."""
        return self.slides or self.shrinks

    @property
    def hides_lookups(self) -> bool:
        """Its lookup drafts are checked hidden (`lookup_hide`; shifted logits: the row before a drafted
        token checks it, and sees no drafted token from that one on)."""
        return self.cfg.looks_up and self.cfg.lookup_hide and self.shifted and len(self.holes) == 1

    @property
    def checks_hidden(self) -> bool:
        """Its next pass checks a lookup draft with the draft hidden (`hides_lookups`)."""
        return self.hides_lookups and self.looked is not None and bool(self.looked.any())

    @property
    def guess_windows(self) -> int:
        """Windows its next pass runs besides its own: one per guess checked (a cached pass only)."""
        return 0 if self.drafts is None or self.needs_full_pass else len(self.drafts[1])

    @property
    def mean_log_prob(self) -> float:
        """The mean log top-1 probability of the tokens it committed (positions closed as pad excluded)."""
        filled = self.committed_prob[self.committed_prob > 0]
        return float(filled.log().mean()) if len(filled) else float("-inf")


def model_device(model: Transformer) -> torch.device:
    """Where the model's weights live: every tensor of its decoding states lives there too."""
    return model.model.embed_tokens.weight.device


def hole_positions(spans: list[slice], device: torch.device) -> torch.Tensor:
    """The canvas positions of the holes, left to right (L,)."""
    return torch.cat([torch.arange(span.start, span.stop, device=device) for span in spans])


def canvas_positions(state: DecodeState) -> torch.Tensor:
    """The canvas positions of a state's holes, left to right (L,)."""
    return hole_positions([hole.span for hole in state.holes], state.ids.device)


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
        ids=canvas, holes=holes_of(spans, rules), positions=positions, rows=rows,
        scored=slice(0, length), shifted=model.cfg.logits_shift, cfg=cfg, deadline=deadline,
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


def commit_positions(state: DecodeState, commit: torch.Tensor) -> None:
    """Freeze the hole positions `commit` (L,) bool to the last pass's guesses; close each hole's tail."""
    state.committed_prob[commit] = state.last_prob[commit]
    for hole in state.holes:
        ids, masked = state.ids[0, hole.span], state.masked[hole.part]  # (L_h,) views: writes land in the state
        ids[commit[hole.part]] = state.last_best[hole.part][commit[hole.part]]
        masked &= ~commit[hole.part]
        close_tail(ids, masked, hole.rules)
