"""Commit rules: which masked hole positions a denoising step freezes (pure functions on tensors).

Every rule sees the per-position confidence (L,) of the current pass and the still-masked flags,
and returns a boolean (L,) of positions to commit; every rule commits at least one position while
any is masked, so decoding always ends.

- `threshold`: every masked position with confidence >= tau (Fast-dLLM's parallel rule).
- `factor`: the largest n such that the n-th most confident c_n >= 1 - f / (n + 1).
- `fixed`: ceil(remaining / steps_left) most confident positions, for a fixed number of steps.
- `left_to_right`: the leftmost masked position only: the autoregressive yardstick.
- `left_run`: the leftmost masked position and the masked positions right after it, without a gap,
  while their confidence is >= tau: parallel commits that keep the left-to-right order. With
  `end_in_run` the run may end on a middle's end (pad; a line's end in single-line mode) as sure
  as tau (or `end_threshold`), which closes the hole in the same pass instead of the next one.
- `verify`: the leftmost masked position here; the same pass also checks up to `drafts` guesses
  for the positions after it (`infill.decode.regions.confirm_drafts`), so the answer is exactly the
  left-to-right one, in fewer passes.
Semi-autoregressive blocks restrict any rule to the leftmost block that still has masks.
Optional re-masking (`remask`, `infill.decode.stepping.remask`) masks a committed token again when a later
pass finds it unlikely, so that a rule that committed it too early may fill it anew.

A canvas with several holes passes each hole's slice of the (L,) vectors: blocks and the leftmost
position are then per hole, while the confidence ranking of the other rules spans all holes.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, fields

import torch

RULES = ("threshold", "factor", "fixed", "left_to_right", "left_run", "verify")
VETO_RULES = ("each", "cut")  # what a veto masks: the vetoed drafted token, or its draft from it on
SLIDING_RULES = ("left_to_right", "left_run", "verify")  # they commit the leftmost masks first
MAX_DRAFTS = 16
MIN_CONTEXT = 128  # the shortest canvas `context` may ask for: room for a hole and some code around it
NEVER = 1 << 16  # a refresh interval no hole reaches: the context is encoded once per request


@dataclass(frozen=True, slots=True)
class DecoderConfig:
    rule: str = "threshold"
    threshold: float = 0.9  # `threshold` and `left_run` rules: commit at or above this confidence
    factor: float = 1.0  # `factor` rule's f
    steps: int = 8  # `fixed` rule: passes to fill the hole
    block: int = 0  # semi-autoregressive block length (0: the whole hole is one block)
    confidence: str = "prob"  # "prob": top-1 probability; "margin": top-1 minus top-2 probability
    refresh_every: int = 4  # full passes (context cache refresh) every this many steps
    lengths: int = 1  # hole lengths tried side by side (halving from the mode's length); the likeliest is kept
    grow: bool = False  # a multi-line hole that fills with no pad grows (up to max_tokens); off: it cost
    #   quality (bench.decode)
    cut_loops: bool = True  # cut a middle that starts repeating itself back to its first copy
    stop_loops: bool = True  # with `cut_loops`: a hole whose committed start loops is closed there, its
    #   masks left to pad (the answer `cut_loops` keeps, without decoding the copies it cuts)
    reuse_prefix: bool = True  # while typing goes on at one place, the worker reuses the previous canvas's keys/values
    drafts: int = 4  # `verify` rule: guesses checked per pass, each in a window of its own
    window: int = 0  # a cached pass runs this many positions from the leftmost mask on, and the ones
    #   committed in the pass before (0: the whole hole); left-to-right rules only (`infill.decode`)
    remask: float = 0.0  # a committed token whose probability in a later pass is below this is masked
    #   again, once per position (0: never); not with `verify` (its answer is left to right's) or a window
    veto: float = 0.0  # a drafted token is masked again where the model puts at least this on another
    #   token (0: never: a draft stands as drafted; `infill.decode.regions.veto`)
    veto_rule: str = "each"  # "each": every vetoed token is masked alone; "cut": its hole's draft stands
    #   up to the first vetoed token, and from there on is masked for the model to fill
    end_in_run: bool = False  # `left_run` rule: a run may end on an end token as sure as `threshold`
    #   (the hole closes in that pass); off: an end commits only as the leftmost mask, a pass later
    end_threshold: float = 0.0  # with `end_in_run`: how sure an end token that ends a run must be (0: `threshold`)
    context: int = 0  # tokens of canvas a one-hole completion is laid out in, at most the model's (0: the model's);
    #   a shorter canvas makes every pass cheaper (attention and the first pass grow with it)
    lookup: int = 0  # after each pass, up to this many tokens that followed the tokens before the leftmost mask
    #   elsewhere in the canvas are written into the masks as a draft (0: never; `infill.decode.lookup`); only
    #   with rule `left_run` and no `remask` (`looks_up`), else it is left unused; a sliding window runs the draft
    lookup_key: int = 3  # `lookup`: the shortest key looked up (keys of up to 8 tokens are tried first)
    lookup_first: float = 0.0  # `lookup`: a draft is cut before its first token to which the pass before it (which
    #   saw masks there) gives less than this probability
    lookup_keep: float = 0.5  # `lookup`: a drafted token stands where the next pass gives it at least this
    #   probability; from the first that falls short on, the draft is masked again
    lookup_keep_before: float = 0.0  # `lookup`: the bound of `lookup_keep` for a draft looked up before the
    #   hole (code written earlier, repeated; 0: `lookup_keep`); one looked up after it keeps `lookup_keep`
    #   (a continuation from the suffix mostly repeats the line after the hole)
    lookup_hide: bool = False  # `lookup`: the pass that checks a draft hides each drafted token from the rows that
    #   check it and the ones before it (they see the last pass's masks there), and a token stands where it is
    #   that pass's top-1 (left to right's) or as likely as `lookup_keep`: a check the draft cannot sway (a
    #   model with shifted logits only, `infill.decode.lookup`)
    lookup_guess: float = 0.0  # `lookup_hide`: where nothing is looked up, the draft is the pass's own top-1
    #   guesses for the masks from the leftmost on, while each is at least this likely (0: never; checked hidden)
    max_passes: int = 0  # a completion's budget of passes: the pass that reaches it ends it, its answer what the
    #   passes committed and the line it was on finished from that pass's guesses, stop reason "budget" (0: none;
    #   a deadline counted in passes, the same on any machine; an edit's regions take it only from the request,
    #   `infill.decoder_defaults.decoder_config`; `infill.decode.stepping.close_rest`)

    @property
    def looks_up(self) -> bool:
        """It writes `lookup` drafts: `left_run` commits the leftmost mask first; without `remask`
        each pass masks nothing again but a refused draft."""
        return bool(self.lookup) and self.rule == "left_run" and not self.remask

    def __post_init__(self):
        for setting in fields(self):
            _check_type(setting.name, getattr(self, setting.name), type(setting.default))
        if self.rule not in RULES:
            raise ValueError(f"setting 'rule' must be one of {', '.join(RULES)}; got {self.rule!r}")
        if self.veto_rule not in VETO_RULES:
            raise ValueError(f"setting 'veto_rule' must be one of {', '.join(VETO_RULES)}; got {self.veto_rule!r}")
        if self.confidence not in ("prob", "margin"):
            raise ValueError(f"setting 'confidence' must be 'prob' or 'margin'; got {self.confidence!r}")
        for name, (in_range, wanted) in _RANGES.items():
            if not in_range(getattr(self, name)):
                raise ValueError(f"setting '{name}' must be {wanted}; got {getattr(self, name)!r}")
        if self.remask and (self.rule == "verify" or self.window):
            raise ValueError("setting 'remask' needs every committed token re-scored each pass: not with "
                             "rule 'verify' or a 'window'")
        if self.window and self.rule not in SLIDING_RULES:
            raise ValueError(f"setting 'window' needs a rule that commits from the left "
                             f"({', '.join(SLIDING_RULES)}), not {self.rule!r}")


# setting -> (whether a value is in range, what a valid value is)
_RANGES = {
    "threshold": (lambda value: 0.0 < value <= 1.0, "in (0, 1]"),
    "end_threshold": (lambda value: 0.0 <= value <= 1.0, "in [0, 1]"),
    "factor": (lambda value: value > 0, "positive"),
    "steps": (lambda value: value >= 1, "at least 1"),
    "block": (lambda value: value >= 0, "at least 0"),
    "refresh_every": (lambda value: value >= 1, "at least 1"),
    "lengths": (lambda value: 1 <= value <= 4, "in 1..4"),
    "drafts": (lambda value: 0 <= value <= MAX_DRAFTS, f"in 0..{MAX_DRAFTS}"),
    "window": (lambda value: value >= 0, "at least 0"),
    "remask": (lambda value: 0.0 <= value < 1.0, "in [0, 1)"),
    "veto": (lambda value: 0.0 <= value <= 1.0, "in [0, 1]"),
    "context": (lambda value: value == 0 or value >= MIN_CONTEXT, f"0 (the model's) or at least {MIN_CONTEXT}"),
    "lookup": (lambda value: 0 <= value <= 32, "in 0..32"),
    "lookup_key": (lambda value: 1 <= value <= 8, "in 1..8"),
    "lookup_keep": (lambda value: 0.0 < value <= 1.0, "in (0, 1]"),
    "lookup_keep_before": (lambda value: 0.0 <= value <= 1.0, "in [0, 1]"),
    "lookup_first": (lambda value: 0.0 <= value <= 1.0, "in [0, 1]"),
    "lookup_guess": (lambda value: 0.0 <= value <= 1.0, "in [0, 1]"),
    "max_passes": (lambda value: value >= 0, "at least 0"),
}


def _check_type(name: str, value: object, wanted: type) -> None:
    """A setting's value has its default's type (an int may stand for a float; a bool for nothing else)."""
    allowed = (int, float) if wanted is float else (wanted,)
    if not isinstance(value, allowed) or (isinstance(value, bool) and wanted is not bool):
        raise ValueError(f"setting '{name}' must be {wanted.__name__}; got {type(value).__name__} {value!r}")


def block_candidates(masked: torch.Tensor, block: int) -> torch.Tensor:
    """Masked positions inside the leftmost block that still has masks (all masked when block == 0)."""
    if block <= 0 or not masked.any():
        return masked.clone()
    first = int(torch.nonzero(masked)[0])
    start = first - first % block
    inside = torch.zeros_like(masked)
    inside[start:start + block] = True
    return masked & inside


def top_n(conf: torch.Tensor, candidates: torch.Tensor, n: int) -> torch.Tensor:
    """The n most confident candidates (ties: lowest index first)."""
    n = max(1, min(n, int(candidates.sum())))
    scores = torch.where(candidates, conf, float("-inf"))
    chosen = torch.zeros_like(candidates)
    chosen[torch.sort(scores, descending=True, stable=True).indices[:n]] = True
    return chosen & candidates


def factor_count(sorted_conf: torch.Tensor, factor: float) -> int:
    """Largest n with c_n >= 1 - f/(n+1) for confidences sorted high to low (at least 1)."""
    n = torch.arange(1, len(sorted_conf) + 1, dtype=sorted_conf.dtype, device=sorted_conf.device)
    ok = sorted_conf >= 1 - factor / (n + 1)
    return int(torch.nonzero(ok).max()) + 1 if ok.any() else 1


def leftmost(candidates: torch.Tensor) -> torch.Tensor:
    """The first candidate (L,) only (none when there is none)."""
    chosen = torch.zeros_like(candidates)
    if candidates.any():
        chosen[int(torch.nonzero(candidates)[0])] = True
    return chosen


def left_run(candidates: torch.Tensor, conf: torch.Tensor, threshold: float,
             closers: torch.Tensor | None = None) -> torch.Tensor:
    """The first candidate (L,), then each next position while it is a candidate as sure as
    `threshold`; a position of `closers` (L,) (a sure end token, not a candidate unless leftmost)
    may end the run: it is its last position."""
    chosen = leftmost(candidates)
    if not chosen.any():
        return chosen
    sure = candidates & (conf >= threshold)
    closing = torch.zeros_like(sure) if closers is None else closers
    index = int(torch.nonzero(chosen)[0]) + 1
    while index < len(sure) and (sure[index] or closing[index]):
        chosen[index] = True
        if closing[index]:
            break
        index += 1
    return chosen


def select(cfg: DecoderConfig, conf: torch.Tensor, masked: torch.Tensor, steps_done: int,
           holes: list[slice] | None = None, closers: torch.Tensor | None = None) -> torch.Tensor:
    """Positions (L,) bool to commit this step; `holes` splits (L,) into holes (default: one hole);
    `closers` (L,): masked positions whose guess ends the middle, where a `left_run` run with
    `end_in_run` may end."""
    holes = holes or [slice(0, len(masked))]
    candidates = torch.cat([block_candidates(masked[hole], cfg.block) for hole in holes])  # (L,)
    if not candidates.any():
        return candidates
    if cfg.rule in ("left_to_right", "verify"):
        return torch.cat([leftmost(candidates[hole]) for hole in holes])
    if cfg.rule == "left_run":
        closing = torch.zeros_like(candidates)
        if cfg.end_in_run and closers is not None:  # inside the block its run is in
            closing = closers & torch.cat([block_candidates(masked[hole] | closers[hole], cfg.block)
                                           for hole in holes])
            closing &= conf >= (cfg.end_threshold or cfg.threshold)
        return torch.cat([left_run(candidates[hole], conf[hole], cfg.threshold, closing[hole]) for hole in holes])
    if cfg.rule == "fixed":
        steps_left = max(1, cfg.steps - steps_done)
        return top_n(conf, candidates, math.ceil(int(masked.sum()) / steps_left))
    if cfg.rule == "factor":
        ranked = torch.sort(conf[candidates], descending=True).values
        return top_n(conf, candidates, factor_count(ranked, cfg.factor))
    chosen = candidates & (conf >= cfg.threshold)
    return chosen if chosen.any() else top_n(conf, candidates, 1)
