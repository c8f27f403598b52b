"""The worker's unit of work: a wire request as the model's job, and the contract with the runner.

`job_of` turns a validated `CompleteRequest` into an `infill.job.Job`: FIM's one hole between its
prefix and suffix (maybe with its draft), or an edit's regions between its pieces with the user's edits that call for
them; snippets least important first (a full
canvas keeps the last ones), decoder overrides as sent. `Work` is what the scheduler carries for
each request: the worker's record of it and, once laid out, its decoding. `Runner` is what the
engine core asks of a model runner, typed by the record of a job being decoded that the runner
makes (`Decoding`, as the core sees it: `infill.fim.JobDecoding` for
`engine.worker.runner.ModelRunner`, the diffusion one; `CausalDecoding` for the causal one; tests
use fakes); every runner answers each hole with the one answer record, `infill.answer.HoleAnswer`.
A runner may also have `partial(decoding) -> str | None`, a one-hole decoding's settled text (what
its answer will start with), for streamed requests; one without it sends no Partial replies.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, TypeVar

from engine.wire.protocol import CompleteRequest, ErrorCode, ProtocolError
from infill.answer import HoleAnswer
from infill.job import Hole, Job


def job_of(request: CompleteRequest) -> Job:
    """The job a request asks for; raises ProtocolError (invalid_field) for one the job refuses."""
    snippets = tuple(s.text for s in sorted(request.snippets, key=lambda s: s.priority))
    try:
        if request.kind == "fim":
            return Job.fim(request.prefix, request.suffix, request.mode, request.max_tokens, snippets,
                           request.decoder, tuple(request.draft), tuple(request.slots))
        holes = tuple(Hole(h.mode, h.max_tokens, h.replaces, tuple(h.draft), tuple(h.slots)) for h in request.holes)
        events = tuple((event.before, event.after) for event in request.events)
        return Job((request.prefix, *request.pieces, request.suffix), holes, snippets, dict(request.decoder),
                   events)
    except ValueError as exc:
        raise ProtocolError(ErrorCode.INVALID_FIELD, f"the job is not valid: {exc}", request.id) from None


class Incoming(Protocol):
    """The worker's record of a request, as the core sees it (`engine.worker.worker.Arrival`)."""

    peer: bytes  # who sent it
    request: CompleteRequest
    arrival: float  # time.monotonic() when it arrived

    @property
    def deadline(self) -> float: ...  # time.monotonic() when its answer is due


class Decoding(Protocol):
    """A job being decoded, as the core sees it."""

    prepare_ms: float  # laying it out
    prefill_ms: float  # its first pass
    decode_ms: float  # the passes after it

    @property
    def done(self) -> bool: ...

    @property
    def step_tokens(self) -> int: ...  # positions its next step encodes


D = TypeVar("D", bound=Decoding)  # the record of a job being decoded that a runner makes


class Runner(Protocol[D]):
    """What the engine core asks of a model runner."""

    def info(self) -> dict: ...  # the model's name, family, vocabulary size and context

    def start(self, job: Job, deadline: float | None) -> D: ...  # ProtocolError for a bad job

    def step(self, decodings: list[D]) -> int: ...  # forward passes run

    def fill_rest(self, decoding: D) -> None: ...  # the anytime answer of a late one

    def answers(self, decoding: D) -> list[HoleAnswer]: ...  # one per hole, left to right

    def typed_on(self, decoding: D, typed: str, deadline: float | None) -> D | None: ...  # handed to the next key


@dataclass(slots=True, eq=False)
class Work:
    """One request in the scheduler: the worker's record of it (`peer`, `request`, `arrival`,
    `deadline`) and, once laid out, its decoding."""

    incoming: Incoming
    decoding: Decoding | None = None
    streamed: str = ""  # a streamed request's text sent in Partial replies so far

    @property
    def request(self) -> CompleteRequest:
        return self.incoming.request
