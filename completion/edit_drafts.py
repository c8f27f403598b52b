"""Drafts of the next-edit regions: the new text the user's last edit implies for each region.

`draft_regions(event, document, regions)` gives one `Draft` per region: the region's lines (as
`completion.positions.line_starts` cuts them, the last line's break included) as they should
become, so that a model only fills what a draft cannot know. One rule, picked by the event:
- *rename* (`renamed(event)`): the other uses of the old name that `rename_uses` finds, plus the
  keyword arguments `f(old=...)` of the calls of a function whose parameter was renamed, and the
  keyword a use is passed on under when it is its own name (`g(old=old)`), get the new name. A
  new name that is a keyword or not an identifier drafts nothing.
- *literal* (`changed_literal(event)`): the region's literal nodes holding the old literal get the
  new one where it is carried (`completion.edit_literals.carried_literals`: a common value outside
  the user's function only where it stands alike, a whole number or a round fraction right after the
  token the user's stood after, `number_context`, a string of a character or two in a call of the
  same callee; within it, one function's constant, `t % 24` and `t //= 24`, but on the user's own
  lines, where an equal value the user left is another: `(2 if x else 2)`; a sentence reworded
  nowhere). An event
  that is both (a word inside a string changed) is a literal unless the rename finds other uses of
  the name.
- *call* (`signature_change(event, document)`): each single-line call of the function in the
  region gets its argument list rewritten: a removed parameter drops its argument (positional by
  index, else keyword by name), reordered parameters reorder the positional arguments, an added
  parameter without a default opens a masked slot of `SLOT_TOKENS` where its argument goes
  (positional when every parameter is a plain positional one and the call passes all
  positionally, else `name=` and the slot). Calls over several lines, with `*args`/`**kwargs`
  splats or comments among their arguments stay as they are. An added `*args` or `**kwargs` (typed
  or not) asks nothing of the callers, but the function's own call of the method it overrides passes
  it on (`super().f(a, **kwargs)`, whatever its lines); one taken off is dropped from that call (on
  one line).
- *analogy*: the sites where the same change applies by analogy (`completion.edit_analogy`),
  passed in by the caller, drafted where the rule above replaced nothing;
- *copy*: everything else, and any region with no analogy when the document has no tree or does not
  parse (where its one analogy is a string's other end, `completion.edit_quotes`).
All offsets into the tree are UTF-8 bytes, and its nodes' lines LSP lines (`completion.node_lines`).
"""
from __future__ import annotations

import keyword
from collections.abc import Sequence
from dataclasses import dataclass

from tree_sitter import Node

from completion.edit_events import EditEvent
from completion.edit_literals import carried_literals, changed_literal
from completion.edit_regions import Region, rename_uses, renamed, signature_change
from completion.node_lines import first_line, last_line
from completion.positions import line_starts
from completion.syntax import ParsedDocument, encode
from completion.tree_names import (
    binds,
    call_nodes,
    first_identifier,
    methods_of,
    names_parent,
    nodes_named,
    overlapping,
    parameter_names,
)

RENAME, LITERAL, CALL, ANALOGY, COPY = "rename", "literal", "call", "analogy", "copy"
SLOT_TOKENS = 8  # the masked budget of one added argument (`30`, `"utf-8"`, `False`)
SLOT = None  # a masked slot among a replacement's parts
_PLAIN_PARAMETERS = frozenset({"identifier", "typed_parameter"})
_SPLATS = frozenset({"list_splat", "dictionary_splat", "comment"})
_DEFAULTS = frozenset({"default_parameter", "typed_default_parameter"})
_SPLAT_PARAMETERS = {"list_splat_pattern": "*", "dictionary_splat_pattern": "**"}  # no caller needs to pass one
_SPLAT_ARGUMENTS = {"*": "list_splat", "**": "dictionary_splat"}
_PYTHON_DEFINITIONS = ("function_definition", "class_definition")  # what can take a keyword argument

