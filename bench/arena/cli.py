"""The arena's command line.

    python -m bench.arena --config bench/arena/example.toml --tasks PATH [--tasks PATH ...]
                          [--sample N --seed S] [--out BATTLES.jsonl] [--plot FILE.png] [--json]
    python -m bench.arena leaderboard [--votes PATH | --battles FILE.jsonl] [--plot FILE.png]

A run starts (or connects to) every backend of the config, fights the battles, prints the
leaderboard and the per-condition tallies, and with `--json` ends with one JSON object: the
ranking with its intervals and, per condition, the win/tie/loss counts of each pair.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import logging
import shlex
import sys
from dataclasses import asdict
from pathlib import Path

from bench.arena import leaderboard
from bench.arena.backends import Backend, open_backend
from bench.arena.config import ArenaConfig, ConfigError, load_config
from bench.arena.judges import SandboxJudge
from bench.arena.rating import rank
from bench.arena.run import median_latencies, rows_of, run_battles, summarize
from bench.quality import load_tasks, select_tasks, set_name
from engine.launch import WorkerStartError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.arena", description=__doc__.split("\n")[0],
                                     epilog="`python -m bench.arena leaderboard --help` for the leaderboard.")
    parser.add_argument("--config", type=Path, required=True, help="the arena's TOML file (bench/arena/example.toml)")
    parser.add_argument("--tasks", type=Path, action="append", required=True,
                        help="FIM tasks (.jsonl or .jsonl.gz, FORMATS.md); repeat for several sets")
    parser.add_argument("--sample", type=int, default=None, help="a seeded random sample of N tasks per set")
    parser.add_argument("--limit", type=int, default=None, help="the first N tasks of each set")
    parser.add_argument("--seed", type=int, default=0, help="seed of --sample")
    parser.add_argument("--out", type=Path, default=None, help="write every battle here, one JSON object a line")
    parser.add_argument("--plot", type=Path, default=None, help="write the leaderboard's PNG here")
    parser.add_argument("--json", action="store_true", help="end with one JSON object (the summary)")
    return parser


def read_sets(parser: argparse.ArgumentParser, args: argparse.Namespace) -> dict[str, list[dict]]:
    sets = {}
    for path in args.tasks:
        try:
            tasks = select_tasks(load_tasks(path), args.limit, args.sample, args.seed)
        except (OSError, ValueError) as exc:
            parser.error(f"--tasks {path}: {exc}")
        if not tasks:
            parser.error(f"--tasks {path} holds no tasks")
        sets[set_name(path)] = tasks
    return sets


@contextlib.contextmanager
def opened(config: ArenaConfig):
    """Every backend of the config, closed (their workers stopped) after."""
    backends: dict[str, Backend] = {}
    try:
        for spec in config.backends:
            logging.getLogger("bench.arena").info("starting backend %s (%s)", spec.name, spec.kind)
            backends[spec.name] = open_backend(spec)
        yield backends
    finally:
        for backend in backends.values():
            backend.close()


def print_tallies(summary: dict) -> None:
    for condition, data in summary["per_condition"].items():
        print(f"\n{condition}: wins / ties / losses of the first backend of each pair; apart: {data['apart']}")
        for pair, counts in data["pairs"].items():
            per_set = "; ".join(f"{name} {c[pair]['wins']}/{c[pair]['ties']}/{c[pair]['losses']}"
                                for name, c in data["sets"].items() if pair in c)
            print(f"  {pair}: {counts['wins']}/{counts['ties']}/{counts['losses']}  ({per_set})")
        for name, stats in data["backends"].items():
            print(f"  {name}: " + ", ".join(f"{key} {value}" for key, value in stats.items()))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["leaderboard"]:
        return leaderboard.main(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        config = load_config(args.config)
    except ConfigError as exc:
        parser.error(str(exc))
    sets = read_sets(parser, args)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(name)s: %(message)s")
    try:
        with opened(config) as backends:
            battles = run_battles(config, backends, sets, SandboxJudge())
    except (WorkerStartError, OSError) as exc:
        print(f"python -m bench.arena: a backend did not start: {exc}", file=sys.stderr)
        return 1
    if args.out is not None:
        args.out.write_text("".join(json.dumps(asdict(b)) + "\n" for b in battles), encoding="utf-8")
    summary = summarize(config, battles)
    summary["command"] = shlex.join(["python", "-m", "bench.arena", *argv])
    rows = rows_of(battles)
    if rows:
        ranking = rank(rows, config.settings.rounds, config.settings.seed)
        print(leaderboard.markdown(ranking, median_latencies(battles)))
        if args.plot is not None:
            leaderboard.plot(ranking, median_latencies(battles), args.plot, f"{len(rows)} battles, all conditions")
    else:
        print("no battles: every pair was empty, identical or unanswered")
    print_tallies(summary)
    if args.json:
        print(json.dumps(summary))
    return 0
