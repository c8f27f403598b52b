"""A Python version bumped in a version tuple, carried to its dotted spelling in the file's prose.

A project that raises (or lowers) the Python it needs writes the version twice: as a tuple the code
compares (`if sys.version_info < (3, 9):`, `REQUIRED_PYTHON = (3, 9)`) and as text the user reads
(`"aiohttp requires Python 3.9+"`, `python_requires=">=3.9"`, `# first appeared in 3.12.7`). The
literal rule carries a number to the same number in code; `version_bumped` reads a rewrite that
changed one number of a tuple compared with or given to a version's name, and `version_sites`
proposes the new dotted version where the old one stands in a string or a comment, never in a
trove classifier's list (`Python :: 3.9`: one line per version, added or taken off, not renamed)
nor inside a longer version (`3.9.1`). A release being written that was renamed (`.. versionchanged::
3.3` made `4.0`, where 3.3 is the newest release the file's Sphinx version directives state and 4.0 one
none states) goes to the file's other directives of that release (`release_renamed`,
`release_sites`); an older release changed is that entry's own mend. Work is bounded: the first
`MAX_MATCHES` places are read. Pure.
"""
from __future__ import annotations

import itertools
import re
from collections.abc import Callable

from completion.edit_events import EditEvent
from completion.edit_sites import MAX_MATCHES, Site, matched_sites, nearest_sites

_NUMBER = re.compile(r"\d+")
_TUPLE_HEAD = re.compile(r"(?i)(?<![a-z])(?:version\w*|python\w*)(?:\[[^\]\n]*\])?"  # a version's name, sliced
                         r"\s*(?:[<>]=?|[=!]=|=)\s*\(((?:\d+\s*,\s*)*)$")  # compared or given: its tuple so far
_TUPLE_TAIL = re.compile(r"((?:\s*,\s*\d+)*)\s*,?\s*\)")
_DIRECTIVE_NAMES = r"\.\.[ \t]+(?:versionadded|versionchanged|deprecated|versionremoved)::[ \t]*"
_DIRECTIVE_HEAD = re.compile(_DIRECTIVE_NAMES + "$")  # a directive up to its release
_DIRECTIVE = re.compile(rf"^[ \t]*{_DIRECTIVE_NAMES}(\d+(?:\.\d+)*)(?![\w.])", re.MULTILINE)  # group 1: its release
_RELEASE = re.compile(r"\d+(?:\.\d+)*")


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


def release_renamed(removed: str, inserted: str, left: str, right: str, text: str) -> tuple[str, str] | None:
    """(the old release, the new one) when the rewrite (`removed` -> `inserted` between `left` and
    `right`, in `text` after it) changed the release of a Sphinx version directive from the newest one
    the file's directives state to one no other directive states; else None."""
    old, new = _RELEASE.match(removed + right), _RELEASE.match(inserted + right)
    if not removed or old is None or new is None or not _DIRECTIVE_HEAD.search(left):
        return None
    stated = [found.group(1) for found in itertools.islice(_DIRECTIVE.finditer(text), MAX_MATCHES)]
    if stated.count(new.group()) > 1 or any(_numbers(other) > _numbers(old.group()) for other in stated
                                           if other != new.group()):
        return None
    return old.group(), new.group()


def release_sites(old: str, new: str, line: int, event: EditEvent) -> list[Site]:
    """The releases `old` of the Sphinx version directives in the event's text after (off its lines),
    each becoming `new`, nearest `line` first."""
    pattern = re.compile(rf"^[ \t]*{_DIRECTIVE_NAMES}({re.escape(old)})(?![\w.])", re.MULTILINE)
    return matched_sites(pattern, new, line, event)


def _numbers(release: str) -> tuple[int, ...]:
    """A dotted release's numbers, to compare releases (`4.10` after `4.9`)."""
    return tuple(map(int, release.split(".")))
