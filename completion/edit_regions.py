"""The regions a next edit must rewrite after an edit event, found with tree-sitter.

`regions_after(event, document, cursor_line)` gives whole-line `Region`s of the document as it is
after `event` (its newest edit event), nearest the cursor first:
- *rename*: the event replaced one name by another (the identifiers of its lines before and after
  differ by one name, at one or more places); the other uses of the old name, in its scope. In
  Python a local or parameter (a name the function binds) is searched in its function, a name
  defined in a class body or used as an attribute (`self.x`, `obj.x`) in every attribute of the
  file, any other name in the file (for a function or a class renamed, not a module of its name
  in a `from` import: `from build.env import x` beside `def build`); other languages search the
  innermost function or class around the edit, members (`this.x`, `p.x`) in the file; a name of
  a Python file also where strings name it (its `__all__` entry, string annotations:
  `tree_names.name_strings`). A Python binding split off a name rebound over itself (`for value
  in value:` made `for v in value:`) renames only what it binds: the loop's body, or the rest of
  the assignment's block; a parameter renamed in its header whose function rebinds the old name
  from it (`iterable = iter(iterable)`) is renamed up to that statement's right side. A builtin
  type's method put for another at a call (`stack.append()` -> `stack.appendleft()`) is renamed on
  the same receiver only, unless the file defines it (`_builtin_method`); a builtin put for another
  (`list(flags)` -> `sorted(flags)`, not an exception) renames nothing, unless the file binds the old
  one (`_builtins_swapped`). Typing's alias
  put for its builtin (`List[str]` -> `list[str]`) goes to the whole file but its imports.
- *call*: the event changed the parameter list of a function (a parameter added, removed, or the
  order changed): its call sites in the file.
- *literal*: the event changed one literal (a string or a number) to another, at one or more
  places: the other places in the file that hold the same literal (a common value only where it is
  the same value, `completion.edit_literals.carried_literals`: a whole number, a round fraction, a
  string of a character or two; a sentence reworded, nowhere); but for the generic ones
  (`GENERIC_LITERALS`: `""`, `0`, `1`) and a one-mark string (`";"`, `" "`), which stand for no
  one value, and a string whose quotes alone changed (`'a'` -> `"a"`, the same value): those go
  by analogy only to lines alike.
- *analogy*: the lines of the sites where the event's change applies by analogy, when the
  caller passes them (`completion.edit_analogy`: the same change at places that look alike);
- *cursor*: the lines around the cursor, `CURSOR_LINES_ABOVE` above to `CURSOR_LINES_BELOW` below
  (the anchors' window); the only region of a document without a tree.
Regions never overlap (adjacent ones merge, keeping the strongest reason, and a run longer than
`MAX_LINES_PER_REGION` is cut in pieces), never hold the event's own lines, and stay within
`MAX_REGIONS` and `MAX_REGION_LINES` / `MAX_REGION_CHARS` in all (a region that does not fit is
left out). Regions and the event count lines as the LSP does; tree rows count only `\\n`, so a
node's lines are read from its bytes where the text holds a lone `\\r` (`completion.node_lines`).
Everything here is a pure function of the event and the parsed document.
"""
from __future__ import annotations

import builtins
import functools
import itertools
import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from tree_sitter import Node

from completion.edit_events import EditEvent
from completion.edit_literals import carried_literals, changed_literal
from completion.node_lines import first_line, last_line
from completion.positions import split_lines
from completion.syntax import ParsedDocument, ancestors, new_parser
from completion.tree_names import (
    CALLEES,
    CLASS_TYPES,
    COMPREHENSION_TYPES,
    FUNCTION_TYPES,
    MEMBER_TYPES,
    NAME_TYPES,
    PYTHON_BUILTINS,
    alike_comprehensions,
    binds_itself,
    bound_in_file,
    call_nodes,
    imported_names,
    imports_module,
    is_keyword,
    is_member,
    methods_of,
    name_strings,
    names_parent,
    node_text,
    nodes_named,
    overlapping,
    parameter_names,
    scope_of,
    shadowing_functions,
)

CURSOR_LINES_ABOVE = 2  # Copilot's next-edit window: 2 lines above the cursor to 5 below
CURSOR_LINES_BELOW = 5
MAX_REGIONS = 12  # the regions one job may mask: the cursor's and 11 more (8 cut edits carried to many places short)
MAX_LINES_PER_REGION = 16  # longer runs are cut in pieces (Zeta 2.1's blocks: 6-16 lines)
MAX_REGION_LINES = 80  # all regions together
MAX_REGION_CHARS = 6000  # all regions together: about 2,000 tokens of masked canvas
FROM_IMPORT_TYPES = frozenset({"import_from_statement"})  # `from m import x`: what names m moves with it
SHADOWING_TYPES = frozenset({"for_statement", "assignment"})  # Python statements that bind the names on their left
MAX_NAME_USES = 2000  # a name renamed that stands more often than this gets no rename rule
TYPING_GENERICS = {"List": "list", "Dict": "dict", "Tuple": "tuple", "Set": "set", "FrozenSet": "frozenset",
                   "Type": "type"}  # typing's aliases of builtins, made generic by PEP 585
