"""Log lines a peer can cause, bounded: a few per second of one kind, then a count of the rest.

A hostile or broken peer can make a worker log at will (refused handshakes, bad frames). A
`RateLimitedLog` writes at most `lines_per_window` lines in each `window_s`, counts the lines it
holds back, and writes that count as one summary line with the first line of a later window, at
`tick()` once the window is over, or at `flush()`. Use one instance per kind of line; it is safe
to share between threads.
"""
from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable


class RateLimitedLog:
    """`log(msg, *args)` like `logger.log(level, msg, *args)`, at most `lines_per_window` times
    per `window_s` seconds of `clock`; `what` names the held-back lines in the summary."""

    def __init__(self, logger: logging.Logger, level: int = logging.WARNING,
                 lines_per_window: int = 5, window_s: float = 1.0,
                 clock: Callable[[], float] = time.monotonic, what: str = "lines like the above") -> None:
        if lines_per_window < 1 or window_s <= 0:
            raise ValueError(f"a rate-limited log needs lines_per_window >= 1 and window_s > 0, "
                             f"got {lines_per_window} and {window_s}")
        self.lines_per_window, self.window_s = lines_per_window, window_s
        self._logger, self._level, self._clock, self._what = logger, level, clock, what
        self._lock = threading.Lock()
        self._window_start = -math.inf
        self._written_in_window = 0
        self._held_back = 0  # lines not written since the last summary

    def log(self, msg: str, *args: object) -> bool:
        """Write the line unless this window's lines are spent; True if it was written."""
        with self._lock:
            now = self._clock()
            if now - self._window_start >= self.window_s:
                self._summarize()
                self._window_start, self._written_in_window = now, 0
            if self._written_in_window >= self.lines_per_window:
                self._held_back += 1
                return False
            self._written_in_window += 1
            self._logger.log(self._level, msg, *args)
            return True

    def flush(self) -> None:
        """Write the count of the lines held back so far, if any."""
        with self._lock:
            self._summarize()

    def tick(self) -> None:
        """Write the count once its window is over: called now and then by the owner, so that a
        flood that stopped is still summed up, and at most once a window."""
        with self._lock:
            if self._clock() - self._window_start >= self.window_s:
                self._summarize()

    def _summarize(self) -> None:
        if self._held_back:
            self._logger.log(self._level, "%d more %s were not logged (at most %d per %g s)",
                             self._held_back, self._what, self.lines_per_window, self.window_s)
            self._held_back = 0
