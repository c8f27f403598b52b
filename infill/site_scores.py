"""The model's judgement of an edit job's drafted sites: how much likelier it finds each hole's
drafted new text than the text that is there now, in the same place of the same canvas.

For each hole whose draft is whole (no slots) and differs from its current text (`replaces`), the
tokens that differ between the two (`changed_tokens`: the replaced, inserted or deleted runs,
a run of one side that is empty taking one token of context on each side) are read masked, on
one side in the canvas holding every such hole's new text, on the other in the one holding its
current text. Each run is read left to right as the decoder commits it (`chain_canvases`: its
first tokens one canvas each, the rest of it at once, at most `MAX_STEPS` canvases a side), and
every canvas of both sides goes through one batched forward pass whose output head runs only the
rows read (`site_scores`), over at most `SCORE_CONTEXT` tokens. A hole's score is the summed
log-probability of its new tokens less that of its current ones (`SiteScore.gain`; the mean per
token was tried on the tuning sets and lost more right edits for no fewer false ones). `judged`
turns each hole whose score is below minus a margin into a draft of its current text: the job
then answers that region as it is, and no edit is shown there (`bench.next_edit_drafts
--site-margin`; not the product's default: it cost more right edits than false ones on the
tuning and held-out commits).
"""
from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass

import torch

from infill.fim import draft_ids, job_canvas
from infill.job import Hole, Job
from infill.model import Transformer
from infill.tokenizer import ModelTokenizer


@dataclass(frozen=True, slots=True)
class SiteScore:
    """The summed log-probabilities of a hole's changed tokens, each side read masked."""

    new_logprob: float
    old_logprob: float

    @property
    def gain(self) -> float:
        """The new text's log-probability less the current text's (> 0: the model prefers the draft)."""
        return self.new_logprob - self.old_logprob


def changed_tokens(old: list[int], new: list[int]) -> tuple[list[int], list[int]] | None:
    """The indices of `old` and of `new` that differ (`difflib` on the token lists); a run empty
    on one side widens on both sides by one token of context. None when they are the same or
    a side would have no token to read."""
    if old == new:
        return None
    olds, news = set(), set()
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        if i1 == i2 or j1 == j2:  # an insertion or a deletion: read it with its neighbours
            i1, i2, j1, j2 = max(0, i1 - 1), min(len(old), i2 + 1), max(0, j1 - 1), min(len(new), j2 + 1)
        olds.update(range(i1, i2))
        news.update(range(j1, j2))
    return (sorted(olds), sorted(news)) if olds and news else None


def current_hole(hole: Hole) -> Hole:
    """The hole drafted as its current text: its answer leaves the region as it is."""
    return Hole(hole.mode, hole.max_tokens, hole.replaces, (hole.replaces,), ())


def scored_sites(tok: ModelTokenizer, job: Job) -> list[tuple[list[int], list[int]] | None]:
    """Per hole, the draft positions to read (current text's, new text's, `changed_tokens`), or
    None for a hole that is not judged: no whole draft, a draft that changes nothing, or one
    whose tokens do not decode back to it."""
    healed = [tok.heal(piece).text for piece in job.pieces[:-1]]
    found = []
    for text, hole in zip(healed, job.holes):
        if not hole.drafted or hole.slots or hole.draft[0] == hole.replaces:
            found.append(None)
            continue
        old, new = draft_ids(tok, text, current_hole(hole)), draft_ids(tok, text, hole)
        found.append(changed_tokens(old, new) if old and new else None)
    return found


MAX_STEPS = 3  # canvases per side: a changed run's first tokens are read left to right, the rest of it at once
SCORE_CONTEXT = 512  # tokens of a scoring canvas (its holes and the text nearest them): a pass costs with its length


def runs(indices: list[int]) -> list[list[int]]:
    """Sorted `indices` cut into runs of consecutive ones."""
    cut: list[list[int]] = []
    for i in indices:
        if cut and cut[-1][-1] == i - 1:
            cut[-1].append(i)
        else:
            cut.append([i])
    return cut


def chain_canvases(ids: list[int], reads: list[tuple[int, int]], mask_id: int,
                   steps: int) -> list[tuple[list[int], list[tuple[int, int]]]]:
    """The canvases that read the changed runs left to right: `reads` are (canvas position, place
    in its run); canvas j has every position of place >= j masked and reads those of place j
    (the last canvas reads every place from j on). Each: (ids, [(position, hole index of reads)])."""
    laid = []
    for step in range(steps):
        canvas = list(ids)
        for position, place in reads:
            if place >= step:
                canvas[position] = mask_id
        last = step == steps - 1
        laid.append((canvas, [(position, k) for k, (position, place) in enumerate(reads)
                              if place == step or (last and place > step)]))
    return laid


