"""The model runner of an autoregressive checkpoint: left to right, one token per pass, cached.

It meets `engine.worker.work.Runner` as `engine.worker.runner.ModelRunner` does, so that the worker, its
scheduler and every client serve a causal checkpoint (the bundled model's autoregressive twin,
`infill serve --model models/infill-py-16m-ar`) as they serve a diffusion one. It serves
fill-in-the-middle jobs from the prefix alone (`infill.causal`: the checkpoint was trained on
next-token prediction only, so the suffix is not shown to it); a job of several holes (a next
edit) and decoder overrides, which only a denoising decoder has, are refused with a clear error.
At the deadline it stops where it is and answers what it has written.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from engine.wire.protocol import ErrorCode, ProtocolError
from engine.worker.runner import limit_context
from infill import causal
from infill.answer import HoleAnswer
from infill.job import Job
from infill.serving import open_model, open_tokenizer


@dataclass(slots=True, eq=False)
class CausalDecoding:
    """One request inside the runner, and where its time went."""

    state: causal.CausalState
    prepare_ms: float
    prefill_ms: float = 0.0
    decode_ms: float = 0.0

    @property
    def done(self) -> bool:
        return self.state.done

    @property
    def step_tokens(self) -> int:
        """Positions its next pass encodes: the prompt first, then one token."""
        return len(self.state.prompt) if self.state.cache is None else 1


def is_causal(model_dir: str | Path) -> bool:
    """Whether the folder holds one of our checkpoints trained causally (`"causal": true`)."""
    path = Path(model_dir) / "config.json"
    try:
        raw = json.loads(path.read_text())
    except (OSError, ValueError):
        return False  # the diffusion loader says what is wrong with the folder
    return isinstance(raw, dict) and raw.get("causal") is True and "model_type" not in raw


class CausalRunner:
    def __init__(self, model_dir: str | Path, device: str = "cpu", weights: str = "fp32", dtype: str = "fp32",
                 max_context: int | None = None):
        self.model_dir = Path(model_dir)
        self.model = open_model(self.model_dir, device, dtype, weights)
        limit_context(self.model, max_context)
        self.tok = open_tokenizer(self.model_dir)
        self.complete(Job.fim("def f(x):\n    return x", "\n", "single_line", 4), None)  # warm-up

    def info(self) -> dict:
        cfg = self.model.cfg
        return {"model": self.model_dir.name, "family": cfg.family, "vocab_size": cfg.vocab_size,
                "max_context": cfg.max_position_embeddings}

    def start(self, job: Job, deadline: float | None) -> CausalDecoding:
        """Lay a FIM job out (no forward pass); a job of several holes, decoder overrides or a
        budget past the context raise ProtocolError (invalid_field)."""
        started = time.perf_counter()
        if not job.one_hole:
            raise ProtocolError(ErrorCode.INVALID_FIELD, f"field 'kind': {self.model_dir.name} is an "
                                "autoregressive model and serves fim jobs only; send edits to a diffusion model")
        if job.decoder:
            raise ProtocolError(ErrorCode.INVALID_FIELD, f"field 'decoder': {self.model_dir.name} is an "
                                "autoregressive model, decoded greedily left to right; send no decoder overrides")
        hole, context = job.holes[0], self.model.cfg.max_position_embeddings
        if hole.max_tokens >= context:
            raise ProtocolError(ErrorCode.INVALID_FIELD, f"field 'max_tokens' asks for {hole.max_tokens} "
                                f"tokens; the model's context is {context}: ask for fewer")
        state = causal.start(self.model, self.tok, job.prefix, hole.mode, hole.max_tokens, deadline, job.suffix)
        return CausalDecoding(state, (time.perf_counter() - started) * 1e3)

    def step(self, decodings: list[CausalDecoding]) -> int:
        """One pass for each unfinished decoding (each its own forward: their lengths differ)."""
        forwards = 0
        for decoding in decodings:
            first = decoding.state.cache is None
            started = time.perf_counter()
            forwards += causal.step(self.model, self.tok, decoding.state)
            elapsed_ms = (time.perf_counter() - started) * 1e3
            if first:
                decoding.prefill_ms += elapsed_ms
            else:
                decoding.decode_ms += elapsed_ms
        return forwards

    def fill_rest(self, decoding: CausalDecoding) -> None:
        causal.fill_rest(decoding.state)

    def answers(self, decoding: CausalDecoding) -> list[HoleAnswer]:
        """The one hole's answer: what it wrote."""
        state = decoding.state
        return [HoleAnswer(causal.answer(self.tok, state), list(state.tokens), causal.confidence(state),
                           state.passes, state.stop_reason)]

    def typed_on(self, decoding: CausalDecoding, typed: str, deadline: float | None) -> None:
        return None  # each keystroke's request starts anew

    def complete(self, job: Job, deadline: float | None) -> list[HoleAnswer]:
        """One job decoded alone, to the end."""
        decoding = self.start(job, deadline)
        with torch.inference_mode():
            while not decoding.done:
                self.step([decoding])
        return self.answers(decoding)
