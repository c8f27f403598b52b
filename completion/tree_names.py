"""Names and nodes in a syntax tree: the node kinds and lookups the next-edit rules share.

`nodes_named` finds the nodes of some kinds whose text is a name (one tree-sitter query), `scope_of`
says where a renamed name lives (its function, a comprehension, an exception's handler, a class's
members, the file), `alike_comprehensions` the comprehensions that bind the same name,
`overlapping` walks the nodes on some lines, `call_nodes` finds the calls of a function by its
callee's name, `parameter_names` reads a parameter list, `bound_in_file` and `imported_names` say
where a Python file binds a name, `binding_functions` which of its functions do, `name_uses` a name's
bindings and reads, `binding_scope` where a binding is read, `identifiers_in` the names a span reads
and binds, `name_strings` where its strings name one, `names_parent` says whether a node is its
parent's name, and `python_word` knows its builtins and keywords. Used by
`completion.edit_regions` (the rename, call and literal rules), `completion.edit_drafts`,
`completion.edit_analogy` and `completion.next_edit`; everything here is pure.
"""
from __future__ import annotations

import bisect
import builtins
import functools
import keyword
from collections.abc import Iterator

from tree_sitter import Node, Query, QueryCursor

from completion.node_lines import first_line, last_line
from completion.syntax import ParsedDocument, ancestors, grammar

FUNCTION_TYPES = frozenset({
    "function_definition", "lambda",  # Python (C, C++: function_definition)
    "function_declaration", "generator_function_declaration", "function_expression",
    "arrow_function", "method_definition",  # JavaScript, TypeScript
    "method_declaration", "func_literal",  # Go (Java: method_declaration)
    "function_item", "closure_expression",  # Rust
    "constructor_declaration", "lambda_expression",  # Java
})
CLASS_TYPES = frozenset({
    "class_definition", "class_declaration", "class_specifier", "struct_specifier",
    "impl_item", "interface_declaration",
})
COMPREHENSION_TYPES = frozenset({  # Python 3: their `for` targets are their own
    "list_comprehension", "set_comprehension", "dictionary_comprehension", "generator_expression",
})
NAME_TYPES = ("identifier", "type_identifier", "shorthand_property_identifier")
MEMBER_TYPES = ("property_identifier", "field_identifier")
PYTHON_BUILTINS = frozenset(dir(builtins))
# Python: the identifiers a function binds, by their parent (the left of an assignment is below)
_BINDING_PARENTS = frozenset({
    "parameters", "lambda_parameters", "typed_parameter", "list_splat_pattern",
    "dictionary_splat_pattern", "pattern_list", "tuple_pattern", "as_pattern_target",
})
_NAMED_BINDINGS = {"default_parameter": "name", "typed_default_parameter": "name",
                   "assignment": "left", "augmented_assignment": "left", "for_statement": "left",
                   "for_in_clause": "left", "named_expression": "name"}
_DECLARATIONS = frozenset({"global_statement", "nonlocal_statement"})  # a name bound in the scope outside
_SCOPE_TYPES = FUNCTION_TYPES | COMPREHENSION_TYPES | {"except_clause"}  # Python: where a binding is read
# the callee's name in a call, per language
CALLEES = {
    "python": "(call function: [(identifier) @f (attribute attribute: (identifier) @f)])",
    "javascript": "(call_expression function: [(identifier) @f "
                  "(member_expression property: (property_identifier) @f)])",
    "go": "(call_expression function: [(identifier) @f (selector_expression field: (field_identifier) @f)])",
    "rust": "(call_expression function: [(identifier) @f (field_expression field: (field_identifier) @f) "
            "(scoped_identifier name: (identifier) @f)])",
    "java": "(method_invocation name: (identifier) @f)",
    "c": "(call_expression function: [(identifier) @f (field_expression field: (field_identifier) @f)])",
}
CALLEES.update(typescript=CALLEES["javascript"], tsx=CALLEES["javascript"], cpp=CALLEES["c"])
CALL_TYPES = frozenset({"call", "call_expression", "method_invocation"})
SCAN_CHILDREN = 64  # a node with more children is searched by bisection


