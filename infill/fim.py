"""Fill-in-the-middle on one model: from prefix and suffix text to the middle's text.

Shared by the worker's model runner, the training script's quick FIM check and benchmarks, so
that every caller decodes with the same rules. `fill_regions` fills several holes of one canvas,
decoded jointly.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from infill.canvas import Canvas, RegionsCanvas, fim_canvas, regions_canvas
from infill.commit import DecoderConfig
from infill import decode
from infill.decode import Decoded, DecodeState, HoleRules
from infill.model import Transformer
from infill.modes import resolve_mode
from infill.repetition import cut_loop
from infill.tokenizer import SPECIAL_TOKENS, CodeTokenizer

HOLE_TOKENS = {"single_line": 32, "multi_line": 96}  # hole length L per mode, before the max_tokens cap


@dataclass(slots=True)
class Filled:
    text: str
    decoded: Decoded
    prepare_ms: float  # tokenizing and laying out the canvas
    decode_ms: float


def hole_text(tok: CodeTokenizer, tokens: list[int], healed: str, single_line: bool, cut_loops: bool = True) -> str:
    """The middle's text: up to the first pad, a loop cut to its first copy, healed prefix removed,
    cut after a newline in single-line mode."""
    if tok.pad_id in tokens:
        tokens = tokens[:tokens.index(tok.pad_id)]
    if cut_loops:
        tokens = cut_loop(tokens)
    text = tok.decode(tokens)[len(healed):]
    if single_line and "\n" in text:
        text = text[:text.index("\n") + 1]
    return text


def first_banned(tok: CodeTokenizer, prefix: str, single_line: bool) -> list[int]:
    """Tokens that would make the answer empty: pad; in single-line mode a newline, and blanks mid-line."""
    if not single_line:
        return [tok.pad_id]
    if prefix.rsplit("\n", 1)[-1].strip():
        return [tok.pad_id] + tok.blank_ids
    return [tok.pad_id, tok.newline_id]


def hole_rules(tok: CodeTokenizer, healed: str, prefix: str, mode: str) -> HoleRules:
    """What the hole may hold: no specials, a first token starting with `healed`, no empty start,
    one line if asked."""
    specials = [tok.tok.token_to_id(t) for t in SPECIAL_TOKENS]
    return HoleRules(
        pad_id=tok.pad_id, newline_id=tok.newline_id, banned_ids=[i for i in specials if i != tok.pad_id],
        first_allowed=tok.tokens_starting_with(healed) if healed else None,
        first_banned=first_banned(tok, prefix, mode == "single_line"), single_line=mode == "single_line",
    )


def prepare(model: Transformer, tok: CodeTokenizer, prefix: str, suffix: str, mode: str,
            max_tokens: int, hole_len: int | None = None) -> tuple[Canvas, HoleRules]:
    """The canvas and hole rules of one request: everything decoding needs besides the model.
    The hole takes the mode's length (capped by `max_tokens`) unless `hole_len` is given."""
    mode = resolve_mode(mode, prefix)
    hole_len = hole_len or max(1, min(max_tokens, HOLE_TOKENS[mode]))
    canvas = fim_canvas(tok, prefix, suffix, hole_len, model.cfg.max_position_embeddings)
    return canvas, hole_rules(tok, canvas.healed, prefix, mode)


def prepare_regions(model: Transformer, tok: CodeTokenizer, pieces: list[str], mode: str,
                    max_tokens: int) -> tuple[RegionsCanvas, list[HoleRules]]:
    """The canvas and per-hole rules of holes between text `pieces`; each hole's mode resolves from
    the piece before it and takes that mode's length (capped by `max_tokens`)."""
    modes = [resolve_mode(mode, piece) for piece in pieces[:-1]]
    lengths = [max(1, min(max_tokens, HOLE_TOKENS[m])) for m in modes]
    canvas = regions_canvas(tok, pieces, lengths, model.cfg.max_position_embeddings)
    return canvas, [hole_rules(tok, h, piece, m) for h, piece, m in zip(canvas.healed, pieces, modes)]


def hole_lengths(first: int, count: int) -> list[int]:
    """`count` candidate hole lengths: `first`, then halves of it (duplicates dropped)."""
    return sorted({max(1, first >> i) for i in range(count)}, reverse=True)


def start_request(model: Transformer, tok: CodeTokenizer, prefix: str, suffix: str, mode: str, max_tokens: int,
                  cfg: DecoderConfig, deadline: float | None = None) -> tuple[list[DecodeState], str]:
    """One request's decode states (one per candidate hole length; several only for multi-line
    holes with `cfg.lengths` > 1) and the healed text its answer drops."""
    canvas, rules = prepare(model, tok, prefix, suffix, mode, max_tokens)
    lengths = hole_lengths(canvas.hole_len, 1 if rules.single_line else cfg.lengths)
    layouts = [(canvas, rules)] + [prepare(model, tok, prefix, suffix, mode, max_tokens, n) for n in lengths[1:]]
    states = [decode.start(model, c, r, cfg, deadline, grow_to=max_tokens) for c, r in layouts]
    return states, canvas.healed


def fill(model: Transformer, tok: CodeTokenizer, prefix: str, suffix: str, mode: str, max_tokens: int,
         cfg: DecoderConfig = DecoderConfig(), deadline: float | None = None) -> Filled:
    started = time.perf_counter()
    states, healed = start_request(model, tok, prefix, suffix, mode, max_tokens, cfg, deadline)
    prepared = time.perf_counter()
    with torch.inference_mode():
        while unfinished := [state for state in states if not state.done]:
            decode.step(model, unfinished)
    chosen = decode.best(states)
    decoded = decode.result(chosen)
    text = hole_text(tok, decoded.tokens, healed, chosen.rules.single_line, cfg.cut_loops)
    return Filled(text, decoded, (prepared - started) * 1e3, (time.perf_counter() - prepared) * 1e3)


def fill_regions(model: Transformer, tok: CodeTokenizer, pieces: list[str], mode: str, max_tokens: int,
                 cfg: DecoderConfig = DecoderConfig(), deadline: float | None = None) -> list[str]:
    """Each hole's text, for the holes between text `pieces` (one fewer hole than pieces), all
    decoded jointly in one canvas; each text postprocessed as `hole_text` does."""
    canvas, rules = prepare_regions(model, tok, pieces, mode, max_tokens)
    state = decode.start_regions(model, canvas, rules, cfg, deadline)
    with torch.inference_mode():
        while not state.done:
            decode.step(model, [state])
    holes = zip(decode.hole_tokens(state), canvas.healed, rules)
    return [hole_text(tok, tokens, healed, r.single_line, cfg.cut_loops) for tokens, healed, r in holes]
