"""A linter's fix made at one place, carried to the file's other places the same check flags.

pycodestyle flags a comparison to `None` written with `==` or `!=` (E711), one to `True` or `False`
(E712) and a comparison of `type(...)` results (E721); the fix is `is` or `is not`; pyflakes flags `is`
or `is not` before a number or a string (F632: `rv is 128`), whose fix is `==` or `!=`. A user who fixes
one usually fixes the file: `flagged` reads a rewrite that turned `==` into `is` or `!=` into `is
not`, before a singleton of one check (`None`, or `True`/`False`) or after a `type(...)` call, or the
other way before a literal, and `comparison_sites`, for such a fix in code, proposes the same operator
at every other comparison of that check in the text's code (not in strings or comments). Ruff flags
empty parentheses on a raised exception (RSE102: `raise ValueError()`) and on pytest's fixture and mark
decorators (PT001, PT023: `@pytest.fixture()`), an alias of `typing` for a builtin generic (UP006: `t.Tuple[int]` ->
`tuple[int]`) and `Optional` or `Union` for the `|` of PEP 604 (UP007: `t.Optional[str]` -> `str | None`;
ruff leaves a quoted member alone, `"Symbols" | None` fails when it runs) and a generator's types that
Python 3.13 gives by default (UP043: `Generator[int, None, None]` -> `Generator[int]`,
`AsyncGenerator[int, None]` -> `AsyncGenerator[int]`); pycodestyle flags a bare
`except:` (E722), whose fix names the exception the user chooses (`except Exception:`, or
`BaseException`; a narrower one is that handler's own); flake8-simplify flags `.keys()` on what `in`
iterates or tests (SIM118: `for k in d.keys()` -> `for k in d`), and a user who takes it off there takes
it off a dict's keys listed whole too (`list(d.keys())` -> `list(d)`). `fixed_by` reads a line that one
such fix made, and `rewritten_sites` makes the same fix at the others of that check, for an alias the
same alias only, for a fix the user chose the same choice. Pure.
"""
from __future__ import annotations

import re
from collections.abc import Callable

from completion.edit_events import EditEvent
from completion.edit_sites import Site, matches_off_event, nearest_sites
from completion.positions import line_starts

FIXES = {"==": "is", "!=": "is not"}  # the operator pycodestyle flags -> the one it asks for
LITERAL_FIXES = {"is": "==", "is not": "!="}  # the operator pyflakes flags before a literal (F632) -> its fix
_TYPE_CALL = re.compile(r"(?<![\w.])type\([^()\n]*\)\s*$")  # `type(x)` right before the operator
_LITERAL_OPERAND = r"""(?:-?\d|[bBuU]?['"])"""  # a number or a string, the operand F632 flags `is` before
_CHECKS = {  # a check's name -> the comparisons it flags, for an operator (group 1: the operator, spaced
    #   as the fix needs: `x==None` is left alone)
    "E711": r"(?<=\S[ \t])({op})(?=[ \t]+None(?!\w))",
    "E712": r"(?<=\S[ \t])({op})(?=[ \t]+(?:True|False)(?!\w))",
    "E721": r"(?<![\w.])type\([^()\n]*\)[ \t]+({op})(?=[ \t])",
    "F632": r"(?<=\S[ \t])({op})(?=[ \t]+" + _LITERAL_OPERAND + ")",
}

_ALIAS = r"(?<![\w.])((?P<alias>{}))(?=\[)"  # an alias of `typing` subscripted (group 1), as UP006 flags it
_NESTED = r"[^\[\]\n]*(?:\[[^\[\]\n]*(?:\[[^\[\]\n]*\][^\[\]\n]*)*\][^\[\]\n]*)*"  # a subscript's text, two
#   brackets deep at most
_SUBSCRIPTED = r"(?<![\w.])((?P<alias>{})\[" + _NESTED + r"\])"  # an alias subscripted whole (group 1), as
#   UP007 flags it
_MEMBER = r"[^\[\],\n]*(?:\[" + _NESTED + r"\][^\[\],\n]*)*"  # one member of a subscript, brackets and all
_DEFAULTS = (r"(?<![\w.])(?:[\w.]+\.)?(?:Generator\[" + _MEMBER + r"(?=,[ \t]*None,[ \t]*None\])"
             r"|AsyncGenerator\[" + _MEMBER + r"(?=,[ \t]*None\]))(,[ \t]*None(?:,[ \t]*None)?)(?=\])")  # UP043:
