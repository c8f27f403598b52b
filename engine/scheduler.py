"""The scheduler: which live requests take part in the next decoding step (pure Python, no torch).

A request lives here as a `Sequence` from its arrival to its one final outcome. It waits, is
admitted between steps (first come, first served) while the running batch has room, runs in
every step until the decoder is done, and leaves with exactly one `Final`:

- `finished`: the decoder is done (possibly stopped by its deadline during a step);
- `expired`: its deadline passed between steps: finalized with the anytime answer if it has run
  at least one step, dropped if it never did; never left queued;
- `cancelled`: by its client, or superseded: a newer request of the same session cancels the
  older one the moment it arrives, before admission is checked, so stale work is always the
  first to go;
- `overloaded`: it arrived when the worker already held `max_live + max_waiting` requests, or it
  waited longer than `max_wait_s` for room in the running batch.

Admission control bounds the running batch by `max_live` requests, by `max_step_tokens` positions
encoded per step, and by `max_step_s`: the step time it predicts from the seconds per encoded
position of the steps run so far (a moving average the caller feeds with `observe`). On a CPU a
step costs about its positions, so a bigger batch only makes every request in it slower; on a
GPU the time bound seldom binds. One request over a bound still runs, alone. A request's first
step encodes its whole context, so on a CPU only a few newcomers join each step: a step stays short,
and the cancels and deadlines answered between steps go out on time.

The wait bound sheds load the way a latency-bound service must (CoDel's idea, per request): on a
worker that cannot keep up, a keystroke's completion that has waited long for room would come
after the user typed on, so it is refused at once (`overloaded`: the client may try another
worker) instead of making every later request wait behind it. Time is passed in
(`now`), so every rule is tested without a clock. The scheduler never looks inside a sequence's
`payload` (the worker's job and the runner's decoding state).
"""
from __future__ import annotations

from collections import deque
from collections.abc import Hashable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


@dataclass(slots=True)
class SchedulerConfig:
    max_live: int = 16  # requests decoding in one step: the batch size bound
    max_step_tokens: int = 2048  # positions one step may encode: ~2 first steps (whole canvases) or ~16 hole windows
    max_waiting: int = 64  # requests waiting for room; one more is refused as overloaded
    max_wait_s: float | None = 0.25  # a request still waiting for room this long is refused as overloaded; None: no bound
    max_step_s: float | None = 0.06  # predicted step time the batch may reach; None: no bound

    def __post_init__(self) -> None:
        if (self.max_live < 1 or self.max_step_tokens < 1 or self.max_waiting < 0
                or any(bound is not None and bound <= 0 for bound in (self.max_wait_s, self.max_step_s))):
            raise ValueError(f"scheduler bounds out of range: {self}; max_live and max_step_tokens "
                             "must be at least 1, max_waiting at least 0, max_wait_s and max_step_s "
                             "positive or None")


COST_SMOOTHING = 0.2  # weight of the newest step in the moving average of seconds per position


class Outcome(StrEnum):
    FINISHED = "finished"
    EXPIRED = "expired"
    CANCELLED = "cancelled"
    OVERLOADED = "overloaded"


@dataclass(slots=True, eq=False)
class Sequence:
    """One live request as the scheduler sees it."""

    key: Hashable  # unique among live requests (the worker uses (peer, request id))
    session: Hashable | None  # requests with an equal session supersede each other; None: never
    arrival: float
    deadline: float
    step_tokens: int  # positions its next step encodes (the caller keeps it current)
    payload: Any = None  # the caller's; never looked into
    admitted_at: float | None = None  # when it first joined the running batch
    steps: int = 0  # steps it took part in


@dataclass(slots=True)
class Final:
    seq: Sequence
    outcome: Outcome


