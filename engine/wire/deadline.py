"""When an answer is due: a budget in milliseconds counted from an instant of the monotonic clock.

A front end makes one `Deadline` when a request reaches it (`Deadline.after_ms(settings'
deadline)`) and hands it down: the completion pipelines (`completion.fim.run`,
`completion.next_edit.run`) give each request what is `left_ms()` when they send it, and the
worker pool (`engine.client.pool`) gives a retry on another worker what is left of its call's.
What is left is counted as the budget less the whole milliseconds spent, so that a request sent
at once gets the budget whole.
"""
from __future__ import annotations

import time
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Deadline:
    """`budget_ms` from `start` (a `time.monotonic()` instant)."""

    start: float
    budget_ms: int

    @classmethod
    def after_ms(cls, budget_ms: int) -> Deadline:
        """The deadline `budget_ms` from now."""
        return cls(time.monotonic(), budget_ms)

    def left_ms(self) -> int:
        """The milliseconds left now (0 or less once it has passed)."""
        return self.budget_ms - int((time.monotonic() - self.start) * 1000.0)

    @property
    def expired(self) -> bool:
        """True once less than a millisecond is left: nothing can be asked in time."""
        return self.left_ms() < 1
