"""Tree-sitter for the completion rules: languages, parsing, and the queries at a cursor.

A text's language comes from an LSP `languageId`, or else from its file extension. A
`ParsedDocument` keeps a text and its tree; `replace` announces an edit to the tree with
`tree.edit`, so that one reparse with the old tree reuses everything the edit did not touch (a
front end that keeps documents open keeps one per document), and `errors_added` reparses a copy
to count the syntax errors an insertion would add.

Tree columns count UTF-8 bytes and rows count `\\n`, as tree-sitter does; text with lone surrogates
is encoded with `surrogatepass`, so offsets stay consistent even for text that cannot be sent.
The queries below (`literal_at`, `in_empty_block`) are pure functions of a tree and an offset.
"""
from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath
from urllib.parse import urlparse

from tree_sitter import Language, Node, Parser, Point, Tree

MAX_PARSE_BYTES = 4_000_000  # larger documents get no tree: the line rules still apply

# language -> (grammar module, function returning the grammar)
GRAMMARS: dict[str, tuple[str, str]] = {
    "python": ("tree_sitter_python", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
}
LANGUAGE_IDS = {
    "python": "python", "javascript": "javascript", "javascriptreact": "javascript",
    "typescript": "typescript", "typescriptreact": "tsx", "go": "go", "rust": "rust",
    "java": "java", "c": "c", "cpp": "cpp", "cuda-cpp": "cpp",
}
EXTENSIONS = {
    ".py": "python", ".pyi": "python", ".js": "javascript", ".mjs": "javascript",
    ".cjs": "javascript", ".jsx": "javascript", ".ts": "typescript", ".mts": "typescript",
    ".cts": "typescript", ".tsx": "tsx", ".go": "go", ".rs": "rust", ".java": "java",
    ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp",
    ".hh": "cpp", ".hxx": "cpp", ".cu": "cpp",
}

STRING_TYPES = frozenset({
    "string", "string_literal", "raw_string_literal", "interpreted_string_literal",
    "template_string", "char_literal", "character_literal", "rune_literal", "text_block",
    "regex", "system_lib_string",
})
COMMENT_TYPES = frozenset({"comment", "line_comment", "block_comment"})
# Code inside a string (an f-string's `{x}`, a template's `${x}`) is code again.
INTERPOLATION_TYPES = frozenset({"interpolation", "template_substitution"})
BLOCK_TYPES = frozenset({
    "block", "statement_block", "compound_statement", "class_body", "declaration_list",
    "field_declaration_list", "enum_body", "interface_body", "switch_body", "constructor_body",
    "enum_variant_list", "function_body",
})


def language_for(uri: str, language_id: str | None = None) -> str | None:
    """The grammar's name for a document, from its `languageId` or its extension; None if none."""
    if language_id and language_id in LANGUAGE_IDS:
        return LANGUAGE_IDS[language_id]
    suffix = PurePosixPath(urlparse(uri).path).suffix.lower()
    return EXTENSIONS.get(suffix)


@functools.cache
def grammar(language: str) -> Language:
    module_name, function = GRAMMARS[language]
    return Language(getattr(importlib.import_module(module_name), function)())


def new_parser(language: str) -> Parser:
    return Parser(grammar(language))


def encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def point_at(text: str, offset: int) -> Point:
    """The tree-sitter point (row counted in `\\n`, column in UTF-8 bytes) of a string offset."""
    row = text.count("\n", 0, offset)
    line_start = text.rfind("\n", 0, offset) + 1
    return Point(row, len(encode(text[line_start:offset])))


def point_offset(text: str, starts: list[int], point: Point) -> int:
    """The string offset of a tree-sitter `point` in `text`, whose lines start at `starts`
    (`completion.positions.line_starts`; `point_at` the other way). With the starts at hand it reads
    one line, where `completion.positions.offset_at` looks for the line anew on each call."""
    row, column = point
    return starts[row] + len(encode(text[starts[row]:starts[row + 1]])[:column].decode("utf-8", "ignore"))


def byte_offset(text: str, offset: int) -> int:
    return len(encode(text[:offset]))


def byte_offsets(text: str) -> Callable[[int], int]:
    """`byte_offset` of `text` for offsets asked in any order: each answer costs the text between
    it and the offset asked before it (cheap in text order, or nearest first around one place)."""
    if text.isascii():
        return lambda offset: offset
    last = [0, 0]  # the offset asked before and its byte

    def byte(offset: int) -> int:
        if offset >= last[0]:
            last[1] += len(encode(text[last[0]:offset]))
        else:
            last[1] -= len(encode(text[offset:last[0]]))
        last[0] = offset
        return last[1]
    return byte


def _edit(tree: Tree, old_text: str, start: int, end: int, new_text: str) -> None:
    """Tell `tree` that `old_text[start:end]` became `new_text` (string offsets)."""
    start_byte = byte_offset(old_text, start)
    after = old_text[:start] + new_text
    tree.edit(start_byte=start_byte,
              old_end_byte=start_byte + len(encode(old_text[start:end])),
              new_end_byte=start_byte + len(encode(new_text)),
              start_point=point_at(old_text, start),
              old_end_point=point_at(old_text, end),
              new_end_point=point_at(after, len(after)))


@dataclass(slots=True, eq=False)
class ParsedDocument:
    """A document's language, text and current tree (None when it is too large to parse); one
    document is equal to itself only, and hashed so (a cache of the rules keys on it)."""

    language: str
    parser: Parser
    text: str
    tree: Tree | None = None

    @classmethod
    def parse(cls, language: str, text: str) -> ParsedDocument:
        document = cls(language, new_parser(language), text)
        document.reparse(incremental=False)
        return document

    def reparse(self, incremental: bool = True) -> None:
        data = encode(self.text)
        if len(data) > MAX_PARSE_BYTES:
            self.tree = None
            return
        old = self.tree if incremental else None
        self.tree = self.parser.parse(data, old) if old is not None else self.parser.parse(data)

    def replace(self, start: int, end: int, new_text: str) -> None:
        """Replace `text[start:end]` by `new_text` and tell the tree (no reparse yet)."""
        old_text = self.text
        self.text = old_text[:start] + new_text + old_text[end:]
        if self.tree is not None:
            _edit(self.tree, old_text, start, end, new_text)

    def errors_added(self, offset: int, insertion: str) -> int:
        """How many more ERROR or MISSING nodes the tree has with `insertion` at `offset`."""
        if self.tree is None:
            return 0
        trial = self.tree.copy()
        _edit(trial, self.text, offset, offset, insertion)
        new_text = self.text[:offset] + insertion + self.text[offset:]
        return error_count(self.parser.parse(encode(new_text), trial)) - error_count(self.tree)

    def boundary_after(self, offset: int) -> int | None:
        """The offset of the first statement that starts at or after `offset`, if any."""
        return self._boundary(statement_start_after, offset)

    def boundary_before(self, offset: int) -> int | None:
        """The offset where the last statement that ends at or before `offset` ends, if any."""
        return self._boundary(statement_end_before, offset)

    def _boundary(self, query, offset: int) -> int | None:
        if self.tree is None:
            return None
        data = encode(self.text)
        found = query(self.tree, len(encode(self.text[:offset])))
        return None if found is None else len(data[:found].decode("utf-8", "surrogatepass"))


def ancestors(node: Node | None) -> Iterator[Node]:
    """`node` and the nodes above it, innermost first."""
    while node is not None:
        yield node
        node = node.parent


def enclosing_at(document: ParsedDocument, types: frozenset[str]) -> Callable[[int], Node | None] | None:
    """The innermost node of `types` around a character offset of the document's text (None outside
    any), from its tree (None without one); each answer costs the text between its offset and the
    one asked before (`byte_offsets`)."""
    if document.tree is None:
        return None
    root, byte_at = document.tree.root_node, byte_offsets(document.text)

    def enclosing(offset: int) -> Node | None:
        byte = byte_at(offset)
        return next((node for node in ancestors(root.descendant_for_byte_range(byte, byte + 1))
                     if node.type in types), None)
    return enclosing


def literal_at(tree: Tree, offset: int) -> str | None:
    """"string" or "comment" when the cursor at byte `offset` lies inside one, else None.

    The cursor is inside a string when the character before it belongs to the string and the
    string goes on after it (right after the closing quote is outside); inside a line comment up
    to its end; inside a block comment until its closing `*/`.
    """
    if offset <= 0:
        return None
    for node in ancestors(tree.root_node.descendant_for_byte_range(offset - 1, offset)):
        if node.type in INTERPOLATION_TYPES:
            return None
        if node.type in STRING_TYPES and node.start_byte < offset < node.end_byte:
            return "string"
        if node.type in COMMENT_TYPES and node.start_byte < offset:
            closed = node.text is not None and node.text.endswith(b"*/")
            if offset < node.end_byte or not closed:
                return "comment"
    return None


def in_empty_block(tree: Tree, offset: int) -> bool:
    """True when the innermost block around byte `offset` holds nothing but comments."""
    for node in ancestors(tree.root_node.descendant_for_byte_range(offset, offset)):
        if node.type in BLOCK_TYPES and node.start_byte < offset < node.end_byte:
            return all(child.type in COMMENT_TYPES for child in node.named_children)
    return False


def statement_start_after(tree: Tree, byte: int) -> int | None:
    """Where the first node at or after `byte` starts, among the children of the innermost node
    that spans `byte`: the next statement of the block the cut falls in."""
    node = tree.root_node
    while True:
        for child in node.children:
            if child.start_byte >= byte:
                return child.start_byte
            if child.end_byte > byte:
                node = child
                break
        else:
            return None


def statement_end_before(tree: Tree, byte: int) -> int | None:
    """Where the last node that ends at or before `byte` ends, among the children of the innermost
    node that spans `byte`: the end of the last whole statement before the cut."""
    node = tree.root_node
    while True:
        for child in reversed(node.children):
            if child.end_byte <= byte:
                return child.end_byte
            if child.start_byte < byte:
                node = child
                break
        else:
            return None


def error_count(tree: Tree) -> int:
    """How many ERROR or MISSING nodes the tree has."""
    count, stack = 0, [tree.root_node]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            count += 1
        if node.has_error:
            stack.extend(node.children)
    return count
