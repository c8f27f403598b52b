"""Tree-sitter trees of the open documents, kept current by incremental reparsing.

Each open document in a language we parse has a `completion.syntax.ParsedDocument`, its text and
its tree: on `didChange` every change is applied to the text and announced to the tree, and one
reparse with the old tree reuses everything the edit did not touch. Changes apply as an editor
applies them, by LSP's own lines (`\\n`, `\\r\\n`, `\\r`) and columns (`change_span`), so the text
follows the editor's through any edit; `lsp_server.documents` keeps the editor's text by the same
rule. If the texts ever disagree (a full-text sync), the document is parsed afresh from the
editor's text.
"""
from __future__ import annotations

import logging

from lsprotocol import types

from completion.positions import editor_offset
from completion.syntax import ParsedDocument, language_for

logger = logging.getLogger(__name__)


def change_span(text: str, change: types.TextDocumentContentChangePartial, encoding: str) -> tuple[int, int]:
    """The offsets of `text` that a partial change replaces, as an editor applies it: positions
    outside the text are brought to its nearest end (`completion.positions.editor_offset`), and a
    range given end first is the same range."""
    where = change.range
    start = editor_offset(text, where.start.line, where.start.character, encoding)
    end = editor_offset(text, where.end.line, where.end.character, encoding)
    return min(start, end), max(start, end)


def applied(text: str, changes: list[types.TextDocumentContentChangeEvent], encoding: str) -> str:
    """`text` after one `didChange`'s changes, in order, each as an editor applies it."""
    for change in changes:
        if isinstance(change, types.TextDocumentContentChangePartial):
            start, end = change_span(text, change, encoding)
            text = text[:start] + change.text + text[end:]
        else:
            text = change.text
    return text


def apply_change(document: ParsedDocument, change: types.TextDocumentContentChangeEvent,
                 encoding: str) -> None:
    """Apply one LSP change to the document's text and tell its tree (a whole text drops it)."""
    if not isinstance(change, types.TextDocumentContentChangePartial):
        document.text = change.text
        document.tree = None
        return
    start, end = change_span(document.text, change, encoding)
    document.replace(start, end, change.text)


class SyntaxStore:
    """The parsed open documents, by URI."""

    def __init__(self) -> None:
        self.documents: dict[str, ParsedDocument] = {}

    def open(self, uri: str, language_id: str | None, text: str) -> ParsedDocument | None:
        language = language_for(uri, language_id)
        if language is None:
            self.documents.pop(uri, None)
            return None
        document = ParsedDocument.parse(language, text)
        self.documents[uri] = document
        return document

    def change(self, uri: str, changes: list[types.TextDocumentContentChangeEvent],
               encoding: str, editor_text: str) -> None:
        """Apply `changes` and reparse once; `editor_text` is the editor's text after them."""
        document = self.documents.get(uri)
        if document is None:
            return
        for change in changes:
            apply_change(document, change, encoding)
        fitted = document.text == editor_text
        document.text = editor_text  # one copy of the text, shared with the caller's
        if not fitted:
            logger.info("reparsing %s from scratch: its changes did not fit the text", uri)
            document.reparse(incremental=False)
            return
        document.reparse()

    def close(self, uri: str) -> None:
        self.documents.pop(uri, None)

    def get(self, uri: str) -> ParsedDocument | None:
        return self.documents.get(uri)
