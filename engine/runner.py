"""The model runner: loads a model folder and turns one completion request into text.

It owns the model and its tokenizer and knows nothing about sockets: the worker hands it the
request's fields and gets a `Completion` back.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from infill.checkpoint import load_model
from infill.commit import DecoderConfig
from infill.fim import fill
from infill.tokenizer import CodeTokenizer


@dataclass(slots=True)
class Completion:
    text: str
    confidence: float
    forward_passes: int
    prefill_ms: float
    decode_ms: float
    stop_reason: str  # "done" | "deadline"


def decoder_config(defaults: dict, overrides: dict) -> DecoderConfig:
    """The request's decoder overrides on top of the model's defaults; unknown keys or bad values raise ValueError."""
    settings = {**defaults, **overrides}
    unknown = set(settings) - set(DecoderConfig.__dataclass_fields__)
    if unknown:
        raise ValueError(f"unknown decoder settings {sorted(unknown)}; known: {sorted(DecoderConfig.__dataclass_fields__)}")
    return DecoderConfig(**settings)


def model_decoder_defaults(model_dir: Path) -> dict:
    """The decoder settings measured best for this model (`decoder.json` beside its weights), if any."""
    path = model_dir / "decoder.json"
    return json.loads(path.read_text()) if path.exists() else {}


class ModelRunner:
    def __init__(self, model_dir: str | Path, device: str = "cpu"):
        self.model_dir = Path(model_dir)
        self.model = load_model(self.model_dir, device=device)
        self.tok = CodeTokenizer(self.model_dir / "tokenizer.json")
        self.decoder_defaults = model_decoder_defaults(self.model_dir)
        decoder_config(self.decoder_defaults, {})  # a bad decoder.json fails at start, not per request
        self.complete("def f(x):\n    return x", "\n", "single_line", 4, None, {})  # warm-up: kernel JIT, lazy tables

    def info(self) -> dict:
        cfg = self.model.cfg
        return {"model": self.model_dir.name, "family": cfg.family, "vocab_size": cfg.vocab_size,
                "max_context": cfg.max_position_embeddings}

    def complete(self, prefix: str, suffix: str, mode: str, max_tokens: int, deadline: float | None,
                 overrides: dict) -> Completion:
        cfg = decoder_config(self.decoder_defaults, overrides)
        out = fill(self.model, self.tok, prefix, suffix, mode, max_tokens, cfg, deadline)
        return Completion(text=out.text, confidence=out.decoded.confidence,
                          forward_passes=out.decoded.forward_passes, prefill_ms=out.prepare_ms,
                          decode_ms=out.decode_ms, stop_reason=out.decoded.stop_reason)
