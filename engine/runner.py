"""The model runner: loads a model folder and turns one completion request into text.

It owns the model and its tokenizer and knows nothing about sockets: the worker hands it the
request's fields and gets a `Completion` back.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import torch

from infill.canvas import fim_canvas
from infill.checkpoint import load_model
from infill.decode import HoleRules, denoise
from infill.tokenizer import SPECIAL_TOKENS, CodeTokenizer

HOLE_TOKENS = {"single_line": 32, "multi_line": 96}  # hole length L per mode, before the max_tokens cap
DECODER_OPTIONS = {"threshold": float}  # per-request decoder overrides this runner understands


@dataclass(slots=True)
class Completion:
    text: str
    confidence: float
    forward_passes: int
    prefill_ms: float
    decode_ms: float
    stop_reason: str  # "done" | "deadline"


def resolve_mode(mode: str, prefix: str) -> str:
    """`auto`: single line when the cursor's line already has text, else multi-line."""
    if mode != "auto":
        return mode
    current_line = prefix.rsplit("\n", 1)[-1]
    return "single_line" if current_line.strip() else "multi_line"


def hole_text(tok: CodeTokenizer, tokens: list[int], healed: str, single_line: bool) -> str:
    """The middle's text: up to the first pad, healed prefix removed, cut after a newline in single-line mode."""
    if tok.pad_id in tokens:
        tokens = tokens[:tokens.index(tok.pad_id)]
    text = tok.decode(tokens)[len(healed):]
    if single_line and "\n" in text:
        text = text[:text.index("\n") + 1]
    return text


class ModelRunner:
    def __init__(self, model_dir: str | Path, device: str = "cpu"):
        self.model_dir = Path(model_dir)
        self.model = load_model(self.model_dir, device=device)
        self.tok = CodeTokenizer(self.model_dir / "tokenizer.json")
        self.max_context = self.model.cfg.max_position_embeddings
        specials = [self.tok.tok.token_to_id(t) for t in SPECIAL_TOKENS]
        self.banned = [i for i in specials if i != self.tok.pad_id]

    def info(self) -> dict:
        return {"model": self.model_dir.name, "family": self.model.cfg.family,
                "vocab_size": self.model.cfg.vocab_size, "max_context": self.max_context}

    def complete(self, prefix: str, suffix: str, mode: str, max_tokens: int, deadline: float | None,
                 overrides: dict) -> Completion:
        started = time.perf_counter()
        mode = resolve_mode(mode, prefix)
        hole_len = max(1, min(max_tokens, HOLE_TOKENS[mode]))
        canvas = fim_canvas(self.tok, prefix, suffix, hole_len, self.max_context)
        rules = HoleRules(
            pad_id=self.tok.pad_id, newline_id=self.tok.newline_id, banned_ids=self.banned,
            first_allowed=self.tok.tokens_starting_with(canvas.healed) if canvas.healed else None,
            single_line=mode == "single_line",
        )
        threshold = float(overrides.get("threshold", 0.9))
        prepared = time.perf_counter()
        with torch.inference_mode():
            decoded = denoise(self.model, canvas, rules, threshold=threshold, deadline=deadline)
        text = hole_text(self.tok, decoded.tokens, canvas.healed, rules.single_line)
        done = time.perf_counter()
        return Completion(text=text, confidence=decoded.confidence, forward_passes=decoded.forward_passes,
                          prefill_ms=(prepared - started) * 1e3, decode_ms=(done - prepared) * 1e3,
                          stop_reason=decoded.stop_reason)