_EXCEPTIONS = frozenset(name for name, value in vars(builtins).items()
                        if isinstance(value, type) and issubclass(value, BaseException))  # `ValueError`
BUILTIN_NAMES = frozenset(name for name in PYTHON_BUILTINS - _EXCEPTIONS if not name.startswith("_"))  # `sorted`
#   (an exception put for another is renamed: `raise Exception(...)` -> `ValueError` and the `pytest.raises` after it)
BUILTIN_METHODS = frozenset(name for kind in (str, bytes, list, dict, set, frozenset, tuple, int, float)
                            for name in dir(kind) if not name.startswith("_"))  # `append`, `replace`, `pop`
_TARGET_LISTS = frozenset({"pattern_list", "tuple_pattern", "list_pattern"})  # `a, b = ...`, `(a, b) = ...`
_OSERROR_ALIASES = frozenset({"IOError", "EnvironmentError", "WindowsError"})  # UP024 makes them `OSError`
_DEFINITIONS = FUNCTION_TYPES | CLASS_TYPES  # what a name of its own defines: `def f`, `class C`

RENAME, CALL, LITERAL, ANALOGY, CURSOR = "rename", "call", "literal", "analogy", "cursor"
_STRENGTH = {RENAME: 0, CALL: 1, LITERAL: 2, ANALOGY: 3, CURSOR: 4}  # a merged region keeps the strongest reason

_IDENTIFIER = re.compile(r"[^\W\d]\w*")


@dataclass(slots=True, frozen=True)
class Region:
    """Lines `start_line .. end_line - 1` of the document, and why they may need an edit."""

    start_line: int
    end_line: int  # exclusive
    reason: str  # RENAME, CALL, LITERAL, ANALOGY or CURSOR

    @property
    def lines(self) -> int:
        return self.end_line - self.start_line


def regions_after(event: EditEvent, document: ParsedDocument, cursor_line: int,
                  sites: Sequence[Region] = ()) -> list[Region]:
    """The regions to rewrite after `event`, the newest event of `document` (see the module),
    with the lines of the event's analogy `sites` (`completion.edit_analogy`) among them."""
    line_count = len(split_lines(document.text))
    cursor_line = min(max(cursor_line, 0), line_count - 1)
    found = [Region(max(0, cursor_line - CURSOR_LINES_ABOVE),
                    min(line_count, cursor_line + CURSOR_LINES_BELOW + 1), CURSOR)]
    if document.tree is not None and document.language in CALLEES:
        found += rename_regions(event, document) + call_regions(event, document) + literal_regions(event, document)
        found += sites
    kept = [piece for region in merged(outside(found, event.start_line, event.after_end))
            for piece in pieces(region)]
    return capped(kept, cursor_line, split_lines(document.text))


@functools.lru_cache(maxsize=4)
def renamed(event: EditEvent) -> tuple[str, str] | None:
    """(old, new) when the event's identifiers differ only by one name replaced by another, at
    one or more places, each standing between the same marks as the name it replaced, back and on
    to the names beside it, and no operator put in or taken out elsewhere (blanks aside:
    `e.value.message` -> `e.value.args[0]`, `append(x)` -> `insert(0, x)` and `assertTrue(a == b)` ->
    `assertEqual(a, b)` are no renames, a rename that rewraps its line is one); kept for the last few
    events: a plan asks several times, and each reading of an event's lines splits its whole text."""
    old, new = list(_IDENTIFIER.finditer(event.removed)), list(_IDENTIFIER.finditer(event.inserted))
    changed = [at for at, (was, now) in enumerate(zip(old, new)) if was.group() != now.group()]
    pairs = {(old[at].group(), new[at].group()) for at in changed}
    if len(old) != len(new) or len(pairs) != 1 or _operators(event.removed) != _operators(event.inserted) \
            or any(_around(old, at, event.removed) != _around(new, at, event.inserted) for at in changed):
        return None  # marks put in beside the name: `append(x)` -> `insert(0, x)` is no rename
    return pairs.pop()


def _around(names: list[re.Match], at: int, text: str) -> tuple[str, str]:
    """The marks between the name `names[at]` of `text` and the names beside it (blanks, numbers and
    the words of strings left out: `x = 1` -> `y = 2` is a rename)."""
    before = text[names[at - 1].end() if at else 0:names[at].start()]
    after = text[names[at].end():names[at + 1].start() if at + 1 < len(names) else len(text)]
    return re.sub(r"[\s\w]+", "", before), re.sub(r"[\s\w]+", "", after)


