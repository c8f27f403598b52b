"""Edits by analogy: the user's last change, carried to the places in the document that look like it.

`rewrite_of(event)` reads the event's one changed line as a token-level rewrite (else `block_of`
reads its changed lines as a block): the text removed and inserted (widened to whole words when
the change starts or ends inside one) and the text around it on its line. `sites(rewrite, text,
event)` finds where the same before-text stands elsewhere in the text after the event, outside the
event's lines:
- a *word* rewrite (one word removed: an identifier, a word of a comment, a docstring or a
  string) at every whole-word occurrence of the word, in any scope;
- a *pattern* rewrite (anything else: an argument added, an operator changed) where the tokens
  around the change recur: the removed text with up to `CONTEXT_TOKENS` tokens on its left (as
  far as the nearest name, and the `.`, `<` or `/` right before it: `</body` is no `<body`) and one
  on its right, strings and numbers in that context matching any string or number (sibling calls
  `f(1)` and `f(2)`, entries, decorators, repeated statements); inside a call the context
  reaches back to its callee (`CALL_TOKENS`) and the other names in it match any name
  (`route("/b", handler_b)` is a sibling of `route("/a", handler_a)`); right after a call that
  stands in no bracket, the context is that whole call, its arguments matched the same way
  (` is True` after `getattr(f, "x", False)`; not a comment put there); a change within a
  string's text takes its context from that text alone, and has no sites with no word of it
  before the change, but one inside an f-string's braces is code (`f"<{self.__class__` ->
  `f"<{type(self)`); a change at the end of its
  line goes only to the ends of lines (`@fixture` -> `@fixture(name="x")` leaves `@fixture(` alone);
  an insertion or a deletion anchored by keywords alone (`else:` dropped, `) -> None:` made
  `) -> bool | None:`) has no sites; a pattern in code whose context matches no other line, when
  its before-text says where else it goes by itself (`distinctive`: `t.Optional[str]`,
  `lambda e: len(e)`), goes where that text stands in code between the same two characters, on
  lines alike by `TEXT_SCORE` (`text_sites`: a parameter's annotation and an attribute's); a word
  in code put for another before the same attribute (`asyncio.iscoroutinefunction` ->
  `inspect.iscoroutinefunction`) goes where the old word reads that attribute (`qualified_sites`);
- a string's *start or end* changed where the literal rule owns the change (its whole text found
  nowhere else: `match="... allowed."` -> `match="... allowed"`) at the strings right after the same
  tokens that start or end alike (`string_end_sites`);
- a string's *prefix* spelled anew, its kind kept (`br"..."` -> `rb"..."`, `u"..."` -> `"..."`; not
  `f"..."` -> `"..."`) at every string with the same prefix, at any score (`string_prefix`);
- a *line* whose whole text was replaced (`1 // 0` -> `raise ZeroDivisionError`; three tokens or
  more, not marks alone) at the exact copies of that line under any indent (`whole_line`);
- the *exact copies* of the edited line, under any indent, whatever the kind's rules say (`line_copies`,
  `completion.edit_blocks.line_copy`: a local fixed on three copied lines, `elif` made `if`, a version in copied
  docstrings), but for a local renamed in its scope, a parameter list, a prose word put for another
  and a half-typed word;
- a *module* renamed on an import's line at its dotted references in strings and comments
  (`module_references`: `structlog.types.EventDict` in a docstring after `from .types import` ->
  `from .typing import`);
- a word put for another in a *URL's path* (`github.com/kennethreitz/requests` -> `github.com/requests/requests`)
  at the same host and path elsewhere, when nothing else has a site (`url_sites`), and a segment that is no
  word (`sloria` -> `marshmallow-code`) there whatever else has one (`url_segment`);
- a *definition* renamed on its header (`class TestClient:` -> `class QuartClient:`) at its mentions in
  strings (`definition_mentions`: `:meth:`~quart.testing.TestClient.open``, a repr's
  `"TestDataclass(foo=1)"`), for a name shaped as code only (`code_shaped`; `a` or `s` in prose is a word);
- a *comment* taken off the end of a line of code (`# pragma: nocover`) at the other lines of code
  that end with it, at any score (`comment_dropped`); a bare `# type: ignore` only where the line's
  code shares a name with the edited one's (it excused that name's type); a comment of *prose* put at
  a line's end (`  # Emoticons`; no tool's directive) speaks of that line: only its copies (`note_put`);
  a name the user newly binds (`with pytest.raises(E) as excinfo:`) goes nowhere (`fresh_binding`),
  nor a method's receiver made `cls` (`receiver_renamed`) or a number put into a bare call
  (`pilot.pause()` -> `pilot.pause(0.4)`: `value_for_one_call`);
- a string made *raw* for an invalid escape (pycodestyle's W605) at the file's other strings with no prefix
  that hold one, or as a regex a call takes (`match=` of `pytest.raises(`, ruff's RUF043) at the strings
  the same callee takes there (`completion.edit_escapes`);
- a test class's nose-style *hook renamed* for pytest (`def setup(` -> `def setup_method(`) at the file's
  other methods of that name, each class's own (`completion.edit_hooks`);
- *`-> None`* put on a function that returns nothing (ruff's ANN201) at the file's other functions with
  no return annotation that return nothing (`completion.edit_returns`);
- a *trailing comma* put after a definition's last parameter alone on its line (ruff's COM812) at the
  file's other definitions whose last parameter stands alike, of the same sort (`completion.edit_commas`);
- two *words joined* in prose (`in to` -> `into`) where else the same two stand apart in prose
  (`completion.edit_words`);
- a number of a *version tuple* bumped (`sys.version_info < (3, 9)` -> `(3, 10)`) at the old version's
  dotted spelling in strings and comments (`"requires Python 3.9+"`; `completion.edit_versions`);
- a bare *`except:`* given `Exception` (E722), `== None` made `is None` and the other linters' fixes of
  `completion.edit_lints` at the other places the same check flags;
- pycodestyle's *E402 excused* on one import below code at the other imports below that code
  (`completion.edit_directives`: the one directive that says where else it belongs);
- a *block*: two or more lines changed together (a comment and the statement under it rewritten,
  a call joined on one line; not lines deleted, but for one decorator taken off), one line rewritten
  with the blank lines beside it deleted (`Parameters:` and the blank under it made `Args:`), or one line split in
  several that keep most of its tokens (not a parameter list: its copies are other functions') at the exact
  copies of the removed lines under any indent, each made the inserted lines under its indent
  (`completion.edit_blocks`; a site spans its lines), and a stub's `...` joined onto its header at the
  other stubs (`stub_joined`);
- an *import's module* changed (`from click.utils import echo` -> `from .utils import echo`) at
  the other from-imports of the same place (`completion.edit_imports`).
Each site is scored by how alike its line is to the event's line before the change (the share of
their tokens, strings and numbers as their kind, that a diff keeps), and kept at `MIN_SCORE` or
more (a word that stands only in strings and comments, a typo, or a new name found nowhere
else, at any score). Definition headers (`def`, `class`) are no sites but for those: a change to
one function's parameters goes to its call sites (`completion.edit_regions`), and on real commits
its sibling definitions mostly kept theirs (7 of 22 such sites changed in the tuning set), but
for a header the same as the edited one was, a clone (`def callback(ctx, value):` in each of
several factories); a change to a class header goes to other class headers (`class C(object):`
-> `class C:`), whatever their names when the change is to the bases (`sibling_classes`). A word
changed in prose goes only where it keeps its sense (`in_sense`, `completion.prose_sense`). A name
put in that only functions bind goes only where it is bound (`names_bound`: `and sig == ...` not
into a method without `sig`); a name made to agree with its function only to functions that speak
of the same (`agreeing`: `_request_ctx_stack` -> `_websocket_ctx_stack` beside `websocket_context`);
a name taken off its line stays where its scope reads it (`bindings_kept`: `except E as e:` ->
`except E:` not where the handler returns `e`); a module renamed after its package goes only to that
package's path (`same_path`: `uvicorn.logging`, not `import logging`); a parameter given another
type not to its neighbours in the same list (`off_own_parameters`); prose made to speak of its place
not where a site's place names the old word (`own_subjects`: the comment over `json_decoder`); a
value put for another in code (`None` -> `[]`, `"truecolor"` -> ...) not into a function named for the
old value where the user's is not (`named_for_value`: `test_..._none_sys_argv` keeps its `None`).
The best `MAX_SITES` are returned. A change that ends a word that is the unfinished head of another
word of the text (a half-typed name) has no sites, but for keys that only took text off a word and
left one the text holds elsewhere (`Jinja2` -> `Jinja`). Each site (`completion.edit_sites.Site`) becomes a
`Replacement` of its UTF-8 bytes (`byte_replacements`), so drafts and regions follow the sites. Work
is bounded: at most `MAX_MATCHES` occurrences are looked at, and a line over `MAX_LINE_CHARS` is no
event line.
Everything here is pure.
"""
from __future__ import annotations

import difflib
import itertools
import keyword
import re
from collections.abc import Callable
from dataclasses import dataclass

from tree_sitter import Node

from completion.edit_blocks import block_of, block_sites, line_copy, stub_joined, stub_sites
from completion.edit_commas import comma_put, parameter_comma_sites
from completion.edit_escapes import made_raw, raw_sites, regex_sites
from completion.edit_events import EditEvent, common_ends
from completion.edit_hooks import hook_renamed, hook_sites
from completion.edit_directives import import_directive_sites, renamed_directive_sites, unused_directive_sites
from completion.edit_imports import import_sites, module_change
from completion.edit_joins import joined_quote, joined_sites
from completion.edit_lints import lint_sites
from completion.edit_regions import in_f_braces, rebound, signature_change
from completion.edit_returns import none_annotated, none_return_sites
from completion.edit_sites import (MAX_LINE_CHARS, MAX_MATCHES, MAX_SCORED, MAX_SITES, TOKEN, Site, alike,
                                   matched_sites, matches_off_event)
