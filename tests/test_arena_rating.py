"""The Bradley-Terry fit recovers known strengths, a top-slot bias and a latency effect from
simulated battles, inside its bootstrap intervals."""
from __future__ import annotations

import math

import numpy as np
import pytest

from bench.arena.rating import ELO_BASE, ELO_SCALE, Interval, Row, rank, ranks_of, sigmoid

TRUE = {"a": -0.6, "b": 0.0, "c": 0.6}  # log-odds, summing to zero


def simulate(n: int, top_bias: float, latency_per_sd: float = 0.0, seed: int = 1) -> list[Row]:
    rng = np.random.default_rng(seed)
    names = list(TRUE)
    rows = []
    for _ in range(n):
        top, bottom = rng.choice(names, size=2, replace=False)
        diff = float(rng.normal(0.0, 100.0))  # ms; its standard deviation is 100
        logit = TRUE[top] - TRUE[bottom] + top_bias + latency_per_sd * diff / 100.0
        rows.append(Row(str(top), str(bottom), float(rng.random() < sigmoid(logit)), diff))
    return rows


def test_the_fit_recovers_strengths_and_the_top_slot_bias_within_its_intervals():
    top_bias = math.log(0.82 / 0.18)  # Copilot Arena's 82% of picks on top
    ranking = rank(simulate(4000, top_bias), rounds=100, seed=3)
    for name, strength in TRUE.items():
        score = ranking.scores[name]
        assert score.low <= ELO_BASE + ELO_SCALE * strength <= score.high, (name, score)
    assert ranking.top_share.low <= 0.82 <= ranking.top_share.high
    assert ranking.ranks == {"c": 1, "b": 2, "a": 3}
    assert ranking.latency.low <= 0.0 <= ranking.latency.high  # no latency effect was simulated


def test_a_latency_penalty_is_found_with_its_sign():
    ranking = rank(simulate(4000, 0.0, latency_per_sd=-0.5, seed=2), rounds=100, seed=4)
    assert ranking.latency.high < 0.0
    assert ranking.latency.low <= -0.5 <= ranking.latency.high
    assert ranking.top_share.low <= 0.5 <= ranking.top_share.high


def test_ties_count_half_and_equal_backends_share_a_rank():
    rows = [Row("x", "y", 0.5), Row("y", "x", 0.5)] * 50
    ranking = rank(rows, rounds=100)
    assert ranking.scores["x"].estimate == pytest.approx(ELO_BASE, abs=1e-6)
    assert ranking.ranks == {"x": 1, "y": 1}


def test_a_backend_that_never_loses_stays_finite():
    rows = [Row("x", "y", 1.0), Row("y", "x", 0.0)] * 30
    ranking = rank(rows, rounds=100)
    assert math.isfinite(ranking.scores["x"].estimate) and ranking.ranks == {"x": 1, "y": 2}


def test_ranks_count_the_backends_clearly_above():
    scores = {"p": Interval(1100, 1080, 1120), "q": Interval(1050, 1030, 1090), "r": Interval(900, 880, 1020)}
    assert ranks_of(scores) == {"p": 1, "q": 1, "r": 3}


def test_bad_input_is_refused_with_the_reason():
    with pytest.raises(ValueError, match="at least 100"):
        rank([Row("x", "y", 1.0)], rounds=10)
    with pytest.raises(ValueError, match="no battles"):
        rank([])