def _operators(text: str) -> str:
    """The marks of `text` but brackets, commas and slashes, in order (a list rewrapped, a `/` put
    among parameters: still a rename; `assertTrue(a == b)` -> `assertEqual(a, b)` is none)."""
    return re.sub(r"[\s\w()\[\]{},/]+", "", text)


def literal_regions(event: EditEvent, document: ParsedDocument) -> list[Region]:
    """The lines of the file that hold a literal the event changed, as it was, where it takes the
    new value (`carried_literals`)."""
    if changed_literal(event) is None:
        return []
    return [Region(first_line(document, node), last_line(document, node) + 1, LITERAL)
            for node in carried_literals(event, document)]


def rename_regions(event: EditEvent, document: ParsedDocument) -> list[Region]:
    """The lines of the other uses of a name the event renamed, in its scope."""
    return [Region(first_line(document, node), last_line(document, node) + 1, RENAME)
            for node in rename_uses(event, document)]


def _on_lines_of(event: EditEvent, document: ParsedDocument, node: Node) -> bool:
    """True when the event's lines and the node's overlap."""
    return first_line(document, node) < event.after_end and event.start_line <= last_line(document, node)


def rename_uses(event: EditEvent, document: ParsedDocument) -> list[Node]:
    """The nodes of the other uses of a name the event renamed (their text is the old name), in
    its scope, in file order; none when the event renamed nothing (the document needs a tree) or
    pointed a use at a name bound already (`rebound`; a builtin for an imported name), but for an
    import moved to a module the file has already (`from attr import x` -> `from attrs import x`):
    then its other `from` imports. For a name of a Python file, the contents of the strings that
    name it are uses too (`"chain"` in `__all__`, `cli: "BaseCommand"`). An attribute renamed is
    renamed off the modules the file imports only where the edited one is read off that module
    (`_off_other_modules`)."""
    return list(_uses(event, document, document.text, every_module=False))


def renames_in_scope(event: EditEvent, document: ParsedDocument) -> bool:
    """True when the rename rule knows where the name the event renamed is used (`rename_uses`,
    counting an attribute read off any module the file imports), or that it has none before the
    block assigns the old name afresh (`_local_rebound`): then the analogy carries no such word
    (`completion.next_edit.site_inputs`)."""
    if _uses(event, document, document.text, every_module=True):
        return True
    found = _rename_scope(event, document)
    return found is not None and not found.member and _local_rebound(event, document, found) is not None


@functools.lru_cache(maxsize=4)  # a plan asks for them from its regions and its drafts
def _uses(event: EditEvent, document: ParsedDocument, text: str, every_module: bool) -> tuple[Node, ...]:
    """`rename_uses`, with `every_module` also the attributes read off other modules; `text`, the
    document's, keys the cache as in `_rename_scope`."""
    return tuple(_uses_of(event, document, every_module))


def _uses_of(event: EditEvent, document: ParsedDocument, every_module: bool) -> list[Node]:
    found = _rename_scope(event, document)
    if found is None:
        return []
    old, scope, member = found.old, found.scope, found.member
    if (found.rebinds and not found.imports) or _builtins_swapped(document, old, renamed(event)[1], member):
        return []
    root = document.tree.root_node
    if member:
        uses = [node for node in nodes_named(root, document.language, old, NAME_TYPES + MEMBER_TYPES)
                if is_member(node)]
        uses = _off_other_modules(uses, scope, root) if document.language == "python" and not every_module else uses
        uses = sorted(uses + own_method(scope, old, renamed(event)[1]), key=lambda node: node.start_byte)
        if document.language == "python" and _called(scope) and _builtin_method(document.text, old):
            uses = [node for node in uses if _receiver(node) == _receiver(scope)]
    else:
        scopes = alike_comprehensions(scope, {old}) if scope.type in COMPREHENSION_TYPES else [scope]
        uses = [node for each in scopes for node in nodes_named(each, document.language, old, NAME_TYPES)
                if not is_member(node) and not is_keyword(node)]
        uses = _unshadowed(event, document, scope, old, uses)
        if found.defines:
            uses = [node for node in uses if not _module_path(node)]  # a function renamed: no module of its name
    if found.rebinds:
        return [node for node in uses if _in_from_import(node)]
    if found.generic:  # `List[str]` -> `list[str]`: `from typing import List` stays for the uses not done yet
        uses = [node for node in uses if not _in_from_import(node)]
    rebinding = None if member \
        else _parameter_rebound(event, document, scope, old) or _local_rebound(event, document, found)
    if rebinding is not None:  # the uses after it read the function's own local of the old name
        left, right = rebinding.child_by_field_name("left"), rebinding.child_by_field_name("right")
        uses = [node for node in uses if node.start_byte < left.start_byte
                or right.start_byte <= node.start_byte < right.end_byte]
    shadowed = None if member else _shadowing(event, document, scope, old, renamed(event)[1])
    if shadowed is not None:  # a binding split off a name that was rebound over itself
        return [node for node in uses if shadowed[0] <= node.start_byte < shadowed[1]]
    if document.language == "python" and not member and scope.parent is None:  # a name of the file
        uses = sorted(uses + name_strings(root, old), key=lambda node: node.start_byte)
    return uses