from completion.edit_versions import version_bumped, version_sites
from completion.edit_words import apart_sites, words_joined
from completion.english import english
from completion.positions import line_starts
from completion.prose_sense import capitalized, names, opens_sentence, owner_at, subject_at
from completion.syntax import ParsedDocument, ancestors, byte_offsets, enclosing_at
from completion.tree_names import (FUNCTION_TYPES, PYTHON_BUILTINS, binding_functions, binding_scope, identifiers_in,
                                   name_uses, node_text)

CONTEXT_TOKENS = 3  # tokens of a pattern's left context at most, outside a call
CALL_TOKENS = 8  # inside a call: back to its callee within this many tokens
LITERAL_CALL_TOKENS = 6  # a whole call with a literal argument, as a pattern's context: this many tokens at least
MIN_SCORE = 0.85  # a pattern's site: its line alike the event's by at least this share of tokens
MIN_WORD_SCORE = 0.8  # a word's site, when the new word is used elsewhere already
REPEATED_MIN_SCORE = 0.6  # any site's score, once the user made the same rewrite twice
CALL_SCORE = 0.6  # a site's score after a whole call with a literal argument (`literal_call`)
TYPO_RATIO = 0.75  # a word's spelling alike by this share: a typo fixed
INFLECTIONS = frozenset({"s", "es", "d", "ed", "ing", "ly"})  # endings that make another form of a word
MIN_LINE_TOKENS = 3  # a line replaced whole goes to its copies when it holds this many tokens
MIN_STEM = 5  # a shorter word with an ending is as likely a name spelled out (`http` -> `https`)
MIN_PART = 3  # a part of a name put for another, to agree with its function (`agreeing`), this long at least
MIN_TEXT_CHARS = 6  # a before-text of several tokens looked for without its context is this long at least
TEXT_SCORE = 0.7  # and its site's line alike the edited one by this share (`text_sites`)
_NAME = re.compile(r"[^\W\d]\w*")
_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")  # a name's parts: `HTTPRequest_id` -> HTTP, Request, id
STRING_PREFIX = re.compile(r"[rRbBuUfF]{1,2}")  # a string literal's prefix, before its quote
_STRING_PREFIX_END = re.compile(r"(?<!\w)[rRbBuUfF]{1,2}$")  # a string's prefix, right before its quote
_TIGHT_MARKS = frozenset({"<", "/", "."})
_STRING = re.compile(r""""[^"\n]*"|'[^'\n]*'""")
_NUMBER = re.compile(r"\d[\w.]*")
_KNOWN_NAMES = PYTHON_BUILTINS | {"Any", "Self"}
STRING_TYPES = frozenset({"string", "string_literal", "raw_string_literal", "template_string",
                          "interpreted_string_literal"})
PROSE_TYPES = STRING_TYPES | {"comment", "line_comment", "block_comment"}
_HEADER = re.compile(r"\s*(?:async\s+def|def|class)\s")
_CLASS = re.compile(r"\s*class\s")
_CLASS_NAME = re.compile(r"(\s*class\s+)([^\W\d]\w*)")  # a class header up to its name (group 2)
_PARAM_FIELD = re.compile(r"\s*:param\s+(?:[\w.\[\], ]+\s+)?(?:\\?\*){0,2}(\w+):")  # Sphinx's `:param str name:`
_LETTERS = re.compile(r"[A-Za-z]{3,}")  # a word of prose that may name a definition
_ANNOTATION_START = r"(?:^[ \t]*|[(,][ \t]*)(\w+)[ \t]*:[ \t]*"  # a name and its colon (group 1: the name)
_ANNOTATED = re.compile(_ANNOTATION_START + "$", re.MULTILINE)  # `spinner_style: `
_IN_ANNOTATION = re.compile(_ANNOTATION_START + r"[\w.]*$")  # `error_headers: typing.`
_IMPORTED = re.compile(r"(?:.*>>>)?[ \t]*(?:from|import)[ \t]+")  # a line up to an import's module
_TYPE_EXCUSE = re.compile(r"\s*#\s*type:\s*ignore\s*$")  # a bare excuse: it names no error, its line's names say why
_FROM_IMPORT = re.compile(r"\s*from\s+([\w.]+)\s+import\s")  # `from a.b import c`: its path (group 1)
_IMPORT_PATH = re.compile(r"\s*(?:from|import)\s+(?:[\w.]+,\s*)*([\w.]*)$")  # `from a.b.`: the path so far (group 1)
_ESCAPED_DOT = re.compile(r"\\{1,2}\.\w")  # a dot escaped in a regex's text, a name after it
_ATTRIBUTE_AFTER = re.compile(r"\.(\w+)")  # an attribute read right after a word (group 1: its name)
_VERSION = re.compile(r"\d+(?:\.\d+)+")  # a release's number: `2.4`, `3.0.1`
_PRODUCT_BEFORE = re.compile(r"(?<![\w.])([A-Z][\w-]*)[ \t]+$")  # a proper name right before (group 1): `Werkzeug `
_SPHINX_ROLES = frozenset({"func", "meth", "attr", "class", "data", "exc", "mod", "obj", "const", "ref", "doc"})
_URL_BEFORE = re.compile(r"(?:https?://|git@)([\w.-]+[/:](?:[\w.~-]+/)*)$")  # a URL up to a word of its path
#   (group 1: its host and path so far)
_URL_SEGMENT = re.compile(r"[\w.~-]*(?:/[\w.~-]+)?")  # the rest of a path's segment, and the next one
_PATH_SEGMENT = re.compile(r"[\w.~-]+")  # one segment of a URL's path, whole
_DEFINED = re.compile(r"\s*(?:async\s+)?(?:def|class)\s+(\w+)")  # a header up to its name (group 1)
_FIRST_PARAMETER = re.compile(r"\s*(?:async\s+)?def\s+\w+\s*\(\s*$")  # a def's header up to its first parameter
_NUMBER_VALUE = re.compile(r"[\d.\s/*+-]*\d[\d.\s/*+-]*")  # a number or a sum of numbers: `0.4`, `3 / 60`
_BINDING = re.compile(r"\bas\s+([^\W\d]\w*)\b|^\s*([^\W\d]\w*)\s*(?::[^=]*)?=(?!=)")  # `as x`; `x =` opening a line
_PROSE_NOTE = re.compile(r"\s+#(?!\s*(?:[\w-]+:|noqa\b|nosec\b)).*")  # a comment, no tool's `word:` directive
_CODE_WORD = re.compile(r"""(?:"[^"\n]*"|'[^'\n]*'|#[^\n]*)|([^\W\d]\w*)""")


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
        return _NAME.fullmatch(self.removed) is not None and _NAME.fullmatch(self.inserted) is not None

    @property
    def line_before(self) -> str:
        return self.left + self.removed + self.right

    @property
    def line_after(self) -> str:
        """The changed line as the rewrite left it."""
        return self.left + self.inserted + self.right


def _is_word(char: str) -> bool:
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
    if first and _is_word(first[0]):
        while start > 0 and _is_word(old[start - 1]):
            start -= 1
    last = (old[start:old_end] or new[start:new_end])[-1:]
    if last and _is_word(last):
        while old_end < len(old) and _is_word(old[old_end]):
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
    if depth < 0 or left[at] != "(" or at == 0 or not _NAME.fullmatch(left[at - 1]) \
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
        if depth < 0 and left[start + 1] == "(" and _NAME.fullmatch(left[start]):
            return left[start:]
    return _back_to_name(left, CONTEXT_TOKENS, _NAME.fullmatch)[0]


def _back_to_name(left: list[str], limit: int, is_name: Callable[[str], object]) -> tuple[list[str], bool]:
    """The last tokens of `left` back to its last name (`is_name`) within `limit` tokens, with the mark
    right before it (`</body` is no `<body`, `x.f` no `f`), and True; else its last `limit` tokens and False."""
    for at in range(len(left) - 1, max(-1, len(left) - limit - 1), -1):
        if is_name(left[at]):
            return left[at - 1 if at > 0 and left[at - 1] in _TIGHT_MARKS else at:], True
    return left[max(0, len(left) - limit):], False


def _token_pattern(token: str, any_name: bool = False) -> str:
    """A token's regex: any string for a string, any number for a number, any name for a name
    when `any_name` (an argument of a call's context), else the token itself (a quote that opens
    the string the change stands in is that quote: `f"<{self.__class__`)."""
    if any_name and _plain_name(token):
        return _NAME.pattern
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
    if opened is not None and not any(_NAME.fullmatch(token) for token in context):
        return None  # right after a string's quote: where else it goes, its line does not say
    right = TOKEN.findall(rewrite.right)[:1]
    replaced = bool(rewrite.removed and rewrite.inserted)
    if not any(_NAME.fullmatch(token) and (replaced or not keyword.iskeyword(token))
               for token in context + right + TOKEN.findall(rewrite.removed)):
        return None
    lead = next((index for index, token in enumerate(context) if _NAME.fullmatch(token)), 0)  # its name
    around = r"\s*".join(_token_pattern(token, index > lead) for index, token in enumerate(context))
    if sibling_classes(rewrite):  # the class's own name is any class's name
        around = r"\bclass[ \t]+" + r"\s*".join(_token_pattern(token, True) for token in context)
    after = r"\s*".join(map(_token_pattern, right)) if right else r"(?=[ \t\r]*$)"
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
    header = _CLASS_NAME.match(rewrite.left)
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