Replacement = tuple[int, int, tuple[str | None, ...]]  # (start byte, end byte, parts: text or SLOT)


@dataclass(frozen=True, slots=True)
class Draft:
    """A region's drafted new text: `pieces` with a masked slot of `slots[i]` tokens between
    pieces[i] and pieces[i + 1] (no slots: the text is known whole); `rule` says which rule drew it."""

    pieces: tuple[str, ...]
    slots: tuple[int, ...] = ()
    rule: str = COPY

    @property
    def text(self) -> str:
        """The pieces joined (what a draft with no slots proposes)."""
        return "".join(self.pieces)

    @property
    def changes(self) -> bool:
        """True when a rule changed something."""
        return self.rule != COPY


def draft_regions(event: EditEvent, document: ParsedDocument, regions: Sequence[Region],
                  analogies: Sequence[Replacement] = ()) -> list[Draft]:
    """One draft per region, in the order given: the region's lines (start_line .. end_line - 1
    of document.text, the last line's break included) as they should become; the `analogies`
    (`completion.edit_analogy` sites as replacements) apply where the rule's replacements do not."""
    text = document.text
    starts = line_starts(text)
    cuts = [region_span(starts, region) for region in regions]  # (start, end) string offsets
    if not cuts:
        return []
    replacements = _with_analogies(_replacements(event, document), analogies)
    data, drafts = encode(text), []
    for start, end in cuts:
        byte_start, byte_end = len(encode(text[:start])), len(encode(text[:end]))
        drafts.append(_draft(data, byte_start, byte_end, replacements))
    return drafts


def region_span(starts: list[int], region: Region) -> tuple[int, int]:
    """The string offsets of the region's lines in a text whose lines start at `starts` (its
    length last, `completion.positions.line_starts`), clamped to the text."""
    last = len(starts) - 1
    start = starts[min(max(region.start_line, 0), last)]
    return start, max(start, starts[min(max(region.end_line, 0), last)])


def _replacements(event: EditEvent, document: ParsedDocument) -> tuple[str, list[Replacement]]:
    """(the rule, its replacements over the whole document) for the event; COPY with none when no
    rule applies or the document has no sound tree."""
    tree = document.tree
    if tree is None or tree.root_node.has_error:
        return COPY, []
    literal = changed_literal(event)
    renames = rename_replacements(event, document) if renamed(event) is not None else []
    if renames or (renamed(event) is not None and literal is None):
        return RENAME, renames
    if literal is not None:
        return LITERAL, literal_replacements(event, document)
    return CALL, call_replacements(event, document)


def _with_analogies(found: tuple[str, list[Replacement]],
                    analogies: Sequence[Replacement]) -> tuple[str, list[Replacement]]:
    """The rule's replacements, then the analogies (a rule that found none gives way to ANALOGY),
    whatever the tree: the caller found them (in a document that does not parse, a string's other end)."""
    rule, replacements = found
    if not analogies:
        return found
    return (rule if replacements else ANALOGY), [*replacements, *analogies]


def _draft(data: bytes, start: int, end: int, found: tuple[str, list[Replacement]]) -> Draft:
    """The draft of bytes `start .. end - 1` of `data` with the replacements inside them made."""
    rule, replacements = found
    inside = _disjoint([r for r in replacements if start <= r[0] and r[1] <= end])
    pieces, slots, at, current = [], [], start, b""
    for lo, hi, parts in inside:
        current += data[at:lo]
        for part in parts:
            if part is SLOT:
                pieces.append(current.decode("utf-8", "surrogatepass"))
                slots.append(SLOT_TOKENS)
                current = b""
            else:
                current += encode(part)
        at = hi
    pieces.append((current + data[at:end]).decode("utf-8", "surrogatepass"))
    changed = "".join(pieces) != data[start:end].decode("utf-8", "surrogatepass") or slots
    return Draft(tuple(pieces), tuple(slots), rule if changed else COPY)


