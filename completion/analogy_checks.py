"""The checks an analogy site must pass once found (`completion.edit_analogy.analogy_sites`): no site the
change would break or mislead. Each takes the rewrite (`completion.edit_rewrites`) and the document, and
gives whether a site may stay (a `Site -> bool`), or None when it has nothing to say of that rewrite: a name
put in stays where it is bound (`names_bound`; by lines rewritten together, `block_names_bound`), a name
made to agree with its function goes to functions that speak alike (`agreeing`), a binding taken off stays
where its scope reads it (`bindings_kept`), a binding marked unused goes where it is unread
(`marked_unused`), a module renamed after its package follows that package (`same_path`), a comma at a
line's end goes where the next line closes alike (`trailing_comma`), a keyword argument's name goes to
keyword arguments' names (`keyword_names`), an annotation changed stays off its own parameter list
(`off_own_parameters`), a value put for another stays out of functions named for the old one
(`named_for_value`), values put in that repeat their own statement go to statements that hold them too
(`own_values`), a definition's header changed goes to no duplicate of it beside it (`duplicates_apart`), a
change in a call's arguments stays out of functions' parameters and the other way (`same_list`), a whole
string's case changed goes to whole strings (`whole_strings`), a one-word string whose taken-out word its
statement says besides goes to statements that say it too (`echoes_kept`), prose made to speak of its
place stays out of places that name the old word (`own_subjects`), a table's entry given another constant
goes to entries of the same key only (`own_keys`), a class's bases changed go to no class they would make
its own base (`own_bases`), a module's function renamed goes to no other object's attribute
(`module_attributes`), and a message to match put on one test's `pytest.raises` stays in that test
(`own_messages`).
Everything here is pure.
"""
from __future__ import annotations

import keyword
import re
from collections import Counter
from collections.abc import Callable

from tree_sitter import Node

from completion.edit_events import EditEvent, common_ends
from completion.edit_rewrites import ANNOTATION_START, CLASS_NAME, NAME, NAME_PART, Rewrite, path_before, string_prefix
from completion.edit_sites import Site
from completion.positions import line_starts
from completion.prose_sense import names, owner_at, subject_at
from completion.rewrite_kinds import typo
from completion.syntax import ParsedDocument, ancestors, byte_offsets, enclosing_at
from completion.tree_names import (CLASS_TYPES, FUNCTION_TYPES, binding_functions, binding_scope, identifiers_in,
                                   is_keyword, name_uses, node_text, test_function)

MIN_PART = 3  # a part of a name put for another, to agree with its function (`agreeing`), this long at least
MAX_STATEMENT_LINES = 8  # a statement read whole for its values (`own_values`); a longer one is read by its line
_SIMPLE_STATEMENTS = frozenset({"expression_statement", "decorator", "return_statement", "assert_statement",
                                "raise_statement", "delete_statement", "import_statement", "import_from_statement"})
_COMMON_VALUES = frozenset({"0", "1"})  # numbers too common to tell one statement from another
_NUMBER = re.compile(r"\b\d+\b")
_IN_ANNOTATION = re.compile(ANNOTATION_START + r"[\w.]*$")  # `error_headers: typing.`
_ONE_WORD_STRING = re.compile(r"""(?<=['"])(\w+)(?=['"])""")  # a string's body of one word (`store_false`)
_STRING_BODY = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"")
_CONSTANTS = frozenset({"None", "True", "False"})
_STATEMENT_KEYWORD = re.compile(r"[ \t]*(assert|return|yield|if|elif|while)\b")  # a statement's opening keyword
_MODULE_DEFINITION = re.compile(r"(?:async[ \t]+)?(?:def|class)[ \t]+")  # a module's definition's header, to its name
_DEFINITION_HEADER = re.compile(r"[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]")  # a Python definition's first line
_MATCH_PUT = re.compile(r"(?<![\w.])match[ \t]*=(?!=)")  # `pytest.raises`' message to expect, as a keyword
_CONSTANTS_TYPES = frozenset({"identifier", "attribute", "string", "concatenated_string", "integer", "float",
                              "true", "false", "none"})  # a value that names or states, computes nothing
