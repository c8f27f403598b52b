"""Edits by analogy: the user's last change, carried to the places in the document that look like it.

`completion.edit_rewrites.rewrite_of(event)` reads the event's one changed line as a token-level
rewrite (else `block_of` reads its changed lines as a block), `completion.rewrite_kinds` says what
kind of change it is (a typo, a word half typed), and `completion.analogy_checks` holds the checks a
found site must pass. `sites(rewrite, text,
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
  `inspect.iscoroutinefunction`) goes where the old word reads that attribute (`qualified_sites`), and
  so does one imported module put for another that the file imports too, no rename (`module_moved`);
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
- a parameter's *default* put for another in a function's header (`smoothing=0.3` -> `0.1`) where the
  function's docstring states the old one in that parameter's entry (`[default: 0.3]`; `stated_defaults`,
  `completion.edit_defaults`), with the literal rule's places too;
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
  dotted spelling in strings and comments (`"requires Python 3.9+"`; `completion.edit_versions`), and the
  release being written renamed in a Sphinx version directive (`.. versionchanged:: 3.3` -> `4.0`) in the
  file's other directives of it;
- a bare *`except:`* given `Exception` (E722), `== None` made `is None` and the other linters' fixes of
  `completion.edit_lints` at the other places the same check flags;
- an *`elif` made `if`* after branches that all leave (`return`, `raise`, ...: ruff's RET505-RET508) at the
  file's other `elif`s whose chain's branches before them all leave (`completion.edit_branches`);
- a function's docstring *summary put in the imperative* (pydocstyle's D401: `Returns the` -> `Return the`) at
  the file's other functions' summaries whose first word is a verb in the third person, each with its own
  verb (`completion.edit_moods`);
- a Sphinx role's *`py:` domain* taken off or put on (`:py:attr:` -> `:attr:`) at the file's other Python roles
  in prose, whatever the role (`completion.edit_roles`);
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
old value where the user's is not (`named_for_value`: `test_..._none_sys_argv` keeps its `None`);
values put in that repeat their own statement only to statements that hold them too (`own_values`:
`draft7="date"` beside `draft3="date"`, not beside `draft3="time"`); a constant put in a table's entry
only to entries of the same key (`own_keys`: sqlparse's `'BEGIN': tokens.Keyword.DML` leaves `'COMMIT':
tokens.Keyword`); bases changed not into the header of a class they name (`own_bases`); a module's
function renamed not at another object's attribute of that name (`module_attributes`:
`string.splitlines`); a `match=` put on one test's `pytest.raises` not into the other tests (`own_messages`).
The best `MAX_SITES` are returned. A change that ends a word that is the unfinished head of another
word of the text (a half-typed name) has no sites, but for keys that only took text off a word and
left one the text holds elsewhere (`Jinja2` -> `Jinja`). Each site (`completion.edit_sites.Site`) becomes a
`Replacement` of its UTF-8 bytes (`byte_replacements`), so drafts and regions follow the sites. Work
is bounded: at most `MAX_MATCHES` occurrences are looked at, and a line over `MAX_LINE_CHARS` is no
event line.
Everything here is pure.
"""
from __future__ import annotations

import itertools
import keyword
import re
from collections.abc import Callable


from completion.analogy_checks import (agreeing, bindings_kept, block_names_bound, duplicates_apart, echoes_kept,
                                       keyword_names, marked_unused, module_attributes, named_for_value, names_bound,
                                       off_own_parameters, own_bases, own_keys, own_messages, own_subjects, own_values,
                                       same_list, same_path, same_statement, trailing_comma, twin_apart, whole_strings)