def node_text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "surrogatepass")


@functools.lru_cache(maxsize=128)
def _query(language: str, source: str) -> Query:
    return Query(grammar(language), source)


def captured(node: Node, language: str, source: str) -> list[Node]:
    """The nodes under `node` that the query `source` captures (any capture name), in text order."""
    captures = QueryCursor(_query(language, source)).captures(node)
    return sorted((found for nodes in captures.values() for found in nodes), key=lambda found: found.start_byte)


def nodes_named(node: Node, language: str, name: str, types: tuple[str, ...]) -> list[Node]:
    """The nodes of `types` (those the grammar has) under `node` whose text is `name`."""
    known = [kind for kind in types if grammar(language).id_for_node_kind(kind, True) is not None]
    alternatives = " ".join(f"({kind})" for kind in known)
    captures = QueryCursor(_query(language, f'([{alternatives}] @n (#eq? @n "{name}"))')).captures(node)
    return sorted(captures.get("n", []), key=lambda found: found.start_byte)


def is_member(node: Node) -> bool:
    """An attribute's or a field's name: `x` in `self.x`, `p.x`, `this.x`."""
    parent = node.parent
    return node.type in MEMBER_TYPES or (
        parent is not None and parent.type == "attribute" and parent.child_by_field_name("attribute") == node)


def methods_of(cls: Node) -> list[Node]:
    """The function definitions of a Python class's own body, decorated ones too, in order."""
    body = cls.child_by_field_name("body")
    found = []
    for statement in [] if body is None else body.named_children:
        function = statement.child_by_field_name("definition") if statement.type == "decorated_definition" \
            else statement
        if function is not None and function.type == "function_definition":
            found.append(function)
    return found


def is_keyword(node: Node) -> bool:
    """A keyword argument's name (`x` in `f(x=1)`): the callee's parameter, not a variable."""
    parent = node.parent
    return parent is not None and parent.type == "keyword_argument" \
        and parent.child_by_field_name("name") == node


def scope_of(node: Node, language: str, names: set[str]) -> tuple[Node, bool]:
    """Where a renamed name lives: (the node to search, whether it is a member). A name of a class's
    body is a member; one a method reads but does not bind, that the module binds (`_global`), is the
    module's: Python looks names up past the class's body from inside its methods."""
    if is_member(node):
        return node, True
    ancestor, in_function = node.parent, False
    while ancestor is not None:
        if ancestor.type == "except_clause" and _caught_as(ancestor) in names:
            return ancestor, False  # `except E as e:` binds `e` for its handler alone (Python deletes it after)
        if ancestor.type in COMPREHENSION_TYPES and _iterated_in(ancestor) & names:
            return ancestor, False  # `[h.plugin for h in hooks]` binds `h` for itself alone
        defines = ancestor.child_by_field_name("name") == node  # a definition's name lives outside
        if ancestor.type in FUNCTION_TYPES and not defines \
                and (language != "python" or binds(ancestor, names)):
            return ancestor, False
        if ancestor.type in CLASS_TYPES and not defines \
                and not (language == "python" and in_function and _global(node, names)):
            return (node, True) if language == "python" else (ancestor, False)
        in_function = in_function or (ancestor.type in FUNCTION_TYPES and not defines)
        ancestor = ancestor.parent
    return _root(node), False


def _global(node: Node, names: set[str]) -> bool:
    """True when the Python module around `node` binds one of `names` at its top level (`binding_functions`;
    not a builtin, whose rules are `edit_regions.builtin_swapped`'s): a name every function of the file sees."""
    root = _root(node)
    return any(name not in PYTHON_BUILTINS and binding_functions(root, name) is None for name in sorted(names))


def _root(node: Node) -> Node:
    """The root of the tree `node` stands in."""
    while node.parent is not None:
        node = node.parent
    return node