_LISTS = frozenset({"argument_list", "parameters", "lambda_parameters"})  # a call's arguments, a function's parameters
_TYPE_EXPRESSIONS = frozenset({"subscript", "type"})  # a type written inside such a list
_IMPORT_LINE = re.compile(r"[ \t]*(?:from|import)[ \t]")  # an import's line: its dotted paths are modules
_COMPARISON = re.compile(r"[ \t]+(?:==|!=|<=|>=|<|>|is|in|not[ \t]+in)[ \t]")  # an operator, then its operand


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


def own_values(rewrite: Rewrite, text: str, starts: list[int],
               document: ParsedDocument) -> Callable[[Site], bool] | None:
    """For code put in whose values (the words of its strings, its numbers, the digits of its names)
    repeat what its own statement holds besides (`@_checks_drafts(draft3="date")` given `draft7="date"`,
    `missing_format(draft4_checker)` made `draft6_checker` in a call that reads `DRAFT6`): whether a
    site's statement holds them too (`draft3="time"` takes no `draft7="date"`); None for any other
    rewrite (prose goes by `own_subjects`)."""
    if not rewrite.inserted:
        return None
    statement = statement_at(document, text, starts)
    edited = statement(starts[rewrite.line] + len(rewrite.left), rewrite.line)
    besides = Counter(_parts(edited)) - Counter(_parts(rewrite.inserted))
    echoed = (_values(rewrite.inserted) - set(_parts(rewrite.removed))) & set(besides)
    if not echoed:
        return None
    return lambda site: echoed <= set(_parts(statement(site.start, site.line)))


def echoes_kept(rewrite: Rewrite, text: str, starts: list[int],
                document: ParsedDocument) -> Callable[[Site], bool] | None:
    """For a string of one word changed (a flag, a key: `'store_false'` made `'store_true'`) where the
    words it took out stand in its statement besides (`default=False`: the user mended a flag at odds
    with its default): whether a site's statement holds them too besides its own string
    (`action='store_false', default=True` agrees with its own); None for any other rewrite."""
    was, now = (_one_word_string(rewrite.left, middle, rewrite.right) for middle in (rewrite.removed, rewrite.inserted))
    if was is None or now is None:
        return None
    statement = statement_at(document, text, starts)
    besides = Counter(_parts(statement(starts[rewrite.line] + len(rewrite.left), rewrite.line))) - Counter(_parts(now))
    echoed = (set(_parts(was)) - set(_parts(now))) & set(besides)
    if not echoed:
        return None
    return lambda site: echoed <= set(Counter(_parts(statement(site.start, site.line))) - Counter(_parts(was)))


def _one_word_string(left: str, middle: str, right: str) -> str | None:
    """The body of the one-word string (`_ONE_WORD_STRING`) that `middle` stands in between `left`
    and `right`, or None."""
    line, at = left + middle + right, len(left)
    return next((found.group(1) for found in _ONE_WORD_STRING.finditer(line)
                 if found.start() <= at and at + len(middle) <= found.end()), None)


def statement_at(document: ParsedDocument, text: str, starts: list[int]) -> Callable[[int, int], str]:
    """The text of the simple statement (a decorator too) around an offset of `text` on a given
    line, at most `MAX_STATEMENT_LINES` long; else that line's."""
    enclosing = enclosing_at(document, _SIMPLE_STATEMENTS)

    def statement(offset: int, line: int) -> str:
        found = None if enclosing is None else enclosing(offset)
        if found is None or found.end_point[0] - found.start_point[0] >= MAX_STATEMENT_LINES:
            return text[starts[line]:starts[line + 1] if line + 1 < len(starts) else len(text)]
        return node_text(found)
    return statement


def _parts(code: str) -> list[str]:
    """The parts of the words of `code`, lowercase (`draft6_checker`: draft, 6, checker)."""
    return [part.lower() for word in re.findall(r"\w+", code) for part in NAME_PART.findall(word)]


