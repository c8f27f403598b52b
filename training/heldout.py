"""FIM tasks cut from the corpus's held-out files (never trained on): one whole line, or several.

Used by the training script's quick FIM exact-match check, and written as a FIM task file
(`python -m training.heldout --out FILE`) for `bench.quality`.
"""
from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from infill.paths import work_dir

PREFIX_CHARS = 2000  # context kept before the hole (the task stays small and fast to decode)
SUFFIX_CHARS = 600
MIN_LINE_CHARS = 12  # a line worth predicting: at least this many non-blank characters


def line_holes(val_files: Path, count: int, seed: int = 0, lines_per_hole: int = 1) -> list[dict]:
    """`count` tasks, each hiding `lines_per_hole` whole lines (indentation and newlines included)
    of a held-out file, the first of them worth predicting."""
    files = [json.loads(line) for line in val_files.read_text().splitlines()]
    rng = random.Random(seed)
    tasks = []
    while len(tasks) < count and files:
        entry = rng.choice(files)
        task = cut_hole(entry["text"], rng, lines_per_hole)
        if task is not None:
            tasks.append({"task_id": f"heldout/{len(tasks)}", "path": entry["path"], **task})
    return tasks


def cut_hole(text: str, rng: random.Random, lines_per_hole: int) -> dict | None:
    """One task (prompt, canonical_solution, suffix) hiding `lines_per_hole` whole lines of `text`,
    the first of them worth predicting; None when the text has no such line."""
    lines = text.splitlines(keepends=True)
    candidates = [i for i, line in enumerate(lines[:len(lines) - lines_per_hole + 1])
                  if len(line.strip()) >= MIN_LINE_CHARS and lines[i + lines_per_hole - 1].endswith("\n")]
    if not candidates:
        return None
    i = rng.choice(candidates)
    return {
        "prompt": "".join(lines[:i])[-PREFIX_CHARS:],
        "canonical_solution": "".join(lines[i:i + lines_per_hole]),
        "suffix": "".join(lines[i + lines_per_hole:])[:SUFFIX_CHARS],
    }


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--val-files", type=Path, default=work_dir() / "corpus" / "val_files.jsonl",
                   help="held-out files written by `infill corpus build`")
    p.add_argument("--count", type=int, default=200, help="number of tasks")
    p.add_argument("--seed", type=int, default=0, help="seed of the file and line choice")
    p.add_argument("--lines", type=int, default=1, help="whole lines each hole hides (default 1)")
    p.add_argument("--out", type=Path, required=True, help="FIM task file (.jsonl) to write")
    args = p.parse_args(argv)
    if args.lines < 1:
        p.error(f"--lines must be at least 1, got {args.lines}")
    tasks = line_holes(args.val_files, args.count, args.seed, args.lines)
    args.out.write_text("".join(json.dumps(t) + "\n" for t in tasks))
    print(f"wrote {len(tasks)} tasks to {args.out}")


if __name__ == "__main__":
    main()