from completion.edit_blocks import Block, block_of, block_sites, line_copy, said_anew, stub_joined, stub_sites
from completion.edit_branches import elif_unchained, unchained_sites
from completion.edit_commas import comma_put, parameter_comma_sites
from completion.edit_defaults import default_changed, default_mentions
from completion.edit_directives import import_directive_sites, renamed_directive_sites, unused_directive_sites
from completion.edit_escapes import made_raw, raw_sites, regex_sites
from completion.edit_events import EditEvent
from completion.edit_hooks import hook_renamed, hook_sites
from completion.edit_imports import import_sites, module_change
from completion.edit_joins import joined_quote, joined_sites
from completion.edit_lints import lint_sites
from completion.edit_moods import mood_fixed, mood_sites
from completion.edit_regions import rebound, signature_change
from completion.edit_returns import none_annotated, none_return_sites
from completion.edit_rewrites import (ANNOTATION_START, CALL_TOKENS, CLASS_NAME, NAME, NAME_PART, STRING_PREFIX,
                                      Rewrite, back_to_name, comment_dropped, is_word, literal_call, path_before,
                                      plain_name, product_release, rewrite_of, sibling_classes, site_pattern,
                                      string_opened_at, string_prefix, whole_line)
from completion.edit_roles import domain_change, domain_sites
from completion.edit_sites import (MAX_MATCHES, MAX_SCORED, MAX_SITES, TOKEN, Site, alike, matched_sites,
                                   matches_off_event)
from completion.edit_versions import release_renamed, release_sites, version_bumped, version_sites
from completion.edit_words import apart_sites, words_joined
from completion.positions import line_starts
from completion.prose_sense import capitalized, names, opens_sentence, owner_at
from completion.rewrite_kinds import (KNOWN_NAMES, code_names, fresh_binding, half_typed, note_put, only_in_prose,
                                      receiver_renamed, typo, value_for_one_call, whole_elsewhere)
from completion.syntax import ParsedDocument, enclosing_at
from completion.tree_names import imports_module, node_text

MIN_SCORE = 0.85  # a pattern's site: its line alike the event's by at least this share of tokens
MIN_WORD_SCORE = 0.8  # a word's site, when the new word is used elsewhere already
REPEATED_MIN_SCORE = 0.6  # any site's score, once the user made the same rewrite twice
CALL_SCORE = 0.6  # a site's score after a whole call with a literal argument (`literal_call`)
MIN_TEXT_CHARS = 6  # a before-text of several tokens looked for without its context is this long at least
TEXT_SCORE = 0.7  # and its site's line alike the edited one by this share (`text_sites`)
_STRING_PREFIX_END = re.compile(r"(?<!\w)[rRbBuUfF]{1,2}$")  # a string's prefix, right before its quote
STRING_TYPES = frozenset({"string", "string_literal", "raw_string_literal", "template_string",
                          "interpreted_string_literal"})
PROSE_TYPES = STRING_TYPES | {"comment", "line_comment", "block_comment"}
_QUOTES = re.compile(r"^[rRbBuUfF]*(?:'{3}|\"{3}|'|\")|(?:'{3}|\"{3}|'|\")$")  # a string's quotes
_HEADER = re.compile(r"\s*(?:async\s+def|def|class)\s")
_CLASS = re.compile(r"\s*class\s")
_PARAM_FIELD = re.compile(r"\s*:param\s+(?:[\w.\[\], ]+\s+)?(?:\\?\*){0,2}(\w+):")  # Sphinx's `:param str name:`
_LETTERS = re.compile(r"[A-Za-z]{3,}")  # a word of prose that may name a definition
_ANNOTATED = re.compile(ANNOTATION_START + "$", re.MULTILINE)  # `spinner_style: `
_IMPORTED = re.compile(r"(?:.*>>>)?[ \t]*(?:from|import)[ \t]+")  # a line up to an import's module
_TYPE_EXCUSE = re.compile(r"\s*#\s*type:\s*ignore\s*$")  # a bare excuse: it names no error, its line's names say why
_FROM_IMPORT = re.compile(r"\s*from\s+([\w.]+)\s+import\s")  # `from a.b import c`: its path (group 1)
_ESCAPED_DOT = re.compile(r"\\{1,2}\.\w")  # a dot escaped in a regex's text, a name after it
_ATTRIBUTE_AFTER = re.compile(r"\.(\w+)")  # an attribute read right after a word (group 1: its name)
_URL_BEFORE = re.compile(r"(?:https?://|git@)([\w.-]+[/:](?:[\w.~-]+/)*)$")  # a URL up to a word of its path
#   (group 1: its host and path so far)
_URL_SEGMENT = re.compile(r"[\w.~-]*(?:/[\w.~-]+)?")  # the rest of a path's segment, and the next one
_PATH_SEGMENT = re.compile(r"[\w.~-]+")  # one segment of a URL's path, whole
_HOST_BEFORE = re.compile(r"https?://((?:[\w-]+\.)*)$")  # a URL's scheme and its host's labels before a word
_HOST_AFTER = re.compile(r"(?:\.[\w-]+)+/[\w.~-]+")  # the rest of a URL's host and its path's first segment
_DEFINED = re.compile(r"\s*(?:async\s+)?(?:def|class)\s+(\w+)")  # a header up to its name (group 1)


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
    if rewrite.inserted in KNOWN_NAMES or keyword.iskeyword(rewrite.inserted):
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