def _disjoint(replacements: list[Replacement]) -> list[Replacement]:
    """The replacements in byte order, any that overlaps an earlier one left out."""
    kept: list[Replacement] = []
    for replacement in sorted(replacements, key=lambda r: (r[0], -r[1])):
        if not kept or replacement[0] >= kept[-1][1]:
            kept.append(replacement)
    return kept


def is_new_name(name: str) -> bool:
    """True when `name` can replace an identifier: an identifier that is not a keyword."""
    return name.isidentifier() and not keyword.iskeyword(name)


def rename_replacements(event: EditEvent, document: ParsedDocument) -> list[Replacement]:
    """The other uses of the renamed name, its keyword arguments when it is a parameter, and the
    keywords it is passed on under (`passed_on`), replaced by the new name; none for a new name
    that is a keyword or no identifier."""
    names = renamed(event)
    if names is None or not is_new_name(names[1]):
        return []
    uses = rename_uses(event, document)
    nodes = uses + keyword_uses(event, document, *names) + passed_on(uses, names[0], document)
    return [(node.start_byte, node.end_byte, (names[1],)) for node in nodes]


def passed_on(uses: list[Node], old: str, document: ParsedDocument) -> list[Node]:
    """The keywords of the uses passed on under their own name (`f(old=old)`): the name renamed
    goes with its value (`detailed_validation=detailed_validation`), but to a function the file
    defines with a parameter of that name, which the call would miss."""
    keys = []
    for node in uses:
        argument = node.parent
        if argument.type != "keyword_argument" or argument.child_by_field_name("value") != node:
            continue
        key = argument.child_by_field_name("name")
        if _text(key) == old and not _takes(document, _callee(argument), old):
            keys.append(key)
    return keys


def _init_of(cls: Node) -> Node | None:
    """A Python class's `__init__`, when its body defines one."""
    for function in methods_of(cls):
        name = function.child_by_field_name("name")
        if name is not None and _text(name) == "__init__":
            return function
    return None


def _callee(argument: Node) -> str | None:
    """The name a keyword argument's call calls (`f` of `f(...)` and `obj.f(...)`)."""
    call = argument.parent.parent if argument.parent is not None else None
    callee = None if call is None else call.child_by_field_name("function")
    if callee is not None and callee.type == "attribute":
        callee = callee.child_by_field_name("attribute")
    return None if callee is None or callee.type != "identifier" else _text(callee)


def _takes(document: ParsedDocument, function: str | None, parameter: str) -> bool:
    """True when the file defines a function (or a class's `__init__`) named `function` with a
    parameter named `parameter`."""
    if function is None:
        return False
    for node in nodes_named(document.tree.root_node, document.language, function, ("identifier",)):
        if not names_parent(node, _PYTHON_DEFINITIONS):
            continue
        definition = node.parent
        if definition.type == "class_definition":
            definition = _init_of(definition)
        parameters = None if definition is None else definition.child_by_field_name("parameters")
        if parameters is not None and parameter in parameter_names(parameters):
            return True
    return False


def keyword_uses(event: EditEvent, document: ParsedDocument, old: str, new: str) -> list[Node]:
    """The `old` names of keyword arguments (`f(old=1)`) in the calls of the function whose
    parameter list, within the event's lines, now holds `new` in place of `old`."""
    function = _renamed_parameter_owner(event, document, new)
    if function is None:
        return []
    name = function.child_by_field_name("name")
    found = []
    for call in call_nodes(document.tree.root_node, document.language, _text(name)):
        for argument in _arguments(call):
            key = argument.child_by_field_name("name") if argument.type == "keyword_argument" else None
            if key is not None and _text(key) == old:
                found.append(key)
    return found


def _renamed_parameter_owner(event: EditEvent, document: ParsedDocument, new: str) -> Node | None:
    """The named function whose parameter list, on the event's lines, holds a parameter `new`."""
    for node in overlapping(document.tree.root_node, event.start_line, event.after_end, document):
        parameters, name = node.child_by_field_name("parameters"), node.child_by_field_name("name")
        if parameters is not None and name is not None and first_line(document, parameters) < event.after_end \
                and last_line(document, parameters) >= event.start_line and new in parameter_names(parameters):
            return node
    return None