def _values(code: str) -> set[str]:
    """The parts of the values `code` holds: its strings' words, its numbers and its names' digits
    (`draft7="date"`: 7, date), but for `_COMMON_VALUES`."""
    strings = " ".join(_STRING_BODY.findall(code))
    digits = [part for part in _parts(_STRING_BODY.sub(" ", code)) if part.isdigit()]
    return (set(_parts(strings)) | set(_NUMBER.findall(code)) | set(digits)) - _COMMON_VALUES


def value_words(code: str) -> list[str]:
    """The words of a piece of code that holds values only (constants, numbers, strings: `None`,
    `'page_markdown'`), those of its constants and strings; [] when it names anything else."""
    bare = _STRING_BODY.sub(" ", code)
    if any(name not in _CONSTANTS for name in NAME.findall(bare)):
        return []
    return NAME.findall(code)


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


def bindings_kept(rewrite: Rewrite, text: str, document: ParsedDocument) -> Callable[[Site], bool] | None:
    """For a rewrite (in code) that takes a name off its line (`except HTTPException as e:` ->
    `except HTTPException:`, the handler never read `e`): whether a site keeps every binding of
    those names that its scope reads (`completion.tree_names.binding_scope`); None for a word renamed
    (the rename rule's) or a rewrite that takes off no name."""
    taken = {name for name in set(NAME.findall(rewrite.removed)) - set(NAME.findall(rewrite.inserted))
             if not keyword.iskeyword(name)}
    if rewrite.word or not taken or document.language != "python":
        return None
    root, byte_at = document.tree.root_node, byte_offsets(text)
    uses = {name: name_uses(root, name) for name in sorted(taken)}

    def kept(site: Site) -> bool:
        start, end = byte_at(site.start), byte_at(site.end)
        left = set(NAME.findall(site.new))
        return not any(start <= binding.start_byte < end and binding_read(binding, reads, start, end)
                       for name, (bindings, reads) in uses.items() if name not in left for binding in bindings)
    return kept


def twin_apart(rewrite: Rewrite, text: str, starts: list[int]) -> Callable[[Site], bool]:
    """For a change in prose: whether a site is off a line right beside the user's that was the same
    as the user's line before the change: two lines of prose alike one under the other (a sentence
    pasted twice, `The first yields` over `The first yields`) made to differ is the user's mending
    of the copy, not a change that both take (in code, two entries alike in a row may both change:
    `Column,` twice among a type's arguments)."""
    def apart(site: Site) -> bool:
        return abs(site.line - rewrite.line) != 1 \
            or text[starts[site.line]:starts[site.line + 1]].rstrip("\r\n") != rewrite.line_before
    return apart


def same_statement(rewrite: Rewrite, text: str, starts: list[int]) -> Callable[[Site], bool] | None:
    """For a comparison put at the end of a statement that opens with a keyword (`assert f(x)` ->
    `assert f(x) == {...}`): whether a site's line opens with the same keyword (a comparison put after
    a bare call is a statement of no effect, flake8-bugbear's B015); None for any other rewrite."""
    keyword_at = _STATEMENT_KEYWORD.match(rewrite.line_before)
    if rewrite.removed or rewrite.right.strip() or keyword_at is None \
            or _COMPARISON.match(rewrite.inserted) is None:
        return None
    opening = keyword_at.group(1)

    def same(site: Site) -> bool:
        found = _STATEMENT_KEYWORD.match(text, starts[site.line], starts[site.line + 1])
        return found is not None and found.group(1) == opening
    return same


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
            or set(NAME.findall(rewrite.inserted)) <= set(NAME.findall(rewrite.removed)) | {"None"}:
        return None
    byte_at = byte_offsets(text)
    at = byte_at(starts[rewrite.line] + len(rewrite.left))
    edited = document.tree.root_node.descendant_for_byte_range(at, at)
    parameters = next((node for node in ancestors(edited) if node.type == "parameters"), None)
    if parameters is None:
        return None
    own = (parameters.start_point[0], parameters.end_point[0])
    return lambda site: not own[0] <= site.line <= own[1]