def _side(tok: ModelTokenizer, job: Job, picks: list[list[int] | None], context: int,
          layout: str) -> tuple[list[int], list[tuple[int, int]], list[int], list[int]]:
    """One side's canvas (the job's, unmasked), its reads ((position, place in run) each), the
    hole each read belongs to and the token it reads."""
    canvas, _ = job_canvas(tok, job, context, layout)
    reads, holes = [], []
    for hole, (span, pick) in enumerate(zip(canvas.spans, picks)):
        for run in runs(pick or []):
            reads += [(span.start + i, place) for place, i in enumerate(run)]
            holes += [hole] * len(run)
    return canvas.ids, reads, holes, [canvas.ids[p] for p, _ in reads]


def _logprobs(model: Transformer, canvases: list[list[int]], positions: list[int], pad_id: int) -> torch.Tensor:
    """Log-probabilities (B, P, V) of the tokens at `positions` of each canvas, the canvases run as
    one batch (padded at the end; no position attends to the padding); only the rows that predict
    `positions` reach the output head."""
    longest = max(map(len, canvases))
    device = model.model.embed_tokens.weight.device
    ids = torch.full((len(canvases), longest), pad_id, dtype=torch.long, device=device)
    for b, canvas in enumerate(canvases):
        ids[b, :len(canvas)] = torch.tensor(canvas)
    real = torch.arange(longest, device=device)[None] < torch.tensor([len(c) for c in canvases],
                                                                     device=device)[:, None]  # (B, T)
    rows = model.predictor_index(torch.tensor(positions, device=device))  # (P,)
    with torch.inference_mode():
        hidden, _ = model.hidden(ids, mask=real[:, None, None, :], rows=rows)  # (B, P, d); mask: keys attended
        return torch.log_softmax(model.lm_head(hidden).float(), dim=-1)


def side_logprobs(model: Transformer, sides: list[tuple[list[int], list[tuple[int, int]], list[int], list[int]]],
                  mask_id: int, pad_id: int) -> list[list[float]]:
    """Per side (`_side`), the log-probability of each read token, its run read left to right
    (`chain_canvases`), every side's canvases in one forward pass."""
    laid = [chain_canvases(ids, reads, mask_id, min(MAX_STEPS, 1 + max(place for _, place in reads)))
            for ids, reads, _, _ in sides]
    positions = sorted({position for _, reads, _, _ in sides for position, _ in reads})
    row = {position: r for r, position in enumerate(positions)}
    logprobs = _logprobs(model, [canvas for side in laid for canvas, _ in side], positions, pad_id)  # (B, P, V)
    found, batch = [], 0
    for side, (_, _, _, tokens) in zip(laid, sides):
        values = [0.0] * len(tokens)
        for _, picks in side:
            for position, k in picks:
                values[k] = logprobs[batch, row[position], tokens[k]].item()
            batch += 1
        found.append(values)
    return found


def site_scores(model: Transformer, tok: ModelTokenizer, job: Job) -> list[SiteScore | None]:
    """Per hole of an edit `job`, the model's score of its draft against its current text, or
    None for a hole not judged (`scored_sites`); one forward pass of both sides' canvases."""
    sites = scored_sites(tok, job)
    if not any(sites):
        return [None] * len(job.holes)
    old_job = dataclasses.replace(job, holes=tuple(current_hole(h) if s else h for h, s in zip(job.holes, sites)))
    context, layout = min(SCORE_CONTEXT, model.cfg.regions_context()), model.cfg.edit_canvas
    sides = [_side(tok, old_job, [s and s[0] for s in sites], context, layout),
             _side(tok, job, [s and s[1] for s in sites], context, layout)]
    old, new = side_logprobs(model, sides, tok.mask_id, tok.pad_id)
    sums = [[0.0] * len(job.holes), [0.0] * len(job.holes)]
    for side, values in zip(sides, (old, new)):
        for hole, value in zip(side[2], values):
            sums[side is sides[1]][hole] += value
    return [None if site is None else SiteScore(sums[1][h], sums[0][h]) for h, site in enumerate(sites)]


def judged(job: Job, scores: list[SiteScore | None], margin: float) -> Job:
    """`job` with each hole whose score is below `-margin` drafted as its current text."""
    holes = tuple(current_hole(hole) if score is not None and score.gain < -margin else hole
                  for hole, score in zip(job.holes, scores))
    return dataclasses.replace(job, holes=holes)