def literal_replacements(event: EditEvent, document: ParsedDocument) -> list[Replacement]:
    """The literal nodes holding the literal the event changed that take its new value
    (`carried_literals`), given it."""
    new = changed_literal(event)[1]
    return [(node.start_byte, node.end_byte, (new,)) for node in carried_literals(event, document)]


def call_replacements(event: EditEvent, document: ParsedDocument) -> list[Replacement]:
    """The argument lists of the calls of a function whose parameters the event changed,
    rewritten to the new parameters (single-line calls without splats only)."""
    change = signature_change(event, document)
    if change is None:
        return []
    name, before, parameters = change
    listed = [p for p in parameters.named_children if p.type != "comment"]  # every parameter, `*` too
    found = []
    for call in call_nodes(document.tree.root_node, document.language, name):
        arguments = call.child_by_field_name("arguments")
        forwarded = _forwarded(call, parameters.parent, listed, before)
        if forwarded is not None:
            found.append(forwarded)
            continue
        # `obj.f(a)` passes no `self`, before or after (a method made static lost its receiver, not an argument)
        skip_before, skip_after = int(_is_bound(call, before)), int(_is_bound(call, parameter_names(parameters)))
        one_line = arguments is not None and first_line(document, arguments) == last_line(document, arguments)
        parts = _new_arguments(arguments, before[skip_before:], listed[skip_after:], call) if one_line else None
        if parts is not None:
            found.append((arguments.start_byte, arguments.end_byte, parts))
    return found


def _forwarded(call: Node, function: Node, listed: list[Node], before: list[str]) -> Replacement | None:
    """For the call of the overridden method in the function's own body (`super().f(a, b)` in `def
    f(self, a, b)`): its arguments with the function's splats passed on: the `*args` and `**kwargs`
    added (typed or not) put after its last argument (`super().f(a, b, **kwargs)`), those taken off
    dropped (`super().close(*args, **kwargs)` -> `super().close()`, on one line); None for any other
    call, or when nothing changes."""
    arguments = call.child_by_field_name("arguments")
    if not _calls_super(call, function) or arguments is None:
        return None
    items = [a for a in arguments.named_children if a.type != "comment"]
    gone = set(before) - {_name(p) for p in listed}
    dropped = [a for a in items if a.type in _SPLATS and _name(a) in gone]
    if dropped:
        kept = [_text(a) for a in items if a not in dropped]
        one_line = arguments.start_point[0] == arguments.end_point[0]
        return (arguments.start_byte, arguments.end_byte, ("(" + ", ".join(kept) + ")",)) if one_line else None
    passed = {a.type for a in items}
    splats = [_splat(p) + _name(p) for p in listed
              if _splat(p) and _name(p) not in before and _SPLAT_ARGUMENTS[_splat(p)] not in passed]
    if not splats:
        return None
    at = items[-1].end_byte if items else arguments.start_byte + 1
    return at, at, ((", " if items else "") + ", ".join(splats),)


def _calls_super(call: Node, function: Node) -> bool:
    """True for a call in `function`'s body of a method read off `super()` (or `super(C, self)`)."""
    callee = call.child_by_field_name("function")
    target = None if callee is None else callee.child_by_field_name("object")
    return target is not None and target.type == "call" and function.start_byte <= call.start_byte < function.end_byte \
        and _text(target.child_by_field_name("function")) == "super"


def _splat(parameter: Node) -> str:
    """"*" or "**" for a `*args` or `**kwargs` parameter, typed or not; "" for any other."""
    if parameter.type == "typed_parameter" and parameter.named_children:
        parameter = parameter.named_children[0]
    return _SPLAT_PARAMETERS.get(parameter.type, "")


