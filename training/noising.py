"""The masked-diffusion training objective, shaped like the product's requests (pure NumPy).

From a window of corpus tokens, cut one to three holes (a whole line, a block of lines, or a
random span), pad each hole's middle with `<pad>` up to a drawn hole length so the model learns
where a middle ends, then mask each hole token with probability t ~ U(t_min, 1). Some windows are
instead masked uniformly over the whole window. Loss weights are 1/t on masked positions.

Self-distillation samples (`distill_sample`) are decoded canvases whose hole holds the model's own
answer (`training.distill`): the hole is masked as the left-to-right decoders leave it mid-way (its
first k positions known, the rest masked) or, in some samples, at random.

Laid-out canvases (`canvas_sample`: an edit job's canvas with each hole holding its answer,
`training.edit_canvases`) are masked over their holes only, each position with probability t.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

T_MIN = 0.05
MAX_MIDDLE = 96  # longest middle cut (tokens); longer blocks are shortened to whole lines
PLAIN_FRACTION = 0.15  # windows masked uniformly, with no hole structure
SCATTERED_FRACTION = 0.25  # distillation samples masked at random over the hole, not from a point on
SUFFIX_KEPT = 128  # distillation windows keep up to this many canvas tokens after the hole


@dataclass(frozen=True, slots=True)
class Special:
    mask: int
    pad: int
    newline: int  # marks where a line starts (`line_starts`)

    @classmethod
    def of(cls, tok) -> Special:
        """The ids of a model's tokenizer (the bundled one or a family's, `ModelTokenizer`).

        A family's byte-level BPE has no single id that marks every line start: Qwen2's split
        joins a newline to the punctuation before it (`):\\n`, `,\\n`) and runs of newlines into
        one, LLaDA's (GPT-2's) joins it to the indentation after it. Its plain "\\n" id marks 23%
        (Qwen2) and 9% (LLaDA) of the 6,626 non-blank lines of argparse, dataclasses, logging and
        pathlib, so on a family's tokens line and block holes start only at those lines, and
        windows with fewer than two of them get random spans instead."""
        return cls(mask=tok.mask_id, pad=tok.pad_id, newline=tok.newline_id)


@dataclass(frozen=True, slots=True)
class HoleShapes:
    """How a window's holes are drawn: the shares of whole lines, of blocks of 2..`max_block`
    lines, of random spans and of line tails (from inside a line to its end: the cursor
    mid-line), and the share of windows masked uniformly instead of holed."""
    line: float = 0.45
    block: float = 0.3
    span: float = 0.25
    tail: float = 0.0
    max_block: int = 8
    plain: float = PLAIN_FRACTION

    @property
    def kinds(self) -> list[float]:
        return [self.line, self.block, self.span, self.tail]


CORPUS_SHAPES = HoleShapes()  # the bundled model's training objective
EDITOR_SHAPES = HoleShapes(line=0.4, block=0.2, span=0.05, tail=0.35, max_block=4, plain=0.0)  # what editors ask


def line_starts(window: np.ndarray, newline: int) -> np.ndarray:
    """Indices where a line begins (after each newline), excluding 0."""
    return np.flatnonzero(window[:-1] == newline) + 1


def pick_span(window: np.ndarray, sp: Special, rng: np.random.Generator, lo: int, hi: int,
              shapes: HoleShapes = CORPUS_SHAPES) -> tuple[int, int]:
    """A [start, end) middle within window[lo:hi]: one line, several lines, a random span or the
    tail of a line, drawn by `shapes`."""
    starts = line_starts(window, sp.newline)
    starts = starts[(starts > lo) & (starts < hi - 2)]
    kind = rng.choice(4, p=shapes.kinds) if len(starts) >= 2 else 2
    if kind == 2:
        length = int(rng.integers(1, min(48, hi - lo - 1)))
        start = int(rng.integers(lo + 1, hi - length))
        return start, start + length
    i = int(rng.integers(0, len(starts) - 1))
    if kind == 3:
        return line_tail(int(starts[i]), int(starts[i + 1]), rng)
    lines = 1 if kind == 0 else int(rng.integers(2, shapes.max_block + 1))
    end_i = min(i + lines, len(starts) - 1)
    start, end = int(starts[i]), int(starts[end_i])
    while end - start > MAX_MIDDLE and end_i > i + 1:
        end_i -= 1
        end = int(starts[end_i])
    return start, min(end, start + MAX_MIDDLE)


def line_tail(start: int, stop: int, rng: np.random.Generator) -> tuple[int, int]:
    """The [from, stop) end of the line [start, stop) from a point after its first token (the
    newline that ends it included), capped at MAX_MIDDLE tokens."""
    stop = min(stop, start + MAX_MIDDLE)
    return int(rng.integers(start + 1, stop)) if stop - start > 1 else start, stop


def cut_holes(window: np.ndarray, sp: Special, rng: np.random.Generator, length: int,
              shapes: HoleShapes = CORPUS_SHAPES):
    """Rebuild the window with padded holes; returns (ids, is_hole), both of `length`."""
    n_holes = int(rng.choice([1, 2, 3], p=[0.6, 0.25, 0.15]))
    bounds = np.linspace(0, length, n_holes + 1).astype(int)
    pieces, hole_flags, cursor = [], [], 0
    for h in range(n_holes):
        start, end = pick_span(window, sp, rng, int(bounds[h]), int(bounds[h + 1]), shapes)
        middle = end - start
        pads = int(rng.integers(0, max(16, 2 * middle) + 1))
        pieces += [window[cursor:start], window[start:end], np.full(pads, sp.pad, window.dtype)]
        hole_flags += [np.zeros(start - cursor, bool), np.ones(middle + pads, bool)]
        cursor = end
    pieces.append(window[cursor:])
    hole_flags.append(np.zeros(len(window) - cursor, bool))
    ids, is_hole = np.concatenate(pieces)[:length], np.concatenate(hole_flags)[:length]
    return ids, is_hole


def noise_window(window: np.ndarray, sp: Special, rng: np.random.Generator, length: int,
                 shapes: HoleShapes = CORPUS_SHAPES):
    """(input ids, target ids, loss weights), each of `length`, for one training sample."""
    if rng.random() < shapes.plain:
        ids, candidates = window[:length].copy(), np.ones(length, bool)
    else:
        ids, candidates = cut_holes(window, sp, rng, length, shapes)
    candidates[0] = False  # position 0 is predicted from nothing when logits are shifted
    t = rng.uniform(T_MIN, 1.0)
    masked = candidates & (rng.random(length) < t)
    if not masked.any():
        masked[rng.choice(np.flatnonzero(candidates))] = True
    inputs = np.where(masked, sp.mask, ids)
    weights = masked.astype(np.float32) / t
    return inputs, ids, weights


def diffusion_batch(windows: np.ndarray, sp: Special, rng: np.random.Generator, length: int):
    """Stack noised samples: windows (B, W >= length) -> three arrays of shape (B, length)."""
    out = [noise_window(w, sp, rng, length) for w in windows]
    return tuple(np.stack(x) for x in zip(*out))


def crop(n_ids: int, hole: tuple[int, int], length: int) -> tuple[int, int]:
    """The [start, stop) of at most `length` canvas positions: the hole (its start at least; the
    position before it too), the context before it, and up to SUFFIX_KEPT positions after it."""
    stop = min(n_ids, hole[1] + SUFFIX_KEPT)
    start = max(0, min(stop - length, hole[0] - 1))
    return start, min(stop, start + length)


def distill_sample(ids: np.ndarray, hole: tuple[int, int], sp: Special, rng: np.random.Generator, length: int):
    """(input ids, target ids, loss weights), each of `length`, from a decoded canvas: hole
    positions are masked from a random point on (or at random), the teacher's tokens are the
    targets, and each masked position weighs length / masked, so a sample counts as one mean.
    A canvas shorter than `length` is padded on the right with weight 0."""
    start, stop = crop(len(ids), hole, length)
    a, b = hole[0] - start, min(hole[1], stop) - start
    targets = np.full(length, sp.pad, dtype=np.int64)
    targets[:stop - start] = ids[start:stop]
    masked = np.zeros(length, bool)
    if rng.random() < SCATTERED_FRACTION:
        masked[a:b] = rng.random(b - a) < rng.uniform(T_MIN, 1.0)
    else:
        masked[a + int(rng.integers(0, b - a)):b] = True
    if not masked.any():
        masked[a + int(rng.integers(0, b - a))] = True
    inputs = np.where(masked, sp.mask, targets)
    weights = (masked * (length / masked.sum())).astype(np.float32)
    return inputs, targets, weights


FOCUS_WEIGHT = 8.0  # loss weight of an edit canvas's changed positions against its copied ones


def canvas_sample(ids: np.ndarray, holes: list[tuple[int, int]], sp: Special, rng: np.random.Generator, length: int,
                  focus: np.ndarray = np.zeros(0, np.int64)):
    """(input ids, target ids, loss weights), each of `length`, from a laid-out canvas whose holes
    hold their answers: hole positions are masked with probability t ~ U(t_min, 1) (at least
    one), weights 1/t as in `noise_window`, times FOCUS_WEIGHT at the `focus` positions (where an
    edit changes its region's text: a few tokens among many copied ones, which would otherwise
    teach copying alone). A canvas longer than `length` is cut at its end (the holes past it lose
    their weight), a shorter one padded on the right with weight 0."""
    targets = np.full(length, sp.pad, dtype=np.int64)
    n = min(length, len(ids))
    targets[:n] = ids[:n]
    candidates = np.zeros(length, bool)
    for start, stop in holes:
        candidates[max(1, start):min(stop, length)] = True  # position 0 is predicted from nothing
    t = rng.uniform(T_MIN, 1.0)
    masked = candidates & (rng.random(length) < t)
    if not masked.any() and candidates.any():
        masked[rng.choice(np.flatnonzero(candidates))] = True
    inputs = np.where(masked, sp.mask, targets)
    weights = masked.astype(np.float32) / t
    focus = focus[focus < length]
    weights[focus] *= FOCUS_WEIGHT
    return inputs, targets, weights