def fresh_binding(rewrite: Rewrite, text: str) -> bool:
    """True when the rewrite adds a binding of a name the text holds nowhere off the edited line
    (`with pytest.raises(E):` -> `with pytest.raises(E) as excinfo:`, `run()` -> `result = run()`): the
    user binds it to read it next, there; bound anywhere else, nothing would read it."""
    removed, inserted = rewrite.removed, rewrite.inserted
    if not (inserted.startswith(removed) or inserted.endswith(removed)) or inserted == removed:
        return False  # text put in, not taken off (a change widened to whole words keeps them)
    start, end = len(rewrite.left), len(rewrite.left) + len(inserted)
    for bound in _BINDING.finditer(rewrite.left + inserted):
        group = 1 if bound.group(1) else 2
        if start <= bound.start(group) and bound.end(group) <= end:  # the name is the user's to bind
            return not _whole_elsewhere(bound.group(group), text, rewrite.line_after)
    return False


def receiver_renamed(rewrite: Rewrite) -> bool:
    """True when the rewrite puts `cls` for a method's first parameter `self` or the reverse (`def
    compile(self, input)` -> `def compile(cls, input)`): that method became a class method or stopped
    being one, its own choice; the file's other methods keep their receiver."""
    return {rewrite.removed, rewrite.inserted} == {"self", "cls"} and _FIRST_PARAMETER.match(rewrite.left) is not None


def value_for_one_call(rewrite: Rewrite) -> bool:
    """True when the rewrite puts a number into a call that had no argument (`await pilot.pause()` ->
    `await pilot.pause(0.4)`, `@background_with_channel()` -> `(1)`): a wait or a size chosen for that
    one call; the same calls elsewhere kept theirs (5 tuning tasks of 5, none carried)."""
    return not rewrite.removed and rewrite.left.endswith("(") and rewrite.right.startswith(")") \
        and _NUMBER_VALUE.fullmatch(rewrite.inserted) is not None


def note_put(rewrite: Rewrite) -> bool:
    """True when the rewrite puts a comment of prose at the end of a line of code (`r"..."  #
    Emoticons`; not a tool's directive, `# type: ignore`, `# noqa`, `# pylint: ...`): it speaks of
    that line alone, and goes only where the same line stands (`same_lines`)."""
    return not rewrite.removed and not rewrite.right.strip() and rewrite.left.strip() != "" \
        and _PROSE_NOTE.fullmatch(rewrite.inserted) is not None


def code_names(line: str) -> set[str]:
    """The names a line's code uses (not in its strings or its comment), but for keywords, builtins
    and `self` and `cls`."""
    return {name for name in (found.group(1) for found in _CODE_WORD.finditer(line))
            if name and name not in _KNOWN_NAMES and name not in ("self", "cls") and not keyword.iskeyword(name)}


def half_typed(rewrite: Rewrite, text: str, code: bool = True) -> bool:
    """True when the inserted text ends a word that is only the head of a longer word of `text`
    and, in `code`, no builtin or keyword (a deletion types no word: `class C(object):` -> `class
    C:` leaves `C` as it was, nor does a change whose last word was its last before it, nor keys
    that only took text off a word and left one the text holds off the edited line, `Jinja2` ->
    `Jinja`, or took it from within a word and kept its end, `gte` -> `ge` (`cut_within`); nor an
    attribute the code reads elsewhere; a word backspaced to a stub found nowhere, `foo_bar` ->
    `foo_b`, is being retyped)."""
    ending = re.search(r"\w+$", rewrite.left + rewrite.inserted)
    if ending is None or not rewrite.inserted or (rewrite.right[:1] and _is_word(rewrite.right[0])) \
            or string_prefix(rewrite) or sphinx_role(rewrite):
        return False
    if code and (ending.group() in _KNOWN_NAMES or keyword.iskeyword(ending.group())):
        return False  # a builtin or a keyword is whole as typed: `object`, though `objects` is in the text
    if ending.group()[0].isdigit():
        return False  # a number is no head of a name: `3.0`, though `0x1F` is in the text
    last = re.search(r"\w+(?=\W*$)", rewrite.left + rewrite.removed)
    if last is not None and last.group() == ending.group():
        return False  # the change's last word was its last before: `Optional[Optional[int]]` -> `Optional[int]`
    if deleted_only(rewrite) and (cut_to_whole(rewrite) or cut_within(rewrite)
                                  or _whole_elsewhere(ending.group(), text, rewrite.line_after)):
        return False
    if code and rewrite.inserted.endswith("." + ending.group()) \
            and _whole_elsewhere(ending.group(), text, rewrite.line_after, attribute=True):
        return False  # an attribute the code reads elsewhere: `str(e)` -> `str(e.value)`, though `values` is there
    return re.search(rf"(?<!\w){re.escape(ending.group())}\w", text) is not None


def sphinx_role(rewrite: Rewrite) -> bool:
    """True when the rewrite put one of Sphinx's Python roles for another before the same target
    (`:meth:`is_json`` -> `:attr:`is_json``): a role is whole as typed, though `attribute` is in the text."""
    return rewrite.left.endswith(":") and rewrite.right.startswith(":`") and rewrite.inserted in _SPHINX_ROLES


def deleted_only(rewrite: Rewrite) -> bool:
    """True when the keys of the change only took text off (`Jinja2` -> `Jinja`), typed none."""
    head, tail = common_ends(rewrite.removed, rewrite.inserted)
    return len(rewrite.inserted) - tail <= head


def cut_to_whole(rewrite: Rewrite) -> bool:
    """True when keys that only took text off a word's end left a whole word: a version's digits
    (`jinja2` -> `jinja`), a part after an underscore (`default_value` -> `default`), or a typo's
    letters down to a word of English (`workd` -> `work`); the longer word the rest heads is the one
    they cut. A word backspaced to a stub (`foo_bar` -> `foo_b`, `default_valu`) is being retyped."""
    head, _ = common_ends(rewrite.removed, rewrite.inserted)
    cut = rewrite.removed[head:]
    if head != len(rewrite.inserted) or not cut:
        return False
    return cut.isdigit() or (cut.startswith("_") and len(cut) > 1) \
        or (typo(rewrite) and english(re.search(r"\w*$", rewrite.inserted).group()))


def cut_within(rewrite: Rewrite) -> bool:
    """True when keys that only took text off took it from within a word and left its end as it was
    (`gte=0` -> `ge=0`): no word's end is being typed."""
    head, tail = common_ends(rewrite.removed, rewrite.inserted)
    return 0 < head and 0 < tail and _is_word(rewrite.inserted[head - 1]) and _is_word(rewrite.inserted[-tail])


def _whole_elsewhere(word: str, text: str, line: str, attribute: bool = False) -> bool:
    """True when `word` stands whole in `text` more often than on its edited `line` (as an
    `attribute`: right after a dot, `.value`)."""
    lead = r"\." if attribute else r"(?<!\w)"
    pattern = re.compile(rf"{lead}{re.escape(word)}(?!\w)")
    return next(itertools.islice(pattern.finditer(text), len(pattern.findall(line)), None), None) is not None


def only_in_prose(word: str, text: str) -> bool:
    """True when `word` stands in strings and comments of `text` only, never as code (a typo)."""
    return not any(found.group(1) == word for found in _CODE_WORD.finditer(text))


def inflected(removed: str, inserted: str) -> bool:
    """True when one word of `MIN_STEM` letters or more is the other with an ending (`parameter`,
    `parameters`): grammar, one sentence's number or tense, not a spelling."""
    short, long = sorted((removed.lower(), inserted.lower()), key=len)
    return len(short) >= MIN_STEM and long.startswith(short) and long[len(short):] in INFLECTIONS


def spelled_alike(removed: str, inserted: str) -> bool:
    """True when the two words are spelled alike (`dateime`, `datetime`), not one word put for
    another (`twisted`, `stdlib`) nor the same word inflected (`inflected`)."""
    return not inflected(removed, inserted) \
        and difflib.SequenceMatcher(None, removed.lower(), inserted.lower(), autojunk=False).ratio() >= TYPO_RATIO


def typo(rewrite: Rewrite) -> bool:
    """True when the rewrite mends a word's spelling: one word for another spelled alike
    (`spelled_alike`), unless both are words of English (`later` -> `latter`, `decoder` -> `encoder`,
    `use` -> `used`: the sentence's own choice, `completion.english`) other than a URL's scheme
    (`http` -> `https`) or one word in another case (`THe` -> `The`)."""
    removed, inserted = rewrite.removed, rewrite.inserted
    if not rewrite.word or not spelled_alike(removed, inserted):
        return False
    return removed.lower() == inserted.lower() or rewrite.right.startswith("://") \
        or not (english(removed) and english(inserted))