def _unshadowed(event: EditEvent, document: ParsedDocument, scope: Node, old: str, uses: list[Node]) -> list[Node]:
    """`uses` but those in a Python function inside `scope` that binds the old name for itself
    (`with make_temporary_directory() as tempdir:` beside `import tempdir` renamed `tempfile`), other
    than one around the event's lines or one that binds it by a copy of the user's line (a test's own
    `from flask.testing import make_test_environ_builder`, renamed with the user's)."""
    if document.language != "python":
        return uses
    copied = {line.strip() for line in event.removed_lines if line.strip()}
    shadows = [function for function in shadowing_functions(scope, old)
               if not first_line(document, function) <= event.start_line <= last_line(document, function)
               and not copied & {line.strip() for line in node_text(function).splitlines()}]
    return [node for node in uses
            if not any(function.start_byte <= node.start_byte < function.end_byte for function in shadows)]


def _parameter_rebound(event: EditEvent, document: ParsedDocument, scope: Node, old: str) -> Node | None:
    """For a Python parameter renamed in its function's header: the first statement of the
    function's body that assigns the old name afresh (`iterable = iter(iterable)` after `def
    windowed(iterable)` made `def windowed(seq)`): its right side may read the parameter, every use
    after it reads a local of the old name; None when the body has none at its top level (one in a
    branch, a `with` or a `try`: the uses after it may read either)."""
    parameters = scope.child_by_field_name("parameters") if scope.type in FUNCTION_TYPES else None
    body = scope.child_by_field_name("body")
    if document.language != "python" or parameters is None or body is None \
            or not _on_lines_of(event, document, parameters):
        return None
    for statement in body.named_children:
        assignment = statement.named_children[0] if statement.type == "expression_statement" \
            and statement.named_children else None
        if assignment is not None and assignment.type == "assignment" \
                and node_text(assignment.child_by_field_name("left")) == old \
                and assignment.child_by_field_name("right") is not None:
            return assignment
    return None


def _local_rebound(event: EditEvent, document: ParsedDocument, found: RenameScope) -> Node | None:
    """For a Python name renamed where an assignment binds it (`token = (...)` made `input_token`):
    the next statement of that block that assigns the old name afresh, as an item of a tuple
    (`_, token, _ = decode(token)`) or from a value that does not read it (`file_names = {...}`):
    its right side may read the renamed one, every use after it reads the new binding. A name
    rebuilt from itself (`parts = re.split("[.-]", parts)`) goes on under the new name, and one marked
    unused (`hookrec` -> `_hookrec`) is as unused where it is bound again: None."""
    old, edited = found.old, found.edited
    if document.language != "python" or edited is None or renamed(event)[1].lstrip("_") == old:
        return None
    assignment = next((node for node in ancestors(edited) if node.type == "assignment"), None)
    if assignment is None or not _assigns(assignment, node_text(edited)) or assignment.parent is None \
            or assignment.parent.type != "expression_statement":
        return None
    later = _next_assignment(assignment.parent.next_named_sibling, old)
    if later is None:
        return None
    left, right = later.child_by_field_name("left"), later.child_by_field_name("right")
    reads = any(not is_member(node) for node in nodes_named(right, document.language, old, NAME_TYPES))
    return later if left.type != "identifier" or not reads else None


def _next_assignment(statement: Node | None, name: str) -> Node | None:
    """The first assignment to `name` (`_assigns`) that is `statement` or a statement after it in its block."""
    while statement is not None:
        first = statement.named_children[0] if statement.type == "expression_statement" and statement.named_children \
            else None
        if first is not None and _assigns(first, name):
            return first
        statement = statement.next_named_sibling
    return None


def _assigns(node: Node, name: str) -> bool:
    """True for an assignment with a right side whose left is `name` or a tuple or list holding it."""
    def holds(target: Node) -> bool:
        if target.type == "identifier":
            return node_text(target) == name
        return target.type in _TARGET_LISTS and any(holds(child) for child in target.named_children)
    left = node.child_by_field_name("left")
    return node.type == "assignment" and left is not None and node.child_by_field_name("right") is not None \
        and holds(left)


