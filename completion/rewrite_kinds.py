"""What kind of change a rewrite (`completion.edit_rewrites`) is, read from its words: a typo
mended (`typo`), a word still being typed (`half_typed`), and the rewrites that go nowhere else
(`fresh_binding`, `receiver_renamed`, `value_for_one_call`) or only to copies of their line
(`note_put`). Everything here is pure.
"""
from __future__ import annotations

import difflib
import itertools
import keyword
import re

from completion.edit_events import common_ends
from completion.edit_rewrites import Rewrite, is_word, string_prefix
from completion.english import english
from completion.tree_names import PYTHON_BUILTINS

TYPO_RATIO = 0.75  # a word's spelling alike by this share: a typo fixed
INFLECTIONS = frozenset({"s", "es", "d", "ed", "ing", "ly"})  # endings that make another form of a word
MIN_STEM = 5  # a shorter word with an ending is as likely a name spelled out (`http` -> `https`)
KNOWN_NAMES = PYTHON_BUILTINS | {"Any", "Self"}
_SPHINX_ROLES = frozenset({"func", "meth", "attr", "class", "data", "exc", "mod", "obj", "const", "ref", "doc"})
_FIRST_PARAMETER = re.compile(r"\s*(?:async\s+)?def\s+\w+\s*\(\s*$")  # a def's header up to its first parameter
_NUMBER_VALUE = re.compile(r"[\d.\s/*+-]*\d[\d.\s/*+-]*")  # a number or a sum of numbers: `0.4`, `3 / 60`
_BINDING = re.compile(r"\bas\s+([^\W\d]\w*)\b|^\s*([^\W\d]\w*)\s*(?::[^=]*)?=(?!=)")  # `as x`; `x =` opening a line
_PROSE_NOTE = re.compile(r"\s+#(?!\s*(?:[\w-]+:|noqa\b|nosec\b)).*")  # a comment, no tool's `word:` directive
_CODE_WORD = re.compile(r"""(?:"[^"\n]*"|'[^'\n]*'|#[^\n]*)|([^\W\d]\w*)""")


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
            return not whole_elsewhere(bound.group(group), text, rewrite.line_after)
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
            if name and name not in KNOWN_NAMES and name not in ("self", "cls") and not keyword.iskeyword(name)}


def half_typed(rewrite: Rewrite, text: str, code: bool = True) -> bool:
    """True when the inserted text ends a word that is only the head of a longer word of `text`
    and, in `code`, no builtin or keyword (a deletion types no word: `class C(object):` -> `class
    C:` leaves `C` as it was, nor does a change whose last word was its last before it, nor keys
    that only took text off a word and left one the text holds off the edited line, `Jinja2` ->
    `Jinja`, or took it from within a word and kept its end, `gte` -> `ge` (`cut_within`); nor an
    attribute the code reads elsewhere; a word backspaced to a stub found nowhere, `foo_bar` ->
    `foo_b`, is being retyped)."""
    ending = re.search(r"\w+$", rewrite.left + rewrite.inserted)
    if ending is None or not rewrite.inserted or (rewrite.right[:1] and is_word(rewrite.right[0])) \
            or string_prefix(rewrite) or sphinx_role(rewrite):
        return False
    if code and (ending.group() in KNOWN_NAMES or keyword.iskeyword(ending.group())):
        return False  # a builtin or a keyword is whole as typed: `object`, though `objects` is in the text
    if ending.group()[0].isdigit():
        return False  # a number is no head of a name: `3.0`, though `0x1F` is in the text
    last = re.search(r"\w+(?=\W*$)", rewrite.left + rewrite.removed)
    if last is not None and last.group() == ending.group():
        return False  # the change's last word was its last before: `Optional[Optional[int]]` -> `Optional[int]`
    if deleted_only(rewrite) and (cut_to_whole(rewrite) or cut_within(rewrite)
                                  or whole_elsewhere(ending.group(), text, rewrite.line_after)):
        return False
    if code and rewrite.inserted.endswith("." + ending.group()) \
            and whole_elsewhere(ending.group(), text, rewrite.line_after, attribute=True):
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
    return 0 < head and 0 < tail and is_word(rewrite.inserted[head - 1]) and is_word(rewrite.inserted[-tail])


def whole_elsewhere(word: str, text: str, line: str, attribute: bool = False) -> bool:
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