def min_score(rewrite: Rewrite, text: str, starts: list[int], in_prose: bool | None, prose_only: bool) -> float:
    """The score a site needs: for a word changed in prose (`in_prose`, or one that stands in
    strings and comments only: `prose_only`), none for a typo fixed in a word found in prose only
    or a word's case changed (`rich` -> `Rich`), `MIN_WORD_SCORE` for another word (`name` ->
    `names` in a docstring, when `name` is code too); in code, none for a new word found nowhere
    else (a rename), `MIN_WORD_SCORE` for a word already used (or a builtin, or a keyword); none
    for a product's release (`product_release`); else (no word) `MIN_SCORE`, `CALL_SCORE` for text put
    after a whole call with a literal argument (`literal_call`)."""
    if comment_dropped(rewrite) or string_prefix(rewrite) or product_release(rewrite) is not None:
        return 0.0
    if not rewrite.word:
        return CALL_SCORE if literal_call(rewrite) else MIN_SCORE
    if in_prose or prose_only:
        same_word = rewrite.removed.lower() == rewrite.inserted.lower()  # `rich` -> `Rich`
        return 0.0 if same_word or (prose_only and typo(rewrite)) else MIN_WORD_SCORE
    if rewrite.inserted in _KNOWN_NAMES or keyword.iskeyword(rewrite.inserted):
        return MIN_WORD_SCORE
    used = re.compile(rf"(?<!\w){re.escape(rewrite.inserted)}(?!\w)")
    line_start, line_end = starts[rewrite.line], starts[rewrite.line + 1]  # `starts` ends with len(text)
    return MIN_WORD_SCORE if used.search(text, 0, line_start) or used.search(text, line_end) else 0.0


def prose_only_word(word: str, pattern: re.Pattern, text: str, prose: Callable[[int], bool] | None) -> bool:
    """True when `word` (where `pattern` finds it, group 1) stands in strings and comments only: by
    the tree (`prose`; its first `MAX_MATCHES` places), else by the text's one-line strings and
    comments."""
    if prose is None:
        return only_in_prose(word, text)
    return all(prose(match.start(1)) for match in itertools.islice(pattern.finditer(text), MAX_MATCHES))


def prose_at(document: ParsedDocument) -> Callable[[int], bool] | None:
    """Whether a character offset of the document's text lies in a string or a comment, from its
    tree (None without one); each answer costs the text since the offset asked before (`byte_offsets`)."""
    enclosing = enclosing_at(document, PROSE_TYPES)
    return None if enclosing is None else (lambda offset: enclosing(offset) is not None)


def edit_in_prose(rewrite: Rewrite, starts: list[int], prose: Callable[[int], bool] | None) -> bool | None:
    """Whether the rewrite's change stands in prose in the text after it, whose lines start at
    `starts` (`within`; None without a tree)."""
    return None if prose is None else within(prose, starts[rewrite.line] + len(rewrite.left))


def within(prose: Callable[[int], bool], at: int) -> bool:
    """True when a change at offset `at` stands in prose: both the character before it and the one
    at it lie in a string or a comment (a string deleted or put in, `Control("")` -> `Control()`,
    or a comment taken off after a string, stands in code)."""
    return prose(max(0, at - 1)) and prose(at)


def dotted(text: str, start: int, end: int) -> bool:
    """True when the word at `text[start:end]` is part of a dotted name or a path (`click.parser`,
    `~click.Context`, `github.com/pallets/click/issues`), a URL's scheme (`http://`) or a module an
    import names (`>>> from jinja2 import Environment` in a doctest): in prose, a reference to code
    or to a place, not the word it spells."""
    return (start >= 2 and text[start - 1] in "./" and _is_word(text[start - 2])) \
        or (text[end:end + 1] in (".", "/") and _is_word(text[end + 1:end + 2] or " ")) \
        or text.startswith("://", end) or _IMPORTED.fullmatch(text, text.rfind("\n", 0, start) + 1, start) is not None


def in_sense(rewrite: Rewrite, text: str, edited_at: int, prose_only: bool,
             owner: Callable[[int], str] | None) -> Callable[[int, int], bool]:
    """For a word changed in prose at `edited_at`: whether a site (its offset, its line's start)
    keeps the change's sense (`completion.prose_sense`): a capital put at a sentence's start on a
    word that is no name in the code (`prose_only`) goes to sentence starts only; a word put for
    another (no typo, no case) goes nowhere the old word names the site's function or class, nor
    out of the edited one when the new word names it."""
    sentence = capitalized(rewrite.removed, rewrite.inserted) and opens_sentence(text, edited_at) \
        and prose_only  # `colorama` -> `Colorama`: a name, capitalized everywhere
    swap = owner is not None and rewrite.removed.lower() != rewrite.inserted.lower() \
        and not typo(rewrite)
    own = owner(edited_at) if swap else ""
    named = swap and names(rewrite.inserted, own)

    def keeps(at: int, line_start: int) -> bool:
        if sentence and not opens_sentence(text, at):
            return False
        if not swap:
            return True
        site_owner = owner(at)
        return not names(rewrite.removed, site_owner) and not (named and site_owner != own)
    return keeps


def own_subjects(rewrite: Rewrite, starts: list[int], document: ParsedDocument) -> Callable[[Site], bool] | None:
    """For a word put for another in prose (no typo, no case) where the user's place names the new
    word and not the old (`subject_at`: `#: Blueprint local JSON decoder class` made `encoder` over
    `json_encoder = None`; `content of the response body` made `request` in `class Request`): whether
    a site's place does not name the old word without the new, where the prose speaks of its own
    subject already (over `json_decoder = None`, in `class Response`); None for any other rewrite."""
    if not rewrite.word or typo(rewrite) or rewrite.removed.lower() == rewrite.inserted.lower():
        return None
    subject = subject_at(document)
    old, new = rewrite.removed.lower(), rewrite.inserted.lower()
    mine = set() if subject is None else subject(starts[rewrite.line] + len(rewrite.left))
    if new not in mine or old in mine:
        return None

    def own(site: Site) -> bool:
        theirs = subject(site.start)
        return new in theirs or old not in theirs
    return own


def phrase_in_sense(rewrite: Rewrite, edited_at: int,
                    owner: Callable[[int], str] | None) -> Callable[[int, int], bool] | None:
    """For text other than one word changed in prose at `edited_at`: whether a site (its offset,
    its line's start) keeps the change's sense: not where a word of the old text names the site's
    function or class but not the edited one's (`an entity header` -> `a hop-by-hop header` in
    `is_hop_by_hop_header`'s docstring stays out of `is_entity_header`'s); None when no word can."""
    words = _LETTERS.findall(rewrite.removed) if owner is not None else []
    own = owner(edited_at) if words else ""
    words = [word for word in words if not names(word, own)]
    if not words:
        return None
    return lambda at, line_start: not any(names(word, owner(at)) for word in words)


def site_checks(rewrite: Rewrite, text: str, edited_at: int, no_headers: bool, in_prose: bool | None,
                prose_only: bool, owner: Callable[[int], str] | None) -> Callable[[int, int, int, str], bool]:
    """Whether a match of the rewrite's pattern (its start and end in `text`, its line's start and
    text) may be a site, before its score: no definition header when `no_headers` (but the class
    headers of a class header's change, and the clones of the edited header); in prose, a word
    dotted as the edited one (at `edited_at`) is or is not (`dotted`) and kept in its sense
    (`in_sense`, `phrase_in_sense`); a place of the edited one's kind (`kept_to_its_own`); a bare type
    excuse only on a line that shares a name with the edited one."""
    before_line = rewrite.line_before
    classes = _CLASS.match(before_line) is not None  # a class's bases changed: its siblings' too
    prose_word = rewrite.word and bool(in_prose)
    as_dotted = dotted(text, edited_at, edited_at + len(rewrite.inserted)) if prose_word else None
    keeps = in_sense(rewrite, text, edited_at, prose_only, owner) if prose_word \
        else phrase_in_sense(rewrite, edited_at, owner) if in_prose else None
    excused = code_names(before_line) if comment_dropped(rewrite) and _TYPE_EXCUSE.match(rewrite.removed) else None
    own_place = kept_to_its_own(rewrite, text, in_prose)

    def may_be(start: int, end: int, line_start: int, line_text: str) -> bool:
        if not own_place(start, end, line_start, line_text):
            return False
        if no_headers and _HEADER.match(line_text) and not (classes and _CLASS.match(line_text)) \
                and line_text.strip() != before_line.strip():
            return False
        if as_dotted is not None and dotted(text, start, end) != as_dotted:
            return False
        if keeps is not None and not keeps(start, line_start):
            return False
        return excused is None or bool(excused & code_names(line_text))
    return may_be


def kept_to_its_own(rewrite: Rewrite, text: str, in_prose: bool | None) -> Callable[[int, int, int, str], bool]:
    """Whether a site (its start and end in `text`, its line's start and text) is of the kind of
    place the change was made at: a URL's scheme only before `://` (not `werkzeug.http`); text put into
    one parameter's Sphinx description (`:param method:`) not into another's (a typo mended, or text
    only taken off, into any); an annotation changed only on names akin to the annotated one (`_kin`)."""
    scheme = rewrite.word and rewrite.right.startswith("://")
    field = _PARAM_FIELD.match(rewrite.line_before) if rewrite.inserted else None
    field = None if field is None or typo(rewrite) else field
    annotated = annotation_name(rewrite) if not in_prose else None

    def kept(start: int, end: int, line_start: int, line_text: str) -> bool:
        if scheme and not text.startswith("://", end):
            return False
        other_field = _PARAM_FIELD.match(line_text) if field is not None else None
        if other_field is not None and other_field.group(1) != field.group(1):
            return False
        return annotated is None or _kin(annotated, _ANNOTATED.search(text, line_start, start))
    return kept


def annotation_name(rewrite: Rewrite) -> str | None:
    """The name whose annotation the rewrite changes from its start (`spinner_style` of
    `spinner_style: str` -> `spinner_style: StyleType`); None for any other change."""
    found = _ANNOTATED.search(rewrite.left)
    return None if found is None or keyword.iskeyword(found.group(1)) else found.group(1)  # `else: `


