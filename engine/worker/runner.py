"""The model runner: loads a model folder and decodes many jobs in shared steps.

It owns the model, its tokenizer and the cross-keystroke cache of canvases, and knows nothing
about sockets or scheduling: `start` lays a job (`infill.job`) out as an `infill.fim.JobDecoding`,
`step` advances a batch of them by one forward pass (the cached hole windows of all of them
together), `fill_rest` gives a late one its anytime answer, and `answers` reads a finished one
back, one `infill.answer.HoleAnswer` per hole; `partial` reads the text a one-hole decoding in
progress has settled. `typed_on` hands a one-hole decoding in progress over to the next keystroke
when the user typed what it had already committed. `complete` runs one job to the end. It meets
`engine.worker.work.Runner`.

The prefix cache is the runner's: `start` looks up, for each decode state, the keys/values of an
earlier canvas it may reuse (`infill.decode.Reuse`, kept in the decoding), `step` passes them to
the decoder's step and stores what each first full pass encoded.
"""
from __future__ import annotations

import time
from pathlib import Path

import torch

from engine.wire.protocol import ErrorCode, ProtocolError
from engine.worker.prefix_cache import DEFAULT_MAX_BYTES, PrefixCache
from infill import decode
from infill.commit import DecoderConfig
from infill.answer import HoleAnswer
from infill.decode import DecodeState, Reuse
from infill.decoder_defaults import PER_MODE, decoder_config, model_decoder_defaults
from infill.fim import JobDecoding, hole_length, hole_text, job_answers, start_job
from infill.job import Job
from infill.repetition import settled_length
from infill.serving import open_model, open_tokenizer


def shared_mode(job: Job) -> str | None:
    """The mode every hole of `job` has (whose decoder defaults apply), or None when they differ."""
    modes = {hole.mode for hole in job.holes}
    return modes.pop() if len(modes) == 1 else None


def limit_context(model: torch.nn.Module, max_context: int | None) -> None:
    """Lower the context the model is run with (canvases, grown holes, the Welcome's figure) to
    `max_context`; None keeps the trained context. Above the trained context is refused."""
    trained = model.cfg.max_position_embeddings
    if max_context is None:
        return
    if not 1 <= max_context <= trained:
        raise ValueError(f"--max-context {max_context} must be between 1 and the model's trained "
                         f"context, {trained} tokens")
    model.cfg.max_position_embeddings = max_context


