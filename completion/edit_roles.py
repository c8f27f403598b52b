"""A Sphinx role's domain dropped or spelled out, carried to the file's other roles of Python's domain.

Python is Sphinx's default domain, so `:py:attr:` and `:attr:` name the same thing; a project that
settles on one spelling rewrites every role of a docstring or a file at once (falcon dropped `py:`
from its `:py:class:`, `:py:attr:` and `:py:meth:` in one commit). `domain_change` reads a rewrite
that took `py:` off a Python role or put it on one, and `domain_sites` proposes the same at the other
Python roles that still read the old way, whatever the role (`:py:class:` follows `:py:attr:`) and
whatever their lines, in prose only (strings and comments: a role is never code). Work is bounded:
the first `MAX_MATCHES` places are read. Pure.
"""
from __future__ import annotations

import re
from collections.abc import Callable

from completion.edit_events import EditEvent
from completion.edit_sites import Site, matched_sites

DOMAIN = "py:"
PYTHON_ROLES = ("func", "meth", "attr", "class", "data", "exc", "mod", "obj", "const", "type")
_ROLES = "|".join(PYTHON_ROLES)
_ROLE_AFTER = re.compile(rf"(?:{_ROLES}):`")  # a Python role's name, its colon and backtick
_WITH_DOMAIN = re.compile(rf"(?<![\w:]):({DOMAIN})(?:{_ROLES}):`")  # group 1: the domain
_WITHOUT_DOMAIN = re.compile(rf"(?<![\w:]):()(?:{_ROLES}):`")  # group 1: where a domain goes


def domain_change(removed: str, inserted: str, left: str, right: str) -> bool | None:
    """True when the rewrite (`removed` -> `inserted` between `left` and `right`) took the `py:`
    domain off a Python role (`:py:attr:`x`` -> `:attr:`x``), False when it put it on one, None for
    any other rewrite."""
    if not left.endswith(":") or left.endswith("::") or _ROLE_AFTER.match(right) is None:
        return None
    if (removed, inserted) == (DOMAIN, ""):
        return True
    if (removed, inserted) == ("", DOMAIN):
        return False
    return None


def domain_sites(dropped: bool, line: int, event: EditEvent, prose: Callable[[int], bool] | None) -> list[Site]:
    """The other Python roles of the event's text after (off its lines) in prose (`prose`; none
    without a tree) that still read as the edited one did: with `py:` where it was `dropped` (each
    loses it), without it where it was put (each gets it), nearest `line` first."""
    if prose is None:
        return []
    if dropped:
        return matched_sites(_WITH_DOMAIN, "", line, event, prose)
    return matched_sites(_WITHOUT_DOMAIN, DOMAIN, line, event, prose)