def _off_other_modules(uses: list[Node], edited: Node, root: Node) -> list[Node]:
    """`uses` but the attributes read off a module a Python file imports (`ddt.data` after `import ddt`;
    not a name a `from` import binds) other than the one the `edited` attribute is read off:
    `result.data` renamed `result.content` leaves `@ddt.data(...)` alone, `os.getcwdu` renamed reaches
    the other `os.getcwdu`."""
    own, imported = _read_off(edited), {}

    def module(name: str) -> bool:
        if name not in imported:
            imported[name] = imports_module(root, name)
        return imported[name]
    return [node for node in uses if (name := _read_off(node)) is None or name == own or not module(name)]


def _read_off(node: Node) -> str | None:
    """The plain name an attribute is read off (`ddt` of `ddt.data`); None for any other node."""
    parent = node.parent
    target = parent.child_by_field_name("object") if parent is not None and parent.type == "attribute" else None
    return node_text(target) if target is not None and target.type == "identifier" else None


def _builtins_swapped(document: ParsedDocument, old: str, new: str, member: bool) -> bool:
    """True when a Python builtin the file binds nowhere was put for another (`list(message.flags)` ->
    `sorted(message.flags)`): the user chose another function for that place, where the old one's
    other uses are other lists (`isinstance(x, (list, tuple))`); no rename."""
    return document.language == "python" and not member and old in BUILTIN_NAMES and new in BUILTIN_NAMES \
        and not binds_itself(document.tree.root_node, old)


def _builtin_method(text: str, name: str) -> bool:
    """True when `name` is a method of a builtin type (`BUILTIN_METHODS`: `append`, `replace`, `pop`) that
    the file defines nowhere: a call of it put for another's (`stack.append()` -> `stack.appendleft()`)
    is the user's choice for that receiver, where other receivers are other lists, strings and dicts
    (an attribute of such a name assigned, `self.items = items`, is the file's own)."""
    return name in BUILTIN_METHODS and re.search(rf"\bdef[ \t]+{re.escape(name)}\b", text) is None


def _called(member: Node) -> bool:
    """True when an attribute's name is called right there (`append` of `stack.append(x)`)."""
    reader = member.parent
    return reader is not None and reader.type == "attribute" and reader.parent is not None \
        and reader.parent.type == "call" and reader.parent.child_by_field_name("function") == reader


def _receiver(member: Node) -> str | None:
    """The text an attribute is read off (`self.stack` of `self.stack.append`); None for another node."""
    parent = member.parent
    target = parent.child_by_field_name("object") if parent is not None and parent.type == "attribute" else None
    return None if target is None else node_text(target)


def own_method(member: Node, old: str, new: str) -> list[Node]:
    """For a method called on `self` or `cls` renamed at the call (`self.close()` -> `self.aclose()`):
    the name of the class's own definition of the old method, which the call pointed at (none when
    the class defines the new name already, or no method of the old one: then it is another's)."""
    reader = member.parent
    target = None if reader is None else reader.child_by_field_name("object")
    if target is None or node_text(target) not in ("self", "cls") or reader.parent is None \
            or reader.parent.type != "call":
        return []
    owner = next((node for node in ancestors(reader) if node.type == "class_definition"), None)
    names = [name for method in ([] if owner is None else methods_of(owner))
             if (name := method.child_by_field_name("name")) is not None]
    if any(node_text(name) == new for name in names):
        return []
    return [name for name in names if node_text(name) == old]


def _shadowing(event: EditEvent, document: ParsedDocument, scope: Node, old: str,
               new: str) -> tuple[int, int] | None:
    """The bytes a Python name the event's lines now bind speaks for, when those lines still read
    the old name it was (`for value in value:` made `for v in value:`, `b = list(b)` made `lb =
    list(b)`: one name had been rebound over itself): the loop's body, or the rest of the block
    after the assignment; None otherwise."""
    if document.language != "python":
        return None
    def on_event(node: Node) -> bool:
        return event.start_line <= first_line(document, node) < event.after_end
    if not any(on_event(node) and not is_member(node) for node in nodes_named(scope, "python", old, NAME_TYPES)):
        return None
    for node in filter(on_event, nodes_named(scope, "python", new, NAME_TYPES)):
        statement = node.parent
        while statement is not None and statement.type not in SHADOWING_TYPES:
            statement = statement.parent
        target = None if statement is None else statement.child_by_field_name("left")
        if target is None or not target.start_byte <= node.start_byte < target.end_byte:
            continue
        if statement.type == "for_statement":
            body = statement.child_by_field_name("body")
            return None if body is None else (body.start_byte, body.end_byte)
        block = statement.parent.parent if statement.parent is not None else None  # around its expression statement
        return None if block is None else (statement.end_byte, block.end_byte)
    return None