def keyword_names(rewrite: Rewrite, text: str, starts: list[int],
                  document: ParsedDocument) -> Callable[[Site], bool] | None:
    """For a keyword argument's name put for another in a call (`configure(patch=...)` made
    `patcher=`: the callee's parameter was renamed): whether a site is a keyword argument's name too
    (of any callee: `missing=` became `load_default=` for every field), not an attribute or a variable
    of the old name (`logger.patch(...)`); a copy of the user's whole line is one; None for any other
    rewrite."""
    if not rewrite.word or document.language != "python":
        return None
    byte_at, root = byte_offsets(text), document.tree.root_node

    def keyword_at(offset: int) -> bool:
        at = byte_at(offset)
        return is_keyword(root.descendant_for_byte_range(at, at))
    if not keyword_at(starts[rewrite.line] + len(rewrite.left)):
        return None
    return lambda site: text[site.start:site.end] != rewrite.removed or keyword_at(site.start)


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
    old_parts, new_parts = NAME_PART.findall(old), NAME_PART.findall(new)
    head, tail = common_ends(old_parts, new_parts)
    put = new_parts[head:len(new_parts) - tail]
    if len(put) != 1 or len(old_parts) - head - tail != 1 or len(put[0]) < MIN_PART:
        return None
    return put[0].lower()


def names_bound(rewrite: Rewrite, text: str, starts: list[int],
                document: ParsedDocument) -> Callable[[Site], bool] | None:
    """For a rewrite (in code) that puts in a name its line did not read and only functions bind (`and
    sig == signal.SIGINT`, `sig` a parameter of the edited one), or reads bare a name it took a receiver
    off (`self.channel.write_soon` -> `channel.write_soon`, `channel` a local of the edited function):
    whether a site (in `text`) stands where each such name is bound (in a function that binds it, or
    one inside it); None when the rewrite reads no such name (a name the edited line binds is its own:
    `lambda _: ...`)."""
    if document.language != "python":
        return None
    byte_at, root = byte_offsets(text), document.tree.root_node
    read = _bared(rewrite)
    if rewrite.inserted:
        line_start, edited_at = starts[rewrite.line], starts[rewrite.line] + len(rewrite.left)
        span = byte_at(line_start), byte_at(edited_at), byte_at(edited_at + len(rewrite.inserted)), \
            byte_at(line_start + len(rewrite.line_after))
        read |= identifiers_in(root, span[1], span[2])[0] - identifiers_in(root, span[0], span[3])[1] \
            - set(NAME.findall(rewrite.line_before))
    return _where_bound(root, read, byte_at)


def _bared(rewrite: Rewrite) -> set[str]:
    """The name right after the change when the rewrite took the receiver off it (`self.` taken, no
    other put), out of an import (a module's path is no name read); else none."""
    name = NAME.match(rewrite.right)
    if name is None or not rewrite.removed.endswith(".") or rewrite.inserted.endswith(".") \
            or _IMPORT_LINE.match(rewrite.line_before):
        return set()
    return {name.group()}


def block_names_bound(removed: str, event: EditEvent, document: ParsedDocument) -> Callable[[Site], bool] | None:
    """`names_bound` for lines rewritten together (`completion.edit_blocks`): the names the event's
    lines read after that they do not bind and the `removed` lines did not read (`read_text(encoding)`,
    `encoding` a parameter of the edited test) must be bound where a site stands."""
    if document.language != "python" or document.tree is None:
        return None
    byte_at, root, starts = byte_offsets(event.after), document.tree.root_node, line_starts(event.after)
    start = byte_at(starts[event.start_line])
    end = byte_at(starts[event.after_end] if event.after_end < len(starts) else len(event.after))
    read, bound = identifiers_in(root, start, end)
    return _where_bound(root, read - bound - set(NAME.findall(removed)), byte_at)


