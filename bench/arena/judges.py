"""Judges: which of two answers to a task is better (1 the top's win, 0.5 a tie, 0 its loss).

- tests: for a task with `test` and `entry_point`, each answer's program runs in `bench.sandbox`
  as `bench.quality` runs it; passing beats failing, and two passes or two failures tie. Verdicts
  are kept per (task, text), since deterministic backends repeat their answers.
- reference: exact match with `canonical_solution` first (lines stripped of trailing whitespace,
  as `bench.quality` has it), then edit similarity; equal scores tie.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field

from bench.quality import Judge, edit_similarity, exact_match, has_tests, judging_program
from bench.sandbox import run_program


def outcome(top_score: tuple, bottom_score: tuple) -> float:
    """The top's outcome from two comparable scores."""
    if top_score == bottom_score:
        return 0.5
    return 1.0 if top_score > bottom_score else 0.0


def reference_score(task: dict, text: str) -> tuple[bool, float]:
    """Exact match, then edit similarity with the reference middle."""
    reference = task["canonical_solution"]
    return exact_match(text, reference), round(edit_similarity(text, reference), 6)


@dataclass(slots=True)
class SandboxJudge:
    limits: Judge = field(default_factory=Judge)
    verdicts: dict[tuple[str, str], bool] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def passes(self, task: dict, text: str) -> bool:
        key = (task["task_id"], text)
        with self.lock:
            if key in self.verdicts:
                return self.verdicts[key]
        result = run_program(judging_program(task, text), self.limits.time_limit_s, self.limits.memory_bytes)
        with self.lock:
            self.verdicts[key] = result.passed
        return result.passed


def judge_name(task: dict) -> str:
    """The judge a task gets: tests when it has them, else the reference."""
    return "tests" if has_tests(task) else "reference"


def side_score(task: dict, text: str, tests: SandboxJudge) -> dict:
    """One answer's scores under the task's judge: {"passed"} or {"exact", "similarity"}."""
    if judge_name(task) == "tests":
        return {"passed": tests.passes(task, text)}
    exact, similarity = reference_score(task, text)
    return {"exact": exact, "similarity": similarity}


def comparable(score: dict) -> tuple:
    """A score as a tuple that orders answers: passing, else exact match then similarity."""
    return (score["passed"],) if "passed" in score else (score["exact"], score["similarity"])