def rebound(event: EditEvent, document: ParsedDocument) -> bool:
    """True when the event replaced a name by another that stood in the same scope already (no
    rename: see `_bound_before`), or one builtin by another (`builtin_swapped`: only the user's
    function follows, by the rename rule)."""
    found = _rename_scope(event, document)
    return found is not None and (found.rebinds or found.builtin)


class RenameScope(NamedTuple):
    """Where a name the event renamed is renamed (`_rename_scope`)."""

    old: str
    scope: Node  # for one builtin put for another, the user's outermost function (`builtin_swapped`)
    member: bool
    rebinds: bool  # the new name was bound there before while the old one is still bound in the file
    #   (an import or a definition changed to a name the file had leaves the old name's uses dangling:
    #   they follow, `BaseCommand` -> `Command`), or the renamed definition's old name stands on
    #   another definition beside it (`_redefined`)
    imports: bool  # the edit is in a `from` import
    builtin: bool  # one builtin was put for another (`builtin_swapped`)
    defines: bool = False  # the edit renamed a function's or a class's definition
    generic: bool = False  # typing's alias was put for its builtin (`TYPING_GENERICS`): not in the imports
    edited: Node | None = None  # the first new name on the event's lines (`_local_rebound`)


def _rename_scope(event: EditEvent, document: ParsedDocument) -> RenameScope | None:
    """Where the name the event renamed is renamed; None when it renamed none (the document needs
    a tree) or one of the names stands more than `MAX_NAME_USES` times (no rename rule for those).
    Read once per event and text: a plan asks for it from its sites, its regions and its drafts."""
    return _scope_of_rename(event, document, document.text)


@functools.lru_cache(maxsize=4)
def _scope_of_rename(event: EditEvent, document: ParsedDocument, text: str) -> RenameScope | None:
    """`_rename_scope`, kept for the last few (event, document, text): the text is in the key, so
    a document changed since is read anew."""
    names = renamed(event)
    if names is None or document.tree is None or document.language not in CALLEES:
        return None
    old, new = names
    if too_common((old, new), document.text):
        return None
    root = document.tree.root_node
    edited = _edited_names(event, document, new)
    if not edited or all(map(is_keyword, edited)) or _aliased_source(edited[0]):
        return None  # a keyword argument's name is the callee's parameter, an import's before its alias
        #   the imported module's: no name of this file
    if document.language == "python" and TYPING_GENERICS.get(old) == new:  # pyupgrade's UP006: a sweep of the file
        return RenameScope(old, root, False, False, False, False, generic=True)
    scope, member = scope_of(edited[0], document.language, {old, new})
    builtin = builtin_swapped(document, names, edited[0])  # in a class's method too (a member there): `rebound`
    if not member and builtin:
        function = next((node for node in reversed(list(ancestors(edited[0]))) if node.type in FUNCTION_TYPES), None)
        return RenameScope(old, function or root, member, function is None, False, True)
    rebinds = (_bound_before(event, document, root if member else scope, (old, new), member)
               and (member or not _dangling(event, document, old, new))) \
        or (not member and _builtin_for_import(document, old, new, edited[0])) \
        or (names_parent(edited[0], _DEFINITIONS)
            and _redefined(event, document, root if member else scope, old, member))
    return RenameScope(old, scope, member, rebinds, _in_from_import(edited[0]), builtin,
                       any(names_parent(node, _DEFINITIONS) for node in edited), edited=edited[0])


def _edited_names(event: EditEvent, document: ParsedDocument, name: str) -> list[Node]:
    """The nodes named `name` on the event's lines (not a module's name after its package), in file order."""
    return [node for node in nodes_named(document.tree.root_node, document.language, name, NAME_TYPES + MEMBER_TYPES)
            if event.start_line <= first_line(document, node) < event.after_end and not _module_part(node)]


def builtin_swapped(document: ParsedDocument, names: tuple[str, str], edited: Node) -> bool:
    """True when an edit put one Python builtin for another (`names`, old and new; `edited`, the
    first new one on its lines) in code that is no annotation
    (`except Exception:` -> `except SyntaxError:`, `raise Exception("dummy")` -> `raise
    ValueError("dummy")`; an annotation's `int` -> `float` is the annotation rules'): both stand in
    every scope, so the old one's other uses are the user's function's alone (the
    `pytest.raises(Exception)` that catches what it raises), not the file's; at a module's level, none.
    An alias of `OSError` made `OSError` (pyupgrade's UP024: `IOError`) is a sweep of the file."""
    old, new = names
    if document.language != "python" or not (old in PYTHON_BUILTINS and new in PYTHON_BUILTINS) \
            or (old in _OSERROR_ALIASES and new == "OSError"):
        return False
    return not any(node.type == "type" for node in ancestors(edited))