class ModelRunner:
    def __init__(self, model_dir: str | Path, device: str = "cpu", weights: str = "fp32", dtype: str = "fp32",
                 max_context: int | None = None, prefix_cache_bytes: int = DEFAULT_MAX_BYTES):
        self.model_dir = Path(model_dir)
        self.model = open_model(self.model_dir, device, dtype, weights)
        limit_context(self.model, max_context)
        self.tok = open_tokenizer(self.model_dir)
        self.decoder_defaults = model_decoder_defaults(self.model_dir, self.model.cfg.family)
        self.prefixes = PrefixCache(max_bytes=prefix_cache_bytes)
        for mode in (None, *self.decoder_defaults.get(PER_MODE, {})):  # a bad decoder.json fails at start
            for fim_drafted in (False, True):
                decoder_config(self.decoder_defaults, {}, mode, fim_drafted)
        self.complete(Job.fim("def f(x):\n    return x", "\n", "single_line", 4), None)  # warm-up: JIT, lazy tables

    def info(self) -> dict:
        cfg = self.model.cfg
        return {"model": self.model_dir.name, "family": cfg.family, "vocab_size": cfg.vocab_size,
                "max_context": cfg.max_position_embeddings}

    @property
    def device(self) -> torch.device:
        """Where the model's weights, and so every decoder tensor, live."""
        return self.model.model.embed_tokens.weight.device

    def start(self, job: Job, deadline: float | None) -> JobDecoding:
        """Lay a job out for decoding (no forward pass). Decoder overrides that are unknown, of the
        wrong type, out of range or refused together, and holes that ask for more tokens than the
        model's context, raise ProtocolError (invalid_field) before any tokenizing."""
        started = time.perf_counter()
        cfg = self._config(job)
        decoding = start_job(self.model, self.tok, job, cfg, deadline, self.model.cfg.snippet_context)
        if cfg.reuse_prefix:
            found = {state: self._reuse(state) for state in decoding.states}
            decoding.reuse = {state: reuse for state, reuse in found.items() if reuse is not None}
        decoding.prepare_ms = (time.perf_counter() - started) * 1e3
        return decoding

    def _config(self, job: Job) -> DecoderConfig:
        holes = sum(hole_length(hole) for hole in job.holes)
        context = self.model.cfg.max_position_embeddings
        if holes >= context:
            raise ProtocolError(ErrorCode.INVALID_FIELD, f"field 'holes' asks for {holes} tokens; the "
                                f"model's context is {context}: send fewer or smaller regions")
        try:
            return decoder_config(self.decoder_defaults, dict(job.decoder), shared_mode(job),
                                  job.kind == "fim" and job.drafted, edit=job.kind != "fim")
        except ValueError as exc:  # the model's own defaults were checked at start: the overrides are at fault
            raise ProtocolError(ErrorCode.INVALID_FIELD, f"field 'decoder': {exc}") from None

    def typed_on(self, decoding: JobDecoding, typed: str, deadline: float | None) -> JobDecoding | None:
        """`decoding` continued for the next keystroke, whose prefix is its own plus `typed`: if
        what it has committed from the left already starts with `typed`, a decoding of the same
        state whose answer drops `typed` (and that stops at `deadline`; its passes, and so what is
        left of its budget of passes, carry on); else None. A one-hole job of a single hole length
        only (a single-line request), with no draft."""
        if len(decoding.states) != 1 or not decoding.job.one_hole or decoding.job.drafted or decoding.done:
            return None
        [state], [healed] = decoding.states, decoding.healed
        if not self.tok.decode(decode.committed_run(state)).startswith(healed + typed):
            return None
        state.deadline = deadline
        return JobDecoding(decoding.job, decoding.states, [healed + typed], reuse=decoding.reuse)

    def _reuse(self, state: DecodeState) -> Reuse | None:
        """The keys/values of a kept canvas `state` types on from, outside its window (the
        positions a step runs are never reused); None when none is kept."""
        found = self.prefixes.lookup(state.ids[0], *decode.window_bounds(state))
        if found is None:
            return None
        prefix, end = found
        suffix = None
        if end is not None:
            first, kv, moved = end
            suffix = (first, self.model.moved(kv, moved))
        return Reuse(prefix, suffix)

    def step(self, decodings: list[JobDecoding]) -> int:
        """Advance each unfinished decoding by one pass, sharing the forward; returns forward passes run."""
        started = time.perf_counter()
        first_pass = [any(state.passes == 0 for state in d.unfinished) for d in decodings]
        owned = [(d, state) for d in decodings for state in d.unfinished]
        if not owned:  # whole drafts without a veto are done when laid out
            return 0
        states = [state for _, state in owned]
        forwards, encoded = decode.step(self.model, states, [d.reuse.get(state) for d, state in owned])
        for (d, state), canvas in zip(owned, encoded):
            d.reuse.pop(state, None)  # its first pass is run
            if canvas is not None:  # its first full pass: keep it for the next keystrokes
                self.prefixes.store(*canvas, *decode.window_bounds(state))
        elapsed_ms = (time.perf_counter() - started) * 1e3
        for d, first in zip(decodings, first_pass):
            if first:
                d.prefill_ms += elapsed_ms
            else:
                d.decode_ms += elapsed_ms
        return forwards

    def fill_rest(self, decoding: JobDecoding) -> None:
        """Past its deadline: fill what is left from its last pass (it must have had one)."""
        for state in decoding.unfinished:
            decode.fill_rest(state)

    def answers(self, decoding: JobDecoding) -> list[HoleAnswer]:
        """One answer per hole of the job, left to right."""
        return job_answers(self.tok, decoding)

    def partial(self, decoding: JobDecoding) -> str | None:
        """The text a one-hole job's answer will start with, from what its decode states have
        committed from the hole's start (the common part of its candidate lengths'); None for a
        job of several holes, or a drafted one (a veto may still take its draft back)."""
        if not decoding.job.one_hole or decoding.job.drafted:
            return None
        texts = [self._settled_text(state, decoding.healed[0]) for state in decoding.states]
        return texts[0][:_common_length(texts)]

    def _settled_text(self, state: DecodeState, healed: str) -> str:
        """One state's committed run as the answer's text: whole up to an end token, else
        without what a loop cut could still take back or a cut-off character."""
        run = decode.committed_run(state)
        ends = set(self.tok.end_ids)
        end = next((i for i, token in enumerate(run) if token in ends), None)
        single_line = state.holes[0].rules.single_line
        if end is not None:
            return hole_text(self.tok, run[:end], healed, single_line, state.cfg.cut_loops)
        if state.cfg.cut_loops:
            run = run[:settled_length(run)]
        return hole_text(self.tok, run, healed, single_line, cut_loops=False).rstrip("\ufffd")

    def complete(self, job: Job, deadline: float | None) -> list[HoleAnswer]:
        """One job decoded alone, to the end."""
        decoding = self.start(job, deadline)
        while not decoding.done:
            self.step([decoding])
        return self.answers(decoding)


def _common_length(texts: list[str]) -> int:
    """The length of the longest text every one of `texts` starts with."""
    first = texts[0]
    return next((i for i in range(len(first)) if any(len(t) <= i or t[i] != first[i] for t in texts)),
                len(first))