def whole_string_said(block: Block, event: EditEvent, document: ParsedDocument | None) -> bool:
    """True when the block's inserted lines are the whole text of the string they stand in, but for
    its quotes (a test's docstring said anew: it speaks of its own test, where a docstring's one entry
    said anew, an argument's, speaks of what its copies speak of too); False without a tree."""
    enclosing = None if document is None else enclosing_at(document, STRING_TYPES)
    first = next((line for line in event.inserted_lines if line.strip()), None)
    if enclosing is None or first is None:
        return False
    string = enclosing(line_starts(event.after)[event.start_line] + len(first) - len(first.lstrip()))
    body = "" if string is None else _QUOTES.sub(" ", node_text(string))
    return string is not None and body.split() == " ".join(block.inserted).split()


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
    return (start >= 2 and text[start - 1] in "./" and is_word(text[start - 2])) \
        or (text[end:end + 1] in (".", "/") and is_word(text[end + 1:end + 2] or " ")) \
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
    """A name's parts of letters, in lower case (`NAME_PART`: `wsPingInterval`, `ws_ping_interval` -> ws,
    ping, interval)."""
    return {part.lower() for part in NAME_PART.findall(name) if not part.isdigit()}


def distinctive(rewrite: Rewrite) -> bool:
    """True when the rewrite's before-text says where else it goes without its line's context: text
    put for other text, `MIN_TEXT_CHARS` or more in two tokens or more with a name among them
    (`t.Optional[str]`, `lambda e: len(e)`); not a word (the word rule's) nor a line's whole text."""
    tokens = TOKEN.findall(rewrite.removed)
    return bool(rewrite.inserted) and not rewrite.word and len(tokens) >= 2 \
        and len(rewrite.removed.strip()) >= MIN_TEXT_CHARS and not whole_line(rewrite) \
        and any(map(plain_name, tokens))


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


def module_moved(rewrite: Rewrite, event: EditEvent, document: ParsedDocument) -> list[Site]:
    """For one module a Python file imports put for another before an attribute (`falcon.create_task`
    -> `asyncio.create_task`, both imported: no rename), the places the old module reads that attribute
    (`qualified_sites`); none for any other name put for one bound already (`config.debug` ->
    `self.debug`: one place's choice)."""
    if document.language != "python" or document.tree is None \
            or not all(imports_module(document.tree.root_node, name) for name in (rewrite.removed, rewrite.inserted)):
        return []
    return qualified_sites(rewrite, event.after, event, line_starts(event.after), prose_at(document))


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
    context, named = back_to_name(left, CALL_TOKENS, plain_name)
    return context if named else []


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
    around = (r"(?<!\w)" if NAME.match(context[0]) else "") + r"\s*".join(map(re.escape, context))
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
    unnamed = CLASS_NAME.sub(r"\1_", rewrite.line_before, 1)
    return lambda line_text: alike(CLASS_NAME.sub(r"\1_", line_text, 1), unnamed, prose)


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
        or (ending is not None and whole_elsewhere(ending.group(), text, rewrite.line_after))


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