def _builtin_for_import(document: ParsedDocument, old: str, new: str, edited: Node) -> bool:
    """True when a use of a name a Python file imports was pointed at a builtin (`Any` -> `object`,
    `@cached_property` -> `@property`): the builtin stands in every scope, and the import stays."""
    return document.language == "python" and new in PYTHON_BUILTINS and not _in_from_import(edited) \
        and bool(imported_names(document.tree.root_node, old))


def _dangling(event: EditEvent, document: ParsedDocument, old: str, new: str) -> bool:
    """True when the event left the old name's uses dangling in a Python file: it is bound nowhere,
    and the new name is imported nowhere else (imports sorted, `import re` made `import codecs`,
    move a line: the old name comes back on another)."""
    root = document.tree.root_node
    if document.language != "python" or bound_in_file(root, old):
        return False
    return all(event.start_line <= first_line(document, node) < event.after_end for node in imported_names(root, new))


def _aliased_source(node: Node) -> bool:
    """True for the name an import reads before its alias (`OptionError` of `from distutils.errors
    import OptionError as OptionError` made `DistutilsOptionError as OptionError`): the file binds
    the alias, which the uses read still."""
    path = node.parent
    statement = None if path is None else path.parent
    return path is not None and path.type == "dotted_name" and statement is not None \
        and statement.type == "aliased_import" and statement.child_by_field_name("name") == path


def _module_part(node: Node) -> bool:
    """True for a Python module's name after its package (`logging` in `uvicorn.logging`): no name
    the file binds, nor the module `import logging` names."""
    parent = node.parent
    return parent is not None and parent.type == "dotted_name" and parent.named_children[0] != node \
        and parent.parent is not None and parent.parent.type in ("import_statement", "import_from_statement",
                                                                  "aliased_import")


def _module_path(node: Node) -> bool:
    """True for a name in the module of a `from m import x` (`build` of `from build.env import y`)."""
    path = node.parent
    statement = None if path is None else path.parent
    if statement is not None and statement.type == "relative_import":
        path, statement = statement, statement.parent
    return path is not None and path.type in ("dotted_name", "relative_import") and statement is not None \
        and statement.type == "import_from_statement" and statement.child_by_field_name("module_name") == path


def _in_from_import(node: Node) -> bool:
    """True inside a `from m import x` statement."""
    while node is not None:
        if node.type in FROM_IMPORT_TYPES:
            return True
        node = node.parent
    return False


def too_common(names: tuple[str, ...], text: str) -> bool:
    """True when the names stand more than `MAX_NAME_USES` times in `text`, as whole words (the
    search stops there: a one-letter name in a 400 KB file costs a regex scan, not a tree walk)."""
    pattern = re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, names)) + r")(?!\w)")
    return next(itertools.islice(pattern.finditer(text), MAX_NAME_USES, None), None) is not None


def _bound_before(event: EditEvent, document: ParsedDocument, scope: Node, names: tuple[str, str],
                  member: bool) -> bool:
    """True when the new name stood in the scope already, outside the event's lines: the user
    pointed a use at another name that exists, which is no rename of the old one's other uses
    (`type` -> `typ`, the parameter). A member counts when the new name is a method's, a
    property's or an assigned attribute's and the old one is still defined or assigned (`self._f`
    -> `self.f`, the property over `_f`; `ctx.environment` -> `ctx.eval_ctx`, both set in
    `__init__`); one whose old name is defined no more is being renamed, its other uses maybe half
    done already."""
    def defined(name: str, assigned: bool) -> bool:
        return any(_outside(event, document, node) and _defines(node, assigned)
                   for node in nodes_named(scope, document.language, name, NAME_TYPES))
    old, new = names
    if member:
        return defined(new, True) and defined(old, True)
    return any(_outside(event, document, node) and not is_member(node) and not is_keyword(node)
               for node in nodes_named(scope, document.language, new, NAME_TYPES))


def _outside(event: EditEvent, document: ParsedDocument, node: Node) -> bool:
    """True for a node off the event's lines."""
    return not event.start_line <= first_line(document, node) < event.after_end


def _redefined(event: EditEvent, document: ParsedDocument, scope: Node, name: str, member: bool) -> bool:
    """True when a function or a class off the event's lines is named `name` where the renamed
    definition was (in `scope`; a method: in any class): a definition renamed while another of its
    name stands (`def ws` twice in a file, `def close` in two classes) is a new function split off or
    a duplicate named apart, not the old name renamed at its uses."""
    def beside(node: Node) -> bool:
        found, is_method = scope_of(node, document.language, {name})
        return is_method if member else not is_method and found == scope
    return any(_outside(event, document, node) and names_parent(node, _DEFINITIONS) and beside(node)
               for node in nodes_named(scope, document.language, name, NAME_TYPES))


