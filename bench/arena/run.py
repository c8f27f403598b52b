"""A run of the arena: every task, under every latency condition, in random battles; then the tallies.

Conditions: "wait_for_both" (each side has `wait_timeout_ms`; the slower one is waited for, as in
Copilot Arena) and, for "equal_budget", one per budget (both sides get the same deadline and answer
what they have then: the diffusion worker's anytime answer, the causal runner's text so far).
The summary holds, per condition, the win/tie/loss counts of each pair (overall and per task
set) and the pairs counted apart; and the ranking over all battles and per condition.
"""
from __future__ import annotations

import logging
import random
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict

from bench.arena.backends import Ask, Backend
from bench.arena.battles import BATTLE, Battle, draw, fight, pair_table
from bench.arena.config import ArenaConfig
from bench.arena.judges import SandboxJudge
from bench.arena.rating import Ranking, Row, rank

logger = logging.getLogger("bench.arena")

PROGRESS_EVERY = 20  # battles between progress lines on stderr


def conditions(config: ArenaConfig) -> list[tuple[str, int]]:
    """(name, deadline in ms) of each latency condition the config asks for."""
    s = config.settings
    found = [("wait_for_both", s.wait_timeout_ms)] if "wait_for_both" in s.latency else []
    if "equal_budget" in s.latency:
        found += [(f"{budget}ms", budget) for budget in s.budgets_ms]
    return found


def run_battles(config: ArenaConfig, backends: dict[str, Backend], task_sets: dict[str, list[dict]],
                tests: SandboxJudge) -> list[Battle]:
    """Every battle of the run, in order."""
    s = config.settings
    rng = random.Random(s.seed)
    table = pair_table([spec.name for spec in config.backends], config.pairs)
    battles: list[Battle] = []
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="arena-side") as pool:
        for condition, deadline_ms in conditions(config):
            grace = s.grace_ms if condition != "wait_for_both" else 0
            for task_set, tasks in task_sets.items():
                for task in tasks:
                    ask = Ask(task["prompt"], task["suffix"], s.mode, s.max_tokens, deadline_ms, grace)
                    for _ in range(s.battles_per_task):
                        battles.append(fight(pool, backends, draw(rng, table), task, task_set, condition,
                                             ask, tests))
                        if len(battles) % PROGRESS_EVERY == 0:
                            logger.info("%d battles (%s, %s)", len(battles), condition, task_set)
    return battles


def rows_of(battles: list[Battle]) -> list[Row]:
    return [Row(b.top.backend, b.bottom.backend, b.outcome, b.top.latency_ms - b.bottom.latency_ms)
            for b in battles if b.kind == BATTLE and b.outcome is not None]


def pair_key(a: str, b: str) -> str:
    return f"{a} vs {b}"


def tally(battles: list[Battle], order: list[str]) -> dict[str, dict[str, int]]:
    """Per pair (named in config order), the first backend's wins, the ties and its losses."""
    counts: dict[str, Counter] = {}
    position = {name: i for i, name in enumerate(order)}
    for b in battles:
        if b.kind != BATTLE:
            continue
        first, second = sorted((b.top.backend, b.bottom.backend), key=position.__getitem__)
        first_outcome = b.outcome if b.top.backend == first else 1.0 - b.outcome
        label = {1.0: "wins", 0.5: "ties", 0.0: "losses"}[first_outcome]
        counts.setdefault(pair_key(first, second), Counter())[label] += 1
    return {pair: {k: c[k] for k in ("wins", "ties", "losses")} for pair, c in counts.items()}


def apart(battles: list[Battle]) -> dict[str, int]:
    """Pairs that were no battle, by why; and the sides that gave no answer, by backend."""
    kinds = Counter(b.kind for b in battles if b.kind != BATTLE)
    unanswered = Counter(side.backend for b in battles for side in (b.top, b.bottom) if side.error)
    return {"empty": kinds["empty"], "identical": kinds["identical"], "no_answer_pairs": kinds["no_answer"],
            "no_answer_sides": dict(unanswered)}


def ranking_json(ranking: Ranking | None) -> dict | None:
    if ranking is None:
        return None
    return {"scores": {name: {**asdict(i), "rank": ranking.ranks[name]} for name, i in ranking.scores.items()},
            "top_share": asdict(ranking.top_share), "latency_per_sd": asdict(ranking.latency),
            "battles": ranking.battles, "rounds": ranking.rounds}


def safe_rank(battles: list[Battle], rounds: int, seed: int) -> Ranking | None:
    rows = rows_of(battles)
    return rank(rows, rounds, seed) if rows else None


def summarize(config: ArenaConfig, battles: list[Battle]) -> dict:
    """The run's JSON summary (the last line of `--json`)."""
    s = config.settings
    order = [spec.name for spec in config.backends]
    per_condition = {}
    for condition, _ in conditions(config):
        mine = [b for b in battles if b.condition == condition]
        sets = sorted({b.task_set for b in mine})
        per_condition[condition] = {
            "pairs": tally(mine, order),
            "sets": {name: tally([b for b in mine if b.task_set == name], order) for name in sets},
            "apart": apart(mine),
            "backends": {name: side_stats(mine, name) for name in order},
            "ranking": ranking_json(safe_rank(mine, s.rounds, s.seed)),
        }
    return {"backends": order, "battles": len(battles), "ranking": ranking_json(safe_rank(battles, s.rounds, s.seed)),
            "per_condition": per_condition, "median_latency_ms": median_latencies(battles)}


def mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def side_stats(battles: list[Battle], name: str) -> dict:
    """What one backend's answers were like under a condition, battles or not: how many, how many
    without an answer, the test pass rate and the reference exact match and similarity, forward
    passes, characters and median latency."""
    sides = [side for b in battles for side in (b.top, b.bottom) if side.backend == name]
    scored = [side.score for side in sides if side.score is not None]
    answered = [side for side in sides if side.error is None]
    latencies = sorted(side.latency_ms for side in answered)
    return {"sides": len(sides), "no_answer": len(sides) - len(answered),
            "pass_rate": mean([float(s["passed"]) for s in scored if "passed" in s]),
            "exact": mean([float(s["exact"]) for s in scored if "exact" in s]),
            "similarity": mean([s["similarity"] for s in scored if "similarity" in s]),
            "forward_passes": mean([float(s.forward_passes) for s in answered if s.forward_passes is not None]),
            "chars": mean([float(s.chars) for s in answered]),
            "median_latency_ms": latencies[len(latencies) // 2] if latencies else None}


def median_latencies(battles: list[Battle]) -> dict[str, float]:
    """Each backend's median latency over the sides it answered."""
    latencies: dict[str, list[float]] = {}
    for b in battles:
        for side in (b.top, b.bottom):
            if side.error is None:
                latencies.setdefault(side.backend, []).append(side.latency_ms)
    return {name: round(sorted(v)[len(v) // 2], 1) for name, v in latencies.items()}
