"""The user's change on one line read as a token-level rewrite, and the regex of where its before-text stands.

`rewrite_of(event)` reads the event's one changed line as a `Rewrite`: the text removed and
inserted (widened to whole words when the change starts or ends inside one) and the text around
it on its line. `site_pattern(rewrite)` is the regex of the before-text in its context (group 1:
what is replaced): a word alone; else up to `CONTEXT_TOKENS` tokens on its left (back to the
nearest name and the mark right before it), back to the callee inside a call (`CALL_TOKENS`, its
other names matching any name), or the whole call right before it (`literal_call`), and one token
on its right, strings and numbers matching any string or number. The kinds of rewrite the pattern
is made for (`string_prefix`, `product_release`, `comment_dropped`, `whole_line`, `sibling_classes`)
are here too; `completion.edit_analogy` finds the sites. Everything here is pure.
"""
from __future__ import annotations

import keyword
import re
from collections.abc import Callable
from dataclasses import dataclass

from completion.edit_events import EditEvent, common_ends
from completion.edit_literals import in_f_braces
from completion.edit_sites import MAX_LINE_CHARS, TOKEN

CONTEXT_TOKENS = 3  # tokens of a pattern's left context at most, outside a call
CALL_TOKENS = 8  # inside a call: back to its callee within this many tokens
LITERAL_CALL_TOKENS = 6  # a whole call with a literal argument, as a pattern's context: this many tokens at least
MIN_LINE_TOKENS = 3  # a line replaced whole goes to its copies when it holds this many tokens
NAME = re.compile(r"[^\W\d]\w*")
NAME_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")  # a name's parts: `HTTPRequest_id` -> HTTP, Request, id
STRING_PREFIX = re.compile(r"[rRbBuUfF]{1,2}")  # a string literal's prefix, before its quote
_TIGHT_MARKS = frozenset({"<", "/", "."})
_STRING = re.compile(r""""[^"\n]*"|'[^'\n]*'""")
_NUMBER = re.compile(r"\d[\w.]*")
CLASS_NAME = re.compile(r"(\s*class\s+)([^\W\d]\w*)")  # a class header up to its name (group 2)
_IMPORT_PATH = re.compile(r"\s*(?:from|import)\s+(?:[\w.]+,\s*)*([\w.]*)$")  # `from a.b.`: the path so far (group 1)
_VERSION = re.compile(r"\d+(?:\.\d+)+")  # a release's number: `2.4`, `3.0.1`
ANNOTATION_START = r"(?:^[ \t]*|[(,][ \t]*)(\w+)[ \t]*:[ \t]*"  # a name and its colon (group 1: the name)
_PRODUCT_BEFORE = re.compile(r"(?<![\w.])([A-Z][\w-]*)[ \t]+$")  # a proper name right before (group 1): `Werkzeug `


@dataclass(frozen=True, slots=True)
class Rewrite:
    """The user's change on one line: `removed` became `inserted` between `left` and `right`."""

    line: int  # the changed line, in the text after
    left: str
    removed: str
    inserted: str
    right: str

    @property
    def word(self) -> bool:
        """True when one whole word was replaced by another."""
        return NAME.fullmatch(self.removed) is not None and NAME.fullmatch(self.inserted) is not None

    @property
    def line_before(self) -> str:
        return self.left + self.removed + self.right

    @property
    def line_after(self) -> str:
        """The changed line as the rewrite left it."""
        return self.left + self.inserted + self.right


def is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


def rewrite_of(event: EditEvent) -> Rewrite | None:
    """The event's change as a rewrite, or None when it changed other than one line (at most
    `MAX_LINE_CHARS`; whole lines deleted or inserted are no line rewritten: a deletion read as one
    blanked its copies) or changed nothing."""
    old_lines, new_lines = event.removed_lines, event.inserted_lines
    if not old_lines or not new_lines or len(old_lines) != len(new_lines):
        return None  # whole lines inserted or deleted (no line was rewritten), or lines joined or split
    differ = [i for i, (a, b) in enumerate(zip(old_lines, new_lines)) if a != b]
    if len(differ) != 1 or max(len(old_lines[differ[0]]), len(new_lines[differ[0]])) > MAX_LINE_CHARS:
        return None
    old, new = old_lines[differ[0]], new_lines[differ[0]]
    if old.strip() and not new.strip():
        return None  # a line's text deleted whole (the file's last line, with no line break after it)
    head, tail = common_ends(old, new)
    start, old_end, new_end = head, len(old) - tail, len(new) - tail
    first = old[start:old_end] + new[start:new_end]
    if first and is_word(first[0]):
        while start > 0 and is_word(old[start - 1]):
            start -= 1
    last = (old[start:old_end] or new[start:new_end])[-1:]
    if last and is_word(last):
        while old_end < len(old) and is_word(old[old_end]):
            old_end, new_end = old_end + 1, new_end + 1
    return Rewrite(event.start_line + differ[0], old[:start], old[start:old_end], new[start:new_end],
                   old[old_end:])


