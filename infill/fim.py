"""Jobs on one model: from text pieces around holes (`infill.job`) to each hole's text.

Shared by the worker's model runner, the training script's quick FIM check and benchmarks, so
that every caller decodes with the same rules. Step-wise, so that many jobs share each forward
pass: `start_job` lays a job out as a `JobDecoding` (the one record of a job being decoded, with
where its time went), `infill.decode.step` advances the states of any number of them by one pass,
`job_answers` reads one back, one `infill.answer.HoleAnswer` per hole. `run_job`, `fill` (one hole)
and `fill_regions` (several, decoded jointly) are the one-job loop over the same steps.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import torch

from infill.canvas import Canvas, RegionsCanvas, edit_canvas, fim_canvas, regions_canvas
from infill.commit import DecoderConfig
from infill import decode
from infill.answer import HoleAnswer
from infill.decode import DecodeState, HoleRules, Reuse, step_tokens
from infill.job import Hole, Job
from infill.model import Transformer
from infill.repetition import cut_loop
from infill.tokenizer import ModelTokenizer

HOLE_TOKENS = {"single_line": 32, "multi_line": 96}  # hole length L per mode, before the max_tokens cap


def hole_text(tok: ModelTokenizer, tokens: list[int], healed: str, single_line: bool, cut_loops: bool = True) -> str:
    """The middle's text: up to the first end (pad, eos, end-of-turn), a loop cut to its first
    copy, healed prefix removed, cut after a newline in single-line mode."""
    ends = set(tok.end_ids)
    tokens = next((tokens[:i] for i, t in enumerate(tokens) if t in ends), tokens)
    if cut_loops:
        tokens = cut_loop(tokens)
    text = tok.decode(tokens)[len(healed):]
    if single_line and "\n" in text:
        text = text[:text.index("\n") + 1]
    return text


def first_banned(tok: ModelTokenizer, prefix: str, single_line: bool) -> list[int]:
    """Tokens that would make the answer empty: the ends; in single-line mode a line's end that
    leaves the line blank, and blanks mid-line."""
    if not single_line:
        return list(tok.end_ids)
    if prefix.rsplit("\n", 1)[-1].strip():
        return list(tok.end_ids) + tok.blank_ids
    return list(tok.end_ids) + [i for i in tok.line_end_ids if not tok.token_texts[i].split("\n", 1)[0].strip()]


def hole_rules(tok: ModelTokenizer, healed: str, prefix: str, mode: str) -> HoleRules:
    """What the hole may hold: no specials, a first token starting with `healed`, no empty start,
    one line if asked."""
    return HoleRules(
        pad_id=tok.pad_id, newline_id=tok.newline_id, banned_ids=list(tok.banned_ids),
        first_allowed=tok.tokens_starting_with(healed) if healed else None,
        first_banned=first_banned(tok, prefix, mode == "single_line"), single_line=mode == "single_line",
        stop_ids=tuple(i for i in tok.end_ids if i != tok.pad_id), line_ids=tuple(tok.line_end_ids),
    )


def hole_length(hole: Hole) -> int:
    """Positions a hole starts with: its mode's length, capped by its budget."""
    return max(1, min(hole.max_tokens, HOLE_TOKENS[hole.mode]))


def prepare(model: Transformer, tok: ModelTokenizer, prefix: str, suffix: str, mode: str,
            max_tokens: int, hole_len: int | None = None, snippets: tuple[str, ...] = (), context: int = 0,
            ) -> tuple[Canvas, HoleRules]:
    """The canvas and hole rules of one hole: everything decoding needs besides the model. The
    hole takes the mode's length (capped by `max_tokens`) unless `hole_len` is given; the canvas
    is at most `context` tokens long (0: the model's context)."""
    hole_len = hole_len or hole_length(Hole(mode, max_tokens))
    trained = model.cfg.max_position_embeddings
    canvas = fim_canvas(tok, prefix, suffix, hole_len, min(trained, context or trained), snippets)
    return canvas, hole_rules(tok, canvas.healed, prefix, mode)


def draft_ids(tok: ModelTokenizer, healed: str, hole: Hole) -> list[int] | None:
    """A drafted hole's positions: its draft's tokens (the healed text first, as the hole's first
    token carries it) with `slots` masks between the pieces; None when the hole has no draft, or
    one whose tokens do not decode back to it (that hole is masked whole instead)."""
    if not hole.drafted:
        return None
    texts = (healed + hole.draft[0], *hole.draft[1:])
    parts = [tok.encode(text) for text in texts]
    if any(tok.decode(ids) != text for ids, text in zip(parts, texts)):
        return None
    ids = parts[0]
    for slot, part in zip(hole.slots, parts[1:]):
        ids = ids + [tok.mask_id] * slot + part
    return ids or None


