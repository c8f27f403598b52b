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
encoded per step, and by `max_slowdown`: no request may see its step take more than that many
times what it would alone. Step times are predicted by a fixed cost plus a cost per encoded
position, fitted to the steps run so far (`StepCost`; the caller feeds it with `observe`). On a
GPU the fixed cost dominates and batches grow freely; on a CPU a step costs about its positions,
so a bigger batch only makes every request in it slower, and the bound keeps batches small
(`bench.load` on two CPU cores: p99 at 16 typing editors 2.2x that at one, against no completion
at all with the token bound alone). The fit is a line through steps of every kind, so it is
rough: on two CPU cores it let pairs of 33-position windows in at a predicted 1.4x that ran at
1.7x (overhead-bound small products cost more per position than a long first pass); a bound of
1.25, which admits no pairs there, did not lower the p99. One request over a bound still runs,
alone. A request's first step encodes its context (less what it reuses from an earlier
keystroke), so only a few newcomers join each step: a step stays short, and the cancels and
deadlines answered between steps go out on time.

Newest first once a queue stands (adaptive LIFO), off by default (`newest_first`): once a waiting
request has been passed over by an admission (it waited through a step for room), the waiting ones
are laid out and admitted newest arrival first (`admission_order`), else first come, first served.
Measured, it wins nothing for editors: a session's newer request supersedes its older one, so
each waiting request is a different editor's (or document's) latest keystroke, and the oldest one
belongs to the editor that stopped typing longest ago, the user who is looking for the ghost text,
while the newest belongs to one still typing, whose answer its next key will likely cancel.
`python -m bench.keystroke_order --editors 3 --seconds 20 --rounds 2` (two CPU cores, the
worker's OpenMP settings), newest first over arrival order in the same run, keys answered before
the editor's next key: 1.13x (seed 0) and 1.01x (seed 1) idle, 0.95x beside two busy loops;
after a pause, 1.08x, 0.94x, 0.89x; with OpenMP's spinning default, 0.51x idle. The stale work a
user would wait behind is already gone: the superseded and the cancelled leave before any
admission.

A sequence may join before the caller has laid its request out (`prepared` false: its
`step_tokens` are not known yet). It waits, expires, is cancelled, superseded or refused like any
other, so the checks come before the cost of the layout; admission stops at the first waiting
sequence not laid out in admission order, and `unprepared` lists them for the caller in that order.

The wait bound sheds load the way a latency-bound service must (CoDel's idea, per request): on a
worker that cannot keep up, a keystroke's completion that has waited long for room would come
after the user typed on, so it is refused at once (`overloaded`: the client may try another
worker) instead of making every later request wait behind it. Time is passed in
(`now`), so every rule is tested without a clock. The scheduler never looks inside a sequence's
`payload` (the worker's job and the runner's decoding state).
"""
from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


@dataclass(slots=True)
class SchedulerConfig:
    max_live: int = 16  # requests decoding in one step: the batch size bound
    max_step_tokens: int = 2048  # positions one step may encode: ~2 first steps (whole canvases) or ~16 hole windows
    max_waiting: int = 64  # requests waiting for room; one more is refused as overloaded
    # a request still waiting for room this long is refused as overloaded; None: no bound
    max_wait_s: float | None = 0.15
    max_slowdown: float | None = 1.5  # a step may take this many times a member's lone step; None: no bound
    shed_queue: int = 2  # the wait bound applies while this many wait (a standing queue), not to one waiting its turn
    newest_first: bool = False  # once a queue stands, admit (and lay out) the newest first; False: arrival order

    def __post_init__(self) -> None:
        if (self.max_live < 1 or self.max_step_tokens < 1 or self.max_waiting < 0
                or (self.max_wait_s is not None and self.max_wait_s <= 0)
                or (self.max_slowdown is not None and self.max_slowdown < 1)):
            raise ValueError(f"scheduler bounds out of range: {self}; max_live and max_step_tokens "
                             "must be at least 1, max_waiting at least 0, max_wait_s positive or None, "
                             "max_slowdown at least 1 or None")


@dataclass(slots=True)
class StepCost:
    """Seconds per step as `fixed + per_position * positions`, a least-squares fit over the steps
    observed, the older ones weighing less (each step multiplies the old weights by 1 - FORGET)."""

    weight: float = 0.0  # the (forgetting) sums over steps of 1, x, y, x*x and x*y; x positions, y seconds
    x: float = 0.0
    y: float = 0.0
    xx: float = 0.0
    xy: float = 0.0

    FORGET = 0.1

    def observe(self, positions: int, seconds: float) -> None:
        keep = 1.0 - self.FORGET
        self.weight, self.x, self.y = keep * self.weight + 1, keep * self.x + positions, keep * self.y + seconds
        self.xx, self.xy = keep * self.xx + positions * positions, keep * self.xy + positions * seconds

    def fit(self) -> tuple[float, float] | None:
        """(fixed seconds, seconds per position), or None before any step. Steps all of one size
        cannot tell the two apart: the whole cost is then taken as per position (a CPU's case)."""
        if self.weight == 0:
            return None
        mx, my = self.x / self.weight, self.y / self.weight
        var = self.xx / self.weight - mx * mx
        if var <= 1e-6 * max(1.0, mx * mx):
            return 0.0, my / max(mx, 1.0)
        slope = max(0.0, (self.xy / self.weight - mx * my) / var)
        return max(0.0, my - slope * mx), slope

    def predict(self, positions: int) -> float | None:
        fitted = self.fit()
        return None if fitted is None else fitted[0] + fitted[1] * positions


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
    prepared: bool = True  # the caller has laid it out (its step_tokens are known); else it is not admitted
    admitted_at: float | None = None  # when it first joined the running batch
    steps: int = 0  # steps it took part in
    passed_over: bool = False  # it was waiting when an admission left it waiting: a queue stands


@dataclass(slots=True)
class Final:
    seq: Sequence
    outcome: Outcome


def admission_order(waiting: Iterable[Sequence], newest_first: bool) -> list[Sequence]:
    """The waiting sequences (given in arrival order) in the order they are laid out and admitted:
    newest first when `newest_first` and a queue stands (one of them was passed over), else as given."""
    ordered = list(waiting)
    return ordered[::-1] if newest_first and any(seq.passed_over for seq in ordered) else ordered


class Scheduler:
    def __init__(self, cfg: SchedulerConfig = SchedulerConfig()) -> None:
        self.cfg = cfg
        self.waiting: deque[Sequence] = deque()
        self.running: list[Sequence] = []
        self._live: dict[Hashable, Sequence] = {}
        self._latest: dict[Hashable, Sequence] = {}  # per session, its newest live sequence
        self.cost = StepCost()

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

    def running_of(self, session: Hashable | None) -> Sequence | None:
        """The session's live sequence if it is in the running batch and has run a step."""
        seq = None if session is None else self._latest.get(session)
        return seq if seq is not None and seq.steps > 0 and seq in self.running else None

    def unprepared(self) -> list[Sequence]:
        """The waiting sequences the caller has not laid out yet, in admission order."""
        return [seq for seq in self._in_turn() if not seq.prepared]

    def _in_turn(self) -> list[Sequence]:
        """The waiting sequences in admission order."""
        return admission_order(self.waiting, self.cfg.newest_first)

    def admit_now(self, seq: Sequence, now: float) -> None:
        """Let a waiting sequence into the running batch at once, past the bounds: one that took
        over the decoding (and so the place) of the running sequence it superseded."""
        if seq in self.waiting:
            self.waiting.remove(seq)
            self.running.append(seq)
            seq.admitted_at = now

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
        """A step that encoded `tokens` positions took `seconds`: update the cost fit."""
        self.cost.observe(tokens, seconds)

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
        if self.cfg.max_wait_s is None or len(self.waiting) < self.cfg.shed_queue:
            return []
        stale = [seq for seq in self.waiting if now - seq.arrival >= self.cfg.max_wait_s]
        for seq in stale:
            self.remove(seq)
        return [Final(seq, Outcome.OVERLOADED) for seq in stale]

    def _fits(self, tokens: int, smallest: int) -> bool:
        """Whether a step of `tokens` positions, whose smallest member alone would encode
        `smallest`, stays within the token bound and the slowdown bound."""
        if tokens > self.cfg.max_step_tokens:
            return False
        together, alone = self.cost.predict(tokens), self.cost.predict(smallest)
        if together is None or self.cfg.max_slowdown is None or alone <= 0:
            return True
        return together <= self.cfg.max_slowdown * alone

    def _admit(self, now: float) -> None:
        tokens = sum(seq.step_tokens for seq in self.running)
        smallest = min((seq.step_tokens for seq in self.running), default=self.cfg.max_step_tokens)
        for seq in self._in_turn():
            if not seq.prepared or len(self.running) >= self.cfg.max_live:
                break
            smallest = min(smallest, seq.step_tokens)
            if self.running and not self._fits(tokens + seq.step_tokens, smallest):
                break
            self.waiting.remove(seq)
            self.running.append(seq)
            seq.admitted_at = now
            tokens += seq.step_tokens
        for seq in self.waiting:
            seq.passed_over = True
