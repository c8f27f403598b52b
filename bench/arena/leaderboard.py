"""The leaderboard: a ranking as a markdown table and as a PNG (score and interval against median
latency, one point per backend), from a run's battles or from the editor's vote store.

    python -m bench.arena leaderboard [--votes PATH | --battles FILE.jsonl] [--plot FILE.png] [--json]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

from bench.arena.rating import MIN_BOOTSTRAP_ROUNDS, Ranking, Row, rank
from lsp_server.arena_votes import DEFAULT_VOTES_PATH, Vote, VoteStore, VoteStoreError

PICK_OUTCOME = {"top": 1.0, "bottom": 0.0}  # "neither" is no battle


def vote_rows(votes: list[Vote]) -> list[Row]:
    return [Row(v.top, v.bottom, PICK_OUTCOME[v.pick], v.top_latency_ms - v.bottom_latency_ms)
            for v in votes if v.pick in PICK_OUTCOME]


def vote_latencies(votes: list[Vote]) -> dict[str, float]:
    latencies: dict[str, list[float]] = {}
    for v in votes:
        latencies.setdefault(v.top, []).append(v.top_latency_ms)
        latencies.setdefault(v.bottom, []).append(v.bottom_latency_ms)
    return {name: statistics.median(values) for name, values in latencies.items()}


def battle_rows(path: Path) -> tuple[list[Row], dict[str, float]]:
    """Rows and median latencies from a run's `--out` file (one battle per line)."""
    rows, latencies = [], {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            battle = json.loads(line)
            top, bottom = battle["top"], battle["bottom"]
            for side in (top, bottom):
                if side["error"] is None:
                    latencies.setdefault(side["backend"], []).append(side["latency_ms"])
            if battle["kind"] == "battle":
                rows.append(Row(top["backend"], bottom["backend"], battle["outcome"],
                                top["latency_ms"] - bottom["latency_ms"]))
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{path}:{number}: not a battle record of `python -m bench.arena --out` ({exc})") from None
    return rows, {name: statistics.median(v) for name, v in latencies.items()}


def markdown(ranking: Ranking, latencies: dict[str, float], wins: dict[str, dict[str, int]] | None = None) -> str:
    """The leaderboard table, best first."""
    lines = ["| rank | backend | score | 95% interval | median latency (ms) |",
             "| ---: | --- | ---: | --- | ---: |"]
    for name, score in sorted(ranking.scores.items(), key=lambda item: -item[1].estimate):
        latency = latencies.get(name)
        lines.append(f"| {ranking.ranks[name]} | {name} | {score.estimate:.0f} | {score.low:.0f} .. {score.high:.0f} "
                     f"| {'-' if latency is None else f'{latency:.0f}'} |")
    top, lat = ranking.top_share, ranking.latency
    lines.append("")
    lines.append(f"{ranking.battles} battles, {ranking.rounds} bootstrap rounds; top slot wins "
                 f"{top.estimate:.0%} between equals ({top.low:.0%} .. {top.high:.0%}); latency "
                 f"{lat.estimate:+.2f} log-odds per SD of the difference ({lat.low:+.2f} .. {lat.high:+.2f})")
    return "\n".join(lines)


def plot(ranking: Ranking, latencies: dict[str, float], path: Path, title: str) -> None:
    """Score with its interval against median latency, one point per backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(6.4, 4.2), dpi=120)
    for name, score in ranking.scores.items():
        x = latencies.get(name, 0.0)
        axes.errorbar([x], [score.estimate], yerr=[[score.estimate - score.low], [score.high - score.estimate]],
                      fmt="o", capsize=4)
        axes.annotate(name, (x, score.estimate), textcoords="offset points", xytext=(6, 6), fontsize=8)
    axes.set_xlabel("median latency (ms)")
    axes.set_ylabel("Bradley-Terry score (Elo scale), 95% interval")
    axes.set_title(title, fontsize=10)
    axes.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.arena leaderboard",
                                     description="Rank the backends from the editor's votes or a run's battles.")
    parser.add_argument("--votes", type=Path, default=DEFAULT_VOTES_PATH,
                        help=f"the vote store the language server writes (default {DEFAULT_VOTES_PATH})")
    parser.add_argument("--battles", type=Path, default=None,
                        help="a run's battles (`python -m bench.arena --out FILE`) instead of the votes")
    parser.add_argument("--rounds", type=int, default=200, help="bootstrap rounds (at least 100)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the bootstrap")
    parser.add_argument("--plot", type=Path, default=None, help="write the PNG here")
    parser.add_argument("--json", action="store_true", help="end with one JSON object")
    return parser


def main(argv: list[str]) -> int:
    from bench.arena.run import ranking_json

    parser = build_parser()
    args = parser.parse_args(argv)
    if args.rounds < MIN_BOOTSTRAP_ROUNDS:
        parser.error(f"--rounds must be at least {MIN_BOOTSTRAP_ROUNDS}")
    try:
        if args.battles is not None:
            rows, latencies = battle_rows(args.battles)
        else:
            votes = VoteStore(args.votes).votes()
            rows, latencies = vote_rows(votes), vote_latencies(votes)
        ranking = rank(rows, args.rounds, args.seed)
    except (OSError, ValueError, VoteStoreError) as exc:
        print(f"python -m bench.arena leaderboard: {exc}", file=sys.stderr)
        return 1
    print(markdown(ranking, latencies))
    if args.plot is not None:
        plot(ranking, latencies, args.plot, f"{ranking.battles} battles")
    if args.json:
        print(json.dumps({"ranking": ranking_json(ranking), "median_latency_ms": latencies}))
    return 0
