"""Edits by analogy on import lines: a module path changed on one `from M import ...` line, carried
to the other lines that import from the same place.

Real commits move imports together: `from click.utils import echo` made `from .utils import echo`
(an absolute import made relative) goes on at `from click.parser import ...`; `from wsgiref.types
import StartResponse` made `from _typeshed.wsgi import StartResponse` goes on at the other names
imported from `wsgiref.types`. The word and pattern rules of `completion.edit_analogy` miss them:
the imported names differ from line to line, and a package name dropped is a name deleted.

`module_change` reads the event's one changed line as a change of the module path alone (what is
imported and how stay as they were) and splits both paths at their common dotted tail: the heads
differ (`click` -> `` above, with `.utils` shared). `import_sites` then finds the from-import lines
whose module is the old head or lies under it (`click.parser`), each a site whose module becomes
the new head with its own tail (`.parser`); a head made from nothing (`_termui_impl` ->
`._termui_impl`) or a package put under the head (`blib2to3.driver` -> `blib2to3.pgen2.driver`) goes only
to the same module. Everything here is pure.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

from completion.edit_sites import MAX_LINE_CHARS, MAX_SITES, Site
from completion.positions import line_starts, split_lines

_MODULE = re.compile(r"\.*[^\W\d]\w*(?:\.[^\W\d]\w*)*|\.+")  # a module path a from-import may name
_FROM_IMPORT = re.compile(r"([ \t]*from[ \t]+)([\w.]+)([ \t]+import\b.*)")  # groups: head, module, what is imported


class ModuleChange(NamedTuple):
    """A from-import's module head `old` became `new` (an empty `old`: something was put before
    the whole module, which then is the only one it goes to)."""

    old: str
    new: str
    module: str  # the edited line's module before the change


def module_change(before: str, after: str) -> ModuleChange | None:
    """The change of a from-import line whose module path alone changed, split at the two paths'
    common dotted tail; None for any other change."""
    old_line, new_line = _FROM_IMPORT.fullmatch(before.rstrip("\r\n")), _FROM_IMPORT.fullmatch(after.rstrip("\r\n"))
    if old_line is None or new_line is None or old_line.group(1, 3) != new_line.group(1, 3):
        return None
    old, new = old_line.group(2), new_line.group(2)
    if old == new:
        return None
    shared = 0
    while shared < min(len(old), len(new)) and old[-1 - shared] == new[-1 - shared]:
        shared += 1
    while shared and not (shared == len(old) or old[-shared] == "."):  # back to a whole dotted tail
        shared -= 1
    return ModuleChange(old[:len(old) - shared], new[:len(new) - shared], old)


def moved(change: ModuleChange, module: str) -> str | None:
    """`module` with the change made, or None when the change is not its: a module as relative as
    the edited one (as many leading dots) under the old head (the head itself, or a dotted path
    below it; only the edited module when the old head is empty or the new one puts a package
    under it: `blib2to3.driver` -> `blib2to3.pgen2.driver` fixes one module's place, and would make
    `blib2to3.pgen2.grammar` `blib2to3.pgen2.pgen2.grammar`), that stays a module path (`click` of
    `click.utils` -> `.utils` would be none)."""
    if _dots(module) != _dots(change.module):
        return None
    if not change.old or change.new.startswith(change.old + "."):  # put before, or a package put in: its own
        return change.new + module[len(change.old):] if module == change.module else None
    if module != change.old and not module.startswith(change.old + "."):
        return None
    new = change.new + module[len(change.old):]
    return new if _MODULE.fullmatch(new) else None


def _dots(module: str) -> int:
    return len(module) - len(module.lstrip("."))


def import_sites(change: ModuleChange, text: str, event_lines: range,
                 prose: Callable[[int], bool] | None = None) -> list[Site]:
    """The from-import lines of `text` outside `event_lines` whose module the change moves, each a
    site of its module path, in text order (at most `MAX_SITES`; all alike: scored 1); with `prose`
    (whether an offset lies in a string or a comment), none in a docstring's
    example."""
    starts, found = line_starts(text), []
    for number, line in enumerate(split_lines(text)):
        if number in event_lines or len(line) > MAX_LINE_CHARS or "import" not in line:
            continue
        match = _FROM_IMPORT.fullmatch(line.rstrip("\r\n"))
        new = None if match is None else moved(change, match.group(2))
        if new is not None and not (prose is not None and prose(starts[number] + match.start(2))):
            found.append(Site(starts[number] + match.start(2), starts[number] + match.end(2), new, number, 1.0))
            if len(found) == MAX_SITES:
                break
    return found
