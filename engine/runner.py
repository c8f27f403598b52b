"""The model runner: loads a model folder and decodes many completion requests in shared steps.

It owns the model and its tokenizer and knows nothing about sockets or scheduling: `start` turns a
request's fields into a `Decoding`, `step` advances a batch of them by one forward pass (the
cached hole windows of all of them together), `finish` gives a late one its anytime answer, and
`completion` reads a finished one back as text. `typed_on` hands a decoding in progress over to
the next keystroke when the user typed what it had already committed. `complete` runs one request
to the end.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import torch

from engine.prefix_cache import PrefixCache
from engine.protocol import ErrorCode, ProtocolError
from infill import decode
from infill.checkpoint import load_model
from infill.decoder_defaults import PER_MODE, decoder_config, model_decoder_defaults
from infill.fim import hole_text, start_request
from infill.modes import resolve_mode
from infill.quantize import for_inference
from infill.tokenizer import CodeTokenizer


@dataclass(slots=True)
class Completion:
    text: str
    confidence: float
    forward_passes: int
    prefill_ms: float
    decode_ms: float
    stop_reason: str  # "done" | "deadline"


@dataclass(slots=True, eq=False)
class Decoding:
    """One request inside the runner: its decode states (one per candidate hole length) and what
    turns the hole back into text."""

    states: list[decode.DecodeState]
    healed: str  # the prefix's re-opened tail, dropped from the front of the answer
    prepare_ms: float  # tokenizing and laying out the canvas
    decode_ms: float = 0.0  # wall time of the steps it took part in

    @property
    def done(self) -> bool:
        return all(state.done for state in self.states)

    @property
    def unfinished(self) -> list[decode.DecodeState]:
        return [state for state in self.states if not state.done]

    @property
    def step_tokens(self) -> int:
        """Positions its next step encodes: the canvas (less what it reuses from an earlier
        request) for a full pass, the first step and each cache refresh; else the hole's window."""
        return sum(state.step_tokens for state in self.unfinished)


class ModelRunner:
    def __init__(self, model_dir: str | Path, device: str = "cpu", weights: str = "fp32"):
        self.model_dir = Path(model_dir)
        self.model = for_inference(load_model(self.model_dir, device=device), weights)
        self.tok = CodeTokenizer(self.model_dir / "tokenizer.json")
        self.decoder_defaults = model_decoder_defaults(self.model_dir)
        self.prefixes = PrefixCache()
        for mode in (None, *self.decoder_defaults.get(PER_MODE, {})):  # a bad decoder.json fails at start, not per request
            decoder_config(self.decoder_defaults, {}, mode)
        self.complete("def f(x):\n    return x", "\n", "single_line", 4, None, {})  # warm-up: kernel JIT, lazy tables

    def info(self) -> dict:
        cfg = self.model.cfg
        return {"model": self.model_dir.name, "family": cfg.family, "vocab_size": cfg.vocab_size,
                "max_context": cfg.max_position_embeddings}

    def start(self, prefix: str, suffix: str, mode: str, max_tokens: int, deadline: float | None,
              overrides: dict) -> Decoding:
        """Lay a request out for decoding (no forward pass). Decoder overrides that are unknown, of
        the wrong type, out of range or refused together raise ProtocolError (invalid_field), before
        any tokenizing."""
        started = time.perf_counter()
        mode = resolve_mode(mode, prefix)
        try:
            cfg = decoder_config(self.decoder_defaults, overrides, mode)
        except ValueError as exc:  # the model's own defaults were checked at start: the overrides are at fault
            raise ProtocolError(ErrorCode.INVALID_FIELD, f"field 'decoder': {exc}") from None
        states, healed = start_request(self.model, self.tok, prefix, suffix, mode, max_tokens, cfg, deadline)
        if cfg.reuse_prefix:
            for state in states:
                self._reuse(state)
        return Decoding(states, healed, (time.perf_counter() - started) * 1e3)

    def typed_on(self, decoding: Decoding, typed: str, deadline: float | None) -> Decoding | None:
        """`decoding` continued for the next keystroke, whose prefix is its own plus `typed`: if
        what it has committed from the left already starts with `typed`, a decoding of the same
        state whose answer drops `typed` (and that stops at `deadline`); else None. A single hole
        length only (a single-line request)."""
        if len(decoding.states) != 1 or decoding.done:
            return None
        state = decoding.states[0]
        hole, masked = state.ids[0, state.span], state.masked
        run = int(torch.nonzero(masked)[0]) if masked.any() else len(masked)
        if not self.tok.decode(hole[:run].tolist()).startswith(decoding.healed + typed):
            return None
        state.deadline = deadline
        return Decoding(decoding.states, decoding.healed + typed, prepare_ms=0.0)

    def _reuse(self, state: decode.DecodeState) -> None:
        """Give `state` the keys/values of a kept canvas it types on from, outside its window
        (the positions a step runs are never reused)."""
        found = self.prefixes.lookup(state.ids[0], int(state.positions[0]), int(state.positions[-1]) + 1)
        if found is None:
            return
        state.prefix, end = found
        if end is not None:
            first, kv, moved = end
            state.suffix = (first, self.model.moved(kv, moved))

    def step(self, decodings: list[Decoding]) -> int:
        """Advance each unfinished decoding by one pass, sharing the forward; returns forward passes run."""
        started = time.perf_counter()
        states = [state for d in decodings for state in d.unfinished]
        forwards = decode.step(self.model, states)
        for state in states:
            if state.encoded is not None:  # its first full pass: keep it for the next keystrokes
                self.prefixes.store(*state.encoded, int(state.positions[0]), int(state.positions[-1]) + 1)
                state.encoded = None
        elapsed_ms = (time.perf_counter() - started) * 1e3
        for d in decodings:
            d.decode_ms += elapsed_ms
        return forwards

    def finish(self, decoding: Decoding) -> None:
        """Past its deadline: fill what is left from its last pass (it must have had one)."""
        for state in decoding.unfinished:
            decode.finish(state)

    def completion(self, decoding: Decoding) -> Completion:
        chosen = decode.best(decoding.states)
        decoded = decode.results(chosen)[0]
        text = hole_text(self.tok, decoded.tokens, decoding.healed, chosen.rules.single_line, chosen.cfg.cut_loops)
        return Completion(text=text, confidence=decoded.confidence, forward_passes=decoded.forward_passes,
                          prefill_ms=decoding.prepare_ms, decode_ms=decoding.decode_ms,
                          stop_reason=decoded.stop_reason)

    def complete(self, prefix: str, suffix: str, mode: str, max_tokens: int, deadline: float | None,
                 overrides: dict) -> Completion:
        """One request decoded alone, to the end."""
        decoding = self.start(prefix, suffix, mode, max_tokens, deadline, overrides)
        while not decoding.done:
            self.step([decoding])
        return self.completion(decoding)
