"""Write the English words of `completion.english`: the words the Python standard library's own prose
(its comments and strings) uses at least `--min-count` times.

    python -m training.english_words --out completion/english_words.txt [--min-count 10]

A word fixed in a docstring is carried to its other places as a typo (`appying` -> `applying`) only
when it is no word of English put for another (`later` -> `latter`, `decoder` -> `encoder`): those
are the sentence's own choice. The standard library is the reference because every Python has it
and its prose is the technical English of the code our users write: a misspelling stands in it
rarely if ever, a word of the language many times. Its tests, IDLE and lib2to3 are left out (test
data holds words on purpose misspelled). Words are lower case, two letters or more, standing alone
(not part of a dotted name or of a longer word with digits or underscores); one per line, sorted.
"""
from __future__ import annotations

import argparse
import io
import re
import sys
import sysconfig
import tokenize
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path

SKIPPED_PARTS = frozenset({"site-packages", "dist-packages", "test", "tests", "idlelib", "lib2to3"})
_WORD = re.compile(r"(?<![\w.])[A-Za-z]{2,}(?!\w|\.\w)")
_LISTED = re.compile(r"[a-z]{2,}")  # a line of a list this script writes


def prose_of(source: bytes) -> Iterator[str]:
    """The texts of a Python source's comments and strings (none for one that does not tokenize)."""
    try:
        tokens = list(tokenize.tokenize(io.BytesIO(source).readline))
    except (tokenize.TokenError, SyntaxError, UnicodeDecodeError):
        return
    yield from (token.string for token in tokens if token.type in (tokenize.COMMENT, tokenize.STRING))


def word_counts(root: Path) -> Counter[str]:
    """How often each lower-cased word stands in the prose of the `.py` files under `root`."""
    counts: Counter[str] = Counter()
    for path in sorted(root.rglob("*.py")):
        if SKIPPED_PARTS.intersection(path.relative_to(root).parts):
            continue
        for text in prose_of(path.read_bytes()):
            counts.update(word.lower() for word in _WORD.findall(text))
    return counts


def replaceable(path: Path) -> bool:
    """`--out` may be written: a new file, or a word list as this script writes them (a lower-case word a
    line), not a link nor anything else."""
    if path.is_symlink() or (path.exists() and not path.is_file()):
        return False
    if not path.exists():
        return True
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return False
    return all(_LISTED.fullmatch(line) for line in lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.english_words", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="the word list to write, one word a line")
    parser.add_argument("--min-count", type=int, default=10, help="times a word stands in the prose at least")
    parser.add_argument("--stdlib", type=Path, default=Path(sysconfig.get_paths()["stdlib"]),
                        help="the standard library to read (default: this Python's)")
    args = parser.parse_args(argv)
    if args.min_count < 1 or not args.stdlib.is_dir():
        parser.error("--min-count must be at least 1 and --stdlib a folder")
    if not replaceable(args.out):
        parser.error(f"--out {args.out} exists and is no word list: refusing to overwrite it")
    counts = word_counts(args.stdlib)
    words = sorted(word for word, count in counts.items() if count >= args.min_count)
    args.out.write_text("".join(f"{word}\n" for word in words), encoding="utf-8")
    print(f"{len(words)} words of {len(counts)} seen at least {args.min_count} times", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