#   a generator's send and return types spelled as their defaults (group 1)


def flagged(removed: str, inserted: str, left: str, right: str) -> str | None:
    """The check (`_CHECKS`) whose fix the rewrite made (`removed` -> `inserted` between `left` and
    `right` on its line), or None for any other change."""
    if not left[-1:].isspace():
        return None
    if LITERAL_FIXES.get(removed.strip()) == inserted.strip():
        return "F632" if re.match(r"\s+" + _LITERAL_OPERAND, right) else None
    if FIXES.get(removed.strip()) != inserted.strip():
        return None
    operand = re.match(r"\s*(\w+)", right)
    if operand is not None and operand.group(1) == "None":
        return "E711"
    if operand is not None and operand.group(1) in ("True", "False"):
        return "E712"
    return "E721" if _TYPE_CALL.search(left) else None


def comparison_sites(check: str, operator: str, line: int, column: int, event: EditEvent,
                     prose: Callable[[int], bool] | None) -> list[Site] | None:
    """The other comparisons of the text after `event` that `check` flags with `operator` (`flagged`
    read the user's fix of one at `column` of `line`), each given the fixed operator (`_fixed_elsewhere`)."""
    pattern = re.compile(_CHECKS[check].format(op=re.escape(operator)))
    fixed = (LITERAL_FIXES if check == "F632" else FIXES)[operator]
    return _fixed_elsewhere(pattern, lambda _: fixed, line, column, event, prose)


def _nothing(found: re.Match) -> str:
    return ""


def _builtin(found: re.Match) -> str:
    """The builtin an alias of `typing` names (`t.Tuple` -> `tuple`)."""
    return found.group(1).rpartition(".")[2].lower()


def _members(subscript: str) -> list[str]:
    """A subscript's members, split at its commas outside brackets (`str, dict[str, int]`)."""
    members, depth, start = [], 0, 0
    for at, char in enumerate(subscript):
        depth += {"[": 1, "]": -1}.get(char, 0)
        if char == "," and depth == 0:
            members.append(subscript[start:at].strip())
            start = at + 1
    return [*members, subscript[start:].strip()]


def _pep604(found: re.Match) -> str | None:
    """`Optional[X]` as `X | None`, `Union[A, B]` as `A | B` (`found`: group 1 the whole, `alias` its
    alias), the same alias within done alike; None with a quoted member (a forward reference)."""
    members = _members(found.group(1)[len(found["alias"]) + 1:-1])
    if any(member[:1] in ("'", '"') for member in members):
        return None
    members = [found.re.sub(lambda inner: _pep604(inner) or inner.group(1), member) for member in members]
    return " | ".join(members + ["None"] if found["alias"].endswith("Optional") else members)


def _given(chosen: str) -> Callable[[re.Match], str]:
    """The fix that puts the user's `chosen` text wherever its check flags (` Exception` after `except`)."""
    return lambda _: chosen


_BROAD = re.compile(r" (?:Exception|BaseException)")  # what a bare `except:` is given, broad as it was

_REWRITTEN = {  # a check's name -> what it flags (group 1), its fix of that (or the fixes a user may choose,
    #   read off their line), and the template of a pattern of the same alias (`alias`) where it flags one
    "RSE102": (re.compile(r"^[ \t]*raise[ \t]+[\w.]+(\(\))(?=[ \t]*(?:#.*)?$)", re.MULTILINE), _nothing, None),
    "PT001": (re.compile(r"^[ \t]*@pytest\.fixture(\(\))(?=[ \t]*(?:#.*)?$)", re.MULTILINE), _nothing, None),
    "PT023": (re.compile(r"^[ \t]*@pytest\.mark\.\w+(\(\))(?=[ \t]*(?:#.*)?$)", re.MULTILINE), _nothing, None),
    "UP006": (re.compile(_ALIAS.format(r"(?:typing|t)\.(?:Dict|FrozenSet|List|Set|Tuple|Type)")), _builtin, _ALIAS),
    "UP007": (re.compile(_SUBSCRIPTED.format(r"(?:(?:typing|t)\.)?(?:Optional|Union)")), _pep604, _SUBSCRIPTED),
    "UP043": (re.compile(_DEFAULTS), _nothing, None),
    "E722": (re.compile(r"^[ \t]*except()(?=[ \t]*:)", re.MULTILINE), _BROAD, None),
    "SIM118": (re.compile(r"(?:(?<![\w.])list\(|(?<![\w.])in[ \t]+)[\w.]+(?:\[[^\[\]\n]*\])*(\.keys\(\))"
                          r"(?=[ \t]*(?:[):,\]]|$|if\b|for\b))", re.MULTILINE), _nothing, None),
}


