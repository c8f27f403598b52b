"""Denoising of one canvas hole: one forward pass per step, a commit rule decides what freezes.

Each step scores every still-masked hole position (top-1 probability, or the top-1 minus top-2
margin) and a commit rule (`infill.commit`) picks the positions to freeze. Rules that follow the training layout keep the answer well formed: a committed
`<pad>` ends the middle (the tail after it becomes pad), and in single-line mode a committed
newline ends the line. At the deadline the remaining masks are filled greedily from the last pass.

Context cache: a full pass over the canvas stores the keys and values of every position outside
the active window (the hole, plus the position before it when logits are shifted); the steps in
between run the window alone against them. `refresh_every=1` is a full pass every step.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from engine.kernels import row_stats
from infill.canvas import Canvas
from infill.commit import DecoderConfig, select
from infill.model import Transformer


@dataclass(frozen=True, slots=True)
class HoleRules:
    pad_id: int
    newline_id: int
    banned_ids: list[int]  # never proposed (mask and other special tokens)
    first_allowed: list[int] | None  # token healing: the hole's first token must be one of these
    first_banned: list[int]  # never the hole's first token (pad; newline or blanks in single-line mode)
    single_line: bool


@dataclass(slots=True)
class Decoded:
    tokens: list[int]  # the hole, pad included
    confidence: float  # mean top-1 probability of the committed tokens
    forward_passes: int
    stop_reason: str  # "done" or "deadline"


def restrict(logits: torch.Tensor, still_masked: torch.Tensor, rules: HoleRules) -> torch.Tensor:
    """Apply the hole rules to logits (L, V) in place and return them."""
    logits[:, rules.banned_ids] = float("-inf")
    if still_masked[0]:
        if rules.first_allowed is not None:
            keep = logits[0, rules.first_allowed].clone()
            logits[0] = float("-inf")
            logits[0, rules.first_allowed] = keep
        logits[0, rules.first_banned] = float("-inf")  # an empty answer is never the best one
    return logits


def close_tail(hole: torch.Tensor, masked: torch.Tensor, rules: HoleRules) -> None:
    """After a committed pad (or newline in single-line mode), everything later is pad."""
    ends = (hole == rules.pad_id) & ~masked
    if rules.single_line:
        ends |= (hole == rules.newline_id) & ~masked
    if ends.any():
        first_end = int(torch.nonzero(ends)[0])
        tail = torch.arange(len(hole)) > first_end
        hole[tail & masked] = rules.pad_id
        masked &= ~tail


def eligible(best: torch.Tensor, masked: torch.Tensor, rules: HoleRules) -> torch.Tensor:
    """Masked positions that may commit now: end tokens wait their turn.

    A position whose best guess ends the middle (pad; a newline in single-line mode) commits only
    when it is the leftmost masked position. Otherwise a small model's confident pads eat the hole
    from its tail backwards (each pad makes the one before it likelier) and the answer comes back
    empty; content is decided first, and the end is placed once everything before it stands.
    """
    ends = best == rules.pad_id
    if rules.single_line:
        ends |= best == rules.newline_id
    leftmost = torch.zeros_like(masked)
    leftmost[int(torch.nonzero(masked)[0])] = True
    return masked & (~ends | leftmost)


def full_pass(model: Transformer, ids: torch.Tensor, window: slice) -> tuple[torch.Tensor, list]:
    """Hidden states of the window (W, d) and the keys/values of every position outside it."""
    h, kv = model.hidden(ids)
    outside = torch.ones(ids.shape[1], dtype=torch.bool)
    outside[window] = False
    return h[0, window], [(k[:, :, outside], v[:, :, outside]) for k, v in kv]


def window_pass(model: Transformer, ids: torch.Tensor, window: slice, context: list) -> torch.Tensor:
    """Hidden states of the window (W, d), attending to the cached context and to itself."""
    positions = torch.arange(window.start, window.stop)[None]  # (1, W)
    h, _ = model.hidden(ids[:, window], positions=positions, cache=context)
    return h[0]


def score(logits: torch.Tensor, kind: str) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(confidence, top-1 probability, top-1 id), each (L,), from restricted logits (L, V).

    One fused pass per row (engine.kernels.row_stats): no softmax is materialised.
    """
    stats = row_stats(logits.contiguous())
    conf = stats.margin if kind == "margin" else stats.top1_prob
    return conf, stats.top1_prob, stats.top1_id


@torch.no_grad()
def denoise(model: Transformer, canvas: Canvas, rules: HoleRules, cfg: DecoderConfig = DecoderConfig(),
            deadline: float | None = None) -> Decoded:
    ids = torch.tensor(canvas.ids, dtype=torch.long)[None]  # (1, N)
    span = slice(canvas.hole_start, canvas.hole_start + canvas.hole_len)
    predictors = model.predictor_index(torch.arange(span.start, span.stop))  # (L,)
    window = slice(int(predictors.min()), span.stop)
    rows = predictors - window.start  # which window row predicts each hole position
    masked = torch.ones(canvas.hole_len, dtype=torch.bool)
    committed_prob = torch.zeros(canvas.hole_len)
    passes, stop, context = 0, "done", []
    while masked.any():
        if passes % cfg.refresh_every == 0:
            h, context = full_pass(model, ids, window)
        else:
            h = window_pass(model, ids, window, context)
        conf, prob, best = score(restrict(model.lm_head(h[rows]).float(), masked, rules), cfg.confidence)
        commit = select(cfg, conf, eligible(best, masked, rules), passes)
        passes += 1
        if deadline is not None and time.monotonic() >= deadline:
            commit, stop = masked.clone(), "deadline"
        hole = ids[0, span]
        hole[commit] = best[commit]
        committed_prob[commit] = prob[commit]
        masked &= ~commit
        close_tail(hole, masked, rules)
    filled = committed_prob[committed_prob > 0]
    return Decoded(ids[0, span].tolist(), float(filled.mean()) if len(filled) else 0.0, passes, stop)
