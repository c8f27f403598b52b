"""Tests of engine.throttled_log with a hand-driven clock."""
from __future__ import annotations

import logging

import pytest

from engine.throttled_log import ThrottledLog


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


def lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "test.throttled"]


def throttled(clock: Clock, burst: int = 3) -> ThrottledLog:
    return ThrottledLog(logging.getLogger("test.throttled"), "bad frames", burst=burst, period_s=1.0, clock=clock)


def test_a_flood_writes_the_burst_then_one_summary_per_period(caplog, clock):
    log = throttled(clock)
    for i in range(10):
        log.log("bad frame %d", i)
    assert lines(caplog) == ["bad frame 0", "bad frame 1", "bad frame 2"]
    clock.now += 1.5
    log.log("bad frame %d", 10)
    assert lines(caplog)[3:] == ["7 more bad frames in the last 1.5 s", "bad frame 10"]


def test_flush_sums_up_a_flood_that_stopped_once_its_period_is_over(caplog, clock):
    log = throttled(clock, burst=1)
    for i in range(5):
        log.log("bad frame %d", i)
    clock.now += 0.5
    log.flush()
    assert lines(caplog) == ["bad frame 0"]  # the period is not over yet
    clock.now += 0.5
    log.flush()
    log.flush()
    assert lines(caplog) == ["bad frame 0", "4 more bad frames in the last 1.0 s"]


def test_a_quiet_period_writes_no_summary_and_lines_at_a_low_rate_all_go_out(caplog, clock):
    log = throttled(clock, burst=2)
    for i in range(4):
        log.log("line %d", i)
        clock.now += 0.6  # two lines a period at most
    log.flush()
    assert lines(caplog) == ["line 0", "line 1", "line 2", "line 3"]


def test_bad_bounds_are_refused():
    with pytest.raises(ValueError, match="burst"):
        ThrottledLog(logging.getLogger("test.throttled"), "lines", burst=0)
