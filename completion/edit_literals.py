"""The literal an edit event changed, and the places in the file that take its new value.

`changed_literal(event)` reads whether the event's lines differ only by one literal (a string or a
number) put for another; `carried_literals(event, document)` gives the literal nodes of the document
equal to the old one that take the new value: any longer string or fraction of several digits (one
value wherever it stands), a common value only where it stands alike or in the user's function
(`_value_carried`: a whole number or a round fraction after the same token, and as an argument in a
call of the same callee; a string of a character or two in a call of the same callee), none whose call
does not say besides what the user's said of the words the change took out (`_echoing`), none for a
sentence reworded (`reworded`), a blank put at one end of a literal joined to another only to
literals joined alike (`completion.edit_joins`), and a common number changed in a test not into the
other tests when more than a few hold it (`_own_cases`: each one's expectation). The generic literals
(`GENERIC_LITERALS`) and a one-mark string have no literal rule. `completion.edit_regions` turns the
places into regions, `completion.edit_drafts` into drafts. Work is bounded: a literal's first
`MAX_PLACES` places are read.
Pure.
"""
from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable

from tree_sitter import Node

from completion.edit_events import EditEvent, common_ends
from completion.edit_joins import REACH, blanked_end, joined_after, joined_before
from completion.edit_sites import TOKEN
from completion.english import english
from completion.node_lines import first_line
from completion.syntax import ParsedDocument, ancestors, encode
from completion.tree_names import CALL_TYPES, FUNCTION_TYPES, test_function

MAX_PLACES = 2000  # a literal's places read, at most: a one-letter string in a 400 KB file costs a scan, not a walk
GENERIC_LITERALS = frozenset({"", "0", "1"})  # nothing, one, the first: values of no one thing
SENTENCE_WORDS = 3  # a string of this many words is a sentence (`reworded`)
MAX_OTHER_CASES = 3  # other tests' places a number changed in a test goes to (`_own_cases`); more hold their own
SHORT_STRING_CHARS = 2  # a string this short is a common value (`_value_carried`): a mode, a flag
_ROUND_FRACTION = re.compile(r"0*\.?0*[1-9]0*\.?0*")  # a fraction of one significant digit
_F_PREFIX = re.compile(r"(?<!\w)[rRbB]?[fF][rRbB]?$")  # an f-string's prefix, at the end of the text before its quote
_ARGUMENT_OPENERS = frozenset({"(", ","})  # a number after one is an argument: its call says what it counts
_ARGUMENT_LISTS = frozenset({"argument_list", "arguments"})  # a call's arguments
_KEYWORD_ARGUMENTS = frozenset({"keyword_argument"})  # `name=value` among them
_WORD = re.compile(r"[^\W\d_]+")  # a word within a name (`store_false`: store, false)
_LITERAL = re.compile(r""""[^"\\\n]*"|'[^'\\\n]*'|(?<![\w.])\d+(?:\.\d+)?(?![\w.])""")  # a plain string or a number
LITERAL_TYPES = frozenset({  # tree-sitter nodes whose whole text is one literal
    "string", "integer", "float",  # Python
    "number", "string_literal", "interpreted_string_literal", "raw_string_literal", "int_literal",
    "float_literal", "integer_literal", "decimal_integer_literal", "decimal_floating_point_literal",
    "number_literal", "char_literal",
})


def in_f_braces(before: str, inside: str) -> bool:
    """True when a string whose quote follows `before` is an f-string (its prefix ends `before`) and
    `inside`, its text from the quote on, stands inside its braces: code, not text."""
    return inside.count("{") > inside.count("}") and _F_PREFIX.search(before) is not None


def in_interpolation(text: str, was: str, now: str) -> bool:
    """True when the string `was` of `text` is an f-string and what `now` changes in it stands inside
    its braces (`f"<{self.__class__.__name__}>"` -> `f"<{type(self).__name__}>"`): code, not text."""
    head, _ = common_ends(was, now)
    return any(in_f_braces(text[:found.start()], was[:head]) for found in re.finditer(re.escape(was), text))


@functools.lru_cache(maxsize=4)
def changed_literal(event: EditEvent) -> tuple[str, str] | None:
    """(old, new) when the event's lines differ only by one literal replaced by another, at one
    or more places (the text around the literals is the same; kept as `renamed` is)."""
    old, new = _LITERAL.findall(event.removed), _LITERAL.findall(event.inserted)
    pairs = {(was, now) for was, now in zip(old, new) if was != now}
    same_rest = _LITERAL.sub("\0", event.removed) == _LITERAL.sub("\0", event.inserted)
    if not same_rest or len(old) != len(new) or len(pairs) != 1:
        return None
    was, now = pairs.pop()
    if in_interpolation(event.removed, was, now):
        return None
    content = was.strip("\"'")
    if content == now.strip("\"'"):
        return None
    return None if content in GENERIC_LITERALS or (len(content) == 1 and not content.isalnum()) else (was, now)