def _kin(name: str, other: re.Match | None) -> bool:
    """True when an annotation's site annotates a name that shares a part with the edited one's
    (`ws_ping_interval`, `ws_ping_timeout`), or annotates nothing."""
    if other is None:
        return True
    return bool(_word_parts(name) & _word_parts(other.group(1)))


def _word_parts(name: str) -> set[str]:
    """A name's parts of letters, in lower case (`_PART`: `wsPingInterval`, `ws_ping_interval` -> ws,
    ping, interval)."""
    return {part.lower() for part in _PART.findall(name) if not part.isdigit()}


def distinctive(rewrite: Rewrite) -> bool:
    """True when the rewrite's before-text says where else it goes without its line's context: text
    put for other text, `MIN_TEXT_CHARS` or more in two tokens or more with a name among them
    (`t.Optional[str]`, `lambda e: len(e)`); not a word (the word rule's) nor a line's whole text."""
    tokens = TOKEN.findall(rewrite.removed)
    return bool(rewrite.inserted) and not rewrite.word and len(tokens) >= 2 \
        and len(rewrite.removed.strip()) >= MIN_TEXT_CHARS and not whole_line(rewrite) \
        and any(map(_plain_name, tokens))


def text_sites(rewrite: Rewrite, text: str, event: EditEvent, starts: list[int],
               prose: Callable[[int], bool]) -> list[Site]:
    """For a `distinctive` rewrite in code whose context pattern found no site: the places in code
    where its before-text stands between the same two characters as on the edited line, on lines
    alike it by `TEXT_SCORE` (`t.Optional[str]` in a parameter and in a class attribute; `[` before
    `Optional[Style]` keeps it out of the `Optional[...]` the user took off), not in another
    function's parameters (`others_parameters`)."""
    if not rewrite.left or not rewrite.right:
        return []
    before, after = re.escape(rewrite.left[-1]), re.escape(rewrite.right[0])
    pattern = re.compile(f"(?<={before})({re.escape(rewrite.removed)})(?={after})")
    found = []
    for match, line, line_text in matches_off_event(pattern, text, starts, event):
        if within(prose, match.start(1)) or others_parameters(rewrite, line_text):
            continue
        score = alike(line_text, rewrite.line_before)
        if score >= TEXT_SCORE:
            found.append(Site(match.start(1), match.end(1), rewrite.inserted, line, score, TEXT_SCORE))
    return found


def others_parameters(rewrite: Rewrite, line_text: str) -> bool:
    """True when the rewrite changed the parameters on a definition's header (`def loads(object_: Any`
    -> `str`; a class's bases count as its parameters) and `line_text` is the header of a definition of
    another name (`def dumps(object_: Any`): its parameters are its own, while an override of the same
    name follows (`__deepcopy__` in sibling classes), as does a return annotation (`-> t.NoReturn` ->
    `-> "te.NoReturn"`)."""
    edited, other = _DEFINED.match(rewrite.line_before), _DEFINED.match(line_text)
    return edited is not None and other is not None and edited.group(1) != other.group(1) \
        and rewrite.left.count("(") > rewrite.left.count(")")


def qualified_sites(rewrite: Rewrite, text: str, event: EditEvent, starts: list[int],
                    prose: Callable[[int], bool] | None) -> list[Site]:
    """For a word in code put for another before the same attribute (`asyncio.iscoroutinefunction`
    -> `inspect.iscoroutinefunction`) whose context pattern found no site: the places in code where
    the old word stands before that attribute, each scoring 1 (the dotted name says where it goes,
    whatever the line around it); none for an attribute's own name (`self.server` -> `self.client`)."""
    attribute = _ATTRIBUTE_AFTER.match(rewrite.right)
    if not rewrite.word or attribute is None or rewrite.left.endswith(".") or prose is None:
        return []
    pattern = re.compile(rf"(?<![\w.])({re.escape(rewrite.removed)})\.{attribute.group(1)}(?!\w)")
    return [Site(match.start(1), match.end(1), rewrite.inserted, line, 1.0)
            for match, line, _ in matches_off_event(pattern, text, starts, event) if not within(prose, match.start(1))]


def string_end(rewrite: Rewrite) -> tuple[int, bool] | None:
    """(where the string the change stands in opens on its line, True for its end) when the rewrite
    takes text off the start or the end of one string's text, or puts other text there (`match="...
    allowed."` -> `match="... allowed"`, `"http://localhost/auth"` -> `"/auth"`); None otherwise."""
    opened = string_opened_at(rewrite.left)
    if opened is None or not rewrite.removed or re.search("[\"'\\\\]", rewrite.removed + rewrite.inserted):
        return None
    quote = rewrite.left[opened]
    if rewrite.right.startswith(quote):
        return opened, True
    return (opened, False) if opened == len(rewrite.left) - 1 and quote in rewrite.right else None


def _named_context(left: list[str]) -> list[str]:
    """The tokens of `left` back to its last name that is no keyword (`.location`), within `CALL_TOKENS`;
    none without one."""
    context, named = _back_to_name(left, CALL_TOKENS, _plain_name)
    return context if named else []


def _plain_name(token: str) -> bool:
    """True for a name that is no keyword."""
    return _NAME.fullmatch(token) is not None and not keyword.iskeyword(token)


def string_end_sites(rewrite: Rewrite, event: EditEvent, prose: Callable[[int], bool] | None) -> list[Site]:
    """For a `string_end` change of a string the literal rule owns (its whole text found nowhere
    else): the strings in code right after the same tokens (back to a name: `match=`, `.location ==`,
    `_named_context`; a key's string too: `headers["Location"] ==`) whose text starts or ends as the edited
    one's did, at any score (the tokens and the text are the analogy: on the tuning commits no site
    of this rule was a false edit), each made to start or end as the edit left it."""
    found_end = string_end(rewrite)
    if found_end is None or prose is None:
        return []
    opened, at_end = found_end
    code = _STRING_PREFIX_END.sub("", rewrite.left[:opened])  # the code before the string, its prefix off
    quote, context = rewrite.left[opened], _named_context(TOKEN.findall(code))
    if not context:
        return []
    around = (r"(?<!\w)" if _NAME.match(context[0]) else "") + r"\s*".join(map(re.escape, context))
    removed, other = re.escape(rewrite.removed), f"[^{quote}\\\\\n]*"
    text_of = f"{other}({removed}){quote}" if at_end else f"({removed}){other}{quote}"
    pattern = re.compile(f"{around}[ \\t]*(?:{STRING_PREFIX.pattern})?{quote}{text_of}")
    starts, text = line_starts(event.after), event.after
    found = [Site(match.start(1), match.end(1), rewrite.inserted, line, alike(line_text, rewrite.line_before), 0.0)
             for match, line, line_text in matches_off_event(pattern, text, starts, event)
             if not within(prose, match.start())]
    return sorted(found, key=lambda site: (-site.score, abs(site.line - rewrite.line)))[:MAX_SITES]


def nearest(matches: list[tuple[re.Match, int, str]], line: int) -> list[tuple[re.Match, int, str]]:
    """The matches (match, its line, that line's text) nearest `line`, `MAX_SCORED` at most, in text
    order: a pattern found all over a large file is scored near the edit only (each score is a diff
    of two lines: 2,000 of them took 140 ms in a 390 KB file)."""
    if len(matches) <= MAX_SCORED:
        return matches
    return sorted(sorted(matches, key=lambda found: abs(found[1] - line))[:MAX_SCORED],
                  key=lambda found: found[0].start())


def line_scorer(rewrite: Rewrite, prose: bool) -> Callable[[str], float]:
    """How alike a site's line is to the edited line before the change (`alike`); for a change to
    a class's bases, the two headers without their classes' names (`sibling_classes`)."""
    if not sibling_classes(rewrite):
        return lambda line_text: alike(line_text, rewrite.line_before, prose)
    unnamed = _CLASS_NAME.sub(r"\1_", rewrite.line_before, 1)
    return lambda line_text: alike(_CLASS_NAME.sub(r"\1_", line_text, 1), unnamed, prose)


def sites(rewrite: Rewrite, text: str, event: EditEvent, scoped: bool = False,
          prose: Callable[[int], bool] | None = None, repeated: bool = False,
          floor: float | None = None, owner: Callable[[int], str] | None = None) -> list[Site]:
    """The places of `text` (the text after `event`) where the rewrite applies, best first; none
    when its before-text stands on the event's line more than once (the user changed one of them),
    nor for a word whose scope the rename rule knows (`scoped`: a local or a parameter, renamed in
    its function; in other functions the same name is another variable), unless the user made the
    same rewrite before (`repeated`, `completion.edit_patterns`): then a site needs a score of
    `REPEATED_MIN_SCORE` at most, and a change to a definition's header goes to the others. A word
    changed in prose goes only to places dotted as the edited one is or is not (`dotted`). With a
    `floor`, a site scoring below the fixed cut but at least `floor` is kept too (each site says
    the cut it had, `needed`): a judge of sites decides (`completion.site_judge`). With `owner`
    (the name of the function or class around an offset), a word changed in prose goes only
    where it keeps its sense (`in_sense`)."""
    pattern = site_pattern(rewrite)
    if pattern is None or (scoped and rewrite.word and not repeated) \
            or len(pattern.findall(rewrite.line_before)) != 1:
        return []
    starts = line_starts(text)
    in_prose = edit_in_prose(rewrite, starts, prose)
    if half_typed(rewrite, text, code=not in_prose):
        return []
    prose_only = rewrite.word and prose_only_word(rewrite.removed, pattern, text, prose)
    needed = min(min_score(rewrite, text, starts, in_prose, prose_only), REPEATED_MIN_SCORE if repeated else 1.0)
    headers = repeated and _HEADER.match(rewrite.line_before) is not None  # a header's change made twice
    may_be = site_checks(rewrite, text, starts[rewrite.line] + len(rewrite.left), bool(needed) and not headers,
                         in_prose, prose_only, owner)
    score_of = line_scorer(rewrite, bool(in_prose))
    found: list[Site] = []
    for match, line, line_text in nearest(list(matches_off_event(pattern, text, starts, event)), rewrite.line):
        if not may_be(match.start(1), match.end(1), starts[line], line_text):
            continue
        score = score_of(line_text)
        if score >= (needed if floor is None else min(needed, floor)) \
                and (in_prose is None or within(prose, match.start(1)) == in_prose):
            found.append(Site(match.start(1), match.end(1), rewrite.inserted, line, score, needed))
    if not found and in_prose is False:  # the context was too narrow for its sites
        found = text_sites(rewrite, text, event, starts, prose) if distinctive(rewrite) \
            else qualified_sites(rewrite, text, event, starts, prose)
    return sorted(found, key=lambda site: (-site.score, abs(site.line - rewrite.line)))[:MAX_SITES]