def _closed_call(left: list[str]) -> list[str] | None:
    """The call that `left` ends with, from its callee (with the mark before it: `.lower()`) to its
    closing bracket, within `CALL_TOKENS` tokens; None when `left` ends otherwise or its bracket
    opens no call (`(a + b)`, `if (x)`)."""
    depth = 0
    for at in range(len(left) - 1, max(-1, len(left) - CALL_TOKENS - 1), -1):
        depth += {")": 1, "(": -1}.get(left[at], 0)
        if depth <= 0:
            break
    else:
        return None
    if depth < 0 or left[at] != "(" or at == 0 or not NAME.fullmatch(left[at - 1]) \
            or keyword.iskeyword(left[at - 1]):
        return None
    start = at - 2 if at > 1 and left[at - 2] in _TIGHT_MARKS else at - 1
    return left[start:]


def string_opened_at(left: str) -> int | None:
    """Where the string a change after `left` (its line up to the change) stands in opens: a quote
    opened and not closed; None in code, and in the braces of an f-string (`f"<{self.__class__`)."""
    at = 0
    while at < len(left) and left[at] != "#":
        if left[at] in "\"'":
            end = left.find(left[at], at + 1)
            if end < 0:
                return None if in_f_braces(left[:at], left[at + 1:]) else at
            at = end
        at += 1
    return None


def literal_call(rewrite: Rewrite) -> bool:
    """True when the rewrite only put text right after a whole call that stands in no bracket and
    passes a string or a number (`.replace('-', '_')` + `.lower()`, `getattr(f, "x", False)` + ` is
    True`): the call is the context (`_context`), one that does the same thing wherever it stands,
    so a site's line need be less alike the edited one."""
    call = None if rewrite.removed or rewrite.word else _whole_call(TOKEN.findall(rewrite.left))
    return call is not None and len(call) >= LITERAL_CALL_TOKENS \
        and any(token[0] in "\"'" or token[0].isdigit() for token in call)


def _whole_call(left: list[str]) -> list[str] | None:
    """The call `left` ends with (`_closed_call`) when it stands in no bracket, else None."""
    call = _closed_call(left) if left[-1:] == [")"] else None
    return call if call is not None and _balanced(left[:len(left) - len(call)]) else None