class Scheduler:
    def __init__(self, cfg: SchedulerConfig = SchedulerConfig()) -> None:
        self.cfg = cfg
        self.waiting: deque[Sequence] = deque()
        self.running: list[Sequence] = []
        self._live: dict[Hashable, Sequence] = {}
        self._latest: dict[Hashable, Sequence] = {}  # per session, its newest live sequence
        self.seconds_per_token: float | None = None  # moving average over the steps run; None before the first

    @property
    def num_live(self) -> int:
        return len(self._live)

    @property
    def is_idle(self) -> bool:
        return not self._live

    def add(self, seq: Sequence) -> list[Final]:
        """Take a new request: it supersedes its session's older one, or is refused when full."""
        if seq.key in self._live:
            raise ValueError(f"sequence {seq.key!r} is already live; keys must be unique")
        finals = self._supersede(seq)
        if self.num_live >= self.cfg.max_live + self.cfg.max_waiting:
            return finals + [Final(seq, Outcome.OVERLOADED)]
        self._live[seq.key] = seq
        self.waiting.append(seq)
        if seq.session is not None:
            self._latest[seq.session] = seq
        return finals

    def cancel(self, key: Hashable) -> list[Final]:
        """The client's cancel: the live sequence `key` leaves now; unknown keys are ignored."""
        seq = self._live.get(key)
        if seq is None:
            return []
        self.remove(seq)
        return [Final(seq, Outcome.CANCELLED)]

    def schedule(self, now: float) -> tuple[list[Sequence], list[Final]]:
        """The batch for the next step, and the sequences that expired or waited too long before it."""
        finals = self._expire(now)
        self._admit(now)
        return list(self.running), finals + self._shed(now)

    def postprocess(self, batch: list[Sequence], finished: list[bool]) -> list[Final]:
        """After a step over `batch`: count it, and let the sequences the decoder finished leave."""
        finals = []
        for seq, done in zip(batch, finished, strict=True):
            seq.steps += 1
            if done:
                self.remove(seq)
                finals.append(Final(seq, Outcome.FINISHED))
        return finals

    def observe(self, tokens: int, seconds: float) -> None:
        """A step that encoded `tokens` positions took `seconds`: update the cost estimate."""
        if tokens < 1:
            return
        cost = seconds / tokens
        old = self.seconds_per_token
        self.seconds_per_token = cost if old is None else old + COST_SMOOTHING * (cost - old)

    def remove(self, seq: Sequence) -> None:
        """Take a live sequence out wherever it is (also used when the runner fails on it)."""
        del self._live[seq.key]
        if seq in self.running:
            self.running.remove(seq)
        else:
            self.waiting.remove(seq)
        if seq.session is not None and self._latest.get(seq.session) is seq:
            del self._latest[seq.session]

    def _supersede(self, seq: Sequence) -> list[Final]:
        older = None if seq.session is None else self._latest.get(seq.session)
        if older is None:
            return []
        self.remove(older)
        return [Final(older, Outcome.CANCELLED)]

    def _expire(self, now: float) -> list[Final]:
        late = [seq for seq in self._live.values() if now >= seq.deadline]
        for seq in late:
            self.remove(seq)
        return [Final(seq, Outcome.EXPIRED) for seq in late]

    def _shed(self, now: float) -> list[Final]:
        """Refuse the requests still waiting after this step's admission that waited past the bound."""
        if self.cfg.max_wait_s is None:
            return []
        stale = [seq for seq in self.waiting if now - seq.arrival >= self.cfg.max_wait_s]
        for seq in stale:
            self.remove(seq)
        return [Final(seq, Outcome.OVERLOADED) for seq in stale]

    def _fits(self, tokens: int) -> bool:
        """Whether a step encoding `tokens` positions stays within the token and time bounds."""
        if tokens > self.cfg.max_step_tokens:
            return False
        cost, limit = self.seconds_per_token, self.cfg.max_step_s
        return cost is None or limit is None or tokens * cost <= limit

    def _admit(self, now: float) -> None:
        tokens = sum(seq.step_tokens for seq in self.running)
        while self.waiting and len(self.running) < self.cfg.max_live:
            seq = self.waiting[0]
            if self.running and not self._fits(tokens + seq.step_tokens):
                break
            self.running.append(self.waiting.popleft())
            seq.admitted_at = now
            tokens += seq.step_tokens
