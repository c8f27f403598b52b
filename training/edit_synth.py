"""Next-edit examples synthesized from Python source: renames, signature changes, repeated
literals and attributes, and negatives, in the next-edit task format of `shared/data/FORMATS.md`.

Each example is one edit the user made (`original` -> `edited`, the cursor at its end) and the file
after every follow-up edit (`expected`; equal to `edited` for the negatives). An example is kept
only when `edited` and `expected` parse with no more errors than `original`.

Two uses, one record shape:
  held-out set:  python -m training.edit_synth --val-files work/corpus/val_files.jsonl --count 200 --out FILE
  training data: python -m training.edit_synth --files DIR_OR_WHEEL... --count N --out FILE
                 python -m training.edit_synth --train-bin work/corpus/train.bin --count N --out FILE
Training sources are refused when they are validation files (`training.corpus.is_validation`), held-out
texts (`--exclude-val`), or share a fingerprint with the evaluation sets (`training.evalguard`).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import zipfile
from collections import Counter
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path

import numpy as np

from infill.paths import REPO_ROOT
from infill.tokenizer import CodeTokenizer
from training.corpus import drop_reason, is_permissive, is_validation, wheel_license
from training.edit_kinds import KINDS, NEGATIVE_KINDS, Candidate, Edit, FileContext
from training.edit_sites import error_count, names_in, parse
from training.evalguard import EvalGuard

MAX_FILE_CHARS = 60_000  # larger files make slow tasks; the held-out set stays quick to score
PER_FILE_PER_KIND = 2  # examples of one kind from one file: the set spans many files


def apply(source: bytes, edits: Iterable[Edit]) -> bytes:
    """`source` with non-overlapping edits applied (raises ValueError when two overlap)."""
    out, at = [], 0
    for edit in sorted(edits, key=lambda e: (e.start, e.end)):
        if edit.start < at:
            raise ValueError(f"edits overlap at byte {edit.start}")
        out += [source[at:edit.start], edit.new]
        at = edit.end
    return b"".join(out + [source[at:]])


def make_example(source: bytes, kind: str, candidate: Candidate, base_errors: int) -> dict | None:
    """The example's texts and cursor, or None when an edit is a no-op, edits overlap, or a text
    gains a syntax error."""
    event, follow = candidate
    try:
        edited, expected = apply(source, [event]), apply(source, [event, *follow])
    except ValueError:
        return None
    if edited == source or (kind not in NEGATIVE_KINDS and expected == edited):
        return None
    if any(error_count(parse(t)) > base_errors for t in {edited, expected}):
        return None
    cursor = len(edited[:event.start + len(event.new)].decode())
    return {"original": source.decode(), "edited": edited.decode(), "cursor": cursor,
            "expected": expected.decode(), "kind": kind}


def examples_for_file(path: str, text: str, seed: int, kinds: list[str],
                      per_kind: int = PER_FILE_PER_KIND) -> list[dict]:
    """Up to `per_kind` examples of each kind from one file, the same for the same seed and path."""
    source = text.encode()
    tree = parse(source)
    base_errors, taken = error_count(tree), names_in(tree.root_node)
    examples = []
    for kind in kinds:
        rng = random.Random(f"{seed}/{path}/{kind}")
        ctx = FileContext(source, tree.root_node, taken, rng)
        candidates = [c for c in KINDS[kind](ctx) if c is not None]
        rng.shuffle(candidates)
        made = 0
        for candidate in candidates:
            example = make_example(source, kind, candidate, base_errors)
            if example is not None:
                examples.append({"path": path, **example})
                made += 1
                if made == per_kind:
                    break
    return examples


def synthesize(sources: Iterable[tuple[str, str]], count: int, seed: int, kinds: list[str]) -> list[dict]:
    """`count` examples, the kinds balanced (round robin) as far as the sources allow; reading
    stops once every kind has its share."""
    pools: dict[str, list[dict]] = {k: [] for k in kinds}
    share = -(-count // len(kinds))
    for path, text in sources:
        for example in examples_for_file(path, text, seed, kinds):
            pools[example["kind"]].append(example)
        if all(len(pool) >= share for pool in pools.values()):
            break
    rng = random.Random(seed)
    for kind in kinds:
        rng.shuffle(pools[kind])
    chosen = []
    while len(chosen) < count and any(pools.values()):
        for kind in kinds:
            if pools[kind] and len(chosen) < count:
                chosen.append(pools[kind].pop())
    rng.shuffle(chosen)
    return [{"task_id": f"next_edit/{i}", **example} for i, example in enumerate(chosen)]


def held_out_sources(val_files: Path, seed: int) -> list[tuple[str, str]]:
    """The corpus's validation files, in a seeded order, each no larger than MAX_FILE_CHARS."""
    rows = [json.loads(line) for line in val_files.read_text().splitlines() if line.strip()]
    files = [(r["path"], r["text"]) for r in rows if len(r["text"]) <= MAX_FILE_CHARS]
    random.Random(seed).shuffle(files)
    return files


def _file_refs(paths: list[Path]) -> Iterator[tuple[str, Path, str | None]]:
    """(corpus-style name, file or wheel, member) of every `.py` under the given paths; a wheel's
    files are named `{package}/{member}` as the corpus names them, and only permissive ones count."""
    for path in paths:
        if path.suffix == ".whl":
            with zipfile.ZipFile(path) as zf:
                meta = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
                if not is_permissive(wheel_license(zf.read(meta).decode("utf-8", "replace"))):
                    continue
                package = path.name.split("-")[0]
                yield from ((f"{package}/{m}", path, m) for m in zf.namelist() if m.endswith(".py"))
        elif path.is_dir():
            yield from ((str(f.relative_to(path)), f, None) for f in sorted(path.rglob("*.py")))
        else:
            yield path.name, path, None