def fixed_by(before: str, after: str) -> tuple[str, str] | None:
    """(the check of `_REWRITTEN`, the text it flagged, its alias for a check of one, or the fix the
    user chose for a check of choices) when its fix made the line `before` into `after` at one place
    (`raise ValueError()` -> `raise ValueError`, `t.Tuple[int]` -> `tuple[int]`, `except:` -> `except
    Exception:`), else None."""
    for check, (pattern, fix, _) in _REWRITTEN.items():
        for found in pattern.finditer(before):
            if isinstance(fix, re.Pattern):
                chosen = after[found.start(1):len(after) - len(before) + found.end(1)]
                if fix.fullmatch(chosen) and before[:found.start(1)] + chosen + before[found.end(1):] == after:
                    return check, chosen
                continue
            fixed = fix(found)
            if fixed is not None and before[:found.start(1)] + fixed + before[found.end(1):] == after:
                return check, found["alias"] if "alias" in pattern.groupindex else found.group(1)
    return None


def rewritten_sites(check: str, flagged_text: str, line: int, column: int, event: EditEvent,
                    prose: Callable[[int], bool] | None) -> list[Site] | None:
    """The other places of the text after `event` that `check` flags (`fixed_by` read the user's fix
    of `flagged_text` at `column` of `line`), each given the check's fix (`_fixed_elsewhere`); for an
    alias, the same alias only (`t.Tuple`, not `t.List`; `t.Optional`, not `Optional`); for a check of
    choices, the user's choice (`flagged_text`: ` Exception`)."""
    pattern, fix, same_alias = _REWRITTEN[check]
    if isinstance(fix, re.Pattern):
        fix = _given(flagged_text)
    if same_alias is not None:
        pattern = re.compile(same_alias.format(re.escape(flagged_text)))
    return _fixed_elsewhere(pattern, fix, line, column, event, prose)


def _fixed_elsewhere(pattern: re.Pattern, fix: Callable[[re.Match], str | None], line: int, column: int,
                     event: EditEvent, prose: Callable[[int], bool] | None) -> list[Site] | None:
    """The places of the text after `event` where `pattern` matches (group 1: what a check flags),
    each given `fix` of its match (none where it gives None): off the event's lines
    (`matches_off_event`), in code only when `prose` says where strings and comments are (by the
    character right before what is flagged: `(` of `()`, the space before `==`); at most `MAX_SITES`,
    nearest `line` first. None when the user's own fix, flagged from `column` of `line`, stands in
    prose."""
    text = event.after
    starts = line_starts(text)
    if prose is not None and prose(starts[line] + column - 1):
        return None
    found = [Site(match.start(1), match.end(1), fixed, at, 1.0)
             for match, at, _ in matches_off_event(pattern, text, starts, event)
             if (prose is None or not prose(match.start(1) - 1)) and (fixed := fix(match)) is not None]
    return nearest_sites(found, line)


def lint_sites(removed: str, inserted: str, left: str, right: str, line: int, event: EditEvent,
               prose: Callable[[int], bool] | None) -> list[Site] | None:
    """For a linter's fix (`removed` -> `inserted` between `left` and `right` on `line`; `flagged`,
    `fixed_by`): the other places its check flags (`comparison_sites`, `rewritten_sites`); None for
    any other change, or a fix in prose."""
    check = flagged(removed, inserted, left, right)
    if check is not None:
        return comparison_sites(check, removed.strip(), line, len(left), event, prose)
    fixed = fixed_by(left + removed + right, left + inserted + right)
    return None if fixed is None else rewritten_sites(*fixed, line, len(left), event, prose)