def stated_defaults(rewrite: Rewrite, event: EditEvent, document: ParsedDocument | None) -> list[Site]:
    """For a parameter's default put for another in a function's header: where the function's
    docstring states the old default in that parameter's entry (`completion.edit_defaults`)."""
    change = None if document is None else default_changed(rewrite, event, document)
    return [] if change is None else default_mentions(change, event)


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
    path's next segment, whatever the scheme (`https://`, `git@`), each scoring 1, nearest first. For
    a word of the host (`timothycrosley.github.io/isort` -> `pycqa.github.io/isort`), the places of
    the same host and first segment of the path."""
    url = _URL_BEFORE.search(rewrite.left) if rewrite.word or url_segment(rewrite) else None
    if url is not None:
        host, rest = re.escape(url.group(1)), re.escape(_URL_SEGMENT.match(rewrite.right).group())
        pattern = re.compile(rf"(?<=[/@]){host}({re.escape(rewrite.removed)}){rest}(?![\w.~-])")
        return matched_sites(pattern, rewrite.inserted, rewrite.line, event)
    labels = _HOST_BEFORE.search(rewrite.left) if rewrite.word else None  # a word of the host itself
    rest = None if labels is None else _HOST_AFTER.match(rewrite.right)
    if rest is None:
        return []
    pattern = re.compile(rf"(?<=//){re.escape(labels.group(1))}({re.escape(rewrite.removed)}){re.escape(rest.group())}"
                         r"(?![\w.~-])")
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
    call that had none (`value_for_one_call`), nor a duplicate of a definition the user named apart
    (`duplicates_apart`), nor a function's parameters for a call's arguments (`same_list`), nor a
    sentence's word for a whole string's case (`whole_strings`), nor a flag whose statement disagrees
    with the user's (`echoes_kept`); a docstring said anew whole goes to no copy (`said_anew`,
    `whole_string_said`)."""
    rewrite = rewrite_of(event)
    if rewrite is None:
        block = None if scoped or literal else block_of(event)
        if block is not None and stub_joined(block):
            return stub_sites(event.after, event)
        if block is None or (len(block.removed) == 1 and document is not None and document.tree is not None
                             and signature_change(event, document) is not None):
            return []  # a parameter list split: its copies are other functions' (`line_copies`)
        if said_anew(block) and whole_string_said(block, event, document):
            return []
        found = block_sites(block, event.after, event)
        check = None if document is None else block_names_bound("\n".join(block.removed), event, document)
        return found if check is None else [site for site in found if check(site)]
    if fresh_binding(rewrite, event.after) or receiver_renamed(rewrite) or value_for_one_call(rewrite):
        return []
    own_scope = scoped and rewrite.word and not repeated  # a local renamed in its scope: no copy elsewhere
    copies = [] if own_scope else line_copies(rewrite, event, document)
    found = rule_sites(rewrite, event, scoped, literal, document, repeated, floor)
    mentions = definition_mentions(rewrite, event, document) + stated_defaults(rewrite, event, document)
    proposed = with_copies(copies, found + module_references(rewrite, event, document) + mentions) \
        or url_sites(rewrite, event)
    if not proposed or document is None or document.tree is None:
        return proposed
    text, starts, prose = event.after, line_starts(event.after), prose_at(document)
    in_code = not edit_in_prose(rewrite, starts, prose)  # the code checks read the edit's code
    checks = [same_path(rewrite, text), trailing_comma(rewrite, text, starts), same_statement(rewrite, text, starts),
              whole_strings(rewrite, text), same_list(rewrite, starts, document),
              *((names_bound(rewrite, text, starts, document), agreeing(rewrite, text, starts, document),
                 bindings_kept(rewrite, text, document), marked_unused(rewrite, text, starts, document),
                 off_own_parameters(rewrite, text, starts, document), named_for_value(rewrite, starts, document),
                 keyword_names(rewrite, text, starts, document), own_values(rewrite, text, starts, document),
                 duplicates_apart(rewrite, starts, document), own_keys(rewrite, starts, document),
                 own_bases(rewrite, text, starts), own_messages(rewrite, starts, document),
                 module_attributes(rewrite, text, prose))
                if in_code else (own_subjects(rewrite, starts, document), twin_apart(rewrite, text, starts),
                                 echoes_kept(rewrite, text, starts, document)))]
    checks = [check for check in checks if check is not None]
    return [site for site in proposed if all(check(site) for check in checks)]