def training_sources(paths: list[Path], guard: EvalGuard, seed: int, val_percent: float = 1.0,
                     held_out: set[str] = frozenset(), refused: Counter | None = None) -> Iterator[tuple[str, str]]:
    """(name, text) of every usable training file, in a seeded order. A file is refused (and
    counted in `refused` by reason) when the corpus would drop it, it is a validation file, its
    text is a held-out file's (sha256 in `held_out`), or it overlaps the evaluation sets."""
    refused = Counter() if refused is None else refused
    refs = list(_file_refs(paths))
    random.Random(seed).shuffle(refs)
    for name, path, member in refs:
        if member is None:
            raw = path.read_bytes()
        else:
            with zipfile.ZipFile(path) as zf:
                raw = zf.read(member)
        reason = drop_reason(raw)
        if reason is None and is_validation(name, val_percent):
            reason = "validation file"
        if reason is None and hashlib.sha256(raw).hexdigest() in held_out:
            reason = "held-out text"
        if reason is None and guard.overlaps(raw.decode()):
            reason = "overlaps evaluation sets"
        if reason is None and len(raw) > MAX_FILE_CHARS:
            reason = "too large"
        if reason:
            refused[reason] += 1
            continue
        yield name, raw.decode()


def token_file_sources(train_bin: Path, tokenizer: Path, guard: EvalGuard, seed: int,
                       held_out: set[str] = frozenset(), refused: Counter | None = None) -> Iterator[tuple[str, str]]:
    """(name, text) of the files of a corpus's training token file (`train.bin`: each file opens
    with `<|file|>`), in a seeded order, refused as `training_sources` refuses files."""
    refused = Counter() if refused is None else refused
    tok = CodeTokenizer(tokenizer)
    ids = np.memmap(train_bin, dtype=np.uint16, mode="r")
    starts = np.append(np.flatnonzero(ids == tok.file_id), len(ids))
    order = np.random.default_rng(seed).permutation(len(starts) - 1)
    for index in order:
        text = tok.decode(ids[starts[index] + 1:starts[index + 1]].tolist())
        raw = text.encode()
        reason = ("held-out text" if hashlib.sha256(raw).hexdigest() in held_out
                  else "overlaps evaluation sets" if guard.overlaps(text)
                  else "too large" if len(raw) > MAX_FILE_CHARS else None)
        if reason:
            refused[reason] += 1
            continue
        yield f"train/{index}.py", text


def held_out_hashes(val_files: Path | None) -> set[str]:
    if val_files is None or not val_files.is_file():
        return set()
    rows = (json.loads(line) for line in val_files.read_text().splitlines() if line.strip())
    return {hashlib.sha256(r["text"].encode()).hexdigest() for r in rows}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m training.edit_synth", description=__doc__.splitlines()[0])
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--files", type=Path, nargs="+",
                        help="training sources: folders of .py files, .py files or wheels")
    source.add_argument("--val-files", type=Path, help="held-out set: the corpus's val_files.jsonl")
    source.add_argument("--train-bin", type=Path, help="training sources: a corpus's train.bin (with --tokenizer)")
    p.add_argument("--tokenizer", type=Path, help="the tokenizer of --train-bin (default: beside it)")
    p.add_argument("--count", type=int, default=200, help="number of examples to write")
    p.add_argument("--seed", type=int, default=0, help="seed of the file order and every choice")
    p.add_argument("--out", type=Path, required=True, help="next-edit task file (.jsonl) to write")
    p.add_argument("--max-files", type=int, default=None,
                   help="read at most this many source files (rare kinds may then fall short of their share)")
    p.add_argument("--kinds", nargs="+", choices=list(KINDS), default=list(KINDS), help="kinds to make (default: all)")
    p.add_argument("--eval-data", type=Path, default=REPO_ROOT.parent / "shared" / "data",
                   help="evaluation sets no training file may overlap (with --files)")
    p.add_argument("--exclude-val", type=Path, help="held-out val_files.jsonl whose texts never become training data")
    p.add_argument("--val-percent", type=float, default=1.0, help="the corpus's validation percent (with --files)")
    args = p.parse_args(argv)
    if args.count < 1:
        p.error(f"--count must be at least 1, got {args.count}")
    refused: Counter = Counter()
    if args.val_files is not None:
        sources = held_out_sources(args.val_files, args.seed)
    elif args.train_bin is not None:
        sources = token_file_sources(args.train_bin, args.tokenizer or args.train_bin.parent / "tokenizer.json",
                                     EvalGuard.from_data_dir(args.eval_data), args.seed,
                                     held_out_hashes(args.exclude_val), refused)
    else:
        guard = EvalGuard.from_data_dir(args.eval_data)
        sources = training_sources(args.files, guard, args.seed, args.val_percent,
                                   held_out_hashes(args.exclude_val), refused)
    examples = synthesize(islice(sources, args.max_files), args.count, args.seed, args.kinds)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(json.dumps(e) + "\n" for e in examples))
    counts = Counter(e["kind"] for e in examples)
    for kind in args.kinds:
        print(f"{kind:<20} {counts[kind]:>5}", file=sys.stderr)
    if refused:
        print(f"refused sources: {dict(refused)}", file=sys.stderr)
    print(f"wrote {len(examples)} examples to {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
