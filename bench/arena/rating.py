"""Bradley-Terry ranking of backends from battles, with a top-slot and a latency term (pure numpy).

Each battle is a row: the backend shown on top, the one below, the top's outcome (1 win, 0.5 tie,
0 loss) and the latency difference top - bottom in ms. The model is a logistic regression:

    P(top wins) = sigmoid(beta[top] - beta[bottom] + top_bias + latency * z(latency difference))

fitted by maximum likelihood (Newton's method; a tie counts half a win) on the unique rows
weighted by their counts, as Copilot Arena's FastChat fit does. `top_bias` is the pull of the top
slot between equal backends (Copilot Arena saw 82% of picks go to the top), `latency` the change in
log-odds per standard deviation of the latency difference (0 where every battle had the same
difference). A small ridge on the strengths keeps a backend that never lost finite and fixes their
sum at zero. Scores are on the Elo scale (1000 + 400 / ln 10 * beta). 95% intervals come from
bootstrap rounds that redraw the row counts from a multinomial; rank = 1 + the number of backends
whose lower bound is above this one's upper bound.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

ELO_BASE = 1000.0
ELO_SCALE = 400.0 / math.log(10.0)  # log-odds to Elo points
RIDGE = 1e-3  # on the strengths only
NEWTON_STEPS = 100
TOLERANCE = 1e-9
MIN_BOOTSTRAP_ROUNDS = 100


@dataclass(frozen=True, slots=True)
class Row:
    top: str
    bottom: str
    outcome: float  # the top's: 1 win, 0.5 tie, 0 loss
    latency_diff_ms: float = 0.0  # top's latency minus bottom's


@dataclass(frozen=True, slots=True)
class Fit:
    names: list[str]
    strengths: np.ndarray  # (M,) log-odds, summing to zero
    top_bias: float  # log-odds
    latency: float  # log-odds per standard deviation of the latency difference


@dataclass(frozen=True, slots=True)
class Interval:
    estimate: float
    low: float
    high: float


@dataclass(frozen=True, slots=True)
class Ranking:
    scores: dict[str, Interval]  # Elo-scale score per backend
    ranks: dict[str, int]
    top_share: Interval  # P(top wins) between equal backends at equal latency
    latency: Interval  # log-odds per standard deviation of the latency difference
    battles: int
    rounds: int


def design(rows: list[Row], names: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The features (N, M + 2) of each row (+1 top, -1 bottom, 1 for the top slot, the
    standardized latency difference) and the outcomes (N,)."""
    index = {name: i for i, name in enumerate(names)}
    x = np.zeros((len(rows), len(names) + 2))
    for r, row in enumerate(rows):
        x[r, index[row.top]] += 1.0
        x[r, index[row.bottom]] -= 1.0
    x[:, -2] = 1.0
    diffs = np.array([row.latency_diff_ms for row in rows], dtype=float)
    spread = diffs.std() if len(rows) else 0.0
    x[:, -1] = diffs / spread if spread > 1e-9 else 0.0
    return x, np.array([row.outcome for row in rows], dtype=float)


def newton(x: np.ndarray, y: np.ndarray, weights: np.ndarray, n_models: int) -> np.ndarray:
    """Maximum-likelihood coefficients of the logistic model with soft labels `y` and row weights."""
    coef = np.zeros(x.shape[1])
    ridge = np.zeros(x.shape[1])
    ridge[:n_models] = RIDGE
    ridge[n_models:] = 1e-9  # a covariate without variance stays at zero
    for _ in range(NEWTON_STEPS):
        p = 1.0 / (1.0 + np.exp(-(x @ coef)))
        grad = x.T @ (weights * (p - y)) + ridge * coef
        hessian = (x * (weights * p * (1.0 - p))[:, None]).T @ x + np.diag(ridge)
        step = np.linalg.solve(hessian, grad)
        coef -= step
        if np.abs(step).max() < TOLERANCE:
            break
    return coef


def fit(rows: list[Row], names: list[str] | None = None, counts: np.ndarray | None = None) -> Fit:
    """The Bradley-Terry fit of `rows` (each weighted by `counts`, default 1)."""
    names = names or sorted({row.top for row in rows} | {row.bottom for row in rows})
    x, y = design(rows, names)
    weights = np.ones(len(rows)) if counts is None else np.asarray(counts, dtype=float)
    coef = newton(x, y, weights, len(names))
    strengths = coef[:len(names)] - coef[:len(names)].mean()
    return Fit(names, strengths, float(coef[-2]), float(coef[-1]))


def unique_rows(rows: list[Row]) -> tuple[list[Row], np.ndarray]:
    """The distinct rows and how often each occurs."""
    counted: dict[Row, int] = {}
    for row in rows:
        counted[row] = counted.get(row, 0) + 1
    return list(counted), np.array(list(counted.values()), dtype=float)


def elo(strength: float) -> float:
    return ELO_BASE + ELO_SCALE * strength


def sigmoid(value: float) -> float:
    return 1.0 / (1.0 + math.exp(-value))


def interval(estimate: float, samples: np.ndarray) -> Interval:
    low, high = np.percentile(samples, [2.5, 97.5])
    return Interval(float(estimate), float(low), float(high))


def ranks_of(scores: dict[str, Interval]) -> dict[str, int]:
    """1 + the number of backends whose lower bound is above this one's upper bound."""
    return {name: 1 + sum(other.low > mine.high for other in scores.values()) for name, mine in scores.items()}


def rank(rows: list[Row], rounds: int = 200, seed: int = 0) -> Ranking:
    """The fit of `rows` with bootstrap intervals (`rounds` >= 100) and ranks."""
    if rounds < MIN_BOOTSTRAP_ROUNDS:
        raise ValueError(f"bootstrap rounds must be at least {MIN_BOOTSTRAP_ROUNDS}, got {rounds}")
    if not rows:
        raise ValueError("no battles to rank: every pair was empty, identical or unanswered")
    distinct, counts = unique_rows(rows)
    names = sorted({row.top for row in rows} | {row.bottom for row in rows})
    point = fit(distinct, names, counts)
    rng = np.random.default_rng(seed)
    drawn = [fit(distinct, names, rng.multinomial(len(rows), counts / counts.sum())) for _ in range(rounds)]
    strengths = np.array([f.strengths for f in drawn])  # (rounds, M)
    scores = {name: interval(elo(point.strengths[i]), np.array([elo(s) for s in strengths[:, i]]))
              for i, name in enumerate(names)}
    top = interval(sigmoid(point.top_bias), np.array([sigmoid(f.top_bias) for f in drawn]))
    latency = interval(point.latency, np.array([f.latency for f in drawn]))
    return Ranking(scores, ranks_of(scores), top, latency, len(rows), rounds)
