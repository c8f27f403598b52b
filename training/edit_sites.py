"""Where a Python edit must propagate, found with tree-sitter: the sites of one name in its scope.

Used by `training.edit_synth` to cut next-edit examples from source files. Every query here is a
pure function of a tree; offsets are UTF-8 byte offsets into the parsed source (tree-sitter's own).
The rules are deliberately strict: a name whose sites cannot be told exactly (rebound in a nested
scope, imported, declared `global`, named in a string) yields no sites rather than wrong ones.
"""
from __future__ import annotations

import builtins
import keyword
from collections import defaultdict
from collections.abc import Iterator
from functools import lru_cache

import tree_sitter_python
from tree_sitter import Language, Node, Parser, Tree

PYTHON = Language(tree_sitter_python.language())

SCOPE_TYPES = frozenset({"function_definition", "lambda", "class_definition", "list_comprehension",
                         "set_comprehension", "dictionary_comprehension", "generator_expression"})
PATTERN_TYPES = frozenset({"pattern_list", "tuple_pattern", "list_pattern", "list_splat_pattern",
                           "tuple", "list", "parenthesized_expression"})
BINDING_FIELDS = {("assignment", "left"), ("augmented_assignment", "left"), ("for_statement", "left"),
                  ("for_in_clause", "left"), ("named_expression", "name"), ("function_definition", "name"),
                  ("class_definition", "name"), ("aliased_import", "alias"), ("default_parameter", "name"),
                  ("typed_default_parameter", "name")}
BINDING_PARENTS = frozenset({"as_pattern_target", "global_statement", "nonlocal_statement", "parameters",
                             "lambda_parameters", "typed_parameter", "dotted_name", "dictionary_splat_pattern"})
RESERVED = frozenset(keyword.kwlist) | frozenset(keyword.softkwlist) | frozenset(dir(builtins))


def parse(source: bytes) -> Tree:
    return Parser(PYTHON).parse(source)


def error_count(tree: Tree) -> int:
    """ERROR and MISSING nodes in a tree."""
    if not tree.root_node.has_error:
        return 0
    return sum(1 for n in walk(tree.root_node) if n.type == "ERROR" or n.is_missing)


def walk(node: Node, skip_scopes: bool = False) -> Iterator[Node]:
    """Every node under `node` (itself first), in source order; nested scopes left out if asked."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        if skip_scopes and n is not node and n.type in SCOPE_TYPES:
            continue
        stack.extend(reversed(n.children))


def text(node: Node) -> str:
    return node.text.decode("utf-8", "surrogatepass")


def field_of(node: Node) -> str | None:
    parent = node.parent
    for i, child in enumerate(parent.children):
        if child == node:
            return parent.field_name_for_child(i)
    return None


def is_reference(node: Node) -> bool:
    """An identifier that names a variable (not an attribute's name, nor a keyword argument's)."""
    parent = node.parent
    if parent.type == "attribute" and field_of(node) == "attribute":
        return False
    return not (parent.type == "keyword_argument" and field_of(node) == "name")


def is_binding(node: Node) -> bool:
    """Whether an identifier is bound where it stands (assigned, a parameter, imported, declared)."""
    child, parent = node, node.parent
    while parent.type in PATTERN_TYPES:
        child, parent = parent, parent.parent
    if parent.type in BINDING_PARENTS:
        return True
    if parent.type == "keyword_argument":
        return False
    return (parent.type, field_of(child)) in BINDING_FIELDS


def identifiers(node: Node, name: str, skip_scopes: bool = False) -> list[Node]:
    """The references to `name` under `node`, in source order (nested scopes left out if asked)."""
    if skip_scopes:
        return [n for n in walk(node, True) if n.type == "identifier" and text(n) == name and is_reference(n)]
    return [n for n in _identifier_index(node).get(name, ()) if is_reference(n)]


@lru_cache(maxsize=8)
def _strings(root: Node) -> list[str]:
    """The text of every string's content under `root`."""
    return [text(n) for n in walk(root) if n.type == "string_content"]


@lru_cache(maxsize=64)
def _identifier_index(node: Node) -> dict[str, list[Node]]:
    """Every identifier under `node` by its text, in source order: the kinds ask the same subtree
    for many names, and walking it again for each cost 90% of a file's synthesis."""
    index: dict[str, list[Node]] = defaultdict(list)
    for n in walk(node):
        if n.type == "identifier":
            index[text(n)].append(n)
    return index


def binds(scope: Node, name: str) -> bool:
    """Whether `name` is bound in a scope of its own (parameters included)."""
    params = scope.child_by_field_name("parameters")
    if params is not None and any(is_binding(n) for n in identifiers(params, name)):
        return True
    if scope.type.endswith("comprehension") or scope.type == "generator_expression":
        return any(is_binding(n) for n in identifiers(scope, name, skip_scopes=True))
    body = scope.child_by_field_name("body")
    return body is not None and any(is_binding(n) for n in identifiers(body, name, skip_scopes=True))


def nested_scopes(node: Node) -> list[Node]:
    return [n for n in walk(node) if n is not node and n.type in SCOPE_TYPES]