def job_canvas(tok: ModelTokenizer, job: Job, max_context: int, edit_layout: str = "",
               ) -> tuple[RegionsCanvas, list[HoleRules]]:
    """The canvas and per-hole rules of a job's holes: an edit canvas in `edit_layout` (the one its
    model was trained on, `infill.canvas.EDIT_LAYOUTS`), else the plain regions canvas. A drafted
    hole holds its draft (`draft_ids`) instead of masks. Pure: the training data of edits is laid
    out here too."""
    healed = [tok.heal(piece).text for piece in job.pieces[:-1]] if job.drafted else [""] * len(job.holes)
    drafts = [draft_ids(tok, text, hole) for text, hole in zip(healed, job.holes)]
    lengths = [len(d) if d else hole_length(h) for d, h in zip(drafts, job.holes)]
    if edit_layout and tok.edit_ids is not None:
        canvas = edit_canvas(tok, list(job.pieces), lengths, max_context, list(job.events),
                             [hole.replaces for hole in job.holes], edit_layout)
    else:
        canvas = regions_canvas(tok, list(job.pieces), lengths, max_context)
    for span, ids in zip(canvas.spans, drafts):
        if ids:
            canvas.ids[span] = ids
    return canvas, [drafted_rules(tok) if ids else hole_rules(tok, text, piece, hole.mode)
                    for ids, text, piece, hole in zip(drafts, canvas.healed, job.pieces, job.holes)]


def drafted_rules(tok: ModelTokenizer) -> HoleRules:
    """A drafted hole's rules: no specials; its first token is drafted (healing is in the draft),
    and an end token in a slot is an empty position, not the hole's end."""
    return HoleRules(pad_id=tok.pad_id, newline_id=tok.newline_id, banned_ids=list(tok.banned_ids),
                     first_allowed=None, first_banned=[], single_line=False,
                     stop_ids=tuple(i for i in tok.end_ids if i != tok.pad_id),
                     line_ids=tuple(tok.line_end_ids), drafted=True)


def hole_lengths(first: int, count: int) -> list[int]:
    """`count` candidate hole lengths: `first`, then halves of it (duplicates dropped)."""
    return sorted({max(1, first >> i) for i in range(count)}, reverse=True)


def start_request(model: Transformer, tok: ModelTokenizer, prefix: str, suffix: str, mode: str, max_tokens: int,
                  cfg: DecoderConfig, deadline: float | None = None, snippets: tuple[str, ...] = (),
                  ) -> tuple[list[DecodeState], str]:
    """One hole's decode states (one per candidate hole length; several only for multi-line
    holes with `cfg.lengths` > 1) and the healed text its answer drops."""
    canvas, rules = prepare(model, tok, prefix, suffix, mode, max_tokens, snippets=snippets, context=cfg.context)
    lengths = hole_lengths(canvas.hole_len, 1 if rules.single_line else cfg.lengths)
    layouts = [(canvas, rules)] + [prepare(model, tok, prefix, suffix, mode, max_tokens, n, snippets, cfg.context)
                                   for n in lengths[1:]]
    states = [decode.start(model, c, r, cfg, deadline, grow_to=max_tokens) for c, r in layouts]
    return states, canvas.healed


@dataclass(slots=True, eq=False)
class JobDecoding:
    """A job being decoded: its decode states, what turns each hole back into text, and where its
    time went. A one-hole job has one state per candidate hole length (and may grow, slide a
    window, verify guesses, reuse an earlier keystroke's keys/values); a job of several holes has
    one joint state."""

    job: Job
    states: list[DecodeState]
    healed: list[str]  # per hole: the piece's re-opened tail, dropped from the front of its answer
    reuse: dict[DecodeState, Reuse] = field(default_factory=dict)  # a state's first full pass attends to
    #   these keys/values of an earlier canvas instead of encoding them (the worker's prefix cache)
    prepare_ms: float = 0.0  # tokenizing and laying out the canvas
    prefill_ms: float = 0.0  # the step of its first pass over the canvas
    decode_ms: float = 0.0  # the steps after it

    @property
    def done(self) -> bool:
        return all(state.done for state in self.states)

    @property
    def unfinished(self) -> list[DecodeState]:
        return [state for state in self.states if not state.done]

    @property
    def step_tokens(self) -> int:
        """Positions its next step encodes: the canvas (less what it reuses from an earlier
        request) for a full pass, the first step and each cache refresh; else the hole's window
        (`infill.decode.step_tokens`)."""
        return sum(step_tokens(state, self.reuse.get(state)) for state in self.unfinished)