def _defines(node: Node, assigned: bool) -> bool:
    """A definition's name (`f` in `def f`), or with `assigned` an attribute assigned (`x` in `self.x = 1`)."""
    if names_parent(node):
        return True
    parent = node.parent
    target = None if parent is None else parent.parent
    return assigned and is_member(node) and target is not None \
        and target.type in ("assignment", "augmented_assignment") and target.child_by_field_name("left") == parent


def call_regions(event: EditEvent, document: ParsedDocument) -> list[Region]:
    """The lines of the calls of a function whose parameters the event added, removed or
    reordered (a renamed parameter is a rename, not a new signature)."""
    change = signature_change(event, document)
    return [] if change is None else _calls(document, change[0])


def signature_change(event: EditEvent, document: ParsedDocument) -> tuple[str, list[str], Node] | None:
    """(the function's name, its parameter names before, its parameter list node after) when the
    event added, removed or reordered the parameters of a function; None otherwise."""
    for function in overlapping(document.tree.root_node, event.start_line, event.after_end, document):
        parameters = function.child_by_field_name("parameters")
        name = function.child_by_field_name("name")
        if function.type not in FUNCTION_TYPES or parameters is None or name is None \
                or not event.start_line <= last_line(document, parameters) \
                or first_line(document, parameters) >= event.after_end:
            continue
        after = parameter_names(parameters)
        before = _parameters_before(event, document, function, node_text(name))
        if before is None or before == after:
            continue
        if len(before) != len(after) or sorted(before) == sorted(after):
            return node_text(name), before, parameters
    return None


def outside(regions: list[Region], start: int, end: int) -> list[Region]:
    """The regions without lines `start .. end - 1` (a region around them splits in two)."""
    kept = []
    for region in regions:
        pieces = ((region.start_line, min(region.end_line, start)),
                  (max(region.start_line, end), region.end_line))
        kept += [Region(lo, hi, region.reason) for lo, hi in pieces if lo < hi]
    return kept


def merged(regions: list[Region]) -> list[Region]:
    """The regions in line order, overlapping or adjacent ones as one."""
    result: list[Region] = []
    for region in sorted(regions, key=lambda r: r.start_line):
        last = result[-1] if result else None
        if last is not None and region.start_line <= last.end_line:
            reason = min(last.reason, region.reason, key=_STRENGTH.__getitem__)
            result[-1] = Region(last.start_line, max(last.end_line, region.end_line), reason)
        else:
            result.append(region)
    return result


def pieces(region: Region) -> list[Region]:
    """The region cut in runs of at most `MAX_LINES_PER_REGION` lines."""
    return [Region(start, min(start + MAX_LINES_PER_REGION, region.end_line), region.reason)
            for start in range(region.start_line, region.end_line, MAX_LINES_PER_REGION)]


def capped(regions: list[Region], cursor_line: int, lines: list[str]) -> list[Region]:
    """The regions nearest `cursor_line` first, while they fit the caps."""
    kept, total_lines, total_chars = [], 0, 0
    for region in sorted(regions, key=lambda r: _distance(r, cursor_line)):
        chars = sum(len(line) + 1 for line in lines[region.start_line:region.end_line])
        if len(kept) == MAX_REGIONS:
            break
        if total_lines + region.lines <= MAX_REGION_LINES and total_chars + chars <= MAX_REGION_CHARS:
            kept.append(region)
            total_lines, total_chars = total_lines + region.lines, total_chars + chars
    return kept


def _distance(region: Region, line: int) -> int:
    if region.start_line <= line < region.end_line:
        return 0
    return region.start_line - line if region.start_line > line else line - region.end_line + 1


def _parameters_before(event: EditEvent, document: ParsedDocument, function: Node, name: str) -> list[str] | None:
    """The parameter names `name` had before the event: its header's lines in the text before,
    parsed alone; None when they do not hold that function."""
    language = document.language
    parameters = function.child_by_field_name("parameters")
    shift = event.after_end - event.before_end  # lines after the event move by this much
    end = last_line(document, parameters)
    end = end - shift if end >= event.after_end else min(end, event.before_end - 1)
    start = min(first_line(document, function), event.start_line)
    header = textwrap.dedent("\n".join(split_lines(event.before)[start:max(end + 1, event.before_end)]))
    tree = new_parser(language).parse(header.encode("utf-8", "surrogatepass"))
    for node in overlapping(tree.root_node, 0, header.count("\n") + 1):
        named, listed = node.child_by_field_name("name"), node.child_by_field_name("parameters")
        if node.type in FUNCTION_TYPES and named is not None and listed is not None \
                and node_text(named) == name:
            return parameter_names(listed)
    return None


def _calls(document: ParsedDocument, name: str) -> list[Region]:
    return [Region(first_line(document, call), last_line(document, call) + 1, CALL)
            for call in call_nodes(document.tree.root_node, document.language, name)]
