"""A Python version bumped in a version tuple, carried to its dotted spelling in the file's prose.

A project that raises (or lowers) the Python it needs writes the version twice: as a tuple the code
compares (`if sys.version_info < (3, 9):`, `REQUIRED_PYTHON = (3, 9)`) and as text the user reads
(`"aiohttp requires Python 3.9+"`, `python_requires=">=3.9"`, `# first appeared in 3.12.7`). The
literal rule carries a number to the same number in code; `version_bumped` reads a rewrite that
changed one number of a tuple compared with or given to a version's name, and `version_sites`
proposes the new dotted version where the old one stands in a string or a comment, never in a
trove classifier's list (`Python :: 3.9`: one line per version, added or taken off, not renamed)
nor inside a longer version (`3.9.1`). Work is bounded: the first `MAX_MATCHES` places are read. Pure.
"""
from __future__ import annotations

import re
from collections.abc import Callable

from completion.edit_events import EditEvent
from completion.edit_sites import Site, matched_sites, nearest_sites

_NUMBER = re.compile(r"\d+")
_TUPLE_HEAD = re.compile(r"(?i)(?<![a-z])(?:version\w*|python\w*)(?:\[[^\]\n]*\])?"  # a version's name, sliced
                         r"\s*(?:[<>]=?|[=!]=|=)\s*\(((?:\d+\s*,\s*)*)$")  # compared or given: its tuple so far
_TUPLE_TAIL = re.compile(r"((?:\s*,\s*\d+)*)\s*,?\s*\)")


def version_bumped(removed: str, inserted: str, left: str, right: str) -> tuple[str, str] | None:
    """(the old version, the new one), dotted (`3.9`, `3.10`), when the rewrite (`removed` ->
    `inserted` between `left` and `right`) changed one whole number of a tuple of two numbers or more
    that a version's name is compared with or given (`sys.version_info < (3, 9)`,
    `REQUIRED_PYTHON = (3, 9)`); else None."""
    if not (_NUMBER.fullmatch(removed) and _NUMBER.fullmatch(inserted)):
        return None
    head, tail = _TUPLE_HEAD.search(left), _TUPLE_TAIL.match(right)
    if head is None or tail is None:
        return None
    before, after = _NUMBER.findall(head.group(1)), _NUMBER.findall(tail.group(1))
    if not before and not after:
        return None
    return ".".join([*before, removed, *after]), ".".join([*before, inserted, *after])


def version_sites(old: str, new: str, line: int, event: EditEvent,
                  prose: Callable[[int], bool] | None) -> list[Site]:
    """The places of the dotted version `old` in the event's text after (off its lines) that stand
    in a string or a comment (`prose`; none without a tree), each becoming `new`, nearest `line`
    first: not within a longer version or a name (`v3.9`, `3.9.1`), nor after a classifier's `:: `.
    A tuple's trailing zeros are spelled either way (`(3, 8, 0)` is `3.8.0` and `Python 3.8+`)."""
    if prose is None:
        return []
    found = []
    for was, now in dict.fromkeys([(old, new), (_short(old), _short(new))]):
        pattern = re.compile(rf"(?<![\w.])(?<!:: )({re.escape(was)})(?!\w|\.\d)")
        found += matched_sites(pattern, now, line, event, prose)
    return nearest_sites(found, line)


def _short(version: str) -> str:
    """A dotted version without its trailing `.0` parts, two parts kept at least (`3.8.0` -> `3.8`)."""
    parts = version.split(".")
    while len(parts) > 2 and parts[-1] == "0":
        parts.pop()
    return ".".join(parts)