def copied(rewrite: Rewrite, text: str, in_prose: bool | None) -> bool:
    """True when the rewrite goes to the exact copies of its line (`line_copies`), whatever
    the other rules say: a change in code, or in prose one to a number (`.. versionadded:: 1.0`) or
    a typo fixed (a word put for another in prose is as often one copy's mistake mended: `max` ->
    `min` in one docstring of two alike); never a half-typed word (`half_typed`; a number is none),
    unless the word stands whole in the text off the edited line (`exc` for `e`, though `exc_info`
    is there too)."""
    numbers = re.fullmatch(r"[\d.]*\d[\d.]*", rewrite.removed + rewrite.inserted) is not None
    if numbers:
        return True  # a number is no head of a name
    if in_prose and not typo(rewrite):
        return False
    ending = re.search(r"\w+$", rewrite.left + rewrite.inserted)
    return not half_typed(rewrite, text, code=not in_prose) \
        or (ending is not None and _whole_elsewhere(ending.group(), text, rewrite.line_after))


def line_copies(rewrite: Rewrite, event: EditEvent, document: ParsedDocument | None) -> list[Site]:
    """The exact copies of the rewrite's line (`completion.edit_blocks.line_copy`, `block_sites`) when
    the change goes to them (`copied`), each scoring 1; none for a change to a function's parameters
    (a parameter's line copied in another signature is that function's)."""
    block = line_copy(rewrite.line_before, rewrite.line_after)
    found = [] if block is None else block_sites(block, event.after, event)
    if not found or (document is not None and document.tree is not None
                     and signature_change(event, document) is not None):
        return []
    prose = prose_at(document) if document is not None else None
    return found if copied(rewrite, event.after, edit_in_prose(rewrite, line_starts(event.after), prose)) else []


def with_copies(copies: list[Site], found: list[Site]) -> list[Site]:
    """The sites of both lists, a copy first where both found a place; best first, `MAX_SITES` at most."""
    taken = {site.line for site in copies}
    merged = copies + [site for site in found if site.line not in taken]
    return sorted(merged, key=lambda site: -site.score)[:MAX_SITES]


def module_references(rewrite: Rewrite, event: EditEvent, document: ParsedDocument | None) -> list[Site]:
    """For a module renamed on an import's line (`import jinja2` -> `import jinja`, `from .types import
    X` -> `from .typing import X`, or a module imported by name, lowercase by PEP 8: `from structlog
    import common` -> `... import processors`): the places in strings and comments where the old name
    is part of a dotted path (`structlog.types.EventDict` in a docstring, `"jinja2.ext.i18n"`; one
    imported by name, after its package: `structlog.common`), and in code after the import's whole
    absolute path (`structlog.types.Processor` after `from structlog.types import`), each scoring 1.
    A class or function imported by name (`from typing import Sequence`) is no module."""
    after = module_named(rewrite)
    if after is None or document is None:
        return []
    prose, text, starts = prose_at(document), event.after, line_starts(event.after)
    if prose is None:
        return []
    package = path_before(rewrite) if after == "" else None
    in_code = package is not None and package[:1].isalpha()  # `structlog.`, not a relative `.`
    pattern = re.compile(rf"(?<!\w){re.escape(after)}({re.escape(rewrite.removed)})(?!\w)")

    def referenced(start: int, end: int) -> bool:
        if within(prose, start):
            return module_path(text, start, end)
        return in_code and text.startswith(package, start - len(package)) and text.startswith(".", end)
    return [Site(match.start(1), match.end(1), rewrite.inserted, line, 1.0)
            for match, line, _ in matches_off_event(pattern, text, starts, event)
            if referenced(match.start(1), match.end(1))][:MAX_SITES]


def definition_mentions(rewrite: Rewrite, event: EditEvent, document: ParsedDocument | None) -> list[Site]:
    """For a function or class renamed on its header (`class TestClient:` -> `class QuartClient:`), a
    name shaped as code (`code_shaped`): the places in strings, docstrings too, where the old name
    stands whole (`:meth:`~quart.testing.TestClient.open``, a repr's `"TestDataclass(foo=1)"`, as an
    editor's rename offers them), nearest first, each scoring 1; the code is the rename rule's. Not in
    comments: on held-out synthetic renames they kept the name they had (`how _body_framing treats them`)."""
    defined = _DEFINED.match(rewrite.line_before)
    if not rewrite.word or defined is None or defined.group(1) != rewrite.removed \
            or not code_shaped(rewrite.removed) or document is None:
        return []
    in_string = enclosing_at(document, STRING_TYPES)
    if in_string is None:
        return []
    pattern = re.compile(rf"(?<!\w)({re.escape(rewrite.removed)})(?!\w)")
    return matched_sites(pattern, rewrite.inserted, rewrite.line, event, lambda at: in_string(at) is not None)


def url_segment(rewrite: Rewrite) -> bool:
    """True when the rewrite put one segment of a URL's path for another that is no word
    (`github.com/sloria/webargs` -> `github.com/marshmallow-code/webargs`): its sites are the URL's
    (`url_sites`), whatever the lines around them."""
    return not rewrite.word and _PATH_SEGMENT.fullmatch(rewrite.removed) is not None \
        and _PATH_SEGMENT.fullmatch(rewrite.inserted) is not None and _URL_BEFORE.search(rewrite.left) is not None


def url_sites(rewrite: Rewrite, event: EditEvent) -> list[Site]:
    """For a word or a segment (`url_segment`) put for another in a URL's path
    (`github.com/kennethreitz/requests` -> `github.com/requests/requests`, an organization renamed):
    the other places of the text where the same host and path stand around the old one, up to the
    path's next segment, whatever the scheme (`https://`, `git@`), each scoring 1, nearest first."""
    url = _URL_BEFORE.search(rewrite.left) if rewrite.word or url_segment(rewrite) else None
    if url is None:
        return []
    host, rest = re.escape(url.group(1)), re.escape(_URL_SEGMENT.match(rewrite.right).group())
    pattern = re.compile(rf"(?<=[/@]){host}({re.escape(rewrite.removed)}){rest}(?![\w.~-])")
    return matched_sites(pattern, rewrite.inserted, rewrite.line, event)


def code_shaped(name: str) -> bool:
    """True when `name` reads as code in prose: an underscore inside it or a capital after its first
    letter (`get_data`, `TestClient`; not `a`, `render`, `Request`)."""
    return "_" in name.strip("_") or any(char.isupper() for char in name[1:])


def module_path(text: str, start: int, end: int) -> bool:
    """True when the word at `text[start:end]` (in prose) is part of a dotted path (`dotted`), its
    dot escaped in a regex's text too (`jinja2\\.exceptions`)."""
    return dotted(text, start, end) or _ESCAPED_DOT.match(text, end) is not None


def module_named(rewrite: Rewrite) -> str | None:
    """What must stand right before a dotted reference to the module the rewrite renamed on an
    import's line: nothing for a module of the import's path, its package and a dot for a module
    imported by name; None when the rewrite renamed no module."""
    if not rewrite.word:
        return None
    if path_before(rewrite) is not None:
        return ""  # in the module's path
    imported = _FROM_IMPORT.match(rewrite.line_before)
    if imported is None:
        return None
    package = imported.group(1)
    return f"{package}." if rewrite.removed.islower() and not package.startswith(".") else None