def _where_bound(root: Node, names: set[str], byte_at: Callable[[int], int]) -> Callable[[Site], bool] | None:
    """Whether a site stands where each of `names` that only functions bind is bound (in a function
    that binds it, or one inside it); None when no such name is among them."""
    scopes = [found for name in sorted(names) if (found := binding_functions(root, name))]
    if not scopes:
        return None

    def bound(site: Site) -> bool:
        byte = byte_at(site.start)
        return all(any(scope.start_byte <= byte < scope.end_byte for scope in found) for found in scopes)
    return bound


def duplicates_apart(rewrite: Rewrite, starts: list[int], document: ParsedDocument) -> Callable[[Site], bool] | None:
    """For a Python definition's header changed: whether a site is no other definition in the same
    block whose header was the same (two `def test_duplicate_user_comment(self):` in one class: the
    user named one apart, the other is the one kept); None for any other rewrite."""
    if document.language != "python" or not _DEFINITION_HEADER.match(rewrite.line_before):
        return None
    enclosing = enclosing_at(document, FUNCTION_TYPES | CLASS_TYPES)

    def block_at(line: int, line_text: str) -> Node | None:
        found = enclosing(starts[line] + len(line_text) - len(line_text.lstrip()))
        return None if found is None else found.parent
    mine = block_at(rewrite.line, rewrite.line_after)
    if mine is None:
        return None

    def apart(site: Site) -> bool:
        text = document.text[starts[site.line]:starts[site.line + 1]]  # `starts` ends with the text's length
        return text.strip() != rewrite.line_before.strip() or block_at(site.line, text) != mine
    return apart


def own_bases(rewrite: Rewrite, text: str, starts: list[int]) -> Callable[[Site], bool] | None:
    """For a class's bases changed: whether a site is no header of a class the change would make
    its own base (`class FStringString(Leaf):` -> `(PythonLeaf)` not into `class PythonLeaf(PythonMixin,
    Leaf):`); None for any other rewrite."""
    if not CLASS_NAME.match(rewrite.line_before):
        return None
    put = set(NAME.findall(rewrite.inserted))

    def own(site: Site) -> bool:
        header = CLASS_NAME.match(text, starts[site.line])
        return header is None or header.group(2) not in put
    return own


def module_attributes(rewrite: Rewrite, text: str, prose: Callable[[int], bool]) -> Callable[[Site], bool] | None:
    """For a module's function or class renamed on its header (`def splitlines(string, ...)` ->
    `def split_lines(`): whether a site in code is no other object's attribute (`string.splitlines(True)`
    is the string's method: the module's own function is named bare in its module); None for any other
    rewrite; `prose` says whether an offset of the text lies in a string or a comment."""
    if not rewrite.word or _MODULE_DEFINITION.fullmatch(rewrite.left) is None:
        return None
    return lambda site: text[site.start - 1:site.start] != "." or prose(site.start)


def same_list(rewrite: Rewrite, starts: list[int], document: ParsedDocument) -> Callable[[Site], bool] | None:
    """For a change in Python code inside a call's arguments or a function's parameters, not in a type
    written there (no word, no string's prefix: a name or a string goes between the two, `origin=` to
    `kind=`): whether a site stands in the same kind of list, or in none (`**kw` -> `**kw,` in a call
    goes to no `def`'s parameters); None for any other rewrite."""
    if document.language != "python" or rewrite.word or string_prefix(rewrite):
        return None
    enclosing = enclosing_at(document, _LISTS | _TYPE_EXPRESSIONS)
    mine = enclosing(starts[rewrite.line] + len(rewrite.left))
    if mine is None or mine.type not in _LISTS:
        return None  # in a type (`Mapping[str, t.Optional[str]]` among a class's bases): a type's change goes anywhere

    def same(site: Site) -> bool:
        theirs = enclosing(site.start)
        return theirs is None or theirs.type not in _LISTS or theirs.type == mine.type
    return same


