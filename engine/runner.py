"""The model runner: loads a model folder and turns one completion request into text.

It owns the model and its tokenizer and knows nothing about sockets: the worker hands it the
request's fields and gets a `Completion` back.
"""
from __future__ import annotations

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


def decoder_config(overrides: dict) -> DecoderConfig:
    """The request's decoder overrides on top of the defaults; unknown keys or bad values raise ValueError."""
    unknown = set(overrides) - set(DecoderConfig.__dataclass_fields__)
    if unknown:
        raise ValueError(f"unknown decoder settings {sorted(unknown)}; known: {sorted(DecoderConfig.__dataclass_fields__)}")
    return DecoderConfig(**overrides)


class ModelRunner:
    def __init__(self, model_dir: str | Path, device: str = "cpu"):
        self.model_dir = Path(model_dir)
        self.model = load_model(self.model_dir, device=device)
        self.tok = CodeTokenizer(self.model_dir / "tokenizer.json")
        self.complete("def f(x):\n    return x", "\n", "single_line", 4, None, {})  # warm-up: kernel JIT, lazy tables

    def info(self) -> dict:
        cfg = self.model.cfg
        return {"model": self.model_dir.name, "family": cfg.family, "vocab_size": cfg.vocab_size,
                "max_context": cfg.max_position_embeddings}

    def complete(self, prefix: str, suffix: str, mode: str, max_tokens: int, deadline: float | None,
                 overrides: dict) -> Completion:
        out = fill(self.model, self.tok, prefix, suffix, mode, max_tokens, decoder_config(overrides), deadline)
        return Completion(text=out.text, confidence=out.decoded.confidence,
                          forward_passes=out.decoded.forward_passes, prefill_ms=out.prepare_ms,
                          decode_ms=out.decode_ms, stop_reason=out.decoded.stop_reason)
