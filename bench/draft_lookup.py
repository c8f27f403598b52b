"""Drafts alone, no model: how often the user's own code writes a held-out line exactly.

The repository is split by file and holes are cut in the held-out files as `bench.repo` cuts
them (same seed, same holes: whole lines and 3-line blocks); the train split's files are the
workspace (`completion.draft_corpus.DraftCorpus`) and the hole's own file is the open document.
For each hole `completion.draft_sources` gives its best draft; a sweep over the shortest key worth
a draft (`--min-key`, tokens) prints, per hole kind, the share of holes that get a draft, how
often those drafts are exact, and exact match over all holes (a hole without a draft counts as
missed). `--json` ends with one JSON object of every figure.

    python -m bench.draft_lookup --repo work/repos/cattrs --json
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from bench.quality import edit_similarity, exact_match, percentile
from bench.repo import BLOCK_LINES, RepoHole, cut_holes, split_files
from completion.draft_corpus import DraftCorpus
from completion.draft_sources import MIN_KEY_TOKENS, Key, candidates, ranked, worth_trying
from engine.wire.protocol import Mode
from training.repo_files import RepoError, gather

SWEEP = (4, 6, 8, 10, 12, 16, 20)  # shortest keys tried, in tokens


def mode_of(hole: RepoHole) -> str:
    return Mode.SINGLE_LINE if hole.lines == 1 else Mode.MULTI_LINE


def ranked_drafts(holes: Sequence[RepoHole], corpus: DraftCorpus) -> tuple[list[list], list[float]]:
    """Each hole's ranked (key tokens, draft) pairs, and each lookup's milliseconds."""
    found, elapsed = [], []
    for hole in holes:
        started = time.perf_counter()
        key = Key.of(hole.prefix)
        found.append(ranked(candidates(hole.prefix, hole.suffix, mode_of(hole), key, corpus, ()), key))
        elapsed.append((time.perf_counter() - started) * 1000.0)
    return found, elapsed


def figures(holes: Sequence[RepoHole], found: Sequence[list], min_key: int) -> dict:
    """With the shortest key `min_key`: the share of holes with a whole draft, how often those are
    exact, exact match and edit similarity over every hole (no draft: missed), and the share of
    holes whose draft has slots (the model's to fill: not scored here)."""
    sent = [worth_trying(pairs, min_key) for pairs in found]
    drafted = [(h, d[0]) for h, d in zip(holes, sent) if d and not d[0].slots]
    exact = sum(exact_match(d.text, h.expected) for h, d in drafted)
    similarity = sum(edit_similarity(d.text, h.expected) for h, d in drafted)
    count = max(1, len(holes))
    return {"min_key_tokens": min_key, "holes": len(holes), "drafted": len(drafted),
            "drafted_share": round(len(drafted) / count, 4),
            "draft_exact_share": round(exact / max(1, len(drafted)), 4),
            "exact_match": round(exact / count, 4), "edit_similarity": round(similarity / count, 4),
            "slotted_share": round(sum(bool(d and d[0].slots) for d in sent) / count, 4)}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.draft_lookup", description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, required=True, help="the repository's root folder")
    parser.add_argument("--held-out", type=float, default=0.25, help="share of the files held out (default 0.25)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the split and the holes (default 0)")
    parser.add_argument("--tasks", type=int, default=200, help="holes to cut, as bench.repo's --tasks (default 200)")
    parser.add_argument("--json", action="store_true", help="end with one JSON line of every figure")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        gathered = gather(args.repo)
    except RepoError as exc:
        parser.error(str(exc))
    split = split_files(gathered.files, args.held_out, args.seed)
    corpus = DraftCorpus()
    for file in split.train:
        corpus.put(file.path, file.text)
    holes = cut_holes(split.held_out, args.tasks, args.seed)
    found, elapsed = ranked_drafts(holes, corpus)
    summary = {"repo": args.repo.name, "held_out_files": len(split.held_out), "train_files": len(split.train),
               "default_min_key_tokens": MIN_KEY_TOKENS, "lookup_ms_p50": _rounded(percentile(elapsed, 50)),
               "lookup_ms_p99": _rounded(percentile(elapsed, 99))}
    for name, lines in (("single_line", 1), ("three_line", BLOCK_LINES)):
        kind = [i for i, h in enumerate(holes) if h.lines == lines]
        summary[name] = [figures([holes[i] for i in kind], [found[i] for i in kind], m) for m in SWEEP]
    print(table(summary))
    if args.json:
        print(json.dumps(summary))
    return 0


def table(summary: dict) -> str:
    rows = [f"{summary['repo']}: {summary['held_out_files']} held-out files, {summary['train_files']} in the "
            f"workspace, lookup p50 {summary['lookup_ms_p50']} ms, p99 {summary['lookup_ms_p99']} ms",
            f"{'holes':<12}{'min key':>8}{'drafted':>9}{'exact/draft':>13}{'exact':>8}{'edit sim':>10}"
            f"{'slotted':>9}"]
    for name in ("single_line", "three_line"):
        for f in summary[name]:
            rows.append(f"{name:<12}{f['min_key_tokens']:>8}{f['drafted_share']:>9.1%}"
                        f"{f['draft_exact_share']:>13.1%}{f['exact_match']:>8.1%}{f['edit_similarity']:>10.3f}"
                        f"{f['slotted_share']:>9.1%}")
    return "\n".join(rows)


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


if __name__ == "__main__":
    sys.exit(main())