def rule_sites(rewrite: Rewrite, event: EditEvent, scoped: bool, literal: bool,
               document: ParsedDocument | None, repeated: bool, floor: float | None) -> list[Site]:
    """The sites of a one-line rewrite by the rules of its kind (`analogy_sites`): the first of the
    `SWEEPS` that owns the rewrite, else the pattern's places (`sites`)."""
    for sweep in SWEEPS:
        found = sweep(rewrite, event, literal, document)
        if found is not None:
            return found
    if (not rewrite.inserted and NAME.fullmatch(rewrite.removed) and not string_prefix(rewrite)) \
            or keyword.iskeyword(rewrite.removed):
        return []
    if rewrite.word and document is not None and rebound(event, document):
        return module_moved(rewrite, event, document)
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
        renamed_directive_sites(rewrite.line_before, rewrite.line_after, event, document)


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


def _unchained(rewrite: Rewrite, event: EditEvent, literal: bool,
               document: ParsedDocument | None) -> list[Site] | None:
    """`elif` after branches that all leave made `if` (RET505): the file's others (`completion.edit_branches`)."""
    if document is None or not elif_unchained(rewrite.line_before, rewrite.line_after):
        return None
    return unchained_sites(rewrite.line, event, document)


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


def _release(rewrite: Rewrite, event: EditEvent, literal: bool,
             document: ParsedDocument | None) -> list[Site] | None:
    """The release being written renamed in a version directive: the file's other directives of it."""
    renamed_release = release_renamed(rewrite.removed, rewrite.inserted, rewrite.left, rewrite.right, event.after)
    return None if renamed_release is None else release_sites(*renamed_release, rewrite.line, event)


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


def _role_domain(rewrite: Rewrite, event: EditEvent, literal: bool,
                 document: ParsedDocument | None) -> list[Site] | None:
    """`py:` taken off a Sphinx role or put on it: the file's other Python roles (`completion.edit_roles`)."""
    dropped = domain_change(rewrite.removed, rewrite.inserted, rewrite.left, rewrite.right)
    if dropped is None:
        return None
    return domain_sites(dropped, rewrite.line, event, None if document is None else prose_at(document))


def _mood(rewrite: Rewrite, event: EditEvent, literal: bool,
          document: ParsedDocument | None) -> list[Site] | None:
    """A docstring's summary put in the imperative (D401): the file's others (`completion.edit_moods`)."""
    if not rewrite.word or not mood_fixed(rewrite.removed, rewrite.inserted, rewrite.left):
        return None
    return [] if document is None else mood_sites(rewrite.line, event, document)


def _hook(rewrite: Rewrite, event: EditEvent, literal: bool,
          document: ParsedDocument | None) -> list[Site] | None:
    """A nose-style hook renamed for pytest: the other classes' hooks."""
    if document is None or not hook_renamed(rewrite.removed, rewrite.inserted, rewrite.left, rewrite.right):
        return None
    return hook_sites(rewrite.line, rewrite.removed, rewrite.inserted, event, document)


SWEEPS: tuple[Sweep, ...] = (_moved_module, _excused_import, _excused_argument, _renamed_directive, _linted,
                             _unchained, _joined_words, _made_raw, _none_returned, _comma_put, _joined_literals,
                             _version, _release, _url, _string_end, _role_domain, _mood, _hook)  # in this order


def same_lines(found: list[Site], line: str, text: str) -> list[Site]:
    """The sites of `found` on a line of `text` that reads as `line` under any indent."""
    starts = line_starts(text)
    return [site for site in found if text[starts[site.line]:starts[site.line + 1]].strip() == line.strip()]