def alike_comprehensions(comprehension: Node, names: set[str]) -> list[Node]:
    """The comprehensions of the function (or file) around a `comprehension` whose `for` clauses
    bind one of `names` as it does (`cl for cl in what` twice in one function): one name in each,
    renamed in one, is renamed in the others; none nested in another of them. Found from the
    places of the names (one query), not by walking the function's tree."""
    outer = comprehension.parent
    while outer.parent is not None and outer.type not in FUNCTION_TYPES:
        outer = outer.parent
    found: dict[tuple[int, int], Node] = {}
    for node in (found_name for name in names for found_name in nodes_named(outer, "python", name, ("identifier",))):
        outermost, ancestor = None, node.parent
        while ancestor is not None and ancestor != outer:
            if ancestor.type in COMPREHENSION_TYPES and _iterated_in(ancestor) & names:
                outermost = ancestor
            ancestor = ancestor.parent
        if outermost is not None:
            found[(outermost.start_byte, outermost.end_byte)] = outermost
    return sorted(found.values(), key=lambda node: node.start_byte)


def _iterated_in(comprehension: Node) -> set[str]:
    """The names a Python comprehension's `for` clauses bind (`for k, v in ...`)."""
    bound = set()
    for clause in comprehension.named_children:
        target = clause.child_by_field_name("left") if clause.type == "for_in_clause" else None
        stack = [] if target is None else [target]
        while stack:
            node = stack.pop()
            if node.type == "identifier":
                bound.add(node_text(node))
            stack.extend(node.named_children)
    return bound


def _caught_as(clause: Node) -> str | None:
    """The name a Python `except ... as name:` clause binds, or None."""
    for child in clause.named_children:
        if child.type == "as_pattern":
            target = child.child_by_field_name("alias")
            return None if target is None else node_text(target)
    return None


def binds(function: Node, names: set[str]) -> bool:
    """True when the Python `function` binds one of `names`: a parameter or an assignment's
    target in its own body (not in a nested function or class)."""
    stack = list(function.children)
    while stack:
        node = stack.pop()
        if node.type in FUNCTION_TYPES or node.type in CLASS_TYPES:
            continue
        if node.type == "identifier" and node_text(node) in names and _is_binding(node):
            return True
        stack.extend(node.children)
    return False


def _is_binding(node: Node) -> bool:
    child, parent = node, node.parent
    while parent is not None and parent.type in ("pattern_list", "tuple_pattern", "list_pattern"):
        child, parent = parent, parent.parent  # `a, b = ...`: the pattern is the target
    if parent is None:
        return False
    if parent.type in _BINDING_PARENTS:
        return True
    field = _NAMED_BINDINGS.get(parent.type)
    return field is not None and parent.child_by_field_name(field) == child


def bound_in_file(root: Node, name: str) -> bool:
    """True when a Python file binds `name` anywhere: a definition's name, an import (`import name`,
    `from m import name`, `... as name`), a target, a parameter, `global name`, or it is a builtin."""
    return name in PYTHON_BUILTINS or binds_itself(root, name)


def binds_itself(root: Node, name: str) -> bool:
    """`bound_in_file` but for the builtins: True only where the file's own code binds `name`."""
    return any(map(_binds, nodes_named(root, "python", name, ("identifier",))))


def test_function(node: Node | None) -> Node | None:
    """The test function (`def test_...`) around `node`, itself included, or None."""
    return next((found for found in ancestors(node) if found.type in FUNCTION_TYPES and _named_test(found)), None)


def _named_test(function: Node) -> bool:
    name = function.child_by_field_name("name")  # a lambda has none
    return name is not None and (name.text or b"").startswith(b"test")


def binding_functions(root: Node, name: str) -> list[Node] | None:
    """The Python functions that bind `name` (a parameter, a target, an import or a definition in
    their own body; nested ones included), or None when the module binds it (at its top level, in a
    class body) or it is a builtin: a name visible everywhere."""
    if name in PYTHON_BUILTINS:
        return None
    functions = []
    for binding in name_uses(root, name)[0]:
        function = next((up for up in ancestors(_binder(binding)) if up.type in FUNCTION_TYPES), None)
        if function is None:
            return None
        functions.append(function)
    return functions


