"""The engine core: jobs in, replies out, one decoding step at a time (no sockets here).

The worker's main loop hands each validated request (`add`) and each cancel (`cancel`) to the
core and calls `step` in between; every call returns the replies that are ready, as (job, message)
pairs. One step reads as three calls: the scheduler picks the batch, the runner advances it by one
shared forward pass, the scheduler lets the finished ones go. Every request gets exactly one final
reply: a Result (stop reason done, deadline or cancelled) or an Error (overloaded, invalid_field
for decoder overrides the runner refuses, internal).

A request joins the scheduler as it arrives, before it is laid out (tokenized, its canvas built),
so that superseding, the overload bound, cancels and deadlines all apply before that cost. Each
step first lays out the waiting requests in arrival order, PREPARE_CHARS_PER_STEP characters of
context at most (at least one request): a burst of large requests delays each step by about one
request's layout, never by the whole burst's.

The runner meets `engine.worker.work.Runner`: it starts a job (`engine.worker.work.job_of` of the
request) as a decoding with `done` and `step_tokens` (`engine.worker.work.Decoding`), or raises
ProtocolError for a field it refuses (answered with that error's code), steps batches, finishes
late ones, and answers one `infill.answer.HoleAnswer` per hole; the scheduler carries each request
as a `Work`. A Result holds one item per hole (`Item.hole`, made from the hole's answer by
`item_of`), its timings the queue, the layout (`prepare_ms`), the first pass (`prefill_ms`) and
the rest.

Streaming: after each step, a request sent with `stream` whose settled text (`runner.partial`)
grew gets a `Partial` reply, collected apart from the final ones (`take_partials`): the worker
sends them without closing the request.

Typing on: a FIM request that supersedes a running one of its session, a few characters further
on the same line, takes over that one's decoding when it had already committed what was typed (the
worker's own typing-through); the superseded request is answered `cancelled` as always.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from engine.wire.protocol import (CUT_SHORT, MAX_ERROR_CHARS, MAX_PREFIX_CHARS, MAX_SUFFIX_CHARS, Error, ErrorCode,
                                    Item, Message, Partial, ProtocolError, Result, Timings)
from engine.worker.scheduler import Final, Outcome, Scheduler, SchedulerConfig, Sequence
from engine.worker.work import Decoding, Incoming, Runner, Work, job_of
from infill.answer import HoleAnswer

logger = logging.getLogger(__name__)

Reply = tuple[Incoming, Message]  # (the worker's job, its one final reply)
PREPARE_CHARS_PER_STEP = MAX_PREFIX_CHARS + MAX_SUFFIX_CHARS  # one maximal request's context


@dataclass(slots=True)
class EngineStats:
    """Counters since start; the mean batch size over any interval is Δstep_requests / Δsteps."""

    steps: int = 0  # decoding steps run
    forward_passes: int = 0  # model forward calls (a step runs one for all cached windows, plus refreshes)
    step_requests: int = 0  # requests advanced, summed over steps
    carried: int = 0  # requests that took over the decoding of the running one they superseded


def elapsed_ms(since: float, until: float) -> float:
    return max(0.0, (until - since) * 1000.0)


def internal_error(request_id: str | None, exc: Exception) -> Error:
    message = f"the worker failed on this request: {type(exc).__name__}: {exc}"
    return Error(request_id, ErrorCode.INTERNAL, message[:MAX_ERROR_CHARS])


def item_of(answer: HoleAnswer, hole: int) -> Item:
    """The wire's item of one hole's answer."""
    return Item(answer.text, answer.confidence, answer.forward_passes, hole)


def stop_reason_of(answers: list[HoleAnswer]) -> str:
    """A request's stop reason: "deadline" if a hole's time ran out, else "budget" if one ran its
    passes, else "done"."""
    reasons = {answer.stop_reason for answer in answers}
    return next((why for why in CUT_SHORT if why in reasons), "done")


def empty_result(job: Incoming, stop_reason: str) -> Result:
    """The answer to a request that leaves without text (cancelled, or expired before it ran)."""
    waited = elapsed_ms(job.arrival, time.monotonic())
    return Result(job.request.id, [], Timings(waited, 0.0, 0.0, waited), stop_reason)


class EngineCore:
    def __init__(self, runner: Runner, cfg: SchedulerConfig = SchedulerConfig()) -> None:
        self.runner = runner
        self.scheduler = Scheduler(cfg)
        self.stats = EngineStats()
        self._partials: list[Reply] = []

    @property
    def is_idle(self) -> bool:
        return self.scheduler.is_idle

    def add(self, job: Incoming) -> list[Reply]:
        """A new request (a job with `peer`, `request`, `arrival` and `deadline`), laid out by a
        later `step` unless it takes over the decoding of the running request it supersedes."""
        req = job.request
        try:
            carried = self._typed_on(job)
        except Exception as exc:  # a request the runner cannot hand over fails alone
            logger.exception("request %s failed to take over its session's decoding", req.id)
            return [(job, internal_error(req.id, exc))]
        seq = Sequence(key=(job.peer, req.id), session=req.session or None, arrival=job.arrival,
                       deadline=job.deadline, step_tokens=0 if carried is None else carried.step_tokens,
                       payload=Work(job, carried), prepared=carried is not None)
        finals = self.scheduler.add(seq)
        if carried is not None:
            self.scheduler.admit_now(seq, time.monotonic())
            self.stats.carried += 1
        return self._replies(finals)

    def _typed_on(self, job: Incoming) -> Decoding | None:
        """The decoding of the running request this one supersedes, handed over (`runner.typed_on`)
        when this one is the same request a few characters further on the same line; else None."""
        req = job.request
        older = self.scheduler.running_of(req.session or None)
        if older is None or req.kind != "fim" or older.payload.request.kind != "fim":
            return None
        old = older.payload.request
        if (not req.prefix.startswith(old.prefix) or req.suffix != old.suffix
                or (req.mode, req.max_tokens, req.decoder) != (old.mode, old.max_tokens, old.decoder)):
            return None
        typed = req.prefix[len(old.prefix):]
        if not typed or "\n" in typed:
            return None
        return self.runner.typed_on(older.payload.decoding, typed, job.deadline)

    def cancel(self, peer: bytes, request_id: str) -> list[Reply]:
        return self._replies(self.scheduler.cancel((peer, request_id)))

    def step(self) -> list[Reply]:
        """Lay out what waits (bounded), expire, admit, and run one step over the live batch (if any)."""
        replies = self._prepare()
        batch, finals = self.scheduler.schedule(time.monotonic())
        replies += self._replies(finals)
        if batch:
            replies += self._run(batch)
        return replies

    def take_partials(self) -> list[Reply]:
        """The Partial replies of the steps run since the last call (none is a final reply)."""
        partials, self._partials = self._partials, []
        return partials

    def _collect_partials(self, batch: list[Sequence]) -> None:
        """A Partial for each streamed request of `batch` still decoding whose settled text grew."""
        partial = getattr(self.runner, "partial", None)
        for seq in batch:
            work = seq.payload
            if partial is None or not work.request.stream or work.decoding.done:
                continue
            text = partial(work.decoding)
            if text is not None and len(text) > len(work.streamed):
                work.streamed = text
                self._partials.append((work.incoming, Partial(work.request.id, text)))

    def _prepare(self) -> list[Reply]:
        """Lay out waiting requests in arrival order, up to PREPARE_CHARS_PER_STEP characters of
        context (at least one request); those past their deadline are left to the scheduler to drop."""
        replies, chars = [], 0
        for seq in self.scheduler.unprepared():
            request = seq.payload.request
            size = len(request.prefix) + len(request.suffix) + sum(len(piece) for piece in request.pieces)
            if time.monotonic() >= seq.deadline:
                continue
            if chars and chars + size > PREPARE_CHARS_PER_STEP:
                break
            chars += size
            replies += self._start(seq)
        return replies

    def _start(self, seq: Sequence) -> list[Reply]:
        """Lay `seq` out (`runner.start`); a request the runner refuses or fails on leaves alone."""
        job = seq.payload.incoming
        req = job.request
        try:
            decoding = self.runner.start(job_of(req), job.deadline)
        except ProtocolError as exc:  # a job or field the runner refuses, such as a decoder override
            error = Error(req.id, exc.code, exc.message[:MAX_ERROR_CHARS])
        except Exception as exc:
            logger.exception("request %s failed to start", req.id)
            error = internal_error(req.id, exc)
        else:
            seq.payload.decoding, seq.step_tokens, seq.prepared = decoding, decoding.step_tokens, True
            return []
        self.scheduler.remove(seq)
        return [(job, error)]

    def _run(self, batch: list[Sequence]) -> list[Reply]:
        decodings = [seq.payload.decoding for seq in batch]
        tokens, started = sum(seq.step_tokens for seq in batch), time.perf_counter()
        try:
            forwards = self.runner.step(decodings)
        except Exception:
            logger.exception("a batched step failed; retrying its %d requests one by one", len(batch))
            return self._run_alone(batch)
        self._count(len(batch), forwards)
        self.scheduler.observe(tokens, time.perf_counter() - started)
        for seq, decoding in zip(batch, decodings):
            seq.step_tokens = decoding.step_tokens  # the next step may be a refresh, dearer than this one
        self._collect_stream(batch)
        return self._replies(self.scheduler.postprocess(batch, [d.done for d in decodings]))

    def _collect_stream(self, batch: list[Sequence]) -> None:
        """Partials for the batch; a runner that fails on one loses that Partial only."""
        try:
            self._collect_partials(batch)
        except Exception:
            logger.exception("reading the settled text of a streamed request failed")

    def _run_alone(self, batch: list[Sequence]) -> list[Reply]:
        """After a failed batch: step each request alone, so a model error fails its request only."""
        return [reply for seq in batch for reply in self._step_alone(seq)]

    def _step_alone(self, seq: Sequence) -> list[Reply]:
        job, decoding = seq.payload.incoming, seq.payload.decoding
        try:
            if not decoding.done:  # the failed batch may have finished it before the error
                self._count(1, self.runner.step([decoding]))
        except Exception as exc:
            logger.exception("request %s failed in a step", job.request.id)
            self.scheduler.remove(seq)
            return [(job, internal_error(job.request.id, exc))]
        return self._replies(self.scheduler.postprocess([seq], [decoding.done]))

    def _count(self, batch_size: int, forwards: int) -> None:
        self.stats.steps += 1
        self.stats.forward_passes += forwards
        self.stats.step_requests += batch_size

    def _replies(self, finals: list[Final]) -> list[Reply]:
        replies = []
        for final in finals:
            job = final.seq.payload.incoming
            try:
                replies.append((job, self._reply(final)))
            except Exception as exc:  # a failure while answering fails this request alone
                logger.exception("request %s failed while answering", job.request.id)
                replies.append((job, internal_error(job.request.id, exc)))
        return replies

    def _reply(self, final: Final) -> Message:
        seq, outcome = final.seq, final.outcome
        job, decoding = seq.payload.incoming, seq.payload.decoding
        if outcome is Outcome.OVERLOADED:
            cfg, waited_ms = self.scheduler.cfg, elapsed_ms(job.arrival, time.monotonic())
            return Error(job.request.id, ErrorCode.OVERLOADED,
                         f"the worker is over capacity: {self.scheduler.num_live} requests live (limit "
                         f"{cfg.max_live + cfg.max_waiting}), this one waited {waited_ms:.0f} ms for room "
                         f"(limit {cfg.max_wait_s}s); retry later or on another worker")
        if outcome is Outcome.CANCELLED:
            return empty_result(job, "cancelled")
        if outcome is Outcome.EXPIRED:
            if seq.steps == 0:
                return empty_result(job, "deadline")
            if not decoding.done:
                self.runner.fill_rest(decoding)
        return self._result(seq)

    def _result(self, seq: Sequence) -> Result:
        job, decoding = seq.payload.incoming, seq.payload.decoding
        answers = self.runner.answers(decoding)
        now = time.monotonic()
        queued_until = seq.admitted_at if seq.admitted_at is not None else now
        timings = Timings(elapsed_ms(job.arrival, queued_until), decoding.prefill_ms, decoding.decode_ms,
                          elapsed_ms(job.arrival, now), decoding.prepare_ms)
        items = [item_of(answer, hole) for hole, answer in enumerate(answers)]
        stop_reason = stop_reason_of(answers)
        logger.debug("request %s: %s in %.1f ms", job.request.id, stop_reason, timings.total_ms)
        return Result(job.request.id, items, timings, stop_reason)