def carried_literals(event: EditEvent, document: ParsedDocument) -> list[Node]:
    """The literal nodes equal to the one the event changed (`changed_literal`, not None) that take
    its new value (`_value_carried`), in source order; none for a sentence reworded (`reworded`)."""
    old, new = changed_literal(event)
    if reworded(old, new):
        return []
    checks = (_value_carried(event, document), _joined_alike(event, document), _echoing(event, document))
    found = [node for node in literal_nodes(document, old) if all(check(node) for check in checks)]
    return _own_cases(event, document, found)


def _own_cases(event: EditEvent, document: ParsedDocument, nodes: list[Node]) -> list[Node]:
    """`nodes` less those in other test functions than the user's, for a common number changed in a
    test function (`number_context`) that more than `MAX_OTHER_CASES` other places of other tests
    hold: a value many tests hold is each one's expectation (parso's `differ.parse(code, parsers=2)`
    in every test of the diff parser); one a few hold is a value they share (a buffer's `2**16`, a
    benchmark's loop count)."""
    case = test_function(_function_at(document, event)) if number_context(event) is not None else None
    others = [] if case is None else [node for node in nodes if test_function(node) not in (None, case)]
    if len(others) <= MAX_OTHER_CASES:
        return nodes
    return [node for node in nodes if test_function(node) in (None, case)]


def reworded(old: str, new: str) -> bool:
    """True when a string of `SENTENCE_WORDS` words or more had one word of English put for another
    (`"Reached maximum read buffer size"` made `write`, where the user mended one copy's message:
    the others say what their places do); a typo mended is carried (not both words are English)."""
    if old[:1] not in "\"'" or len(old.split()) < SENTENCE_WORDS:
        return False
    was, now = _changed_word(old, new)
    return was.isalpha() and now.isalpha() and was.lower() != now.lower() and english(was) and english(now)


def _joined_alike(event: EditEvent, document: ParsedDocument) -> Callable[[Node], bool]:
    """Whether a literal node takes the user's blank put at one end of the literal, when the user's
    is joined to another with no blank between (`completion.edit_joins`): one joined alike; any
    node for any other change."""
    old, new = changed_literal(event)
    end = blanked_end(old, new)
    source, mine = document.tree.root_node.text or b"", _user_literal(event, document, new)

    def joined(node: Node) -> bool:
        if end == "start":
            return joined_before(source[max(0, node.start_byte - REACH):node.start_byte].decode("utf-8", "replace"))
        return joined_after(source[node.end_byte:node.end_byte + REACH].decode("utf-8", "replace"))
    if end is None or mine is None or not joined(mine):
        return lambda node: True
    return joined


def literal_nodes(document: ParsedDocument, literal: str) -> list[Node]:
    """The literal nodes whose whole text is `literal`, in source order: found where that text
    stands in the source (the first `MAX_PLACES` places), not by walking the whole tree."""
    root = document.tree.root_node
    found = []
    for match in itertools.islice(re.finditer(re.escape(encode(literal)), root.text or b""), MAX_PLACES):
        node = root.descendant_for_byte_range(match.start(), match.end())
        while node is not None and (node.start_byte, node.end_byte) == match.span() \
                and node.type not in LITERAL_TYPES:
            node = node.parent
        if node is not None and (node.start_byte, node.end_byte) == match.span():
            found.append(node)
    return found


def _value_carried(event: EditEvent, document: ParsedDocument) -> Callable[[Node], bool]:
    """Whether a literal node equal to the one the event changed takes the new value: any, for a
    longer string or a fraction of several digits (`3.14` is one value wherever it stands: trio's
    `b == 3.14` and `f(8, 3.14)` changed together). A common value is the same value only where it
    stands alike, or in the user's function (one function's constant: `t % 24` and `t //= 24`) but
    on the user's own lines (an equal value the user left there is another: `(2 if x else 2)`):
    a whole number or a round fraction (`number_context`) right after the token the user's stood
    after (a timeout's `now + 0.03` is no `time.sleep(0.03)`), and an argument's (after `(` or `,`)
    in a call of the same callee (`call_later(0.03, stop)`'s delay is no `time.sleep(0.03)`); a
    string of a character or two (`SHORT_STRING_CHARS`) in a call of the same callee (`open(name,
    "w")`'s mode is no `"w"` of an option's tuple)."""
    old, new = changed_literal(event)
    before = number_context(event)
    source, function = document.tree.root_node.text or b"", _function_at(document, event)

    def in_function(node: Node) -> bool:
        return function is not None and function.start_byte <= node.start_byte < function.end_byte \
            and not _on_user_lines(event, document, node)
    if before is not None:
        mine = _user_literal(event, document, new) if before in _ARGUMENT_OPENERS else None
        callee = None if mine is None else _callee(mine)
        return lambda node: (_token_before(source, node.start_byte) == before
                             and (callee is None or _callee(node) == callee)) or in_function(node)
    if old[:1] in "\"'" and len(old) - 2 <= SHORT_STRING_CHARS:
        mine = _user_literal(event, document, new)
        callee = None if mine is None else _callee(mine)
        return lambda node: (callee is not None and _callee(node) == callee) or in_function(node)
    return lambda node: True