def identifiers_in(root: Node, start: int, end: int) -> tuple[set[str], set[str]]:
    """The Python names between bytes `start` and `end` of a tree: (those read there: no attribute,
    keyword argument, binding or definition; those bound there)."""
    read: set[str] = set()
    bound: set[str] = set()
    stack = [root.descendant_for_byte_range(start, max(start, end - 1))]
    while stack:
        node = stack.pop()
        if node is None or node.end_byte <= start or node.start_byte >= end:
            continue
        if node.type == "identifier" and start <= node.start_byte and node.end_byte <= end:
            if _binds(node):
                bound.add(node_text(node))
            elif not is_member(node) and not is_keyword(node):
                read.add(node_text(node))
        stack.extend(node.children)
    return read, bound


def name_uses(root: Node, name: str) -> tuple[list[Node], list[Node]]:
    """The Python identifiers of `name` under `root`: (those that bind it, those that read it; an
    attribute or a keyword argument of that name is neither)."""
    bindings, reads = [], []
    for node in nodes_named(root, "python", name, ("identifier",)):
        if _binds(node):
            bindings.append(node)
        elif not is_member(node) and not is_keyword(node):
            reads.append(node)
    return bindings, reads


def shadowing_functions(scope: Node, name: str) -> list[Node]:
    """The Python functions inside `scope` (not it) that bind `name` for themselves: a parameter, a
    target (`with ... as tempdir`), an import, a definition in their body; not one that declares it
    `global` or `nonlocal`. A `name` read in one of them is its own, not the one `scope` binds."""
    found, declared = {}, set()
    for node in nodes_named(scope, "python", name, ("identifier",)):
        declares = node.parent is not None and node.parent.type in _DECLARATIONS
        if not declares and not _binds(node):
            continue
        function = next((up for up in ancestors(_binder(node)) if up.type in FUNCTION_TYPES), None)
        if function is None or function == scope or not scope.start_byte <= function.start_byte < scope.end_byte:
            continue
        if declares:
            declared.add(function.start_byte)
        else:
            found[function.start_byte] = function
    return [function for at, function in sorted(found.items()) if at not in declared]


def binding_scope(binding: Node) -> Node:
    """Where a Python name a node binds is read: the except clause of `as e`, else its function (a
    lambda, a comprehension), else the module."""
    lineage = list(ancestors(_binder(binding)))
    return next((up for up in lineage if up.type in _SCOPE_TYPES), lineage[-1])


def _binds(node: Node) -> bool:
    """A Python identifier that binds its name: a target, a parameter, an import, a definition."""
    return _is_binding(node) or _imports(node) or _names_definition(node)


def _binder(binding: Node) -> Node:
    """Where a binding's scope is looked for from: a definition's name binds around the definition."""
    return binding.parent.parent if _names_definition(binding) else binding.parent


def python_word(word: str) -> bool:
    """A builtin or a keyword of Python: a word whole as typed (not a soft keyword: `_` is a name)."""
    return word in PYTHON_BUILTINS or keyword.iskeyword(word)


def imported_names(root: Node, name: str) -> list[Node]:
    """The nodes where a Python file's imports bind `name`."""
    return [node for node in nodes_named(root, "python", name, ("identifier",)) if _imports(node)]


def imports_module(root: Node, name: str) -> bool:
    """True when an `import` statement of a Python file binds `name` (`import ddt`, `import numpy as
    np`: a module), not only a `from` import (`from .signals import sent`: anything a module holds)."""
    return any(_import_statement(node) for node in imported_names(root, name))


def _import_statement(node: Node) -> bool:
    """True for a name an `import` statement binds (its nearest import ancestor is one)."""
    statement = next((found for found in ancestors(node) if found.type.startswith("import")), None)
    return statement is not None and statement.type == "import_statement"


def name_strings(root: Node, name: str) -> list[Node]:
    """The contents of the strings that name `name` in a Python file: its entries in `__all__` and
    its string annotations (`cli: "Command"`, `Optional["Node"]`), in file order."""
    return [node for node in nodes_named(root, "python", name, ("string_content",)) if _names_by_string(node.parent)]