def analogy_sites(event: EditEvent, scoped: bool = False, literal: bool = False,
                  document: ParsedDocument | None = None, repeated: bool = False,
                  floor: float | None = None) -> list[Site]:
    """The sites of the event's rewrite in its text after (none when it is no one-line rewrite);
    `scoped` when the rename rule found the renamed name's uses in its scope; `literal` when the
    literal rule owns the event (a whole string or number changed): then only a word has sites, and a
    string's start or end (`string_end_sites`).
    With the parsed `document` (the text after), a change in prose (strings, comments; `within`)
    goes to prose only, one in code to code, and a word changed in prose only where it keeps its
    sense (`in_sense`). `repeated`: the user made the same rewrite before; `floor`:
    sites below the fixed cut down to it are kept too (`sites`). The exact copies of the edited line
    come first, whatever the rest says (`line_copies`), but for a word the rename rule renamed in its
    scope: a copy in another scope names another variable there. No site is one the change would
    break or mislead (`names_bound`, `agreeing`, `bindings_kept`, `same_path`), nor one whose function
    is named for the value the user put another for (`named_for_value`), and a name the user
    newly binds has none (`fresh_binding`: only the user's line will read it), nor a method's receiver
    made `cls` or `self` (`receiver_renamed`: the other methods keep theirs), nor a number put into a
    call that had none (`value_for_one_call`)."""
    rewrite = rewrite_of(event)
    if rewrite is None:
        block = None if scoped or literal else block_of(event)
        if block is not None and stub_joined(block):
            return stub_sites(event.after, event)
        if block is None or (len(block.removed) == 1 and document is not None and document.tree is not None
                             and signature_change(event, document) is not None):
            return []  # a parameter list split: its copies are other functions' (`line_copies`)
        return block_sites(block, event.after, event)
    if fresh_binding(rewrite, event.after) or receiver_renamed(rewrite) or value_for_one_call(rewrite):
        return []
    own_scope = scoped and rewrite.word and not repeated  # a local renamed in its scope: no copy elsewhere
    copies = [] if own_scope else line_copies(rewrite, event, document)
    found = rule_sites(rewrite, event, scoped, literal, document, repeated, floor)
    proposed = with_copies(copies, found + module_references(rewrite, event, document)
                           + definition_mentions(rewrite, event, document)) or url_sites(rewrite, event)
    if not proposed or document is None or document.tree is None:
        return proposed
    text, starts = event.after, line_starts(event.after)
    in_code = not edit_in_prose(rewrite, starts, prose_at(document))  # the code checks read the edit's code
    checks = [same_path(rewrite, text), trailing_comma(rewrite, text, starts),
              *((names_bound(rewrite, text, starts, document), agreeing(rewrite, text, starts, document),
                 bindings_kept(rewrite, text, document), marked_unused(rewrite, text, starts, document),
                 off_own_parameters(rewrite, text, starts, document), named_for_value(rewrite, starts, document))
                if in_code else (own_subjects(rewrite, starts, document),))]
    checks = [check for check in checks if check is not None]
    return [site for site in proposed if all(check(site) for check in checks)]


_STRING_BODY = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"")
_CONSTANTS = frozenset({"None", "True", "False"})


def value_words(code: str) -> list[str]:
    """The words of a piece of code that holds values only (constants, numbers, strings: `None`,
    `'page_markdown'`), those of its constants and strings; [] when it names anything else."""
    bare = _STRING_BODY.sub(" ", code)
    if any(name not in _CONSTANTS for name in _NAME.findall(bare)):
        return []
    return _NAME.findall(code)


def named_for_value(rewrite: Rewrite, starts: list[int], document: ParsedDocument) -> Callable[[Site], bool] | None:
    """For a value put for another in code (`replace_one("{posargs}", None)` -> `[]`): whether a
    site's function is not named for the old value where the user's is not (`test_..._none_sys_argv`
    keeps its `None` when `test_..._empty_sys_argv` took `[]`); None when no word can tell."""
    words = [word for word in value_words(rewrite.removed) if len(word) >= 3]
    owner = owner_at(document) if words else None
    if owner is None:
        return None
    own = owner(starts[rewrite.line] + len(rewrite.left))
    words = [word for word in words if not names(word, own)]
    if not words:
        return None
    return lambda site: not any(names(word, owner(site.start)) for word in words)


def same_path(rewrite: Rewrite, text: str) -> Callable[[Site], bool] | None:
    """For a module renamed after its package on an import's line (`from uvicorn.logging import` ->
    `from uvicorn._logging import`): whether a site follows the same package (`uvicorn.logging` in
    a string, not the standard library's `import logging`); None for any other change."""
    before = path_before(rewrite)
    package = before.rstrip(".").rpartition(".")[2] if before and before.endswith(".") else ""
    if not package:
        return None
    path = f"{package}.{rewrite.removed}"  # `logging.` of `from ..logging.` too: a relative path's tail
    return lambda site: path in text[site.start - len(path):site.end]


def path_before(rewrite: Rewrite) -> str | None:
    """The module path before the rewrite's word on an import's line (`uvicorn.` of `from
    uvicorn.logging import`, the empty path of `import logging`); None when the word is in no
    module's path."""
    found = _IMPORT_PATH.match(rewrite.left) if rewrite.word else None
    return None if found is None else found.group(1)


def bindings_kept(rewrite: Rewrite, text: str, document: ParsedDocument) -> Callable[[Site], bool] | None:
    """For a rewrite (in code) that takes a name off its line (`except HTTPException as e:` ->
    `except HTTPException:`, the handler never read `e`): whether a site keeps every binding of
    those names that its scope reads (`completion.tree_names.binding_scope`); None for a word renamed
    (the rename rule's) or a rewrite that takes off no name."""
    taken = {name for name in set(_NAME.findall(rewrite.removed)) - set(_NAME.findall(rewrite.inserted))
             if not keyword.iskeyword(name)}
    if rewrite.word or not taken or document.language != "python":
        return None
    root, byte_at = document.tree.root_node, byte_offsets(text)
    uses = {name: name_uses(root, name) for name in sorted(taken)}

    def kept(site: Site) -> bool:
        start, end = byte_at(site.start), byte_at(site.end)
        left = set(_NAME.findall(site.new))
        return not any(start <= binding.start_byte < end and binding_read(binding, reads, start, end)
                       for name, (bindings, reads) in uses.items() if name not in left for binding in bindings)
    return kept


def trailing_comma(rewrite: Rewrite, text: str, starts: list[int]) -> Callable[[Site], bool] | None:
    """For a comma put at the end of a line (`"... correct!"` -> `"... correct!",` before `) from None`):
    whether a site's next line with text opens with a closing bracket exactly when the user's did (a
    comma between two strings on lines of their own splits one string in two); None for any other
    rewrite."""
    if rewrite.removed or rewrite.inserted.strip() != "," or rewrite.right.strip():
        return None

    def closes_after(line: int) -> bool:
        for number in range(line + 1, len(starts) - 1):  # the starts end with the text's length
            found = text[starts[number]:starts[number + 1]].strip()
            if found:
                return found[:1] in (")", "]", "}")
        return False
    closing = closes_after(rewrite.line)
    return lambda site: closes_after(site.line) == closing


def marked_unused(rewrite: Rewrite, text: str, starts: list[int],
                  document: ParsedDocument) -> Callable[[Site], bool] | None:
    """For a binding in code marked unused (`out, err =` -> `out, _err =`, ruff's RUF059; `err` -> `_`):
    whether a site renames a binding of that name that its scope never reads, as the user's was (a
    copy whose `err` is read elsewhere keeps its name, and no read is renamed); None for any other
    rewrite (`from uvicorn.logging` -> `uvicorn._logging` binds nothing)."""
    if not rewrite.word or rewrite.inserted not in ("_", "_" + rewrite.removed) or document.language != "python":
        return None
    root, byte_at = document.tree.root_node, byte_offsets(text)
    edited = byte_at(starts[rewrite.line] + len(rewrite.left))
    if not any(binding.start_byte == edited for binding in name_uses(root, rewrite.inserted)[0]):
        return None
    bindings, reads = name_uses(root, rewrite.removed)

    def unread(site: Site) -> bool:
        start, end = byte_at(site.start), byte_at(site.end)
        return any(start <= binding.start_byte < end and not binding_read(binding, reads, start, end)
                   for binding in bindings)
    return unread


def off_own_parameters(rewrite: Rewrite, text: str, starts: list[int],
                       document: ParsedDocument) -> Callable[[Site], bool] | None:
    """For a Python parameter's annotation made another type (`error_headers: typing.Optional[int]` ->
    `typing.Union[typing.Mapping[str, str], None]`, `pyargs: List[str]` -> `bool`; not the same type
    written anew, `t.Optional[str]` -> `str | None`, which a file's every annotation takes): whether a
    site lies off the function's own parameter list, whose other parameters are other values
    (`error_status_code: typing.Optional[int]` beside it kept its type); None for any other rewrite."""
    annotated = _IN_ANNOTATION.search(rewrite.left)
    if document.language != "python" or annotated is None or keyword.iskeyword(annotated.group(1)) \
            or set(_NAME.findall(rewrite.inserted)) <= set(_NAME.findall(rewrite.removed)) | {"None"}:
        return None
    byte_at = byte_offsets(text)
    at = byte_at(starts[rewrite.line] + len(rewrite.left))
    edited = document.tree.root_node.descendant_for_byte_range(at, at)
    parameters = next((node for node in ancestors(edited) if node.type == "parameters"), None)
    if parameters is None:
        return None
    own = (parameters.start_point[0], parameters.end_point[0])
    return lambda site: not own[0] <= site.line <= own[1]


def binding_read(binding: Node, reads: list[Node], start: int, end: int) -> bool:
    """True when one of `reads` outside bytes `start .. end` lies in the scope of `binding`."""
    scope = binding_scope(binding)
    return any(scope.start_byte <= read.start_byte < scope.end_byte and not start <= read.start_byte < end
               for read in reads)


def agreeing(rewrite: Rewrite, text: str, starts: list[int],
             document: ParsedDocument) -> Callable[[Site], bool] | None:
    """For a name (in code) one part of which the user replaced by a part the function around it speaks of
    already (`_request_ctx_stack` -> `_websocket_ctx_stack` beside `websocket_context`: the name made
    to agree with its function): whether a site (in `text`) stands in a function that speaks of it
    too; None for any other change."""
    changed = changed_part(rewrite.removed, rewrite.inserted) if rewrite.word else None
    enclosing = None if changed is None else enclosing_at(document, FUNCTION_TYPES)
    edited_in = None if enclosing is None else enclosing(starts[rewrite.line] + len(rewrite.left))
    if edited_in is None or changed not in node_text(edited_in).replace(rewrite.inserted, "").lower():
        return None
    return lambda site: (found := enclosing(site.start)) is not None and changed in node_text(found).lower()