def _is_bound(call: Node, before: list[str]) -> bool:
    """True for a method call `obj.f(...)` of a function whose first parameter is `self` or `cls`."""
    callee = call.child_by_field_name("function")
    return callee is not None and callee.type == "attribute" and before[:1] in (["self"], ["cls"])


def _new_arguments(arguments: Node, before: list[str], listed: list[Node], call: Node) -> tuple[str | None, ...] | None:
    """The parts of the argument list `(...)` for the parameters `listed` now (their names
    before: `before`) of a call on one line; None for a call this rule leaves alone. A call that
    passes each parameter on by its own name, in order (`get_choices(cli, args)`), passes the added
    ones the same way, no slot, where its function binds those names (`_passes_on`)."""
    items = arguments.named_children
    if any(a.type in _SPLATS for a in items):
        return None
    named = [p for p in listed if first_identifier(p) is not None]
    after = [_text(first_identifier(p)) for p in named]
    texts = _kept_arguments(items, before, after)
    if texts is None:
        return None
    added = [i for i, (n, p) in enumerate(zip(after, named))
             if n not in before and p.type not in _DEFAULTS and not _splat(p)]
    if not added:
        return None if texts == [_text(a) for a in items] else ("(" + ", ".join(texts) + ")",)
    plain = all(p.type in _PLAIN_PARAMETERS for p in listed)
    if plain and before and [_text(a) for a in items] == before and _passes_on(call, [after[i] for i in added]):
        return ("(" + ", ".join(after) + ")",)  # the call passes every parameter on by its own name
    return _with_slot(texts, items, after, plain, added[0])


def _passes_on(call: Node, names: list[str]) -> bool:
    """True when `call` stands in a Python function that binds each of `names` (a parameter, or an
    assignment of its own body: `tree_names.binds`): it has something of that name to pass."""
    function = call.parent
    while function is not None and function.type != "function_definition":
        function = function.parent
    return function is not None and all(binds(function, {name}) for name in names)


def _kept_arguments(items: list[Node], before: list[str], after: list[str]) -> list[str] | None:
    """The argument texts with removed parameters' arguments dropped and positional ones in the
    new order; None when a reorder moves a parameter the call does not pass positionally. A call
    that passes the reordered parameters' own names in their new order keeps its arguments (the
    definition was brought to its calls)."""
    positional = [a for a in items if a.type != "keyword_argument"]
    if set(before) == set(after) and [_text(a) for a in positional] == after[:len(positional)]:
        return [_text(a) for a in items]
    by_name = dict(zip(before, positional))  # the positional argument each old parameter got
    order = [name for name in after if name in before]
    passed = [name for name in order if name in by_name]
    if len(positional) > len(before) or passed != order[:len(passed)]:
        return None
    removed = set(before) - set(after)
    keywords = [a for a in items if a.type == "keyword_argument"
                and _text(a.child_by_field_name("name")) not in removed]
    return [_text(by_name[name]) for name in passed] + [_text(a) for a in keywords]


def _with_slot(texts: list[str], items: list[Node], after: list[str], plain: bool,
               index: int) -> tuple[str | None, ...]:
    """The argument list with a masked slot where the argument of added parameter `index` goes
    (positional when every parameter is `plain` and the call passes all positionally)."""
    if plain and all(a.type != "keyword_argument" for a in items):
        head, tail = texts[:index], texts[index:]
        opening = "(" + ", ".join(head) + (", " if head else "")
        return (opening, SLOT, (", " if tail else "") + ", ".join(tail) + ")")
    opening = "(" + ", ".join(texts) + (", " if texts else "") + after[index] + "="
    return (opening, SLOT, ")")


def _name(node: Node) -> str | None:
    """The first identifier's text in `node` (`args` of `*args`), None without one."""
    found = first_identifier(node)
    return None if found is None else _text(found)


def _arguments(call: Node) -> list[Node]:
    arguments = call.child_by_field_name("arguments")
    return [] if arguments is None else arguments.named_children


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "surrogatepass")