def start_job(model: Transformer, tok: ModelTokenizer, job: Job, cfg: DecoderConfig,
              deadline: float | None = None, with_snippets: bool = False) -> JobDecoding:
    """Lay a job out for decoding (no forward pass); `with_snippets` lays its snippets into the
    canvas (for models trained with them)."""
    snippets = job.snippets if with_snippets else ()
    if job.one_hole and job.drafted:
        return start_drafted(model, tok, job, cfg, deadline, snippets)
    if job.one_hole:  # (an edit's drafted hole decodes as a canvas of regions)
        hole = job.holes[0]
        states, healed = start_request(model, tok, job.prefix, job.suffix, hole.mode, hole.max_tokens,
                                       cfg, deadline, snippets)
        return JobDecoding(job, states, [healed])
    canvas, rules = job_canvas(tok, job, model.cfg.regions_context(), model.cfg.edit_canvas)
    return JobDecoding(job, [decode.start_regions(model, canvas, rules, cfg, deadline)], canvas.healed)


def drafted_fim_ids(tok: ModelTokenizer, healed: str, hole: Hole) -> list[int]:
    """A completion's drafted hole: its draft's tokens (`draft_ids`) cut to the hole's budget,
    and no masks after them: a draft runs to its mode's end (the line's, the block's), and on the
    tuning set the bundled model never ended a multi-line hole right after its draft (0 of 26
    drafted blocks of cattrs; it went on with another line). [] when the draft has no tokens that
    decode back to it (the hole is then decoded as if it had none)."""
    return (draft_ids(tok, healed, hole) or [])[:hole_length(hole)]


def start_drafted(model: Transformer, tok: ModelTokenizer, job: Job, cfg: DecoderConfig,
                  deadline: float | None, snippets: tuple[str, ...]) -> JobDecoding:
    """A completion's hole that starts from its draft: the plain FIM canvas and rules of its mode,
    the draft's tokens committed (unchecked) in the hole; what a veto masks is decoded as today."""
    hole = job.holes[0]
    ids = drafted_fim_ids(tok, tok.heal(job.prefix).text, hole)
    if not ids:
        states, healed = start_request(model, tok, job.prefix, job.suffix, hole.mode, hole.max_tokens,
                                       cfg, deadline, snippets)
        return JobDecoding(job, states, [healed])
    canvas, rules = prepare(model, tok, job.prefix, job.suffix, hole.mode, hole.max_tokens, len(ids), snippets,
                            cfg.context)
    canvas.ids[canvas.hole_start:canvas.hole_start + canvas.hole_len] = ids
    return JobDecoding(job, [decode.start(model, canvas, rules, cfg, deadline, grow_to=hole.max_tokens)],
                       [canvas.healed])


def job_answers(tok: ModelTokenizer, decoding: JobDecoding) -> list[HoleAnswer]:
    """Each hole's answer, left to right (of a one-hole job's candidate lengths, the likeliest)."""
    chosen = decode.best(decoding.states)
    holes = zip(decode.hole_tokens(chosen), decoding.healed, chosen.holes)
    texts = [drafted_text(tok, tokens, healed) if hole.rules.drafted else
             hole_text(tok, tokens, healed, hole.rules.single_line, chosen.cfg.cut_loops)
             for tokens, healed, hole in holes]
    return decode.results(chosen, texts)


def drafted_text(tok: ModelTokenizer, tokens: list[int], healed: str) -> str:
    """A drafted hole's text: its tokens less the end tokens (slot positions left empty), healed
    text removed."""
    ends = set(tok.end_ids)
    return tok.decode([t for t in tokens if t not in ends])[len(healed):]


def run_job(model: Transformer, tok: ModelTokenizer, job: Job, cfg: DecoderConfig = DecoderConfig(),
            deadline: float | None = None) -> tuple[list[HoleAnswer], float, float]:
    """One job decoded alone to the end: its answers, and the ms spent laying it out and decoding."""
    started = time.perf_counter()
    decoding = start_job(model, tok, job, cfg, deadline)
    prepared = time.perf_counter()
    with torch.inference_mode():
        while unfinished := decoding.unfinished:
            decode.step(model, unfinished)
    answers = job_answers(tok, decoding)
    return answers, (prepared - started) * 1e3, (time.perf_counter() - prepared) * 1e3


def fill(model: Transformer, tok: ModelTokenizer, prefix: str, suffix: str, mode: str, max_tokens: int,
         cfg: DecoderConfig = DecoderConfig(), deadline: float | None = None) -> HoleAnswer:
    """Fill-in-the-middle of one hole, decoded alone."""
    [answer], _, _ = run_job(model, tok, Job.fim(prefix, suffix, mode, max_tokens), cfg, deadline)
    return answer


def fill_regions(model: Transformer, tok: ModelTokenizer, pieces: list[str], modes: list[str], max_tokens: int,
                 cfg: DecoderConfig = DecoderConfig(), deadline: float | None = None) -> list[str]:
    """Each hole's text, for the holes between text `pieces` (one fewer hole than pieces, each
    with its mode), all decoded jointly in one canvas."""
    job = Job(tuple(pieces), tuple(Hole(mode, max_tokens) for mode in modes))
    answers, _, _ = run_job(model, tok, job, cfg, deadline)
    return [answer.text for answer in answers]