def own_messages(rewrite: Rewrite, starts: list[int], document: ParsedDocument) -> Callable[[Site], bool] | None:
    """For a `match=` put on a call in a Python test function (`pytest.raises(TypeError)` ->
    `pytest.raises(TypeError, match="Invalid variable type")`): whether a site stands in that test or
    in none. The message is the error that test expects; the other tests raise their own (trio's
    `match="^total_tokens must be >= 1$"` put on one of 18 `pytest.raises(ValueError)`, 5 of them
    that message)."""
    if document.language != "python" or document.tree is None or not _MATCH_PUT.search(rewrite.inserted) \
            or _MATCH_PUT.search(rewrite.removed):
        return None
    root, byte_at = document.tree.root_node, byte_offsets(document.text)

    def test_at(offset: int) -> Node | None:
        return test_function(root.descendant_for_byte_range(byte_at(offset), byte_at(offset)))
    mine = test_at(starts[rewrite.line] + len(rewrite.left))
    if mine is None:
        return None
    return lambda site: test_at(site.start) in (None, mine)


def own_keys(rewrite: Rewrite, starts: list[int], document: ParsedDocument) -> Callable[[Site], bool] | None:
    """For a change in Python code to a table's entry whose value is a constant (a name, a dotted name,
    a literal: a dict's `'BEGIN': tokens.Keyword` made `tokens.Keyword.DML`, a rule `(r'USING',
    is_keyword)` in a list of tuples that open with a string): whether a site stands in no such entry,
    or in one of the same key; None for any other rewrite. Each key is its own fact: the other keys
    that held the same value keep it. A value that computes (`util.Set([...])` made `set([...])`,
    `month_name[month - 1]` made `month_name[month]`) is code, carried as code is."""
    key_at = _entry_key(document)
    mine = None if key_at is None else key_at(starts[rewrite.line] + len(rewrite.left))
    if mine is None:
        return None

    def same(site: Site) -> bool:
        theirs = key_at(site.start)
        return theirs is None or theirs == mine
    return same


def _entry_key(document: ParsedDocument) -> Callable[[int], str | None] | None:
    """The key of the table's entry whose constant value holds the character before an offset
    (`own_keys`), None outside any; None for a document that is no parsed Python."""
    if document.language != "python" or document.tree is None:
        return None
    root, byte_at = document.tree.root_node, byte_offsets(document.text)

    def key(offset: int) -> str | None:
        byte = byte_at(offset)  # the change starts here: the character before it is the entry's (a deletion's too)
        below = None
        for node in ancestors(root.descendant_for_byte_range(byte - 1, byte)):
            first = _key_node(node)
            if first is not None:
                value = below or next((child for child in node.named_children
                                       if child.start_byte <= byte <= child.end_byte), None)
                constant = value is not None and value != first and value.type in _CONSTANTS_TYPES
                return node_text(first) if constant else None
            below = node
        return None
    return key


def _key_node(node: Node) -> Node | None:
    """The key of a dict's pair, or the opening string of a tuple that stands in a list, a tuple or
    a set (a table's row); None for any other node."""
    if node.type == "pair":
        return node.child_by_field_name("key")
    if node.type == "tuple" and node.parent is not None and node.parent.type in ("list", "tuple", "set") \
            and node.named_child_count > 1 and node.named_children[0].type in ("string", "concatenated_string"):
        return node.named_children[0]
    return None


def whole_strings(rewrite: Rewrite, text: str) -> Callable[[Site], bool] | None:
    """For a whole string's case changed (`name='Babel'` -> `'babel'`, a package's name): whether a
    site is a whole string too, not a word of a sentence (`Unable to import Babel` names the project
    as prose does); None for any other rewrite."""
    if not rewrite.word or rewrite.removed.lower() != rewrite.inserted.lower() \
            or rewrite.left[-1:] not in ("'", '"') or rewrite.right[:1] != rewrite.left[-1:]:
        return None

    def whole(site: Site) -> bool:
        quote = text[site.start - 1:site.start]
        return quote in ("'", '"') and text[site.end:site.end + 1] == quote
    return whole
