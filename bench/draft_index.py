"""The draft index's cost: memory for a workspace's worth of source, one file's update, one lookup.

Reads source files under `--root` folders (default: this Python's standard library and its
site-packages) with the language server's rules (`lsp_server.workspace`: the walk, `.gitignore`,
binary, minified, generated and oversized files skipped) until `--megabytes` of text, into a
`completion.draft_corpus.DraftCorpus` with caps that hold them all. Reports the bytes the corpus
holds (text and arrays) and the growth of the process's resident memory, then the time to re-index
one file (`put` of its text with one line changed, on `--updates` files drawn by the seed, and on
the largest file; an update that makes the corpus join its segments counts their joining too) and
to look up a key (the 12 tokens before a line drawn from an indexed file). A table, and with
`--json` one JSON object as the last line.

    python -m bench.draft_index --megabytes 50 --json
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import sysconfig
import time
from collections.abc import Sequence
from pathlib import Path

from bench.quality import percentile
from completion.draft_corpus import DraftCorpus, key_tokens
from lsp_server.workspace import read_source, skip_reason, unignored_files

MAX_FILES = 100_000  # the corpus's file cap here: the byte budget is what stops the read


def rss_bytes() -> int:
    """The process's resident memory, from /proc (0 where there is none)."""
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return 0
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS"))) * 1024


def read_texts(roots: Sequence[Path], budget_bytes: int) -> dict[str, str]:
    """name -> text of the source files under `roots`, up to `budget_bytes` of UTF-8 in all."""
    texts, total = {}, 0
    for root in roots:
        root = root.resolve()
        for path in unignored_files(root, MAX_FILES):
            text = read_source(path, root)
            if text is None or skip_reason(text) is not None:
                continue
            size = len(text.encode("utf-8", "surrogatepass"))
            if total + size > budget_bytes:
                return texts
            texts[path.as_posix()] = text
            total += size
    return texts


def timed_ms(action) -> float:
    started = time.perf_counter()
    action()
    return (time.perf_counter() - started) * 1000.0


def edited(text: str, rng: random.Random) -> str:
    """`text` with one line changed, as a keystroke or a paste leaves it."""
    lines = text.split("\n")
    at = rng.randrange(len(lines))
    lines[at] = lines[at] + "  # edited"
    return "\n".join(lines)


def lookup_keys(texts: dict[str, str], count: int, rng: random.Random) -> list:
    """The tokens before `count` lines drawn from the texts (at most 12 of them each)."""
    names, keys = sorted(texts), []
    while len(keys) < count and names:
        text = texts[rng.choice(names)]
        cut = text.rfind("\n", 0, rng.randrange(len(text) + 1)) + 1
        keys.append(key_tokens(text[max(0, cut - 400):cut].encode("utf-8", "surrogatepass"))[-12:])
    return keys


def measure(texts: dict[str, str], updates: int, lookups: int, seed: int) -> dict:
    rng = random.Random(seed)
    before = rss_bytes()
    corpus = DraftCorpus(max_files=MAX_FILES, max_bytes=1 << 40)
    build_ms = timed_ms(lambda: [corpus.put(name, text) for name, text in texts.items()])
    grown = rss_bytes() - before
    names = rng.sample(sorted(texts), min(updates, len(texts)))
    update_ms = [timed_ms(lambda n=n: corpus.put(n, edited(texts[n], rng), source="open")) for n in names]
    largest = max(texts, key=lambda n: len(texts[n]))
    largest_ms = timed_ms(lambda: corpus.put(largest, edited(texts[largest], rng), source="open"))
    lookup_ms = [timed_ms(lambda k=k: list(corpus.occurrences(k))) for k in lookup_keys(texts, lookups, rng)]
    return {"files": len(corpus), "text_mb": round(corpus.text_bytes / 1e6, 2),
            "corpus_mb": round(corpus.nbytes / 1e6, 2), "rss_growth_mb": round(grown / 1e6, 2),
            "build_s": round(build_ms / 1000.0, 2), "updates": len(update_ms),
            "update_ms_p50": round(percentile(update_ms, 50), 2), "update_ms_p99": round(percentile(update_ms, 99), 2),
            "update_ms_max": round(max(update_ms), 2),
            "largest_file_kb": round(len(texts[largest].encode()) / 1024, 1), "largest_update_ms": round(largest_ms, 2),
            "lookups": len(lookup_ms), "lookup_ms_p50": round(percentile(lookup_ms, 50), 2),
            "lookup_ms_p99": round(percentile(lookup_ms, 99), 2)}


def table(figures: dict) -> str:
    return "\n".join(f"{name:<18}{value}" for name, value in figures.items())


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.draft_index", description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, action="append", default=None,
                        help="a folder of source files, repeatable (default: the standard library and site-packages)")
    parser.add_argument("--megabytes", type=float, default=50.0, help="text to index, in MB (default 50)")
    parser.add_argument("--updates", type=int, default=500, help="files re-indexed for the update times (default 500)")
    parser.add_argument("--lookups", type=int, default=200, help="keys looked up (default 200)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the files and keys drawn (default 0)")
    parser.add_argument("--json", action="store_true", help="end with one JSON line of every figure")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.megabytes <= 0 or args.updates < 1 or args.lookups < 1:
        parser.error("--megabytes must be positive, --updates and --lookups at least 1")
    roots = args.root or [Path(sysconfig.get_paths()["stdlib"]), Path(sysconfig.get_paths()["purelib"])]
    texts = read_texts(roots, int(args.megabytes * 1e6))
    if not texts:
        parser.error(f"no source file to index under {', '.join(map(str, roots))}")
    figures = measure(texts, args.updates, args.lookups, args.seed)
    print(table(figures))
    if args.json:
        print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