def names_in(node: Node) -> set[str]:
    """Every identifier and string text under `node`: what a new name must not collide with."""
    return {text(n).strip("'\"") for n in walk(node) if n.type in ("identifier", "string_content")}


def param_name(param: Node) -> Node | None:
    """The identifier a parameter binds (None for `*`, `/`, `*args` and `**kwargs`)."""
    if param.type == "identifier":
        return param
    if param.type in ("default_parameter", "typed_default_parameter"):
        return param.child_by_field_name("name")
    if param.type == "typed_parameter" and param.named_children[0].type == "identifier":
        return param.named_children[0]
    return None


def function_locals(func: Node) -> list[str]:
    """Names assigned in a function's own scope, in first-assignment order (parameters excluded)."""
    params = {text(p) for p in map(param_name, func.child_by_field_name("parameters").named_children) if p}
    seen: dict[str, None] = {}
    for n in walk(func.child_by_field_name("body"), skip_scopes=True):
        if n.type == "identifier" and is_reference(n) and is_binding(n) and text(n) not in params:
            seen.setdefault(text(n), None)
    return list(seen)


def local_sites(func: Node, name: str, param: Node | None = None) -> list[Node] | None:
    """A local's or parameter's sites in `func` (the parameter first), or None when they cannot be
    told exactly: the name is rebound in a nested scope, declared global or nonlocal, or imported."""
    body = func.child_by_field_name("body")
    uses = identifiers(body, name)
    if any(binds(scope, name) for scope in nested_scopes(body)):
        return None
    for n in uses:
        if n.parent.type in ("global_statement", "nonlocal_statement", "dotted_name", "aliased_import"):
            return None
    return ([param] if param is not None else []) + uses


def function_defs(root: Node) -> list[Node]:
    return [n for n in walk(root) if n.type == "function_definition"]


def top_level(root: Node, node_type: str) -> list[Node]:
    """Module-level definitions of one type (decorated ones included)."""
    found = []
    for child in root.named_children:
        definition = child.child_by_field_name("definition") if child.type == "decorated_definition" else child
        if definition is not None and definition.type == node_type:
            found.append(definition)
    return found


def module_name_sites(root: Node, definition: Node) -> list[Node] | None:
    """A module-level function's or class's name and every reference to it in the file, or None
    when the name is bound anywhere else, is reserved, or also appears in a string (`__all__`)."""
    name_node = definition.child_by_field_name("name")
    name = text(name_node)
    if name in RESERVED or name.startswith("__"):
        return None
    refs = identifiers(root, name)
    if any(is_binding(n) and n != name_node for n in refs):
        return None
    if any(name in string for string in _strings(root)):
        return None
    return [name_node] + [n for n in refs if n != name_node]


def methods(cls: Node) -> list[Node]:
    """The functions defined directly in a class's body (decorated ones included)."""
    found = []
    for child in cls.child_by_field_name("body").named_children:
        definition = child.child_by_field_name("definition") if child.type == "decorated_definition" else child
        if definition is not None and definition.type == "function_definition":
            found.append(definition)
    return found


def self_attribute_sites(root: Node, cls: Node, name: str) -> list[Node] | None:
    """The attribute-name nodes of every `self.<name>` in a class's methods, or None when the name
    is ambiguous: bound or defined in the class body, an attribute of another object or outside
    the class, or named in a string (`getattr`, `__slots__`)."""
    if name.startswith("__") or name in RESERVED:
        return None
    body = cls.child_by_field_name("body")
    if any(is_binding(n) for n in identifiers(body, name, skip_scopes=True)):
        return None
    if any(text(m.child_by_field_name("name")) == name for m in methods(cls)):
        return None
    inside = []
    for method in methods(cls):
        params = method.child_by_field_name("parameters").named_children
        first = param_name(params[0]) if params else None
        if first is None:
            continue
        for n in walk(method.child_by_field_name("body")):
            obj = n.child_by_field_name("object") if n.type == "attribute" else None
            if obj is not None and obj.type == "identifier" and text(obj) == text(first) \
                    and text(n.child_by_field_name("attribute")) == name:
                inside.append(n.child_by_field_name("attribute"))
    attributes = [n for n in walk(root) if n.type == "identifier" and text(n) == name and not is_reference(n)
                  and n.parent.type == "attribute"]
    if len(attributes) != len(inside):
        return None
    if any(n.type == "string_content" and text(n) == name for n in walk(root)):
        return None
    return sorted(inside, key=lambda n: n.start_byte)


def calls_of(root: Node, name_sites: list[Node]) -> list[Node] | None:
    """The argument lists of the calls at every reference (all but the definition's name), or None
    when a reference is not a plain call (the function passed as a value, called with a splat or a
    bare generator)."""
    arg_lists = []
    for ref in name_sites[1:]:
        call = ref.parent
        if call.type != "call" or field_of(ref) != "function":
            return None
        args = call.child_by_field_name("arguments")
        if args.type != "argument_list" or any(a.type in ("list_splat", "dictionary_splat")
                                               for a in args.named_children):
            return None
        arg_lists.append(args)
    return arg_lists
