"""Battles: a random pair of backends answers one task at once, shown in a random order, and a judge
picks.

The pair is drawn uniformly, or from the config's table of pair weights; the order is swapped with
probability 0.5 (who is on top); both sides are asked at the same moment, each on a thread of its
own. A pair where both are empty, or both give the same text, is no battle and is counted apart,
as Copilot Arena shows such a pair as one completion; so is a pair where neither side answered.
A side with no answer (down, slow past its budget, garbage) loses to one that answered. Each
side's latency, length and forward passes are kept.
"""
from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from bench.arena.backends import Answer, Ask, Backend
from bench.arena.config import PairWeight
from bench.arena.judges import SandboxJudge, comparable, judge_name, outcome, side_score

BATTLE, EMPTY, IDENTICAL, NO_ANSWER = "battle", "empty", "identical", "no_answer"


@dataclass(frozen=True, slots=True)
class Side:
    backend: str
    text: str
    latency_ms: float
    chars: int
    forward_passes: int | None
    error: str | None
    score: dict | None  # the judge's: {"passed"} or {"exact", "similarity"}; None without an answer

    @classmethod
    def of(cls, backend: str, answer: Answer, score: dict | None) -> Side:
        return cls(backend, answer.text, round(answer.latency_ms, 2), len(answer.text),
                   answer.forward_passes, answer.error, score)


@dataclass(frozen=True, slots=True)
class Battle:
    task_id: str
    task_set: str
    condition: str  # "wait_for_both" or "<budget>ms"
    judge: str  # "tests" or "reference"
    top: Side
    bottom: Side
    kind: str  # battle | empty | identical | no_answer
    outcome: float | None  # the top's, for a battle


def pair_table(names: list[str], weights: tuple[PairWeight, ...]) -> list[tuple[tuple[str, str], float]]:
    """Every unordered pair with its weight: the table's, else 1 each."""
    if weights:
        return [((w.a, w.b), w.weight) for w in weights]
    return [((a, b), 1.0) for i, a in enumerate(names) for b in names[i + 1:]]


def draw(rng: random.Random, table: list[tuple[tuple[str, str], float]]) -> tuple[str, str]:
    """A pair drawn by weight, then shown in a random order: (top, bottom)."""
    pairs, weights = zip(*table)
    a, b = rng.choices(pairs, weights=weights)[0]
    return (b, a) if rng.random() < 0.5 else (a, b)


def ask_both(pool: ThreadPoolExecutor, top: Backend, bottom: Backend, ask: Ask) -> tuple[Answer, Answer]:
    """Both sides asked at once; each answer is waited for (bounded by its own deadline)."""
    futures = pool.submit(top.answer, ask), pool.submit(bottom.answer, ask)
    return futures[0].result(), futures[1].result()


def kind_of(top: Answer, bottom: Answer) -> str:
    if not top.answered and not bottom.answered:
        return NO_ANSWER
    if top.answered and bottom.answered:
        if not top.text.strip() and not bottom.text.strip():
            return EMPTY
        if top.text.strip() == bottom.text.strip():
            return IDENTICAL
    return BATTLE


def judged(top: Answer, bottom: Answer, top_score: dict | None, bottom_score: dict | None) -> float:
    """The top's outcome: a side without an answer loses; else the task's judge decides."""
    if top.answered != bottom.answered:
        return 1.0 if top.answered else 0.0
    return outcome(comparable(top_score), comparable(bottom_score))


def fight(pool: ThreadPoolExecutor, backends: dict[str, Backend], pair: tuple[str, str], task: dict,
          task_set: str, condition: str, ask: Ask, tests: SandboxJudge) -> Battle:
    """One battle of `pair` (top, bottom) on `task`; every answer is scored, battle or not."""
    top_name, bottom_name = pair
    top, bottom = ask_both(pool, backends[top_name], backends[bottom_name], ask)
    top_score, bottom_score = (side_score(task, a.text, tests) if a.answered else None for a in (top, bottom))
    kind = kind_of(top, bottom)
    result = judged(top, bottom, top_score, bottom_score) if kind == BATTLE else None
    return Battle(task["task_id"], task_set, condition, judge_name(task), Side.of(top_name, top, top_score),
                  Side.of(bottom_name, bottom, bottom_score), kind, result)
