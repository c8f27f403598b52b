"""The `Deadline` every front end, both pipelines and the worker pool share: a budget counted from
a monotonic instant (the clock is set by hand here, never waited on)."""
from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import pytest

from engine.wire import deadline as deadline_module
from engine.wire.deadline import Deadline


@pytest.fixture
def clock(monkeypatch):
    now = [100.0]
    monkeypatch.setattr(deadline_module, "time", SimpleNamespace(monotonic=lambda: now[0]))
    return now


def test_a_deadline_counts_down_its_budget_in_whole_milliseconds_spent(clock):
    deadline = Deadline.after_ms(500)
    assert deadline == Deadline(100.0, 500) and deadline.left_ms() == 500 and not deadline.expired
    clock[0] = 100.25 - 2 ** -12  # 249.76 ms spent count as 249
    assert deadline.left_ms() == 251
    clock[0] = 100.5 - 2 ** -12
    assert deadline.left_ms() == 1 and not deadline.expired
    clock[0] = 100.5
    assert deadline.left_ms() == 0 and deadline.expired
    clock[0] = 101.5
    assert deadline.left_ms() == -1000 and deadline.expired


def test_a_deadline_is_a_frozen_value():
    deadline = Deadline(0.0, 10)
    with pytest.raises(dataclasses.FrozenInstanceError):
        deadline.budget_ms = 20  # type: ignore[misc]
    assert Deadline(0.0, 0).expired