def _balanced(tokens: list[str]) -> bool:
    """True when the tokens close every bracket they open: what follows them stands in no bracket."""
    return sum({"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(token, 0) for token in tokens) == 0


def _context(left: list[str], closed: bool = True) -> list[str]:
    """The left context of a pattern: with `closed` (not for a comment put after it: a linter's excuse
    is one line's), the whole call that ends right before the change, when it stands in no bracket
    (`_closed_call`: `getattr(f, "x", False)` before ` is True`); else back to the call it stands in (a name before a
    `(` not closed since: `f(a, g(b)` stands in `f`, not `g`) within `CALL_TOKENS` tokens; else back
    to the nearest name within `CONTEXT_TOKENS`."""
    call = _whole_call(left) if closed else None
    if call is not None:
        return call
    depth = 0
    for start in range(len(left) - 2, max(-1, len(left) - CALL_TOKENS - 1), -1):
        depth += {")": 1, "(": -1}.get(left[start + 1], 0)
        if depth < 0 and left[start + 1] == "(" and NAME.fullmatch(left[start]):
            return left[start:]
    return back_to_name(left, CONTEXT_TOKENS, NAME.fullmatch)[0]


def back_to_name(left: list[str], limit: int, is_name: Callable[[str], object]) -> tuple[list[str], bool]:
    """The last tokens of `left` back to its last name (`is_name`) within `limit` tokens, with the mark
    right before it (`</body` is no `<body`, `x.f` no `f`), and True; else its last `limit` tokens and False."""
    for at in range(len(left) - 1, max(-1, len(left) - limit - 1), -1):
        if is_name(left[at]):
            return left[at - 1 if at > 0 and left[at - 1] in _TIGHT_MARKS else at:], True
    return left[max(0, len(left) - limit):], False


def _token_pattern(token: str, any_name: bool = False, any_value: bool = True) -> str:
    """A token's regex: any string for a string and any number for a number when `any_value` (a
    context with a name; in one without, `"check", ` before `tmpdir` is no `"--outdir", `), any name
    for a name when `any_name` (an argument of a call's context), else the token itself (a quote
    that opens the string the change stands in is that quote: `f"<{self.__class__`)."""
    if any_name and plain_name(token):
        return NAME.pattern
    if not any_value:
        return re.escape(token)
    if token[0] in "\"'" and len(token) > 1:
        return f"(?:{_STRING.pattern})"
    if token[0].isdigit():
        return _NUMBER.pattern
    return re.escape(token)


def site_pattern(rewrite: Rewrite) -> re.Pattern | None:
    """The regex of the rewrite's before-text in context (group 1: what is replaced), or None
    for a pattern with no name in its context (it would match anywhere; a keyword is no name
    there unless the rewrite replaces text by other text: `else:` dropped or `-> None` widened is
    one place's change, `while 1:` -> `while True:` an idiom); with nothing on its right, the
    before-text must end its line."""
    if string_prefix(rewrite):
        return re.compile(rf"(?<!\w)({re.escape(rewrite.removed)})(?=[\"'])")
    release = product_release(rewrite)
    if release is not None:
        return release
    if rewrite.word:
        return re.compile(rf"(?<!\w)({re.escape(rewrite.removed)})(?!\w)")
    if comment_dropped(rewrite):  # after the same kind of ending: an opened bracket (a call over several
        #   lines), or other code (not a comma's line)
        ending = r"[(\[{]" if rewrite.left.rstrip()[-1:] in ("(", "[", "{") else r"[^\s(\[{,]"
        return re.compile(rf"(?<={ending})([ \t]*{re.escape(rewrite.removed.lstrip())})(?=[ \t\r]*$)", re.MULTILINE)
    if whole_line(rewrite):
        return re.compile(rf"^[ \t]*({re.escape(rewrite.removed)})(?=[ \t\r]*$)", re.MULTILINE)
    opened = None if re.search("[\"']", rewrite.removed + rewrite.inserted) else string_opened_at(rewrite.left)
    left = rewrite.left if opened is None else rewrite.left[opened + 1:]  # within a string: its own text
    context = _context(TOKEN.findall(left), closed=not rewrite.inserted.lstrip().startswith("#"))
    if opened is not None and not any(NAME.fullmatch(token) for token in context):
        return None  # right after a string's quote: where else it goes, its line does not say
    right = TOKEN.findall(rewrite.right)[:1]
    replaced = bool(rewrite.removed and rewrite.inserted)
    if not any(NAME.fullmatch(token) and (replaced or not keyword.iskeyword(token))
               for token in context + right + TOKEN.findall(rewrite.removed)):
        return None
    lead = next((index for index, token in enumerate(context) if NAME.fullmatch(token)), 0)  # its name
    named = not context or any(NAME.fullmatch(token) for token in context)  # else its values say where it is
    around = r"\s*".join(_token_pattern(token, index > lead, named) for index, token in enumerate(context))
    if sibling_classes(rewrite):  # the class's own name is any class's name
        around = r"\bclass[ \t]+" + r"\s*".join(_token_pattern(token, True) for token in context)
    after = r"\s*".join(_token_pattern(token, False, named) for token in right) if right else r"(?=[ \t\r]*$)"
    gap = r"[ \t]*?" if not rewrite.removed and not rewrite.left[-1:].isspace() else r"[ \t]*"  # text put in
    #   right after a token goes right after it at a site too (`ParamType[t.Any] |`, not `ParamType [t.Any]|`)
    trail = r"[ \t]*"
    if not (rewrite.removed + rewrite.inserted).strip():  # spacing: a site's space as the line's was (`url,  data`)
        gap = re.escape(rewrite.left[len(rewrite.left.rstrip()):])
        trail = re.escape(rewrite.right[:len(rewrite.right) - len(rewrite.right.lstrip())]) + r"(?![ \t])"
    return re.compile(f"{around}{gap}({re.escape(rewrite.removed)}){trail}{after}", re.MULTILINE)


def product_release(rewrite: Rewrite) -> re.Pattern | None:
    """The pattern of a product's release (group 1: the part changed) when the rewrite put one release
    for another after the product's name (`removed in Werkzeug 2.4` -> `3.0`, `2.5.1`: a deprecation's
    release moved, said alike in docstrings and warnings), else None."""
    head = re.search(r"[\d.]*$", rewrite.left).group()  # the number's part before the change, and after it
    tail = re.match(r"(?:\.?\d)*", rewrite.right).group()
    if any(_VERSION.fullmatch(head + middle + tail) is None for middle in (rewrite.removed, rewrite.inserted)):
        return None
    product = _PRODUCT_BEFORE.search(rewrite.left[:len(rewrite.left) - len(head)])
    if product is None:
        return None
    return re.compile(rf"(?<![\w.]){re.escape(product.group(1))}[ \t]+{re.escape(head)}({re.escape(rewrite.removed)})"
                      rf"{re.escape(tail)}(?!\w|\.\d)")


def sibling_classes(rewrite: Rewrite) -> bool:
    """True when the rewrite changes the bases a class has (its context reaches back to the class's
    name in its header: `class TestLoaders():` -> `class TestLoaders(object):`, `class C(object):` ->
    `class C:`): its sites are the headers of the other classes, whatever their names, compared
    without them. A base given to a class that had none (`class Bar:` -> `class Bar(Generic[V]):`)
    is that class's own, but `object`, every class's base (`class Api:` -> `class Api(object):`)."""
    header = CLASS_NAME.match(rewrite.left)
    return header is not None and _context(TOKEN.findall(rewrite.left))[:1] == [header.group(2)] \
        and ("(" in rewrite.left or rewrite.removed.lstrip().startswith("(")
             or (not rewrite.removed and rewrite.inserted == "(object)"))


def string_prefix(rewrite: Rewrite) -> bool:
    """True when the rewrite spells a string's prefix anew and keeps its kind (`br"..."` ->
    `rb"..."`, `u"..."` -> `"..."`; not `f"..."` -> `"..."`, one string's own change): an idiom, its
    sites are the strings with the same prefix, whatever their lines."""
    def kind(prefix: str) -> set[str]:
        return set(prefix.lower()) - {"u"}
    prefixes = all(STRING_PREFIX.fullmatch(prefix) for prefix in (rewrite.removed, rewrite.inserted) if prefix)
    return bool(rewrite.removed) and rewrite.right[:1] in ("'", '"') and prefixes \
        and kind(rewrite.removed) == kind(rewrite.inserted)


def whole_line(rewrite: Rewrite) -> bool:
    """True when the rewrite replaced a line's whole text (`1 // 0` -> `raise ZeroDivisionError`) of
    `MIN_LINE_TOKENS` tokens or more, not marks alone (`...`): its sites are the exact copies of the
    line, under any indent."""
    return not rewrite.left.strip() and not rewrite.right.strip() and bool(rewrite.inserted.strip()) \
        and len(TOKEN.findall(rewrite.removed)) >= MIN_LINE_TOKENS and re.search(r"\w", rewrite.removed) is not None


def comment_dropped(rewrite: Rewrite) -> bool:
    """True when the rewrite takes a comment off the end of a line of code (`# pragma: nocover`,
    `# type: ignore`): its sites are the lines that end with the same comment, but for a line that
    opens a bracket or ends with a comma (the comment stands for a statement over several lines)."""
    return not rewrite.inserted and not rewrite.right.strip() and rewrite.left.strip() != "" \
        and rewrite.removed.lstrip().startswith("#")


def plain_name(token: str) -> bool:
    """True for a name that is no keyword."""
    return NAME.fullmatch(token) is not None and not keyword.iskeyword(token)


def path_before(rewrite: Rewrite) -> str | None:
    """The module path before the rewrite's word on an import's line (`uvicorn.` of `from
    uvicorn.logging import`, the empty path of `import logging`); None when the word is in no
    module's path."""
    found = _IMPORT_PATH.match(rewrite.left) if rewrite.word else None
    return None if found is None else found.group(1)
