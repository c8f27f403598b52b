"""Definitions and imports found with tree-sitter, and an index of them across documents.

`definitions(tree, text, uri)` lists what a file defines (functions, methods, classes, structs,
traits, interfaces, types) as short snippets: the signature, without the body, and the docstring
(Python) or the comment right above it (elsewhere). `imports(tree, text)` is the file's import
block. `DefinitionIndex` maps names to definitions for the files a front end knows: the language
server refreshes a document's entries when it is opened, after its edits settle and when the
workspace is scanned (`lsp_server.workspace`), never on each keystroke; a caller with one text
indexes that text alone.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from tree_sitter import Node, Tree

from completion.node_lines import start_line
from completion.syntax import COMMENT_TYPES, encode

DEFINITION_TYPES = frozenset({
    "function_definition", "class_definition",  # Python, C, C++
    "function_declaration", "generator_function_declaration", "class_declaration",
    "abstract_class_declaration", "method_definition", "interface_declaration",
    "type_alias_declaration",  # JavaScript, TypeScript
    "method_declaration", "type_spec",  # Go (and Java's methods)
    "function_item", "function_signature_item", "struct_item", "enum_item", "trait_item",
    "type_item",  # Rust
    "enum_declaration", "record_declaration", "constructor_declaration",  # Java
    "struct_specifier", "class_specifier", "enum_specifier",  # C, C++
})
IMPORT_TYPES = frozenset({
    "import_statement", "import_from_statement", "future_import_statement",  # Python, JS, TS
    "import_declaration",  # Go, Java
    "use_declaration", "extern_crate_declaration",  # Rust
    "preproc_include", "using_declaration",  # C, C++
})
# Their whole text (fields, members) is the useful part; other definitions lose their body.
WHOLE_TYPES = frozenset({
    "struct_item", "enum_item", "struct_specifier", "enum_specifier", "interface_declaration",
    "enum_declaration", "record_declaration", "type_spec", "type_item", "type_alias_declaration",
})
MAX_SNIPPET_CHARS = 600  # a definition's snippet: a signature and a docstring, not a body
MAX_IMPORT_CHARS = 2000


@dataclass(slots=True, frozen=True)
class Definition:
    name: str
    text: str  # signature and docstring
    uri: str
    line: int  # 0-based line of the definition's first character


def definition_name(node: Node) -> str | None:
    """A definition's name: its `name` field, or the innermost `declarator` (C, C++)."""
    named = node.child_by_field_name("name")
    if named is None:
        while (declarator := node.child_by_field_name("declarator")) is not None:
            node = declarator
        named = node if node.type.endswith("identifier") else None
    if named is None or named.text is None:
        return None
    return named.text.decode("utf-8", "replace").rsplit("::", 1)[-1]


def _docstring(node: Node, body: Node | None, data: bytes) -> tuple[str, str]:
    """(text above the signature, text below it): the comment right above, or the docstring."""
    if body is not None and node.type in ("function_definition", "class_definition"):
        first = body.named_children[0] if body.named_children else None
        if first is not None and first.type == "expression_statement" and first.named_children \
                and first.named_children[0].type == "string":
            indent = " " * first.start_point.column
            return "", "\n" + indent + _text(data, first.start_byte, first.end_byte)
    above = node.prev_named_sibling
    if above is not None and above.type in COMMENT_TYPES \
            and above.end_point.row + 1 >= node.start_point.row:
        return _text(data, above.start_byte, above.end_byte).rstrip() + "\n", ""
    return "", ""


def _text(data: bytes, start: int, end: int) -> str:
    return data[start:end].decode("utf-8", "replace")


def _snippet(node: Node, data: bytes) -> str:
    body = node.child_by_field_name("body")
    end = body.start_byte if body is not None and node.type not in WHOLE_TYPES else node.end_byte
    signature = _text(data, node.start_byte, end).rstrip()
    above, below = _docstring(node, body, data)
    return (above + signature + below)[:MAX_SNIPPET_CHARS]


def _walk(tree: Tree) -> Iterator[Node]:
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.children))


def definitions(tree: Tree, text: str, uri: str) -> list[Definition]:
    """What the file defines, in the order of the file (nested definitions too), each at its LSP
    line (a lone `\\r` ends a line there, not in tree-sitter's rows)."""
    data = encode(text)
    found = []
    for node in _walk(tree):
        if node.type not in DEFINITION_TYPES:
            continue
        if node.type.endswith("_specifier") and node.child_by_field_name("body") is None:
            continue  # `struct P x;` uses a struct, it does not define one
        name = definition_name(node)
        if name:
            found.append(Definition(name, _snippet(node, data), uri, start_line(text, node)))
    return found


def imports(tree: Tree, text: str) -> str:
    """The file's top-level import lines, joined (at most MAX_IMPORT_CHARS)."""
    data = encode(text)
    lines = [_text(data, node.start_byte, node.end_byte).rstrip()
             for node in tree.root_node.children if node.type in IMPORT_TYPES]
    return "\n".join(lines)[:MAX_IMPORT_CHARS]


class DefinitionIndex:
    """Definitions by name and by document."""

    def __init__(self) -> None:
        self.by_uri: dict[str, list[Definition]] = {}
        self.by_name: dict[str, list[Definition]] = {}

    def update(self, uri: str, found: list[Definition]) -> None:
        self.remove(uri)
        self.by_uri[uri] = found
        for definition in found:
            self.by_name.setdefault(definition.name, []).append(definition)

    def remove(self, uri: str) -> None:
        for definition in self.by_uri.pop(uri, []):
            entries = self.by_name[definition.name]
            entries.remove(definition)
            if not entries:
                del self.by_name[definition.name]

    def lookup(self, name: str) -> list[Definition]:
        return self.by_name.get(name, [])

    def starting_with(self, stem: str, limit: int) -> list[str]:
        """Up to `limit` indexed names that start with `stem` and are longer, shortest first."""
        names = [name for name in self.by_name if name.startswith(stem) and name != stem]
        return sorted(names, key=len)[:limit]