def changed_part(old: str, new: str) -> str | None:
    """The one part of a name (snake or camel case) put for another, lowercase (`websocket` of
    `before_request_funcs` -> `before_websocket_funcs`), at least `MIN_PART` letters; None otherwise."""
    old_parts, new_parts = _PART.findall(old), _PART.findall(new)
    head, tail = common_ends(old_parts, new_parts)
    put = new_parts[head:len(new_parts) - tail]
    if len(put) != 1 or len(old_parts) - head - tail != 1 or len(put[0]) < MIN_PART:
        return None
    return put[0].lower()


def names_bound(rewrite: Rewrite, text: str, starts: list[int],
                document: ParsedDocument) -> Callable[[Site], bool] | None:
    """For a rewrite (in code) that puts in a name its line did not read and only functions bind (`and
    sig == signal.SIGINT`, `sig` a parameter of the edited one): whether a site (in `text`) stands
    where each such name is bound (in a function that binds it, or one inside it); None when
    the rewrite puts in no such name (a name the edited line binds is its own: `lambda _: ...`)."""
    if not rewrite.inserted or document.language != "python":
        return None
    byte_at, root = byte_offsets(text), document.tree.root_node
    line_start, edited_at = starts[rewrite.line], starts[rewrite.line] + len(rewrite.left)
    span = byte_at(line_start), byte_at(edited_at), byte_at(edited_at + len(rewrite.inserted)), \
        byte_at(line_start + len(rewrite.line_after))
    read = identifiers_in(root, span[1], span[2])[0] - identifiers_in(root, span[0], span[3])[1] \
        - set(_NAME.findall(rewrite.line_before))
    scopes = [found for name in sorted(read) if (found := binding_functions(root, name))]
    if not scopes:
        return None

    def bound(site: Site) -> bool:
        byte = byte_at(site.start)
        return all(any(scope.start_byte <= byte < scope.end_byte for scope in found) for found in scopes)
    return bound


def rule_sites(rewrite: Rewrite, event: EditEvent, scoped: bool, literal: bool,
               document: ParsedDocument | None, repeated: bool, floor: float | None) -> list[Site]:
    """The sites of a one-line rewrite by the rules of its kind (`analogy_sites`): the first of the
    `SWEEPS` that owns the rewrite, else the pattern's places (`sites`)."""
    for sweep in SWEEPS:
        found = sweep(rewrite, event, literal, document)
        if found is not None:
            return found
    if (not rewrite.inserted and _NAME.fullmatch(rewrite.removed) and not string_prefix(rewrite)) \
            or keyword.iskeyword(rewrite.removed) \
            or (rewrite.word and document is not None and rebound(event, document)):
        return []
    if document is None:
        found = sites(rewrite, event.after, event, scoped, None, repeated, floor)
    else:
        found = sites(rewrite, event.after, event, scoped, prose_at(document), repeated, floor, owner_at(document))
    return same_lines(found, rewrite.line_before, event.after) if note_put(rewrite) else found


Sweep = Callable[[Rewrite, EditEvent, bool, ParsedDocument | None], list[Site] | None]  # None: not its rewrite


def _moved_module(rewrite: Rewrite, event: EditEvent, literal: bool,
                  document: ParsedDocument | None) -> list[Site] | None:
    """A module made relative or moved (a word renamed is the word rule's, everywhere)."""
    moved = None if rewrite.word else module_change(rewrite.line_before, rewrite.line_after)
    if moved is None:
        return None
    prose = prose_at(document) if document is not None else None
    return import_sites(moved, event.after, range(event.start_line, event.after_end), prose)


def _excused_import(rewrite: Rewrite, event: EditEvent, literal: bool,
                    document: ParsedDocument | None) -> list[Site] | None:
    """E402 excused on one import below code: the others below it."""
    return None if document is None else \
        import_directive_sites(rewrite.line, rewrite.inserted, rewrite.right, document, event)


def _renamed_directive(rewrite: Rewrite, event: EditEvent, literal: bool,
                       document: ParsedDocument | None) -> list[Site] | None:
    """A suppression's codes renamed (`# noqa: T001` -> `# noqa: T201`): the file's same comments."""
    return None if document is None else \
        renamed_directive_sites(rewrite.line_before, rewrite.line_after, rewrite.line, document)


def _excused_argument(rewrite: Rewrite, event: EditEvent, literal: bool,
                      document: ParsedDocument | None) -> list[Site] | None:
    """An unused argument excused (U100, ARG002): the file's others its linter flags."""
    return None if document is None else \
        unused_directive_sites(rewrite.line, rewrite.inserted, rewrite.right, document, event)


def _linted(rewrite: Rewrite, event: EditEvent, literal: bool,
            document: ParsedDocument | None) -> list[Site] | None:
    """`== None` made `is None`, `raise X()` made `raise X`: the file's others."""
    return lint_sites(rewrite.removed, rewrite.inserted, rewrite.left, rewrite.right, rewrite.line, event,
                      None if document is None else prose_at(document))


def _joined_words(rewrite: Rewrite, event: EditEvent, literal: bool,
                  document: ParsedDocument | None) -> list[Site] | None:
    """`in to` made `into` in prose: the file's others."""
    joined = words_joined(rewrite.removed, rewrite.inserted, rewrite.left, rewrite.right)
    if joined is None or document is None:
        return None
    return apart_sites(*joined, rewrite.line, len(rewrite.left), event, prose_at(document))


def _made_raw(rewrite: Rewrite, event: EditEvent, literal: bool,
              document: ParsedDocument | None) -> list[Site] | None:
    """A string made raw for an invalid escape (W605): the others that hold one; with none, as a regex a
    call takes (RUF043): the strings the same callee takes there."""
    if document is None or not made_raw(rewrite.removed, rewrite.inserted, rewrite.left, rewrite.right):
        return None
    raw = raw_sites(rewrite.line, len(rewrite.left), event, document)
    return regex_sites(rewrite.line, len(rewrite.left), event, document) if raw is None else raw


def _none_returned(rewrite: Rewrite, event: EditEvent, literal: bool,
                   document: ParsedDocument | None) -> list[Site] | None:
    """`-> None` on a function that returns nothing (ANN201): the others."""
    if document is None or not none_annotated(rewrite.removed, rewrite.inserted, rewrite.left, rewrite.right):
        return None
    return none_return_sites(rewrite.line, len(rewrite.left), event, document)


def _comma_put(rewrite: Rewrite, event: EditEvent, literal: bool,
               document: ParsedDocument | None) -> list[Site] | None:
    """A comma after a definition's last parameter (COM812): the others alike."""
    if document is None or not comma_put(rewrite.removed, rewrite.inserted, rewrite.right):
        return None
    return parameter_comma_sites(rewrite.line, event, document)


def _joined_literals(rewrite: Rewrite, event: EditEvent, literal: bool,
                     document: ParsedDocument | None) -> list[Site] | None:
    """Two literals joined: the others side by side (`completion.edit_joins`)."""
    quote = joined_quote(rewrite.removed, rewrite.inserted)
    if quote is None:
        return None
    return [] if document is None else joined_sites(quote, event, document)


def _version(rewrite: Rewrite, event: EditEvent, literal: bool,
             document: ParsedDocument | None) -> list[Site] | None:
    """A version tuple's number: its dotted spelling in prose."""
    bumped = version_bumped(rewrite.removed, rewrite.inserted, rewrite.left, rewrite.right) if literal else None
    if bumped is None:
        return None
    return version_sites(*bumped, rewrite.line, event, None if document is None else prose_at(document))


def _url(rewrite: Rewrite, event: EditEvent, literal: bool,
         document: ParsedDocument | None) -> list[Site] | None:
    """`sloria` -> `marshmallow-code` in a URL's path: the same URL elsewhere."""
    return url_sites(rewrite, event) if url_segment(rewrite) else None


def _string_end(rewrite: Rewrite, event: EditEvent, literal: bool,
                document: ParsedDocument | None) -> list[Site] | None:
    """A string's start or end the literal rule owns: the strings after the same tokens alike."""
    if not literal or rewrite.word:
        return None
    return string_end_sites(rewrite, event, None if document is None else prose_at(document))


def _hook(rewrite: Rewrite, event: EditEvent, literal: bool,
          document: ParsedDocument | None) -> list[Site] | None:
    """A nose-style hook renamed for pytest: the other classes' hooks."""
    if document is None or not hook_renamed(rewrite.removed, rewrite.inserted, rewrite.left, rewrite.right):
        return None
    return hook_sites(rewrite.line, rewrite.removed, rewrite.inserted, event, document)


SWEEPS: tuple[Sweep, ...] = (_moved_module, _excused_import, _excused_argument, _renamed_directive, _linted,
                             _joined_words, _made_raw, _none_returned, _comma_put, _joined_literals, _version, _url,
                             _string_end, _hook)  # in this order


def same_lines(found: list[Site], line: str, text: str) -> list[Site]:
    """The sites of `found` on a line of `text` that reads as `line` under any indent."""
    starts = line_starts(text)
    return [site for site in found if text[starts[site.line]:starts[site.line + 1]].strip() == line.strip()]
