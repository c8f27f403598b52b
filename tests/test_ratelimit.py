"""`engine.wire.ratelimit.RateLimitedLog` on a hand-driven clock: the cap, the summary, the reset."""
from __future__ import annotations

import logging

import pytest

from engine.wire.ratelimit import RateLimitedLog

LOGGER = logging.getLogger("test_ratelimit")


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


def messages(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == LOGGER.name]


def test_lines_beyond_the_cap_are_counted_then_summarized(caplog, clock):
    limited = RateLimitedLog(LOGGER, lines_per_window=3, window_s=1.0, clock=clock)
    with caplog.at_level(logging.WARNING, LOGGER.name):
        written = [limited.log("refused %s", i) for i in range(10)]
        assert written == [True] * 3 + [False] * 7
        assert messages(caplog) == ["refused 0", "refused 1", "refused 2"]
        clock.now += 1.0  # the next window
        assert limited.log("refused %s", 10)
    assert messages(caplog)[3:] == ["7 more lines like the above were not logged (at most 3 per 1 s)",
                                    "refused 10"]


def test_flush_writes_the_count_once(caplog, clock):
    limited = RateLimitedLog(LOGGER, lines_per_window=1, window_s=5.0, clock=clock)
    with caplog.at_level(logging.WARNING, LOGGER.name):
        limited.log("a")
        limited.log("b")
        limited.flush()
        limited.flush()
    assert messages(caplog) == ["a", "1 more lines like the above were not logged (at most 1 per 5 s)"]


def test_a_quiet_log_writes_every_line_at_its_level(caplog, clock):
    limited = RateLimitedLog(LOGGER, level=logging.ERROR, lines_per_window=2, window_s=1.0, clock=clock)
    with caplog.at_level(logging.WARNING, LOGGER.name):
        for i in range(4):
            assert limited.log("line %d", i)
            clock.now += 0.6  # two lines per window at most, and each window holds one
    assert messages(caplog) == [f"line {i}" for i in range(4)]
    assert {r.levelno for r in caplog.records} == {logging.ERROR}


@pytest.mark.parametrize("lines, window", [(0, 1.0), (3, 0.0)])
def test_a_useless_limit_is_refused(lines, window):
    with pytest.raises(ValueError, match="lines_per_window >= 1"):
        RateLimitedLog(LOGGER, lines_per_window=lines, window_s=window)


def test_tick_sums_up_a_flood_that_stopped_once_its_window_is_over(caplog, clock):
    limited = RateLimitedLog(LOGGER, lines_per_window=1, window_s=1.0, clock=clock)
    with caplog.at_level(logging.WARNING, LOGGER.name):
        for i in range(5):
            limited.log("bad frame %d", i)
        clock.now += 0.5
        limited.tick()
        assert messages(caplog) == ["bad frame 0"]  # the window is not over yet
        clock.now += 0.5
        limited.tick()
        limited.tick()
    assert messages(caplog) == ["bad frame 0", "4 more lines like the above were not logged (at most 1 per 1 s)"]
