"""A log line that may repeat fast (one per rejected frame, say), written at a bounded rate.

`ThrottledLog` writes the first `burst` lines of each period of `period_s` seconds, counts the
ones after them, and writes that count as one summary line once the period is over: at the next
line, or at `flush`, which the owner calls now and then so that a flood that stops is still
summed up. So a flood costs at most `burst` + 1 lines a period, whatever its rate. The clock is
passed in, so that every rule is tested without waiting.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable


class ThrottledLog:
    def __init__(self, logger: logging.Logger, what: str, burst: int = 5, period_s: float = 1.0,
                 level: int = logging.WARNING, clock: Callable[[], float] = time.monotonic) -> None:
        """`what` names the lines in the summary: "12 more `what` in the last 1.0 s"."""
        if burst < 1 or period_s <= 0:
            raise ValueError(f"burst must be at least 1 and period_s positive, got {burst} and {period_s}")
        self._logger, self._what, self._level, self._clock = logger, what, level, clock
        self.burst, self.period_s = burst, period_s
        self._period_start = clock()
        self._written = 0  # lines written in this period
        self._held_back = 0  # lines counted, not written, in this period

    def log(self, msg: str, *args: object) -> None:
        """Write `msg % args` if this period has room for it, else count it for the summary."""
        self.flush()
        if self._written < self.burst:
            self._written += 1
            self._logger.log(self._level, msg, *args)
        else:
            self._held_back += 1

    def flush(self) -> None:
        """Once the period is over: write the summary of the lines held back (if any) and start a new one."""
        now = self._clock()
        if now - self._period_start < self.period_s:
            return
        if self._held_back:
            self._logger.log(self._level, "%d more %s in the last %.1f s", self._held_back, self._what,
                             now - self._period_start)
        self._period_start, self._written, self._held_back = now, 0, 0