def _echoing(event: EditEvent, document: ParsedDocument) -> Callable[[Node], bool]:
    """Whether a literal node equal to the one the event changed stands in a call whose other arguments
    hold what the user's call held besides its literal, of the words the change took out
    (`action='store_false', default=False` made `store_true`: the user mended a flag at odds with its
    default; `action='store_false', default=True` agrees with its own); any node when the user's call
    held none of them."""
    old, new = changed_literal(event)
    mine = _user_literal(event, document, new)
    was, now = _changed_word(old, new)
    taken = _words(was) - _words(now)
    echoed = taken & _arguments_besides(mine) if mine is not None else set()
    return (lambda node: echoed <= _arguments_besides(node)) if echoed else (lambda node: True)


def _changed_word(old: str, new: str) -> tuple[str, str]:
    """The words of `old` and `new` that differ, whole (`'store_false'` and `'store_true'`: themselves;
    `"Reached maximum read buffer size"` and its `write`: `read`, `write`)."""
    head, tail = common_ends(old, new)
    while head and (old[head - 1].isalnum() or old[head - 1] == "_"):
        head -= 1
    while tail and (old[-tail].isalnum() or old[-tail] == "_"):
        tail -= 1
    return old[head:len(old) - tail], new[head:len(new) - tail]


def _arguments_besides(node: Node) -> set[str]:
    """The lowercase words (`_WORD`) of the arguments of the call `node` is an argument of (a keyword's
    value too), but for `node`'s own text (empty for a node that is no argument)."""
    arguments = node.parent
    if arguments is not None and arguments.type in _KEYWORD_ARGUMENTS:
        arguments = arguments.parent
    if arguments is None or arguments.type not in _ARGUMENT_LISTS:
        return set()
    source = arguments.text or b""
    rest = source[:node.start_byte - arguments.start_byte] + b" " + source[node.end_byte - arguments.start_byte:]
    return _words(rest.decode("utf-8", "replace"))


def _words(text: str) -> set[str]:
    return {word.lower() for word in _WORD.findall(text)}


def _user_literal(event: EditEvent, document: ParsedDocument, new: str) -> Node | None:
    """The first literal node `new` on the event's lines: the one the user changed."""
    return next((node for node in literal_nodes(document, new) if _on_user_lines(event, document, node)), None)


def _on_user_lines(event: EditEvent, document: ParsedDocument, node: Node) -> bool:
    """True for a node that starts on the event's lines."""
    return event.start_line <= first_line(document, node) < event.after_end


def _callee(node: Node) -> bytes | None:
    """The text of the callee of the innermost call around `node` (`open` of `open(name, "w")`), or None."""
    call = next((found for found in ancestors(node) if found.type in CALL_TYPES), None)
    if call is None:
        return None
    callee = call.child_by_field_name("function") or call.child_by_field_name("name")
    return None if callee is None else callee.text


def _function_at(document: ParsedDocument, event: EditEvent) -> Node | None:
    """The innermost function holding the event's first line (at its first character past the indent),
    or None at a module's or a class's level."""
    indent = len(event.inserted) - len(event.inserted.lstrip(" \t"))
    at = (event.start_line, len(encode(event.inserted[:indent])))
    node = document.tree.root_node.descendant_for_point_range(at, at)
    return next((found for found in ancestors(node) if found.type in FUNCTION_TYPES), None)


def number_context(event: EditEvent) -> str | None:
    """For a common number the event changed, the token right before it on its line (`*` of `2**16`
    -> `2**18`; "" at the line's start): out of the user's function, the same small number is the
    same value only after the same token (`os.urandom(16)` and `int(x, 16)` are no buffer's `2**16`;
    `_value_carried`). A common number is a whole one or a round fraction (one significant digit:
    `0.01`, `0.5`). None for a string or another fraction."""
    old, new = changed_literal(event)
    if not (new.isdigit() or _ROUND_FRACTION.fullmatch(old)):
        return None
    start = common_ends(event.removed, event.inserted)[0]  # where the change starts, within the number
    while start and (event.inserted[start - 1].isdigit() or event.inserted[start - 1] == "."):
        start -= 1
    return _token_before(encode(event.inserted), len(encode(event.inserted[:start])))


def _token_before(text: bytes, at: int) -> str:
    """The last token (`completion.edit_sites.TOKEN`) of UTF-8 `text`'s line before byte `at`; "" for none."""
    tokens = TOKEN.findall(text[text.rfind(b"\n", 0, at) + 1:at].decode("utf-8", "replace"))
    return tokens[-1] if tokens else ""
