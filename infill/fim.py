"""Fill-in-the-middle on one model: from prefix and suffix text to the middle's text.

Shared by the worker's model runner, the training script's quick FIM check and benchmarks, so
that every caller decodes with the same rules.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from infill.canvas import fim_canvas
from infill.commit import DecoderConfig
from infill.decode import Decoded, HoleRules, denoise
from infill.model import Transformer
from infill.modes import resolve_mode
from infill.tokenizer import SPECIAL_TOKENS, CodeTokenizer

HOLE_TOKENS = {"single_line": 32, "multi_line": 96}  # hole length L per mode, before the max_tokens cap


@dataclass(slots=True)
class Filled:
    text: str
    decoded: Decoded
    prepare_ms: float  # tokenizing and laying out the canvas
    decode_ms: float


def hole_text(tok: CodeTokenizer, tokens: list[int], healed: str, single_line: bool) -> str:
    """The middle's text: up to the first pad, healed prefix removed, cut after a newline in single-line mode."""
    if tok.pad_id in tokens:
        tokens = tokens[:tokens.index(tok.pad_id)]
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


def fill(model: Transformer, tok: CodeTokenizer, prefix: str, suffix: str, mode: str, max_tokens: int,
         cfg: DecoderConfig = DecoderConfig(), deadline: float | None = None) -> Filled:
    started = time.perf_counter()
    mode = resolve_mode(mode, prefix)
    hole_len = max(1, min(max_tokens, HOLE_TOKENS[mode]))
    canvas = fim_canvas(tok, prefix, suffix, hole_len, model.cfg.max_position_embeddings)
    specials = [tok.tok.token_to_id(t) for t in SPECIAL_TOKENS]
    rules = HoleRules(
        pad_id=tok.pad_id, newline_id=tok.newline_id, banned_ids=[i for i in specials if i != tok.pad_id],
        first_allowed=tok.tokens_starting_with(canvas.healed) if canvas.healed else None,
        first_banned=first_banned(tok, prefix, mode == "single_line"), single_line=mode == "single_line",
    )
    prepared = time.perf_counter()
    with torch.inference_mode():
        decoded = denoise(model, canvas, rules, cfg, deadline)
    text = hole_text(tok, decoded.tokens, canvas.healed, rules.single_line)
    return Filled(text, decoded, (prepared - started) * 1e3, (time.perf_counter() - prepared) * 1e3)
