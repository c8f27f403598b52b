"""Whether a word is a word of English: one the Python standard library's prose uses often
(`english_words.txt` beside this module, written by `python -m training.english_words`). A word
fixed in prose is a typo mended only when it is none of these put for another (`appying` ->
`applying`, not `later` -> `latter`: `completion.rewrite_kinds.typo`)."""
from __future__ import annotations

from functools import cache
from pathlib import Path

WORDS_PATH = Path(__file__).with_name("english_words.txt")


@cache
def _words() -> frozenset[str]:
    try:
        return frozenset(WORDS_PATH.read_text(encoding="utf-8").split())
    except OSError:  # an install without the list: no word is known, every spelling alike is a typo
        return frozenset()


def english(word: str) -> bool:
    """True when `word`, in any case, is in the list (`Later`, `later`; not `perfomed`)."""
    return word.lower() in _words()