def _names_by_string(string: Node | None) -> bool:
    """True for a string that is an annotation or an entry of `__all__` (a list, tuple or set
    assigned or added to it)."""
    holder = None if string is None else string.parent
    if holder is None:
        return False
    if holder.type == "type":
        return True  # an annotation
    owner = holder.parent
    if holder.type not in ("list", "tuple", "set") or owner is None \
            or owner.type not in ("assignment", "augmented_assignment"):
        return False
    return node_text(owner.child_by_field_name("left")) == "__all__"


def names_parent(node: Node, kinds: tuple[str, ...] | None = None) -> bool:
    """True when `node` is its parent's name (`f` in `def f`, `C` in `class C`, `x` in `f(x=1)`):
    of any parent with a `name` field, or with `kinds` of a parent of those kinds alone."""
    parent = node.parent
    return parent is not None and (kinds is None or parent.type in kinds) and parent.child_by_field_name("name") == node


def _names_definition(node: Node) -> bool:
    """A function's or a class's name, or a name a `global` statement declares."""
    return names_parent(node, ("function_definition", "class_definition")) \
        or (node.parent is not None and node.parent.type == "global_statement")


def _imports(node: Node) -> bool:
    """`x` in `import x`, `import x.y`, `from m import x` or `... import y as x`: a name an import binds."""
    parent = node.parent
    if parent is not None and parent.type == "aliased_import":
        return parent.child_by_field_name("alias") == node
    if parent is None or parent.type != "dotted_name" or parent.named_children[0] != node:
        return False
    statement = parent.parent
    if statement is not None and statement.type == "aliased_import":
        return False  # `import x as y` binds y
    if statement is None or statement.type not in ("import_statement", "import_from_statement"):
        return False
    return statement.type == "import_statement" or statement.child_by_field_name("module_name") != parent


def overlapping(node: Node, start: int, end: int, document: ParsedDocument | None = None) -> Iterator[Node]:
    """The nodes under `node` that hold any of lines `start .. end - 1` (of `document`, else
    rows), outermost first; a node with many children has those on the lines found by bisection
    (a module of 200,000 statements costs a few of them, not all)."""
    def first(child: Node) -> int:
        return first_line(document, child) if document is not None else child.start_point.row

    def last(child: Node) -> int:
        return last_line(document, child) if document is not None else child.end_point.row
    stack = [node]
    while stack:
        node = stack.pop()
        if last(node) < start or first(node) >= end:
            continue
        yield node
        count = node.child_count
        if count <= SCAN_CHILDREN:
            stack.extend(reversed(node.children))
            continue
        low = bisect.bisect_left(range(count), start, key=lambda index: last(node.child(index)))
        high = bisect.bisect_left(range(count), end, lo=low, key=lambda index: first(node.child(index)))
        stack.extend(node.child(index) for index in range(high - 1, low - 1, -1))


def parameter_names(parameters: Node) -> list[str]:
    """The names of a parameter list, in order (its first identifier for each parameter)."""
    names = []
    for parameter in parameters.named_children:
        identifier = first_identifier(parameter)
        if identifier is not None:
            names.append(node_text(identifier))
    return names


def first_identifier(node: Node) -> Node | None:
    if node.type == "comment":
        return None
    if node.type == "identifier":
        return node
    for field in ("name", "pattern", "declarator"):
        named = node.child_by_field_name(field)
        if named is not None:
            return first_identifier(named)
    return next((found for child in node.named_children
                 if (found := first_identifier(child)) is not None), None)


def call_nodes(root: Node, language: str, name: str) -> list[Node]:
    """The call nodes under `root` whose callee is named `name` (`f(...)`, `obj.f(...)`), in file
    order; none in a language without a callee query."""
    if language not in CALLEES:
        return []
    captures = QueryCursor(_query(language, f'({CALLEES[language]} (#eq? @f "{name}"))')).captures(root)
    calls = []
    for callee in sorted(captures.get("f", []), key=lambda found: found.start_byte):
        call = callee.parent
        while call is not None and call.type not in CALL_TYPES:
            call = call.parent
        if call is not None:
            calls.append(call)
    return calls
